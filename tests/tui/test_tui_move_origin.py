"""Pilot test: after misplaced-tool-result's fix moves a Claude Code result into the user
message right after its call, that message is named by the record the result was read
from too: its raw JSON in the detail pane (`J`) holds the late result's record after its
own (before, it held its own record only, though it shows the late result)."""

from __future__ import annotations

from pathlib import Path

from tests.tui.tui_helpers import apply_first_fix, opened, raw_json_of

LATE = Path(__file__).parents[1] / "fixtures/clients/claude/broken/misplaced-tool-result.jsonl"


async def test_the_raw_json_of_a_message_a_result_moved_into_holds_its_record():
    async with opened(LATE, (120, 40)) as (app, pilot):
        msgs = await apply_first_fix(pilot, "misplaced-tool-result")
        home = next(
            k
            for k, m in enumerate(msgs)
            if m.live
            and any(b.tool_id == "toolu_01BbbbBashLint000000002" for b in m.blocks)
            and m.role == "user"
        )
        assert [b.data["content"] for b in msgs[home].blocks] == ["12 passed", "lint clean (late)"]
        raw = await raw_json_of(pilot, home)
        assert "12 passed" in raw and "lint clean (late)" in raw, raw
        assert raw.index("12 passed") < raw.index("lint clean (late)")  # in file order
        assert "00005eed-0000-4000-8000-000000000004" in raw  # the record of each, by uuid
        assert "00005eed-0000-4000-8000-000000000008" in raw
