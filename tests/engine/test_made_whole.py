"""The TUI shows the lean analysis first (`check`'s) and makes it whole after
(`analysis.made_whole`): that is the analysis made whole at once, findings, numbers,
pairing and the client's request alike, on every sample, fixture and corpus file, mutated
copies of them and a generated Claude Code session; the lean pairing's `checked` is the
pairing of its checked calls and results."""

from __future__ import annotations

import random
from dataclasses import replace

from bench.gen import gen_claude_code
from repair.analysis import analyze, made_whole
from repair.formats import load_bytes
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


def test_lean_made_whole_on_a_generated_claude_code_session(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(gen_claude_code(300, seed=3)[0])
    _same(load_bytes(path.read_bytes(), str(path)))
