"""The histview TUI (README, The TUI): the app holds the theme, the picker and the quit keys; each
session is a `MainScreen` (tui/main_screen.py) pushed on it."""

from __future__ import annotations

import os
import sys
import time
from collections import deque
from collections.abc import Iterable
from pathlib import Path

from textual import events
from textual.app import App, SystemCommand
from textual.screen import Screen

from repair.errors import InputError
from repair.formats import resolve_path
from repair.model import Session

from .config import load_config, save_config
from .keys import APP_KEYS, PALETTE_KEY
from .main_screen import MainScreen
from .messages import AnalysisReady, LoadFailed, SessionLoaded
from .picker import PickerScreen, PickSource
from .state import Derived, derive

__all__ = [
    "AnalysisReady",
    "Derived",
    "HistviewApp",
    "LoadFailed",
    "MainScreen",
    "SessionLoaded",
    "derive",
]

DEMO = Path(__file__).resolve().parent / "demo" / "demo_session.json"
# a key typed ahead of a modal screen waits for its focus, or for the key before it to be
# done, so many times this long at most
AHEAD_TRIES, AHEAD_GAP = 200, 0.005
BINDING_TRIES = 20  # (a binding that leaves the screen as it is: 0.1 s)


class HistviewApp(App[None]):
    CSS_PATH = "histview.tcss"
    TITLE = "histview"
    ENABLE_COMMAND_PALETTE = True
    COMMAND_PALETTE_BINDING = PALETTE_KEY.key
    BINDINGS = APP_KEYS

    def __init__(
        self,
        path: str | None = None,
        *,
        session: Session | None = None,
        format: str | None = None,
        target: str | None = None,
        pick: bool = False,
        now: float | None = None,
        check_workers: int | None = None,
    ) -> None:
        super().__init__()
        self.path = path
        # the picker: asked for, or the path is a folder that is not itself a session
        self.pick = pick or needs_picker(path)
        self.pick_source = PickSource(path if path and os.path.isdir(path) else None)
        self.picker_now = now  # a fixed clock for the picker's ages (tests)
        self.picker_workers = check_workers
        self.given_session = session
        self.format = format
        self.target = target
        self.main: MainScreen | None = None  # the session on screen (or last shown)
        self._t0 = time.perf_counter()
        # the keys read lately and the screen each was handed to; those typed ahead of a
        # modal screen a key before them opened, to hand to it
        self._handed: deque[tuple[events.Key, Screen]] = deque(maxlen=64)
        self._ahead: list[events.Key] = []
        self._in_flight: events.Key | None = None  # the last of them read again, not done
        self._bound: tuple[Screen, int] | None = None  # it reached the bindings on a screen

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded:
            self._handed.append((event, self.screen))
        await super().on_event(event)

    def on_key(self, event: events.Key) -> None:
        """(Before the bindings: what a key says on the session screen.) Keys read in one
        burst are all handed to the widget focused then, before the first of them runs:
        those after a key that opened a modal screen (`/` and the search typed at once while
        the UI is busy) come back here from the screen below it. They go to the modal, in
        the order typed, not to its bindings."""
        if event is self._in_flight:  # not taken by a widget: a binding takes it next
            self._bound = (self.screen, BINDING_TRIES)
        handed = next((s for k, s in self._handed if k is event), None)
        stack = self.screen_stack
        if handed is None or not stack or handed not in stack:
            return
        if handed is stack[-1]:
            if isinstance(handed, MainScreen):
                handed.key_word(event)
            return
        event.prevent_default()
        event.stop()
        self._ahead.append(events.Key(event.key, event.character))
        if len(self._ahead) == 1:  # (else the keys before it are on their way)
            self._pass_ahead(AHEAD_TRIES)

    def _pass_ahead(self, tries: int) -> None:
        """The next key typed ahead, read again as if typed now: once the modal's input has
        the focus, and the one passed before is done (it may close the modal)."""
        key = self._in_flight
        if key is not None and self._bound is not None and tries > 0:
            # it reached the bindings: its own may close the modal (enter, escape) through
            # messages of its own; the next key waits for the screen to change, or a while
            screen, left = self._bound
            if screen is self.screen and left > 0:
                self._bound = (screen, left - 1)
                self.set_timer(AHEAD_GAP, lambda: self._pass_ahead(tries - 1))
                return
            # what it asked of the screen now on top (the modal's answer) runs first
            self._in_flight, self._bound = None, None
            self.screen.call_later(self._pass_ahead, AHEAD_TRIES)
            return
        if key is not None and not key._stop_propagation and tries > 0:
            self.set_timer(AHEAD_GAP, lambda: self._pass_ahead(tries - 1))
            return
        self._in_flight, self._bound = None, None
        if not self._ahead or not self.screen_stack or self._exit:
            self._ahead.clear()
            return
        if self.screen.focused is None and tries > 0:
            self.set_timer(AHEAD_GAP, lambda: self._pass_ahead(tries - 1))
            return
        self._in_flight = self._ahead.pop(0)
        self.post_message(self._in_flight)
        if self._ahead:
            self.set_timer(AHEAD_GAP, lambda: self._pass_ahead(AHEAD_TRIES))

    @property
    def load_error(self) -> str | None:
        return self.main.load_error if self.main is not None else None

    def on_mount(self) -> None:
        theme = load_config().get("theme")
        self.theme = theme if theme in self.available_themes else "textual-dark"
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        if self.pick:
            self._show_picker()
        else:
            self._open(self.path, from_picker=False)

    def _theme_changed(self, theme) -> None:
        """Keep the theme the user chose for the next run."""
        if theme.name != load_config().get("theme", "textual-dark"):
            save_config(theme=theme.name)

    def _open(self, path: str | None, from_picker: bool) -> None:
        self.main = MainScreen(
            path,
            session=self.given_session,
            format=self.format,
            target=self.target,
            from_picker=from_picker,
            t0=self._t0,
        )
        self.push_screen(self.main, self._session_closed)

    def _session_closed(self, _result: None) -> None:
        """The session screen was closed (q on a session opened from the picker)."""
        self.main = None
        self._show_picker()

    # picker
    def _show_picker(self) -> None:
        picker = PickerScreen(self.pick_source, now=self.picker_now, workers=self.picker_workers)
        self.push_screen(picker, self._picked)

    def _picked(self, path: str | None) -> None:
        if path is None:
            self.exit()
            return
        self._open(path, from_picker=True)

    async def action_quit(self) -> None:
        """ctrl+q, ctrl+c and the palette's Quit: with a session open, they ask before
        losing fixes."""
        if self.main is not None and self.main.is_attached:
            self.main.ask_quit()
        else:
            self.exit()

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if isinstance(screen, MainScreen):
            yield from screen.palette_commands()


def needs_picker(path: str | None) -> bool:
    """A folder no format claims as one session (a projects folder, a folder of files)."""
    if not path or not os.path.isdir(path):
        return False
    try:
        resolve_path(path)
    except InputError:
        return True
    return False


def run_tui(
    file: str | None, *, format: str | None = None, target: str | None = None, pick: bool = False
) -> int:
    """Run the TUI (its arguments were parsed and its path checked by `repair.cli`)."""
    path = file if file or pick else str(DEMO)
    app = HistviewApp(path, format=format, target=target, pick=pick)
    app.run()
    if app.load_error:
        print(f"histview: {app.load_error}", file=sys.stderr)
        return 2
    return app.return_code or 0
