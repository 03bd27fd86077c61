"""Gaps in a Claude Code chain: a record whose parentUuid names a record that is not in the
file (a failed append, a record removed by hand). Claude Code 2.1.197 crosses a gap only
when a node is stamped at most 5 s before the record (its timestamp fallback); else it
resumes from the record after the gap and the conversation before it is cut off.

`broken-chain` names each gap, and its fix writes a link: the node Claude Code's fallback
takes, or else (docs/clients.md, "Gaps in the chain") the node before the record in the
file with the same sessionId, no sidechain and no agentId, when that node is a tip (no
record follows it yet), stamped no later than the record, and not reached from it (no
loop), and the lost record was not a prompt: a file-history-snapshot names each prompt,
and a prompt may follow a rewind, whose parent is an earlier record the file no longer
tells. Anything else is ambiguous and left as it is.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from ...edits import Relink
from ...model import Session
from ..base import JsonlLine, LineIndex
from ..probe import probe_bytes
from .chain import Graph, ts_ms, walk
from .load import CCState
from .write import _set_parent, _swap_parent, export_lines, written_start

CUT = "not connected to the resumed conversation"
# An inline sidechain is written with its main conversation: its gaps are shown, not fixed
SIDECHAIN = "a gap inside an inline sidechain is left as it is (it is written with the session)"


# (code, message position, detail, key, whether the client target repairs it)
RecordFinding = tuple[str, int, str, tuple[Hashable, ...], bool]


def chain_findings(session: Session) -> list[RecordFinding]:
    st = session.state
    if not isinstance(st, CCState) or st.walk is None:
        return []
    g = st.file.graph
    w = st.walk
    out: list[RecordFinding] = []
    for b in w.bridges:
        mi = _message_at(session, g, w.chain, b.uuid)
        if mi is None:
            continue
        line, to_line = _line(g, b.uuid), _line(g, b.to)
        gap = _gap_ms(g, b.uuid, b.to)
        detail = (
            f"line {line}: its parentUuid {b.missing} names no record in the file (a record "
            f"was lost); histview, as Claude Code 2.1.197 does, goes on with line {to_line}, "
            f"stamped {gap} before it. A reader that stops at the gap resumes only from "
            f"line {line}."
        )
        to, where = b.to, f"line {to_line}, where Claude Code 2.1.197 links it"
        if st.inline_thread:
            to, where = "", SIDECHAIN
        lost = "every reader then follows the chain across the gap"
        key: tuple[Hashable, ...] = (b.uuid, to, where, lost, b.missing, line)
        out.append(("broken-chain", mi, detail, key, True))
    if w.stop is not None and w.stop_at is not None:
        mi = next((k for k, m in enumerate(session.messages) if m.live), None)
        if mi is None:
            return out
        stop_at, gone = _stop_as_written(session, st, w.stop_at)
        parent, where = relink_target(st, stop_at, w.stop_uuid, gone)
        if st.inline_thread:
            parent, where = None, SIDECHAIN
        cut = [m for m in session.messages if m.hidden and m.meta.get("hidden_reason") == CUT]
        if parent:  # what the link brings back: the chain that ends at its new parent
            back = set(map(g.index.__getitem__, walk(g, parent).chain))
            cut = [m for m in cut if back.intersection(_origin(m))]
        lines = sorted(st.file.lines[i].lineno for m in cut for i in _origin(m))
        line = _line(g, stop_at)
        what = "loops back" if w.stop == "cycle" else "names no record in the file"
        span = f" (lines {lines[0]}-{lines[-1]})" if lines else ""
        n = len(cut)
        detail = (
            f"line {line}: its parentUuid {w.stop_uuid} {what} (a record was lost) and no "
            f"record is stamped within 5 s before it: the {n} message{'s' if n != 1 else ''} "
            f"before the gap{span} are cut off and not sent; Claude Code resumes only from "
            f"line {line}."
        )
        lost = f"the {n} messages before the gap rejoin the conversation"
        key = (stop_at, parent or "", where, lost, w.stop_uuid, line)
        out.append(("broken-chain", mi, detail, key, False))
    return out


def _stop_as_written(session: Session, st: CCState, stop_at: str) -> tuple[str, set[int]]:
    """The record the gap is at once the session is written, and the lines the write
    deletes. The gap's record as read, unless a fix emptied it: the write then deletes it
    and the record after it takes its parentUuid (write.py), so the gap is there (and the
    record before it in the file may be a tip now: re-linking it is no longer ambiguous)."""
    g = st.file.graph
    idx = g.index[stop_at]
    if session.messages is st.view.messages or idx not in st.view.rec_blocks:
        return stop_at, set()
    for m in session.messages:
        if m.live and any(b.origin == idx for b in m.blocks):
            return stop_at, set()
    start, gone = written_start(session)
    if idx not in gone or start is None:
        return stop_at, gone
    obj = st.file.lines[start].obj
    u = obj.get("uuid") if type(obj) is dict else None
    if not isinstance(u, str) or g.index.get(u) != start:
        return stop_at, gone
    return u, gone


def relink_target(
    st: CCState, uuid: str, missing: str | None, gone: set[int] | frozenset[int] = frozenset()
) -> tuple[str | None, str]:
    """The node to re-link `uuid` to, and where it is in words (or why there is none).
    `gone`: the lines the write deletes (no candidate)."""
    g = st.file.graph
    lines = st.file.lines
    at = g.index[uuid]
    me = lines[at].obj
    sid = me.get("sessionId")
    prompt = _snapshot_of(lines, missing)
    if prompt is not None:
        return None, (
            f"the gap is ambiguous: the lost record was a prompt (the file-history-snapshot "
            f"on line {prompt} names it), which may have followed a rewind from an earlier "
            "record"
        )
    for idx in range(at - 1, -1, -1):
        obj = lines[idx].obj
        u = obj.get("uuid") if type(obj) is dict else None
        if not isinstance(u, str) or g.index.get(u) != idx or g.side[idx]:
            continue
        if obj.get("agentId") or idx in gone or obj.get("sessionId") != sid:
            continue
        if u in g.has_child:
            return None, (
                f"the gap is ambiguous: line {lines[idx].lineno}, the record before it, "
                "already has a record after it"
            )
        if uuid in walk(g, u).chain:
            return None, f"the gap is ambiguous: line {lines[idx].lineno} descends from it"
        t_me, t_q = ts_ms(g.ts[at]), ts_ms(g.ts[idx])
        if t_me is not None and t_q is not None and t_q > t_me:
            return None, f"the gap is ambiguous: line {lines[idx].lineno} is stamped after it"
        return u, f"line {lines[idx].lineno}, the record before it in the file"
    return None, "the gap is ambiguous: no record of this session comes before it"


def _snapshot_of(lines: Sequence[JsonlLine], uuid: str | None) -> int | None:
    """The line of a file-history-snapshot naming `uuid` (Claude Code writes one per
    prompt), if any."""
    if uuid is None:
        return None
    for ln in lines:
        obj = ln.obj
        if type(obj) is dict and obj.get("type") == "file-history-snapshot":
            if obj.get("messageId") == uuid:
                return ln.lineno
    return None


def _line(g: Graph, uuid: str) -> int:
    return g.lines[g.index[uuid]].lineno


def _origin(m: Any) -> tuple[int, ...]:
    """The line indexes of the records a message was built from."""
    return m.origin if isinstance(m.origin, tuple) else ()


def _gap_ms(g: Graph, a: str, b: str) -> str:
    ta, tb = ts_ms(g.ts[g.index[a]]), ts_ms(g.ts[g.index[b]])
    if ta is None or tb is None:
        return "?"
    d = (ta - tb) / 1000
    return f"{d:.1f} s"


def _message_at(session: Session, g: Graph, chain: list[str], uuid: str) -> int | None:
    """The first live message holding a record at or after `uuid` in chain order."""
    try:
        k = chain.index(uuid)
    except ValueError:
        return None
    after = set(map(g.index.__getitem__, chain[k:]))
    for pos, m in enumerate(session.messages):
        if m.live and isinstance(m.origin, tuple) and after.intersection(m.origin):
            return pos
    return None


def apply_relinks(session: Session, edits: list[Relink]) -> Session:
    """The session as written, with each edited record pointing at its new parent, loaded
    again: the records before a gap become part of the conversation. The lines loaded keep
    the numbers they had in the file as read (a record histview wrote takes the number of
    the line before it), and the records the write left out stay in the report."""
    from ...threads import own_file  # the engine above the formats

    written, linenos = export_lines(session)
    probe = probe_bytes(written.data, path=session.path, jsonl=True)
    assert isinstance(probe.lines, LineIndex)  # (a JSONL probe's lines)
    if len(linenos) == len(probe.lines):
        prev, numbers = 0, []
        for no in linenos:
            prev = no if no is not None else prev
            numbers.append(prev)
        probe.lines.renumber(numbers)
    parents = {(e.record, e.line): e.parent for e in edits}
    raws: list[bytes] = []
    for ln in probe.lines:
        obj = ln.obj
        u = obj.get("uuid") if type(obj) is dict else None
        if isinstance(u, str) and (u, ln.lineno) in parents:
            parent = parents[u, ln.lineno]
            raws.append(_swap_parent(ln.raw, obj, parent))
            ln.obj = _set_parent(obj, parent)
        else:
            raws.append(ln.raw)
    nl = probe.newline.encode()
    body = nl.join(raws) + (nl if probe.trailing_newline and raws else b"")
    if probe.bom:
        body = b"\xef\xbb\xbf" + body
    reread = probe_bytes(body, path=session.path, jsonl=True)
    assert isinstance(reread.lines, LineIndex)
    reread.lines.renumber([ln.lineno for ln in probe.lines])
    again = session.adapter.read_back(reread)  # the Claude Code adapter's load_file
    again.state.file.carried = written.dropped_records
    again.target, again.source, again.label = session.target, session.source, session.label
    # subagent files are threads of their own file: they stay as they are
    again.threads += [t for t in session.threads if own_file(session, t)]
    for t in again.threads:
        t.target = session.target
    return again
