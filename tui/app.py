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
from textual.message_pump import MessagePump
from textual.screen import Screen

from repair.errors import InputError
from repair.formats import resolve_path
from repair.model import Session

from .config import load_config, save_config
from .keys import APP_KEYS, PALETTE_KEY
from .main_screen import MainScreen
from .messages import AnalysisReady, KeyPassed, LoadFailed, ScreenReady, SessionLoaded
from .picker import PickerScreen, PickSource
from .screens import Modal
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
        # the keys read lately and the screen each was handed to; those typed ahead of a
        # modal screen a key before them opened, to hand to it one at a time
        self._handed: deque[tuple[events.Key, Screen]] = deque(maxlen=64)
        self._on_way: list[events.Key] = []  # those whose handlers have not all run yet
        # typed behind a key that waits its turn (below): not read yet, in the order typed
        self._held: list[events.Key] = []
        self._ahead: list[events.Key] = []
        # the one of them handed over, not done yet, and the screen it was handed to
        self._in_flight: tuple[events.Key, Screen] | None = None
        self._takes_keys: Screen | None = None  # the last screen that said it takes keys

    async def on_event(self, event: events.Event) -> None:
        if not isinstance(event, events.Key) or event.is_forwarded:
            await super().on_event(event)
            return
        handing = self._in_flight is not None and event is self._in_flight[0]
        if not handing and self._waits(event):
            self._held.append(events.Key(event.key, event.character))
            return
        self._handed.append((event, self.screen))
        self._on_way.append(event)
        target = self.focused or self.screen
        await super().on_event(event)  # (to the focused widget: it comes back up here)
        self._follow(event, target)

    def _waits(self, key: events.Key) -> bool:
        """A key typed now waits its turn behind the keys typed before it that wait; and a
        key a priority binding takes (ctrl+p, ctrl+q, enter in a dialog), which would run
        before the widget has the keys before it, waits for those still on their way. On any
        screen but the session's (a dialog, the palette), every key waits for those on their
        way: one of them may close it, and the keys behind it go to the widget focused once
        it has, below (the search box's input, the timeline), not to a widget of the closed
        screen. (The session screen takes keys at once: its queue holds those typed while it
        is busy, and a dialog a key opens is handed the keys behind it, `on_key`.)"""
        if self._held or self._ahead or self._in_flight is not None:
            return True
        if not self._on_way:
            return False
        if not isinstance(self.screen, MainScreen):
            return True
        chain = self.screen._binding_chain
        return any(b.priority for _n, bs in chain for b in bs.key_to_bindings.get(key.key, ()))

    def _follow(self, key: events.Key, node: MessagePump) -> None:
        """Behind `key` in the queue of `node` (the widget it went to, then each parent up to
        the app, as the key bubbles): a callback that does the same on the parent once
        `node` is done with the key; at the app, the key has passed. No handler can stop a
        callback; a node closing takes no more (the key goes no further either)."""
        if not node.call_later(self._followed, key, node):
            self.post_message(KeyPassed(key))

    def _followed(self, key: events.Key, node: MessagePump) -> None:
        if node is self:
            self.post_message(KeyPassed(key))
        else:
            self._follow(key, node._parent or self)

    def on_key(self, event: events.Key) -> None:
        """(Before the bindings: what a key says on the session screen.) Keys read in one
        burst are all handed to the widget focused then, before the first of them runs:
        those after a key that opened a modal screen (`/` and the search typed at once while
        the UI is busy) come back here from the screen below it. They go to the modal, in
        the order typed, not to its bindings."""
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
        self._pass_ahead()

    def _pass_ahead(self) -> None:
        """The next key typed ahead, read again as if typed now: once the screen on top has
        said it takes keys (`ScreenReady`) and the key handed before is done (`KeyPassed`),
        or changed the screen."""
        if self._held and not self._on_way:  # (the keys typed before them are all back)
            self._ahead += self._held
            self._held.clear()
        if self._in_flight is not None or not self._ahead:
            return
        if not self.screen_stack or self._exit:
            self._ahead.clear()
            self._held.clear()
            return
        if self._takes_keys is not self.screen:
            return  # (its ScreenReady hands it the key)
        key = self._ahead.pop(0)
        self._in_flight = (key, self.screen)
        self.post_message(key)

    def on_key_passed(self, msg: KeyPassed) -> None:
        """Every handler of a key has run: a widget took it, or a binding (whose effect on
        the screens is done: the modals close at once, screens.py)."""
        self._on_way = [k for k in self._on_way if k is not msg.key]
        if self._in_flight is None or msg.key is not self._in_flight[0]:
            self._pass_ahead()
            return
        if self.screen is not self._in_flight[1]:
            self._takes_keys = None  # (the screen on top now says when it takes keys)
        self._in_flight = None
        self._pass_ahead()

    def on_screen_ready(self, msg: ScreenReady) -> None:
        if msg.screen is not self.screen:
            return  # (another screen is on top of it already: that one says)
        self._takes_keys = msg.screen
        if self._in_flight is not None and self._in_flight[1] is not msg.screen:
            self._in_flight = None  # it changed the screen (what followed it may be gone)
        self._pass_ahead()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """A screen of Textual's own (the command palette) says nothing: a widget of it
        focused is its word."""
        screen = event.widget.screen if event.widget.is_attached else None
        if screen is not None and not isinstance(screen, (Modal, MainScreen)):
            self.on_screen_ready(ScreenReady(screen))

    def _screen_changed(self, screen: Screen) -> None:
        """Such a screen back on top (a question asked over the palette answered) keeps its
        focus, so no widget of it says anything: back on top with its focus set is its word."""
        if isinstance(screen, (Modal, MainScreen)) or not screen.is_mounted:
            return
        if screen.focused is not None:
            self.post_message(ScreenReady(screen))

    @property
    def load_error(self) -> str | None:
        return self.main.load_error if self.main is not None else None

    def on_mount(self) -> None:
        theme = load_config().get("theme")
        self.theme = theme if theme in self.available_themes else "textual-dark"
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self.screen_change_signal.subscribe(self, self._screen_changed)
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
