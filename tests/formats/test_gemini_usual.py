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
from hypothesis import strategies as st

from repair.analysis import analyze
from repair.formats import load_bytes
from repair.formats.gemini_cli import adapter
from repair.plan import apply_all

# most draws are on the usual side of each edge, so that many records are usual
_IDS = st.sampled_from(["c1", "c2", "c3", "read_file__c4", "ls__c5"] * 6 + ["", None, 5])
_NAMES = st.sampled_from(["read_file", "ls", "ls", None, 4])


@st.composite
def _response(draw) -> Any:
    shape = draw(st.integers(0, 19))
    if shape == 0:
        return draw(st.sampled_from(["text", 3, None, {}, {"text": ""}, {"text": "t"}]))
    resp: dict[str, Any] = {"id": draw(_IDS), "name": draw(_NAMES)}
    resp["response"] = draw(
        st.sampled_from([{"output": "out"}, {"error": "bad"}, {"content": [1]}, "x", None])
    )
    part: dict[str, Any] = {"functionResponse": resp}
    if shape == 1:
        part[draw(st.sampled_from(["thought", "text", "functionCall"]))] = draw(
            st.sampled_from([True, "", {"name": "ls"}, None])
        )
    return part


_RESULT = st.one_of(
    st.lists(_response(), min_size=1, max_size=3),
    st.sampled_from([None, "", "out", "out", "out", [], {"x": 1}, 5]),
)


@st.composite
def _call(draw) -> Any:
    if draw(st.integers(0, 29)) == 0:
        return draw(st.sampled_from([None, "call", 3]))
    call: dict[str, Any] = {"name": draw(_NAMES), "args": {"p": 1}}
    tid = draw(_IDS)
    if tid is not None or draw(st.booleans()):
        call["id"] = tid
    if draw(st.integers(0, 9)):
        call["result"] = draw(_RESULT)
    return call


_ABSENT = object()


@st.composite
def _record(draw, rid: str, stamp: str) -> Any:
    kind = draw(st.sampled_from(["user"] * 4 + ["gemini"] * 6 + ["info", "odd"]))
    rec: dict[str, Any] = {"id": rid, "timestamp": stamp, "type": kind}
    if kind == "odd":
        rec["type"] = draw(st.sampled_from([None, "model", 3]))
        rec["content"] = "x"
        return rec
    if kind == "user":
        rec["content"] = draw(
            st.one_of(
                st.lists(_response(), min_size=1, max_size=3),
                st.sampled_from(["go", "/cmd", "", "  ", None, 4, [{"text": "hi"}, "there"]]),
            )
        )
        return rec
    content = draw(
        st.sampled_from(["ok"] * 20 + ["", None, _ABSENT, [{"text": ""}], [{"text": "a"}], 3])
    )
    if content is not _ABSENT:
        rec["content"] = content
    thoughts = draw(
        st.sampled_from(
            [_ABSENT] * 30 + [None, [], [{"subject": "s", "description": "d"}], "x", {}, [{}]]
        )
    )
    if thoughts is not _ABSENT:
        rec["thoughts"] = thoughts
    calls = draw(st.one_of(st.lists(_call(), max_size=3), st.sampled_from([_ABSENT, None, "x", 0])))
    if calls is not _ABSENT:
        rec["toolCalls"] = calls
    return rec


@st.composite
def _chat(draw) -> bytes:
    lines: list[Any] = [{"sessionId": "s-1", "projectHash": "ab" * 32, "kind": "main"}]
    n = draw(st.integers(1, 9))
    for i in range(n):
        rid = f"r{draw(st.integers(0, i))}"  # now and then a record written again
        lines.append(draw(_record(rid, f"2026-11-23T08:00:{i:02d}.000Z")))
        extra = draw(st.integers(0, 19))
        if extra == 0:
            lines.append({"$set": {"messages": [x for x in lines[1:] if "id" in x][-3:]}})
        elif extra == 1:
            lines.append({"$rewindTo": f"r{draw(st.integers(0, i))}"})
        elif extra == 2:
            lines.append({"$set": {"lastUpdated": "now"}})
    return b"".join(json.dumps(x).encode() + b"\n" for x in lines)


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
        m.setattr(adapter, "_usual", lambda obj: False)
        long = load_bytes(data, path="chat.jsonl", format="gemini-cli")
    return usual, long


@settings(max_examples=300, deadline=None)
@given(data=_chat())
def test_usual_records_load_as_the_long_way_loads_them(data):
    usual, long = _both(data)
    assert _said(usual) == _said(long)
    for target in (None, "gemini"):
        got = [f.to_json() for f in analyze(usual, target).findings]
        assert got == [f.to_json() for f in analyze(long, target).findings]
    assert usual.export_bytes() == long.export_bytes() == data
    fixed, _ = apply_all(usual)
    fixed_long, _ = apply_all(long)
    assert fixed.export_bytes() == fixed_long.export_bytes()


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
