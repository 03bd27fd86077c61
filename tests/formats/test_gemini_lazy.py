"""Gemini CLI messages whose blocks are made when asked for (`GeminiMessage`, the loader's
usual path) are the messages made at load: the same blocks, places, tool ids, plain shape
and block counts, the same findings and numbers under every target (the Gemini CLI
client's light twin counting them from what the loader read, `clients.gemini_cli.light`),
whether their blocks were made before the analysis or not; an untouched, a fixed or an
edited session is written as the one made at load is."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from repair import analysis, clients, wire
from repair.errors import ExportRefused
from repair.formats import load_bytes
from repair.formats.gemini_cli.adapter import GeminiMessage
from repair.model import Message, Session
from repair.plan import apply_all
from tests.formats.gemini_chats import chats
from tests.formats.lazy_support import found, made_at_load, message_facts


def _both(data: bytes) -> tuple[Session, Session]:
    """The session as loaded, and the same file's with every message made at load."""
    lazy = load_bytes(data, path="chat.jsonl", format="gemini-cli")
    whole = load_bytes(data, path="chat.jsonl", format="gemini-cli")
    return lazy, made_at_load(whole, GeminiMessage)


def _block_facts(m: Message) -> list[tuple]:
    return [
        (b.type, b.data, b.tool_id, b.name, b.is_error, b.src, b.place(), b.origin)
        for b in m.blocks
    ]


def _answer_facts(m: Message) -> list[tuple]:
    """What a finding reads of each block that answers a call (`Message.answers`)."""
    return [
        (bi, b.tool_id, b.bid, b.place())
        for bi, b in enumerate(m.blocks)
        if b.type == "tool_result" or (b.tool_id and b.type != "tool_use")
    ]


def _noted(session: Session) -> list[tuple]:
    """What the writer notes of each block as loaded (by position: block ids differ
    between two loads)."""
    state = session.state
    return [
        (state.part_of.get(b.bid), state.raw_id.get(b.bid), state.original.get(b.bid) is b)
        for m in session.messages
        for b in m.blocks
    ]


def _sent(session: Session) -> list:
    """What the Gemini CLI client sends, counted by its light twin: each message's number,
    and where it closes the history."""
    req = clients.get("gemini-cli").light(session)  # type: ignore[union-attr]
    return [req.numbering(len(session.messages), wire.WIRES["gemini"]), req.added_after]


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(
    data=chats(),
    made_first=st.booleans(),
    target=st.sampled_from(["gemini-cli", "gemini", "anthropic"]),
)
def test_gemini_messages_are_the_ones_made_at_load(data, made_first, target):
    """Random chats (records in the usual shape and next to it, written again, rewound,
    replaced by a `$set`): the same findings, numbers, counts, messages, blocks and tool
    ids as the messages made at load, and the same file written back."""
    lazy, whole = _both(data)
    # the calls as a finding names them, read from the records before any block is made;
    # and the results (with the bids their blocks will have, `GeminiMessage.answers`)
    assert [m.calls() for m in lazy.messages] == [m.calls() for m in whole.messages]
    answers = [m.answers() for m in lazy.messages]
    for m, said in zip(lazy.messages, answers, strict=True):  # the first ones left out
        assert said is None or all(m.answers(k) == said[k:] for k in range(len(said) + 1))
    if made_first:
        for m in lazy.messages:
            m.blocks  # noqa: B018 (made before the analysis)
    assert [m.block_counts() for m in lazy.messages] == [m.block_counts() for m in whole.messages]
    assert _sent(lazy) == _sent(whole)
    assert found(lazy, target) == found(whole, target)
    assert [m.tool_ids() for m in lazy.messages] == [m.tool_ids() for m in whole.messages]
    assert [m.plain_shape() for m in lazy.messages] == [m.plain_shape() for m in whole.messages]
    assert [message_facts(m) for m in lazy.messages] == [message_facts(m) for m in whole.messages]
    assert [_block_facts(m) for m in lazy.messages] == [_block_facts(m) for m in whole.messages]
    for m, said in zip(lazy.messages, answers, strict=True):
        assert said is None or said == _answer_facts(m)
    assert _noted(lazy) == _noted(whole)
    assert lazy.export_bytes() == whole.export_bytes() == data


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(data=chats(), picks=st.data())
def test_an_edited_gemini_session_is_written_as_the_one_made_at_load(data, picks):
    """Every finding fixed, or a message dropped and another's blocks reversed, in both
    sessions alike (blocks not made before the edit in the loaded one): the same file
    written, the same records left out, or the same refusal."""
    lazy, whole = _both(data)
    drop = picks.draw(st.integers(0, len(lazy.messages)))
    turn = picks.draw(st.integers(0, len(lazy.messages)))

    def written(session: Session, fix: bool) -> Any:
        if fix:
            edited, _ = apply_all(session)
        else:
            msgs = [
                m.with_blocks(m.blocks[::-1]) if k == turn else m
                for k, m in enumerate(session.messages)
                if k != drop
            ]
            edited = session.copy_with(msgs)
        try:
            done = edited.export()
        except ExportRefused as e:
            return str(e)
        return done.data, done.dropped_records

    for fix in (False, True):
        assert written(lazy, fix) == written(whole, fix)


def _line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def test_a_clean_gemini_check_makes_no_block():
    """A chat in the usual shape (calls answered once, in the gemini record's own
    toolCalls): a check under the client target reads no message's blocks."""
    call = {
        "id": "ls__c1",
        "name": "ls",
        "args": {},
        "result": [{"functionResponse": {"id": "ls__c1", "name": "ls", "response": {}}}],
    }
    lines = [
        {"sessionId": "s-1", "projectHash": "ab" * 32},
        {"id": "u", "type": "user", "content": [{"text": "go"}]},
        {"id": "g", "type": "gemini", "content": "looking", "toolCalls": [call]},
        {"id": "g2", "type": "gemini", "content": "done"},
    ]
    s = load_bytes(b"".join(map(_line, lines)), path="chat.jsonl", format="gemini-cli")
    assert [type(m) for m in s.messages] == [Message, GeminiMessage, GeminiMessage, GeminiMessage]
    assert [m.tool_ids() for m in s.messages] == [((), ()), (("c1",), ()), ((), ("c1",)), ((), ())]
    assert analysis.analyze(s).findings == []
    assert not any(m.made() for m in s.messages[1:])  # type: ignore[attr-defined]
    assert [[b.tool_id for b in m.blocks] for m in s.messages] == [
        [None],
        [None, "c1"],
        ["c1"],
        [None],
    ]


def test_a_chat_answered_twice_is_checked_without_its_blocks():
    """Gemini CLI 0.61 writes each result twice (in the gemini record's toolCalls and in a
    user record): each second copy is a duplicate-tool-result naming its call, the model
    message holding the calls named from its records and the user message holding the
    results read from its records, neither's blocks made. The findings are those a whole
    analysis makes from the blocks (their keys: the blocks' bids, reserved when read)."""
    calls = [
        {
            "id": f"c{k}",
            "name": name,
            "args": {},
            "result": [{"functionResponse": {"id": f"c{k}", "name": "ls", "response": {}}}],
        }
        for k, name in ((1, "ls"), (2, 7))  # (a name that is no string reads "?")
    ]
    answers = [c["result"][0] for c in calls]
    lines = [
        {"sessionId": "s-1", "projectHash": "ab" * 32},
        {"id": "u", "type": "user", "content": [{"text": "go"}]},
        {"id": "g", "type": "gemini", "content": "looking", "toolCalls": calls},
        {"id": "r", "type": "user", "content": answers},
        {"id": "g2", "type": "gemini", "content": "done"},
    ]
    s = load_bytes(b"".join(map(_line, lines)), path="chat.jsonl", format="gemini-cli")
    asked = s.messages[1]
    assert type(asked) is GeminiMessage and asked.tool_ids() == (("c1", "c2"), ())
    found = analysis.analyze(s).findings
    assert [(f.code, f.tool_use_id) for f in found] == [
        ("duplicate-tool-result", "c1"),
        ("duplicate-tool-result", "c2"),
    ]
    assert found[0].detail.startswith("another tool_result for tool_use c1 (ls); ")
    assert found[1].detail.startswith("another tool_result for tool_use c2 (?); ")
    home = s.messages[2]
    assert type(home) is GeminiMessage
    assert [f.source.line for f in found] == [4, 4] and [f.block_index for f in found] == [2, 3]
    assert not asked.made() and not home.made()
    assert asked.calls() == [(b.tool_id, b.name) for b in asked.blocks if b.type == "tool_use"]
    assert analysis.analyze(s, whole=True).findings == found
