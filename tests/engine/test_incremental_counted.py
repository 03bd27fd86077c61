"""The analysis after a step on a session whose client request is counted, not built (Codex
and Gemini CLI: `Client.light`, their numbers those of the client's request, always), made
from the analysis before it (repair.incremental `_recount`: the stretch paired again counted
on its own, `Client.light_part`, and spliced in; the numbers and block entries after it
moved) is the whole analysis: the same findings, numbers and pairing, and a counted request
that tells the analysis what the request the client builds tells it. On random rollouts and
chats after random steps (shifting ones too), on generated sessions, and on a file where
Codex repairs nothing."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.gen import gen_codex, gen_gemini_cli
from repair import clients, incremental
from repair.analysis import analyze
from repair.errors import InputError
from repair.formats import load_bytes
from repair.workbench import Workbench
from tests.engine.test_incremental import (
    Counted,
    _same_as_whole,
    _shifting_steps,
    _steps,
    all_undone_and_redone,
    shifting_in_a_row,
)
from tests.engine.test_light_sending import _facts
from tests.formats.gemini_chats import chats
from tests.formats.test_codex_lazy import _META, _line
from tests.formats.test_format_codex import call, meta, output, rollout, say, user
from tests.paths import CLIENT_FIXTURES


def _same(wb: Workbench, done: list[str]) -> None:
    """The analysis equals the whole one, and its request tells what Codex's tells."""
    _same_as_whole(wb, done)
    session = wb.session
    req = wb.analysis.request
    client = clients.get(session.target)
    assert req is not None and req.counted is not None and client is not None
    assert _facts(req, session) == _facts(client.send(session), session), done


def _rollout(lines: list[str]) -> bytes:
    return "\n".join([_META, *lines]).encode() + b"\n"


@settings(max_examples=250, deadline=None, derandomize=True, database=None)
@given(lines=st.lists(_line(), min_size=1, max_size=14), rng_seed=st.integers(0, 2**32 - 1))
def test_steps_on_random_rollouts_are_followed(lines, rng_seed):
    """Random rollouts (calls without an output, outputs without a call, ids repeated or
    missing, malformed lines, compactions, rollbacks, items of no content), random applies,
    undos, redos and changed actions: each analysis after a step is the whole one, numbered
    as Codex sends the messages."""
    session = load_bytes(_rollout(lines), "rollout.jsonl", format="codex")
    wb = Workbench(session)
    _steps(wb, random.Random(rng_seed), 6, _same)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(chat=chats(), rng_seed=st.integers(0, 2**32 - 1))
def test_steps_on_random_gemini_cli_chats_are_followed(chat, rng_seed):
    """Random Gemini CLI chats (odd ids, names, responses, thoughts, records written again,
    rewinds): each analysis after a step is the whole one, numbered as Gemini CLI sends
    the turns (those of one role in a row merged, a closing turn after responses)."""
    try:
        session = load_bytes(chat, "/tmp/chat.json", format="gemini-cli")
    except InputError:
        return
    _steps(Workbench(session), random.Random(rng_seed), 6, _same)


@pytest.mark.parametrize(
    ("gen", "seed"),
    [(gen_codex, 0), (gen_codex, 1), (gen_codex, 2)] + [(gen_gemini_cli, 0), (gen_gemini_cli, 1)],
)
def test_steps_are_followed_not_analysed_whole(monkeypatch, gen, seed):
    """Generated rollouts and chats (bench/gen.py: calls without an output, which Codex
    answers "aborted", outputs without a call, which it leaves out, duplicates, outputs a
    turn late; Gemini CLI's results twice): steps, a step that inserts or drops a message
    (Codex), several in a row, all undone and redone, are followed by the increment (most
    of them: not analysed whole) and equal the whole one."""
    counted = Counted(monkeypatch)
    data, _ = gen(600, seed)
    wb = Workbench(load_bytes(data, "/tmp/session.jsonl"))
    assert wb.session.target in ("codex", "gemini-cli")
    sizes: set[int] = set()

    def check(wb: Workbench, done: list[str]) -> None:
        _same(wb, done)
        sizes.add(len(wb.session.messages))

    done = _steps(wb, random.Random(seed), 8, check)
    done += _shifting_steps(wb, check)
    done += shifting_in_a_row(wb, check, 3)
    done += all_undone_and_redone(wb, check)
    assert len(sizes) > 1 or gen is gen_gemini_cli  # (messages came or went)
    # (a step that changes a message's stamp is analysed whole, as for every format)
    applied = [s for s in done if s not in ("undo", "redo") and not s.startswith("cycle")]
    assert counted.answered >= len(applied) * 2 // 3


def test_a_chain_of_spliced_counts_is_read_through_then_counted_whole(monkeypatch):
    """Past `_DEPTH` steps in a row the increment declines (the whole analysis counts
    afresh) before it counts the stretch it would not use; the steps before it read each
    block's entry through the chain."""
    counted = Counted(monkeypatch)
    monkeypatch.setattr(incremental, "_DEPTH", 2)
    data, _ = gen_codex(400, 5)
    wb = Workbench(load_bytes(data, "/tmp/rollout.jsonl"))
    client = clients.get("codex")
    assert client is not None and client.light_part is not None
    parts: list[int] = []

    def light_part(*args):
        parts.append(1)
        return real(*args)

    real = client.light_part
    counting = replace(client, light_part=light_part)
    monkeypatch.setattr(incremental.clients, "get", lambda target: counting)
    done = _steps(wb, random.Random(5), 6, _same)
    assert len(done) >= 5 and 2 <= counted.answered < len(done)
    assert len(parts) == counted.answered  # (a stretch counted is a step followed)


def test_a_step_where_codex_repairs_nothing_is_followed(monkeypatch):
    """A rollout whose one fault is a call id used twice (Codex sends both calls as they
    are): the rename is followed by the increment, the later messages numbered as Codex
    sends them (a message of several items is that many entries)."""
    counted = Counted(monkeypatch)
    path = CLIENT_FIXTURES / "codex" / "duplicate_call_id.jsonl"
    wb = Workbench(load_bytes(path.read_bytes(), str(path)))
    assert [f.code for f in wb.analysis.findings] == ["duplicate-tool-use-id"]
    fix = wb.plan.actionable[0]
    assert wb.apply(fix) is not None
    _same(wb, [fix.code])
    assert counted.answered == 1
    assert wb.analysis.findings == analyze(wb.session).findings == []


def test_a_stretch_holding_a_call_answered_outside_it_is_not_counted_alone():
    """Dropping the second output of call a (in a message with c's output) pairs a's
    messages again, from its call to that message: call b lies between them and its output
    after them. Counted alone, the stretch would have Codex answer b "aborted" (an entry
    more: every number after it one too high); the analysis is the whole one (before the
    check that every call id of the stretch lies in it, the numbers after b's call moved)."""
    ts = "2025-11-20T10:00:%02d.000Z"
    data = rollout(
        meta(),
        user(ts % 1, "go"),
        call(ts % 2, "a"),
        output(ts % 3, "a"),
        call(ts % 4, "b"),
        user(ts % 5, "hm"),
        call(ts % 6, "c"),
        output(ts % 7, "c"),
        output(ts % 7, "a", "again"),
        say(ts % 8, "ok"),
        output(ts % 9, "b"),
        say(ts % 10, "done"),
    )
    wb = Workbench(load_bytes(data, "rollout.jsonl"))
    fix = next(f for f in wb.plan.actionable if f.code == "duplicate-tool-result")
    assert wb.apply(fix) is not None
    _same(wb, [fix.code])
    assert wb.analysis.numbers[-2:] == [8, 9]


def test_a_step_that_changes_a_stamp_is_followed(monkeypatch):
    """Dropping the first of two outputs of a message stamps it with the second's (10:00:09):
    the next stamped message, after one without a stamp, is now out of order. The increment
    follows the step (it declined a changed stamp) and finds it, as the whole analysis does
    (fails without the next stamped message judged again)."""
    counted = Counted(monkeypatch)
    ts = "2025-11-20T10:00:%02d.000Z"
    data = rollout(
        meta(),
        user(ts % 1, "go"),
        call(ts % 2, "a"),
        output(ts % 3, "a"),
        call(ts % 4, "c"),
        output(ts % 6, "a", "again"),
        output(ts % 9, "c"),
        say(7, "no stamp"),  # (a stamp that is not a string: none)
        user(ts % 7, "ok"),
    )
    wb = Workbench(load_bytes(data, "rollout.jsonl"))
    assert [f.code for f in wb.analysis.findings] == ["duplicate-tool-result"]
    fix = wb.plan.actionable[0]
    assert wb.apply(fix) is not None
    _same(wb, [fix.code])
    assert counted.answered == 1
    assert [(f.code, f.position) for f in wb.analysis.findings] == [("out-of-order-timestamp", 6)]
