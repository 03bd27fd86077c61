"""The repair pane: the plan as a list (left) and the selected fix's preview diff (right)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from repair.plan import NONE, Fix
from repair.preview import Preview
from repair.sanitize import clean_line

from .detail import SEV_MARK, SEV_STYLE

MAX_DIFF_LINES = 600


class FixList(OptionList):
    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
    ]


def fix_prompt(fix: Fix) -> Content:
    sev = fix.finding.severity
    where = f" msg {fix.message_index}" if fix.message_index is not None else ""
    alts = [a for a in fix.actions if a != fix.action]
    if fix.skipped:
        state = ("  skipped", "italic $warning")
    elif not fix.actionable:
        state = ("  no change", "dim")
    else:
        state = ("", "")
    n = f" ×{len(fix.findings)}" if len(fix.findings) > 1 else ""
    return Content.assemble(
        (f"{SEV_MARK[sev]} ", SEV_STYLE[sev]),
        (fix.code + n, "bold"),
        (where, "dim"),
        "  ",
        (fix.action if fix.action != NONE else "(none)", "$accent"),
        (f" ⇄ {'/'.join(alts)}" if alts else "", "dim"),
        state,
    )


def diff_content(fix: Fix | None, pv: Preview | None) -> Content:
    if fix is None:
        return Content.styled("No fixes: nothing in this session needs a repair.", "italic")
    parts: list = [(clean_line(fix.detail, 400), "bold"), "\n"]
    if fix.skipped:
        parts.append(("skipped: s to take it back\n", "italic $warning"))
    if pv is None or not pv.diff:
        parts.append(("\nThis fix changes nothing in the file.", "italic dim"))
        return Content.assemble(*parts)
    lines = pv.diff[2:] if pv.diff[:1] and pv.diff[0].startswith("---") else pv.diff
    for line in lines[:MAX_DIFF_LINES]:
        if line.startswith("@@"):
            style = "$accent"
        elif line.startswith("+"):
            style = "$text-success on $success-muted"
        elif line.startswith("-"):
            style = "$text-error on $error-muted"
        elif line.startswith("// message"):
            style = "bold"
        else:
            style = ""
        parts.append((line + "\n", style) if style else line + "\n")
    if len(lines) > MAX_DIFF_LINES:
        parts.append((f"… {len(lines) - MAX_DIFF_LINES} more diff lines", "italic dim"))
    return Content.assemble(*parts)


class RepairPane(Horizontal):
    def compose(self) -> ComposeResult:
        yield FixList(id="fix-list", markup=False)
        with VerticalScroll(id="diff-scroll"):
            yield Static(id="diff", markup=False)

    def show_fixes(self, fixes: list[Fix], keep: int) -> None:
        fl = self.query_one(FixList)
        fl.clear_options()
        fl.add_options([Option(fix_prompt(f), id=str(i)) for i, f in enumerate(fixes)])
        if fixes:
            fl.highlighted = max(0, min(keep, len(fixes) - 1))

    def show_preview(self, fix: Fix | None, pv: Preview | None) -> None:
        self.query_one("#diff", Static).update(diff_content(fix, pv))
        self.query_one("#diff-scroll", VerticalScroll).scroll_home(animate=False)
