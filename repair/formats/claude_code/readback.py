"""The narrowed read-back of a Claude Code file (repair.readback, `Adapter.read_back_edited`):
the lines the writer wrote anew are parsed, the rest of the written file is known without
reading it (byte copies of lines read, whose nodes and blocks the session holds).

What the whole read-back does, on the written file: the graph of every line, the leaf, the
parentUuid walk and the parallel-result recovery, then the messages built from the chain.
Here the graph is the graph read with the written-anew lines' nodes in their place (file
order kept: it decides timestamp ties, the leaf and the recovery), and the leaf, the walk
and the recovery run on it as the loader runs them. The messages are built again only in
the stretches of the chain that differ from the chain read: the chain is cut before each
record that opened an assistant message when it was read, where no message.id reaches
across the cut (Claude Code merges an assistant record into the earlier message of its
id), so each stretch builds into messages of its own; a stretch that is the same records
as a stretch of the chain read builds into the messages read from it. The other stretches
are built as the loader builds them (`load._Builder`), from the blocks of the lines copied
and the parsed lines written anew.

Whatever this path does not follow (a sidechain, a compaction, duplicate uuids, progress
records bridged, unreadable or hidden lines, a gap in the chain) is read back whole: None.
tests/formats/test_readback_narrow.py compares the two on random fixed sessions.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from ...model import Block, Message, Session
from ...place import Place
from ..base import Edited, JsonlLine
from .chain import (
    MESSAGE_TYPES,
    Graph,
    build_graph,
    candidates,
    newest,
    recover_lines,
    ts_ms,
    walk,
)
from .load import _DERIVED, CCFile, CCState, Rec, RecordBlock, _Builder, read_record
from .turns import mid_reach, mids_of
from .write import NodeAt, _New, _Writer, forget_write, last_write


class _Line:
    """A line of the written file as the message builder reads it: numbered where it is
    written, its record that of the line read (a byte copy) or parsed from what was
    written."""

    __slots__ = ("lineno", "_ln")

    def __init__(self, lineno: int, ln: JsonlLine) -> None:
        self.lineno = lineno
        self._ln = ln

    @property
    def obj(self) -> Any:
        return self._ln.obj

    @property
    def raw(self) -> bytes:
        return self._ln.raw

    @property
    def error(self) -> str | None:
        return self._ln.error


class _Lines:
    """The written file's lines by written index (only those asked for are made)."""

    def __init__(self, f: CCFile, keys: list[Any], fresh: dict[int, JsonlLine]) -> None:
        self.f, self.keys, self.fresh = f, keys, fresh

    def __getitem__(self, j: int) -> _Line:
        ln = self.fresh.get(j)
        if ln is None:
            ln = self.f.lines[self.keys[j]]
        return _Line(j + 1, ln)

    def __len__(self) -> int:
        return len(self.keys)


def read_back_edited(session: Session, data: bytes) -> Edited | None:
    st = session.state
    if not isinstance(st, CCState) or st.inline_thread or st.view.sidechain:
        return None
    w = last_write(session, data)
    forget_write()  # the plan is read back once (and the bytes not kept past it)
    if w is None:
        return None
    f, g, view = st.file, st.file.graph, st.view
    if f.single_doc or g.shadowed or g.pruned or g.bridged or g.odd:
        return None
    if st.walk is None or st.walk.stop is not None or st.walk.bridges:
        return None
    msgs = session.messages
    if not all(m.live for m in msgs) or not all(m.live for m in view.messages):
        return None
    keys = w.order()
    where = [-1] * len(f.lines)  # line index read -> its written index
    for j, k in enumerate(keys):
        if not isinstance(k, _New):
            where[k] = j
    got = _written_graph(w, keys)
    if got is None:
        return None
    g2, fresh = got
    on = _chain(g2)
    if on is None:
        return None
    built = _messages(w, view, keys, where, fresh, g2, on, msgs)
    if built is None:
        return None
    edited: dict[int, Message] = {}
    for p, m, clean in built:
        if m is msgs[p]:
            continue
        if clean:  # a message as read, where the session holds another: read it whole
            return None
        edited[p] = m
    return Edited(edited, _mover(f, where, msgs), complete=True)


def _written_graph(w: _Writer, keys: list[Any]) -> tuple[Graph, dict[int, JsonlLine]] | None:
    """The graph of the written file, its lists indexed by written line: the read graph's
    entries of the lines copied, in written order, and the nodes of the lines written anew
    parsed from their bytes; and those lines (by written index)."""
    changed = w.rewrite.keys() | w.relink.keys()
    fresh: dict[int, JsonlLine] = {}
    for j, k in enumerate(keys):
        if isinstance(k, _New) or k in changed:
            raw = w._bytes(k)
            if b"compact_boundary" in raw or b'"progress"' in raw:
                return None
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError:
                return None
            fresh[j] = JsonlLine(j + 1, raw, obj)
    order = list(fresh)
    small = build_graph([fresh[j] for j in order])
    if small.odd or small.shadowed or small.pruned or small.bridged:
        return None
    g = w.f.graph
    read = [k if type(k) is int else 0 for k in keys]  # (a new line's entries are set below)
    lists = [list(map(got.__getitem__, read)) for got in _fields(g)]
    for t, j in enumerate(order):  # the lines written anew: as they read now
        for got, mine in zip(_fields(small), lists, strict=True):
            mine[j] = got[t]
    kind, uuid = lists[0], lists[1]
    index = {u: j for j, u in enumerate(uuid) if u}
    nodes = len(uuid) - uuid.count("")
    if len(index) != nodes:  # a uuid twice
        return None
    g2 = Graph([], index, *lists)  # type: ignore[arg-type]
    kinds = Counter(kind)
    g2.glue = nodes - kinds["user"] - kinds["assistant"]
    return g2, fresh


def _fields(g: Graph) -> tuple[list[Any], ...]:
    """The graph's lists by line, in `Graph`'s order of them."""
    return (g.kind, g.uuid, g.parent, g.ts, g.side, g.mid, g.results)


def _chain(g: Graph) -> list[int] | None:
    """The resumed chain of the written file (its user and assistant records, as written
    lines) as the loader finds it; None when it has a gap or leaves a message off it."""
    if any(g.side):
        return None
    cands = candidates(g)
    if not cands:
        return None
    best = _newest(g, cands)  # (map order: written order)
    assert best is not None
    w = walk(g, best)
    if w.stop is not None or w.bridges:
        return None
    at, _ = recover_lines(g, w.at)
    kind = g.kind
    on = [j for j in at if kind[j] in MESSAGE_TYPES]
    # every message record is on it (the chain holds no node twice)
    if len(on) != len(g.index) - g.glue:
        return None
    return on


# a timestamp as Claude Code writes it: UTC, to the millisecond
_ISO_MS = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")


def _newest(g: Graph, cands: list[str]) -> str | None:
    """`chain.newest`: where every candidate's timestamp is written alike (UTC, to the
    millisecond), their order is the strings' order, and only the greatest is read as a
    time (a file with tens of thousands of leaves: parallel results)."""
    ts, index = g.ts, g.index
    stamps = [ts[index[u]] for u in cands]
    if all(map(_ISO_MS.fullmatch, stamps)):
        top = max(stamps)
        if ts_ms(top) is not None:
            return min((u for u, t in zip(cands, stamps, strict=True) if t == top), key=g.place)
    return newest(g, cands)


def _messages(
    w: _Writer,
    view: Any,
    keys: list[Any],
    where: list[int],
    fresh: dict[int, JsonlLine],
    g2: Graph,
    on: list[int],
    msgs: list[Message],
) -> list[tuple[int, Message, bool]] | None:
    """The messages the written chain (`on`: its written lines) builds into where it may
    differ from the chain read, by position, each with whether it is a message as read
    (from a stretch that is a stretch read); None when a stretch cannot be told. Where the
    writer planned only the turns a fix touched and the written chain is the chain read
    elsewhere, only those turns are built again (`_regions`)."""
    f = w.f
    g = f.graph
    node_at = w._nodes()
    content = w.rewrite.keys()
    kind = g.kind
    read = [i for i in map(g.index.__getitem__, view.chain) if kind[i] in MESSAGE_TYPES]
    chain = list(map(keys.__getitem__, on))
    regions = _regions(w, view, read, chain) or [
        _Region(0, len(read), 0, len(chain), 0, len(view.messages), 0, len(msgs))
    ]
    lines = _Lines(f, keys, fresh)
    new_at = {id(k): j for j, k in fresh.items() for k in (keys[j],) if isinstance(k, _New)}
    out: list[tuple[int, Message, bool]] = []
    for r in regions:
        first_of: dict[int, Message] = {}
        starters: set[int] = set()
        for m in view.messages[r.old : r.old_end]:
            if origin := m.origin:
                first_of[origin[0]] = m
                if m.role == "assistant":
                    starters.add(origin[0])
        was = read[r.read : r.read_end]
        read_stretches = {s[0]: s for s in _stretches(was, starters, mids_of(g, was))}
        got: list[tuple[Message, bool]] = []
        now = chain[r.written : r.written_end]
        for s in _stretches(now, starters - content, mids_of(g2, on[r.written : r.written_end])):
            same = read_stretches.get(s[0]) if isinstance(s[0], int) else None
            if same == s and content.isdisjoint(s):
                as_read = [first_of[k] for k in s if k in first_of]
                at = r.new + len(got)
                # the session holds these messages as read (a message is equal only to itself)
                if msgs[at : at + len(as_read)] == as_read:
                    got.extend((m, True) for m in as_read)
                    continue
            built = _build(f, view, s, where, new_at, lines, node_at, content)
            if built is None:
                return None
            got.extend((m, False) for m in built)
        if len(got) != r.new_end - r.new:
            return None
        out.extend((r.new + k, m, clean) for k, (m, clean) in enumerate(got))
    return out


@dataclass(frozen=True, slots=True)
class _Region:
    """A stretch of the chain read [read, read_end) (its user and assistant records) and of
    the written chain [written, written_end), of the messages read [old, old_end) and of the
    session's [new, new_end)."""

    read: int
    read_end: int
    written: int
    written_end: int
    old: int
    old_end: int
    new: int
    new_end: int


def _regions(w: _Writer, view: Any, read: list[int], chain: list[Any]) -> list[_Region] | None:
    """The stretches of turns the writer planned (`_Writer.turns`), each where the written
    chain holds it, when the written chain is the chain read everywhere else (the same
    lines, which no write touched: they build into the messages read, since no message.id
    reaches across a stretch's edge, `turns.touched_turns`); None: compare it whole."""
    planned = w.turns.get(id(view))
    if planned is None:
        return None
    chain_idx = w.chains[id(view)]
    rpos = dict(zip(read, range(len(read)), strict=True))
    wpos = dict(zip(chain, range(len(chain)), strict=True))

    def read_at(c: int) -> int | None:  # (a stretch's edge is the first record of a turn)
        return 0 if c == 0 else len(read) if c == len(chain_idx) else rpos.get(chain_idx[c])

    out: list[_Region] = []
    r_done = w_done = 0
    for t in planned:
        ra, rb = read_at(t.chain), read_at(t.chain_end)
        if ra is None or rb is None:
            return None
        wa = w_done + (ra - r_done)
        wb = len(chain) if rb == len(read) else wpos.get(read[rb])
        if wb is None or wb < wa or chain[w_done:wa] != read[r_done:ra]:
            return None
        out.append(_Region(ra, rb, wa, wb, t.old, t.old_end, t.new, t.new_end))
        r_done, w_done = rb, wb
    if chain[w_done:] != read[r_done:]:
        return None
    return out


def _stretches(seq: list[Any], starters: set[int], mids: list[Any]) -> list[tuple[Any, ...]]:
    """`seq` (each record's message.id as `mids_of` gives it) cut before each starter that
    no message.id reaches across (the last record of every assistant id before it is
    before it too; records without an id count as one id)."""
    reach = mid_reach(mids)
    cuts = [0]
    cuts += [
        i
        for i, k in enumerate(seq)
        if type(k) is int and k in starters and 0 < i and reach[i - 1] < i
    ]
    cuts.append(len(seq))
    return [tuple(seq[a:b]) for a, b in zip(cuts, cuts[1:], strict=False) if a < b]


def _build(
    f: CCFile,
    view: Any,
    stretch: tuple[Any, ...],
    where: list[int],
    new_at: dict[int, int],
    lines: _Lines,
    node_at: NodeAt,
    content: Any,
) -> list[Message] | None:
    """One stretch built as `load.build_view` builds the live chain, its records numbered
    where they are written."""
    recs: dict[int, Rec] = {}
    idxs: list[int] = []
    rec_blocks = view.rec_blocks
    for k in stretch:
        if isinstance(k, _New) or k in content:
            j = new_at[id(k)] if isinstance(k, _New) else where[k]
            obj = lines.fresh[j].obj
            role = obj.get("type") if type(obj) is dict else None
            if role not in MESSAGE_TYPES:
                return None
            recs[j] = read_record(obj, j, j + 1, role)
        else:
            j = where[k]
            nd = node_at[k]
            blocks = rec_blocks.get(k)
            if blocks is None or (nd.type == "assistant" and nd.mid is None):
                return None  # not a record of a live message, or an id read apart
            recs[j] = Rec(
                nd.type,
                tuple(_moved_block(b, j) for b in blocks),
                None,
                nd.mid,
                False,
                nd.ts,
                nd.uuid,
            )
        idxs.append(j)
    part = dataclasses.replace(f, lines=lines, recs=recs)  # type: ignore[arg-type]
    live = _Builder(part)
    for j in idxs:
        live.add(j)
    live.flush()
    orphans = live.orphan_thinking()
    if orphans:
        live = _Builder(part, skip=orphans)
        for j in idxs:
            live.add(j)
        live.flush()
    msgs = live.out
    return msgs if all(m.live for m in msgs) else None


def _moved_block(b: Block, j: int) -> Block:
    """A block of a line copied, as read from where the line is written."""
    return RecordBlock(b.type, b.data, b.tool_id, b.name, b.is_error, _DERIVED, j)


def _mover(f: CCFile, where: list[int], msgs: list[Message]) -> Callable[[Place, int], Place]:
    """Where a finding of a message written as read is in the written file: its line there."""
    lines = f.lines

    def moved(place: Place, position: int) -> Place:
        if place.line is None:
            return place
        origin = msgs[position].origin
        for k in origin if isinstance(origin, tuple) else ():
            if lines[k].lineno == place.line:
                return dataclasses.replace(place, line=where[k] + 1)
        return place

    return moved
