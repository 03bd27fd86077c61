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
