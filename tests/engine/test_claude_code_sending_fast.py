"""The claude-code emulation's shortcuts (a user message merged from records without text
is not merged record by record; an assistant message whose calls all have a result is not
grouped by record; a message kept whole is sent as it came) send what the long way sends."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repair.clients import claude_code
from repair.model import Message, block_from_anthropic

_IDS = st.sampled_from(["t1", "t2", "t3", "t4", None])
_item = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.sampled_from(["a", "b\n", " ", ""])),
    st.sampled_from(["plain string", " "]),
    st.builds(lambda i: {"type": "tool_use", "id": i, "name": "ls", "input": {}}, _IDS),
    st.builds(lambda i: {"type": "tool_result", "tool_use_id": i, "content": "r"}, _IDS),
    st.just({"type": "thinking", "thinking": "hm"}),
)


@st.composite
def _message(draw) -> Message:
    role = draw(st.sampled_from(["user", "assistant", "user", "assistant"]))
    items = draw(st.lists(_item, max_size=5))
    blocks = []
    for item in items:
        b = block_from_anthropic(item)
        b.origin = draw(st.integers(0, 2))  # the record it was read from
        blocks.append(b)
    return Message(role, tuple(blocks), hidden=draw(st.sampled_from([False] * 5 + [True])))


def _sent(messages: list[Message]) -> Any:
    req = claude_code._send(messages)
    return (
        [
            (
                sm.role,
                [(sb.data, id(sb.block), sb.type, sb.tool_id, sb.name) for sb in sm.blocks],
                sm.positions,
            )
            for sm in req.messages
        ],
        [(p, id(b), why) for p, b, why in req.left_out],
        req.answered,
    )


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(messages=st.lists(_message(), max_size=8))
def test_the_shortcuts_send_what_the_long_way_sends(messages):
    fast = _sent(messages)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(claude_code, "_nothing_to_join", lambda m: False)
        mp.setattr(claude_code, "_all_resolved", lambda m, resolved: False)
        mp.setattr(claude_code, "_KEEP_WHOLE", False)
        assert _sent(messages) == fast
