"""The Claude Code export's shortcuts held to the long ways they stand for: the read-back's
stretches (readback._stretches), the resume check of a conversation that holds the very
messages read but a few (write._same_but_few), and the writer's plan of the turns a fix
touched (turns.touched_turns) to its plan of every turn."""

from __future__ import annotations

import dataclasses
import functools
import random

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repair.errors import ExportRefused
from repair.formats import load_bytes
from repair.formats.claude_code.chain import Node
from repair.formats.claude_code.readback import _stretches
from repair.formats.claude_code.turns import _NOT, mid_reach, reach_at
from repair.formats.claude_code.write import _same_but_few, _same_conversation, _signature
from tests.formats.test_readback_narrow import _steps
from tests.fuzz_support import mutated_session, over_mutated_seeds, seeds_that_load


def _stretches_long_way(seq, starters, nodes):
    """readback._stretches as it was written first: one pass over the records."""
    last, mids = {}, []
    for i, n in enumerate(nodes):
        m = n.mid if n.type == "assistant" else _NOT
        mids.append(m)
        if m is not _NOT:
            last[m] = i
    out, start, reach = [], 0, -1
    for i, k in enumerate(seq):
        if i > start and reach < i and type(k) is int and k in starters:
            out.append(tuple(seq[start:i]))
            start = i
        m = mids[i]
        if m is not _NOT:
            reach = max(reach, last[m])
    if seq:
        out.append(tuple(seq[start:]))
    return out


_record = st.tuples(
    st.sampled_from(["user", "assistant", "assistant"]),
    st.one_of(st.none(), st.sampled_from(["a", "b", "c", "d"])),
    st.booleans(),  # a starter
    st.booleans(),  # a line read (an int key) or one written anew
)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(records=st.lists(_record, max_size=40))
def test_stretches_are_cut_where_the_long_way_cuts_them(records):
    seq = [k if read else object() for k, (_, _, _, read) in enumerate(records)]
    nodes = [
        Node(f"u{k}", k, k, t, None, False, "", mid if t == "assistant" else None)
        for k, (t, mid, _, _) in enumerate(records)
    ]
    starters = {k for k, (_, _, s, read) in enumerate(records) if s and read}
    mids = [n.mid if n.type == "assistant" else _NOT for n in nodes]
    assert _stretches(seq, starters, mids) == _stretches_long_way(seq, starters, nodes)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(records=st.lists(_record, max_size=40), cuts=st.sets(st.integers(1, 40)))
def test_the_reach_at_the_edges_is_the_reach_of_the_whole_chain(records, cuts):
    """`touched_turns` asks whether a message.id reaches across each stretch's edge only
    (`reach_at`): the same answers as the reach of every place (`mid_reach`)."""
    mids = [mid if t == "assistant" else _NOT for t, mid, _, _ in records]
    places = sorted(c for c in cuts if c <= len(mids))
    whole = mid_reach(mids)
    assert reach_at(mids, places) == [whole[c - 1] for c in places]


def _changed(rng: random.Random, m):
    roll = rng.random()
    if roll < 0.15:
        return dataclasses.replace(m, role="user" if m.role == "assistant" else "assistant")
    if roll < 0.25:
        return dataclasses.replace(m, hidden=not m.hidden)
    blocks = list(m.blocks)
    if roll < 0.45 and blocks:
        del blocks[rng.randrange(len(blocks))]
    elif roll < 0.6 and blocks:
        b = blocks[rng.randrange(len(blocks))]
        data = {"type": "text", "text": b.data} if isinstance(b.data, str) else b.data
        blocks[blocks.index(b)] = dataclasses.replace(b, data=data)
    elif roll < 0.8:
        rng.shuffle(blocks)
    return m.with_blocks(blocks)  # the same blocks, or others


def test_the_resume_check_of_a_few_changed_messages_is_the_whole_ones():
    """A conversation that holds the messages read but a few (replaced by messages with
    other blocks, another role, hidden): the check that looks only at the merged messages
    holding those refuses exactly what the signatures of the whole refuse."""
    from bench.gen import gen_claude_code

    narrowed = 0
    for seed in range(40):
        rng = random.Random(seed)
        data, _ = gen_claude_code(rng.randrange(60, 300), seed)
        want = list(load_bytes(data, "/tmp/input.jsonl").messages)
        for _ in range(rng.randrange(0, 30)):  # runs of one role, merged into one
            k = rng.randrange(1, len(want))
            want[k] = dataclasses.replace(want[k], role=want[k - 1].role)
        got = list(want)
        for _ in range(rng.randrange(1, 6)):
            k = rng.randrange(len(got))
            got[k] = _changed(rng, got[k])
        same = _signature(want) == _signature(got)
        if _same_but_few(want, got):
            narrowed += 1
            assert same, seed
        try:
            _same_conversation("s.jsonl", want, got)
            refused = False
        except ExportRefused:
            refused = True
        assert refused == (not same), seed
    assert narrowed > 5


def test_results_reordered_after_text_in_one_merged_message_are_refused():
    """Two user messages merge into one on reload: results the second one holds after the
    first one's text keep their order (only results that open a message compare as a
    set), so the resume check of a few messages looks at the whole merged message."""
    from repair.model import Block, Message

    def result(k: int) -> Block:
        return Block("tool_result", {"type": "tool_result", "tool_use_id": f"t{k}"}, f"t{k}")

    calls = Message("assistant", tuple(Block("tool_use", {"id": f"t{k}"}, f"t{k}") for k in (1, 2)))
    text = Message("user", (Block("text", "see below"),))
    results = Message("user", (result(1), result(2)))
    want = [Message("user", (Block("text", "go"),)), calls, text, results] * 3
    got = list(want)
    got[-1] = results.with_blocks((result(2), result(1)))
    assert _signature(want) != _signature(got)
    assert not _same_but_few(want, got)
    got[-1] = results.with_blocks((result(1), result(2)))  # other blocks, the same data
    assert _same_but_few(want, got)
    _same_conversation("s.jsonl", want, got)


# The writer's plan of the turns a fix touched (turns.touched_turns), held to its plan of
# the whole conversation: the same bytes, report, lines and links.


def _plan_of(session, narrow: bool):
    from repair.formats.claude_code.write import _planned, views_of
    from repair.jsonio import compact

    w = _planned(views_of(session), narrow=narrow)
    keys = [k if isinstance(k, int) else compact(k.obj) for k in w.order()]
    starts = [v if v is None or isinstance(v, int) else compact(v.obj) for v in w.starts.values()]
    written = (w.render(), w.dropped_records(), keys, starts, w.deleted, w.relink, w.rewrite)
    return written, all(w.narrowed)


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(case=st.integers(0, 2**32 - 1))
def test_the_plan_of_the_touched_turns_writes_what_the_whole_plan_writes(case):
    """Generated sessions (parallel results in completion order, thinking records, prompts,
    1% of faults), random fixes, actions and undos: the narrowed plan writes the very bytes,
    report, line order and re-links of the plan of every turn."""
    from bench.gen import gen_claude_code
    from repair.workbench import Workbench

    rng = random.Random(case)
    data, _ = gen_claude_code(rng.randrange(40, 500), rng.randrange(50))
    wb = Workbench(load_bytes(data, "/tmp/input.jsonl"))
    _steps(wb, rng, rng.randrange(1, 8))
    (narrow, _), (whole, _) = _plan_of(wb.session, True), _plan_of(wb.session, False)
    assert narrow == whole


def test_a_fix_of_a_large_generated_session_is_planned_in_its_touched_turns():
    """Apply-all on generated sessions of 2000 messages is planned turn by turn (not the
    whole conversation), and writes what the whole plan writes."""
    from bench.gen import gen_claude_code
    from repair.workbench import Workbench

    for seed in range(3):
        data, _ = gen_claude_code(2000, seed)
        wb = Workbench(load_bytes(data, "/tmp/input.jsonl"))
        assert wb.apply_all() is not None
        narrow, took = _plan_of(wb.session, True)
        assert took, seed
        assert narrow == _plan_of(wb.session, False)[0]


_CC_SEEDS = seeds_that_load(lambda seed, session: session.format == "claude-code")


@pytest.mark.skipif(not _CC_SEEDS, reason="no Claude Code samples")
@over_mutated_seeds(_CC_SEEDS, 120, mutations=(0, 3), steps=(1, 6))
def test_the_plan_of_the_touched_turns_of_samples_is_the_whole_plan(
    which, rng_seed, mutations, steps
):
    """The Claude Code samples and corpus files, mutated, fixed at random: both plans write
    the same (or both refuse)."""
    from repair.workbench import Workbench

    rng = random.Random(rng_seed)
    session = mutated_session(_CC_SEEDS[which], rng, mutations, "/tmp/input.jsonl")
    if session is None or session.format != "claude-code":
        return
    wb = Workbench(session)
    _steps(wb, rng, steps)

    def plan(narrow: bool):
        try:
            return _plan_of(wb.session, narrow)[0]
        except ExportRefused as exc:
            return ("refused", str(exc))

    assert plan(True) == plan(False)


def _not_in_long_way(a, b):
    held = {id(m) for m in b}
    return [m for m in a if id(m) not in held]


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(
    n=st.integers(0, 30),
    edits=st.lists(
        st.tuples(st.sampled_from(["drop", "new", "replace", "twice", "swap"]), st.integers(0, 40)),
        max_size=8,
    ),
)
def test_the_messages_of_the_gaps_are_those_not_in_the_other_list(n, edits):
    """`turns.changed` (the number check's messages that changed, read from the plan's
    gaps) is the messages of each list that are not in the other, found by id over both
    lists; where the gaps cannot say it (a message moved, or held twice), `gaps` is None."""
    from repair.formats.claude_code.turns import changed, gaps

    old = [object() for _ in range(n)]
    new = list(old)
    for op, k in edits:
        at = k % (len(new) + 1)
        if op == "new":
            new.insert(at, object())
        elif new and op == "drop":
            del new[at % len(new)]
        elif new and op == "replace":
            new[at % len(new)] = object()
        elif new and op == "twice":
            new.insert(at, new[at % len(new)])
        elif len(new) > 1 and op == "swap":
            i = at % (len(new) - 1)
            new[i], new[i + 1] = new[i + 1], new[i]
    got = gaps(old, new)
    long_way = _not_in_long_way(new, old) + _not_in_long_way(old, new)
    if got is None:
        at = {id(m): k for k, m in enumerate(old)}
        places = [at[id(m)] for m in new if id(m) in at]
        assert len(set(map(id, new))) < len(new) or places != sorted(places)
        return
    mine = changed(old, new, got)
    assert sorted(map(id, mine)) == sorted(map(id, long_way))


def test_the_number_check_reads_the_records_the_long_way_finds():
    """A fix of a generated session: the records of the messages that changed, read from
    the plan's gaps, are those found by comparing the two message lists whole."""
    from bench.gen import gen_claude_code
    from repair.formats.claude_code import write
    from repair.workbench import Workbench

    for seed in range(3):
        data, _ = gen_claude_code(600, seed)
        wb = Workbench(load_bytes(data, "/tmp/input.jsonl"))
        assert wb.apply_all() is not None
        w = write._planned(write.views_of(wb.session))
        write.number_lines(wb.session, w)
        view, msgs = write.views_of(wb.session)[0]
        assert w.gaps[id(view)][1] is not None, seed  # (read from the gaps)
        want = {
            b.origin
            for m in _not_in_long_way(msgs, view.messages) + _not_in_long_way(view.messages, msgs)
            for b in m.blocks
            if type(b.origin) is int
        }
        assert want and w.origins == want, seed


def _first_long_way(view, m):
    """`turns._first` as it was written first: each line's chain place in a map of its own."""
    chain_idx = [view.file.graph.index[u] for u in view.chain]
    at = dict(zip(chain_idx, range(len(chain_idx)), strict=True))
    places = [at.get(r) for r in view.msg_records(m)]
    if not places or None in places or places[0] != min(places):
        return None
    return places[0]


def _distinct_long_way(view):
    chain_idx = [view.file.graph.index[u] for u in view.chain]
    return len(set(chain_idx)) == len(chain_idx)


def _touched_both_ways(view, msgs, monkeypatch):
    from repair.formats.claude_code import turns

    g = view.file.graph
    chain_idx = [g.index[u] for u in view.chain]
    apart = turns.gaps(view.messages, msgs)
    got = turns.touched_turns(view, msgs, chain_idx, apart)
    with monkeypatch.context() as patch:
        patch.setattr(turns, "_first", _first_long_way)
        patch.setattr(turns, "_distinct", _distinct_long_way)
        want = turns.touched_turns(view, msgs, chain_idx, apart)
    return got, want


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(case=st.integers(0, 2**32 - 1))
def test_the_touched_turns_found_from_the_chain_places_are_the_long_ways(case):
    """`touched_turns` reads each record's chain place from the view's map of uuids (made
    once, for stamping too), not from a map of the chain's lines made for it: the same
    stretches (or None) on generated sessions after random fixes, actions and undos, and
    None for a chain that holds a node twice."""
    from bench.gen import gen_claude_code
    from repair.formats.claude_code.write import views_of
    from repair.workbench import Workbench

    rng = random.Random(case)
    data, _ = gen_claude_code(rng.randrange(40, 400), rng.randrange(50))
    wb = Workbench(load_bytes(data, "/tmp/input.jsonl"))
    _steps(wb, rng, rng.randrange(1, 8))
    view, msgs = views_of(wb.session)[0]
    with pytest.MonkeyPatch.context() as monkeypatch:
        got, want = _touched_both_ways(view, msgs, monkeypatch)
        assert got == want
        if view.chain and rng.random() < 0.5:  # a node twice on the chain
            twice = dataclasses.replace(
                view,
                chain=[*view.chain, view.chain[rng.randrange(len(view.chain))]],
                lines=None,
                _chain_at=None,
            )
            got, want = _touched_both_ways(twice, msgs, monkeypatch)
            assert got == want


def _chain_place_long_way(view, uuid):
    """`View.chain_place` as a map of the chain's uuids (as it was before the lines)."""
    chain = view.chain
    return chain.index(uuid) if type(uuid) is str and uuid in chain else len(chain)


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(case=st.integers(0, 2**32 - 1))
def test_the_chain_lines_kept_from_the_load_are_the_chains_uuids_lines(case):
    """The view keeps the chain's lines the loader walked (the plan, the read-back and the
    chain places read them): each is the line its chain uuid names, and a uuid's chain
    place read from them is its first place in the chain, on generated sessions after
    random fixes (parallel results recovered among them) and with uuids off the chain."""
    from bench.gen import gen_claude_code

    rng = random.Random(case)
    data, _ = gen_claude_code(rng.randrange(40, 400), rng.randrange(50))
    session = load_bytes(data, "/tmp/input.jsonl")
    view = session.state.view
    g = view.file.graph
    assert view.lines is not None  # (kept, not made again)
    assert view.chain_lines() == [g.index[u] for u in view.chain]
    asked = [*rng.sample(view.chain, min(20, len(view.chain))), *rng.sample(list(g.index), 20)]
    for u in [*asked, "not a uuid", None, 3]:
        assert view.chain_place(u) == _chain_place_long_way(view, u), u


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(
    uuids=st.lists(st.sampled_from(["", "a", "b", "c", "d", "e"]), min_size=1, max_size=12),
    order=st.randoms(use_true_random=False),
    records=st.lists(st.integers(0, 11), max_size=4),
)
def test_a_records_chain_place_read_by_its_uuid_is_its_lines(uuids, order, records):
    """`turns._first` reads a record's chain place by its uuid: a line that a later line
    of the same uuid shadows (off the chain) has none, as in a map of the chain's lines."""
    from types import SimpleNamespace

    from repair.formats.claude_code.load import View
    from repair.formats.claude_code.turns import _first
    from repair.model import Message

    index = {u: i for i, u in enumerate(uuids) if u}
    chain = [u for u in index if order.random() < 0.7]
    order.shuffle(chain)
    graph = SimpleNamespace(uuid=uuids, index=index)
    view = View(SimpleNamespace(graph=graph), chain, [])  # type: ignore[arg-type]
    m = Message("user", (), origin=tuple(r % len(uuids) for r in records))
    assert _first(view, m) == _first_long_way(view, m)


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(
    n=st.integers(0, 30),
    stops=st.lists(
        st.tuples(
            st.integers(0, 29), st.lists(st.one_of(st.integers(0, 34), st.none()), max_size=3)
        ),
        max_size=6,
    ),
)
def test_the_written_places_read_from_the_ranges_are_a_map_of_every_key(n, stops):
    """`_Writer.places` (each key's written index from the ranges of lines the order
    writes in file order) is `dict(zip(keys, range(len(keys))))`: orders made as
    `_Writer._ordered` makes them, with lines and new records written between the ranges,
    some of them lines a range writes too (a key written twice: the map of them all)."""
    from repair.formats.claude_code.write import Places

    keys: list = []
    ranges = []
    done = 0
    for stop, emitted in sorted({s: e for s, e in stops if s < n}.items()):
        if done < stop:
            ranges.append((len(keys), done, stop))
            keys += range(done, stop)
        keys += [object() if e is None else e for e in emitted]
        done = stop + 1
    if done < n:
        ranges.append((len(keys), done, n))
        keys += range(done, n)
    want = dict(zip(keys, range(len(keys)), strict=True))
    got = Places(keys, ranges)
    assert got.twice == (len(want) != len(keys))
    if got.twice:
        return
    assert dict(got.items()) == want
    for k in [*range(-1, 36), object()]:
        assert (k in got) == (k in want)


def test_the_read_back_finds_each_key_where_the_order_writes_it():
    """A fix of generated sessions: the read-back's places of the written keys are where
    the writer's order writes them, found without a map of every line."""
    from bench.gen import gen_claude_code
    from repair.formats.claude_code import write
    from repair.workbench import Workbench

    for seed in range(3):
        data, _ = gen_claude_code(600, seed)
        wb = Workbench(load_bytes(data, "/tmp/input.jsonl"))
        assert wb.apply_all() is not None
        w = write._planned(write.views_of(wb.session))
        keys = w.order()
        got = w.places()
        assert isinstance(got, write.Places), seed
        assert dict(got.items()) == dict(zip(keys, range(len(keys)), strict=True)), seed


_stamp = st.one_of(
    st.builds(
        "2026-{:02d}-{:02d}T10:{:02d}:{:02d}.{:03d}Z".format,
        st.integers(1, 13),  # (13: a month no clock has)
        st.integers(1, 2),
        st.integers(0, 1),
        st.integers(0, 2),
        st.integers(0, 2),
    ),
    st.sampled_from(
        [
            "",
            "2026-01-01T10:00:00+00:00",
            "2026-01-01T10:00:00.5Z",
            "now",
            "٢٠٢٦-01-01T10:00:00.000Z",
        ]
    ),
)


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(stamps=st.lists(_stamp, min_size=1, max_size=8), order=st.randoms(use_true_random=False))
def test_the_newest_leaf_told_by_its_timestamp_string_is_chain_newest(stamps, order):
    """The newest leaf told by the greatest string where every stamp is written alike
    (`chain.newest`) is the one found by reading every time (`newest_by_time`)."""
    from repair.formats.claude_code.chain import Graph, newest, newest_by_time

    g = Graph.of_nodes(Node(f"u{k}", k, k, "user", None, False, t) for k, t in enumerate(stamps))
    cands = list(g.index)
    order.shuffle(cands)
    cands.sort(key=g.place)  # (candidates come in map order)
    assert newest(g, cands) == newest_by_time(g, cands)


def _type_long_way(w, e):
    """`_Writer._type` as it was: the type of the `Node` made for the line, where it holds one."""
    nd = w._nodes().get(e)
    return nd.type if nd is not None else w.f.lines[e].obj.get("type")


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(case=st.integers(0, 2**32 - 1), keep=st.booleans())
def test_the_prompt_looked_back_for_by_the_light_passs_kinds_is_the_long_ways(case, keep):
    """A result record the writer creates takes the promptId of the last user record
    before it: the look back reads a node's type from the graph's kinds (no `Node` per
    record passed) and any other line's from its record, and finds what `_type` finds, on
    generated sessions with user records written twice (the earlier line no node), lines
    that are no node (user records without a uuid among them), and new records in the sequence; with and without `Graph.prompts`."""
    from bench.gen import gen_claude_code
    from repair.formats.claude_code.write import _Writer

    rng = random.Random(case)
    data, _ = gen_claude_code(rng.randrange(40, 300), rng.randrange(50))
    lines = data.split(b"\n")
    users = [ln for ln in lines if b'"type":"user"' in ln or b'"type": "user"' in ln]
    for ln in rng.sample(users, min(5, len(users))):  # a later line of the same uuid
        lines.append(ln.replace(b'"promptId"', b'"promptIdX"') if rng.random() < 0.5 else ln)
    for ln in rng.sample(users, min(2, len(users))):  # a user record that is no node
        rec = orjson.loads(ln)
        rec.pop("uuid", None)
        lines.insert(rng.randrange(1, len(lines)), orjson.dumps(rec))
    session = load_bytes(b"\n".join(x for x in lines if x), "/tmp/input.jsonl")
    f = session.state.file
    if not keep:
        f.graph.prompts = None
    picked = [e for e in range(len(f.lines)) if type(f.lines[e].obj) is dict]
    seq = [e if rng.random() < 0.9 else object() for e in rng.sample(picked, len(picked))]
    fast, slow = _Writer(f), _Writer(f)
    assert [fast._type(e) for e in picked] == [_type_long_way(slow, e) for e in picked]
    slow._type = functools.partial(_type_long_way, slow)  # the look back as it was
    seen_fast, seen_slow = [0, None], [0, None]
    for i in sorted(rng.sample(range(len(seq) + 1), min(30, len(seq) + 1))):
        got = fast._prompt_before(seq, i, seen_fast)
        assert got == slow._prompt_before(seq, i, seen_slow), i
        assert seen_fast == seen_slow
