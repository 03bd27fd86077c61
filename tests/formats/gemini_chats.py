"""Random Gemini CLI chats whose records sit on both sides of the usual shape's edges
(adapter.py `_usual_turns`): odd ids, names, responses, contents, thoughts and call lists,
records written again, `$set` and `$rewindTo` lines."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

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
        st.sampled_from(["ok"] * 20 + ["", " ", None, _ABSENT, [{"text": ""}], [{"text": "a"}], 3])
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
def chats(draw) -> bytes:
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
