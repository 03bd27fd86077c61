"""The Claude Code read-back's shortcuts held to the long ways they stand for: the written
file's graph made from the graph read and the lines written anew (readback._written_graph)
gives the chain the loader finds in the written bytes, and the written walk taken along the
walk read (readback._Walked) is `chain.walk` of the written graph, from any leaf, and the
parallel lines it recovers from the chain read (`_Walked.recover`) are those
`chain.recover_lines` finds in the written graph. And a writer that links a record wrongly
is caught by the narrowed read-back as by the whole."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from repair.formats import load_bytes
from repair.formats.claude_code import readback as cc_readback
from repair.formats.claude_code import write
from repair.formats.claude_code.chain import (
    MESSAGE_TYPES,
    build_graph,
    candidates,
    newest,
    recover_lines,
    walk,
)
from repair.formats.probe import probe_bytes
from repair.workbench import Workbench
from tests.formats.test_readback_narrow import (
    CC_GENERATED,
    _cc_outcome,
    _outcome,
    cc_generated_fixed,
)


def _planned(wb: Workbench):
    """The writer's plan of the session's export, its bytes and the written graph made
    from the graph read (None: the narrowed read-back does not take this write)."""
    session = wb.session
    data = session.export().data
    w = write.last_write(session, data)
    write.forget_write()
    if w is None:
        return None
    got = cc_readback._written_graph(w, w.order())
    return (w, data, got) if got is not None else None


def _long_chain(data: bytes) -> list[int] | None:
    """The chain of the written bytes as the loader finds it, by written line: the whole
    file's graph built from its lines."""
    g = build_graph(probe_bytes(data, path="/tmp/written.jsonl").lines)
    return cc_readback._chain(g)


@CC_GENERATED
@given(case=st.integers(0, 2**32 - 1))
def test_the_written_graph_from_the_graph_read_gives_the_chain_of_the_written_bytes(case):
    wb = cc_generated_fixed(case)
    got = _planned(wb)
    if got is None:
        return
    w, data, (g2, _, coords, where) = got
    st = wb.session.state
    long = _long_chain(data)
    mine = cc_readback._chain(g2)
    walked = cc_readback._chain(g2, cc_readback._Walked(st.walk.at, w, got[2][1], w.order()))
    assert walked == mine
    assert (None if mine is None else [where[coords[c]] for c in mine]) == long
    # map order is written order (the leaf's ties, the recovery's order)
    written = [where[coords[i]] for i in g2.index.values()]
    assert [where[coords[g2.index[u]]] for u in sorted(g2.index, key=g2.place)] == sorted(written)
    assert [where[coords[i]] for i in g2.in_map_order(g2.index.values())] == sorted(written)


@CC_GENERATED
@given(case=st.integers(0, 2**32 - 1), leaves=st.randoms(use_true_random=False))
def test_the_walk_along_the_walk_read_is_the_walk_of_the_written_graph(case, leaves):
    """From every leaf candidate (and from random nodes) of the written graph."""
    wb = cc_generated_fixed(case)
    got = _planned(wb)
    if got is None:
        return
    w, _, (g2, fresh, _, _) = got
    walked = cc_readback._Walked(wb.session.state.walk.at, w, fresh, w.order())
    starts = candidates(g2) + leaves.sample(sorted(g2.index), min(20, len(g2.index)))
    for u in starts:
        long = walk(g2, u)
        want = None if long.stop is not None or long.bridges else long.at
        assert walked.walk(g2, u) == want, u


def _walked(wb: Workbench, w, fresh) -> cc_readback._Walked:
    view = wb.session.state.view
    return cc_readback._Walked(wb.session.state.walk.at, w, fresh, w.order(), w.chains[id(view)])


@CC_GENERATED
@given(case=st.integers(0, 2**32 - 1), leaves=st.randoms(use_true_random=False))
def test_the_lines_recovered_from_the_chain_read_are_those_of_the_written_graph(case, leaves):
    """The written chain's walk, and walks from random leaf candidates of the written
    graph: the recovery derived from the chain read is the recovery over every node."""
    wb = cc_generated_fixed(case)
    got = _planned(wb)
    if got is None:
        return
    w, _, (g2, fresh, _, _) = got
    walked = _walked(wb, w, fresh)
    cands = candidates(g2)
    if not cands:
        return
    starts = [newest(g2, cands), *leaves.sample(cands, min(10, len(cands)))]
    for u in starts:
        at = walked.walk(g2, u)
        if at is not None:
            assert walked.recover(g2, at) == recover_lines(g2, at)[0], u


def test_the_written_graph_of_a_large_fix_is_made_and_walked_along_the_walk_read():
    """A generated session fixed whole: the derived chain is the chain of the bytes, and
    the written walk takes slices of the walk read (most of it is copied)."""
    from bench.gen import gen_claude_code

    data, _ = gen_claude_code(3000, 7)
    wb = Workbench(load_bytes(data, "/tmp/input.jsonl"))
    assert wb.apply_all() is not None
    w, written, (g2, fresh, coords, where) = _planned(wb)
    walked = _walked(wb, w, fresh)
    on = cc_readback._chain(g2, walked)
    assert on is not None
    assert [where[coords[c]] for c in on] == _long_chain(written)
    assert len(walked.cuts) < len(walked.at) // 10
    # the recovery taken from the chain read (not looked for again over every node)
    at = walked.walk(g2, newest(g2, candidates(g2)))
    assert walked._recovered(g2, at) == recover_lines(g2, at)[0]
    kind = g2.kind
    assert len(on) == sum(1 for i in g2.index.values() if kind[i] in MESSAGE_TYPES)


def test_a_claude_code_writer_that_links_a_record_wrongly_is_caught_as_the_whole_read_back_catches_it(
    monkeypatch,
):
    """A writer bug: a re-linked record keeps the parentUuid it was read with. The written
    chain is not the repaired one; the narrowed read-back (which takes the links of the
    lines copied from the walk read) must see what the whole read-back sees."""
    from bench.gen import gen_claude_code

    data, _ = gen_claude_code(600, 1)
    wb = Workbench(load_bytes(data, "/tmp/input.jsonl"))
    assert wb.apply_all() is not None
    fine, took = _cc_outcome(wb, True)
    assert took and fine == _cc_outcome(wb, False)[0]

    def unlinked(raw, obj, parent):
        return raw

    monkeypatch.setattr(write, "_swap_parent", unlinked)
    broken = _outcome(wb, narrow=False)
    assert broken != fine  # the bug shows in the written file
    assert _outcome(wb, narrow=True) == broken
