"""Codex messages whose blocks are made when asked for (`CodexMessage`, the loader's usual
path) are the messages made at load: the same blocks, places, tool ids, plain shape and
block counts, the same findings and numbers under every target (the Codex client's light
twin counting such a message from what the loader read, `clients.codex.light`), whether
their blocks were made before the analysis or not; an untouched or an edited session is
written as the one made at load is."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from repair import analysis, clients, wire
from repair.errors import ExportRefused
from repair.formats import load_bytes
from repair.formats.codex import CodexMessage, CompactRef, ItemRef
from repair.model import Message, Session
from tests.formats.codex_rollouts import META as _META
from tests.formats.codex_rollouts import response_item
from tests.formats.codex_rollouts import rollout_line as _line
from tests.formats.lazy_support import found, made_at_load, message_facts


def _both(lines: list[str]) -> tuple[Session, Session]:
    """The session as loaded, and the same file's with every message made at load."""
    data = "\n".join([_META, *lines]).encode() + b"\n"
    lazy = load_bytes(data, path="rollout.jsonl", format="codex")
    whole = load_bytes(data, path="rollout.jsonl", format="codex")
    return lazy, made_at_load(whole, CodexMessage)


def _origin(o: Any) -> Any:
    if isinstance(o, ItemRef):
        return ("item", o.line, o.part)
    if isinstance(o, CompactRef):
        return ("compacted", o.line, o.item, o.part)
    return o


def _block_facts(m: Message) -> list[tuple]:
    return [
        (b.type, b.data, b.tool_id, b.name, b.is_error, b.src, b.place(), _origin(b.origin))
        for b in m.blocks
    ]


def _entries(session: Session) -> list:
    """What the Codex client sends, counted by its light twin: each message's number and
    each block's entry (by position and index), what it leaves out and answers."""
    req = clients.get("codex").light(session)  # type: ignore[union-attr]
    shape = wire.WIRES["openai-responses"]
    return [
        req.numbering(len(session.messages), shape),
        [
            [req.block_entry(shape, pos, b) for b in m.blocks]
            for pos, m in enumerate(session.messages)
        ],
        [(pos, session.messages[pos].blocks.index(b), why) for pos, b, why in req.left_out],
        sorted(req.answered),
        req.dropped,
    ]


@settings(max_examples=500, deadline=None, derandomize=True, database=None)
@given(
    lines=st.lists(_line(), max_size=12),
    made_first=st.booleans(),
    target=st.sampled_from(["codex", "openai-responses", "openai-chat", "anthropic"]),
)
def test_codex_messages_are_the_ones_made_at_load(lines, made_first, target):
    """Random rollouts (every item type, odd parts, roles and ids, compactions, rollbacks,
    unreadable lines): the same block counts, findings and numbers, messages, blocks, tool
    ids and plain shape as the messages made at load, and the same file written back."""
    lazy, whole = _both(lines)
    if made_first:
        for m in lazy.messages:
            m.blocks  # noqa: B018 (made before the analysis)
    assert [m.block_counts() for m in lazy.messages] == [m.block_counts() for m in whole.messages]
    runs = wire._responses_count  # (the Responses entries of a message as it is)
    assert [runs("user", m) for m in lazy.messages] == [runs("user", m) for m in whole.messages]
    assert found(lazy, target) == found(whole, target)
    assert _entries(lazy) == _entries(whole)
    assert [message_facts(m) for m in lazy.messages] == [message_facts(m) for m in whole.messages]
    assert [m.tool_ids() for m in lazy.messages] == [m.tool_ids() for m in whole.messages]
    assert [m.plain_shape() for m in lazy.messages] == [m.plain_shape() for m in whole.messages]
    assert [_block_facts(m) for m in lazy.messages] == [_block_facts(m) for m in whole.messages]
    assert lazy.export().data == whole.adapter.write(whole).data


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(lines=st.lists(_line(), min_size=1, max_size=12), data=st.data())
def test_an_edited_codex_session_is_written_as_the_one_made_at_load(lines, data):
    """A message dropped and another's blocks reversed, in both sessions alike (blocks not
    made before the edit in the loaded one): the same file written, the same lines left out,
    or the same refusal."""
    lazy, whole = _both(lines)
    drop = data.draw(st.integers(0, len(lazy.messages)))
    turn = data.draw(st.integers(0, len(lazy.messages)))

    def written(session: Session) -> Any:
        msgs = [
            m.with_blocks(m.blocks[::-1]) if k == turn else m
            for k, m in enumerate(session.messages)
            if k != drop
        ]
        try:
            done = session.copy_with(msgs).export()
        except ExportRefused as e:
            return str(e)
        return done.data, done.dropped_records

    assert written(lazy) == written(whole)


def test_a_clean_codex_check_makes_no_block():
    lines = [
        response_item(
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": "be brief"}],
            }
        ),
        response_item(
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
        ),
        response_item({"type": "reasoning", "summary": []}),
        response_item(
            {
                "type": "message",
                "role": "assistant",
                "content": [
                    {"type": "output_text", "text": "a"},
                    {"type": "output_text", "text": "b"},
                ],
            }
        ),
        response_item({"type": "function_call", "call_id": "a", "name": "ls", "arguments": "{}"}),
        response_item({"type": "function_call_output", "call_id": "a", "output": "x"}),
        response_item(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "done"}],
            }
        ),
    ]
    lazy, _whole = _both(lines)
    got = analysis.analyze(lazy)
    assert got.findings == [] and got.numbers == [0, 1, 2, 5, 6] and got.sent == 7
    assert [type(m) for m in lazy.messages] == [CodexMessage] * 5
    assert not any(m.made() for m in lazy.messages)  # type: ignore[attr-defined]
    assert lazy.export().data.endswith(lines[-1].encode() + b"\n")
    call = lazy.messages[2].blocks[3]
    assert (call.type, call.tool_id, call.data["input"]) == ("tool_use", "a", {})


@st.composite
def _plain_line(draw) -> str:
    """A message item of a role Codex sends, of text or of no content (no call, nothing
    Codex repairs): alone on its line, or in a compaction's history."""

    def item() -> dict[str, Any]:
        role = draw(st.sampled_from(["user", "assistant"]))
        kind = "input_text" if role == "user" else "output_text"
        content = draw(st.sampled_from([[], [{"type": kind, "text": "ok"}]]))
        return {"type": "message", "role": role, "content": content}

    ts = "2025-11-20T10:00:00.000Z"
    if draw(st.integers(0, 4)) == 0:
        history = [item() for _ in range(draw(st.integers(0, 3)))]
        payload = {"message": "summary", "replacement_history": history}
        return json.dumps({"timestamp": ts, "type": "compacted", "payload": payload})
    return json.dumps({"timestamp": ts, "type": "response_item", "payload": item()})


@given(
    lines=st.one_of(
        st.lists(_line(), min_size=1, max_size=12), st.lists(_plain_line(), min_size=1, max_size=8)
    )
)
def test_codex_findings_are_numbered_as_codex_sends_the_messages(lines):
    """Where Codex repairs nothing the analysis numbers without its request, unless the
    request holds more than the messages (an item of no content is an entry of its own):
    the numbers `check` prints are those of what Codex sends (fails before `sends_more`:
    an empty item before a finding's message was not counted)."""
    session, _ = _both(lines)
    got = analysis.analyze(session, "codex")
    sent = clients.get("codex").send(session)
    want, _count = sent.numbering(len(session.messages), wire.wire_for("codex"))
    assert got.numbers == want


def test_a_fixed_codex_file_numbers_its_empty_item_as_codex_sends_it():
    """The compacted history's empty user item is message 3 of what Codex sends, before
    the fix (a malformed line: the request is built) and after it (nothing to repair)."""
    from tests.paths import CLIENT_FIXTURES, FIXTURES

    for path in (
        FIXTURES / "fuzz" / "codex_compacted_empty_item_dropped.jsonl",
        CLIENT_FIXTURES / "codex" / "compacted_empty_item_dropped_fixed.jsonl",
    ):
        session = load_bytes(path.read_bytes(), path=str(path), format="codex")
        got = analysis.analyze(session)
        found = [f for f in got.findings if f.code == "empty-content"]
        assert [got.numbers[f.position] for f in found] == [3], path


def test_a_message_as_loaded_is_counted_from_its_loader_once_its_blocks_are_made(monkeypatch):
    """The light twin counts a message as loaded from what its loader read, its blocks made
    (by the pairing, a listing) or not; only a message holding a fault Codex repairs, or a
    copy an edit made, is counted block by block (the property above holds the two ways
    alike)."""
    from repair.clients import codex as client

    def item(payload: dict) -> str:
        return json.dumps(
            {"timestamp": "2025-11-20T10:00:00Z", "type": "response_item", "payload": payload}
        )

    lines = [
        item(
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
        ),
        item({"type": "function_call", "call_id": "a", "name": "ls", "arguments": "{}"}),
        item({"type": "function_call_output", "call_id": "a", "output": "x"}),
        item({"type": "function_call", "call_id": "b", "name": "ls", "arguments": "{}"}),
    ]
    session, _ = _both(lines)
    for m in session.messages:
        m.blocks  # noqa: B018 (made)
    counted: list[int] = []
    by_blocks = client._counted
    monkeypatch.setattr(client, "_counted", lambda m, *a: counted.append(m.uid) or by_blocks(m, *a))
    assert client.light(session).counted.numbers == [0, 1, 2, 3]  # (b's "aborted" output: 4)
    assert counted == [session.messages[3].uid]  # the call Codex answers "aborted"
    counted.clear()
    edited = session.copy_with(
        [session.messages[0].with_blocks(session.messages[0].blocks), *session.messages[1:]]
    )
    client.light(edited)
    assert counted == [edited.messages[0].uid, edited.messages[3].uid]
