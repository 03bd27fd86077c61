"""Gemini CLI records in the usual shape have their blocks made straight from the record
(`_usual_turns`: no parts list, no pass of `stable_ids` or `curated_out` over them); the
messages, blocks, places, what the writer notes of each block, the findings and what a fix
writes are those of the long way (`record_turns`, `_turn_blocks`), on random chats whose
records sit on both sides of the usual shape's edges."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings

from repair.analysis import analyze
from repair.errors import ExportRefused
from repair.formats import load_bytes
from repair.formats.gemini_cli import adapter
from repair.plan import apply_all
from tests.formats.gemini_chats import chats


def _said(session) -> Any:
    """Every message and block as loaded, with what the writer notes of each block (by
    position: block ids differ between two loads)."""
    state = session.state
    where = {
        b.bid: (mi, bi) for mi, m in enumerate(session.messages) for bi, b in enumerate(m.blocks)
    }
    out = []
    for m in session.messages:
        blocks = [
            (b.type, b.data, b.tool_id, b.name, b.is_error, b.src, b.origin, b.place())
            for b in m.blocks
        ]
        noted = [(state.part_of.get(b.bid), state.raw_id.get(b.bid)) for b in m.blocks]
        out.append((m.role, m.hidden, m.malformed, m.meta, m.src, m.origin, m.raw, blocks, noted))
    recs = {k: [where[bid] for bid in bids] for k, bids in state.rec_bids.items()}
    msgs = {
        k: sorted(session.messages.index(m) for m in session.messages if m.uid in uids)
        for k, uids in state.rec_msgs.items()
    }
    return out, recs, msgs, state.skipped


def _both(data: bytes) -> tuple[Any, Any]:
    usual = load_bytes(data, path="chat.jsonl", format="gemini-cli")
    with pytest.MonkeyPatch.context() as m:
        m.setattr(adapter, "_usual_turns", lambda rec, cut: None)
        long = load_bytes(data, path="chat.jsonl", format="gemini-cli")
    return usual, long


@settings(max_examples=300, deadline=None)
@given(data=chats())
def test_usual_records_load_as_the_long_way_loads_them(data):
    usual, long = _both(data)
    assert _said(usual) == _said(long)
    for target in (None, "gemini"):
        got = [f.to_json() for f in analyze(usual, target).findings]
        assert got == [f.to_json() for f in analyze(long, target).findings]
    assert usual.export_bytes() == long.export_bytes() == data
    assert _fixed(usual) == _fixed(long)


def _fixed(session) -> Any:
    """What a fix of every finding writes, or the refusal to write it."""
    fixed, _ = apply_all(session)
    try:
        return fixed.export_bytes()
    except ExportRefused as e:  # the same refusal either way
        return type(e).__name__, str(e)


def test_a_usual_chat_is_read_the_short_way(monkeypatch):
    """The usual records (a gemini record with calls and their results, the user record
    of the same responses) do not go the long way: the property above compares two ways."""
    lines = [
        {"sessionId": "s-1", "projectHash": "ab" * 32},
        {"id": "u", "type": "user", "content": [{"text": "go"}]},
        {
            "id": "g",
            "type": "gemini",
            "content": "looking",
            "toolCalls": [
                {
                    "id": "ls__c1",
                    "name": "ls",
                    "args": {},
                    "result": [{"functionResponse": {"id": "ls__c1", "name": "ls"}}],
                }
            ],
        },
        {"id": "r", "type": "user", "content": [{"functionResponse": {"id": "c1", "name": "ls"}}]},
    ]
    data = b"".join(json.dumps(x).encode() + b"\n" for x in lines)
    long_way: list[str] = []
    turns = adapter.record_turns
    monkeypatch.setattr(adapter, "record_turns", lambda rec: long_way.append(rec.id) or turns(rec))
    s = load_bytes(data, path="chat.jsonl", format="gemini-cli")
    assert long_way == ["u"]
    assert [[b.tool_id for b in m.blocks] for m in s.messages] == [
        [None],
        [None, "c1"],
        ["c1", "c1"],
    ]
