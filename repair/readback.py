"""The one read-back: the bytes an export writes, loaded again and judged as `check` judges
the written file.

`fix` (dry run and written), the TUI's export and the TUI's promise ("exported now, check
finds ...") all read their counts from here, so what they promise is what `check` finds in
the output, for every format and target. The adapter's `check_written` runs on the same
reloaded session (Claude Code: the written file must resume as the repaired conversation);
a write it refuses is never made.
"""

from __future__ import annotations

import dataclasses
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from .analysis import Analysis, analyze
from .codes import Severity
from .errors import ExportRefused, InputError
from .files import Spliced
from .formats.probe import probe_bytes
from .gcpause import gc_paused
from .jsonio import numbers_as_parsed
from .model import Message, Session, source_of


@dataclass
class ReadBack:
    """What `check` finds in the written files: the conversation, then its threads."""

    sessions: list[Session]
    analyses: list[Analysis]

    @property
    def main(self) -> Analysis:
        return self.analyses[0]

    def pairs(self) -> list[tuple[Session, Analysis]]:
        return list(zip(self.sessions, self.analyses, strict=True))

    def counts(self) -> dict[str, int]:
        """Severity -> findings, over the conversation and every thread."""
        total = {str(s): 0 for s in Severity}
        for a in self.analyses:
            for sev, n in a.counts().items():
                total[sev] += n
        return total

    @property
    def errors(self) -> int:
        return self.counts()["error"]

    def at(self, path: str, thread_paths: dict[int, str]) -> ReadBack:
        """The same read-back with the files named where they are written: the session's
        own file (and its inline threads) at `path`, its thread k at `thread_paths[k]`."""
        main = self.sessions[0]
        threads = []
        for k, t in enumerate(self.sessions[1:]):
            where = thread_paths.get(k, path if t.path == main.path else t.path)
            threads.append(t if t.path == where else dataclasses.replace(t, path=where))
        moved = dataclasses.replace(main, path=path, threads=threads)
        return ReadBack([moved, *threads], self.analyses)


def read_back(
    session: Session,
    data: bytes | Spliced,
    threads: dict[int, tuple[str, bytes | None]],
    path: str | None = None,
    original: Session | None = None,
    known: dict[int, Analysis] | None = None,
    *,
    narrow: bool = True,
) -> ReadBack:
    """Load `data` (the session's own file as written) and the written subagent files
    (`threads`: thread index -> (path, bytes), None for a file written as it was read)
    again with the session's adapter, check them
    with the adapter's `check_written`, and analyse each under the session's target.

    `original` is the session as read: when the bytes are the bytes that were read, its
    conversation is what they load to (no second parse). Threads with a file of their own
    that are not in `threads` are written as they are (or not at all): as read. `known`:
    analyses the caller has already, by id() of the session analysed under this target.
    Raises ExportRefused when the adapter refuses what was written.

    Where the format can (`Adapter.read_back_edited`), only the records written anew are
    read back (`narrow`): when each loads as the repaired message it was written from, the
    written file loads as the repaired session (the rest are byte copies of what was
    read), so `check` finds there what the repaired session's analysis found, at the
    places the written file holds them. Otherwise the whole file is read back.
    tests/test_readback_narrow.py compares the two on samples, fuzzed and generated files."""
    # read as the session was read: a session read without the number scan (and shown to
    # read exactly: repair.cli.fixed) wrote only literals orjson reads as written
    with gc_paused(), nullcontext() if session.numbers_exact else numbers_as_parsed():
        return _read_back(session, data, threads, path, original, known or {}, narrow)


def _read_back(
    session: Session,
    data: bytes | Spliced,
    threads: dict[int, tuple[str, bytes | None]],
    path: str | None,
    original: Session | None,
    known: dict[int, Analysis],
    narrow: bool = True,
) -> ReadBack:
    from .threads import own_file

    target = session.target
    path = path or session.path
    src = original.source if original is not None else None
    if (
        original is not None
        and src is not None
        and len(data) == src.size  # a large file's bytes are read again only if they may match
        and (data is src.held or _bytes(data) == src.data)
    ):
        again = original
    elif narrow and (got := _narrowed(session, data, path, known)) is not None:
        return got
    else:
        again = _load(session, data, path)
        again.target = target
        session.adapter.check_written(session, again)
    analyses: list[Analysis | None] = [known.get(id(again))]
    threads_back: list[Session] = []
    for t in again.threads:
        if not own_file(again, t):  # an inline sidechain: written with the session
            analyses.append(known.get(id(t)))
            threads_back.append(t if t.path == path else dataclasses.replace(t, path=path))
    for k, thread in enumerate(session.threads):
        if not own_file(session, thread):
            continue
        tpath, tdata = threads.get(k, (thread.path, None))
        if tdata is None:
            t = thread
            analyses.append(known.get(id(t)))
        else:
            analyses.append(None)
            t = _load(thread, tdata, tpath)
            t.label = thread.label
            thread.adapter.check_written(thread, t)
        threads_back.append(t if t.path == tpath else dataclasses.replace(t, path=tpath))
    # the written file as `check` reads it: with its threads (a copy: `again` may be the
    # session as read)
    again = dataclasses.replace(again, path=path, threads=threads_back)
    sessions = [again, *threads_back]
    for s in sessions:
        s.target = target
    return ReadBack(
        sessions, [a or analyze(s, target) for s, a in zip(sessions, analyses, strict=True)]
    )


def _narrowed(
    session: Session, data: bytes | Spliced, path: str, known: dict[int, Analysis]
) -> ReadBack | None:
    """The read-back of the records written anew only, or None (read the whole file)."""
    if session.threads or session.load_findings:
        return None
    edited = session.adapter.read_back_edited(session, data)
    if edited is None:
        return None
    msgs = session.messages
    differ = [at for at, m in edited.messages.items() if _as_analysed(m) != _as_analysed(msgs[at])]
    if differ and not edited.complete:
        return None
    if differ:
        # the written file loads as the session with the edited messages as written
        written = list(msgs)
        for at, m in edited.messages.items():
            written[at] = m
        as_written = dataclasses.replace(session, messages=written)
        session.adapter.check_written(session, as_written)
        before = known.get(id(session))
        got = None
        if before is not None:  # made from the session's, where those messages differ
            from .incremental import reanalyze

            got = reanalyze(before, msgs, as_written, frozenset(edited.messages))
        analysis = got or analyze(as_written, session.target)
    else:
        analysis = known.get(id(session)) or analyze(session)
    findings = []
    for f in analysis.findings:
        p = f.position
        if p is None:
            source = f.source
        elif p in edited.messages:
            m = edited.messages[p]
            bi = f.block_index
            block = m.blocks[bi] if bi is not None and bi < len(m.blocks) else None
            source = source_of(block, m)
        else:
            source = edited.moved(f.source, p)
        findings.append(f if source == f.source else dataclasses.replace(f, source=source))
    again = dataclasses.replace(session, path=path, threads=[])
    return ReadBack([again], [dataclasses.replace(analysis, findings=findings)])


def _as_analysed(m: Message) -> tuple[Any, ...]:
    """What the analysis reads of a message (everything but where it sits in the file)."""
    return (
        m.role,
        m.hidden,
        m.malformed,
        m.timestamp,
        m.meta.get("hidden_reason"),
        tuple((b.type, b.data, b.tool_id, b.name, b.is_error) for b in m.blocks),
    )


def _bytes(data: bytes | Spliced) -> bytes:
    return data if isinstance(data, bytes) else data.joined()


def _load(session: Session, data: bytes | Spliced, path: str) -> Session:
    """The bytes read as the session's format; ExportRefused (nothing is written) when they
    do not read."""
    try:
        parsed = session.adapter.parsed_records(session)
        return session.adapter.read_back(probe_bytes(_bytes(data), path=path, parsed=parsed))
    except InputError as exc:
        at = f"{exc.where}: " if exc.where else ""
        raise ExportRefused(
            f"the repaired file would not read back as {session.format} ({at}{exc.message})"
        ) from None
