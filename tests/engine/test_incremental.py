"""The analysis after a step made from the analysis before it (repair.incremental) is the
analysis of the whole session: the same findings (codes, places, texts, severities, keys),
numbers and pairing, after random applies, undos, redos and changed actions, on every
sample and corpus file, fuzzed copies of them and generated sessions."""

from __future__ import annotations

import json
import operator
import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bench.gen import gen_claude_code
from repair import clients, incremental, wire
from repair import plan as plan_module
from repair.analysis import Analysis, analyze
from repair.errors import InputError
from repair.formats import load_bytes, load_session
from repair.model import Session
from repair.moved import MovedPairing, apart, forward, forwarding, neighbours
from repair.pairing import LeanPairing, Pairing
from repair.plan import Choices, apply_fixes, make_plan, settle
from repair.workbench import Workbench
from tests import claude_code_records as cc
from tests.engine.engine_factory import pairing_facts, shape
from tests.engine.test_pairing_lean import _index_says
from tests.fuzz_support import mutated_session, over_mutated_seeds, seeds
from tests.paths import FIXTURES

SEEDS = seeds()


def facts(a: Analysis) -> dict:
    """Everything an analysis says, by value."""
    return {
        "lookups": lookups(a.pairing, len(a.numbers)),
        "findings": [(f.to_json(), f.position, f.key, f.severity) for f in a.findings],
        "numbers": a.numbers,
        "sent": a.sent,
        "target": a.target,
        **pairing_facts(a.pairing),
    }


def _place(x) -> tuple | None:
    return None if x is None else (x.mi, x.bi)


def lookups(p: Pairing, n: int) -> dict:
    """What the pairing answers one message at a time (a pairing moved by steps reads it
    through their shifts, its calls and results copied when first read), asked before
    anything reads it whole; then whether its calls and results link to each other, by
    identity, and to none outside it (a link to a call or result of the pairing it was
    moved from would name an old position)."""
    by_message = {
        mi: (
            [_place(u) for u in p.calls_in([mi])],
            [_place(u) for u in p.uses_by_message.get(mi, [])],
            mi in p.uses_by_message,
            [_place(r) for r in p.results_by_message.get(mi, [])],
            mi in p.results_by_message,
            p.next_live.get(mi),
            p.prev_live.get(mi),
        )
        for mi in range(n + 1)
    }
    uses, results = p.calls_in(range(n)), p.results_in(range(n))
    assert all(map(operator.is_, uses, p.uses)) and len(uses) == len(p.uses)
    assert all(map(operator.is_, results, p.results)) and len(results) == len(p.results)
    mine = {id(x) for x in (*uses, *results)}
    for u in uses:
        assert all(r.use is u for r in u.results)
        assert u.partner is None or u.partner.partner is u
        assert u.dup_of is None or id(u.dup_of) in mine
        assert all(id(r) in mine for r in u.results)
    for r in results:
        assert r.use is None or (id(r.use) in mine and any(x is r for x in r.use.results))
        assert r.partner is None or r.partner.partner is r
    return {"by_message": by_message, "tool_ids": p.tool_ids()}


class Counted:
    """How often the incremental analysis answered (and did not decline)."""

    def __init__(self, monkeypatch) -> None:
        self.answered = 0
        real = incremental.reanalyze

        def counting(*args):
            got = real(*args)
            self.answered += got is not None
            return got

        monkeypatch.setattr("repair.workbench.reanalyze", counting)


def _steps(wb: Workbench, rng: random.Random, n: int, check) -> list[str]:
    done = []
    for _ in range(n):
        roll = rng.random()
        if wb.done and roll < 0.15:
            wb.undo()
            done.append("undo")
        elif wb.undone and roll < 0.25:
            wb.redo()
            done.append("redo")
        else:
            choosable = [f for f in wb.plan.fixes if len(f.actions) > 1]
            if choosable and rng.random() < 0.3:
                fix = rng.choice(choosable)
                wb.cycle(fix)
                done.append(f"cycle {fix.code}")
            fixes = wb.plan.actionable
            if not fixes:
                break
            fix = rng.choice(fixes)
            if wb.apply(fix) is None:
                continue
            done.append(f"{fix.code} -> {fix.action}")
        check(wb, done)
    return done


def _shifting_steps(wb: Workbench, check) -> list[str]:
    """Apply the first fix that inserts or drops a message (positions after it move), undo
    it and redo it, checking each state; the steps done (none when no fix shifts)."""
    done: list[str] = []
    n = len(wb.session.messages)
    for fix in wb.plan.actionable:
        after, _ = apply_fixes(wb.session, [fix])
        if len(after.messages) == n:
            continue
        assert wb.apply(fix) is not None
        assert len(wb.session.messages) != n
        done.append(f"{fix.code} -> {fix.action} (shifts)")
        check(wb, done)
        wb.undo()
        done.append("undo")
        check(wb, done)
        wb.redo()
        done.append("redo")
        check(wb, done)
        break
    return done


def shifting_in_a_row(wb: Workbench, check, n: int) -> list[str]:
    """Apply up to `n` fixes in a row, each the first that inserts or drops a message,
    checking each state; the steps done."""
    done: list[str] = []
    for _ in range(n):
        count = len(wb.session.messages)
        fix = next(
            (
                f
                for f in wb.plan.actionable
                if len(apply_fixes(wb.session, [f])[0].messages) != count
            ),
            None,
        )
        if fix is None:
            break
        assert wb.apply(fix) is not None
        done.append(f"{fix.code} -> {fix.action} (shifts)")
        check(wb, done)
    return done


def all_undone_and_redone(wb: Workbench, check) -> list[str]:
    """Undo every step, then redo them all, checking each state; the steps done."""
    done: list[str] = []
    while wb.done:
        wb.undo()
        done.append("undo")
        check(wb, done)
    while wb.undone:
        wb.redo()
        done.append("redo")
        check(wb, done)
    return done


def _same_as_whole(wb: Workbench, done: list[str]) -> None:
    assert facts(wb.analysis) == facts(analyze(wb.session)), done
    _same_request(wb.analysis, wb.session)


def _said(req: wire.Request) -> list:
    """A request by value: each sent message at its positions now, what it leaves out."""
    return [
        [
            (sm.role, [(b.type, b.tool_id, b.name, b.data) for b in sm.blocks], ps)
            for sm, ps in zip(req.messages, req.positions(), strict=True)
        ],
        sorted((k, b.bid, why) for k, b, why in req.left_out),  # (in no order that counts)
        req.answered,
    ]


def _same_request(a: Analysis, session: Session) -> None:
    """The client's request the increment spliced (the sent messages after a stretch those
    before it, read at their moved positions) is the one the client sends for the whole
    session, and finds the same sent message at each position."""
    if a.request is None or a.request.counted is not None:  # (counted, not built: no messages)
        return
    whole = clients.get(session.target).send(session)
    assert _said(a.request) == _said(whole)
    first, expected = incremental._first_sent(a.request), incremental._first_sent(whole)
    assert [first.get(k) for k in range(len(session.messages) + 1)] == [
        expected.get(k) for k in range(len(session.messages) + 1)
    ]


@over_mutated_seeds(SEEDS, 120, mutations=(0, 2), steps=(1, 8))
def test_the_analysis_after_random_steps_is_the_whole_analysis(which, rng_seed, mutations, steps):
    seed = SEEDS[which]
    rng = random.Random(rng_seed)
    session = mutated_session(seed, rng, mutations)
    if session is None:
        return
    _steps(Workbench(session), rng, steps, _same_as_whole)


_IDS = ["t1", "t2", "t3", "t4"]
_block = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.sampled_from(["", " ", "ok"])),
    st.builds(
        lambda i, n: {"type": "tool_use", "id": i, "name": n, "input": {}},
        st.sampled_from([*_IDS, ""]),
        st.sampled_from(["read_file", "ls"]),
    ),
    st.builds(
        lambda i: {"type": "tool_result", "tool_use_id": i, "content": "out"},
        st.sampled_from([*_IDS, "", "x9"]),
    ),
    st.builds(
        lambda n: {"type": "text", "text": f"[{n} for 'a'] Result: ok"},
        st.sampled_from(["read_file", "ls"]),
    ),
)
_entry = st.builds(
    lambda role, content, ts, extra: {"role": role, "content": content, "ts": ts, **extra},
    st.sampled_from(["user", "assistant", "user", "assistant", "system"]),
    st.one_of(st.sampled_from(["", "text"]), st.lists(_block, max_size=4)),
    st.integers(1000, 9000),
    st.sampled_from(
        [{}, {}, {}, {"condenseParent": "c1"}, {"isSummary": True, "condenseId": "c1"}]
    ),
)
_TARGETS = ["anthropic", "bedrock", "openai-chat", "openai-responses", "gemini"]


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    doc=st.lists(_entry, min_size=1, max_size=12),
    fmt=st.sampled_from(["roo", "anthropic"]),
    target=st.sampled_from(_TARGETS),
    rng_seed=st.integers(0, 2**32 - 1),
)
def test_generated_sessions_after_random_steps(doc, fmt, target, rng_seed):
    """Small generated sessions (repeated and missing ids, id-less calls, text results,
    empty messages, condense tags, stamps out of order), under every provider target."""
    try:
        session = load_bytes(json.dumps(doc).encode(), "/tmp/input.json", format=fmt, target=target)
    except InputError:
        return
    _steps(Workbench(session), random.Random(rng_seed), 6, _same_as_whole)


# some messages without a stamp: the one compared with a message is the last stamped
_maybe_stamped = st.one_of(_entry, _entry.map(lambda e: {k: v for k, v in e.items() if k != "ts"}))

_LATE = [  # put a message stamped later before "c": "d" is stamped before it
    {"role": "user", "content": "a", "ts": 4000},
    {"role": "assistant", "content": "b", "ts": 4500},
    {"role": "user", "content": "c"},
    {"role": "assistant", "content": "d", "ts": 5000},
]


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    doc=st.lists(_maybe_stamped, min_size=1, max_size=12),
    extra=st.lists(_maybe_stamped, min_size=0, max_size=3),
    at=st.integers(0, 12),
    drop=st.integers(0, 3),
    fmt=st.sampled_from(["roo", "anthropic"]),
    target=st.sampled_from(_TARGETS),
)
@example(  # a message stamped later put before an unstamped one: the next stamped is late
    doc=_LATE,
    extra=[
        {"role": "user", "content": "x", "ts": 9000},
        {"role": "assistant", "content": "y", "ts": 9000},
    ],
    at=2,
    drop=0,
    fmt="roo",
    target="anthropic",
)
def test_messages_inserted_or_dropped_anywhere_are_followed(doc, extra, at, drop, fmt, target):
    """Any stretch of messages replaced by more or fewer (not only what a fix does: a
    message stamped later or of another role put before others, a final message dropped),
    every position after it moved: the increment equals the whole analysis."""
    _follow(doc, [(extra, at, drop)], fmt, target)


_U = {"type": "tool_use", "id": "t1", "name": "ls", "input": {}}
_far = [  # a call answered four turns later: the link crosses a stretch put between them
    {"role": "user", "content": "start", "ts": 1000},
    {"role": "assistant", "content": [_U], "ts": 1001},
    *(
        {"role": role, "content": text, "ts": 1002 + k}
        for k, (role, text) in enumerate([("user", "a"), ("assistant", "b")] * 3)
    ),
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a"}]},
    {"role": "assistant", "content": [{**_U, "id": "t3"}, {**_U, "id": "t3"}], "ts": 1009},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x9", "content": "c"}]},
]
_stretch = st.tuples(st.lists(_maybe_stamped, max_size=3), st.integers(0, 12), st.integers(0, 3))


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(
    doc=st.lists(_maybe_stamped, min_size=1, max_size=12),
    stretches=st.lists(_stretch, min_size=1, max_size=4),
    fmt=st.sampled_from(["roo", "anthropic"]),
    target=st.sampled_from(_TARGETS),
)
@example(
    doc=_far, stretches=[([], 4, 1), ([], 4, 1), ([], 8, 1)], fmt="anthropic", target="anthropic"
)
@example(
    doc=_far,
    stretches=[([{"role": "user", "content": "x"}], 5, 0), ([_far[2]], 4, 0), ([], 11, 1)],
    fmt="anthropic",
    target="anthropic",
)
def test_several_stretches_replaced_in_a_row_are_followed(doc, stretches, fmt, target):
    """Stretches replaced one after the other, each analysis made from the one before (a
    pairing moved by the shifts so far, moved again: its runs composed, the calls and
    results paired again since moved too, a link that crosses the new stretch paired
    again): each equals the whole analysis, and the first still answers as it did."""
    _follow(doc, stretches, fmt, target)


def _follow(doc: list, stretches: list, fmt: str, target: str) -> None:
    """Load `doc`, replace each (messages, at, how many) stretch in turn, following the
    analysis by the increment: each equals the whole analysis; the first is unchanged."""
    try:
        session = load_bytes(json.dumps(doc).encode(), "/tmp/input.json", format=fmt, target=target)
    except InputError:
        return
    before = analyze(session, whole=True)
    incremental.prepare(before)
    first, said = before, facts(before)
    for extra, at, drop in stretches:
        try:
            others = load_bytes(
                json.dumps(extra).encode(), "/tmp/x.json", format=fmt, target=target
            )
        except InputError:
            break
        msgs = session.messages
        at = min(at, len(msgs))
        new = msgs[:at] + others.messages + msgs[at + drop :]
        if len(new) == len(msgs):
            continue
        after = session.copy_with(new)
        change = incremental.changes(msgs, new)
        assert isinstance(change, incremental.Shift)
        got = incremental.reanalyze(before, msgs, after, change)
        if got is None:
            break
        assert facts(got) == facts(analyze(after))
        session, before = after, got
    assert facts(first) == said


def _long(n: int) -> bytes:
    """n turns of one call and its result, some broken (a result missing, duplicated,
    under a wrong id, in the turn after), a user prompt now and then."""
    msgs: list[dict] = [{"role": "user", "content": "start"}]
    for k in range(n):
        tid = f"toolu_{k:05d}"
        msgs.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"step {k}"},
                    {"type": "tool_use", "id": tid, "name": "read_file", "input": {"k": k}},
                ],
            }
        )
        fault = k % 17
        results = (
            [] if fault == 3 else [{"type": "tool_result", "tool_use_id": tid, "content": "ok"}]
        )
        if fault == 5:
            results[0]["tool_use_id"] = "wrong_" + tid
        if fault == 7:
            results.append(dict(results[0]))
        msgs.append({"role": "user", "content": results or [{"type": "text", "text": "go on"}]})
    return json.dumps(msgs).encode()


def test_one_fix_at_a_time_on_a_long_session_is_followed_step_by_step(monkeypatch):
    """Every fix of a 300-turn session applied one by one, some undone and redone: each
    state's analysis is made from the one before (not the whole session) and equals it."""
    counted = Counted(monkeypatch)
    wb = Workbench(load_bytes(_long(300), "/tmp/long.json", format="anthropic"))
    rng = random.Random(7)
    steps = _steps(wb, rng, 60, _same_as_whole)
    assert len(steps) >= 40
    assert counted.answered >= len(steps) // 2


def test_a_round_of_many_fixes_is_followed_too():
    """apply_fixes with a whole plan (what `fix` does in a round), then the increment."""
    session = load_bytes(_long(400), "/tmp/long.json", format="anthropic")
    before = analyze(session)
    plan = make_plan(session, before)
    after, done = apply_fixes(session, plan.actionable)
    assert done
    changed = incremental.changed_positions(session.messages, after.messages)
    got = incremental.reanalyze(before, session.messages, after, changed)
    if changed is None:
        assert got is None
    else:
        assert got is not None
        assert facts(got) == facts(analyze(after))


@pytest.mark.parametrize("seed", range(8))
def test_claude_code_sessions_are_followed_step_by_step(monkeypatch, seed):
    """Generated Claude Code sessions (bench/gen.py: parallel calls, results lost, twice,
    under a wrong id, a turn late), analysed under the claude-code target, whose request
    is emulated: after each step the client's request is sent again from an assistant
    message it keeps before the change to one after it and spliced in, the chain findings
    are made again, and the analysis equals the whole one."""
    counted = Counted(monkeypatch)
    data, _ = gen_claude_code(600, seed)
    wb = Workbench(load_bytes(data, "/tmp/input.jsonl"))
    assert wb.session.target == "claude-code" and wb.analysis.request is not None
    steps = _steps(wb, random.Random(seed), 10, _same_as_whole)
    assert steps and counted.answered >= 1


@pytest.mark.parametrize("seed", range(4))
def test_a_claude_code_step_that_inserts_or_drops_a_message_is_followed(monkeypatch, seed):
    """A fix that creates a record or drops a message (a result moved home, a result
    inserted as a record of its own) moves every position after it: the analysis after
    it is made from the one before (the pairing moved, the stretch and its neighbours
    paired again, Claude Code's request spliced) and, as its undo and its redo, equals
    the whole one."""
    counted = Counted(monkeypatch)
    data, _ = gen_claude_code(600, seed)
    wb = Workbench(load_bytes(data, "/tmp/input.jsonl"))
    assert _shifting_steps(wb, _same_as_whole)
    assert counted.answered >= 1


@pytest.mark.parametrize("seed", [0, 1, 3])
def test_claude_code_steps_that_insert_or_drop_messages_in_a_row_are_followed(monkeypatch, seed):
    """Several fixes in a row that insert or drop a message, then others, all undone and
    redone, then apply-all: the analysis after each is made from the one before (a pairing
    moved by the shifts so far, not copied) and equals the whole one."""
    counted = Counted(monkeypatch)
    # the request's index of sent messages by position, read through the steps' splices,
    # is made whole again after two
    monkeypatch.setattr(incremental, "_DEPTH", 2)
    data, _ = gen_claude_code(600, seed)
    wb = Workbench(load_bytes(data, "/tmp/input.jsonl"))

    def check(wb: Workbench, done: list[str]) -> None:
        _same_as_whole(wb, done)
        if done[-1].endswith("(shifts)"):
            assert isinstance(wb.analysis.pairing, MovedPairing)

    done = shifting_in_a_row(wb, check, 3)
    assert len(done) >= 2
    done += _steps(wb, random.Random(seed), 4, _same_as_whole)
    done += all_undone_and_redone(wb, _same_as_whole)
    assert counted.answered >= 3
    wb.apply_all()
    _same_as_whole(wb, [*done, "apply-all"])


def test_a_step_that_changes_what_claude_code_sends_renumbers_every_finding(monkeypatch):
    """Claude Code drops an assistant message whose only call has no result anywhere (the
    users around it merge: messages.N after it are two less). Inserting the result keeps
    the message: the duplicate result at the end, which the step did not touch, is now
    named message 8, not 6, by the increment as by the whole analysis."""
    counted = Counted(monkeypatch)
    records = [
        cc.user(1, None, "start", 1),
        cc.assistant(2, 1, "msg_a", cc.tool_use("toolu_lost"), 2),
        cc.user(3, 2, "go on", 3),
        cc.assistant(4, 3, "msg_b", cc.tool_use("toolu_b"), 4),
        cc.result(5, 4, "toolu_b", "ok", 5),
        cc.assistant(6, 5, "msg_c", cc.text("done"), 6),
        cc.user(7, 6, "again", 7),
        cc.assistant(8, 7, "msg_d", cc.tool_use("toolu_d"), 8),
        cc.result(9, 8, "toolu_d", "1", 9),
        cc.result(10, 9, "toolu_d", "2", 10),
        cc.assistant(11, 10, "msg_e", cc.text("ok"), 11),
    ]
    wb = Workbench(load_bytes(cc.jsonl(records), "/tmp/input.jsonl"))
    dup = next(f for f in wb.analysis.findings if f.code == "duplicate-tool-result")
    assert dup.message_index == 6
    fix = next(f for f in wb.plan.actionable if f.code == "orphan-tool-use")
    assert fix.action == "insert-result" and wb.apply(fix) is not None
    _same_as_whole(wb, [fix.code])
    assert counted.answered == 1
    dup = next(f for f in wb.analysis.findings if f.code == "duplicate-tool-result")
    assert dup.message_index == 8


def test_a_misplaced_result_is_judged_again_when_a_message_on_its_way_home_changes(monkeypatch):
    """The result of call b sits three messages after its home; the first between them
    holds a result and a blank text. Dropping that text leaves only results between the
    home and b's result: the misplaced finding of b, at a message the fix did not touch,
    now says the provider merges them (a warning under Anthropic)."""
    counted = Counted(monkeypatch)
    call = {"type": "tool_use", "name": "ls", "input": {}}
    doc = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{**call, "id": "a"}, {**call, "id": "b"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "1"}]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c", "content": "2"},
                {"type": "text", "text": " "},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "d", "content": "3"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b", "content": "4"}]},
        {"role": "assistant", "content": "done"},
    ]
    wb = Workbench(load_bytes(json.dumps(doc).encode(), "/tmp/input.json", format="anthropic"))
    before = {f.code: f.severity for f in wb.analysis.findings if f.position == 5}
    fix = next(f for f in wb.plan.actionable if f.code == "empty-content")
    assert wb.apply(fix) is not None
    _same_as_whole(wb, [fix.code])
    assert counted.answered == 1
    after = {f.code: f.severity for f in wb.analysis.findings if f.position == 5}
    assert before["misplaced-tool-result"] != after["misplaced-tool-result"]


def _whole_analyses(monkeypatch) -> list:
    """The whole analyses `settle` makes from now on (their arguments), as they are made."""
    whole = []
    real = plan_module.analyze

    def counting(*args, **kwargs):
        whole.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(plan_module, "analyze", counting)
    return whole


@pytest.mark.parametrize("seed", range(3))
def test_apply_all_from_the_plan_at_hand_applies_what_a_fresh_settle_applies(monkeypatch, seed):
    """Apply-all after a step starts from the plan the workbench has (its analysis made
    from the step before, not the whole session again) and applies the same fixes, to
    the same messages, as rounds of plans made from nothing; its rounds follow a round
    that inserts or drops messages where they can."""
    data, _ = gen_claude_code(600, seed)
    wb = Workbench(load_bytes(data, "/tmp/input.jsonl"))
    first = wb.plan.actionable[0]
    assert wb.apply(first) is not None
    assert wb.plan.fixes  # what the screen shows after the step
    fresh = settle(wb.session, wb.choices.copy())
    whole = _whole_analyses(monkeypatch)
    assert wb.apply_all() is not None
    assert [(f.code, f.action, f.key) for f in wb.applied[1:]] == [
        (f.code, f.action, f.key) for f in fresh.applied
    ]
    assert shape(wb.session) == shape(fresh.session)
    assert facts(wb.analysis) == facts(analyze(wb.session))
    assert len(whole) < 2  # the first round read the plan at hand


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    at=st.lists(st.integers(0, 60), min_size=1, max_size=12),
    shifts=st.lists(
        st.tuples(st.integers(0, 60), st.integers(0, 4), st.integers(0, 4)), max_size=12
    ),
)
def test_the_id_index_moved_through_many_shifts_reads_as_moved_one_by_one(at, shifts):
    """The id index after steps whose messages came or went moves its positions when read,
    through the shifts composed: what it reads is each position moved by every shift in
    turn (gone when a shift's stretch replaced it)."""
    index = incremental._IdIndex({"t": sorted(at)})
    expected = sorted(at)
    for start, dropped, added in shifts:
        shift = incremental.Shift(start, start + dropped, start + added)
        if shift.delta == 0:
            continue
        index = index.moved(shift)
        expected = [k for k in map(shift.moved, expected) if k is not None]
        assert index.get("t") == expected


def test_a_claude_code_step_that_pairs_nothing_again_is_followed():
    """A fuzzed Claude Code file (a client fixture cut short) where apply-all drops a
    message holding no tool id: the increment pairs nothing again and sends again only the
    stretch around the drop (it raised IndexError, so `fix` failed with an internal error);
    after it the analysis equals the whole one. (A subagent file's sidechain with the same
    step, through `fix --strategy malformed=drop`, is replayed by tests/formats/test_fuzz.py.)"""
    path = FIXTURES / "fuzz" / "claude_code_truncated_drop_pairs_nothing_again.jsonl"
    # as `fix --strategy malformed=drop`: the malformed record's message dropped too
    wb = Workbench(load_session(str(path)), Choices(by_code={"malformed": "drop"}))
    assert wb.session.target == "claude-code" and wb.plan.actionable
    wb.apply_all()
    assert wb.done
    assert facts(wb.analysis) == facts(analyze(wb.session))


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    n=st.integers(0, 12),
    at=st.integers(0, 12),
    drop=st.integers(0, 4),
    put=st.lists(st.integers(0, 12), max_size=4),
)
def test_what_a_step_changed_is_the_stretch_between_the_longest_same_ends(n, at, drop, put):
    """`changes`: the messages at each end that are the same objects, as many as there
    are (a message put in again is the same object), the stretch between them what
    changed."""
    old = [object() for _ in range(n)]
    at = min(at, n)
    new = old[:at] + [old[k] if k < n else object() for k in put] + old[at + drop :]
    got = incremental.changes(old, new)
    if len(old) == len(new):
        assert got == frozenset(i for i in range(n) if old[i] is not new[i])
        return
    assert isinstance(got, incremental.Shift)
    a, b = got.start, len(old) - got.old_stop
    assert len(new) - got.stop == b and a + b <= min(len(old), len(new))
    assert all(x is y for x, y in zip(old[:a], new[:a], strict=True))
    assert all(x is y for x, y in zip(old[len(old) - b :], new[len(new) - b :], strict=True))
    assert a == len(old) or a == len(new) or old[a] is not new[a]
    assert a + b == min(len(old), len(new)) or old[-b - 1] is not new[-b - 1]


def _filler(k: int) -> list[dict]:
    """A usual turn: a call and its result, stamped in order."""
    tid = f"toolu_f{k:04d}"
    return [
        {"role": "assistant", "content": [{**_U, "id": tid}], "ts": 2000 + 2 * k},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": tid, "content": "ok"}],
            "ts": 2001 + 2 * k,
        },
    ]


def _round_apart(session: Session, stretches: list, fmt: str, target: str) -> Session | None:
    """`session` with each (messages, at, how many) stretch replaced at once, `at` a share
    of the session (positions far apart, taken in order so each replaces old messages);
    None when a stretch's messages are refused as input."""
    msgs = session.messages
    n = len(msgs)
    new: list = []
    done = 0
    for extra, at, drop in sorted(stretches, key=lambda s: s[1]):
        try:
            others = load_bytes(
                json.dumps(extra).encode(), "/tmp/x.json", format=fmt, target=target
            )
        except InputError:
            return None
        k = max(done, min(n, int(at * n)))
        new += msgs[done:k] + others.messages
        done = min(n, k + drop)
    new += msgs[done:]
    return session.copy_with(new)


def _followed_apart(before: Analysis, session: Session, after: Session) -> Analysis | None:
    """The increment after a round whose stretches lie apart: when it answers, it equals
    the whole analysis, its pairing is followed lean (nothing built) and reads as the
    whole pairing, its id index gives every id's calls and results."""
    change = incremental.changes(session.messages, after.messages)
    got = incremental.reanalyze(before, session.messages, after, change)
    if got is None:
        return None
    assert isinstance(change, incremental.Shift)  # (the same count: positions, not a shift)
    span = max(change.stop, change.old_stop) - change.start
    spread = span > max(64, int(len(after.messages) * incremental._MAX_SHARE))
    if spread and not got.pairing.wrong_role:  # (else one stretch; a wrong role: the whole)
        assert isinstance(got.pairing, LeanPairing) and not got.pairing.built
    _index_says(got.pairing, after.messages)
    assert facts(got) == facts(analyze(after))
    return got


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(
    doc=st.lists(_maybe_stamped, min_size=1, max_size=12),
    stretches=st.lists(
        st.tuples(st.lists(_maybe_stamped, max_size=3), st.floats(0, 1), st.integers(0, 3)),
        min_size=2,
        max_size=8,
    ),
    fillers=st.lists(st.integers(0, 11), min_size=1, max_size=4),
    fmt=st.sampled_from(["roo", "anthropic"]),
    target=st.sampled_from(_TARGETS),
)
@example(  # a call answered far away, a stretch between: the link crosses it
    doc=_far,
    stretches=[([], 0.05, 1), ([{"role": "user", "content": "x"}], 0.5, 0), ([], 0.97, 1)],
    fillers=[1, 9],
    fmt="anthropic",
    target="anthropic",
)
@example(  # a message stamped later put before an unstamped one: the next stamped is late
    doc=_LATE,
    stretches=[([], 0.05, 2), ([{"role": "assistant", "content": "y", "ts": 9000}], 0.977, 0)],
    fillers=[0],
    fmt="roo",
    target="anthropic",
)
def test_a_round_of_stretches_far_apart_is_followed(doc, stretches, fillers, fmt, target):
    """Many stretches replaced at once, far apart (a round of `apply_all`: inserts, drops
    and replaced messages across the whole session, usual turns between them): the
    increment pairs each stretch's neighbourhood again, not the session, and equals the
    whole analysis; a second round after it too."""
    entries = list(doc)
    for k, at in enumerate(sorted(fillers, reverse=True)):
        at = min(at, len(entries))
        entries[at:at] = [m for j in range(40) for m in _filler(40 * k + j)]
    try:
        session = load_bytes(
            json.dumps(entries).encode(), "/tmp/in.json", format=fmt, target=target
        )
    except InputError:
        return
    before = analyze(session)
    for _ in range(2):  # (a round, then the same round again after it)
        after = _round_apart(session, stretches, fmt, target)
        if after is None or len(after.messages) == len(session.messages):
            return
        got = _followed_apart(before, session, after)
        if got is None:
            return
        session, before = after, got


def test_a_round_of_stretches_far_apart_is_followed_most_of_the_time():
    """(The property above answers: the increment does not decline every round.)"""
    rng = random.Random(5)
    answered = 0
    for _ in range(40):
        n = rng.randint(60, 120)
        entries = [m for k in range(n) for m in _filler(k)]
        for _ in range(rng.randint(1, 4)):  # some broken turns
            k = rng.randrange(len(entries) // 2) * 2 + 1
            entries[k] = {
                **entries[k],
                "content": [{**entries[k]["content"][0], "tool_use_id": "x"}],
            }
        session = load_bytes(json.dumps(entries).encode(), "/tmp/in.json", format="anthropic")
        stretches = [
            (
                rng.choice([[], [{"role": "user", "content": "hi"}], _filler(900 + k)]),
                rng.random(),
                rng.randint(0, 2),
            )
            for k in range(rng.randint(2, 8))
        ]
        after = _round_apart(session, stretches, "anthropic", "anthropic")
        if after is not None and len(after.messages) != len(session.messages):
            answered += _followed_apart(analyze(session), session, after) is not None
    assert answered >= 20


@pytest.mark.parametrize("seed", range(6))
def test_a_claude_code_round_of_fixes_is_followed_apart(monkeypatch, seed):
    """`apply_all` on a generated Claude Code session: its first round's fixes (results
    moved home, inserted, duplicates dropped, ids renamed) change short stretches across
    the whole session; the next analysis is the increment's (Claude Code's request not
    spliced: it repairs nothing after the round, so the messages are read as they are),
    equal to the whole one, and `settle` makes no whole analysis after the first."""
    data, _ = gen_claude_code(2000, seed)
    session = load_bytes(data, "/tmp/input.jsonl")
    before = analyze(session)
    plan = make_plan(session, before)
    after, done = apply_fixes(session, plan.actionable)
    assert len(done) > 5
    assert _followed_apart(before, session, after) is not None
    whole = _whole_analyses(monkeypatch)
    settled = settle(session, Choices(), plan=plan)
    assert not whole
    assert facts(settled.last) == facts(analyze(settled.session))
    assert [f.key for f in settled.applied] == [f.key for f in apply_all_fresh(session)]


def apply_all_fresh(session: Session) -> list:
    """The fixes rounds of plans made from whole analyses apply (the increment declining)."""
    out = []
    for _ in range(50):
        plan = make_plan(session, analyze(session))
        if not plan.actionable:
            break
        session, done = apply_fixes(session, plan.actionable)
        out += done
    return out


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    n=st.integers(1, 40),
    edits=st.lists(
        st.tuples(st.integers(0, 40), st.integers(0, 3), st.lists(st.integers(-1, 45), max_size=3)),
        max_size=8,
    ),
)
def test_the_stretches_apart_hold_every_difference(n, edits):
    """`moved.apart`: every run holds the same objects at its old and new positions, the
    stretches and runs cover both lists in order, and `forward` reads the runs."""
    old = [object() for _ in range(n)]
    new = list(old)
    for at, drop, put in sorted(edits, reverse=True):
        at = min(at, len(new))
        new[at : at + drop] = [old[k] if 0 <= k < n else object() for k in put]
    change = incremental.changes(old, new)
    if not isinstance(change, incremental.Shift):
        return
    parts, runs = apart(old, new, change)
    fwd = forwarding(runs)
    i = j = 0
    for first, end, by in runs:
        end = min(end, len(old))
        assert all(old[k] is new[k + by] for k in range(first, end))
        assert [fwd(k) for k in range(first, end)] == [forward(runs, k) for k in range(first, end)]
        assert all(fwd(k) == k + by for k in range(first, end))
    for a, b, c, d in parts:
        assert all(forward(runs, k) is None for k in range(a, b))
        assert (a, c) >= (i, j)
        i, j = b, d
    covered = sum(min(e, len(old)) - f for f, e, _ in runs) + sum(b - a for a, b, _, _ in parts)
    assert covered == len(old)
    assert sum(min(e, len(old)) - f for f, e, _ in runs) + sum(
        d - c for _, _, c, d in parts
    ) == len(new)


@given(n=st.integers(0, 30), gaps=st.lists(st.integers(0, 30), max_size=8))
def test_neighbours_of_every_position_are_those_of_the_list(n, gaps):
    """`moved.neighbours` reads the next and previous live message alike whether every
    position is live (read by arithmetic) or some are not (found in the list)."""
    live = [k for k in range(n) if k not in gaps]
    for step in (1, -1):
        want = (
            dict(zip(live, live[step:], strict=False))
            if step > 0
            else dict(zip(live[1:], live, strict=False))
        )
        got = neighbours(live, step)
        assert {k: got.get(k) for k in range(-2, n + 2) if got.get(k) is not None} == want
        assert dict(got.items()) == want
