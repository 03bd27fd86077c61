"""Pilot test: a fix that would change the history a Codex compaction stands for (Codex
rebuilds it from its `compacted` line) is shown as not applicable, with the reason `fix`
gives; `a` on it changes nothing and says why (no traceback), and `A` applies every other
fix."""

from __future__ import annotations

from tests.cli.test_cli_frozen import CASE, WHY
from tests.tui.tui_helpers import opened, settle, widget_text
from tui.repair_pane import fix_prompts

CANNOT = f"This fix cannot be written: {WHY}."


async def test_a_fix_of_a_compactions_history_is_not_applicable_and_apply_says_why():
    async with opened(CASE, (140, 40)) as (app, pilot):
        main = app.main
        await pilot.press("r")
        await settle(pilot)
        fix = main._selected_fix()
        assert (fix.code, fix.frozen) == ("empty-content", WHY)
        assert "(n/a)" in str(fix_prompts(main.fixes)[main.fixes.index(fix)])
        assert CANNOT in widget_text(app, "#diff").replace("\n", " ")
        before = main.wb.session
        await pilot.press("a")
        await settle(pilot)
        said = [str(n.message) for n in app._notifications]
        assert said[-1] == f"Not applied. {CANNOT}"
        assert not [n for n in app._notifications if n.severity == "error"]
        assert main.wb.session is before and not main.wb.done
        # the malformed line's fix switched to drop (tab) is applied by A; the frozen one is
        # left out
        await pilot.press("down")
        await settle(pilot)
        assert main._selected_fix().code == "malformed"
        await pilot.press("tab")
        await settle(pilot)
        assert main._selected_fix().action == "drop"
        await pilot.press("A")
        await settle(pilot)
        assert [f.code for f in main.wb.applied] == ["malformed"]
        assert not [n for n in app._notifications if n.severity == "error"]
        left = [f for f in main.fixes if f.code == "empty-content"]
        assert [f.frozen for f in left] == [WHY]
