"""Modal screens: help, yes/no confirmation, search, export dialog."""

from __future__ import annotations

import os

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

KEYS: list[tuple[str, str]] = [
    ("j / k, ↓ / ↑", "next / previous row"),
    ("n / N", "next / previous finding"),
    ("g / G, Home / End", "top / bottom"),
    ("PgUp / PgDn", "page up / down"),
    ("click", "select a row"),
    ("enter", "focus the detail of the row"),
    ("J", "raw JSON of the message (toggle)"),
    ("/", "search text or a tool id (enter again: next match)"),
    ("f", "show only rows with findings (toggle)"),
    ("r", "open / close the repair plan"),
    ("a", "apply the selected fix"),
    ("s", "skip the selected fix (toggle)"),
    ("tab", "cycle the fix's alternative action"),
    ("A", "apply all remaining fixes"),
    ("u / ctrl+y", "undo / redo"),
    ("e", "export the repaired session and its report"),
    ("?", "this help"),
    ("ctrl+p", "command palette (every action)"),
    ("q", "quit (asks if there are unexported changes)"),
]

LEGEND: list[tuple[str, str, str]] = [
    ("╭─ │ ╰─", "paired", "lane--paired"),
    ("╭─ ┆ ╵", "call with no result (dangling end)", "lane--orphan-use"),
    ("╷ ┆ ╰─", "result with no call (no start)", "lane--orphan-result"),
    ("╭─ ├─ ╰─", "duplicate results (fork)", "lane--duplicate"),
    ("╭─ │ ╰─", "result not where it belongs", "lane--misplaced"),
    ("┏━ ┃ ┗━", "result drawn above its call", "lane--above"),
    ("╭─ ┆ ╰─", "result under a wrong id", "lane--mismatch"),
    ("»", "more lanes than the gutter shows", "lane--overflow"),
]


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        lines: list = [("histview keys\n\n", "bold")]
        for key, what in KEYS:
            lines.append((f"{key:<20}", "bold $accent"))
            lines.append(f"{what}\n")
        lines.append(("\nlink gutter\n", "bold"))
        for glyph, what, _cls in LEGEND:
            lines.append((f"{glyph:<20}", "bold"))
            lines.append(f"{what}\n")
        lines.append(("\nseverity marks: ● error  ▲ warning  ○ info      (esc closes)", "dim"))
        with VerticalScroll(id="help-box"):
            yield Static(Content.assemble(*lines), id="help-text")


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Grid(id="confirm-box"):
            yield Label(Content(self.question), id="confirm-question")
            yield Button("Yes (y)", variant="error", id="yes")
            yield Button("No (n)", variant="primary", id="no")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class SearchScreen(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, last: str = "") -> None:
        super().__init__()
        self.last = last

    def compose(self) -> ComposeResult:
        with Vertical(id="search-box"):
            yield Label("Search text or tool id (enter: next match, esc: cancel)")
            yield Input(value=self.last, id="search-input", select_on_focus=True)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ExportScreen(ModalScreen[tuple[str, str] | None]):
    """Asks for the output and report paths; the app does the checks and the writing."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, output: str, report: str) -> None:
        super().__init__()
        self.output = output
        self.report = report

    def compose(self) -> ComposeResult:
        with Vertical(id="export-box"):
            yield Label("Export the repaired session", id="export-title")
            yield Label("Output file")
            yield Input(value=self.output, id="export-output")
            yield Label("Report (JSON)")
            yield Input(value=self.report, id="export-report")
            with Horizontal(id="export-buttons"):
                yield Button("Export", variant="primary", id="export-ok")
                yield Button("Cancel", id="export-cancel")

    def _submit(self) -> None:
        out = self.query_one("#export-output", Input).value.strip()
        rep = self.query_one("#export-report", Input).value.strip()
        if out:
            self.dismiss((os.path.expanduser(out), os.path.expanduser(rep) if rep else ""))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "export-ok":
            self._submit()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)
