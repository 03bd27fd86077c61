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

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..base import JsonlLine, each_line_value, type_name

NODE_TYPES = frozenset({"user", "assistant", "attachment", "system"})
MESSAGE_TYPES = frozenset({"user", "assistant"})
PROGRESS = "progress"


@dataclass(slots=True)
class Node:
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
    nodes: dict[str, Node]  # in map order
    lines: list[JsonlLine]
    shadowed: list[int] = field(default_factory=list)  # lines replaced by a later duplicate uuid
    bridged: int = 0  # nodes re-pointed over progress records
    pruned: dict[str, int] = field(default_factory=dict)  # pre-compaction nodes removed: line
    # lines that are no node but must be shown: (line index, reason) in file order
    odd: list[tuple[int, str]] = field(default_factory=list)
    _children: set[str] | None = None
    _roots: dict[str, str] | None = None

    def obj(self, uuid: str) -> Any:
        return self.lines[self.nodes[uuid].idx].obj

    @property
    def has_child(self) -> set[str]:
        if self._children is None:
            self._children = {n.parent for n in self.nodes.values() if n.parent is not None}
        return self._children


def build_graph(
    lines: list[JsonlLine],
    read: Callable[[dict[str, Any], int, int, str], Any] | None = None,
    records: dict[int, Any] | None = None,
    release: bool = False,
) -> Graph:
    """The nodes of every line. `read(record, index, lineno, type)` is called for each
    user/assistant node record (to take what the messages need of it), what it returns kept
    in `records` by line index; `release`: each line's parsed record is forgotten once read
    (`base.each_line_value`), so the whole file's records are never held at once."""
    nodes: dict[str, Node] = {}
    progress_anc: dict[str, str | None] = {}
    shadowed: list[int] = []
    bridged = 0
    boundaries: list[int] = []
    odd: list[tuple[int, str]] = []
    for i, obj in enumerate(each_line_value(lines, keep=not release)):
        if type(obj) is not dict:
            ln = lines[i]
            if ln.error is not None:
                odd.append((i, f"line {ln.lineno} is not JSON ({ln.error})"))
            elif obj is not None or ln.raw.strip():
                odd.append((i, f"line {ln.lineno} is {type_name(obj)}, not a record"))
            continue
        t = obj.get("type")
        if type(t) is not str:
            if "uuid" in obj:
                odd.append((i, f"the record's type is {type_name(t)}, not a string"))
            continue
        u = obj.get("uuid")
        if type(u) is not str:
            if t in MESSAGE_TYPES:
                odd.append((i, f"a {t} record without a uuid"))
            continue
        if t not in NODE_TYPES and t != PROGRESS:
            continue
        p = obj.get("parentUuid")
        side = obj.get("isSidechain")
        if t != PROGRESS and (
            (p is not None and type(p) is not str) or (side is not None and type(side) is not bool)
        ):
            odd_key = _odd_link(obj, p)
            if odd_key is not None:
                odd.append((i, odd_key))
                continue
        if type(p) is not str:
            p = None
        if t == PROGRESS:
            progress_anc[u] = progress_anc[p] if p in progress_anc else p
            continue
        if p is not None and p in progress_anc:
            p = progress_anc[p]
            bridged += 1
        if p is not None:  # the parent's own uuid string: one string per uuid, not two
            parent = nodes.get(p)
            if parent is not None:
                p = parent.uuid
        ts = obj.get("timestamp")
        if type(ts) is not str:
            ts = ""
        side = side is True
        mid = None  # an assistant record's message.id (a string, not empty)
        res = False  # a user record holding a tool_result block
        if t == "assistant" or t == "user":
            msg = obj.get("message")
            if type(msg) is dict:
                if t == "assistant":
                    mid = msg.get("id")
                    if type(mid) is not str or not mid:
                        mid = None
                else:
                    content = msg.get("content")
                    if type(content) is list:
                        for b in content:
                            if type(b) is dict and b.get("type") == "tool_result":
                                res = True
                                break
            if read is not None and records is not None:
                records[i] = read(obj, i, lines[i].lineno, t)
        old = nodes.get(u)
        if old is None:
            nodes[u] = Node(u, i, len(nodes), t, p, side, ts, mid, res)
        else:
            shadowed.append(old.idx)
            old.idx, old.type, old.parent, old.sidechain, old.ts, old.mid = i, t, p, side, ts, mid
            old.results = res
        if t == "system" and obj.get("subtype") == "compact_boundary":
            boundaries.append(i)
    g = Graph(nodes=nodes, lines=lines, shadowed=shadowed, bridged=bridged, odd=odd)
    if boundaries:
        _apply_preserved_segment(g, boundaries[-1])
    return g


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
    nodes = g.nodes
    if not all(isinstance(x, str) and x in nodes for x in (head, anchor, tail)):
        return
    keep: set[str] = set()
    u: str | None = tail
    while u is not None and u in nodes and u not in keep:
        keep.add(u)
        if u == head:
            break
        u = nodes[u].parent
    if head not in keep:
        return  # the tail does not reach the head: Claude Code prunes nothing
    nodes[head].parent = anchor
    for n in nodes.values():
        if n.parent == anchor and n.uuid != head:
            n.parent = tail
    for n in list(nodes.values()):
        if n.idx < boundary_idx and n.uuid not in keep:
            g.pruned[n.uuid] = n.idx
            del nodes[n.uuid]
    g._children = None


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
    nodes, has_child = g.nodes, g.has_child
    found: dict[str, None] = {}
    memo: dict[str, str | None] = {}
    for n in nodes.values():
        if n.uuid in has_child:
            continue
        path: list[str] = []
        cur: Node | None = n
        result: str | None = None
        while cur is not None:
            if cur.uuid in memo:
                result = memo[cur.uuid]
                break
            if cur.type in MESSAGE_TYPES:
                result = cur.uuid
                break
            if cur.uuid in path:  # a cycle of system/attachment nodes
                break
            path.append(cur.uuid)
            cur = nodes.get(cur.parent) if cur.parent is not None else None
        for u in path:
            memo[u] = result
        if result is not None:
            found[result] = None
    return list(found)


def newest(g: Graph, uuids: list[str]) -> str | None:
    """The newest by timestamp; on a tie the first in map order (Claude Code's strict `>`)."""
    best, best_ms = None, None
    for u in sorted(uuids, key=lambda x: g.nodes[x].pos):
        ms = ts_ms(g.nodes[u].ts)
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


def walk(g: Graph, leaf: str) -> Walk:
    nodes = g.nodes
    out: list[str] = []
    seen: set[str] = set()
    bridges: list[Bridge] = []
    u: str | None = leaf
    stop = stop_uuid = stop_at = None
    while u is not None:
        if u not in nodes or u in seen:
            kind = "missing" if u not in nodes else "cycle"
            child = out[-1] if out else None
            to = fallback(g, child, seen) if child is not None else None
            if child is None or to is None:
                stop, stop_uuid, stop_at = kind, u, child
                break
            bridges.append(Bridge(child, u, to))
            u = to
        seen.add(u)
        out.append(u)
        u = nodes[u].parent
    out.reverse()
    return Walk(out, stop, stop_uuid, stop_at, bridges)


def fallback(g: Graph, uuid: str, seen: set[str]) -> str | None:
    """The node Claude Code 2.1.197 goes on with when `uuid`'s parent is missing: same
    sidechain flag, not in `seen`, stamped 0-5000 ms before it, the closest (the first in
    map order on a tie)."""
    node = g.nodes[uuid]
    t = ts_ms(node.ts)
    if t is None:
        return None
    best, best_d = None, None
    for n in g.nodes.values():
        if n.uuid in seen or n.uuid == uuid or n.sidechain != node.sidechain:
            continue
        m = ts_ms(n.ts)
        if m is None:
            continue
        d = t - m
        if 0 <= d <= FALLBACK_MS and (best_d is None or d < best_d):
            best, best_d = n.uuid, d
    return best


def recover_parallel(g: Graph, chain: list[str]) -> tuple[list[str], int]:
    """`recoverOrphanedParallelToolResults`: for each message.id group with a line on the
    chain, insert its off-chain assistant lines, then the off-chain tool-result lines whose
    parent is a group member, right after the group's last on-chain line (each list sorted by
    the timestamp string). Returns the new chain and the number of lines recovered."""
    nodes = g.nodes
    on = set(chain)
    sibs: dict[str, list[Node]] = {}  # each group's off-chain assistant lines, in map order
    results_by_parent: dict[str, list[Node]] = {}  # off-chain results, in map order
    with_results: set[str] = set()  # the groups of their parents
    for n in nodes.values():
        if n.uuid in on:
            continue
        if n.type == "assistant":
            if n.mid is not None:
                sibs.setdefault(n.mid, []).append(n)
        elif n.type == "user" and n.parent is not None and n.results:
            p = nodes.get(n.parent)
            if p is not None and p.mid is not None:
                results_by_parent.setdefault(n.parent, []).append(n)
                with_results.add(p.mid)
    if not sibs and not with_results:
        return chain, 0
    wanted = sibs.keys() | with_results
    mids = [nodes[u].mid for u in chain]
    last_on = {mid: i for i, mid in enumerate(mids) if mid in wanted}  # the last on the chain
    # each group's results: by its members in map order, each member's in map order
    results: dict[str, list[Node]] = {}
    if with_results:
        for n in nodes.values():
            mid = n.mid
            if mid is not None and mid in with_results and mid in last_on:
                got = results_by_parent.get(n.uuid)
                if got is not None:
                    results.setdefault(mid, []).extend(got)
    # (a line is in one group at most: an assistant line by its message.id, a result by its
    # parent's, so no line is taken twice)
    inserts: dict[int, list[str]] = {}
    taken = 0
    for mid, i in last_on.items():
        sib = sibs.get(mid, [])
        res = results.get(mid, [])
        if len(sib) > 1:
            sib.sort(key=_ts_of)
        if len(res) > 1:
            res.sort(key=_ts_of)
        taken += len(sib) + len(res)
        inserts[i] = [n.uuid for n in sib] + [n.uuid for n in res]
    if not taken:
        return chain, 0
    out: list[str] = []
    start = 0
    for i in sorted(inserts):
        out += chain[start : i + 1]
        out += inserts[i]
        start = i + 1
    out += chain[start:]
    return out, taken


def _ts_of(n: Node) -> str:
    return n.ts


def roots(g: Graph) -> dict[str, str]:
    """Each node's root (the top of its parentUuid walk), memoised: O(n)."""
    if g._roots is not None:
        return g._roots
    nodes = g.nodes
    root: dict[str, str] = {}
    for n in nodes.values():
        if n.uuid in root:
            continue
        path: list[str] = []
        seen: set[str] = set()
        u: str | None = n.uuid
        top = n.uuid
        while u is not None and u in nodes:
            if u in root:
                top = root[u]
                break
            if u in seen:
                top = u
                break
            seen.add(u)
            path.append(u)
            top = u
            u = nodes[u].parent
        for p in path:
            root[p] = top
    g._roots = root
    return root
