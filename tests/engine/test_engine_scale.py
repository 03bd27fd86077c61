"""No quadratic path (issue 7 point 12), asserted by counting work on moderate sizes, never by
timing: one id shared by many calls pairs each result with its own call, a fix of many
calls in one message is one fix whose edits rebuild that message once, and many renames
settle in one round."""

from __future__ import annotations

import pytest

from repair import model
from repair.analysis import analyze
from repair.plan import apply_all, apply_fixes, make_plan
from tests.engine.engine_factory import R, S, T, U

N = 2000


def same_id_session(n: int = N):
    return S(
        ("user", "read them all"),
        ("assistant", [U("toolu_same") for _ in range(n)]),
        ("user", [R("toolu_same", f"out {k}") for k in range(n)]),
        ("assistant", "done"),
    )


def reused_id_session(n: int = N):
    msgs: list = [("user", "go")]
    for k in range(n):
        msgs += [("assistant", [U("toolu_same")]), ("user", [R("toolu_same", f"out {k}")])]
    msgs.append(("assistant", "done"))
    return S(*msgs)


@pytest.fixture
def rebuilt(monkeypatch):
    """Counts the messages built with new blocks (each one copies its block list)."""
    calls: list[int] = []
    original = model.Message.with_blocks

    def counting(self, blocks):
        calls.append(self.uid)
        return original(self, blocks)

    monkeypatch.setattr(model.Message, "with_blocks", counting)
    return calls


def test_results_of_calls_sharing_one_id_in_one_message_pair_one_to_one():
    p = analyze(same_id_session()).pairing
    assert [len(u.results) for u in p.uses] == [1] * N
    assert [u.results[0].bi for u in p.uses] == list(range(N))  # k-th result, k-th call
    codes = analyze(same_id_session()).summary()
    assert codes == {"duplicate-tool-use-id": N - 1}


def test_renaming_every_repeat_in_one_message_is_one_fix_rebuilding_each_message_once(rebuilt):
    s = same_id_session()
    plan = make_plan(s)
    (fix,) = plan.actionable
    assert fix.code == "duplicate-tool-use-id"
    assert len(fix.edits) == 2 * (N - 1)  # the call and its result, per repeat
    after, done = apply_fixes(s, [fix])
    assert done == [fix]
    assert sorted(rebuilt) == sorted([s.messages[1].uid, s.messages[2].uid])
    ids = [b.tool_id for b in after.messages[1].blocks]
    assert len(set(ids)) == N
    assert [b.tool_id for b in after.messages[2].blocks] == ids
    assert analyze(after).findings == []


def test_many_pairs_reusing_one_id_are_renamed_in_one_round():
    s = reused_id_session()
    plan = make_plan(s)
    assert len(plan.actionable) == N - 1
    fixed, applied = apply_all(s)
    assert len(applied) == N - 1  # every rename applied in the first round, none later
    assert analyze(fixed).findings == []
    new_ids = [m.blocks[0].tool_id for m in fixed.messages[3:-1:2]]
    # fresh ids count on per base instead of probing from _hv2 each time
    assert new_ids == [f"toolu_same_hv{k}" for k in range(2, N + 1)]


def test_answering_many_calls_of_one_message_rebuilds_the_home_message_once(rebuilt):
    s = S(
        ("user", "go"),
        ("assistant", [U(f"t{k}") for k in range(N)]),
        ("user", [T("nothing came back")]),
        ("assistant", "ok"),
    )
    (fix,) = make_plan(s).actionable
    assert fix.code == "orphan-tool-use" and len(fix.edits) == N + 1  # N inserts, 1 reorder
    after, _ = apply_fixes(s, [fix])
    assert rebuilt == [s.messages[2].uid]
    assert [b.tool_id for b in after.messages[2].blocks[:N]] == [f"t{k}" for k in range(N)]
