"""Keys: j/k in every list and pane, and the help rows derived from the Binding declarations
(each key is declared once, as a Binding with its description; the footer, the help screen
and the command palette all read it)."""

from __future__ import annotations

from collections.abc import Iterable

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.keys import format_key
from textual.widgets import Footer, OptionList
from textual.widgets._footer import FooterKey

# j/k (and g/G) next to the arrows, in every scrolling pane and every list
SCROLL_KEYS: list[BindingType] = [
    Binding("j", "scroll_down", "Scroll down", show=False),
    Binding("k", "scroll_up", "Scroll up", show=False),
    Binding("g", "scroll_home", "Top", show=False),
    Binding("G", "scroll_end", "Bottom", show=False),
]
LIST_KEYS: list[BindingType] = [
    Binding("j", "cursor_down", "Down", show=False),
    Binding("k", "cursor_up", "Up", show=False),
    Binding("g", "first", "First", show=False),
    Binding("G", "last", "Last", show=False),
]


class JKScroll(VerticalScroll):
    BINDINGS = SCROLL_KEYS


class JKOptionList(OptionList):
    BINDINGS = LIST_KEYS


# Keys of the app itself, on every screen: quit asks before losing fixes (the session screen
# answers), the command palette.
APP_KEYS: list[BindingType] = [
    Binding(
        "ctrl+q",
        "quit",
        "Quit",
        show=False,
        priority=True,
        tooltip="quit histview; asks before losing fixes",
        id="quit",
    ),
    Binding("ctrl+c", "quit", "Quit", show=False, id="quit-ctrl-c"),
]
PALETTE_KEY = Binding(
    "ctrl+p",
    "command_palette",
    "Palette",
    tooltip="command palette: every action, and the theme",
    id="command_palette",
)


def declared(bindings: Iterable[BindingType]) -> list[Binding]:
    """The Binding objects of a BINDINGS list (histview declares no tuples)."""
    return [b for b in bindings if isinstance(b, Binding)]


def key_name(key: str) -> str:
    """How a key is written in help and the README: `?`, `/`, `]`, `↓`, `ctrl+y` (Textual's
    footer names, ctrl spelled out)."""
    if key.startswith("ctrl+"):
        return key
    return format_key(key)


def help_rows(bindings: Iterable[Binding]) -> list[tuple[str, str]]:
    """(keys, what) per action, in declaration order; keys bound to the same action share
    one row ("ctrl+q / ctrl+c")."""
    order: list[str] = []
    keys: dict[str, list[str]] = {}
    what: dict[str, str] = {}
    for b in bindings:
        if b.action not in keys:
            order.append(b.action)
            keys[b.action] = []
            what[b.action] = b.tooltip or b.description
        elif b.tooltip and what[b.action] == "":
            what[b.action] = b.tooltip
        for k in b.key.split(","):
            name = key_name(k.strip())
            if name not in keys[b.action]:
                keys[b.action].append(name)
    return [(" / ".join(keys[a]), what[a]) for a in order]


# What a key of the session screen says when it waits (after "Still reading the file
# (211 MB): "). A key pressed before what it needs is there, or while keys typed before it
# wait, waits and runs in the order typed, as it would once loaded (the header counts the
# keys waiting): those below the workbench (lanes, plan, steps), the others the first look
# (every row read, the findings on them, the cursor on the first problem).
WAITS_FOR_WORKBENCH = {
    "toggle_repair": "the repair pane opens when the analysis is done",
    "export": "the export dialog opens when the analysis is done",
    "apply_all": "every fix is applied when the analysis is done",
    "apply_fix": "the selected fix is applied when the analysis is done",
    "skip_fix": "the fix is skipped when the analysis is done",
    "cycle_fix": "the alternative is chosen when the analysis is done",
    "undo": "the undo runs after the steps waiting",
    "redo": "the redo runs after the steps waiting",
    "threads": "the threads are listed when the analysis is done",
    "reload": "the file is read again when this read is done",
}
WAITS_FOR_FIRST_LOOK = {
    "next_finding": "n goes to the next finding once they are found",
    "prev_finding": "N goes to the previous finding once they are found",
    "toggle_filter": "f shows the rows with findings once they are found",
    "next_match": "] goes to the next match once the search has run",
    "prev_match": "[ goes to the previous match once the search has run",
    "copy_id": "y copies the id of the row the cursor is on then",
    "toggle_raw": "J shows the raw JSON of the row the cursor is on then",
}
# the keys that move in what is shown so far, answered at once
ANSWERS_WHILE_LOADING = {
    "top": "nothing to show yet",
    "bottom": "nothing to show yet",
}


class KeysFooter(Footer):
    """The footer, recomposed only when what it shows changed: Textual's recomposes all its
    keys on every `refresh_bindings` (a focus change, a screen's `refresh_bindings`), and a
    key's mount restyles it, which the UI thread paid for four times while a session loads,
    for the same keys but once."""

    _shown: tuple | None = None

    def _keys(self) -> tuple:
        """What `Footer.compose` reads: the shown bindings, each enabled or not, and the
        command palette's key."""
        app = self.app
        return (
            self.compact,
            self.show_command_palette and app.ENABLE_COMMAND_PALETTE,
            tuple(
                (key, id(b), app.get_key_display(b), enabled, tooltip)
                for key, (_, b, enabled, tooltip) in self.screen.active_bindings.items()
                if b.show or key == app.COMMAND_PALETTE_BINDING
            ),
        )

    def compose(self) -> ComposeResult:
        # each key with the class its `compact` watcher gives it at mount (the footer's
        # `compact`, data-bound): mounted with it, the key is not restyled then
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                widget.set_class(self.compact, "-compact", update=False)
            yield widget

    async def recompose(self) -> None:
        if not self._bindings_ready or not self.is_attached:
            return await super().recompose()
        keys = self._keys()
        if keys == self._shown:
            return
        self._shown = keys
        await super().recompose()
