"""The histview TUI (README, The TUI): the app holds the theme, the picker and the quit keys; each
session is a `MainScreen` (tui/main_screen.py) pushed on it."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable
from pathlib import Path

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
