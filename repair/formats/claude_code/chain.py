"""Claude Code's conversation graph, rebuilt the way its own loader (2.1.88) does on resume.

Steps (docs/formats.md, Claude Code: the chain Claude Code resumes): user/assistant/attachment/system records become
nodes keyed by uuid (a duplicate uuid keeps the last line's content at the first line's
place); `progress` records are dropped and a node whose parent is one is re-pointed to its
nearest non-progress ancestor (only when the progress line came first, as in Claude Code);
the last compact boundary's preserved segment is re-linked and older nodes pruned; the
start record is the newest leaf candidate; the chain is the `parentUuid` walk from it; and
assistant siblings / tool results left off the chain by parallel calls are put back after
their `message.id` group.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from operator import itemgetter
from typing import Any

from ...model import TEXT, THINKING_TYPES, TOOL_RESULT, TOOL_USE
from ..base import JsonlLine, each_line_value, type_name

NODE_TYPES = frozenset({"user", "assistant", "attachment", "system"})
MESSAGE_TYPES = frozenset({"user", "assistant"})
PROGRESS = "progress"
# the records the graph reads, each type as one string: the graph's lists point at these,
# not at a string per record, which every later pass over them would read from memory
_READ_TYPES = {t: t for t in (*NODE_TYPES, PROGRESS)}
USER, ASSISTANT = _READ_TYPES["user"], _READ_TYPES["assistant"]
# what the graph reads of every record, in one call where the record has every key
_ENVELOPE_KEYS = ("type", "uuid", "parentUuid", "isSidechain", "timestamp", "message")
_ENVELOPE = itemgetter(*_ENVELOPE_KEYS)


@dataclass(slots=True)
class Node:
    """One node as an object (`Graph.nodes`; the graph itself keeps one list per field)."""

    uuid: str
    idx: int  # 0-based line index of the record holding the node's content
    pos: int  # place in Claude Code's map (first occurrence), decides timestamp ties
    type: str
    parent: str | None  # effective parentUuid (after the progress bridge)
    sidechain: bool
    ts: str  # timestamp as written ("" when absent)
    mid: str | None = None  # message.id of an assistant record
    results: bool = False  # a user record holding a tool_result block


@dataclass
class Graph:
    """Claude Code's map of nodes, one list per field indexed by line (no object per node):
    `index` names each node's line in map order; the lists hold what the light pass read of
    every line that is a node record (a line that is none, or a line a later duplicate uuid
    replaced, is not in `index`; its entries are not read). The writer and the read-back can
    read the same lists; `nodes` makes the objects when first asked for."""

    lines: Sequence[JsonlLine]
    index: dict[str, int] = field(default_factory=dict)  # uuid -> its line, in map order
    kind: list[str | None] = field(default_factory=list)  # the record's type
    uuid: list[str] = field(default_factory=list)  # ("" for a line that is no node)
    parent: list[str | None] = field(default_factory=list)  # effective parentUuid
    ts: list[str] = field(default_factory=list)  # timestamp as written ("" when absent)
    side: list[bool] = field(default_factory=list)  # isSidechain
    mid: list[str | None] = field(default_factory=list)  # an assistant record's message.id
    results: list[bool] = field(default_factory=list)  # a user record with a tool_result
    # a uuid written twice: the line it was first on (its place in the map; else its line)
    first: dict[str, int] = field(default_factory=dict)
    shadowed: list[int] = field(default_factory=list)  # lines replaced by a later duplicate uuid
    bridged: int = 0  # nodes re-pointed over progress records
    glue: int = 0  # attachment and system lines read (0: every node is a message)
    pruned: dict[str, int] = field(default_factory=dict)  # pre-compaction nodes removed: line
    # lines that are no node but must be shown: (line index, reason) in file order
    odd: list[tuple[int, str]] = field(default_factory=list)
    # what the messages need of a user/assistant record (load.py's builder), by line: its
    # content items (its list of blocks as parsed, or its string content as the one item;
    # None for a record that is no readable message: `bad` says why), its isApiErrorMessage
    # (or an assistant's <synthetic> model), and the assistant lines whose message.id is ""
    # (a string: such records share an id, though `mid` holds None for them)
    items: list[Any] = field(default_factory=list)
    bad: dict[int, str] = field(default_factory=dict)
    api_error: set[int] = field(default_factory=set)
    blank_mid: list[int] = field(default_factory=list)
    # the user records' promptId where it is a string, by line (the writer's look back for
    # one, `write._prompt_before`); None: not gathered (a graph made otherwise)
    prompts: dict[int, str] | None = None
    # a record whose content is one typed block (Claude Code's usual record): `one_item` of
    # it, by line (0: another record), read while the block is fresh from the parse, so the
    # message builder need not read the block again
    one: list[int] = field(default_factory=list)
    one_id: list[str | None] = field(default_factory=list)
    _nodes: dict[str, Node] | None = None
    _children: set[str] | None = None
    _roots: dict[str, str] | None = None

    @classmethod
    def of_nodes(cls, nodes: Iterable[Node]) -> Graph:
        """The graph of these nodes, in this map order (their lists indexed by place in it;
        `nodes` gives the very objects). No line is read: `lines` is empty."""
        given = list(nodes)
        n = len(given)
        g = cls(lines=[], index={nd.uuid: k for k, nd in enumerate(given)})
        g.kind = [nd.type for nd in given]
        g.uuid = [nd.uuid for nd in given]
        g.parent = [nd.parent for nd in given]
        g.ts = [nd.ts for nd in given]
        g.side = [nd.sidechain for nd in given]
        g.mid = [nd.mid for nd in given]
        g.results = [nd.results for nd in given]
        g.glue = sum(1 for nd in given if nd.type not in MESSAGE_TYPES)
        if len(g.index) == n:
            g._nodes = {nd.uuid: nd for nd in given}
        return g

    @property
    def nodes(self) -> dict[str, Node]:
        """Each node as an object, in map order (made on first ask: the writer's)."""
        if self._nodes is None:
            kind, parent, side, ts, mid, res = (
                self.kind,
                self.parent,
                self.side,
                self.ts,
                self.mid,
                self.results,
            )
            self._nodes = {
                u: Node(u, i, pos, kind[i], parent[i], side[i], ts[i], mid[i], res[i])  # type: ignore[arg-type]
                for pos, (u, i) in enumerate(self.index.items())
            }
        return self._nodes

    def obj(self, uuid: str) -> Any:
        return self.lines[self.index[uuid]].obj

    def place(self, uuid: str) -> int:
        """A node's place in map order, as a sort key (its first line)."""
        return self.first.get(uuid, self.index[uuid])

    def in_map_order(self, lines: Iterable[int]) -> list[int]:
        """Node lines (each the line `index` names) sorted in map order."""
        if not self.first:  # no uuid written twice: map order is line order
            return sorted(lines)
        first, uuid = self.first, self.uuid
        return sorted(lines, key=lambda i: first.get(uuid[i], i))

    @property
    def has_child(self) -> set[str]:
        if self._children is None:
            children = set(map(self.parent.__getitem__, self.index.values()))
            children.discard(None)
            self._children = children  # type: ignore[assignment]
        return self._children  # type: ignore[return-value]


def build_graph(lines: Sequence[JsonlLine], release: bool = False) -> Graph:
    """The nodes of every line, and what the messages need of each user/assistant record
    (`Graph.items`); `release`: each line's parsed record is forgotten once read
    (`base.each_line_value`), so the whole file's records are never held at once."""
    n = len(lines)
    index: dict[str, int] = {}
    kinds: list[str | None] = [None] * n
    uuids: list[str] = [""] * n
    parents: list[str | None] = [None] * n
    stamps: list[str] = [""] * n
    sides = [False] * n
    mids: list[str | None] = [None] * n
    with_results = [False] * n
    items: list[Any] = [None] * n
    one = [0] * n
    one_id: list[str | None] = [None] * n
    bad: dict[int, str] = {}
    api_error: set[int] = set()
    blank_mid: list[int] = []
    prompts: dict[int, str] = {}
    # each message.id as one string (the records of a message share it: see `_READ_TYPES`)
    one_mid: dict[str, str] = {}
    first: dict[str, int] = {}
    progress_anc: dict[str, str | None] = {}
    shadowed: list[int] = []
    bridged = glue = 0
    boundaries: list[int] = []
    odd: list[tuple[int, str]] = []
    index_get, setdefault = index.get, index.setdefault
    for i, obj in enumerate(each_line_value(lines, keep=not release)):
        if type(obj) is not dict:
            ln = lines[i]
            if ln.error is not None:
                odd.append((i, f"line {ln.lineno} is not JSON ({ln.error})"))
            elif obj is not None or ln.raw.strip():
                odd.append((i, f"line {ln.lineno} is {type_name(obj)}, not a record"))
            continue
        try:  # a user/assistant record has every key: read in one call, not six
            t, u, p, side, ts, msg = _ENVELOPE(obj)
        except KeyError:
            t, u, p, side, ts, msg = map(obj.get, _ENVELOPE_KEYS)
        if type(t) is not str:
            if "uuid" in obj:
                odd.append((i, f"the record's type is {type_name(t)}, not a string"))
            continue
        if type(u) is not str:
            if t in MESSAGE_TYPES:
                odd.append((i, f"a {t} record without a uuid"))
            continue
        t = _READ_TYPES.get(t)
        if t is None:
            continue
        if t is PROGRESS:
            if type(p) is not str:
                p = None
            progress_anc[u] = progress_anc[p] if p in progress_anc else p
            continue
        if (p is not None and type(p) is not str) or (
            side is not False and side is not None and side is not True
        ):  # links Claude Code cannot read
            odd.append((i, _odd_link(obj, p)))  # type: ignore[arg-type]
            continue
        if p is not None:
            if progress_anc and p in progress_anc:
                p = progress_anc[p]
                bridged += 1
            if p is not None:  # the parent's own uuid string: one string per uuid, not two
                j = index_get(p)
                if j is not None:
                    p = uuids[j]
        if side is True:
            sides[i] = True
        kinds[i] = t
        uuids[i] = u
        parents[i] = p
        if type(ts) is str:
            stamps[i] = ts
        if t is USER or t is ASSISTANT:
            content = msg.get("content") if type(msg) is dict else None
            if type(content) is list and len(content) == 1 and (got := one_item(content[0]))[0]:
                # (Claude Code's usual record: one typed block, read once)
                items[i] = content
                one[i], one_id[i] = got
                if got[0] == ONE_RESULT and t is USER:
                    with_results[i] = True
            elif type(content) is list:
                res = False
                for b in content:  # (every item a typed block, or why not)
                    bt = b.get("type") if type(b) is dict else None
                    if type(bt) is not str:
                        bad[i] = message_fault(msg)  # type: ignore[assignment]
                        res = any(
                            type(b) is dict and b.get("type") == "tool_result" for b in content
                        )
                        break
                    if bt == "tool_result":
                        res = True
                else:
                    items[i] = content
                if res and t is USER:
                    with_results[i] = True
            elif type(content) is str:
                items[i] = (content,)
            else:
                bad[i] = message_fault(msg)  # type: ignore[assignment]
            if t is ASSISTANT:
                if type(msg) is dict:
                    mid = msg.get("id")
                    if type(mid) is str:
                        if mid:
                            mids[i] = one_mid.setdefault(mid, mid)
                        else:
                            blank_mid.append(i)
                    if msg.get("model") == "<synthetic>":
                        api_error.add(i)
            else:
                pid = obj.get("promptId")
                if type(pid) is str:
                    prompts[i] = pid
            if obj.get("isApiErrorMessage") is True:
                api_error.add(i)
        else:
            glue += 1
            if t == "system" and obj.get("subtype") == "compact_boundary":
                boundaries.append(i)
        old = setdefault(u, i)
        if old != i:  # (a duplicate keeps its place in the map)
            index[u] = i
            shadowed.append(old)
            if u not in first:
                first[u] = old
    g = Graph(
        lines,
        index,
        kinds,
        uuids,
        parents,
        stamps,
        sides,
        mids,
        with_results,
        first,
        shadowed,
        bridged,
        glue,
        odd=odd,
        items=items,
        bad=bad,
        api_error=api_error,
        blank_mid=blank_mid,
        prompts=prompts,
        one=one,
        one_id=one_id,
    )
    if boundaries:
        _apply_preserved_segment(g, boundaries[-1])
    return g


# `one_item`'s kinds of a content block: a call, a result, a text (not blank; blank: of
# whitespace; empty: ""; odd: its text no string), a thinking, another typed block
ONE_USE, ONE_RESULT, ONE_TEXT, ONE_BLANK, ONE_EMPTY, ONE_ODD_TEXT, ONE_THINKING, ONE_OTHER = range(
    1, 9
)


def one_item(item: Any) -> tuple[int, str | None]:
    """What the message builder reads of a content item (load.py: its tool ids and plain
    shape, whether Claude Code drops a record of it alone): its kind, and a call's or a
    result's id where it is a string. (0, None): not a typed block (read the long way)."""
    if type(item) is not dict:
        return 0, None
    t = item.get("type")
    if t == TOOL_USE:
        tid = item.get("id")
        return ONE_USE, tid if isinstance(tid, str) else None
    if t == TOOL_RESULT:
        tid = item.get("tool_use_id")
        return ONE_RESULT, tid if isinstance(tid, str) else None
    if type(t) is not str:
        return 0, None
    if t == TEXT:
        txt = item.get("text")
        if type(txt) is not str:
            return ONE_ODD_TEXT, None
        if not txt:
            return ONE_EMPTY, None
        return (ONE_BLANK if txt.isspace() else ONE_TEXT), None
    return (ONE_THINKING if t in THINKING_TYPES else ONE_OTHER), None


def message_fault(msg: Any) -> str | None:
    """Why a user/assistant record's `message` is not a readable message (None: it is): no
    `message` object, or a content that is neither a string nor a list of typed blocks."""
    if type(msg) is not dict:
        return "the record has no `message` object"
    content = msg.get("content")
    if type(content) is str:
        return None
    if type(content) is not list:
        kind = "missing" if content is None else type_name(content)
        return f"message.content is {kind}, not a string or a list of blocks"
    for k, item in enumerate(content):
        t = item.get("type") if type(item) is dict else None
        if type(t) is not str:
            return f"message.content[{k}] is not a content block (no `type`)"
    return None


def _odd_link(obj: dict[str, Any], parent: Any) -> str | None:
    """Why a record's links cannot be read as Claude Code reads them (None when they can):
    a parentUuid that is not a string or null, an isSidechain that is not true/false (any
    non-empty value is "true" to Claude Code, so guessing would pick the wrong thread)."""
    if parent is not None and not isinstance(parent, str):
        return f"parentUuid is {type_name(parent)}, not a string or null"
    side = obj.get("isSidechain")
    if side is not None and not isinstance(side, bool):
        return f"isSidechain is {type_name(side)}, not true or false"
    return None


def _apply_preserved_segment(g: Graph, boundary_idx: int) -> None:
    """Claude Code keeps a compaction's preserved segment: head re-parented onto the anchor,
    the anchor's other children onto the tail, every other node before the boundary pruned."""
    meta = g.lines[boundary_idx].obj.get("compactMetadata")
    seg = meta.get("preservedSegment") if isinstance(meta, dict) else None
    if not isinstance(seg, dict):
        return
    head, anchor, tail = seg.get("headUuid"), seg.get("anchorUuid"), seg.get("tailUuid")
    index, parent = g.index, g.parent
    if not all(isinstance(x, str) and x in index for x in (head, anchor, tail)):
        return
    keep: set[str] = set()
    u: str | None = tail
    while u is not None and u in index and u not in keep:
        keep.add(u)
        if u == head:
            break
        u = parent[index[u]]
    if head not in keep:
        return  # the tail does not reach the head: Claude Code prunes nothing
    parent[index[head]] = anchor
    for u, i in index.items():
        if parent[i] == anchor and u != head:
            parent[i] = tail
    for u, i in list(index.items()):
        if i < boundary_idx and u not in keep:
            g.pruned[u] = i
            del index[u]
    g._children = g._nodes = None


_ms_cache: dict[str, float] = {}


def ts_ms(ts: str) -> float | None:
    """`Date.parse` of an ISO timestamp, in ms; None when absent or unreadable."""
    if not ts:
        return None
    v = _ms_cache.get(ts)
    if v is None:
        try:
            v = datetime.fromisoformat(ts).timestamp() * 1000.0
        except (ValueError, OverflowError, OSError):  # not a date any clock can hold
            return None
        if len(_ms_cache) > 4096:
            _ms_cache.clear()
        _ms_cache[ts] = v
    return v


def candidates(g: Graph) -> list[str]:
    """Leaf candidates in map order: each childless node, walked up through attachment and
    system nodes to the nearest user/assistant node."""
    index, kind, parent, has_child = g.index, g.kind, g.parent, g.has_child
    if not g.glue:  # every node is a user/assistant node: the childless ones
        return [u for u in index if u not in has_child]
    found: dict[str, None] = {}
    memo: dict[str, str | None] = {}
    for u in [u for u in index if u not in has_child]:
        if kind[index[u]] in MESSAGE_TYPES:  # (the usual leaf)
            found[u] = None
            continue
        path: list[str] = []
        cur: str | None = u
        result: str | None = None
        while cur is not None:
            if cur in memo:
                result = memo[cur]
                break
            i = index[cur]
            if kind[i] in MESSAGE_TYPES:
                result = cur
                break
            if cur in path:  # a cycle of system/attachment nodes
                break
            path.append(cur)
            p = parent[i]
            cur = p if p is not None and p in index else None
        for x in path:
            memo[x] = result
        if result is not None:
            found[result] = None
    return list(found)


# a timestamp as Claude Code writes it: UTC, to the millisecond
_ISO_MS = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")


def newest(g: Graph, uuids: list[str]) -> str | None:
    """The newest by timestamp; on a tie the first in map order (Claude Code's strict `>`).
    Where every timestamp is written alike (UTC, to the millisecond), their order is the
    strings' order, and only the greatest is read as a time (a file with tens of thousands
    of leaves: parallel results)."""
    index, ts = g.index, g.ts
    stamps = [ts[index[u]] for u in uuids]
    if stamps and all(map(_ISO_MS.fullmatch, stamps)):
        top = max(stamps)
        if ts_ms(top) is not None:
            return min((u for u, t in zip(uuids, stamps, strict=True) if t == top), key=g.place)
    return newest_by_time(g, uuids)


def newest_by_time(g: Graph, uuids: list[str]) -> str | None:
    """`newest`, each timestamp read as a time."""
    index, ts = g.index, g.ts
    best, best_ms = None, None
    for u in sorted(uuids, key=g.place if g.first else index.__getitem__):  # (map order)
        ms = ts_ms(ts[index[u]])
        if best is None or (ms is not None and (best_ms is None or ms > best_ms)):
            best, best_ms = u, ms
    return best


# Claude Code 2.1.197's walk, where a parentUuid names no record (or loops back): it takes
# the node of the same sidechain flag, not walked yet, stamped closest before the record and
# at most this many ms before it ("tengu_chain_timestamp_fallback", read from its bundled
# source and measured: a record lost between two records 2.9 s apart is bridged, one 10 s
# apart is not). No such node: the walk stops there.
FALLBACK_MS = 5000


@dataclass
class Bridge:
    """Where the walk crossed a gap with the timestamp fallback."""

    uuid: str  # the record whose parent is missing (or loops back)
    missing: str  # the parentUuid it names
    to: str  # the node the walk went on with


@dataclass
class Walk:
    chain: list[str]  # root first
    stop: str | None = None  # "missing" (a parentUuid naming no record) or "cycle"
    stop_uuid: str | None = None
    stop_at: str | None = None  # the record whose parent is missing (the first of the chain)
    bridges: list[Bridge] = field(default_factory=list)
    at: list[int] = field(default_factory=list)  # the chain's lines (`Graph.index` of each)


def walk(g: Graph, leaf: str) -> Walk:
    index, parent = g.index, g.parent
    # the usual walk first: no gap, no loop (a walk longer than the map loops)
    out: list[str] = []
    at: list[int] = []
    u: str | None = leaf
    get = index.get
    for _ in range(len(index) + 1):
        i = get(u) if u is not None else None
        if i is None:
            break
        out.append(u)  # type: ignore[arg-type]
        at.append(i)
        u = parent[i]
    if u is None:
        out.reverse()
        at.reverse()
        return Walk(out, at=at)
    return _walk_gaps(g, leaf)


def _walk_gaps(g: Graph, leaf: str) -> Walk:
    """`walk` of a chain with a gap or a loop: crossed by the timestamp fallback, or the
    place it stops."""
    index, parent = g.index, g.parent
    out: list[str] = []
    at: list[int] = []
    seen: set[str] = set()
    bridges: list[Bridge] = []
    u: str | None = leaf
    stop = stop_uuid = stop_at = None
    while u is not None:
        i = index.get(u)
        if i is None or u in seen:
            kind = "missing" if i is None else "cycle"
            child = out[-1] if out else None
            to = fallback(g, child, seen) if child is not None else None
            if child is None or to is None:
                stop, stop_uuid, stop_at = kind, u, child
                break
            bridges.append(Bridge(child, u, to))
            u = to
            i = index[u]
        seen.add(u)
        out.append(u)
        at.append(i)
        u = parent[i]
    out.reverse()
    at.reverse()
    return Walk(out, stop, stop_uuid, stop_at, bridges, at)


def fallback(g: Graph, uuid: str, seen: set[str]) -> str | None:
    """The node Claude Code 2.1.197 goes on with when `uuid`'s parent is missing: same
    sidechain flag, not in `seen`, stamped 0-5000 ms before it, the closest (the first in
    map order on a tie)."""
    index, side, ts = g.index, g.side, g.ts
    at = index[uuid]
    t = ts_ms(ts[at])
    if t is None:
        return None
    own_side = side[at]
    best, best_d = None, None
    for u, i in index.items():
        if u in seen or u == uuid or side[i] != own_side:
            continue
        m = ts_ms(ts[i])
        if m is None:
            continue
        d = t - m
        if 0 <= d <= FALLBACK_MS and (best_d is None or d < best_d):
            best, best_d = u, d
    return best


def recover_parallel(g: Graph, chain: list[str]) -> tuple[list[str], int]:
    """`recover_lines` of a chain of uuids: the new chain and the number of lines recovered."""
    at, taken = recover_lines(g, list(map(g.index.__getitem__, chain)))
    return (list(map(g.uuid.__getitem__, at)), taken) if taken else (chain, 0)


def recover_lines(g: Graph, at: list[int]) -> tuple[list[int], int]:
    """`recoverOrphanedParallelToolResults`, on the chain's lines (`Walk.at`): for each
    message.id group with a line on the chain, insert its off-chain assistant lines, then the
    off-chain tool-result lines whose parent is a group member, right after the group's last
    on-chain line (each list sorted by the timestamp string). Returns the new chain's lines
    and the number of lines recovered."""
    index, kind, parent, mid = g.index, g.kind, g.parent, g.mid
    off = set(index.values())
    off.difference_update(at)
    if not off:
        return at, 0
    sibs: dict[str, list[int]] = {}  # each group's off-chain assistant lines, in map order
    results_by_parent: dict[int, list[int]] = {}  # off-chain results by parent line, map order
    with_results: set[str] = set()  # the groups of their parents
    with_result = g.results
    for i in g.in_map_order(off):
        t = kind[i]
        if t == "assistant":
            m = mid[i]
            if m is not None:
                sibs.setdefault(m, []).append(i)
        elif t == "user" and with_result[i]:
            p = parent[i]
            j = index.get(p) if p is not None else None
            if j is not None and (m := mid[j]) is not None:
                results_by_parent.setdefault(j, []).append(i)
                with_results.add(m)
    if not sibs and not with_results:
        return at, 0
    wanted = sibs.keys() | with_results
    mids = list(map(mid.__getitem__, at))
    last = dict(zip(mids, range(len(mids)), strict=True))  # each id's last place on the chain
    last_on = {m: last[m] for m in wanted if m in last}
    # each group's results: by its members in map order, each member's in map order
    results: dict[str, list[int]] = {}
    for j in g.in_map_order(results_by_parent):
        m = mid[j]
        if m in last_on:
            results.setdefault(m, []).extend(results_by_parent[j])
    # (a line is in one group at most: an assistant line by its message.id, a result by its
    # parent's, so no line is taken twice)
    stamp = g.ts.__getitem__
    inserts: dict[int, list[int]] = {}
    taken = 0
    for m, k in last_on.items():
        sib = sibs.get(m, [])
        res = results.get(m, [])
        if len(sib) > 1:
            sib.sort(key=stamp)
        if len(res) > 1:
            res.sort(key=stamp)
        taken += len(sib) + len(res)
        inserts[k] = sib + res
    if not taken:
        return at, 0
    return spliced(at, inserts), taken


def spliced(at: list[int], inserts: dict[int, list[int]]) -> list[int]:
    """`at` with each list of `inserts` put right after the place it is keyed by."""
    out: list[int] = []
    start = 0
    for k in sorted(inserts):
        out += at[start : k + 1]
        out += inserts[k]
        start = k + 1
    out += at[start:]
    return out


def roots(g: Graph) -> dict[str, str]:
    """Each node's root (the top of its parentUuid walk), memoised: O(n)."""
    if g._roots is not None:
        return g._roots
    index, parent = g.index, g.parent
    root: dict[str, str] = {}
    for uuid in index:
        if uuid in root:
            continue
        path: list[str] = []
        seen: set[str] = set()
        u: str | None = uuid
        top = uuid
        while u is not None and u in index:
            if u in root:
                top = root[u]
                break
            if u in seen:
                top = u
                break
            seen.add(u)
            path.append(u)
            top = u
            u = parent[index[u]]
        for p in path:
            root[p] = top
    g._roots = root
    return root
