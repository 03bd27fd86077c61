"""Pilot tests for issue 10 points 5-7: repair steps off the UI thread with a visible busy
state, the preview of what is written, the promise read back, threads, broken chains, and
the number column that is the provider's messages.N."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from repair.analysis import analyze
from repair.formats import load_session
from repair.workbench import Workbench
from tests.claude_code_records import session_with_subagents
from tests.paths import CLIENT_FIXTURES, SAMPLES
from tests.tui.tui_helpers import settle, timeline, wait_ready, widget_text
from tui.app import HistviewApp
from tui.rows import build_rows
from tui.screens import ThreadScreen

BROKEN = CLIENT_FIXTURES / "claude" / "broken"
CLAUDE = SAMPLES / "claude_code_parallel_interrupted.jsonl"


def _copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / src.name
    shutil.copy(src, dst)
    return dst


async def _line(pilot, row: int) -> str:
    """Row `row` as the timeline draws it (scrolled into view first)."""
    tl = timeline(pilot.app)
    tl.go_to_row(row)
    await pilot.pause()
    strip = tl.render_line(tl.view.index(row) - tl.scroll_offset.y)
    return "".join(seg.text for seg in strip)


@pytest.fixture
def held(monkeypatch):
    """Workbench.apply waits until the test lets it go: the step stays "running"."""
    go = threading.Event()
    real = Workbench.apply

    def apply(self, fix, view=None):
        go.wait(10)
        return real(self, fix, view)

    monkeypatch.setattr(Workbench, "apply", apply)
    yield go
    go.set()


async def test_a_step_runs_off_the_ui_thread_with_a_busy_state_and_keys_wait(tmp_path, held):
    app = HistviewApp(str(_copy(CLAUDE, tmp_path)))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        await pilot.press("r")
        await settle(pilot)
        before = app.main.derived
        await pilot.press("a")
        await pilot.pause()
        # the step is still running: the screen says so, and keeps answering keys
        assert app.main.busy == "applying the fix…"
        assert "⟳ applying the fix…" in widget_text(app, "#header")
        row = timeline(app).cursor
        await pilot.press("escape", "j")
        assert timeline(app).cursor == row + 1
        # a key that would race the step waits for it, in order
        await pilot.press("u")
        assert [w.action for w in app.main._queued] == ["undo"] and "(+1 waiting)" in widget_text(
            app, "#header"
        )
        assert app.main.derived is before and not app.main.wb.done
        held.set()
        await settle(pilot)
        # applied, then undone: back where it started
        assert app.main.busy is None and not app.main._queued
        assert not app.main.wb.done and len(app.main.wb.undone) == 1
        assert app.main.derived.counts == before.counts


async def test_a_step_redraws_only_the_rows_it_changed():
    """A rename changes ids in place, an inserted result adds a row: either way the rows
    of the messages the step did not touch are those made before (the same objects; those
    not made yet stay unmade: tests/tui/test_rows_lazy.py), the rows after an added one
    move down by one, and the table is the one built whole."""
    app = HistviewApp(str(SAMPLES / "claude_code_duplicate_id_after_resume.jsonl"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        await pilot.press("r")
        await settle(pilot)
        assert app.main._selected_fix().action == "rename"
        before = list(app.main.derived.base.rows)  # (every row made)
        await pilot.press("a")
        await settle(pilot)
        after = app.main.derived
        assert after.incremental and len(after.base.rows) == len(before)
        assert sum(a is b for a, b in zip(before, after.base.rows, strict=True)) > 0
        assert after.base.rows == build_rows(after.session).rows
    app = HistviewApp(str(CLAUDE))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        before = list(app.main.derived.base.rows)
        await pilot.press("r", "a")
        await settle(pilot)
        after = app.main.derived
        assert after.incremental and len(after.base.rows) == len(before) + 1
        assert after.base.rows[0] is before[0] and after.base.rows[-1] is before[-1]
        assert after.base.rows == build_rows(after.session).rows


async def test_the_pane_shows_the_records_written_as_the_dry_run_does():
    app = HistviewApp(str(CLAUDE))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        await pilot.press("r")
        await settle(pilot)
        fix = app.main._selected_fix()
        diff = widget_text(app, "#diff")
        pane = app.main.wb.preview(fix)
        # the one renderer: the description, the new record, the line re-linked to it
        for sentence in pane.description:
            assert sentence in diff
        new = next(c for c in pane.records if c.old is None)
        assert f"@@ {new.where} (new) @@" in diff
        assert f'+  "parentUuid": "{new.new["uuid"]}",' in diff


async def test_the_promise_is_what_check_finds_in_the_export(tmp_path):
    """Bedrock rules on a Codex rollout: the repaired messages have no error, but the
    written file is judged again when read back (issue 10 point 5)."""
    src = _copy(SAMPLES / "codex_missing_output.jsonl", tmp_path)
    app = HistviewApp(str(src), target="bedrock")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        await pilot.press("r", "A")
        await settle(pilot)
        promise = widget_text(app, "#promise")
        assert "Exported now, check finds: ● 1 error" in promise
        await pilot.press("e")
        await settle(pilot)
        await pilot.click("#export-ok")
        await settle(pilot)
    out = tmp_path / "codex_missing_output.fixed.jsonl"
    checked = analyze(load_session(str(out), target="bedrock"))
    assert checked.counts()["error"] == 1


async def test_at_80_columns_the_summary_keeps_the_key_that_lists_the_threads(tmp_path):
    main = session_with_subagents(tmp_path, bad=True)
    app = HistviewApp(str(main))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        box = app.main.query_one("#summary")
        shown = box.render_line(0).text.rstrip()
        assert shown.endswith("(3 threads, 1 with problems: t lists them)")
        assert "…" in shown  # the problems gave way
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        shown = box.render_line(0).text.rstrip()
        assert shown.endswith("(3 threads, 1 with problems: t lists them)")


async def test_threads_are_listed_opened_fixed_and_exported(tmp_path):
    main = session_with_subagents(tmp_path, bad=True)
    app = HistviewApp(str(main))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        # the main conversation is clean; the header counts the thread's finding too
        assert app.main.derived.counts["error"] + app.main.derived.counts["warning"] == 0
        assert "all: ● 0 ▲ 1" in widget_text(app, "#header")
        assert "(3 threads, 1 with problems: t lists them)" in widget_text(app, "#summary")
        await pilot.press("t")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ThreadScreen)
        assert [label for label, _n, _c in screen.rows] == [
            "main conversation",
            "sidechain at line 3",
            "subagent agent-a1 (Explore: look)",
            "subagent agent-b2",
        ]
        await pilot.press("j", "j", "enter")
        await settle(pilot)
        # the thread, with its own counts, in the timeline
        assert app.main.view == 1 and app.main.derived.view == 1
        assert app.main.derived.session.label == "subagent agent-a1 (Explore: look)"
        assert app.main.derived.counts["warning"] == 1
        assert "sess.jsonl › thread 2/3" in widget_text(app, "#header")
        assert widget_text(app, "#summary").startswith("subagent agent-a1 (Explore: look) · ")
        await pilot.press("r")
        await settle(pilot)
        fix = app.main._selected_fix()
        assert fix.code == "orphan-tool-result"
        await pilot.press("a")
        await settle(pilot)
        assert [f.code for f in app.main.wb.thread_applied[1]] == ["orphan-tool-result"]
        assert app.main.derived.counts["warning"] == 0 and "all: ● 0 ▲ 0" in widget_text(
            app, "#header"
        )
        assert "*unexported" in widget_text(app, "#header")
        await pilot.press("e")
        await settle(pilot)
        await pilot.click("#export-ok")
        await settle(pilot)
        assert "*unexported" not in widget_text(app, "#header")
    out = tmp_path / "sess.fixed.jsonl"
    written = load_session(str(out))
    assert [analyze(t).findings for t in written.threads] == [[], [], []]
    assert (tmp_path / "sess.fixed" / "subagents" / "agent-a1.jsonl").is_file()


async def test_the_palette_opens_the_thread_switcher(tmp_path):
    app = HistviewApp(str(session_with_subagents(tmp_path)))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        await app.main._palette_run("threads")
        await pilot.pause()
        assert isinstance(app.screen, ThreadScreen)
        await pilot.press("escape")
        assert app.main.view is None


async def test_a_broken_chain_row_and_its_relink(tmp_path):
    app = HistviewApp(str(_copy(BROKEN / "broken-chain-cut.jsonl", tmp_path)))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        row = timeline(app).current_row
        assert [f.code for f in row.findings] == ["broken-chain"]
        assert "broken-chain" in widget_text(app, "#detail")
        assert "chain broken by a lost record" in widget_text(app, "#summary")
        live = sum(m.live for m in app.main.derived.session.messages)
        await pilot.press("r")
        await settle(pilot)
        assert app.main._selected_fix().action == "relink"
        assert "@@ line 7 @@" in widget_text(app, "#diff")  # the one line whose parentUuid changes
        await pilot.press("a")
        await settle(pilot)
        assert app.main.derived.counts == {"error": 0, "warning": 0, "info": 0}
        assert sum(m.live for m in app.main.derived.session.messages) > live


async def test_the_number_column_is_the_number_errors_use():
    """Gemini CLI: three records are not sent; the rows carry the contents[N] of the
    findings and `·` where a record is not sent."""
    path = SAMPLES / "gemini_cli_doubled_after_resume.jsonl"
    app = HistviewApp(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        table = app.main.derived.table
        numbers = app.main.derived.numbers
        assert any(k is None for k in numbers) and numbers != list(range(len(numbers)))
        for f in analyze(load_session(str(path))).findings:
            if f.message_index is None:
                continue
            line = await _line(pilot, table.message_row[f.position])
            assert line[table.mark_width :].split()[0] == str(f.message_index)
        unsent = numbers.index(None)
        line = await _line(pilot, table.message_row[unsent])
        assert line[table.mark_width :].split()[0] == "·"


async def test_the_next_preview_starts_once_the_step_is_drawn():
    """After a step, the preview of the fix selected next (and the promise) are worked out
    only once the new state is on screen: they would take the interpreter from the redraw."""
    app = HistviewApp(str(SAMPLES / "roo_reused_tool_use_id.json"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        await pilot.press("r")
        await settle(pilot)
        started: list[float] = []
        real = app.main._describe_worker

        def describe(*args):
            started.append(app.main.timings.get("steps", 0))
            return real(*args)

        app.main._describe_worker = describe
        await pilot.press("a")
        await settle(pilot)
        assert app.main.timings["steps"] == 1
        assert started and all(n == 1 for n in started)
        assert "pending" not in widget_text(app, "#diff")
