"""Pilot tests: what a user does in the TUI, checked on the app state and on the files written."""

from __future__ import annotations

import json

import pytest

from repair.analysis import analyze
from repair.formats import load_session
from tests.paths import DEMO, README
from tests.tui.tui_helpers import HOSTILE, opened, settle, timeline, wait_ready
from tui.app import AnalysisReady, HistviewApp, SessionLoaded
from tui.timeline import Timeline


def _current(app):
    row = timeline(app).current_row
    return row.kind, row.mi, row.bi


async def test_load_posts_rows_then_analysis(demo_copy):
    seen = []
    app = HistviewApp(str(demo_copy))
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        await wait_ready(pilot)
        posted = [m for m in seen if isinstance(m, (SessionLoaded, AnalysisReady))]
        kinds = [type(m) for m in posted]
        assert kinds == [SessionLoaded, AnalysisReady, AnalysisReady]
        # a first look (no workbench: no lanes, no plan), then the whole with its workbench
        first, whole = posted[1:]
        assert first.workbench is None and first.derived.lanes is None
        assert whole.workbench is app.main.wb and whole.derived.lanes is not None
        header = str(app.main.query_one("#header").render())
        assert "demo_session.json" in header and "roo → anthropic" in header
        assert "7 errors" in header and "2 warnings" in header and "2 info" in header


async def test_full_repair_flow_and_export(demo_copy):
    async with opened(demo_copy, (120, 40)) as (app, pilot):
        wb = app.main.wb
        errors0 = wb.analysis.counts()["error"]
        # n walks finding rows in order
        await pilot.press("n")
        first = _current(app)
        assert timeline(app).current_row.findings
        await pilot.press("n")
        assert _current(app) != first
        await pilot.press("N")
        assert _current(app) == first
        # open the plan: the first fix that changes something is selected, with its diff
        await pilot.press("r")
        assert app.main.repair_open
        fix = app.main._selected_fix()
        assert fix is not None and fix.actionable
        diff = str(app.main.query_one("#diff").render())
        assert "@@" in diff and fix.detail[:30] in diff
        # apply: one step done, fewer findings, the timeline state changed
        version = timeline(app).state.version
        await pilot.press("a")
        await settle(pilot)
        assert len(wb.done) == 1
        assert timeline(app).state.version > version
        after_one = wb.analysis.counts()["error"] + wb.analysis.counts()["warning"]
        assert after_one < errors0 + 2
        # undo and redo
        await pilot.press("u")
        await settle(pilot)
        assert not wb.done and wb.session is wb.original
        assert wb.analysis.counts()["error"] == errors0
        await pilot.press("ctrl+y")
        await settle(pilot)
        assert len(wb.done) == 1
        # apply all: no error left
        await pilot.press("A")
        await settle(pilot)
        assert wb.analysis.counts()["error"] == 0
        assert "0 errors" in str(app.main.query_one("#header").render())
        # export with the default names
        await pilot.press("e")
        await settle(pilot)
        await pilot.pause()
        await pilot.click("#export-ok")
        await pilot.pause()
        assert app.main.exported is wb.session
    out = demo_copy.with_name("demo_session.fixed.json")
    report = demo_copy.with_name("demo_session.report.json")
    assert out.exists() and report.exists()
    fixed = load_session(str(out))
    assert analyze(fixed).errors == []
    doc = json.loads(report.read_text())
    assert doc["output"] == str(out)
    assert doc["before"]["orphan-tool-use"] == 1
    codes = {f["finding"] for f in doc["fixes"]}
    assert {"orphan-tool-use", "duplicate-tool-result", "orphan-tool-result"} <= codes
    assert not [f for f in doc["remaining"] if f["severity"] == "error"]
    # the input is untouched
    assert demo_copy.read_bytes() == DEMO.read_bytes()


async def test_cycle_and_skip_change_the_plan(demo_copy):
    async with opened(demo_copy, (120, 40)) as (app, pilot):
        await pilot.press("r")
        fl = app.main.query_one("#fix-list")
        idx = next(i for i, f in enumerate(app.main.fixes) if f.code == "orphan-tool-use")
        fl.highlighted = idx
        await pilot.pause()
        assert app.main._selected_fix().action == "insert-result"
        await pilot.press("tab")
        await settle(pilot)
        assert app.main.fixes[idx].action == "drop-tool-use"
        assert "Drop the unanswered tool_use toolu_05F" in str(app.main.query_one("#diff").render())
        await pilot.press("s")
        await settle(pilot)
        assert app.main.fixes[idx].skipped and not app.main.fixes[idx].actionable
        # s moves on to the next fix; the skipped one is never applied
        assert fl.highlighted == idx + 1
        await pilot.press("k")
        assert fl.highlighted == idx
        diff = str(app.main.query_one("#diff").render())
        assert "Skipped" in diff and "changes nothing" not in diff
        await pilot.press("a")
        await settle(pilot)
        assert not app.main.wb.done
        await pilot.press("s")
        await settle(pilot)
        assert not app.main.fixes[idx].skipped and fl.highlighted == idx


async def test_export_says_at_once_why_nothing_can_be_written(tmp_path):
    """While a malformed record remains, e says why instead of opening a dialog whose enter
    would only be refused; once the record is dropped, e opens the dialog."""
    path = tmp_path / "malformed.json"
    path.write_text(
        json.dumps(
            [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
                {"role": "user", "content": 42},
                {"role": "assistant", "content": "done"},
            ]
        )
    )
    app = HistviewApp(str(path))
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await wait_ready(pilot)
        await pilot.press("e")
        await settle(pilot)
        await pilot.pause()
        assert type(app.screen).__name__ != "ExportScreen"
        said = list(app._notifications)[-1].message
        assert said.startswith("Export refused: 1 malformed record(s) remain")
        assert app.main.busy is None
        await pilot.press("r", "tab", "a")  # the fix switched to drop, applied
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        await pilot.pause()
        assert type(app.screen).__name__ == "ExportScreen"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["malformed.json"]


async def test_export_asks_before_overwriting(demo_copy):
    """A taken name typed in the dialog is asked about (the name proposed is a free one)."""
    out = demo_copy.with_name("demo_session.out.json")
    out.write_text("keep me")
    async with opened(demo_copy, (120, 40)) as (app, pilot):
        await pilot.press("A", "e")
        await settle(pilot)
        await pilot.pause()
        app.screen.query_one("#export-output").value = str(out)
        await pilot.click("#export-ok")
        await pilot.pause()
        assert type(app.screen).__name__ == "ConfirmScreen"
        await pilot.press("n")
        assert out.read_text() == "keep me"
        await pilot.press("e")
        await settle(pilot)
        await pilot.pause()
        app.screen.query_one("#export-output").value = str(out)
        await pilot.click("#export-ok")
        await pilot.pause()
        await pilot.press("y")
        await settle(pilot)
        await pilot.pause()
    assert out.read_text() != "keep me"
    assert analyze(load_session(str(out))).errors == []


async def test_export_over_input_needs_confirmation_and_backup(demo_copy):
    async with opened(demo_copy, (120, 40)) as (app, pilot):
        await pilot.press("A", "e")
        await settle(pilot)
        await pilot.pause()
        app.screen.query_one("#export-output").value = str(demo_copy)
        await pilot.click("#export-ok")
        await pilot.pause()
        assert type(app.screen).__name__ == "ConfirmScreen"
        await pilot.press("n")
        assert demo_copy.read_bytes() == DEMO.read_bytes()
        await pilot.press("e")
        await settle(pilot)
        await pilot.pause()
        app.screen.query_one("#export-output").value = str(demo_copy)
        await pilot.click("#export-ok")
        await pilot.pause()
        await pilot.press("y")
        await settle(pilot)
        await pilot.pause()
    backup = demo_copy.with_name("demo_session.json.bak")
    assert backup.read_bytes() == DEMO.read_bytes()
    assert analyze(load_session(str(demo_copy))).errors == []


async def test_quit_asks_when_changes_are_not_exported(demo_copy):
    async with opened(demo_copy, (80, 24)) as (app, pilot):
        await pilot.press("A", "q")
        await settle(pilot)
        assert type(app.screen).__name__ == "ConfirmScreen"
        await pilot.press("n")
        assert app.is_running
        await pilot.press("q", "y")
        await settle(pilot)
        await pilot.pause()
        assert not app.is_running


async def test_quit_without_changes_does_not_ask(demo_copy):
    async with opened(demo_copy, (80, 24)) as (app, pilot):
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running


async def test_navigation_keys_filter_and_search(demo_copy):
    async with opened(demo_copy, (80, 24)) as (app, pilot):
        tl = timeline(app)
        n_rows = len(tl.state.table.rows)
        await pilot.press("G")
        assert tl.current_row_index == n_rows - 1
        await pilot.press("g")
        assert tl.current_row_index == 0
        await pilot.press("j", "j", "down")
        assert tl.current_row_index == 3
        await pilot.press("k")
        assert tl.current_row_index == 2
        await pilot.press("pagedown")
        assert tl.current_row_index > 10
        await pilot.press("end", "home")
        assert tl.current_row_index == 0
        # filter: only rows with findings are shown, and the header says so
        await pilot.press("f")
        assert len(tl.view) == len(tl.state.table.finding_rows) < n_rows
        assert all(tl.state.table.rows[r].findings for r in tl.view)
        assert "findings only" in str(app.main.query_one("#header").render())
        await pilot.press("f")
        assert len(tl.view) == n_rows
        # search by tool id, then by text
        await pilot.press("slash")
        await pilot.press(*"toolu_06X", "enter")
        assert _current(app) == ("result", 13, 0)
        await pilot.press("slash")
        app.screen.query_one("#search-input").value = "wrap up"
        await pilot.press("enter")
        assert _current(app)[1] == 17
        # raw JSON of the message on J
        await pilot.press("J")
        assert "raw JSON" in str(app.main.query_one("#detail").render())
        assert '"ts"' in str(app.main.query_one("#detail").render())


async def test_click_selects_a_row(demo_copy):
    async with opened(demo_copy, (80, 24)) as (app, pilot):
        await pilot.click(Timeline, offset=(20, 5))
        assert timeline(app).current_row_index == 5  # rows: m0, m1, call, m2, result, m3
        assert "messages.3 · assistant" in str(app.main.query_one("#detail").render())


async def test_help_footer_and_palette_derive_from_the_bindings(demo_copy):
    """Each key is declared once: every binding is in help, the palette runs each action,
    and the footer at 80 columns keeps ? and q."""
    from tui.main_screen import MainScreen, palette_bindings

    async with opened(demo_copy, (80, 24)) as (app, pilot):
        footer_keys = [k.key for k in app.main.query("FooterKey")]
        assert footer_keys[:2] == ["question_mark", "q"]
        await pilot.press("question_mark")
        text = str(app.screen.query_one("#help-text").render())
        words = " ".join(text.split())  # a long description goes on on the next row
        first = {}
        for b in [*MainScreen.BINDINGS, *HistviewApp.BINDINGS, *Timeline.BINDINGS]:
            first.setdefault(b.action, b)
        for b in first.values():
            assert (b.tooltip or b.description) in words
        # the fixed keys, and the new ones, as help writes them
        for k in ("j / ↓", "n", "N", "g / home", "J", "/", "]", "[", "tab", "ctrl+y", "ctrl+p"):
            assert k in text
        for k in ("d ", "y ", "R ", "q ", "ctrl+q / ctrl+c"):
            assert k in text
        await pilot.press("escape")
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {b.description for b in palette_bindings()} <= titles


async def test_load_error_is_a_message_not_a_crash(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text('[{"role": "user", "content": "hi"}')
    async with opened(bad, (80, 24)) as (app, pilot):
        assert app.is_running
        text = str(app.main.query_one("#load-error").render())
        assert "Cannot open this session" in text and "broken.json" in text
        assert "Traceback" not in text
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running


async def test_hostile_text_is_inert(tmp_path):
    """Markup-looking text in a session is shown literally and clicking it does nothing."""
    async with opened(HOSTILE, (120, 40)) as (app, pilot):
        tl = timeline(app)
        # the row of message 2 shows "[@click=app.quit]Never mind[/]" literally
        row2 = tl.state.table.message_row[2]
        strip = tl.render_line(row2 - tl.scroll_offset.y)
        text = "".join(seg.text for seg in strip)
        assert "[@click=app.quit]Never mind[/]" in text
        assert not any("@click" in (seg.style.meta if seg.style else {}) for seg in strip)
        col = text.index("[@click")
        await pilot.click(Timeline, offset=(col + 3, row2))
        await pilot.pause()
        assert app.is_running and app.screen is app.main
        # the detail pane shows the escapes as visible stand-ins, never raw
        await pilot.press("g", "j")
        detail = str(app.main.query_one("#detail").render())
        assert "[bold]BOLD?[/bold]" in detail and "␛[2J" in detail
        for ch in ("\x1b", "\x9b", "\x00", "\u202e", "\u2028"):
            assert ch not in detail
        # clicking inside the detail text does nothing either
        await pilot.click("#detail", offset=(5, 2))
        await pilot.pause()
        assert app.is_running
        # notifications show text literally (a search that fails echoes the query)
        await pilot.press("slash")
        app.screen.query_one("#search-input").value = "[@click=app.quit]zz\x1b"
        await pilot.press("enter")
        await pilot.pause()
        note = list(app._notifications)[-1]
        assert note.markup is False and "\x1b" not in note.message
        # the repair preview of the hostile tool id is sanitised
        await pilot.press("r")
        diff = str(app.main.query_one("#diff").render())
        for ch in ("\x1b", "\x9b", "\u202e", "\u2028"):
            assert ch not in diff


def test_readme_key_table_is_the_bindings():
    """The README's key table is made from the Binding declarations (one place for a key):
    every key declared is in it, with its help text."""
    from tui.keys import help_rows
    from tui.main_screen import key_sections, readme_key_table

    readme = README.read_text()
    table = readme_key_table()
    assert table in readme
    for _title, keys in key_sections():
        for k, what in help_rows(keys):
            assert f"| `{k}` | {what} |" in table


def test_each_key_is_declared_once_with_an_id():
    from tui.main_screen import key_sections

    bindings = [b for _t, keys in key_sections() for b in keys]
    keys = [k for b in bindings for k in b.key.split(",")]
    assert len(keys) == len(set(keys))
    ids = [b.id for b in bindings]
    assert None not in ids and len(ids) == len(set(ids))


def test_palette_titles_hold_no_session_text():
    from tui.main_screen import palette_bindings

    for b in palette_bindings():
        assert "[" not in b.description and "[" not in (b.tooltip or "")


async def test_filter_on_a_clean_session_says_so(tmp_path):
    path = tmp_path / "clean.json"
    path.write_text(
        '[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"hello"}]}]'
    )
    async with opened(path, (80, 24)) as (app, pilot):
        await pilot.press("f")
        tl = timeline(app)
        assert not tl.findings_only and len(tl.view) == 2
        assert "No findings" in list(app._notifications)[-1].message


async def test_palette_runs_an_action(demo_copy):
    async with opened(demo_copy, (120, 40)) as (app, pilot):
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Apply all")
        await pilot.pause(0.3)
        await pilot.press("enter")
        for _ in range(20):
            await pilot.pause(0.05)
            if app.main.wb.done:
                break
        assert app.main.wb.done and app.main.wb.analysis.counts()["error"] == 0


async def test_an_export_whose_report_cannot_be_written_leaves_nothing_behind(
    demo_copy, monkeypatch
):
    import errno

    import repair.files as files

    real = files._create_temp

    def full_disk_for_the_report(path):
        if path.endswith(".report.json"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path)

    monkeypatch.setattr(files, "_create_temp", full_disk_for_the_report)
    folder = demo_copy.parent
    async with opened(demo_copy, (120, 40)) as (app, pilot):
        await pilot.press("A", "e")
        await settle(pilot)
        await pilot.pause()
        await pilot.click("#export-ok")
        await pilot.pause()
        note = list(app._notifications)[-1]
        assert note.severity == "error"
        assert note.message == (
            f"Export refused: cannot write {folder}/demo_session.report.json: no space left on "
            "the device; free some space or write to another disk; nothing was written"
        )
        assert app.main.exported is None and "*unexported" in str(
            app.main.query_one("#header").render()
        )
    assert sorted(p.name for p in folder.iterdir()) == ["demo_session.json"]
    assert demo_copy.read_bytes() == DEMO.read_bytes()


async def test_an_export_with_an_empty_report_field_is_refused(demo_copy):
    async with opened(demo_copy, (120, 40)) as (app, pilot):
        await pilot.press("A", "e")
        await settle(pilot)
        await pilot.pause()
        app.screen.query_one("#export-report").value = ""
        await pilot.click("#export-ok")
        await pilot.pause()
        assert "the report path is empty" in list(app._notifications)[-1].message
    assert sorted(p.name for p in demo_copy.parent.iterdir()) == ["demo_session.json"]


async def test_a_second_export_proposes_a_numbered_report(demo_copy):
    taken = demo_copy.with_name("demo_session.report.json")
    taken.write_text("an earlier report")
    async with opened(demo_copy, (120, 40)) as (app, pilot):
        await pilot.press("A", "e")
        await settle(pilot)
        await pilot.pause()
        field = app.screen.query_one("#export-report").value
        assert field == str(demo_copy.with_name("demo_session.report.1.json"))
        await pilot.click("#export-ok")
        await pilot.pause()
        assert app.main.exported is app.main.wb.session
    assert taken.read_text() == "an earlier report"
    assert json.loads(demo_copy.with_name("demo_session.report.1.json").read_text())["fixes"]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_the_export_dialog_proposes_a_free_output_name(demo_copy, size):
    """With NAME.fixed.json there, the dialog proposes NAME.fixed.1.json (as it numbers the
    report): enter exports there and the earlier export stays as it was, byte for byte."""
    taken = demo_copy.with_name("demo_session.fixed.json")
    taken.write_bytes(b"an earlier export\n")
    async with opened(demo_copy, size) as (app, pilot):
        await pilot.press("A", "e")
        await settle(pilot)
        fields = [app.screen.query_one(f"#export-{f}").value for f in ("output", "report")]
        out = demo_copy.with_name("demo_session.fixed.1.json")
        assert fields == [str(out), str(demo_copy.with_name("demo_session.report.json"))]
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is app.main and app.main.exported is app.main.wb.session
    assert taken.read_bytes() == b"an earlier export\n"
    assert analyze(load_session(str(out))).errors == []


async def test_export_over_a_read_only_input_says_so_and_keeps_the_mode(demo_copy):
    demo_copy.chmod(0o444)
    async with opened(demo_copy, (120, 40)) as (app, pilot):
        await pilot.press("A", "e")
        await settle(pilot)
        await pilot.pause()
        app.screen.query_one("#export-output").value = str(demo_copy)
        await pilot.click("#export-ok")
        await pilot.pause()
        assert "which is read-only?" in str(app.screen.query_one("#confirm-question").render())
        await pilot.press("y")
        await settle(pilot)
        await pilot.pause()
        assert app.main.exported is app.main.wb.session
    assert demo_copy.with_name("demo_session.json.bak").read_bytes() == DEMO.read_bytes()
    assert demo_copy.stat().st_mode & 0o777 == 0o444
    assert analyze(load_session(str(demo_copy))).errors == []
