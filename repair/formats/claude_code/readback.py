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
from collections.abc import Callable
from typing import Any

import orjson

from ...model import Block, Message, Session
from ...place import Place
from ..base import Edited, JsonlLine
from .chain import (
    MESSAGE_TYPES,
    Graph,
    Node,
    build_graph,
    candidates,
    recover_parallel,
    ts_ms,
    walk,
)
from .load import _DERIVED, CCFile, CCState, Rec, RecordBlock, _Builder, read_record
from .write import _New, _Writer, forget_write, last_write


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
    g2, fresh, fresh_nodes = got
    got_chain = _chain(g2, where, fresh_nodes)
    if got_chain is None:
        return None
    built = _messages(w, view, keys, where, fresh, got_chain, msgs)
    if built is None or len(built) != len(msgs):
        return None
    edited: dict[int, Message] = {}
    for p, (m, clean) in enumerate(built):
        if m is msgs[p]:
            continue
        if clean:  # a message as read, where the session holds another: read it whole
            return None
        edited[p] = m
    return Edited(edited, _mover(f, where, msgs), complete=True)


def _written_graph(
    w: _Writer, keys: list[Any]
) -> tuple[Graph, dict[int, JsonlLine], dict[Any, Node]] | None:
    """The graph of the written file: the nodes read, in written order, with the nodes of
    the lines written anew parsed from their bytes; those lines (by written index); their
    nodes by key (the line index read, or the `_New`)."""
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
    by_j: dict[int, Node] = {}
    fresh_nodes: dict[Any, Node] = {}
    for n in small.nodes.values():
        j = order[n.idx]
        n.idx = j
        by_j[j] = n
        fresh_nodes[keys[j]] = n
    node_at = w._nodes().get
    found = [by_j.get(j) if j in fresh else node_at(k) for j, k in enumerate(keys)]
    written = [n for n in found if n is not None]
    nodes = {n.uuid: n for n in written}
    if len(nodes) != len(written):  # a uuid twice
        return None
    return Graph.of_nodes(nodes.values()), fresh, fresh_nodes


def _chain(
    g: Graph, where: list[int], fresh_nodes: dict[Any, Node]
) -> tuple[list[Any], list[Node]] | None:
    """The resumed chain of the written file (its user and assistant records, as keys, and
    their nodes) as the loader finds it; None when it has a gap or leaves a message off it."""
    nodes = g.nodes
    if any(n.sidechain for n in nodes.values()):
        return None
    cands = candidates(g)
    if not cands:
        return None
    key_of = {n.uuid: k for k, n in fresh_nodes.items()}

    def written(u: str) -> int:  # a fresh node's idx is where it is written
        return nodes[u].idx if u in key_of else where[nodes[u].idx]

    # `chain.newest`: the newest by timestamp, on a tie the first in the written file
    best, best_ms = None, None
    for u in sorted(cands, key=written):
        ms = ts_ms(nodes[u].ts)
        if best is None or (ms is not None and (best_ms is None or ms > best_ms)):
            best, best_ms = u, ms
    assert best is not None
    w = walk(g, best)
    if w.stop is not None or w.bridges:
        return None
    chain, _ = recover_parallel(g, w.chain)
    on = [n for u in chain if (n := nodes[u]).type in MESSAGE_TYPES]
    # every message record is on it (the chain holds no node twice)
    if len(on) != sum(1 for n in nodes.values() if n.type in MESSAGE_TYPES):
        return None
    fresh_key = key_of.get
    return [n.idx if (k := fresh_key(n.uuid)) is None else k for n in on], on


_NOT = object()


def _messages(
    w: _Writer,
    view: Any,
    keys: list[Any],
    where: list[int],
    fresh: dict[int, JsonlLine],
    chain_nodes: tuple[list[Any], list[Node]],
    msgs: list[Message],
) -> list[tuple[Message, bool]] | None:
    """The messages the written chain builds into, each with whether it is a message as
    read (from a stretch that is a stretch read); None when a stretch cannot be told."""
    f = w.f
    node_at = w._nodes()
    content = w.rewrite.keys()
    first_of: dict[int, Message] = {}
    starters: set[int] = set()
    for m in view.messages:
        if origin := m.origin:
            first_of[origin[0]] = m
            if m.role == "assistant":
                starters.add(origin[0])
    nodes = f.graph.nodes
    read_nodes = [n for u in view.chain if (n := nodes[u]).type in MESSAGE_TYPES]
    read = [n.idx for n in read_nodes]
    read_stretches = {s[0]: s for s in _stretches(read, starters, read_nodes)}
    out: list[tuple[Message, bool]] = []
    lines = _Lines(f, keys, fresh)
    new_at = {id(k): j for j, k in fresh.items() for k in (keys[j],) if isinstance(k, _New)}
    chain, written_nodes = chain_nodes
    for s in _stretches(chain, starters - content, written_nodes):
        same = read_stretches.get(s[0]) if isinstance(s[0], int) else None
        if same == s and content.isdisjoint(s):
            as_read = [first_of[k] for k in s if k in first_of]
            at = len(out)
            # the session holds these messages as read (a message is equal only to itself)
            if msgs[at : at + len(as_read)] == as_read:
                out.extend((m, True) for m in as_read)
                continue
        built = _build(f, view, s, where, new_at, lines, node_at, content)
        if built is None:
            return None
        out.extend((m, False) for m in built)
    return out


def _stretches(seq: list[Any], starters: set[int], nodes: list[Node]) -> list[tuple[Any, ...]]:
    """`seq` (its records' `nodes`) cut before each starter that no message.id reaches
    across (the last record of every assistant id before it is before it too; records
    without an id count as one id)."""
    mids = [n.mid if n.type == "assistant" else _NOT for n in nodes]
    last = dict(zip(mids, range(len(mids)), strict=True))  # each id's last record
    last[_NOT] = -1
    reaches = list(map(last.__getitem__, mids))
    cuts = [0]
    reach = seen = -1  # the furthest any record before `seen` reaches
    for i in [i for i, k in enumerate(seq) if type(k) is int and k in starters]:
        if i > 0:
            reach = max(reach, *reaches[seen + 1 : i])
            seen = i - 1
            if reach < i:
                cuts.append(i)
    cuts.append(len(seq))
    return [tuple(seq[a:b]) for a, b in zip(cuts, cuts[1:], strict=False) if a < b]


def _build(
    f: CCFile,
    view: Any,
    stretch: tuple[Any, ...],
    where: list[int],
    new_at: dict[int, int],
    lines: _Lines,
    node_at: dict[int, Node],
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
