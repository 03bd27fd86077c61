"""Pilot tests for a TUI the user can trust at first sight (issue 10): the problem named on
the first screen, time and time travel on the rows, no key that loses applied fixes, the fix
you see is the fix you apply, 80x24, and the keys users expect."""

from __future__ import annotations

import json
import re
import shutil
import threading

import pytest

from repair.formats import load_session
from tests.paths import SAMPLES
from tests.tui.tui_helpers import opened, settle, timeline, wait_ready, widget_text
from tui import main_screen
from tui.app import HistviewApp
from tui.cli import main
from tui.fix_lines import ACTION_WIDTH, fix_prompts
from tui.lanes import LANE_KINDS, OVERFLOW, TRAVEL, legend_sample
from tui.repair_pane import RepairPane, _changed_first
from tui.screens import ConfirmScreen, HelpScreen

ROO_TT = SAMPLES / "roo_subtask_delegation_duplicate.json"  # results stamped before the call
SPLIT = SAMPLES / "anthropic_parallel_results_split.json"  # a warning, no error
CLAUDE = SAMPLES / "claude_code_parallel_interrupted.jsonl"
TODO_ID = "toolu_01152cTe8r0khCEr7n1AyOHF"  # update_todo_list, answered twice
TASK_ID = "toolu_01RuT11NCue1cr3McRTrKwtP"  # new_task


@pytest.fixture
def roo_copy(tmp_path):
    dst = tmp_path / ROO_TT.name
    shutil.copy(ROO_TT, dst)
    return dst


def _line(app, row: int) -> str:
    tl = timeline(app)
    strip = tl.render_line(tl.view.index(row) - tl.scroll_offset.y)
    return "".join(seg.text for seg in strip)


def _row(app, mi: int, bi: int | None = None) -> int:
    return timeline(app).state.table.row_of(mi, bi)


# ---------------------------------------------------------------- 1. the first screen


async def test_first_screen_is_on_the_first_error_and_names_the_problems(roo_copy):
    async with opened(roo_copy, (80, 24)) as (app, pilot):
        row = timeline(app).current_row
        assert (row.mi, row.bi) == (7, 0) and row.severity == "error"
        detail = widget_text(app, "#detail")
        # its finding comes first in the detail pane, before the message's other findings
        assert detail.index("duplicate-tool-result") < detail.index("consecutive-same-role")
        summary = widget_text(app, "#summary")
        assert "2 duplicate results (update_todo_list, new_task)" in summary
        assert summary.index("duplicate results") < summary.index("stamped before")


async def test_first_screen_goes_to_a_warning_when_there_is_no_error():
    async with opened(SPLIT, (120, 40)) as (app, pilot):
        row = timeline(app).current_row
        assert (row.mi, row.bi, row.severity) == (3, 0, "warning")
        assert "1 result away from its call (run_command)" in widget_text(app, "#summary")


async def test_a_clean_session_says_so(tmp_path):
    path = tmp_path / "clean.json"
    path.write_text('[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]')
    async with opened(path, (80, 24)) as (app, pilot):
        assert "No problems found in 2 messages: every call" in widget_text(app, "#summary")
        assert timeline(app).current_row_index == 0


# two results sent as two tool messages, held as one message (as the header counts them)
CLEAN_CHAT = [
    {"role": "user", "content": "hi"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": f"call_{k}", "type": "function", "function": {"name": k, "arguments": "{}"}}
            for k in "ab"
        ],
    },
    {"role": "tool", "tool_call_id": "call_a", "content": "x"},
    {"role": "tool", "tool_call_id": "call_b", "content": "y"},
    {"role": "assistant", "content": "done"},
]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_a_clean_summary_counts_as_the_header_does(tmp_path, size):
    """The clean line names the file's messages and, where the target receives another
    number, the one the header and `histview check` give as sent."""
    path = tmp_path / "clean_chat.json"
    path.write_text(json.dumps(CLEAN_CHAT))
    async with opened(path, size) as (app, pilot):
        header = widget_text(app, "#header")
        assert "4 msgs · 5 sent" in header or "5 sent" in header
        summary = widget_text(app, "#summary")
        assert "No problems found in 4 messages (5 sent): every call answered in order." in summary


# ---------------------------------------------------------------- 2. time and time travel


@pytest.mark.parametrize(
    "size,msg7,travel_result",
    [((80, 24), "-2.8s↶", "-1.9s↶"), ((120, 40), "09:18:43↶", "09:18:43↶")],
)
async def test_time_column_and_time_travel_marks(size, msg7, travel_result):
    app = HistviewApp(str(ROO_TT))
    async with app.run_test(size=size) as pilot:
        await wait_ready(pilot)
        assert msg7 in _line(app, _row(app, 7))  # out of order with message 6
        assert travel_result in _line(app, _row(app, 7, 1))  # stamped before its call
        clock = "09:18:46 " if size[0] >= 120 else "+0.9s "  # message 6: in order
        assert clock in _line(app, _row(app, 6)) and "↶" not in _line(app, _row(app, 6))


async def test_a_result_row_shows_its_own_time_where_the_format_has_one():
    async with opened(CLAUDE, (120, 40)) as (app, pilot):
        s = app.main.session
        lint = next(bi for bi, b in enumerate(s.messages[2].blocks) if "dl7d" in b.tool_id)
        # the lint result's record (line 8) is 7.5 s younger than its message's first record
        assert "09:14:19" in _line(app, _row(app, 2, lint))
        assert "09:14:11" in _line(app, _row(app, 2)) and "09:14:19" not in _line(app, _row(app, 2))


async def test_travel_lane_stands_out_on_an_error_row_and_every_severity_shows():
    async with opened(ROO_TT, (120, 40)) as (app, pilot):
        tl = timeline(app)
        r = _row(app, 7, 0)
        assert tl.state.table.rows[r].severity == "error"
        states = {st for _ch, st in tl.state.lanes.cells(r, 6)}
        assert TRAVEL in states
        line = _line(app, r)
        assert line.startswith("●▲")  # the error and the warning of the row
        # the lane's travel stretch is drawn in its own style
        strip = tl.render_line(tl.view.index(r) - tl.scroll_offset.y)
        travel_style = tl._style("lane--travel")
        assert any(seg.style and seg.style.color == travel_style.color for seg in strip)


async def test_help_legend_is_what_the_gutter_draws(demo_copy):
    async with opened(demo_copy, (120, 40)) as (app, pilot):
        tl = timeline(app)
        legend = tl.legend()
        # every glyph the gutter draws, in every state, is in that state's legend sample
        lanes = tl.state.lanes
        for ri in range(len(tl.state.table.rows)):
            for ch, st in lanes.cells(ri, 6):
                if st is not None and ch != "┼":
                    assert ch in legend_sample(st), (ch, st)
        # ... and the legend draws each in the timeline's own style
        lane_entries = legend[-len(LANE_KINDS) - 1 :]
        for (glyph, what, style), (state, (_g, meaning)) in zip(
            lane_entries, LANE_KINDS.items(), strict=False
        ):
            assert (glyph, what, style) == (
                legend_sample(state),
                meaning,
                tl._style(f"lane--{state}"),
            )
        assert lane_entries[-1][0] == "»" and lane_entries[-1][2] == tl._style(f"lane--{OVERFLOW}")
        sev = {what: style for _g, what, style in legend[:3]}
        assert sev == {s: tl._style(f"timeline--{s}") for s in ("error", "warning", "info")}
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = widget_text(app.screen, "#help-text")
        words = " ".join(text.split())  # a long meaning goes on on the next row
        for glyph, what, _style in tl.legend():
            assert glyph in text and what in words


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_a_long_help_line_goes_on_under_its_own_text(demo_copy, size):
    async with opened(demo_copy, size) as (app, pilot):
        await pilot.press("question_mark")
        rows = widget_text(app.screen, "#help-text").splitlines()
        quit_row = next(i for i, r in enumerate(rows) if r.startswith("q ") and "quit" in r)
        column = rows[quit_row].index("quit")
        goes_on = rows[quit_row + 1]
        assert goes_on.strip() and goes_on[:column].strip() == ""
        assert " ".join(rows[quit_row][column:].split() + goes_on.split()) == (
            "quit (or back to the picker); asks before losing fixes"
        )


# ---------------------------------------------------------------- 3. nothing lost by a key


@pytest.mark.parametrize("how", ["ctrl+q", "ctrl+c", "palette"])
async def test_every_quit_asks_when_fixes_are_not_exported(demo_copy, how):
    async with opened(demo_copy, (80, 24)) as (app, pilot):
        await pilot.press("A")
        await settle(pilot)
        if how == "palette":
            await app.run_action("quit")  # what the palette's Quit runs
        else:
            await pilot.press(how)
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        # the safe answer has the focus: enter keeps the work
        assert app.screen.focused.id == "no"
        await pilot.press("enter")
        await pilot.pause()
        assert app.is_running and app.main.wb.done
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.press("y")
        await settle(pilot)
        await pilot.pause()
        assert not app.is_running


async def test_ctrl_q_over_the_reload_question_asks_to_quit(demo_copy):
    """ctrl+q while "Reload the file and lose them?" is asked is not lost: the question
    becomes the quit question (the safe answer focused), and y quits."""
    async with opened(demo_copy, (80, 24)) as (app, pilot):
        await pilot.press("A")
        await settle(pilot)
        await pilot.press("R")
        await pilot.pause()
        assert "Reload" in str(app.screen.query_one("#confirm-question").render())
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen) and app.screen.focused.id == "no"
        assert "Quit anyway?" in str(app.screen.query_one("#confirm-question").render())
        assert sum(isinstance(s, ConfirmScreen) for s in app.screen_stack) == 1
        await pilot.press("y")
        await settle(pilot)
        await pilot.pause()
        assert not app.is_running


async def test_overwrite_confirmation_focuses_cancel(demo_copy):
    out = demo_copy.with_name("demo_session.out.json")
    out.write_text("keep me")
    async with opened(demo_copy, (80, 24)) as (app, pilot):
        await pilot.press("A", "e")
        await settle(pilot)
        await pilot.pause()
        app.screen.query_one("#export-output").value = str(out)  # (a name typed: taken)
        await pilot.click("#export-ok")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen) and app.screen.focused.id == "no"
        await pilot.press("enter")
        await pilot.pause()
    assert out.read_text() == "keep me"


async def test_search_typed_while_loading_runs_when_the_file_is_read(demo_copy, monkeypatch):
    gate = threading.Event()
    real = main_screen.load_session

    def slow(*args, **kw):
        gate.wait(10)
        return real(*args, **kw)

    monkeypatch.setattr(main_screen, "load_session", slow)
    app = HistviewApp(str(demo_copy))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("slash", *"toolu", "enter")
        await pilot.pause()
        assert app.is_running and app.main.session is None
        said = [n.message for n in app._notifications]
        assert said == ["Still reading the file: the search for “toolu” runs when it is read."]
        gate.set()
        await wait_ready(pilot)
        await app.workers.wait_for_complete()
        await pilot.pause()
        # the search typed while the file was read ran on every row
        assert app.main.search is not None and app.main.search.query == "toolu"
        await pilot.press("slash", *"toolu_06X", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert (timeline(app).current_row.mi, timeline(app).current_row.bi) == (13, 0)


async def test_search_on_the_cannot_open_screen_does_not_crash(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text('[{"role": "user", "content": "hi"}')
    async with opened(bad, (80, 24)) as (app, pilot):
        await pilot.press("slash", *"abc", "enter", "n", "J", "y", "r", "f")
        await settle(pilot)
        await pilot.pause()
        assert app.is_running and "Cannot open" in widget_text(app, "#load-error")


async def test_export_to_a_copy_warns_when_the_source_changed(demo_copy):
    app = HistviewApp(str(demo_copy))
    out = demo_copy.with_name("demo_session.fixed.json")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        await pilot.press("A")
        await settle(pilot)
        demo_copy.write_bytes(demo_copy.read_bytes() + b"\n")
        await pilot.press("e")
        await settle(pilot)
        await pilot.pause()
        await pilot.click("#export-ok")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "changed on disk" in app.screen.question
        await pilot.press("n")
        await pilot.pause()
        assert not out.exists()
        await pilot.press("e")
        await settle(pilot)
        await pilot.pause()
        await pilot.click("#export-ok")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("y")
        await settle(pilot)
        await pilot.pause()
        assert out.exists() and app.main.exported is app.main.wb.session


async def test_export_to_a_copy_of_an_unchanged_source_does_not_ask(demo_copy):
    async with opened(demo_copy, (120, 40)) as (app, pilot):
        await pilot.press("A", "e")
        await settle(pilot)
        await pilot.pause()
        await pilot.click("#export-ok")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
        assert demo_copy.with_name("demo_session.fixed.json").exists()


async def test_reload_reads_the_file_again_and_asks_before_losing_fixes(demo_copy):
    async with opened(demo_copy, (120, 40)) as (app, pilot):
        n = len(app.main.session.messages)
        await pilot.press("A", "R")
        await settle(pilot)
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen) and app.screen.focused.id == "no"
        await pilot.press("n")
        assert app.main.wb.done
        # the file grows on disk; R and yes read it again, the fixes are gone
        doc = json.loads(demo_copy.read_text())
        doc.append({"role": "user", "content": "one more", "ts": doc[-1]["ts"] + 1000})
        demo_copy.write_text(json.dumps(doc))
        await pilot.press("R", "y")
        await settle(pilot)
        await wait_ready(pilot)
        assert len(app.main.session.messages) == n + 1 and not app.main.wb.done
        await pilot.press("R")  # nothing to lose: no question
        await wait_ready(pilot)
        assert not isinstance(app.screen, ConfirmScreen) and app.main.wb is not None


def test_missing_file_is_an_error_line_and_exit_2(capsys, tmp_path):
    missing = tmp_path / "nope.json"
    assert main([str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"histview: {missing}: no such file or folder"


# ---------------------------------------------------------------- 4. the fix you see


async def test_timeline_cursor_selects_the_fix_of_its_row(demo_copy):
    async with opened(demo_copy, (120, 40)) as (app, pilot):
        await pilot.press("r", "escape")  # open the plan, back on the timeline
        tl = timeline(app)
        for mi, bi, code in [(13, 0, "mismatched-tool-result-id"), (9, 1, "duplicate-tool-result")]:
            tl.go_to_row(_row(app, mi, bi))
            await pilot.pause()
            fix = app.main._selected_fix()
            assert fix.code == code and fix.message_index == mi
            assert fix.detail[:25] in widget_text(app, "#diff")
        assert (tl.current_row.mi, tl.current_row.bi) == (9, 1)  # the cursor stayed


async def test_a_fix_highlighted_before_the_cursor_moved_does_not_pull_it_back(demo_copy):
    """Keys typed fast: the fix list's highlight of the first fix (made when `r` opened the
    pane) reaches the screen only after `n` moved the cursor on. The cursor stays where the
    last key put it, and the fix of its row is selected (it went back to the first fix's
    row, and `]` then searched on from there)."""
    async with opened(demo_copy, (120, 40)) as (app, pilot):
        main = app.main
        held: list = []
        post = main.post_message

        def hold(message) -> bool:  # the pane's word waits, as under load
            if isinstance(message, RepairPane.FixHighlighted):
                held.append(message)
                return True
            return post(message)

        main.post_message = hold
        await pilot.press("g", "r")
        await pilot.pause()
        first = main._selected_fix()
        assert held and first is not None
        tl = timeline(app)
        elsewhere = next(
            r
            for r in tl.state.table.finding_rows
            if not main_screen._shares_finding(first, tl.state.table.rows[r])
        )
        tl.go_to_row(elsewhere)  # `n`, while the highlight is on its way
        del main.post_message
        for event in held:
            main.post_message(event)
        await settle(pilot)
        assert tl.current_row_index == elsewhere
        fix = main._selected_fix()
        assert fix is not first and main_screen._shares_finding(fix, tl.current_row)


async def test_the_cursor_row_stays_in_view_when_the_repair_pane_opens(cc_file):
    """A finding on the last lines of the timeline: `r` (the plan opens below, the timeline
    shrinks) keeps the cursor's row on screen."""
    async with opened(cc_file, (120, 40)) as (app, pilot):
        tl = timeline(app)
        height = tl.scrollable_content_region.height
        while tl.cursor - tl.scroll_offset.y < height - 3:
            await pilot.press("n")
        row = tl.current_row_index
        await pilot.press("r")
        await settle(pilot)
        assert app.main.repair_open and tl.current_row_index == row
        top, height = tl.scroll_offset.y, tl.scrollable_content_region.height
        assert top <= tl.cursor < top + height


async def test_after_apply_the_next_fix_in_order_is_selected(demo_copy):
    async with opened(demo_copy, (120, 40)) as (app, pilot):
        await pilot.press("g", "r")
        order = [(f.code, f.message_index) for f in app.main.fixes if f.actionable]
        assert app.main._selected_fix().code == order[0][0]
        await pilot.press("a")
        await settle(pilot)
        # moving message 5's result home also ends the info finding before it: the next fix
        # in order is still the next one, not the one after it
        assert app.main._selected_fix().code == order[1][0] == "tool-result-not-first"
        await pilot.press("a")
        await settle(pilot)
        assert app.main._selected_fix().code == order[2][0] == "duplicate-tool-result"


async def test_fix_lines_that_would_read_the_same_name_their_tool_id():
    async with opened(ROO_TT, (80, 24)) as (app, pilot):
        await pilot.press("r")
        lines = [str(p) for p in fix_prompts(app.main.fixes)]
        dups = [t for t in lines if "duplicate-tool-result" in t]
        assert len(dups) == 2 and dups[0] != dups[1]
        assert "toolu_…AyOHF" in " ".join(dups) and "toolu_…rKwtP" in " ".join(dups)
        # the action column comes before the code and is never cut at 80 columns
        fl = app.main.query_one("#fix-list")
        assert fl.size.width >= 2 + 3 + ACTION_WIDTH + 2
        assert all(t.index("keep-best") < t.index("duplicate") for t in dups)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_a_skipped_fix_keeps_the_tool_ids_of_its_lines(size):
    """`s` skips the first duplicate result: both lines of message 7 still name their call
    (before, the skipped one and the other read apart by their actions and lost the ids)."""
    async with opened(ROO_TT, size) as (app, pilot):
        await pilot.press("r")
        await settle(pilot)
        first = app.main._selected_fix()
        assert first.code == "duplicate-tool-result"
        await pilot.press("s")
        await settle(pilot)
        assert first.key in {f.key for f in app.main.fixes if f.skipped}
        lines = [str(p) for p in fix_prompts(app.main.fixes)]
        dups = [t for t in lines if "duplicate-tool-result" in t]
        assert any("skipped" in t for t in dups) and any("keep-best" in t for t in dups)
        assert "toolu_…AyOHF" in " ".join(dups) and "toolu_…rKwtP" in " ".join(dups)


async def test_fix_lines_and_the_summary_keep_their_spaces_on_screen(demo_copy):
    """What the terminal receives has a space between the message number and the action
    (also m10 and the selected line) and ` · ` between the summary's problems (PNGs made
    from the snapshots with a proportional fallback font squeeze them; the cells do not)."""
    async with opened(demo_copy, (80, 24)) as (app, pilot):
        await pilot.press("r")
        await settle(pilot)
        fl = app.main.query_one("#fix-list")
        lines = ["".join(s.text for s in fl.render_line(y)) for y in range(fl.size.height)]
        assert any("m10 insert-result" in t for t in lines)
        selected = lines[fl.highlighted - fl.scroll_offset.y]
        assert "m7 reorder" in selected
        summary = app.main.query_one("#summary")
        text = "".join(s.text for s in summary.render_line(0))
        assert "execute_command) · ● 1 message" in text


async def test_toasts_never_cover_the_diff(demo_copy):
    app = HistviewApp(str(demo_copy))
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_ready(pilot)
        await pilot.press("r", "a", "s")
        await settle(pilot)
        await pilot.pause()
        toasts = list(app.screen.query("Toast"))
        assert toasts
        diff = app.main.query_one("#diff-scroll").region
        for toast in toasts:
            assert not toast.region.overlaps(diff)


def test_the_diff_shows_changed_lines_first():
    lines = ["@@ -1,9 +1,9 @@", " a", " b", " c", "-d", "+D", " e", " f", " g", " h"]
    assert _changed_first(lines) == ["@@ -1,9 +1,9 @@", " c", "-d", "+D", " e", " f", " g"]


# ---------------------------------------------------------------- 8. 80x24


async def test_80x24_header_keeps_counts_and_unexported_and_ids_keep_both_ends(roo_copy):
    async with opened(roo_copy, (80, 24)) as (app, pilot):
        line = _line(app, _row(app, 7, 0))
        assert "update_todo_list toolu_01" in line and "AyOHF" in line  # name, then the id
        await pilot.press("r", "a")
        await settle(pilot)
        header = widget_text(app, "#header")
        assert re.search(r"● \d+  ▲ \d+  ○ \d+  1 fixed  \*unexported$", header.strip())
        assert len(header) <= 78


@pytest.mark.parametrize(
    "stem", ["demo_session", "a_session_named_at_length_by_its_tool_" + "x" * 24]
)
async def test_80x24_header_names_the_target_unless_the_name_would_be_cut_short(
    tmp_path, demo_copy, stem
):
    # the target decides what is an error: at 80 columns it shows beside the format while
    # the file's name keeps a readable length (24), and gives way first when the counts grow
    path = demo_copy.rename(tmp_path / f"{stem}.json")
    async with opened(path, (80, 24)) as (app, pilot):
        header = widget_text(app, "#header").strip()
        assert re.search(r"  roo → anthropic  19 msgs  ● 7  ▲ 2  ○ 2$", header)
        assert len(header.split("  roo")[0]) >= min(len(stem) + 5, 24)
        await pilot.press("r", "a")
        await settle(pilot)
        header = widget_text(app, "#header").strip()
        assert "→" not in header and header.endswith("1 fixed  *unexported")
        assert len(header.split("  roo")[0]) >= min(len(stem) + 5, 12)


async def test_d_cycles_the_detail_pane(demo_copy):
    async with opened(demo_copy, (120, 40)) as (app, pilot):
        detail = app.main.query_one("#detail-scroll")
        tl = timeline(app)
        normal = detail.size.width
        await pilot.press("d")
        await pilot.pause()
        assert detail.size.width > normal
        await pilot.press("d")
        await pilot.pause()
        assert not detail.display or detail.size.width == 0
        assert tl.size.width >= 118
        await pilot.press("d")
        await pilot.pause()
        assert detail.size.width == normal


# ---------------------------------------------------------------- 9. keys and details


async def test_j_k_scroll_the_detail_and_the_help(roo_copy):
    async with opened(roo_copy, (80, 24)) as (app, pilot):
        await pilot.press("enter")
        pane = app.main.query_one("#detail-scroll")
        assert app.focused is pane
        await pilot.press("j", "j", "j")
        assert pane.scroll_y == 3
        await pilot.press("k")
        assert pane.scroll_y == 2
        await pilot.press("escape", "question_mark")
        box = app.screen.query_one("#help-box")
        await pilot.press("j", "j")
        assert box.scroll_y == 2


async def test_y_copies_the_selected_id(roo_copy):
    app = HistviewApp(str(roo_copy))
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_ready(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert app.clipboard == TODO_ID
        assert "Copied" in list(app._notifications)[-1].message
        await pilot.press("j", "y")
        await settle(pilot)
        assert app.clipboard == TASK_ID


async def test_detail_names_the_other_end(roo_copy):
    async with opened(roo_copy, (120, 40)) as (app, pilot):
        assert "call: message 5 block 2, update_todo_list" in widget_text(app, "#detail")
        timeline(app).go_to_row(_row(app, 5, 2))
        await pilot.pause()
        text = widget_text(app, "#detail")
        assert "result in message 6 block 1; 1 more: message 7 block 0" in text


async def test_detail_names_the_other_end_as_the_findings_number_it():
    # Gemini CLI's hidden session context is row 0 of the file and not sent, so the file's
    # rows and messages.N differ by one; the findings and the number column say messages.N.
    async with opened(SAMPLES / "gemini_cli_doubled_after_resume.jsonl", (120, 40)) as (app, pilot):
        timeline(app).go_to_row(_row(app, 4, 0))
        await pilot.pause()
        text = widget_text(app, "#detail")
        assert "result in message 4 block 0; 3 more: message 4 block 2" in text
        timeline(app).go_to_row(_row(app, 5, 1))
        await pilot.pause()
        text = widget_text(app, "#detail")
        assert "call: message 3 block 1, read_file" in text
        assert "tool_result for read_file_" in text and "tool_result  for" not in text


async def test_findings_only_keeps_message_numbers(roo_copy):
    async with opened(roo_copy, (120, 40)) as (app, pilot):
        await pilot.press("f")
        line = _line(app, _row(app, 7, 1))
        assert line.startswith("●▲7 ")  # marks, then the message number of the block row


async def test_search_counts_highlights_and_steps(roo_copy):
    async with opened(roo_copy, (120, 40)) as (app, pilot):
        await pilot.press("g", "slash", *"new_task", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        tl = timeline(app)
        rows = app.main.search.rows
        assert len(rows) == 5 and tl.current_row_index == rows[0]
        assert "match 1 of 5" in widget_text(app, "#search-bar")
        # the match is highlighted in the row
        strip = tl.render_line(tl.cursor - tl.scroll_offset.y)
        hits = [s.text for s in strip if s.style and s.style.reverse]
        assert hits == ["new_task"]
        await pilot.press("right_square_bracket", "right_square_bracket")
        assert tl.current_row_index == rows[2] and "match 3 of 5" in widget_text(app, "#search-bar")
        await pilot.press("left_square_bracket")
        assert tl.current_row_index == rows[1]
        await pilot.press("n")  # n stays "next finding"
        assert tl.current_row.findings
        await pilot.press("escape")
        assert app.main.search is None and not app.main.query_one("#search-bar").display


async def test_chosen_theme_is_kept_between_runs(demo_copy):
    async with opened(demo_copy, (80, 24)) as (app, pilot):
        assert app.theme == "textual-dark"
        app.theme = "textual-light"
        await pilot.pause()
    again = HistviewApp(str(demo_copy))
    async with again.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        assert again.theme == "textual-light"


async def test_light_theme_uses_readable_colours(demo_copy):
    async with opened(demo_copy, (80, 24)) as (app, pilot):
        app.theme = "textual-light"
        await pilot.pause()
        tl = timeline(app)
        bg = tl.rich_style.bgcolor.get_truecolor()
        for name in ("timeline--error", "timeline--warning", "lane--paired", "lane--travel"):
            fg = tl._style(name).color.get_truecolor()
            assert _contrast(fg, bg) >= 3.0, name


def _contrast(a, b) -> float:
    def lum(c):
        def ch(v):
            v /= 255
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

        return 0.2126 * ch(c.red) + 0.7152 * ch(c.green) + 0.0722 * ch(c.blue)

    la, lb = sorted((lum(a), lum(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_block_time_is_read_only_for_the_ui():
    """The TUI only reads block times: an untouched session dumps its bytes unchanged."""
    s = load_session(str(CLAUDE))
    for m in s.messages:
        for b in m.blocks:
            s.adapter.block_time(s, b)
    assert s.export_bytes() == CLAUDE.read_bytes()
