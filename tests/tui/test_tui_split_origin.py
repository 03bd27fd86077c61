"""Pilot test: after a fix moves a Codex output home, before the user's text it came after,
the session holds the output and the text as two messages (as the rollout reads back);
the detail pane names each one's own line and time (issue 10 point 5: both named the
text's line)."""

from __future__ import annotations

from tests.formats.test_split_origin import late_output
from tests.tui.tui_helpers import apply_first_fix, opened, timeline, widget_text


async def test_the_detail_of_a_split_output_names_the_outputs_line(tmp_path):
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(late_output())  # line 4: the user's text, line 5: the output
    async with opened(path, (120, 40)) as (app, pilot):
        msgs = await apply_first_fix(pilot, "misplaced-tool-result")
        assert [b.type for b in msgs[2].blocks] == ["tool_result"]
        assert [b.type for b in msgs[3].blocks] == ["text"]
        tl = timeline(app)
        tl.go_to_row(tl.state.table.row_of(2, 0))
        await pilot.pause()
        detail = widget_text(app, "#detail")
        assert "line 5" in detail and "10:00:04" in detail
        assert "line 4" not in detail
        tl.go_to_row(tl.state.table.row_of(3, None))
        await pilot.pause()
        detail = widget_text(app, "#detail")
        assert "line 4" in detail and "10:00:03" in detail
