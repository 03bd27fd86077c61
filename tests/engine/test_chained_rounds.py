"""Apply-all applies the fixes that wait for a fix of their round (they touch a message it
touched: a Gemini CLI turn's calls, each answered twice) in the same round, a wave after
another, where the next rounds would make them again alike (`plan.CHAINED`, `_chains`):
the same fixes in the same order, their edits and what they removed, the same written
file and the same analyses as a round for each wave, the long way."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.gen import gen_gemini_cli
from repair import plan
from repair.analysis import made_whole
from repair.errors import ExportRefused
from repair.formats import load_bytes
from repair.plan import Choices, settle
from tests.engine.test_incremental import SEEDS
from tests.formats.gemini_chats import chats
from tests.fuzz_support import mutated_session, over_mutated_seeds


def _settle(session, chained: bool):
    was = plan.CHAINED
    plan.CHAINED = chained
    try:
        return settle(session, Choices())
    finally:
        plan.CHAINED = was


def _settled(session, chained: bool) -> tuple:
    """What apply-all gives: the file written, each fix applied (its edits and what they
    removed), and the findings of the state it ends in, with its numbers and sent count
    (not the findings' keys: a relink loads the session again, new uids)."""
    settled = _settle(session, chained)
    last = settled.last if settled.last_whole else made_whole(settled.last, settled.session)
    fixes = [
        (f.code, f.action, f.message_index, f.tool_use_id, f.detail, f.position)
        + tuple((e.action, e.detail, e.removed if e.has_removed else None) for e in f.edits)
        for f in settled.applied
    ]
    try:
        written: object = settled.session.export_bytes()
    except ExportRefused as e:
        written = str(e)
    found = [(f.to_json(), f.position, f.client_repair) for f in last.findings]
    return written, fixes, found, last.numbers, last.sent


def _same(session) -> None:
    assert _settled(session, True) == _settled(session, False)


@pytest.mark.parametrize(
    ("seed", "target", "plans"),
    [(0, "gemini-cli", 1), (1, "gemini-cli", 1), (2, "bedrock", 1), (0, "openai-chat", 3)],
)
def test_a_generated_gemini_chat_settles_in_one_round_as_in_three(monkeypatch, seed, target, plans):
    """Gemini CLI 0.61 answered every call twice, turns of one to three calls: one plan
    (then the check that nothing is left) instead of one per call of the longest turn;
    under a wire that sends each result as an entry of its own (a dropped copy moves the
    numbers after it), a round each, as before."""
    data, _ = gen_gemini_cli(1200, seed)
    made: list[int] = []
    real = plan.make_plan
    monkeypatch.setattr(plan, "make_plan", lambda *a, **k: made.append(1) or real(*a, **k))
    runs, rounds = [], []
    for chained in (True, False):
        session = replace(load_bytes(data, "/tmp/chat.jsonl"), target=target)
        made.clear()
        runs.append(_settled(session, chained))
        rounds.append(len(made))
    assert runs[0] == runs[1]
    assert rounds[0] == plans and rounds[1] >= 3
    assert len(runs[0][1]) > 400


_TARGETS = st.sampled_from(["gemini-cli", "gemini", "anthropic", "bedrock", "openai-chat"])


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(data=chats(), target=_TARGETS)
def test_a_random_gemini_chat_settles_as_the_long_way(data, target):
    session = replace(load_bytes(data, path="chat.jsonl", format="gemini-cli"), target=target)
    _same(session)


@over_mutated_seeds(SEEDS, 150, mutations=(0, 3))
def test_a_mutated_file_settles_as_the_long_way(which, rng_seed, mutations):
    session = mutated_session(SEEDS[which], random.Random(rng_seed), mutations)
    if session is not None:
        _same(session)
