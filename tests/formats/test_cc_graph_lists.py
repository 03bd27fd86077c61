"""Claude Code's graph as one list per field (chain.Graph) held to the graph of one object
per node it replaced: the same nodes in the same map order, the same leaf candidates, newest
leaf, walk (its gaps crossed by the timestamp fallback, its stops), parallel-result
recovery and roots, on random transcripts with duplicate uuids, progress records, a
compaction's preserved segment, sidechains, timestamp ties and unreadable lines."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from repair.formats.claude_code import chain
from repair.formats.probe import probe_bytes

# ---------------------------------------------------------------- the graph as it was


@dataclass
class _Node:
    uuid: str
    idx: int
    type: str
    parent: str | None
    sidechain: bool
    ts: str
    mid: str | None = None
    results: bool = False


@dataclass
class _Graph:
    nodes: dict[str, _Node]
    shadowed: list[int] = field(default_factory=list)
    bridged: int = 0
    pruned: dict[str, int] = field(default_factory=dict)
    odd: list[int] = field(default_factory=list)

    def has_child(self) -> set[str]:
        return {n.parent for n in self.nodes.values() if n.parent is not None}


def _old_graph(objs: list[Any]) -> _Graph:
    """chain.build_graph as it was (one `Node` per uuid, updated in place by a duplicate)."""
    nodes: dict[str, _Node] = {}
    anc: dict[str, str | None] = {}
    g = _Graph(nodes)
    boundaries = []
    for i, obj in enumerate(objs):
        if type(obj) is not dict:
            g.odd.append(i)
            continue
        t, u = obj.get("type"), obj.get("uuid")
        if type(t) is not str or type(u) is not str:
            if "uuid" in obj or t in chain.MESSAGE_TYPES:
                g.odd.append(i)
            continue
        if t not in chain.NODE_TYPES and t != chain.PROGRESS:
            continue
        p, side = obj.get("parentUuid"), obj.get("isSidechain")
        if t != chain.PROGRESS and chain._odd_link(obj, p) is not None:
            g.odd.append(i)
            continue
        p = p if type(p) is str else None
        if t == chain.PROGRESS:
            anc[u] = anc[p] if p in anc else p
            continue
        if p is not None and p in anc:
            p = anc[p]
            g.bridged += 1
        ts = obj.get("timestamp")
        msg = obj.get("message")
        mid, res = None, False
        if type(msg) is dict and t == "assistant":
            mid = msg.get("id") if type(msg.get("id")) is str and msg.get("id") else None
        elif type(msg) is dict and t == "user" and type(msg.get("content")) is list:
            res = any(type(b) is dict and b.get("type") == "tool_result" for b in msg["content"])
        node = _Node(u, i, t, p, side is True, ts if type(ts) is str else "", mid, res)
        if u in nodes:
            g.shadowed.append(nodes[u].idx)
            old = nodes[u]
            node.uuid = old.uuid
        nodes[u] = node
        if t == "system" and obj.get("subtype") == "compact_boundary":
            boundaries.append(i)
    if boundaries:
        seg = (objs[boundaries[-1]].get("compactMetadata") or {}).get("preservedSegment")
        ends = [seg.get(k) for k in ("headUuid", "anchorUuid", "tailUuid")] if seg else []
        if ends and all(isinstance(x, str) and x in nodes for x in ends):
            head, anchor, tail = ends
            keep: set[str] = set()
            x: str | None = tail
            while x is not None and x in nodes and x not in keep:
                keep.add(x)
                if x == head:
                    break
                x = nodes[x].parent
            if head in keep:
                nodes[head].parent = anchor
                for n in nodes.values():
                    if n.parent == anchor and n.uuid != head:
                        n.parent = tail
                for n in list(nodes.values()):
                    if n.idx < boundaries[-1] and n.uuid not in keep:
                        g.pruned[n.uuid] = n.idx
                        del nodes[n.uuid]
    return g


def _old_candidates(g: _Graph) -> list[str]:
    found: dict[str, None] = {}
    has_child = g.has_child()
    for n in g.nodes.values():
        if n.uuid in has_child:
            continue
        cur: _Node | None = n
        path: list[str] = []
        while cur is not None and cur.type not in chain.MESSAGE_TYPES and cur.uuid not in path:
            path.append(cur.uuid)
            cur = g.nodes.get(cur.parent) if cur.parent is not None else None
        if cur is not None and cur.type in chain.MESSAGE_TYPES:
            found[cur.uuid] = None
    return list(found)


def _old_newest(g: _Graph, uuids: list[str]) -> str | None:
    order = list(g.nodes)
    best, best_ms = None, None
    for u in sorted(uuids, key=order.index):
        ms = chain.ts_ms(g.nodes[u].ts)
        if best is None or (ms is not None and (best_ms is None or ms > best_ms)):
            best, best_ms = u, ms
    return best


def _old_fallback(g: _Graph, uuid: str, seen: set[str]) -> str | None:
    node = g.nodes[uuid]
    t = chain.ts_ms(node.ts)
    best, best_d = None, None
    for n in g.nodes.values() if t is not None else ():
        m = chain.ts_ms(n.ts)
        if n.uuid in seen or n.uuid == uuid or n.sidechain != node.sidechain or m is None:
            continue
        if 0 <= t - m <= chain.FALLBACK_MS and (best_d is None or t - m < best_d):
            best, best_d = n.uuid, t - m
    return best


def _old_walk(g: _Graph, leaf: str) -> tuple[Any, ...]:
    out: list[str] = []
    seen: set[str] = set()
    bridges = []
    u: str | None = leaf
    stop = None
    while u is not None:
        if u not in g.nodes or u in seen:
            child = out[-1] if out else None
            to = _old_fallback(g, child, seen) if child is not None else None
            if child is None or to is None:
                stop = ("missing" if u not in g.nodes else "cycle", u, child)
                break
            bridges.append((child, u, to))
            u = to
        seen.add(u)
        out.append(u)
        u = g.nodes[u].parent
    return out[::-1], stop, bridges


def _old_recover(g: _Graph, chain_: list[str]) -> tuple[list[str], int]:
    nodes, on = g.nodes, set(chain_)
    sibs: dict[str, list[_Node]] = {}
    results: dict[str, list[_Node]] = {}
    for n in nodes.values():
        if n.uuid in on:
            continue
        if n.type == "assistant" and n.mid is not None:
            sibs.setdefault(n.mid, []).append(n)
    mids = [nodes[u].mid for u in chain_]
    last_on = {m: i for i, m in enumerate(mids) if m is not None}
    for member in nodes.values():  # members in map order, each member's results in map order
        if member.mid is None or member.mid not in last_on:
            continue
        for n in nodes.values():
            if n.uuid not in on and n.type == "user" and n.results and n.parent == member.uuid:
                results.setdefault(member.mid, []).append(n)
    out, taken = list(chain_), 0
    for mid, i in sorted(last_on.items(), key=lambda kv: -kv[1]):
        add = sorted(sibs.get(mid, []), key=lambda n: n.ts)
        add += sorted(results.get(mid, []), key=lambda n: n.ts)
        out[i + 1 : i + 1] = [n.uuid for n in add]
        taken += len(add)
    return (out, taken) if taken else (chain_, 0)


def _old_roots(g: _Graph) -> dict[str, str]:
    root: dict[str, str] = {}
    for n in g.nodes.values():
        path: list[str] = []
        x: str | None = n.uuid
        top = n.uuid
        while x is not None and x in g.nodes and x not in root:
            if x in path:  # a loop: its root is where this walk met itself
                top = x
                break
            path.append(x)
            top = x
            x = g.nodes[x].parent
        else:
            if x is not None and x in root:
                top = root[x]
        for p in path:
            root[p] = top
    return root


# ---------------------------------------------------------------- random transcripts

_UUIDS = [f"u{k}" for k in range(8)]
_STAMPS = ["", "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:02.000Z", "2026-01-01T00:00:09Z"]
_STAMPS += ["2026-01-01T00:00:02.000Z", "not a date", "2026-01-01T01:00:02+01:00"]


@st.composite
def _transcript(draw: Any) -> list[Any]:
    out: list[Any] = []
    for _ in range(draw(st.integers(1, 24))):
        kind = draw(st.sampled_from(["user", "assistant", "assistant", "progress", "system"]))
        if draw(st.integers(0, 30)) == 0:
            out.append(draw(st.sampled_from(["not json", [1], {"type": "summary"}])))
            continue
        rec: dict[str, Any] = {"type": kind, "uuid": draw(st.sampled_from(_UUIDS))}
        rec["parentUuid"] = draw(st.sampled_from([None, "gone", *_UUIDS]))
        side = draw(st.sampled_from([None, False, True, False]))
        if side is not None:
            rec["isSidechain"] = side
        ts = draw(st.sampled_from(_STAMPS))
        if ts:
            rec["timestamp"] = ts
        if kind == "assistant":
            rec["message"] = {"id": draw(st.sampled_from(["", "m1", "m2", "m3"])), "content": []}
        elif kind == "user":
            results = draw(st.booleans())
            rec["message"] = {"content": [{"type": "tool_result" if results else "text"}]}
        elif kind == "system" and draw(st.integers(0, 3)) == 0:
            rec["subtype"] = "compact_boundary"
            ends = draw(st.lists(st.sampled_from(_UUIDS), min_size=3, max_size=3))
            rec["compactMetadata"] = {"preservedSegment": dict(zip(_SEG, ends, strict=True))}
        out.append(rec)
    return out


_SEG = ("headUuid", "anchorUuid", "tailUuid")


def _lines(objs: list[Any]) -> list[Any]:
    data = b"\n".join(o.encode() if type(o) is str else json.dumps(o).encode() for o in objs)
    return probe_bytes(data + b"\n", path="t.jsonl", jsonl=True).lines


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(objs=_transcript())
def test_the_graph_of_lists_is_the_graph_of_nodes(objs):
    lines = _lines(objs)
    if len(lines) != len(objs):
        return
    g, old = chain.build_graph(lines), _old_graph(objs)
    got = [
        (n.uuid, n.idx, n.type, n.parent, n.sidechain, n.ts, n.mid, n.results)
        for n in g.nodes.values()
    ]
    assert got == [tuple(vars(n).values()) for n in old.nodes.values()]
    assert [n.pos for n in g.nodes.values()] == list(range(len(old.nodes)))
    assert (g.shadowed, g.bridged, g.pruned) == (old.shadowed, old.bridged, old.pruned)
    assert [i for i, _ in g.odd] == old.odd
    assert g.has_child == old.has_child()
    cands = chain.candidates(g)
    assert cands == _old_candidates(old)
    assert chain.roots(g) == _old_roots(old)
    for leaf in [chain.newest(g, cands), *cands]:
        if leaf is None:
            continue
        assert chain.newest(g, cands) == _old_newest(old, cands)
        w = chain.walk(g, leaf)
        want_chain, stop, bridges = _old_walk(old, leaf)
        assert w.chain == want_chain and w.at == [g.index[u] for u in w.chain]
        assert (w.stop, w.stop_uuid, w.stop_at) == (stop or (None, None, None))
        assert [(b.uuid, b.missing, b.to) for b in w.bridges] == bridges
        assert chain.recover_parallel(g, w.chain) == _old_recover(old, w.chain)
        # the graph of its node objects (the read-back's) walks and recovers the same
        again = chain.Graph.of_nodes(g.nodes.values())
        assert chain.walk(again, leaf).chain == w.chain
        assert chain.recover_parallel(again, w.chain) == chain.recover_parallel(g, w.chain)
