"""The plan after a step, kept from the plan before it (repair.replan), is the plan made
whole (`make_plan`) of the state after the step: the same fixes in the same order (codes,
actions, findings, edits, details, skips), after random applies, undos, redos and changed
actions, on sample and corpus files, fuzzed copies of them and generated sessions."""

from __future__ import annotations

import dataclasses
import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from repair.edits import Edit
from repair.errors import InputError
from repair.formats import load_bytes
from repair.model import Block, Message, Session
from repair.plan import Plan, make_plan
from repair.replan import replan
from repair.workbench import Workbench
from tests.engine.test_incremental import _TARGETS, _entry, _steps
from tests.fuzz_support import mutated_session, over_mutated_seeds, seeds

SEEDS = seeds()
_UIDS = ("message_uid", "to_uid", "second_uid", "after_uid")
_APPLIED = ("removed", "has_removed", "removed_bids")  # what an apply (or a preview) dropped


def plan_facts(plan: Plan, session: Session) -> list:
    """Everything a plan says, by value: a message by its position (a message a fix
    inserts, whose uid is new each time a plan is made, by its content)."""
    at = {m.uid: k for k, m in enumerate(session.messages)}

    def value(v: object) -> object:
        if isinstance(v, Block):
            return (v.type, json.dumps(v.data, sort_keys=True, default=str), v.tool_id)
        if isinstance(v, Message):
            return (v.role, [value(b) for b in v.blocks])
        if isinstance(v, (list, tuple)):
            return [value(x) for x in v]
        if isinstance(v, dict):
            return sorted((str(k), value(x)) for k, x in v.items())
        return v

    def edit(e: Edit) -> tuple:
        out: list = [type(e).__name__]
        for fld in dataclasses.fields(e):
            if fld.name in _APPLIED:
                continue
            v = getattr(e, fld.name)
            if fld.name in _UIDS:
                v = at.get(v, "new") if v is not None else None
            out.append((fld.name, value(v)))
        return tuple(out)

    return [
        (
            f.code,
            f.action,
            f.actions,
            [(x.to_json(), x.position, x.key) for x in f.findings],
            f.detail,
            sorted(str(at.get(u, "new")) for u in f.touches),
            f.skipped,
            f.frozen,
            [edit(e) for e in f.edits],
        )
        for f in plan.fixes
    ]


def _kept_is_whole(wb: Workbench, done: list[str]) -> None:
    """The workbench's plan (kept from the one before where it could be) and a plan of the
    state on its own say the same."""
    kept = wb.plan
    whole = make_plan(wb.session, wb.analysis, wb.choices)
    assert plan_facts(kept, wb.session) == plan_facts(whole, wb.session), done


@over_mutated_seeds(SEEDS, 100, mutations=(0, 2), steps=(1, 8))
def test_the_plan_after_random_steps_is_the_whole_plan(which, rng_seed, mutations, steps):
    rng = random.Random(rng_seed)
    session = mutated_session(SEEDS[which], rng, mutations)
    if session is None:
        return
    _steps(Workbench(session), rng, steps, _kept_is_whole)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    doc=st.lists(_entry, min_size=1, max_size=14),
    fmt=st.sampled_from(["roo", "anthropic"]),
    target=st.sampled_from(_TARGETS),
    rng_seed=st.integers(0, 2**32 - 1),
)
def test_generated_sessions_keep_a_plan_that_is_the_whole_plan(doc, fmt, target, rng_seed):
    """Small generated sessions (repeated and missing ids, id-less calls, empty messages,
    messages of one role in a row), under every provider target."""
    try:
        session = load_bytes(json.dumps(doc).encode(), "/tmp/input.json", format=fmt, target=target)
    except InputError:
        return
    _steps(Workbench(session), random.Random(rng_seed), 6, _kept_is_whole)


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(
    doc=st.lists(_entry, min_size=1, max_size=14),
    target=st.sampled_from(_TARGETS),
    rng_seed=st.integers(0, 2**32 - 1),
)
def test_the_plan_after_apply_all_and_its_undo_is_the_whole_plan(doc, target, rng_seed):
    """A step then apply-all (its rounds analysed from the first round's plan), its undo
    and redo, then more steps."""
    try:
        session = load_bytes(
            json.dumps(doc).encode(), "/tmp/input.json", format="roo", target=target
        )
    except InputError:
        return
    wb = Workbench(session)
    rng = random.Random(rng_seed)
    _steps(wb, rng, 1, _kept_is_whole)
    for step in (wb.apply_all, wb.undo, wb.redo):
        if step() is not None:
            _kept_is_whole(wb, [step.__name__])
    _steps(wb, rng, 3, _kept_is_whole)


def _long(turns: int) -> bytes:
    """A Roo history: each turn a call answered twice (a duplicate result) in its user
    message, then a text reply."""
    doc: list[dict] = [{"role": "user", "content": "go", "ts": 1000}]
    for k in range(turns):
        tid = f"toolu_{k:04d}"
        doc.append(
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": tid, "name": "ls", "input": {}}],
                "ts": 1001 + 2 * k,
            }
        )
        result = {"type": "tool_result", "tool_use_id": tid, "content": "out"}
        doc.append({"role": "user", "content": [result, dict(result)], "ts": 1002 + 2 * k})
    return json.dumps(doc).encode()


def test_a_step_keeps_the_fixes_it_did_not_change():
    """After one fix on a long session the plan holds the same fixes as before but the one
    applied (kept, not made again), and is the whole plan of the state after it."""
    session = load_bytes(_long(40), "/tmp/input.json", format="roo")
    wb = Workbench(session)
    before = wb.plan
    assert len(before.fixes) == 40
    wb.apply(before.fixes[20])
    kept = replan(before, session.messages, wb.session, wb.analysis, wb.choices)
    assert kept is not None
    assert [f for f in kept.fixes if f not in before.fixes] == []
    assert plan_facts(kept, wb.session) == plan_facts(
        make_plan(wb.session, wb.analysis, wb.choices), wb.session
    )
    assert sum(any(f is g for g in before.fixes) for f in wb.plan.fixes) == 39


def test_a_fix_that_reads_a_message_the_step_changed_is_made_again():
    """Merging the two user messages (Bedrock) puts the results in the order of the calls
    of the assistant message before them; dropping one of those calls changes that order,
    though the merge's finding (at the second user message) is kept by the analysis: the
    merge is made again."""
    doc = [
        {"role": "user", "content": "go", "ts": 1000},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "ls", "input": {}},
                {"type": "tool_use", "id": "t3", "name": "ls", "input": {}},
            ],
            "ts": 1001,
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}], "ts": 1002},
        {"role": "user", "content": "more", "ts": 1003},
    ]
    session = load_bytes(
        json.dumps(doc).encode(), "/tmp/input.json", format="roo", target="bedrock"
    )
    wb = Workbench(session)
    orphan = next(f for f in wb.plan.fixes if f.code == "orphan-tool-use")
    wb.cycle(orphan)
    merge = next(f for f in wb.plan.fixes if f.code == "consecutive-same-role")
    wb.apply(next(f for f in wb.plan.fixes if f.action == "drop-tool-use"))
    after = next(f for f in wb.plan.fixes if f.code == "consecutive-same-role")
    assert after is not merge and after.findings[0] is merge.findings[0]
    _kept_is_whole(wb, ["drop-tool-use"])
