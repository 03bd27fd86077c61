"""Modal screens: help, yes/no confirmation, search, export dialog."""

from __future__ import annotations

import os
import textwrap
from typing import TypeVar

from rich.style import Style
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.style import Style as TStyle
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from repair.sanitize import clean_line

from .keys import JKOptionList, JKScroll
from .messages import ScreenReady

R = TypeVar("R")

# The help box's width (#help-box in histview.tcss) and what its frame takes of it: the
# border, the padding and the scrollbar's stable gutter.
HELP_WIDTH = 76
HELP_FRAME = 2 + 2 + 2


class Modal(ModalScreen[R]):
    """A modal screen of histview: it says when it takes keys (mounted, its focus set), and
    the keys that close it do so at once, in the app's dispatch of the key (no message on
    the way): the keys typed ahead of it are handed to it, then to the screen below, in the
    order typed (HistviewApp._pass_ahead)."""

    def on_mount(self) -> None:
        self.app.post_message(ScreenReady(self))

    def on_screen_resume(self) -> None:
        if self.is_mounted:  # (on top again: a screen over it, the palette, closed)
            self.app.post_message(ScreenReady(self))


class HelpScreen(Modal[None]):
    """Keys (derived from the bindings) and the legend of what the timeline draws (in the
    timeline's own styles)."""

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def __init__(
        self,
        sections: list[tuple[str, list[tuple[str, str]]]],
        legend: list[tuple[str, str, Style]],
    ) -> None:
        super().__init__()
        self.sections = sections
        self.legend = legend

    def compose(self) -> ComposeResult:
        with JKScroll(id="help-box"):
            yield Static(self._text(), id="help-text")

    def on_resize(self) -> None:
        self.query_one("#help-text", Static).update(self._text())

    def _text(self) -> Content:
        """The keys and the legend in two columns: a description too long for its row goes
        on under itself, not back at the key's column."""
        width = min(max(len(k) for _t, rows in self.sections for k, _w in rows) + 2, 18)
        room = max(min(HELP_WIDTH, self.app.size.width) - HELP_FRAME - width, 16)
        indent = "\n" + " " * width

        def wrapped(what: str) -> str:
            return indent.join(textwrap.wrap(what, room) or [""]) + "\n"

        lines: list = [("histview keys", "bold"), ("   (esc closes; j/k scroll)\n", "dim")]
        for title, rows in self.sections:
            lines.append((f"\n{title}\n", "bold underline"))
            for key, what in rows:
                lines.append((f"{key:<{width}}", "bold $text-accent"))
                lines.append(wrapped(what))
        lines.append(("\nOn the timeline\n", "bold underline"))
        for glyph, what, style in self.legend:
            lines.append(Content.styled(glyph, TStyle.from_rich_style(style)))
            lines.append(" " * max(width - len(glyph), 1) + wrapped(what))
        return Content.assemble(*lines)


class ConfirmScreen(Modal[bool]):
    """A yes/no question whose "yes" loses or overwrites something: the safe answer (no) has
    the focus, so enter keeps the work."""

    AUTO_FOCUS = "#no"
    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
        Binding("enter,space", "press", "Answer", show=False, priority=True),
    ]

    def __init__(self, question: str, yes: str = "Yes", no: str = "No", purpose: str = "") -> None:
        super().__init__()
        self.question = question
        self.yes = yes
        self.no = no
        self.purpose = purpose

    def compose(self) -> ComposeResult:
        with Grid(id="confirm-box"):
            yield Label(Content(self.question), id="confirm-question")
            yield Button(Content(f"{self.yes} (y)"), variant="error", id="yes")
            yield Button(Content(f"{self.no} (n)"), variant="primary", id="no")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)

    def action_press(self) -> None:
        """The focused button's answer (not through Button.Pressed: at once)."""
        if isinstance(self.focused, Button):
            self.dismiss(self.focused.id == "yes")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class SearchScreen(Modal[str | None]):
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        # (not the input's enter: at once); enter typed before the app had the terminal
        # reaches it as a newline (ctrl+j)
        Binding("enter,ctrl+j", "submit", "Search", show=False, priority=True),
    ]

    def __init__(self, last: str = "") -> None:
        super().__init__()
        self.last = last

    def compose(self) -> ComposeResult:
        with Vertical(id="search-box"):
            yield Label("Search text or a tool id (enter: search, esc: cancel)")
            yield Input(value=self.last, id="search-input", select_on_focus=True)

    def action_submit(self) -> None:
        self.dismiss(self.query_one(Input).value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ExportScreen(Modal[tuple[str, str] | None]):
    """Asks for the output and report paths; the app does the checks and the writing."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        # (not the input's enter nor the button's: at once); space on a button presses it
        Binding("enter", "submit", "Export", show=False, priority=True),
        Binding("space", "press", "Press", show=False, priority=True),
    ]

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

    def action_submit(self) -> None:
        self._press(self.focused.id if isinstance(self.focused, Button) else "export-ok")

    def action_press(self) -> None:
        """Space: the focused button's press, at once (in an input it is a space)."""
        if not isinstance(self.focused, Button):
            raise SkipAction()
        self._press(self.focused.id)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self._press(event.button.id)

    def _press(self, button: str | None) -> None:
        if button == "export-ok":
            self._submit()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ThreadScreen(Modal[int | None]):
    """The conversation and its threads (Claude Code sidechains, subagent files), each with
    its size and its findings; enter opens one in the timeline. Dismisses with the row
    chosen (0: the main conversation, k: thread k - 1)."""

    BINDINGS = [
        Binding("escape,t", "cancel", "Close"),
        Binding("enter", "open", "Open", show=False, priority=True),  # (at once)
    ]

    def __init__(self, rows: list[tuple[str, int, dict[str, int]]], current: int = 0) -> None:
        super().__init__()
        self.rows = rows
        self.current = current

    def compose(self) -> ComposeResult:
        width = max(len(clean_line(label, 48)) for label, _n, _c in self.rows)
        options = [
            Option(thread_line(label, n, counts, width, k == self.current), id=str(k))
            for k, (label, n, counts) in enumerate(self.rows)
        ]
        with Vertical(id="threads-box"):
            yield Label(
                Content.assemble(
                    ("Threads", "bold"), ("   enter opens one in the timeline, esc closes", "dim")
                )
            )
            yield JKOptionList(*options, id="threads-list", markup=False)

    def on_mount(self) -> None:
        box = self.query_one("#threads-list", JKOptionList)
        box.highlighted = self.current
        box.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option_index)

    def action_open(self) -> None:
        at = self.query_one("#threads-list", JKOptionList).highlighted
        if at is not None:
            self.dismiss(at)

    def action_cancel(self) -> None:
        self.dismiss(None)


def thread_line(label: str, n: int, counts: dict[str, int], width: int, current: bool) -> Content:
    e, w, i = counts.get("error", 0), counts.get("warning", 0), counts.get("info", 0)
    return Content.assemble(
        ("▶ " if current else "  ", "bold $text-accent"),
        (f"{clean_line(label, 48):<{width}}", "bold" if current else ""),
        (f"  {n:>6} msgs  ", "dim"),
        (f"● {e}", "bold $text-error" if e else "dim"),
        "  ",
        (f"▲ {w}", "bold $text-warning" if w else "dim"),
        "  ",
        (f"○ {i}", "$text-primary" if i else "dim"),
    )
