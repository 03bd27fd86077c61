"""Pilot test: after a fix merges two Codex messages (an empty user message dropped between
two assistant turns), the merged message is named by the lines of both: its raw JSON in the
detail pane (`J`) holds the second's items, the one of no content among them (before, it
held the first message's line only, and the writer dropped that item)."""

from __future__ import annotations

from tests.engine.test_merge_clients import ORIGINAL
from tests.tui.tui_helpers import apply_first_fix, opened, raw_json_of


async def test_the_raw_json_of_a_merged_message_holds_the_records_of_both():
    async with opened(ORIGINAL, (120, 40)) as (app, pilot):
        msgs = await apply_first_fix(pilot, "empty-content")
        merged = next(k for k, m in enumerate(msgs) if m.role == "assistant" and m.live)
        assert [b.data["text"] for b in msgs[merged].blocks] == [
            "A: I will run the tests.",
            "B: done.",
        ]
        raw = await raw_json_of(pilot, merged)
        assert "A: I will run the tests." in raw and "B: done." in raw
        assert raw.count('"role": "assistant"') == 3, raw  # A, the item of no content, B
        assert "09:14:42" in raw


async def test_the_raw_json_of_a_regrouped_codex_message_holds_the_lines_of_both():
    """output_before_call.jsonl: the fix moves the early output (line 14) after its call
    (line 15) and drops the message it leaves empty; the reasoning item before it (line 13)
    and the call are then read back as one message, whose raw JSON (`J`) holds both lines
    (before, the reasoning's only: the call's line 15 was missing)."""
    path = ORIGINAL.parent / "output_before_call.jsonl"
    async with opened(path, (120, 40)) as (app, pilot):
        msgs = await apply_first_fix(pilot, "misplaced-tool-result")
        joined = next(
            k
            for k, m in enumerate(msgs)
            if m.live
            and [b.type for b in m.blocks] == ["reasoning", "tool_use"]
            and m.blocks[1].tool_id == "call_H3dKf8sJ0eWq5RtY2uIo6PaL"
        )
        raw = await raw_json_of(pilot, joined)
        assert "Checking the slow integration tests too" in raw  # line 13, the reasoning
        assert "pytest -q -m slow tests/integration" in raw  # line 15, the call
        assert '"early output"' not in raw  # line 14, the output, is a message of its own
