"""The session picker: `histview --pick` and `histview FOLDER` on a folder that is not one
session. A fake home (HISTVIEW_HOME) holds a Claude Code project and a Roo task; ages are
computed against a fixed `now`, so nothing on screen depends on the clock."""

from __future__ import annotations

import os
import shutil

import pytest

from repair.discover import find_in_folder
from tests.paths import SAMPLES
from tests.tui.tui_helpers import HOSTILE, wait_ready
from tui.app import HistviewApp, needs_picker
from tui.picker import PickerScreen, age_text
from tui.timeline import Timeline

NOW = 1_750_000_000.0  # 2025-06-15
CLAUDE = SAMPLES / "claude_code_parallel_interrupted.jsonl"  # 6 msgs, 1 warning (CC repairs)
ROO = SAMPLES / "roo_reused_tool_use_id.json"  # 15 msgs, 3 errors
ROO_EXT = "rooveterinaryinc.roo-cline"


def _put(src, dst, age_seconds: float):
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, dst)
    os.utime(dst, (NOW - age_seconds, NOW - age_seconds))
    return dst


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HISTVIEW_HOME", str(home))
    monkeypatch.delenv("HISTVIEW_VSCODE_STORAGE", raising=False)
    return home


@pytest.fixture
def filled_home(home):
    _put(CLAUDE, home / ".claude" / "projects" / "-home-me-app" / "s.jsonl", 2 * 3600)
    storage = home / ".config" / "Code" / "User" / "globalStorage"
    task = storage / ROO_EXT / "tasks" / "task-7f3a" / "api_conversation_history.json"
    _put(ROO, task, 3 * 86400)
    return home


def _picker_app(**kw) -> HistviewApp:
    return HistviewApp(None, pick=True, now=NOW, check_workers=1, **kw)


async def wait_picker(pilot) -> None:
    """Until the picker has its list and every file is checked (a condition, not a sleep)."""
    app = pilot.app
    for _ in range(400):
        await pilot.pause()
        screen = app.screen
        if isinstance(screen, PickerScreen) and screen.places:
            if len(screen.health) == len(screen.found):
                break
    await app.workers.wait_for_complete()
    await pilot.pause()


def _lines(screen: PickerScreen) -> list[str]:
    ol = screen.query_one("#picker-list")
    return [str(ol.get_option_at_index(i).prompt) for i in range(ol.option_count)]


async def test_lists_both_sessions_newest_first_with_counts(filled_home):
    app = _picker_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_picker(pilot)
        screen = app.screen
        assert isinstance(screen, PickerScreen)
        lines = _lines(screen)
        assert len(lines) == 2
        # the Claude Code session is 2 hours old, the Roo task 3 days: newest first
        assert "-home-me-app/s.jsonl" in lines[0] and lines[0].lstrip().startswith("2h")
        assert "task-7f3a" in lines[1] and lines[1].lstrip().startswith("3d")
        assert lines[0].split()[1:5] == ["claude-code", "6", "0", "1"]
        assert lines[1].split()[1:5] == ["roo", "15", "3", "0"]
        status = str(screen.query_one("#picker-status").render())
        assert "2 sessions" in status and "checking" not in status


async def test_enter_opens_the_highlighted_session(filled_home):
    app = _picker_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_picker(pilot)
        await pilot.press("down", "enter")
        await wait_ready(pilot)
        assert not isinstance(app.screen, PickerScreen)
        assert app.main.path.endswith("api_conversation_history.json")
        assert app.main.session.format == "roo" and len(app.main.session.messages) == 15
        header = str(app.main.query_one("#header").render())
        # a Roo task is named by its folder
        assert "tasks/task-7f3a" in header and "3 errors" in header
        assert app.main.query_one(Timeline).state.table.rows


async def test_escape_quits_without_opening(filled_home):
    app = _picker_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_picker(pilot)
        await pilot.press("escape")
        await pilot.pause()
        assert app.main is None
    assert app.return_code == 0


async def test_empty_home_says_where_it_looked(home):
    app = _picker_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_picker(pilot)
        screen = app.screen
        assert isinstance(screen, PickerScreen) and screen.found == []
        text = str(screen.query_one("#picker-empty").render())
        assert "No sessions found" in text
        assert os.path.join(str(home), ".claude", "projects", "*", "*.jsonl") in text
        assert "rollout-*.jsonl" in text and "api_conversation_history.json" in text
        await pilot.press("q")
    assert app.return_code == 0


def _projects_folder(tmp_path):
    folder = tmp_path / "projects"
    _put(CLAUDE, folder / "app" / "one.jsonl", 60)
    _put(CLAUDE, folder / "app" / "agent-1234.jsonl", 30)  # a subagent thread: not listed
    _put(HOSTILE, folder / "odd" / "hostile.json", 5 * 86400)
    (folder / "app" / "package.json").write_text('{"name": "not a session"}')
    return folder


def test_find_in_folder_takes_sessions_only(tmp_path):
    folder = _projects_folder(tmp_path)
    names = [os.path.relpath(f.path, folder) for f in find_in_folder(str(folder))]
    assert names == [os.path.join("app", "one.jsonl"), os.path.join("odd", "hostile.json")]


def test_needs_picker_only_for_folders_no_format_claims(tmp_path):
    folder = _projects_folder(tmp_path)
    task = tmp_path / "task"
    _put(ROO, task / "api_conversation_history.json", 0)
    assert needs_picker(str(folder))
    assert not needs_picker(str(task))  # a Roo task folder opens directly
    assert not needs_picker(str(CLAUDE))
    assert not needs_picker(None)


async def test_folder_opens_the_picker_and_shows_hostile_text_inert(tmp_path):
    folder = _projects_folder(tmp_path)
    app = HistviewApp(str(folder), now=NOW, check_workers=1)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_picker(pilot)
        screen = app.screen
        assert isinstance(screen, PickerScreen)
        lines = _lines(screen)
        assert len(lines) == 2 and "app/one.jsonl" in lines[0] and "odd/hostile.json" in lines[1]
        assert not any(ch in line for line in lines for ch in "\x1b\x07\r")
        await pilot.press("enter")
        await wait_ready(pilot)
        assert app.main.path == str(folder / "app" / "one.jsonl")
        assert app.main.session.format == "claude-code"
        assert "one.jsonl" in str(app.main.query_one("#header").render())


def test_age_text():
    assert [age_text(NOW - s, NOW) for s in (5, 120, 7200, 3 * 86400, 90 * 86400)] == [
        "now",
        "2m",
        "2h",
        "3d",
        "3mo",
    ]
    assert age_text(NOW - 800 * 86400, NOW) == "2y"
    assert age_text(NOW + 100, NOW) == "now"  # a file from the future (clock skew)


def test_snapshot_picker(snap_compare, filled_home):
    assert snap_compare(_picker_app(), terminal_size=(80, 24), run_before=wait_picker)


async def test_q_in_a_picked_session_returns_to_the_picker(filled_home):
    app = _picker_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_picker(pilot)
        await pilot.press("j")  # j/k move in the list too
        assert app.screen.query_one("#picker-list").highlighted == 1
        await pilot.press("k", "j", "enter")
        await wait_ready(pilot)
        assert app.main.session is not None and not isinstance(app.screen, PickerScreen)
        # applied fixes are not lost by leaving: q asks first
        await pilot.press("A", "q")
        await pilot.pause()
        assert type(app.screen).__name__ == "ConfirmScreen"
        await pilot.press("y")
        await wait_picker(pilot)
        assert isinstance(app.screen, PickerScreen) and app.main is None and app.is_running
        await pilot.press("enter")  # another pick opens as before
        await wait_ready(pilot)
        assert app.main.session.format == "claude-code"
        await pilot.press("q")
        await wait_picker(pilot)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0 and not app.is_running
