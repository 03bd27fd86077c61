"""The repair pane: the plan as a list (left) and the selected fix's preview diff (right)."""

from __future__ import annotations

from functools import lru_cache

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Static
from textual.widgets.option_list import Option

from repair import codes
from repair.plan import Fix
from repair.preview import Preview
from repair.sanitize import clean_line
from repair.workbench import cannot_write

from .detail import SEV_STYLE
from .keys import JKOptionList, JKScroll
from .rows import SEV_MARK, short_id

MAX_DIFF_LINES = 600


class FixList(JKOptionList):
    pass


ACTION_WIDTH = max(
    len(a)
    for c in codes.BY_NAME.values()
    for acts in (c.actions, *c.actions_by_target.values())
    for a in acts
)


def fix_prompt(fix: Fix, msg_width: int = 1, with_id: bool = False) -> Content:
    """One fix line: severity, message, the action (a fixed column, never cut), then the
    tool id (when another line would read the same) and the finding code."""
    sev = fix.finding.severity
    # messages.N, as the timeline's number column and the finding texts name it
    n = fix.message_index
    where = f"m{n}" if n is not None else "·"
    alts = [a for a in fix.actions if a != fix.action]
    if fix.skipped:
        action = ("skipped", "italic $text-warning")
    elif fix.frozen is not None:
        action = ("(n/a)", "dim")  # the preview says why
    elif not fix.edits:
        action = ("(none)", "dim")
    else:
        action = (fix.action, "$text-accent")
    times = f" ×{len(fix.findings)}" if len(fix.findings) > 1 else ""
    tid = f"{short_id(fix.tool_use_id, 12)} " if with_id and fix.tool_use_id else ""
    return _line(sev, f"{where:>{msg_width + 1}} ", action, bool(alts), tid, fix.code + times)


@lru_cache(maxsize=16384)
def _line(
    sev: str, where: str, action: tuple[str, str], alts: bool, tid: str, label: str
) -> Content:
    """A fix line from its parts: kept, since a step leaves most lines as they were."""
    return Content.assemble(
        (f"{SEV_MARK[sev]} ", SEV_STYLE[sev]),
        (where, "dim"),
        (f"{action[0]:<{ACTION_WIDTH + 1}}", action[1]),
        ("⇄ " if alts else "  ", "dim"),
        (tid, "$text-muted"),
        (label, "bold"),
    )


def fix_prompts(fixes: list[Fix]) -> list[Content]:
    """Prompts for the plan; lines that would read the same name their tool id (those of
    one code on one message: whatever their actions, a skip does not take the ids away)."""
    width = len(str(max((f.message_index or 0 for f in fixes), default=0)))
    seen: dict[tuple, int] = {}
    for f in fixes:
        k = (f.code, f.position)
        seen[k] = seen.get(k, 0) + 1
    return [fix_prompt(f, width, seen[(f.code, f.position)] > 1) for f in fixes]


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
        return self.query_one(FixList).has_focus

    def focus_list(self) -> None:
        self.query_one(FixList).focus()

    @on(FixList.OptionHighlighted, "#fix-list")
    def _highlighted(self, event: FixList.OptionHighlighted) -> None:
        event.stop()
        self.post_message(self.FixHighlighted(event.option_index, event.time))

    def show_promise(self, text: Content) -> None:
        self.query_one("#promise", Static).update(text)

    def show_fixes(self, fixes: list[Fix], keep: int, prompts: list[Content] | None = None) -> None:
        """`prompts`: the lines, when a worker made them already (1000 fixes: 0.2 s)."""
        fl = self.query_one(FixList)
        fl.clear_options()
        lines = prompts if prompts is not None else fix_prompts(fixes)
        fl.add_options([Option(p, id=str(i)) for i, p in enumerate(lines)])
        if fixes:
            fl.highlighted = max(0, min(keep, len(fixes) - 1))

    def show_preview(self, fix: Fix | None, pv: Preview | None, pending: bool = False) -> None:
        self.query_one("#diff", Static).update(diff_content(fix, pv, pending))
        self.query_one("#diff-scroll", JKScroll).scroll_home(animate=False)
