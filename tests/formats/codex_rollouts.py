"""Random Codex rollout lines for the loader's property tests: every item type, odd parts,
roles and ids, compactions (with and without a replacement history), rollbacks, events and
lines that are not JSON or not records."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

_IDS = st.sampled_from(["c1", "c2", "c3", "", None])
_TEXT = st.sampled_from(["", " ", "\n", "ok", "look", 3, None])
_TIMES = st.sampled_from(
    ["2025-11-20T10:00:00.000Z", "2025-11-20T10:00:05.000Z", "2025-11-20T09:00:00.000Z", 7]
)


@st.composite
def _part(draw) -> Any:
    kind = draw(
        st.sampled_from(["input_text", "output_text", "input_text", "input_image", "refusal"])
    )
    odd = draw(st.integers(0, 12))
    if odd == 0:
        return draw(st.sampled_from([None, "text", {"text": "no type"}, {"type": 4}]))
    if odd == 1:
        kind = draw(st.sampled_from(["tool_use", "tool_result", "text", "summary_text"]))
    part: dict[str, Any] = {"type": kind}
    if kind != "input_image":
        part["text"] = draw(_TEXT)
    return part


@st.composite
def _payload(draw) -> Any:
    kind = draw(
        st.sampled_from(
            ["message", "message", "function_call", "function_call", "function_call_output"]
            + ["function_call_output", "custom_tool_call", "custom_tool_call_output"]
            + ["local_shell_call", "reasoning", "web_search_call", "ghost_snapshot", "odd"]
        )
    )
    if kind == "odd":
        return draw(st.sampled_from([None, 3, {"no": "type"}, {"type": 5}]))
    item: dict[str, Any] = {"type": kind}
    if kind == "message":
        item["role"] = draw(
            st.sampled_from(["user", "assistant", "assistant", "developer", "system", "odd", 4])
        )
        item["content"] = draw(
            st.one_of(st.lists(_part(), max_size=3), st.sampled_from(["text", None]))
        )
    elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
        item["call_id"] = draw(_IDS)
        item["name"] = "shell"
        item["arguments"] = draw(st.sampled_from(['{"cmd": "ls"}', "not json"]))
        item["input"] = "patch"
        item["action"] = {"command": ["ls"]}
    elif kind.endswith("_output"):
        item["call_id"] = draw(_IDS)
        item["output"] = draw(st.sampled_from(["ok", "", None, {"content": "x"}]))
    elif kind == "reasoning":
        item["summary"] = [{"type": "summary_text", "text": "think"}]
    return item


@st.composite
def rollout_line(draw) -> str:
    kind = draw(
        st.sampled_from(["item"] * 8 + ["event", "rollback", "compacted", "not json", "other"])
    )
    ts = draw(_TIMES)
    if kind == "not json":
        return draw(st.sampled_from(["{oops", "[1, 2]", "", '{"type": 3}']))
    if kind == "item":
        record = {"timestamp": ts, "type": "response_item", "payload": draw(_payload())}
    elif kind == "event":
        record = {"timestamp": ts, "type": "event_msg", "payload": {"type": "token_count"}}
    elif kind == "rollback":
        turns = draw(st.integers(1, 2))
        payload = {"type": "thread_rolled_back", "num_turns": turns}
        record = {"timestamp": ts, "type": "event_msg", "payload": payload}
    elif kind == "compacted":
        history = draw(st.lists(_payload(), max_size=3))
        payload = {"message": "summary"}
        if draw(st.booleans()):
            payload["replacement_history"] = history
        record = {"timestamp": ts, "type": "compacted", "payload": payload}
    else:
        record = {"timestamp": ts, "type": "turn_context", "payload": {"cwd": "/p"}}
    return json.dumps(record)


META = json.dumps(
    {
        "timestamp": "2025-11-20T10:00:00.000Z",
        "type": "session_meta",
        "payload": {"id": "s1", "originator": "codex_cli_rs", "cli_version": "0.58.0"},
    }
)


def response_item(payload: dict[str, Any]) -> str:
    """A rollout line holding one response item."""
    return json.dumps(
        {"timestamp": "2025-11-20T10:00:00Z", "type": "response_item", "payload": payload}
    )
