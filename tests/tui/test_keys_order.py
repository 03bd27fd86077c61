"""Keys run in the order typed (issue 10, point 3): a priority key (ctrl+p, ctrl+q, enter in
a dialog) typed behind other keys waits for them; the keys behind a question asked over the
command palette reach the palette; space on a dialog's button closes it before the next key;
a key whose way up leaves no trace does not hold the keys behind it."""

from __future__ import annotations

import shutil

import pytest
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input

from tests.paths import SAMPLES
from tests.tui.tui_helpers import (
    burst,
    opened,
    opened_held,
    settle,
    typed_once_loaded,
    until,
)
from tui.screens import Modal

ROO = SAMPLES / "roo_reused_tool_use_id.json"


def _handed(app) -> bool:
    """Every key typed has been handed over and has run its course."""
    return not app._held and not app._ahead and app._in_flight is None and not app._on_way


def _palette_input(app) -> list[str] | None:
    """The command palette's input, when the palette is on top."""
    if type(app.screen).__name__ != "CommandPalette":
        return None
    return [field.value for field in app.screen.query(Input)]


def _screens(app) -> list[str]:
    return [type(s).__name__ for s in app.screen_stack]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_the_palette_key_runs_after_a_search_typed_before_it(size):
    """`/read⏎ ctrl+p` read in one burst: the search for "read" runs, then the palette opens
    (empty) over the session, as the same keys typed one at a time; not the palette first
    with "/read" typed into it and enter running one of its commands."""
    keys = ["slash", *"read", "enter", "ctrl+p"]

    def seen(app) -> tuple:
        main = app.main
        return (_screens(app), main.search.query if main.search else None, _palette_input(app))

    loaded = await typed_once_loaded(ROO, size, keys, seen)
    assert loaded == (["Screen", "MainScreen", "CommandPalette"], "read", [""])
    async with opened(ROO, size) as (app, pilot):
        burst(app, keys)
        await until(pilot, lambda: _handed(app) and _palette_input(app) is not None)
        await settle(pilot)
        assert seen(app) == loaded


async def test_the_palette_key_typed_into_a_search_box_opening_opens_over_it():
    """`/read ctrl+p` in one burst: "read" goes to the search box, then the palette opens
    over it (empty)."""
    async with opened(ROO, (80, 24)) as (app, pilot):
        burst(app, ["slash", *"read", "ctrl+p"])
        await until(pilot, lambda: _handed(app) and _palette_input(app) is not None)
        assert _screens(app) == ["Screen", "MainScreen", "SearchScreen", "CommandPalette"]
        assert app.screen_stack[-2].query_one(Input).value == "read"
        assert _palette_input(app) == [""]


async def test_the_palette_key_typed_while_the_file_is_read_waits_for_the_search(
    cc_file, monkeypatch
):
    """While the file is read, `/toolu_⏎ ctrl+p` in one burst: the search waits for the file
    (in the queue), then the palette opens, empty."""
    reading = opened_held(monkeypatch, cc_file, (80, 24), "load_session", lambda m: m.head_only)
    async with reading as (app, pilot, gate):
        main = app.main
        burst(app, ["slash", *"toolu_", "enter", "ctrl+p"])
        await until(pilot, lambda: _handed(app) and _palette_input(app) is not None)
        assert [(w.action, w.query) for w in main._queued] == [("search", "toolu_")]
        assert _palette_input(app) == [""]
        gate.set()


async def test_keys_behind_a_question_over_the_palette_reach_the_palette(demo_copy):
    """Fixes applied, `ctrl+p ctrl+q n theme` in one burst: the palette opens, ctrl+q asks
    over it, n answers (stay), and "theme" goes to the palette, back on top without a change
    of focus."""
    async with opened(demo_copy, (80, 24)) as (app, pilot):
        await pilot.press("A")
        await settle(pilot)
        burst(app, ["ctrl+p", "ctrl+q", "n", *"theme"])
        await until(pilot, lambda: _handed(app) and _palette_input(app) is not None)
        assert _screens(app) == ["Screen", "MainScreen", "CommandPalette"]
        assert _palette_input(app) == ["theme"]
        assert app.is_running


# the export dialog opened, the focus on Cancel, space: closed; then a search typed
SPACE_CANCEL = ["e", "tab", "tab", "tab", "space", "slash", *"read", "enter"]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_space_on_the_export_dialogs_button_closes_it_before_the_next_key(tmp_path, size):
    """`e`, tab to Cancel, space, then `/read⏎`, in one burst: space closes the dialog
    before `/` is handed over, so the search runs on the session screen (not `r` of "read"
    opening the repair pane with "ead" searched), as the same keys typed one at a time."""
    path = tmp_path / "s.json"
    shutil.copy(ROO, path)

    def seen(app) -> tuple:
        main = app.main
        return (_screens(app), main.repair_open, main.search.query if main.search else None)

    loaded = await typed_once_loaded(path, size, SPACE_CANCEL, seen)
    assert loaded == (["Screen", "MainScreen"], False, "read")
    async with opened(path, size) as (app, pilot):
        burst(app, SPACE_CANCEL)
        await until(pilot, lambda: _handed(app) and app.screen is app.main)
        await settle(pilot)
        assert seen(app) == loaded


class _Keeper(Vertical):
    """A box that keeps every message of what is in it to itself (a widget of another
    library may): nothing bubbles past it, not even the app's own messages."""

    async def _on_message(self, message) -> None:
        message.stop()
        await super()._on_message(message)


class _KeeperScreen(Modal[None]):
    def compose(self) -> ComposeResult:
        with _Keeper():
            yield Input(id="kept")


async def test_a_key_whose_way_up_is_stopped_does_not_hold_the_keys_behind_it():
    """Keys typed ahead of a modal whose input sits in a box that stops whatever bubbles
    through it: each key handed to the input is done when the input is done with it, and
    the next one follows, in the order typed."""
    async with opened(ROO, (80, 24)) as (app, pilot):
        burst(app, [*"abc"])
        app.call_later(app.push_screen, _KeeperScreen())  # (behind the keys: they wait)
        await until(pilot, lambda: _handed(app) and isinstance(app.screen, _KeeperScreen))
        assert app.screen.query_one("#kept", Input).value == "abc"


def _below(app) -> tuple:
    """Where the keys landed: the screens, the timeline's cursor, the search box's text
    (when it is open) and whether the repair pane is open."""
    from tests.tui.tui_helpers import timeline

    search = [
        s.query_one(Input).value for s in app.screen_stack if type(s).__name__ == "SearchScreen"
    ]
    return (_screens(app), timeline(app).cursor, search, app.main.repair_open)


async def _opened_then(path, before: list[str], keys: list[str], at_once: bool) -> tuple:
    """`before` typed one at a time on `path`, then `keys`: one at a time, or in one burst."""
    async with opened(path, (80, 24)) as (app, pilot):
        for key in before:
            await pilot.press(key)
            await settle(pilot)
        if at_once:
            burst(app, keys)
            await until(pilot, lambda: _handed(app))
        else:
            for key in keys:
                await pilot.press(key)
                await settle(pilot)
        await settle(pilot)
        return _below(app)


# a dialog open, then a key that closes it and keys for the screen below it, in one burst
CLOSED_THEN_TYPED = {
    # the search box with "a" typed, ctrl+q's question (fixes applied) answered n, "cd" more
    "question": (["A", "slash", "a", "ctrl+q"], ["n", *"cd"]),
    # the palette opened over the search box, closed, "cd" more
    "palette": (["slash", "a", "ctrl+p"], ["escape", *"cd"]),
    # the search box closed, r: the repair pane
    "search box": (["slash"], ["escape", "r"]),
    # the search box, the export dialog, the palette closed: arrows and j into the timeline
    "search box arrows": (["slash"], ["escape", "down", "down", "j"]),
    "export arrows": (["e"], ["escape", "down", "down", "j"]),
    "palette arrows": (["ctrl+p"], ["escape", "down", "down", "j"]),
    "search box G": (["slash"], ["escape", "G"]),
}


@pytest.mark.parametrize("case", CLOSED_THEN_TYPED)
async def test_keys_behind_a_key_that_closes_a_dialog_go_to_the_screen_below(demo_copy, case):
    """A key that closes a dialog (or the palette), typed with more keys behind it: they go
    to the widget focused below once the dialog is closed (the search box's input, the
    timeline), as the same keys typed one at a time. Before: handed to the dialog's widget
    as it closed, they were typed into its input, dropped, or ran the bindings of the
    screen below past its focused input (`G` typed into the closed search box; one `down`
    in three lost; "cd" lost)."""
    before, keys = CLOSED_THEN_TYPED[case]
    one_at_a_time = await _opened_then(demo_copy, before, keys, at_once=False)
    assert await _opened_then(demo_copy, before, keys, at_once=True) == one_at_a_time
