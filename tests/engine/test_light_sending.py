"""A client's light twin (`Client.light`: the request counted, not built) tells the analysis
exactly what the built request tells it (`Client.send`): each message's number, the entries
in all, what the client leaves out, changes, answers or adds. Compared on random message
lists (Gemini CLI, whose sending reads only the messages), on every sample, corpus and fixture file
of a client with a twin and on fuzzed copies of them after random fixes and undos; and the
whole analysis with the twin is the analysis with the built request."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from repair import analysis, clients, wire
from repair.formats import load_bytes
from repair.model import Message, Session, block_from_anthropic
from repair.workbench import Workbench
from tests.engine.engine_factory import R, S, T, U
from tests.formats.test_readback_narrow import _steps
from tests.fuzz_support import mutated_session, over_mutated_seeds, seeds_that_load

TWINNED = sorted(t for t, c in clients._load().items() if c.light is not None)


def _facts(req: wire.Request, session: Session) -> dict:
    shape = wire.wire_for(session.target)
    split = shape.split is not wire.WIRES["anthropic"].split
    return {
        "numbering": req.numbering(len(session.messages), shape),
        # where the wire splits a message into entries: the entry of each block
        "block_numbers": [
            req.block_entry(shape, pos, b)
            for pos, m in enumerate(session.messages)
            for b in m.blocks
        ]
        if split
        else None,
        "left_out": [(pos, id(b), why) for pos, b, why in req.left_out],
        "changed": [(pos, id(b), how) for pos, b, how in req.changed],
        "dropped": req.dropped,
        "added_after": req.added_after,
        "answered": req.answered,
        "repairs": [
            (pos, bi)
            for pos, m in enumerate(session.messages)
            for bi, b in enumerate((None, *m.blocks))
            if req.repairs(b, pos)
        ],
    }


def _same(session: Session) -> None:
    client = clients.get(session.target)
    assert client is not None and client.light is not None
    light = client.light(session)
    assert light.counted is not None and not light.messages
    assert _facts(light, session) == _facts(client.send(session), session)


def _findings(session: Session, light: bool, monkeypatch: pytest.MonkeyPatch) -> list:
    client = clients.get(session.target)
    assert client is not None
    with monkeypatch.context() as mp:
        if not light:
            assert clients.CLIENTS is not None
            mp.setitem(clients.CLIENTS, session.target, dataclasses.replace(client, light=None))
        got = analysis.analyze(session)
    return [(f.to_json(), f.position, f.key) for f in got.findings] + [got.numbers, got.sent]


def test_the_clients_with_a_twin():
    assert TWINNED == ["claude-code", "codex", "gemini-cli", "opencode"]


# ---------------------------------------------------------------- random messages (Gemini CLI)

_IDS = ["t1", "t2", "t3"]
_content = st.lists(
    st.one_of(
        st.builds(T, st.sampled_from(["", "ok"])),
        st.builds(U, st.sampled_from(_IDS)),
        st.builds(R, st.sampled_from(_IDS)),
        st.just({"type": "thinking", "thinking": "hm"}),
    ),
    max_size=3,
)
_message = st.builds(
    lambda role, content, how: Message(
        role=role,
        blocks=tuple(block_from_anthropic(c) for c in content),
        hidden=how in ("hidden", "curated out"),
        meta={"curated_out": True} if how == "curated out" else {},
        malformed="unreadable" if how == "malformed" else None,
    ),
    st.sampled_from(["user", "assistant", None]),
    _content,
    st.sampled_from(["live", "live", "live", "hidden", "curated out", "malformed"]),
)


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(msgs=st.lists(_message, max_size=10))
def test_gemini_cli_counted_is_gemini_cli_sent(msgs):
    """Runs of one role (merged into one turn), hidden, curated-out and unreadable messages
    between them, a role missing, a last message of responses (closed by a model turn) or
    not, thoughts only."""
    _same(S(*msgs, target="gemini-cli"))


_CC_ITEM = st.one_of(
    st.builds(T, st.sampled_from(["", " \n", "ok"])),
    st.builds(U, st.sampled_from(_IDS)),
    st.builds(R, st.sampled_from(_IDS)),
    st.just({"type": "thinking", "thinking": "hm", "signature": "s"}),
    st.sampled_from(["", "  ", "a prompt"]),  # string content
)


@st.composite
def _cc_message(draw, records: list[int]) -> Message:
    """A message of one to three records (Claude Code merges records into a message: a
    record's blocks share its origin), each of a string or a block or two."""
    blocks = []
    for _ in range(draw(st.integers(1, 3))):
        records[0] += 1
        items = draw(st.lists(_CC_ITEM, min_size=1, max_size=2))
        items = (
            items[:1] if isinstance(items[0], str) else [i for i in items if isinstance(i, dict)]
        )
        blocks += [block_from_anthropic(i, origin=records[0]) for i in items]
    how = draw(st.sampled_from(["live"] * 6 + ["hidden", "malformed"]))
    return Message(
        role=draw(st.sampled_from(["user", "assistant", "user", "assistant", None])),
        blocks=tuple(blocks),
        hidden=how == "hidden",
        malformed="unreadable" if how == "malformed" else None,
    )


@settings(max_examples=600, deadline=None, derandomize=True, database=None)
@given(data=st.data(), n=st.integers(0, 9))
def test_claude_code_counted_is_claude_code_sent(data, n):
    """Messages merged from several records (string content and blocks, results first),
    calls without a result anywhere, results after no call, reused ids, a second result,
    blank and empty texts, thinking around a dropped call, hidden and unreadable ones."""
    records = [0]
    msgs = [data.draw(_cc_message(records)) for _ in range(n)]
    _same(S(*msgs, target="claude-code"))


@st.composite
def _usual_turn(draw, ids: list[int]) -> list[Message]:
    """A call message whose calls (ids of its own) the next message answers once each, in
    any order: what the twin keeps as it is, in runs, between the messages it reads."""
    calls = []
    for _ in range(draw(st.integers(1, 3))):
        ids[0] += 1
        calls.append(f"u{ids[0]}")
    answers = draw(st.permutations(calls))
    items = [T("ok"), *map(U, calls)] if draw(st.booleans()) else list(map(U, calls))
    return [
        Message(role="assistant", blocks=tuple(block_from_anthropic(i) for i in items)),
        Message(role="user", blocks=tuple(block_from_anthropic(R(a)) for a in answers)),
    ]


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(data=st.data(), n=st.integers(0, 12))
def test_claude_code_usual_turns_around_odd_messages_are_counted_as_sent(data, n):
    """Usual turns (kept as they are, in runs) with odd messages among them: an odd message
    next to a usual turn changes it where Claude Code changes it (a call dropped on resume
    makes two user messages neighbours, a placeholder shifts the numbers after it)."""
    records, ids = [0], [0]
    msgs: list[Message] = []
    for _ in range(n):
        if data.draw(st.booleans()):
            msgs += data.draw(_usual_turn(ids))
        else:
            msgs.append(data.draw(_cc_message(records)))
    _same(S(*msgs, target="claude-code"))


# ---------------------------------------------------------------- files of the formats


SEEDS = seeds_that_load(lambda seed, session: session.target in TWINNED)


def test_the_twinned_formats_have_seeds():
    assert {load_bytes(s.data, f"/tmp/x{s.suffix}").target for s in SEEDS} == set(TWINNED)


@pytest.mark.parametrize("seed", SEEDS, ids=[s.name.split("/")[-1] for s in SEEDS])
def test_every_file_is_counted_as_sent_and_analysed_alike(seed, monkeypatch):
    session = load_bytes(seed.data, f"/tmp/input{seed.suffix}")
    _same(session)
    assert _findings(session, True, monkeypatch) == _findings(session, False, monkeypatch)
    wb = Workbench(session)
    wb.apply_all()
    _same(wb.session)
    assert _findings(wb.session, True, monkeypatch) == _findings(wb.session, False, monkeypatch)


@pytest.mark.skipif(not SEEDS, reason="no files of a client with a twin")
@over_mutated_seeds(SEEDS, 120, mutations=(0, 3), steps=(0, 5))
def test_a_fuzzed_file_after_random_steps_is_counted_as_sent(which, rng_seed, mutations, steps):
    seed = SEEDS[which]
    rng = random.Random(rng_seed)
    session = mutated_session(seed, rng, mutations)
    if session is None or session.target not in TWINNED:
        return
    _same(session)
    wb = Workbench(session)
    note(f"steps: {_steps(wb, rng, steps)}")
    _same(wb.session)


def _codex_line(payload: dict) -> str:
    return json.dumps(
        {"timestamp": "2025-11-20T09:14:02.120Z", "type": "response_item", "payload": payload}
    )


def _codex_message(role: str, *texts: str) -> str:
    kind = "output_text" if role == "assistant" else "input_text"
    parts = [{"type": kind, "text": t} for t in texts]
    return _codex_line({"type": "message", "role": role, "content": parts})


def test_codex_items_of_several_parts_are_counted_as_sent(monkeypatch):
    """Message items of several content parts (one Responses entry each), two items of one
    role in a row (two entries), a call without output (answered "aborted") between parts
    of a turn, an output without call (left out), and the same after every fix."""
    call = {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"}
    orphan = {"type": "function_call_output", "call_id": "c9", "output": "x"}
    rollout = "\n".join(
        [
            _codex_message("user", "look at", "these two"),
            _codex_message("user", "and this"),
            _codex_message("assistant", "one", "two", "three"),
            _codex_line(call),
            _codex_message("assistant", "after the call", "and more"),
            _codex_line(orphan),
            _codex_message("user", "next", "turn"),
        ]
    )
    session = load_bytes((rollout + "\n").encode(), "/tmp/rollout.jsonl")
    assert session.target == "codex"
    _same(session)
    client = clients.get("codex")
    assert client is not None and client.light is not None
    counted = client.light(session).counted
    assert counted is not None
    # one entry per item (its parts together), per call and per output Codex adds
    assert counted.total == len(wire.WIRES["openai-responses"].render(client.send(session))) == 7
    assert _findings(session, True, monkeypatch) == _findings(session, False, monkeypatch)
    wb = Workbench(session)
    wb.apply_all()
    _same(wb.session)
    assert _findings(wb.session, True, monkeypatch) == _findings(wb.session, False, monkeypatch)


def _codex_call(call_id: str) -> str:
    return _codex_line(
        {"type": "function_call", "call_id": call_id, "name": "f", "arguments": "{}"}
    )


def _codex_output(call_id: str) -> str:
    return _codex_line({"type": "function_call_output", "call_id": call_id, "output": "x"})


_CODEX_ITEM = st.one_of(
    # a message item of no content (`content: []`)
    st.builds(_codex_message, st.sampled_from(["user", "assistant", "developer"])),
    st.builds(
        lambda role, texts: _codex_message(role, *texts),
        st.sampled_from(["user", "assistant"]),
        st.lists(st.sampled_from(["", "ok"]), min_size=1, max_size=2),
    ),
    st.builds(_codex_call, st.sampled_from(["c1", "c2"])),
    st.builds(_codex_output, st.sampled_from(["c1", "c2", "c9"])),
)


@settings(max_examples=60, deadline=None)
@given(items=st.lists(_CODEX_ITEM, min_size=1, max_size=9))
def test_codex_items_of_no_content_are_counted_as_sent(items):
    """Rollouts of message items of no content (`content: []`, any role: Codex CLI 0.169
    sends each as it is, where it is), of empty texts, calls and outputs: counted as sent,
    each empty item sent with its `content: []`, before and after every fix."""
    session = load_bytes(("\n".join(items) + "\n").encode(), "/tmp/rollout.jsonl")
    _same(session)
    client = clients.get("codex")
    assert client is not None
    sent = wire.WIRES["openai-responses"].render(client.send(session))
    payloads = [json.loads(i)["payload"] for i in items]
    empty = [p for p in payloads if p.get("content") == []]
    assert [e.item for e in sent if e.item.get("content") == []] == empty
    wb = Workbench(session)
    wb.apply_all()
    _same(wb.session)


def _codex_compacted(history: list[str]) -> str:
    """A compacted line standing for these items (response_item lines: their payloads)."""
    items = [json.loads(i)["payload"] for i in history]
    payload = {"message": "summary", "replacement_history": items}
    return json.dumps(
        {"timestamp": "2025-11-20T09:16:20.983Z", "type": "compacted", "payload": payload}
    )


def _sent_items(session: Session) -> list[dict]:
    client = clients.get("codex")
    assert client is not None
    return [e.item for e in wire.WIRES["openai-responses"].render(client.send(session))]


@settings(max_examples=60, deadline=None)
@given(history=st.lists(_CODEX_ITEM, max_size=6), after=st.lists(_CODEX_ITEM, max_size=4))
def test_codex_compacted_items_of_no_content_are_counted_as_sent(history, after):
    """A compacted line whose history holds message items of no content (Codex CLI 0.169
    sends each as it is, where it is in that history: compacted_empty_item.sent.json),
    anywhere among texts, calls and outputs, alone in their message or not, and the line's
    items after it: counted as sent, each empty item sent once, in order, before and after
    every fix."""
    lines = [_codex_compacted(history), *after]
    session = load_bytes(("\n".join(lines) + "\n").encode(), "/tmp/rollout.jsonl")
    _same(session)
    payloads = [json.loads(i)["payload"] for i in history + after]
    empty = [p for p in payloads if p.get("content") == []]
    assert [i for i in _sent_items(session) if i.get("content") == []] == empty
    wb = Workbench(session)
    wb.apply_all()
    _same(wb.session)


def test_codex_compacted_item_of_no_content_alone_in_its_message_is_sent_where_it_is():
    """An empty item the loader groups alone (an assistant one between user items, a
    developer one, a user one between assistant items): a message of no block, sent as its
    item where it is in the compacted history; the recorded case holds an empty item with a
    block in its message (compacted_empty_item.sent.json)."""
    history = [
        _codex_message("user", "q"),
        _codex_message("assistant"),
        _codex_message("developer"),
        _codex_message("user", "more"),
        _codex_message("assistant", "a"),
        _codex_message("user"),
        _codex_message("assistant", "b"),
    ]
    lines = [_codex_compacted(history), _codex_message("user", "next")]
    session = load_bytes(("\n".join(lines) + "\n").encode(), "/tmp/rollout.jsonl")
    assert [(m.role, len(m.blocks)) for m in session.messages] == [
        ("user", 1),
        ("assistant", 0),
        ("developer", 0),
        ("user", 1),
        ("assistant", 1),
        ("user", 0),
        ("assistant", 1),
        ("user", 1),
    ]
    _same(session)
    payloads = [json.loads(i)["payload"] for i in [*history, lines[1]]]
    assert _sent_items(session) == payloads


def test_codex_written_rollout_sends_its_items_as_the_session_did():
    """A message of two assistant items with one of no content between them, given a new
    text after the first: the written rollout, read again, is sent in the order the session
    was (the new text's line, then the empty item, then the second item). Before, the writer
    put the empty item first: the file sent [a, (empty), new, b] where the session sent
    [a, new, (empty), b]."""
    lines = [
        _codex_message("user", "q"),
        _codex_message("assistant", "a"),
        _codex_message("assistant"),
        _codex_message("assistant", "b"),
    ]
    session = load_bytes(("\n".join(lines) + "\n").encode(), "/tmp/rollout.jsonl")
    m = session.messages[1]
    first, second = m.blocks
    new = block_from_anthropic({"type": "text", "text": "new"})
    messages = list(session.messages)
    messages[1] = m.with_blocks((first, new, second))
    edited = dataclasses.replace(session, messages=messages)

    def shape(s: Session) -> list[tuple[str, str]]:
        return [
            (i.get("role", ""), "".join(p.get("text", "") for p in i.get("content") or []))
            for i in _sent_items(s)
        ]

    assert shape(edited) == [("user", "q"), ("assistant", "a"), ("assistant", "new"),
                             ("assistant", ""), ("assistant", "b")]  # fmt: skip
    written = load_bytes(edited.export().data, "/tmp/rollout.jsonl")
    assert shape(written) == shape(edited)


def test_a_fix_of_a_compacted_history_is_left_out_and_previewed_as_refused():
    """The fix of an empty text inside the history a compacted line stands for: Codex
    rebuilds that history from the line, which is written as it was, so the plan leaves the
    fix out (`Fix.frozen`, the writer's words) and apply does nothing; the preview (the
    TUI's, the fix list's) says what it would do and why it cannot, instead of raising."""
    history = [_codex_message("user", "q"), _codex_message("assistant", "")]
    lines = [_codex_compacted(history), _codex_message("user", "next")]
    session = load_bytes(("\n".join(lines) + "\n").encode(), "/tmp/rollout.jsonl")
    wb = Workbench(session)
    (fix,) = [f for f in wb.plan.fixes if f.code == "empty-content"]
    assert not fix.actionable and "compaction on line 1" in (fix.frozen or "")
    assert wb.apply(fix) is None and wb.apply_all() is None
    shown = wb.preview(fix)
    assert shown.diff == []
    assert shown.description[-1] == f"This fix cannot be written: {fix.frozen}."
    assert len(shown.description) > 1  # what it would change comes first
