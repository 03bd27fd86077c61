"""A session's extra threads (Claude Code inline sidechains and subagent files): fixing
each, and where an export writes each (docs/threads.md).

An inline sidechain lives in the session's own file, so writing the session writes it. A
subagent thread has a file of its own (`<session>/subagents/agent-*.jsonl`, or a 2.0.x
`agent-*.jsonl` beside the session):

- in place, a subagent file with fixes is replaced like the session itself (the same checks:
  read-only, changed since read, symlinks), with its own backup `agent-….jsonl.bak`; a
  subagent file without fixes is not touched;
- with an output OUT, every subagent file is written into OUT's own subagents folder,
  `<OUT without .jsonl>/subagents/<name>` (repaired, or byte for byte when it has no fix,
  with its `.meta.json`), which is where Claude Code and histview look for the subagents of
  OUT: OUT is a whole session, and `check OUT` sees the threads `fix` repaired. OUT must
  then end in `.jsonl`, and none of those files may exist (unless overwriting).
"""

from __future__ import annotations

import os
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import ExportRefused
from .files import Source, backup_path, in_place_target, new_target
from .model import Session
from .plan import Choices, Fix, Frozen, apply_all


@dataclass
class ThreadStep:
    """What one `apply_all` did to the thread at `index` of `Session.threads`."""

    index: int
    before: Session
    after: Session
    fixes: list[Fix]


def fix_threads(session: Session, choices: Choices) -> tuple[list[Session], list[ThreadStep]]:
    """Every thread repaired by its own rounds of plans (under the session's target).

    A thread leaves alone the messages read from records it shares with the conversation
    (an inline sidechain's walk up the parentUuid chain crosses the main conversation's
    records) or with a thread fixed before it: those are fixed once, by their owner, and
    the thread is judged after that, when the written file is read back (docs/threads.md).
    Two fixes of one shared record would each add their own synthetic result, and the
    written file would hold a new thread."""
    threads = list(session.threads)
    steps: list[ThreadStep] = []
    owned = _records(session)
    for k, thread in enumerate(session.threads):
        if thread.state is None:  # a subagent file that could not be read: nothing to write
            continue
        after, done = apply_all(thread, choices, frozen=_frozen(thread, owned))
        owned |= _records(thread)
        if done:
            threads[k] = after
            steps.append(ThreadStep(k, thread, after, done))
    return threads, steps


def _frozen(thread: Session, owned: set[Hashable]) -> Frozen | None:
    adapter = thread.adapter
    shared = {uid for uid, recs in adapter.message_records(thread).items() if recs & owned}
    if not shared:
        return None
    blocks = frozenset(
        b.bid
        for m in thread.messages
        if m.uid in shared
        for b in m.blocks
        if adapter.block_record(thread, b) in owned or adapter.block_record(thread, b) is None
    )
    return Frozen(frozenset(shared), blocks)


def _records(session: Session) -> set[Hashable]:
    out: set[Hashable] = set()
    for recs in session.adapter.message_records(session).values():
        out |= recs
    return out


def own_file(session: Session, thread: Session) -> bool:
    """The thread is a file of its own (a subagent), not a sidechain inside the session."""
    return os.path.abspath(thread.path) != os.path.abspath(session.path)


# ("file", the subagent file's name) or ("inline", the sidechain's rank among the inline ones)
ThreadKey = tuple[Literal["file"], str] | tuple[Literal["inline"], int]


def thread_key(session: Session, k: int) -> ThreadKey:
    """Names the k-th thread across a write and a read-back: an inline sidechain by its
    rank among the inline ones, a subagent by its file name."""
    thread = session.threads[k]
    if own_file(session, thread):
        return ("file", os.path.basename(thread.path))
    return ("inline", sum(1 for t in session.threads[:k] if not own_file(session, t)))


@dataclass
class ThreadWrite:
    """One subagent file an export writes."""

    index: int
    label: str
    path: str
    data: bytes
    replace: bool = False
    backup: str | None = None
    source: Source | None = None  # in place: the file as read (backup bytes, re-check)
    dropped_records: list[dict[str, Any]] = field(default_factory=list)
    extra: list[tuple[str, bytes]] = field(default_factory=list)  # meta files copied beside
    format: str | None = None  # the format `data` is written in (None: copied as it was)


@dataclass
class ThreadPlan:
    writes: list[ThreadWrite]
    folders: list[str]  # to create before staging (the output's subagents folder)


def plan_thread_writes(
    original: Session,
    current: Session,
    output: str,
    *,
    in_place: bool,
    overwrite: bool = False,
    force: bool = False,
) -> ThreadPlan:
    """The subagent files an export writes, checked like the session's own paths; raises
    ExportRefused before anything is written."""
    own = [
        (k, t, original.threads[k] if k < len(original.threads) else t)
        for k, t in enumerate(current.threads)
        if own_file(current, t)
    ]
    if not own:
        return ThreadPlan([], [])
    writes: list[ThreadWrite] = []
    if in_place:
        for k, thread, before in own:
            if thread is before:
                continue
            real = in_place_target(thread.path, thread.source, force=force)
            written = thread.export()
            writes.append(
                ThreadWrite(
                    k,
                    thread.label,
                    real,
                    written.data,
                    replace=True,
                    backup=backup_path(real),
                    source=thread.source,
                    dropped_records=written.dropped_records,
                    format=thread.format,
                )
            )
        return ThreadPlan(writes, [])

    stem, ext = os.path.splitext(output)
    if ext != ".jsonl":
        raise ExportRefused(
            f"the session has subagent files, which go to <OUT>/subagents/ beside a .jsonl "
            f"output; name the output {stem}.jsonl"
        )
    folder = os.path.join(stem, "subagents")
    if os.path.lexists(stem) and not os.path.isdir(stem):
        raise ExportRefused(f"{stem} exists and is not a folder; subagent files go into it")
    for k, thread, before in own:
        name = os.path.basename(thread.path)
        path, replace = new_target(os.path.join(folder, name), thread.path, overwrite=overwrite)
        fmt = None
        if thread is before:
            data, dropped = _as_read(thread), []
        else:
            written = thread.export()
            data, dropped, fmt = written.data, written.dropped_records, thread.format
        write = ThreadWrite(
            k, thread.label, path, data, replace, dropped_records=dropped, format=fmt
        )
        meta = os.path.splitext(thread.path)[0] + ".meta.json"
        if os.path.isfile(meta):
            target, _ = new_target(
                os.path.join(folder, os.path.basename(meta)), meta, overwrite=overwrite
            )
            write.extra.append((target, _read(meta)))
        writes.append(write)
    folders = [f for f in (stem, folder) if not os.path.isdir(f)]
    return ThreadPlan(writes, folders)


def _as_read(thread: Session) -> bytes:
    if thread.source is not None:
        return thread.source.data
    return _read(thread.path)  # a subagent file histview could not read: copied as it is


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise ExportRefused(f"cannot copy {path}: {exc.strerror or exc}") from None
