"""The increment declines early (repair.incremental `_too_far_apart`, `_too_many`: before
anything is paired again) only where it would have declined after pairing again: fixes
applied over stretches of every width of a generated Codex rollout or Gemini CLI chat (a
few messages to a round of `apply_all` all over it) give the same answer either way:
declined, or the same analysis."""

from __future__ import annotations

import random

import pytest

from bench.gen import gen_codex, gen_gemini_cli
from repair import incremental
from repair.analysis import analyze
from repair.formats import load_bytes
from repair.incremental import changes, reanalyze
from repair.plan import apply_fixes, make_plan
from tests.engine.test_incremental import facts


@pytest.mark.parametrize(
    ("gen", "seed"), [(gen_gemini_cli, 0), (gen_gemini_cli, 3), (gen_codex, 1)]
)
def test_an_early_decline_is_a_decline_of_the_long_way(monkeypatch, gen, seed):
    data, _ = gen(1200, seed)
    session = load_bytes(data, "/tmp/session.jsonl")
    before = analyze(session)
    fixes = make_plan(session, before).actionable
    n = len(session.messages)
    rng = random.Random(seed)
    said = {True: 0, False: 0}
    for width in [*range(20, 400, 20), n, n]:
        start = rng.randrange(max(1, n - width))
        some = [f for f in fixes if f.position is not None and start <= f.position < start + width]
        after, done = apply_fixes(session, some)
        changed = changes(session.messages, after.messages)
        got = reanalyze(before, session.messages, after, changed)
        with monkeypatch.context() as m:  # the long way: pair again, then see
            m.setattr(incremental, "_too_far_apart", lambda changed, n: False)
            m.setattr(incremental, "_too_many", lambda positions, limit: False)
            long = reanalyze(before, session.messages, after, changed)
        assert (got is None) == (long is None), width
        if got is not None:
            assert facts(got) == facts(long)
        said[got is None] += 1
    assert said[True] and said[False]  # (both ways taken)
