"""The repair pane: the plan as a list (left) and the selected fix's preview diff (right)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.widgets import Static
from textual.widgets.option_list import Option

from repair.plan import Fix
from repair.preview import Preview
from repair.sanitize import clean_line
from repair.workbench import cannot_write

from .fix_lines import fix_prompts
from .keys import JKOptionList, JKScroll

MAX_DIFF_LINES = 600


class FixList(JKOptionList):
    """The fix list: one line per fix (`text-wrap: nowrap`), as many as the plan has
    (76k at 100k messages). `OptionList` measures every option and indexes it when the
    options are set; here the options are made when drawn or asked for and line y is
    option y, so setting the lines (`set_prompts`) and drawing cost what is on screen."""

    def set_prompts(self, prompts: Sequence[Content]) -> None:
        options = _Options(prompts)
        self._options = options  # type: ignore[assignment]
        self._option_to_index = _IndexOf(options)  # type: ignore[assignment]
        self._id_to_option = {}
        self._mouse_hovering_over = None
        self.highlighted = None
        self._clear_caches()
        self._update_lines()

    def _update_lines(self) -> None:
        if not self.scrollable_content_region:
            return
        n = len(self._options)
        cache = self._line_cache
        if not isinstance(cache.lines, _Lines) or len(cache.lines) != n:
            cache.lines = _Lines(n, lambda y: (y, 0))  # type: ignore[assignment]
            cache.index_to_line = _Lines(n, lambda y: y)  # type: ignore[assignment]
            cache.heights = _Lines(n, lambda y: 1)  # type: ignore[assignment]
        width = self.scrollable_content_region.width - self._get_left_gutter_width()
        if self.virtual_size != Size(width, n):
            self.virtual_size = Size(width, n)
            self._scroll_update(self.virtual_size)


class _Missing(IndexError, KeyError):
    """No such line or option (a list's IndexError, a dict's KeyError: the line cache is
    read as both)."""


class _Lines:
    """`OptionList`'s line cache for `n` options of one line each: line y is option y
    (`lines`: (y, 0); `index_to_line`: y; `heights`: 1)."""

    def __init__(self, n: int, of: Callable[[int], Any]) -> None:
        self.n = n
        self.of = of

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, y: int) -> Any:
        if y < 0:
            y += self.n
        if not 0 <= y < self.n:
            raise _Missing(y)
        return self.of(y)

    def clear(self) -> None:
        self.n = 0


class _Options(Sequence[Option]):
    """The options of a list of prompts, each made when first asked for."""

    def __init__(self, prompts: Sequence[Content]) -> None:
        self.prompts = prompts
        self.made: dict[int, Option] = {}
        self.at: dict[int, int] = {}  # id(option) -> its index

    def __len__(self) -> int:
        return len(self.prompts)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self.prompts)))]
        if i < 0:
            i += len(self.prompts)
        got = self.made.get(i)
        if got is None:
            got = self.made[i] = Option(self.prompts[i])  # (IndexError past the end)
            self.at[id(got)] = i
        return got

    def clear(self) -> None:
        self.prompts, self.made, self.at = [], {}, {}


class _IndexOf:
    """option -> its index (`OptionList._option_to_index`, read when an option is drawn)."""

    def __init__(self, options: _Options) -> None:
        self.options = options

    def __getitem__(self, option: Option) -> int:
        return self.options.at[id(option)]

    def clear(self) -> None:
        self.options.clear()


def _changed_first(lines: list[str]) -> list[str]:
    """Unified diff lines with at most one context line before a change (three after it),
    so the changed lines come first in a small pane. Hunk headers stay."""

    def change(i: int) -> bool:
        return 0 <= i < len(lines) and lines[i][:1] in ("+", "-")

    out = []
    for i, line in enumerate(lines):
        if (
            line.startswith("@@")
            or change(i)
            or change(i + 1)
            or any(change(k) for k in range(i - 3, i))
        ):
            out.append(line)
    return out


def diff_content(fix: Fix | None, pv: Preview | None, pending: bool = False) -> Content:
    """The selected fix: its detail, what happens to the blocks, then the records written
    (repair.preview, the renderer `fix`'s dry run prints). `pending`: the records are
    still being computed."""
    if fix is None:
        return Content.styled("No fixes: nothing in this session needs a repair.", "italic")
    parts: list = [(clean_line(fix.detail, 400), "bold"), "\n"]
    if fix.skipped:
        parts.append(
            (
                "Skipped: a and A leave it out (s takes it back). It would change:\n",
                "bold $text-warning",
            )
        )
    if fix.frozen is not None:
        parts.append((f"\n{cannot_write(fix.frozen)}", "italic $text-warning"))
        return Content.assemble(*parts)
    if pv is None and not pending:
        parts.append(("\nThis fix changes nothing in the file.", "italic dim"))
        return Content.assemble(*parts)
    for sentence in pv.description if pv is not None else ():
        parts.append(("• ", "$text-accent"))
        parts.append(sentence + "\n")
    if pending or pv is None:
        parts.append(("\npreparing the records it writes…", "italic dim"))
        return Content.assemble(*parts)
    if not pv.diff:
        parts.append(("\nIt writes the file byte for byte as it is.", "italic dim"))
        return Content.assemble(*parts)
    lines = _changed_first(pv.diff)
    for line in lines[:MAX_DIFF_LINES]:
        if line.startswith("@@"):
            style = "bold $text-muted"
        elif line.startswith("+"):
            style = "$text-success on $success-muted"
        elif line.startswith("-"):
            style = "$text-error on $error-muted"
        else:
            style = ""
        parts.append((line + "\n", style) if style else line + "\n")
    if len(lines) > MAX_DIFF_LINES or pv.more:
        parts.append(("… more diff lines (fix on the command line shows them all)", "italic dim"))
    return Content.assemble(*parts)


class RepairPane(Vertical):
    """The promise line (what check finds in an export now), the plan and the preview. The
    screen talks to it through its methods and `FixHighlighted`, never to its children."""

    class FixHighlighted(Message):
        """The fix list's cursor moved (by a key, a click or `selected`) at `made` (a
        message's clock: the list's own word, which may arrive after other keys ran)."""

        def __init__(self, index: int | None, made: float) -> None:
            super().__init__()
            self.index = index
            self.made = made

    def compose(self) -> ComposeResult:
        yield Static(id="promise", markup=False)
        with Horizontal(id="repair-body"):
            yield FixList(id="fix-list", markup=False)
            with JKScroll(id="diff-scroll"):
                yield Static(id="diff", markup=False)

    @property
    def selected(self) -> int | None:
        """The index of the highlighted fix."""
        return self.query_one(FixList).highlighted

    @selected.setter
    def selected(self, index: int | None) -> None:
        self.query_one(FixList).highlighted = index

    @property
    def list_has_focus(self) -> bool:
        # the screen's focus, not `has_focus` (set when the Focus event is handled)
        return self.screen.focused is self.query_one(FixList)

    def focus_list(self) -> None:
        self.screen.set_focus(self.query_one(FixList))  # at once: see MainScreen._focus

    @on(FixList.OptionHighlighted, "#fix-list")
    def _highlighted(self, event: FixList.OptionHighlighted) -> None:
        event.stop()
        self.post_message(self.FixHighlighted(event.option_index, event.time))

    def show_promise(self, text: Content) -> None:
        self.query_one("#promise", Static).update(text)

    def show_fixes(self, fixes: list[Fix], keep: int, prompts: list[Content] | None = None) -> None:
        """`prompts`: the lines, when a worker made them already (1000 fixes: 0.2 s)."""
        fl = self.query_one(FixList)
        fl.set_prompts(prompts if prompts is not None else fix_prompts(fixes))
        if fixes:
            fl.highlighted = max(0, min(keep, len(fixes) - 1))

    def show_preview(self, fix: Fix | None, pv: Preview | None, pending: bool = False) -> None:
        self.query_one("#diff", Static).update(diff_content(fix, pv, pending))
        self.query_one("#diff-scroll", JKScroll).scroll_home(animate=False)
