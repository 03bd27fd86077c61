"""The TUI shows the lean analysis first (`check`'s) and makes it whole after
(`analysis.made_whole`): that is the analysis made whole at once, findings, numbers,
pairing and the client's request alike, on every sample, fixture and corpus file, mutated
copies of them and a generated Claude Code session; the lean pairing's `checked` is the
pairing of its checked calls and results. Apply-all's last round may be analysed lean too
(`plan.settle`): the same holds of it."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from bench.gen import gen_claude_code
from repair.analysis import analyze, made_whole
from repair.formats import load_bytes
from repair.plan import Choices, make_plan, settle
from repair.workbench import Workbench
from tests.engine.engine_factory import pairing_facts
from tests.engine.test_incremental import SEEDS, facts
from tests.fuzz_support import mutated_session, over_mutated_seeds


def _request(req):
    # (`_touched` is the cache `Request.repairs` makes when first asked; a counted
    # request's maps are keyed by the objects it counted, made anew each time)
    if req is None:
        return None
    counted = req.counted and (req.counted.numbers, req.counted.total)
    return replace(req, _touched=None, counted=None), counted


def _same(session) -> None:
    for conv in (session, *session.threads):
        lean = analyze(conv, session.target)
        checked = pairing_facts(lean.pairing.checked)
        assert [u.block.bid for u in lean.pairing.checked.uses] == [
            u.block.bid for u in lean.pairing.checked_uses
        ]
        assert [r.block.bid for r in lean.pairing.checked.results] == [
            r.block.bid for r in lean.pairing.checked_results
        ]
        got = made_whole(lean, conv)
        want = analyze(conv, session.target, whole=True)
        assert facts(got) == facts(want)
        assert _request(got.request) == _request(want.request)
        assert got.records == want.records
        assert pairing_facts(lean.pairing.checked) == checked  # (not changed by the whole)


@over_mutated_seeds(SEEDS, 200, mutations=(0, 2))
def test_lean_made_whole_is_the_whole_analysis(which, rng_seed, mutations):
    session = mutated_session(SEEDS[which], random.Random(rng_seed), mutations)
    if session is not None:
        _same(session)


def _generated(tmp_path, n: int, seed: int):
    """A generated Claude Code session of `n` turns, loaded from its file."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(gen_claude_code(n, seed=seed)[0])
    return load_bytes(path.read_bytes(), str(path))


def test_lean_made_whole_on_a_generated_claude_code_session(tmp_path):
    _same(_generated(tmp_path, 300, 3))


def _settled_as_whole(session) -> None:
    settled = settle(session, Choices())
    want = analyze(settled.session, whole=True)
    assert facts(settled.last) == facts(want)
    assert not make_plan(settled.session, want, Choices()).actionable  # nothing left to fix
    if not settled.last_whole:  # the last round analysed as `check` does
        got = made_whole(settled.last, settled.session)
        assert facts(got) == facts(want)
        assert _request(got.request) == _request(want.request)
    wb = Workbench(session)
    if wb.apply_all() is not None:  # the workbench's analysis of it, asked for: whole
        assert facts(wb.analysis) == facts(analyze(wb.session, whole=True))


@over_mutated_seeds(SEEDS, 100, mutations=(0, 3))
def test_apply_all_ends_on_the_analysis_of_the_state_it_settled(which, rng_seed, mutations):
    """Apply-all's last round, where its increment declined, is analysed as `check` does
    (lean) and planned only when a finding may be fixed: that analysis is the whole one's,
    no fix is left, and the workbench makes it whole when asked."""
    session = mutated_session(SEEDS[which], random.Random(rng_seed), mutations)
    if session is not None:
        _settled_as_whole(session)


def test_apply_all_of_a_generated_claude_code_session_ends_on_its_analysis(tmp_path):
    session = _generated(tmp_path, 400, 5)
    assert not settle(session, Choices()).last_whole  # (the rounds' edits spread wide)
    _settled_as_whole(session)


def _counted_as_built(session) -> None:
    for conv in (session, *session.threads):
        counted = analyze(conv, session.target, whole=True, steps=False)
        built = analyze(conv, session.target, whole=True)
        assert facts(counted) == facts(built)
        assert counted.records == built.records


@over_mutated_seeds(SEEDS, 100, mutations=(0, 2))
def test_a_whole_analysis_with_the_request_counted_is_the_whole_analysis(
    which, rng_seed, mutations
):
    """`fix`'s first plan is made from a whole pairing with the client's request counted
    (`analyze(whole=True, steps=False)`: no step's increment splices it): the same
    findings, numbers and pairing as the whole analysis with the request built."""
    session = mutated_session(SEEDS[which], random.Random(rng_seed), mutations)
    if session is not None:
        _counted_as_built(session)


def test_fix_of_a_generated_claude_code_session_plans_from_the_request_counted(tmp_path):
    """The same on a generated Claude Code session, and apply-all from nothing analysed
    (as `fix` runs it) applies what rounds of whole plans apply."""
    session = _generated(tmp_path, 400, 6)
    _counted_as_built(session)
    fresh = settle(session, Choices())
    wb = Workbench(session)
    assert wb.apply_all() is not None
    assert [(f.code, f.action, f.key) for f in wb.applied] == [
        (f.code, f.action, f.key) for f in fresh.applied
    ]


def _settled_facts(session) -> tuple:
    settled = settle(session, Choices())
    last = settled.last if settled.last_whole else made_whole(settled.last, settled.session)
    fixes = [
        (f.code, f.action, f.message_index, f.tool_use_id, f.detail, f.key)
        + tuple((e.action, e.detail, e.removed if e.has_removed else None) for e in f.edits)
        for f in settled.applied
    ]
    return settled.session.export_bytes(), fixes, facts(settled.first), facts(last)


@pytest.mark.parametrize("seed", [0, 2])
def test_a_round_after_deferred_fixes_analysed_whole_at_once_settles_as_the_long_way(
    monkeypatch, seed
):
    """After a round whose fixes of one turn waited for the next (a Gemini CLI turn's
    calls, each answered twice), the state is analysed whole at once (`WHOLE_AT_ONCE`):
    the same fixes, written file and analyses as analysing it lean first."""
    from bench.gen import gen_gemini_cli
    from repair import plan

    data, _ = gen_gemini_cli(1200, seed)
    monkeypatch.setattr(plan, "CHAINED", False)  # (the fixes waiting: a round each)
    wholes = []
    real = plan.analyze
    monkeypatch.setattr(plan, "analyze", lambda *a, **k: wholes.append(k) or real(*a, **k))
    session = load_bytes(data, "/tmp/chat.jsonl")
    fast = _settled_facts(session)
    assert {"whole": True} in wholes  # (the path taken)
    monkeypatch.setattr(plan, "WHOLE_AT_ONCE", False)
    assert fast == _settled_facts(session)
