"""The narrowed read-back of a Claude Code file (repair.readback, `Adapter.read_back_edited`):
the lines the writer wrote anew are parsed, the rest of the written file is known without
reading it (byte copies of lines read, whose nodes and blocks the session holds).

What the whole read-back does, on the written file: the graph of every line, the leaf, the
parentUuid walk and the parallel-result recovery, then the messages built from the chain.
Here the graph is the graph read with the written-anew lines' nodes in their place (its
lists copied, not made line by line; map order is written order: it decides timestamp
ties, the leaf and the recovery), and the leaf and the recovery run on it as the loader
runs them; the walk goes along the walk read where the lines are copies (a copied line
links where it linked when read), parsing nothing of them. The messages are built again only in
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
from bisect import bisect_left
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import compress, count
from operator import attrgetter, gt, lt
from typing import Any

import orjson

from ...files import Spliced
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
    spliced,
    walk,
)
from .load import _DERIVED, CCFile, CCState, Rec, RecordBlock, _Builder, read_record
from .turns import mid_reach, mids_of
from .write import NodeAt, _New, _Writer, forget_write, last_write

_LIVE = attrgetter("live")


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


def read_back_edited(session: Session, data: bytes | Spliced) -> Edited | None:
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
    if not all(map(_LIVE, msgs)) or not all(map(_LIVE, view.messages)):
        return None
    keys = w.order()
    got = _written_graph(w, keys)
    if got is None:
        return None
    g2, fresh, coords, where = got
    on = _chain(g2, _Walked(st.walk.at, w, fresh, keys, w.chains[id(view)]))
    if on is None:
        return None
    chain = list(map(coords.__getitem__, on))
    built = _messages(w, view, keys, where, fresh, g2, on, chain, msgs)
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


# a field's entry for a line that is no node (`build_graph`'s), in `_fields`' order
_NO_NODE = (None, "", None, "", False, None, False)


def _written_graph(
    w: _Writer, keys: list[Any]
) -> tuple[Graph, dict[int, JsonlLine], list[Any], Mapping[Any, int]] | None:
    """The graph of the written file, its lists indexed as the file read's: a line copied
    keeps its index and its entries as read, a line written anew has the entries parsed
    from its bytes (at its index, or after the lines read: a record histview creates), a
    line deleted is no node; map order is written order (`Graph.first` places the lines
    written elsewhere than their index says). Also: the lines written anew (by written
    index), each index's key (`coords`: a line index read, or a `_New`) and each key's
    written index. The lists are the read graph's copied, not made line by line."""
    f, g = w.f, w.f.graph
    n = len(f.lines)
    where = w.places()  # key -> its written index
    new = w.new_written
    gone = [k for k in w.deleted if k not in where]
    if len(keys) != n - len(gone) + len(new):
        return None  # a line read neither written nor deleted
    coords: list[Any] = [*range(n), *new]
    coord = {id(k): n + t for t, k in enumerate(new)}
    changed = [k for k in w.rewrite.keys() | w.relink.keys() if k in where]
    fresh: dict[int, JsonlLine] = {}
    for j in sorted([*map(where.__getitem__, changed), *map(where.__getitem__, new)]):
        raw = w._bytes(keys[j])
        if b"compact_boundary" in raw or b'"progress"' in raw:
            return None
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return None
        fresh[j] = JsonlLine(j + 1, raw, obj)
    small = build_graph(list(fresh.values()))
    if small.odd or small.shadowed or small.pruned or small.bridged:
        return None
    lists = [got + [none] * len(new) for got, none in zip(_fields(g), _NO_NODE, strict=True)]
    kind, uuid = lists[0], lists[1]
    index = dict(g.index)
    # the attachment and system nodes: the read graph's, less those of the lines changed
    glue = g.glue + small.glue
    glue -= sum(1 for i in [*gone, *changed] if uuid[i] and kind[i] not in MESSAGE_TYPES)
    for i in gone:
        if uuid[i] and index.get(uuid[i]) == i:
            del index[uuid[i]]
        for mine, none in zip(lists, _NO_NODE, strict=True):
            mine[i] = none
    placed: list[tuple[str, int]] = []
    for t, j in enumerate(fresh):  # the lines written anew: as they read now
        k = keys[j]
        i = coord[id(k)] if type(k) is not int else k
        if uuid[i] and index.get(uuid[i]) == i:
            del index[uuid[i]]
        for got, mine in zip(_fields(small), lists, strict=True):
            mine[i] = got[t]
        if uuid[i]:
            placed.append((uuid[i], i))
    for u, i in placed:
        if u in index:  # a uuid twice
            return None
        index[u] = i
    nodes = len(uuid) - uuid.count("")
    if len(index) != nodes:
        return None
    g2 = Graph([], index, *lists)  # type: ignore[arg-type]
    g2.first = _moved_places(w, keys, coords, where, uuid)  # type: ignore[assignment]
    g2.glue = glue
    return g2, fresh, coords, where


def _moved_places(
    w: _Writer, keys: list[Any], coords: list[Any], where: Mapping[Any, int], uuid: list[str]
) -> dict[str, float]:
    """Map order of the written file where it is not the order of the indexes: each line
    written elsewhere than among the lines read around it (a line moved, a record histview
    creates) placed after the last line written before it that is written in its place."""
    n = len(w.f.lines)
    moved = w.deferred
    out: dict[str, float] = {}
    step = 1 / (len(keys) + 1)
    for i in [*moved, *range(n, len(coords))]:
        if not uuid[i]:
            continue
        j = where[coords[i]]
        a = j - 1
        while a >= 0 and (type(keys[a]) is not int or keys[a] in moved):
            a -= 1
        out[uuid[i]] = (keys[a] if a >= 0 else -1) + (j - a) * step
    return out


def _fields(g: Graph) -> tuple[list[Any], ...]:
    """The graph's lists by line, in `Graph`'s order of them."""
    return (g.kind, g.uuid, g.parent, g.ts, g.side, g.mid, g.results)


def _chain(g: Graph, walked: _Walked | None = None) -> list[int] | None:
    """The resumed chain of the written file (its user and assistant records, as lines of
    `g`) as the loader finds it; None when it has a gap or leaves a message off it.
    `walked`: the walk read, to follow where the written file holds its lines as read."""
    if any(g.side):
        return None
    cands = candidates(g)
    if not cands:
        return None
    best = newest(g, cands)  # (map order: written order)
    assert best is not None
    if walked is not None:
        got = walked.walk(g, best)
    else:
        w = walk(g, best)
        got = None if w.stop is not None or w.bridges else w.at
    if got is None:
        return None
    at = recover_lines(g, got)[0] if walked is None else walked.recover(g, got)
    kind = g.kind
    on = [j for j in at if kind[j] in MESSAGE_TYPES]
    # every message record is on it (the chain holds no node twice)
    if len(on) != len(g.index) - g.glue:
        return None
    return on


class _Walked:
    """The parentUuid walk of the file read (`Walk.at`, root first), to take the written
    file's walk (`chain.walk`) along it: a line copied links to the line it linked to when
    read, so from a line copied that the walk read holds, the written walk goes on as that
    walk went, down to the nearest line written anew or deleted there, taken as one slice.
    `chain`: the chain read (the walk with the parallel lines recovered, `recover`)."""

    def __init__(
        self,
        at: list[int],
        w: _Writer,
        fresh: dict[int, JsonlLine],
        keys: list[Any],
        chain: list[int] | None = None,
    ):
        self.at = at
        n = len(w.f.lines)
        self.changed = {k for j in fresh for k in (keys[j],) if type(k) is int}
        self.changed.update(w.deleted)
        self.n = n
        self.read, self.chain, self.moved = w.f.graph, chain, w.deferred
        self.pos = dict(zip(at, range(len(at)), strict=True))
        pos = self.pos
        self.cuts = sorted(pos[i] for i in self.changed if i in pos)

    def walk(self, g: Graph, leaf: str) -> list[int] | None:
        """`chain.walk(g, leaf).at` where it has no gap and no loop; None where it has
        (the loader's walk would bridge or stop there)."""
        index, parent = g.index, g.parent
        at, pos, cuts, changed, n = self.at, self.pos, self.cuts, self.changed, self.n
        out: list[int] = []  # leaf first
        limit = len(index)
        u: str | None = leaf
        while u is not None:
            i = index.get(u)
            if i is None:
                return None
            p = pos.get(i) if i < n and i not in changed else None
            if p is None:
                out.append(i)
                u = parent[i]
            else:  # down the walk read to the line after the nearest one changed
                q = cuts[bisect_left(cuts, p) - 1] if cuts and cuts[0] < p else -1
                out += at[p:q:-1] if q >= 0 else at[p::-1]
                u = parent[at[q + 1]]
            if len(out) > limit:  # a loop
                return None
        out.reverse()
        return out

    def recover(self, g: Graph, at: list[int]) -> list[int]:
        """`chain.recover_lines(g, at)[0]` of the written walk `at`, from the chain read:
        each message.id group's recovered lines (its off-chain assistant lines, then the
        off-chain results of its members, after its last line on the chain) are the
        group's as read unless a line of the group changed (written anew, deleted, moved,
        created) or went on or off the chain; only those groups are looked for again."""
        got = self._recovered(g, at) if self.chain is not None else None
        return recover_lines(g, at)[0] if got is None else got

    def _recovered(self, g2: Graph, at: list[int]) -> list[int] | None:
        g, read, n = self.read, self.chain, self.n
        assert read is not None
        if g.first or g2.glue or g.glue:
            return None
        on1, on2 = set(self.at), set(at)
        touched = on1 ^ on2
        touched |= self.changed | self.moved
        touched.update(range(n, len(g2.uuid)))
        groups: set[str] = set()  # the message.ids of the groups those lines are in
        for gr in (g, g2):
            kind, mid, parent, res, index = gr.kind, gr.mid, gr.parent, gr.results, gr.index
            for x in touched:
                if x >= len(kind):
                    continue
                t, m, p = kind[x], mid[x], parent[x]
                if t == "assistant" and m is not None:
                    groups.add(m)
                elif t == "user" and res[x] and p is not None:
                    j = index.get(p)
                    if j is not None and (m := mid[j]) is not None:
                        groups.add(m)
        mid2 = g2.mid
        last = dict(zip(map(mid2.__getitem__, at), range(len(at)), strict=True))
        inserts: dict[int, list[int]] = {}
        # the groups as read: each one's lines, a run of the chain read after the group's
        # last line on the walk read (runs found in C: where a line of the walk read is
        # followed by one recovered, and the reverse)
        on_walk = list(map(on1.__contains__, read))
        if not on_walk or not on_walk[0]:
            return None
        starts = compress(count(1), map(gt, on_walk, on_walk[1:]))
        ends = [*compress(count(1), map(lt, on_walk, on_walk[1:])), len(read)]
        mid1 = g.mid
        for a, b in zip(starts, ends, strict=False):
            anchor = read[a - 1]
            m = mid1[anchor]
            if m is None:
                return None
            if m in groups:
                continue
            k = last.get(m)
            if k is None or at[k] != anchor:
                return None  # (its last line on the walk is another: look for all again)
            inserts[k] = read[a:b]
        # the groups touched, looked for again in the written graph
        if groups:
            kind2, uuid2, index2, parent2 = g2.kind, g2.uuid, g2.index, g2.parent
            members = [
                i
                for i in compress(count(), map(groups.__contains__, mid2))
                if index2.get(uuid2[i]) == i
            ]
            sibs: dict[str, list[int]] = {}
            for i in g2.in_map_order(members):
                if kind2[i] == "assistant" and i not in on2:
                    sibs.setdefault(mid2[i], []).append(i)  # type: ignore[arg-type]
            of_member = {uuid2[i]: i for i in members if kind2[i] == "assistant"}
            by_member: dict[int, list[int]] = {}
            res2 = g2.results
            for r in compress(count(), map(of_member.__contains__, parent2)):
                if kind2[r] == "user" and res2[r] and r not in on2 and index2.get(uuid2[r]) == r:
                    by_member.setdefault(of_member[parent2[r]], []).append(r)  # type: ignore[index]
            results: dict[str, list[int]] = {}
            for j in g2.in_map_order(by_member):
                results.setdefault(mid2[j], []).extend(  # type: ignore[arg-type]
                    g2.in_map_order(by_member[j])
                )
            stamp = g2.ts.__getitem__
            for m in groups:
                k = last.get(m)
                if k is None:
                    continue
                block = sorted(sibs.get(m, []), key=stamp) + sorted(results.get(m, []), key=stamp)
                if block:
                    inserts[k] = block
        return spliced(at, inserts)


def _messages(
    w: _Writer,
    view: Any,
    keys: list[Any],
    where: Mapping[Any, int],
    fresh: dict[int, JsonlLine],
    g2: Graph,
    on: list[int],
    chain: list[Any],
    msgs: list[Message],
) -> list[tuple[int, Message, bool]] | None:
    """The messages the written chain (`on`: its lines in `g2`, `chain`: their keys) builds
    into where it may
    differ from the chain read, by position, each with whether it is a message as read
    (from a stretch that is a stretch read); None when a stretch cannot be told. Where the
    writer planned only the turns a fix touched and the written chain is the chain read
    elsewhere, only those turns are built again (`_regions`)."""
    f = w.f
    g = f.graph
    node_at = w._nodes()
    content = w.rewrite.keys()
    kind = g.kind
    read = w.chains[id(view)]  # (the chain's lines)
    if g.glue:
        read = [i for i in read if kind[i] in MESSAGE_TYPES]
    regions = _regions(w, view, read, chain) or [
        _Region(0, len(read), 0, len(chain), 0, len(view.messages), 0, len(msgs))
    ]
    lines = _Lines(f, keys, fresh)
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
            built = _build(f, view, s, where, lines, node_at, content)
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
    rpos = None if read is chain_idx else dict(zip(read, range(len(read)), strict=True))

    def read_at(c: int) -> int | None:  # (a stretch's edge is the first record of a turn)
        if c == 0 or c == len(chain_idx) or rpos is None:
            return c if c < len(chain_idx) else len(read)
        return rpos.get(chain_idx[c])

    def written_at(k: Any, start: int) -> int | None:  # (the chain holds no line twice)
        try:
            return chain.index(k, start)
        except ValueError:
            return None

    out: list[_Region] = []
    r_done = w_done = 0
    for t in planned:
        ra, rb = read_at(t.chain), read_at(t.chain_end)
        if ra is None or rb is None:
            return None
        wa = w_done + (ra - r_done)
        wb = len(chain) if rb == len(read) else written_at(read[rb], wa)
        if wb is None or chain[w_done:wa] != read[r_done:ra]:
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
    where: Mapping[Any, int],
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
            j = where[k]
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


def _mover(
    f: CCFile, where: Mapping[Any, int], msgs: list[Message]
) -> Callable[[Place, int], Place]:
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
