"""opencode messages whose blocks are made when asked for (`PartsMessage`: the loader reads
their tool ids, plain shape, block counts and open calls from the parts) say what their
blocks say once made: the same tool ids, shape, counts and open calls, the same findings
and the same counted request as the same messages with their blocks made before the
analysis, and an untouched or edited session is written the same either way."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from repair import analysis
from repair.clients import opencode as client
from repair.errors import ExportRefused
from repair.formats import opencode
from repair.model import Message, Session
from tests.engine.test_light_sending import _same
from tests.formats.build import load

_TEXTS = st.sampled_from(["", " ", "\n", "ok", "call it"])
_IDS = st.sampled_from(["c1", "c2", "c3", "functions.ls:1", "c 4"])


def _reasoning(text: str, how: str) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "reasoning", "text": text}
    if how == "signed":
        part["metadata"] = {"anthropic": {"signature": "sig"}}
    elif how == "redacted":
        part["metadata"] = {"anthropic": {"redactedData": "xyz"}}
    elif how == "odd":
        part["metadata"] = {"anthropic": "none"}
    return part


def _tool(call_id: str, status: str, end: int | None, how: str) -> dict[str, Any]:
    state: dict[str, Any] = {"status": status, "input": {"p": 1}}
    if status == "completed":
        state["output"] = "out"
    if status == "error":
        state["error"] = "failed"
        if how == "interrupted":
            state["metadata"] = {"interrupted": True, "output": "half"}
    times: dict[str, Any] = {"start": 5}
    if end is not None:
        times["end"] = end
    if how == "compacted":
        times["compacted"] = 9
    if how != "no time":
        state["time"] = times
    part: dict[str, Any] = {"type": "tool", "callID": call_id, "state": state}
    if how != "no name":
        part["tool"] = "ls"
    return part


_part = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _TEXTS),
    st.builds(lambda t: {"type": "text", "text": t, "ignored": True}, _TEXTS),
    st.builds(_reasoning, _TEXTS, st.sampled_from(["unsigned", "signed", "redacted", "odd"])),
    st.builds(
        _tool,
        _IDS,
        st.sampled_from(["completed", "completed", "error", "pending", "running"]),
        st.sampled_from([None, 7, 30, 2_000_000]),
        st.sampled_from(["plain", "plain", "interrupted", "compacted", "no time", "no name"]),
    ),
    st.sampled_from(
        [
            {"type": "step-start"},
            {"type": "step-finish"},
            {"type": "file", "mime": "image/png", "url": "data:x"},
            {"type": "file", "mime": "text/plain", "url": "file:a"},
            {"type": "compaction"},
            {"type": "subtask"},
            {"type": "patch"},
        ]
    ),
    # unreadable parts: the message is shown as malformed
    st.sampled_from(
        [
            {"text": "no type"},
            {"type": "text", "text": 3},
            {"type": "tool", "callID": "c1", "state": {"status": "odd"}},
            {"type": "tool", "callID": "c1", "state": {"status": "completed", "time": 1}},
            {"type": "tool", "state": {}},
        ]
    ),
)


@st.composite
def _messages(draw) -> list[Any]:
    n = draw(st.integers(0, 7))
    out: list[Any] = []
    for k in range(n):
        kind = draw(st.sampled_from(["user", "assistant", "assistant", "assistant", "odd"]))
        if kind == "odd":
            out.append(draw(st.sampled_from([3, {"info": {"role": "system"}, "parts": []}])))
            continue
        info: dict[str, Any] = {"id": f"msg_{draw(st.integers(0, 9))}{k}", "role": kind}
        if draw(st.integers(0, 5)):
            info["time"] = {"created": draw(st.sampled_from([1000, 2000, 3000]))}
        model = draw(st.sampled_from(["m1", "m1", "m2"]))
        if kind == "user":
            info["model"] = {"providerID": "anthropic", "modelID": model}
        else:
            info["providerID"], info["modelID"] = "anthropic", model
            err = draw(st.sampled_from([None, None, None, "aborted", "api"]))
            if err is not None:
                name = "MessageAbortedError" if err == "aborted" else "APIError"
                info["error"] = {"name": name}
        parts = draw(st.lists(_part, max_size=6))
        ids = draw(st.sampled_from(["in order", "shuffled", "some missing"]))
        order = list(range(len(parts)))
        if ids == "shuffled":
            order = draw(st.permutations(order))
        for j, part in enumerate(parts):
            if ids != "some missing" or j % 2:
                part["id"] = f"prt_{order[j]:02d}"
        out.append({"info": info, "parts": parts})
    return out


def _load(entries: list[Any]) -> Session:
    doc = {"info": {"id": "ses_x", "title": "t"}, "messages": entries}
    return load(json.dumps(doc, indent=2).encode() + b"\n", "s.json")


def _made(session: Session) -> Session:
    """The same messages with their blocks made (plain messages: what the blocks say)."""
    made = [
        Message(m.role, m.blocks, m.raw, m.meta, m.hidden, m.malformed, m.src, m.origin, uid=m.uid)
        for m in session.messages
    ]
    return session.copy_with(made)


def _found(session: Session, target: str) -> list[tuple]:
    got = analysis.analyze(session, target)
    return [(f.to_json(), f.position, f.severity) for f in got.findings]


def _block_facts(m: Message) -> list[tuple]:
    return [(b.type, b.data, b.tool_id, b.name, b.is_error, b.src, b.origin) for b in m.blocks]


def _written(session: Session) -> Any:
    try:
        return session.export_bytes()
    except ExportRefused as e:  # the same refusal either way
        return str(e)


@settings(max_examples=500, deadline=None, derandomize=True, database=None)
@given(
    entries=_messages(),
    made_first=st.booleans(),
    target=st.sampled_from(["opencode", "anthropic", "openai-chat"]),
)
def test_opencode_messages_say_what_their_blocks_say(entries, made_first, target):
    """Random messages (steps, texts empty or blank, reasoning of either model, signed,
    redacted or not, tool parts of every status, parts out of id order or without an id,
    failed and aborted messages, unreadable parts and messages): whether the blocks were
    made before the analysis or not, the loader's facts are what the blocks say, and the
    findings, the counted request and the written file are the same."""
    lazy = _load(entries)
    lazy.target = target
    if made_first:
        for m in lazy.messages:
            m.blocks  # noqa: B018 (made before the analysis)
    found = _found(lazy, target)
    counted = client.light(lazy) if target == "opencode" else None
    facts = [
        (m._tool_ids, m._plain_shape, m.block_counts(), client._open_calls(m, lazy.state))
        for m in lazy.messages
        if isinstance(m, opencode.PartsMessage)
    ]
    made = _made(lazy)
    assert facts == [
        (Message.tool_ids(m), m.plain_shape(), m.block_counts(), client._open_calls(m, made.state))
        for m, was in zip(made.messages, lazy.messages, strict=True)
        if isinstance(was, opencode.PartsMessage)
    ]
    assert found == _found(made, target)
    if counted is not None:
        _same(lazy)
        again = client.light(made)
        assert (counted.counted, counted.answered) == (again.counted, again.answered)
        assert [(p, b.bid, w) for p, b, w in counted.changed] == [
            (p, b.bid, w) for p, b, w in again.changed
        ]
    assert [_block_facts(m) for m in lazy.messages] == [_block_facts(m) for m in made.messages]
    assert _written(lazy) == _written(made)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(entries=_messages(), data=st.data())
def test_an_edited_opencode_session_is_written_alike(entries, data):
    """A message dropped and another's blocks reversed, its blocks made before or not: the
    same file written (or the same refusal)."""
    lazy, made = _load(entries), _load(entries)
    if not lazy.messages:
        return
    for m in made.messages:
        m.blocks  # noqa: B018
    drop = data.draw(st.integers(0, len(lazy.messages) - 1))
    turn = data.draw(st.integers(0, len(lazy.messages) - 1))

    def edit(session: Session) -> Session:
        msgs = session.messages
        out = [m.with_blocks(m.blocks[::-1]) if k == turn else m for k, m in enumerate(msgs)]
        return session.copy_with([m for k, m in enumerate(out) if k != drop])

    assert _written(edit(lazy)) == _written(edit(made))


def _session_of_two(call_id: str) -> list[Any]:
    return [
        {
            "info": {"id": "msg_1", "role": "user", "time": {"created": 1000}},
            "parts": [{"id": "prt_1", "type": "text", "text": "list the files"}],
        },
        {
            "info": {
                "id": "msg_2",
                "role": "assistant",
                "time": {"created": 2000},
                "providerID": "anthropic",
                "modelID": "m1",
            },
            "parts": [
                {"id": "prt_2", "type": "step-start"},
                {"id": "prt_3", "type": "text", "text": "I list them"},
                _tool(call_id, "completed", 2000, "plain") | {"id": "prt_4"},
                {"id": "prt_5", "type": "step-finish"},
                {"id": "prt_6", "type": "step-start"},
                {"id": "prt_7", "type": "text", "text": "done"},
            ],
        },
    ]


def test_a_clean_opencode_check_makes_no_block():
    """Two steps: four messages (the call's result one of them), checked without a block."""
    session = _load(_session_of_two("call_1"))
    msgs = session.messages
    assert [type(m) for m in msgs] == [opencode.PartsMessage] * 4
    assert _found(session, "opencode") == []
    assert not any(m.made() for m in msgs)  # type: ignore[attr-defined]
    assert session.export_bytes() == session.state.data
    assert msgs[2].src == {"path": "/messages/1/parts/2/state"}
    assert [m.timestamp for m in msgs] == [1.0, 2.0, 2.0, 2.0]
    assert [b.tool_id for b in msgs[2].blocks] == ["call_1"]


def test_an_id_opencode_rewrites_is_noted_with_its_blocks():
    session = _load(_session_of_two("call:1"))
    msgs = session.messages
    req = client.light(session)
    assert [(pos, b.type, how) for pos, b, how in req.changed] == [
        (1, "tool_use", "its id is sent as call_1"),
        (2, "tool_result", "its id is sent as call_1"),
    ]
    assert [m.made() for m in msgs] == [False, True, True, False]  # type: ignore[attr-defined]
