"""The session picker (`histview --pick`, or `histview FOLDER` on a folder that is not itself
a session): the sessions `histview list` would show, newest first, with their health.

Finding runs in a thread worker behind a loading indicator; the rows appear as soon as the
files are known (no file opened yet) and each fills in its format and counts when its check
is done. The screen dismisses with the chosen file's path, or None to quit.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, LoadingIndicator, Static
from textual.worker import get_current_worker

from repair import discover
from repair.discover import Found, Health
from repair.sanitize import clean_line

from .keys import JKOptionList

TASK_FILES = ("api_conversation_history.json", "claude_messages.json")  # Roo/Cline/Kilo tasks
COLUMNS = f"{'AGE':>4}  {'FORMAT':<12}{'MSGS':>6}{'ERR':>5}{'WARN':>5}  SESSION"


def age_text(mtime: float, now: float) -> str:
    """How long ago, in at most 4 characters: now, 12m, 5h, 3d, 7mo, 2y."""
    s = max(0.0, now - mtime)
    if s < 60:
        return "now"
    if s < 3600:
        return f"{int(s // 60)}m"
    if s < 86400:
        return f"{int(s // 3600)}h"
    if s < 30 * 86400:
        return f"{int(s // 86400)}d"
    if s < 365 * 86400:
        return f"{int(s // (30 * 86400))}mo"
    return f"{int(s // (365 * 86400))}y"


def session_name(path: str) -> str:
    """Short name: a Roo/Cline task folder's name, else `parent/file` (project/session)."""
    parent, name = os.path.split(path)
    if name in TASK_FILES:
        return os.path.basename(parent)
    return f"{os.path.basename(parent)}/{name}"


def row_content(f: Found, h: Health | None, now: float) -> Content:
    """One picker line. Every piece of file-derived text goes through clean_line, and the
    result is a Content (never parsed as markup)."""
    age = f"{age_text(f.mtime, now):>4}  "
    name = clean_line(session_name(f.path), 120)
    if h is None:
        return Content.assemble(age, (f"{'checking…':<12}{'':>16}  ", "dim italic"), name)
    if h.error is not None:
        return Content.assemble(
            age,
            (f"{'unreadable':<28}  ", "bold $text-error"),
            name,
            ("  " + clean_line(h.error, 160), "$text-error"),
        )
    parts: list = [
        age,
        f"{clean_line(h.format or '?', 12):<12}{h.messages:>6}",
        (f"{h.errors:>5}", "bold $text-error" if h.errors else "dim"),
        (f"{h.warnings:>5}", "bold $text-warning" if h.warnings else "dim"),
        "  ",
        (name, "bold"),
    ]
    if h.title:
        parts.append(("  " + clean_line(h.title, 120), "dim"))
    return Content.assemble(*parts)


class Discovered(Message):
    def __init__(self, found: list[Found], places: list[str]) -> None:
        super().__init__()
        self.found = found
        self.places = places


class Checked(Message):
    def __init__(self, health: Health) -> None:
        super().__init__()
        self.health = health


@dataclass(frozen=True)
class PickSource:
    """Where to look: a folder the user named, or (None) the agents' usual places."""

    folder: str | None = None

    def title(self) -> str:
        return self.folder or "your recent sessions"


class PickerScreen(Screen[str | None]):
    DEFAULT_CSS = """
    PickerScreen #picker-header { height: 1; background: $panel; padding: 0 1; }
    PickerScreen #picker-columns { height: 1; padding: 0 1; color: $text-muted; text-style: bold; }
    PickerScreen #picker-loading { height: 1fr; }
    PickerScreen #picker-list {
        height: 1fr; border: none; text-wrap: nowrap; text-overflow: ellipsis;
    }
    PickerScreen #picker-empty { height: 1fr; padding: 1 2; }
    PickerScreen #picker-status { height: 1; padding: 0 1; color: $text-muted; }
    """
    BINDINGS = [Binding("escape,q", "quit_picker", "Quit")]

    def __init__(
        self,
        source: PickSource | None = None,
        *,
        now: float | None = None,
        workers: int | None = None,
    ) -> None:
        super().__init__()
        self.source = source or PickSource()
        self.now = now  # fixed in tests; else the clock when the list arrives
        self.check_workers = workers  # None: a process pool sized by discover
        self.found: list[Found] = []
        self.health: dict[str, Health] = {}
        self.places: list[str] = []
        self._index: dict[str, int] = {}

    def compose(self) -> ComposeResult:
        yield Static(id="picker-header", markup=False)
        yield Static(Content(COLUMNS), id="picker-columns", markup=False)
        yield LoadingIndicator(id="picker-loading")
        yield JKOptionList(id="picker-list", markup=False)
        yield Static(id="picker-empty", markup=False)
        yield Static(id="picker-status", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        where = clean_line(self.source.title(), 70)
        self.query_one("#picker-header", Static).update(
            Content.assemble(("histview ", "bold"), "pick a session  ", (where, "$text-accent"))
        )
        self.query_one("#picker-columns").display = False
        self.query_one("#picker-list").display = False
        self.query_one("#picker-empty").display = False
        self._status("Looking for sessions…")
        self.discover()

    @work(thread=True, exit_on_error=False, exclusive=True, group="discover")
    def discover(self) -> None:
        if self.source.folder:
            found = discover.find_in_folder(self.source.folder)
            places = discover.folder_places(self.source.folder)
        else:
            roots = discover.Roots.from_env()
            found = discover.find_sessions(roots)
            places = roots.describe()
        self.post_message(Discovered(found, places))
        worker = get_current_worker()
        for health in discover.iter_health(found, self.check_workers):
            if worker.is_cancelled:
                break
            self.post_message(Checked(health))

    def on_discovered(self, msg: Discovered) -> None:
        self.found = msg.found
        self.places = msg.places
        if self.now is None:
            self.now = time.time()
        self.query_one("#picker-loading").display = False
        if not self.found:
            lines: list = [("No sessions found.", "bold"), " Looked in:\n"]
            lines += [f"  {clean_line(p, 500)}\n" for p in self.places]
            lines.append(("\nPress q to quit.", "dim"))
            self.query_one("#picker-empty", Static).update(Content.assemble(*lines))
            self.query_one("#picker-empty").display = True
            self._status("No sessions found.")
            return
        self._index = {f.path: i for i, f in enumerate(self.found)}
        ol = self.query_one("#picker-list", JKOptionList)
        ol.set_options(row_content(f, None, self.now) for f in self.found)
        ol.highlighted = 0
        ol.display = True
        self.query_one("#picker-columns").display = True
        ol.focus()
        self._update_status()

    def on_checked(self, msg: Checked) -> None:
        h = msg.health
        i = self._index.get(h.path)
        if i is None:
            return
        self.health[h.path] = h
        now = self.now if self.now is not None else time.time()
        self.query_one("#picker-list", JKOptionList).replace_option_prompt_at_index(
            i, row_content(self.found[i], h, now)
        )
        self._update_status()

    def _update_status(self) -> None:
        n, done = len(self.found), len(self.health)
        what = f"{n} session{'s' if n != 1 else ''}, newest first"
        if done < n:
            what += f"; checking {done} of {n}…"
        self._status(what + "   enter: open   esc/q: quit")

    def _status(self, text: str) -> None:
        self.query_one("#picker-status", Static).update(Content(text))

    @on(JKOptionList.OptionSelected, "#picker-list")
    def _picked(self, event: JKOptionList.OptionSelected) -> None:
        self.workers.cancel_node(self)  # the checks left are not needed any more
        self.dismiss(self.found[event.option_index].path)

    def action_quit_picker(self) -> None:
        self.workers.cancel_node(self)
        self.dismiss(None)
