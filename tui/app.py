"""The histview TUI (README, The TUI): a linked timeline, the selected message, the repair plan.

Loading and the first analysis run in a thread worker; the app paints the timeline as soon
as the rows exist (SessionLoaded) and adds lanes, marks, counts and the summary line when the
analysis is ready (AnalysisReady). Search runs in a worker too. All engine work goes through
`repair.workbench.Workbench`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, replace
from pathlib import Path

from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, LoadingIndicator, OptionList, Static
from textual.worker import get_current_worker

from repair.errors import ExportRefused, InputError
from repair.files import (
    default_output,
    default_report,
    numbered_report,
    read_only,
    same_file,
)
from repair.formats import load_session, resolve_path
from repair.gcpause import gc_paused
from repair.model import Finding, Session
from repair.plan import Fix
from repair.sanitize import clean_line
from repair.workbench import Workbench

from .config import load_config, save_config
from .detail import SEV_STYLE, message_detail, raw_json
from .keys import JKScroll, help_rows, key_name
from .lanes import LaneLayout, layout
from .picker import TASK_FILES, PickerScreen, PickSource
from .repair_pane import RepairPane
from .rows import SEV_MARK, Row, RowTable, build_rows, search_rows, short_id, with_findings
from .screens import ConfirmScreen, ExportScreen, HelpScreen, SearchScreen
from .summary import clean_text, problems
from .timeline import Timeline, TimelineState

DEMO = Path(__file__).resolve().parent / "demo" / "demo_session.json"


class SessionLoaded(Message):
    def __init__(self, session: Session, table: RowTable, seconds: float) -> None:
        super().__init__()
        self.session = session
        self.table = table
        self.seconds = seconds


@dataclass
class Derived:
    """What the screen shows for one analysed state; built off the UI thread on load."""

    table: RowTable
    lanes: LaneLayout
    by_message: dict[int, list[Finding]]
    problems: list[tuple[str, str]]
    first_problem: int | None  # the row the first screen opens on
    numbers: list[int | None]  # each row's messages.N as the target receives it


def derive(session: Session, analysis, table: RowTable | None = None) -> Derived:
    table = with_findings(table, analysis) if table is not None else build_rows(session, analysis)
    return Derived(
        table,
        layout(analysis.pairing, table),
        analysis.by_message(),
        problems(session, analysis),
        table.first_problem(),
        analysis.numbers,
    )


class AnalysisReady(Message):
    def __init__(self, workbench: Workbench, derived: Derived) -> None:
        super().__init__()
        self.workbench = workbench
        self.derived = derived


class LoadFailed(Message):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class SearchDone(Message):
    def __init__(self, query: str, version: int, rows: list[int], jump: bool) -> None:
        super().__init__()
        self.query = query
        self.version = version
        self.rows = rows
        self.jump = jump


@dataclass
class Search:
    query: str
    rows: list[int]  # matching table rows, ascending


# Actions only for the session screen (not on a modal or the picker), and what they need.
MAIN_ONLY = {
    "close",
    "next_finding",
    "prev_finding",
    "search",
    "next_match",
    "prev_match",
    "toggle_filter",
    "focus_detail",
    "escape",
    "toggle_raw",
    "cycle_detail",
    "copy_id",
    "toggle_repair",
    "apply_fix",
    "skip_fix",
    "cycle_fix",
    "apply_all",
    "undo",
    "redo",
    "export",
    "reload",
    "help",
    "top",
    "bottom",
}
NEEDS_ROWS = {"search", "next_match", "prev_match", "copy_id", "toggle_raw", "top", "bottom"}
NEEDS_REPAIR_PANE = {"apply_fix", "skip_fix", "cycle_fix"}
NEEDS_ANALYSIS = {
    "toggle_repair",
    "apply_fix",
    "skip_fix",
    "cycle_fix",
    "apply_all",
    "undo",
    "redo",
    "export",
    "next_finding",
    "prev_finding",
    "toggle_filter",
}
PALETTE_SKIP = {"escape", "focus_detail", "quit"}  # the system commands already hold Quit
DETAIL_MODES = ("normal", "wide", "hidden")


class HistviewApp(App):
    CSS_PATH = "histview.tcss"
    TITLE = "histview"
    ENABLE_COMMAND_PALETTE = True

    # Each key once: the footer shows those with show=True, the help screen lists them all
    # (the tooltip is the longer text), the command palette runs them.
    BINDINGS = [
        Binding("question_mark", "help", "Help", tooltip="keys and what the timeline draws"),
        Binding(
            "q",
            "close",
            "Quit",
            tooltip="quit (or back to the picker); asks before losing fixes",
        ),
        Binding(
            "ctrl+q",
            "quit",
            "Quit",
            show=False,
            priority=True,
            tooltip="quit histview; asks before losing fixes",
        ),
        Binding("ctrl+c", "quit", "Quit", show=False),
        Binding("n", "next_finding", "Next finding", tooltip="next row with a finding"),
        Binding(
            "N",
            "prev_finding",
            "Previous finding",
            show=False,
            tooltip="previous row with a finding",
        ),
        Binding("slash", "search", "Search", tooltip="search text or a tool id"),
        Binding(
            "right_square_bracket",
            "next_match",
            "Next match",
            show=False,
            tooltip="next search match",
        ),
        Binding(
            "left_square_bracket",
            "prev_match",
            "Previous match",
            show=False,
            tooltip="previous search match",
        ),
        Binding(
            "f",
            "toggle_filter",
            "Findings only",
            show=False,
            tooltip="show only rows with findings (toggle)",
        ),
        Binding("enter", "focus_detail", "Detail", show=False, tooltip="focus the detail pane"),
        Binding(
            "escape",
            "escape",
            "Back",
            show=False,
            tooltip="back to the timeline; there, clear the search",
        ),
        Binding("J", "toggle_raw", "Raw JSON", show=False, tooltip="raw JSON of the message"),
        Binding(
            "d",
            "cycle_detail",
            "Detail size",
            show=False,
            tooltip="detail pane: wider, hidden, back to normal",
        ),
        Binding(
            "y",
            "copy_id",
            "Copy id",
            show=False,
            tooltip="copy the selected tool id (or message id)",
        ),
        Binding("r", "toggle_repair", "Repair", tooltip="open / close the repair plan"),
        Binding("a", "apply_fix", "Apply", tooltip="apply the selected fix"),
        Binding(
            "s",
            "skip_fix",
            "Skip",
            show=False,
            tooltip="skip the fix and go to the next (again: take it back)",
        ),
        Binding(
            "tab",
            "cycle_fix",
            "Alternative",
            show=False,
            priority=True,
            tooltip="switch the fix to its alternative action",
        ),
        Binding("A", "apply_all", "Apply all", show=False, tooltip="apply all remaining fixes"),
        Binding("u", "undo", "Undo", show=False, tooltip="undo the last repair step"),
        Binding("ctrl+y", "redo", "Redo", show=False, tooltip="redo the last undone step"),
        Binding("e", "export", "Export", tooltip="write the repaired session and its report"),
        Binding(
            "R",
            "reload",
            "Reload",
            show=False,
            tooltip="read the file again; asks before losing fixes",
        ),
    ]

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
        self.from_picker = False
        self.given_session = session
        self.format = format
        self.target = target
        self.session: Session | None = None
        self.wb: Workbench | None = None
        self.derived: Derived | None = None
        self.fixes: list[Fix] = []
        self._fix_of_finding: dict[int, int] = {}
        self.raw = False
        self.repair_open = False
        self.detail_mode = "normal"
        self.version = 0
        self.last_search = ""
        self.search: Search | None = None
        self.exported: Session | None = None
        self.load_error: str | None = None
        self.timings: dict[str, float] = {}
        self._first_analysis = True
        self._t0 = time.perf_counter()

    # layout
    def compose(self) -> ComposeResult:
        yield Static(Content("histview"), id="header", markup=False)
        yield Static(id="summary", markup=False)
        with Horizontal(id="main"):
            yield Timeline(id="timeline")
            with JKScroll(id="detail-scroll", can_focus=True):
                yield Static(id="detail", markup=False)
        yield LoadingIndicator(id="loading")
        yield Static(id="load-error", markup=False)
        yield RepairPane(id="repair")
        yield Static(id="search-bar", markup=False)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        theme = load_config().get("theme")
        self.theme = theme if theme in self.available_themes else "textual-dark"
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        for wid in ("#repair", "#load-error", "#main", "#summary", "#search-bar"):
            self.query_one(wid).display = False
        self._set_detail_mode("normal")
        self._narrow(self.size.width)
        if self.pick:
            self._show_picker()
            return
        self._start_load()

    def _theme_changed(self, theme) -> None:
        """Keep the theme the user chose for the next run."""
        if theme.name != load_config().get("theme", "textual-dark"):
            save_config(theme=theme.name)

    # picker
    def _show_picker(self) -> None:
        picker = PickerScreen(self.pick_source, now=self.picker_now, workers=self.picker_workers)
        self.push_screen(picker, self._picked)

    def _picked(self, path: str | None) -> None:
        if path is None:
            self.exit()
            return
        self.path = path
        self.from_picker = True
        self._start_load()

    # loading
    def _reset(self) -> None:
        """Forget the session on screen (before a reload, or back to the picker)."""
        self.workers.cancel_group(self, "load")
        self.workers.cancel_group(self, "search")
        self.session = self.wb = self.derived = self.exported = None
        self._set_fixes([])
        self.search = None
        self.load_error = None
        self.raw = False
        self._first_analysis = True
        if self.repair_open:
            self.repair_open = False
            self.query_one(RepairPane).display = False
        tl = self.query_one(Timeline)
        tl.set_match("")
        tl.findings_only = False
        tl.set_state(None)
        for wid in ("#main", "#summary", "#search-bar", "#load-error"):
            self.query_one(wid).display = False
        self.refresh_bindings()

    def _start_load(self) -> None:
        self._reset()
        self.query_one("#loading").display = True
        name = header_name(self.path or "session")
        self._set_header(Content.assemble(("histview ", "bold"), f"loading {name} …"))
        self.load()

    @work(thread=True, exit_on_error=False, exclusive=True, group="load")
    def load(self) -> None:
        t0 = time.perf_counter()
        # The cyclic GC would rescan the growing object graph again and again while a large
        # session is built: it is off during the load, and what was built is frozen after.
        with gc_paused(freeze=True):
            try:
                session = self.given_session or load_session(self.path, self.format, self.target)
            except InputError as exc:
                self.post_message(LoadFailed(str(exc)))
                return
            except Exception as exc:  # a bug in an adapter must not become a traceback
                name = os.path.basename(self.path or "session")
                self.post_message(
                    LoadFailed(f"{name}: could not be read ({type(exc).__name__}: {exc})")
                )
                return
            table = build_rows(session)
            self.post_message(SessionLoaded(session, table, time.perf_counter() - t0))
            wb = Workbench(session)
            self.post_message(AnalysisReady(wb, derive(session, wb.analysis, table)))

    def on_session_loaded(self, msg: SessionLoaded) -> None:
        self.session = msg.session
        self.query_one("#loading").display = False
        self.query_one("#main").display = True
        self.version += 1
        tl = self.query_one(Timeline)
        tl.set_state(TimelineState(msg.session, msg.table, None, self.version))
        tl.focus()
        self._update_header()
        self.refresh_bindings()
        self.timings["loaded"] = time.perf_counter() - self._t0
        self.timings["load_worker"] = msg.seconds
        self.call_after_refresh(self._mark, "first_paint")

    def on_analysis_ready(self, msg: AnalysisReady) -> None:
        self.wb = msg.workbench
        self._show_state(msg.derived)
        if self._first_analysis:
            # the first screen names the problem: the cursor on the first error (or warning)
            self._first_analysis = False
            tl = self.query_one(Timeline)
            first = msg.derived.first_problem
            if first is not None and not tl.cursor:
                tl.go_to_row(first)
        self.refresh_bindings()
        self._show_detail()
        self._mark("analysis_ready")

    def on_load_failed(self, msg: LoadFailed) -> None:
        self.load_error = msg.text
        self.query_one("#loading").display = False
        box = self.query_one("#load-error", Static)
        box.update(
            Content.assemble(
                ("Cannot open this session\n\n", "bold $text-error"),
                clean_line(msg.text, 2000),
                ("\n\nPress q to quit" + (", R to try again." if self.path else "."), "dim"),
            )
        )
        box.display = True
        self._set_header(Content.assemble(("histview ", "bold"), ("load failed", "$text-error")))
        self.refresh_bindings()

    def on_resize(self, event) -> None:
        self._narrow(event.size.width)
        self._update_header()

    def _narrow(self, width: int) -> None:
        self.query_one("#main").set_class(width < 100, "-narrow")

    def _mark(self, what: str) -> None:
        self.timings[what] = time.perf_counter() - self._t0

    def _show_state(self, derived: Derived) -> None:
        """Put an analysed state on screen: rows, lanes, header, summary line."""
        self.derived = derived
        self.version += 1
        tl = self.query_one(Timeline)
        state = TimelineState(
            self.wb.session, derived.table, derived.lanes, self.version, self.wb.analysis.pairing
        )
        tl.set_state(state, keep_row=tl.current_row_index)
        self._update_header()
        self._update_summary()
        if self.search is not None:
            self._run_search(self.search.query, jump=False)

    # header / summary / detail
    def _set_header(self, content: Content) -> None:
        self.query_one("#header", Static).update(content)

    def _update_header(self) -> None:
        s = self.wb.session if self.wb else self.session
        if s is None:
            return
        width = self.size.width - 2
        wide = width >= 100
        right: list = [f"  {len(s.messages)} msgs  "]
        if self.wb is None:
            right.append(("analysing…", "italic dim"))
        else:
            c = self.wb.analysis.counts()
            e, w, i = c["error"], c["warning"], c["info"]
            right += [
                (
                    f"● {e}" + (f" error{'s' if e != 1 else ''}" if wide else ""),
                    "bold $text-error" if e else "dim",
                ),
                "  ",
                (
                    f"▲ {w}" + (f" warning{'s' if w != 1 else ''}" if wide else ""),
                    "bold $text-warning" if w else "dim",
                ),
                "  ",
                (f"○ {i}" + (" info" if wide else ""), "$text-primary" if i else "dim"),
            ]
            if self.wb.done:
                right.append((f"  {len(self.wb.applied)} fixed", "$text-success"))
            if self._unexported:
                right.append(("  *unexported", "italic $text-warning"))
        if self.query_one(Timeline).findings_only:
            right.append(("  [findings only]", "reverse"))
        fmt = f"  {s.format} → {s.target}" if wide else f"  {s.format}"
        tail = Content.assemble(fmt, *right)
        label = "histview " if wide else ""
        # the counts and marks always show; the name gives way (shortened in its middle)
        room = max(width - len(label) - tail.cell_length, 8)
        name = header_name(s.path, room)
        self._set_header(Content.assemble((label, "bold"), (name, "bold $text-accent"), tail))

    def _update_summary(self) -> None:
        box = self.query_one("#summary", Static)
        if self.wb is None or self.derived is None:
            box.display = False
            return
        items = self.derived.problems
        if not items:
            parts: list = [("✓ ", "bold $text-success"), clean_text(self.wb.session)]
        elif all(sev == "info" for sev, _ in items):
            parts = [
                ("✓ ", "bold $text-success"),
                "Nothing the provider rejects · ",
                *_joined(items),
            ]
        else:
            parts = _joined(items)
        box.update(Content.assemble(*parts))
        box.display = True

    @property
    def _unexported(self) -> bool:
        return bool(self.wb and self.wb.dirty and self.wb.session is not self.exported)

    @on(Timeline.RowChanged)
    def _row_changed(self, event: Timeline.RowChanged) -> None:
        self._show_detail()
        if self.search is not None:
            self._update_search_bar()
        if self.repair_open and event.row is not None:
            self._select_fix_of_row(event.row)

    def _show_detail(self) -> None:
        tl = self.query_one(Timeline)
        row = tl.current_row
        detail = self.query_one("#detail", Static)
        if row is None or tl.state is None:
            detail.update(Content.styled("(no row selected)", "italic dim"))
            return
        session = tl.state.session
        if self.raw:
            detail.update(raw_json(session.messages[row.mi]))
        else:
            findings = []
            sent_as: int | None | str = "?"
            if self.derived is not None and tl.state.lanes is not None:
                findings = self.derived.by_message.get(row.mi, [])
                numbers = self.derived.numbers
                sent_as = numbers[row.mi] if row.mi < len(numbers) else "?"
            detail.update(message_detail(session, row, findings, tl.state.pairing, sent_as))
        self.query_one("#detail-scroll", JKScroll).scroll_home(animate=False)

    # state changes
    def _refresh_state(self) -> None:
        """Rebuild rows and lanes for the workbench's current session (after a step)."""
        with gc_paused():
            derived = derive(self.wb.session, self.wb.analysis)
        self._show_state(derived)
        if self.repair_open:
            self._refresh_fixes()

    def _refresh_fixes(self, keep: int | None = None) -> None:
        fl = self.query_one("#fix-list", OptionList)
        if keep is None:
            keep = fl.highlighted or 0
        self._set_fixes(self.wb.plan.fixes)
        self.query_one(RepairPane).show_fixes(self.fixes, keep)
        self._show_preview()

    def _set_fixes(self, fixes: list[Fix]) -> None:
        self.fixes = list(fixes)
        # finding -> its fix (the first that changes something), for the cursor to follow
        self._fix_of_finding: dict[int, int] = {}
        for i, fix in enumerate(self.fixes):
            for f in fix.findings:
                k = self._fix_of_finding.get(id(f))
                if k is None or (fix.actionable and not self.fixes[k].actionable):
                    self._fix_of_finding[id(f)] = i

    def _selected_fix(self) -> Fix | None:
        if not self.repair_open or not self.fixes:
            return None
        i = self.query_one("#fix-list", OptionList).highlighted
        if i is None or i >= len(self.fixes):
            return None
        return self.fixes[i]

    def _show_preview(self) -> None:
        fix = self._selected_fix()
        pv = None
        if fix is not None and fix.edits:
            # a skipped fix still shows what it would change
            pv = self.wb.preview(replace(fix, skipped=False) if fix.skipped else fix)
        self.query_one(RepairPane).show_preview(fix, pv)

    def _fix_of_row(self, row: Row) -> int | None:
        """The plan's fix for one of the row's findings (one that changes something first)."""
        hits = [self._fix_of_finding[id(f)] for f in row.findings if id(f) in self._fix_of_finding]
        if not hits:
            return None
        return min(hits, key=lambda i: (not self.fixes[i].actionable, i))

    def _select_fix_of_row(self, row: Row) -> None:
        current = self._selected_fix()
        if current is not None and _shares_finding(current, row):
            return  # the selected fix is already about this row
        i = self._fix_of_row(row)
        if i is not None:
            self.query_one("#fix-list", OptionList).highlighted = i

    @on(OptionList.OptionHighlighted, "#fix-list")
    def _fix_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        fix = self._selected_fix()
        self._show_preview()
        if fix is None:
            return
        tl = self.query_one(Timeline)
        row = tl.current_row
        if row is not None and _shares_finding(fix, row):
            return  # the cursor is already on a row of this fix
        target = tl.state.table.row_of(fix.position, fix.finding.block_index)
        if target is not None:
            tl.go_to_row(target)

    def _next_fix(self, start: int) -> int:
        """The first fix at/after `start` that changes something, else the first one from
        the top that does, else `start` (clamped)."""
        fixes = self.fixes
        for i in [*range(start, len(fixes)), *range(0, min(start, len(fixes)))]:
            if fixes[i].actionable:
                return i
        return max(0, min(start, len(fixes) - 1))

    # actions
    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action in MAIN_ONLY and self.screen is not self.screen_stack[0]:
            return False
        if action in NEEDS_ROWS and self.session is None:
            return False
        if action in NEEDS_ANALYSIS and self.wb is None:
            return False
        if action in NEEDS_REPAIR_PANE and not self.repair_open:
            return False
        if action == "reload" and (not self.path or self.given_session is not None):
            return False
        return True

    def _jump_finding(self, forward: bool) -> None:
        tl = self.query_one(Timeline)
        rows = tl.state.table.finding_rows
        if not rows:
            self.notify("No findings in this session.", markup=False)
            return
        cur = tl.current_row_index or 0
        if forward:
            k = bisect_right(rows, cur)
            target = rows[k] if k < len(rows) else rows[0]
        else:
            k = bisect_left(rows, cur) - 1
            target = rows[k] if k >= 0 else rows[-1]
        tl.go_to_row(target)
        tl.focus()

    def action_next_finding(self) -> None:
        self._jump_finding(True)

    def action_prev_finding(self) -> None:
        self._jump_finding(False)

    def action_top(self) -> None:
        self.query_one(Timeline).action_top()

    def action_bottom(self) -> None:
        self.query_one(Timeline).action_bottom()

    def action_toggle_filter(self) -> None:
        tl = self.query_one(Timeline)
        if not tl.findings_only and not tl.state.table.finding_rows:
            self.notify("No findings in this session: nothing to filter to.", markup=False)
            return
        tl.set_findings_only(not tl.findings_only)
        self._update_header()

    def action_focus_detail(self) -> None:
        if self.focused is self.query_one("#fix-list"):
            return
        if self.detail_mode == "hidden":
            self._set_detail_mode("normal")
        self.query_one("#detail-scroll").focus()

    def action_escape(self) -> None:
        tl = self.query_one(Timeline)
        if self.focused is not tl:
            tl.focus()
        elif self.search is not None:
            self._clear_search()

    def action_toggle_raw(self) -> None:
        self.raw = not self.raw
        self._show_detail()

    def action_cycle_detail(self) -> None:
        i = DETAIL_MODES.index(self.detail_mode)
        self._set_detail_mode(DETAIL_MODES[(i + 1) % len(DETAIL_MODES)])

    def _set_detail_mode(self, mode: str) -> None:
        self.detail_mode = mode
        main = self.query_one("#main")
        for m in DETAIL_MODES:
            main.set_class(m == mode, f"-detail-{m}")
        if mode == "hidden" and self.focused is self.query_one("#detail-scroll"):
            self.query_one(Timeline).focus()

    def action_copy_id(self) -> None:
        if self.focused is self.query_one("#fix-list"):
            fix = self._selected_fix()
            text = fix.tool_use_id if fix is not None else None
        else:
            tl = self.query_one(Timeline)
            row = tl.current_row
            text = row_id(tl.state.session, row) if row is not None else None
        if not text:
            self.notify("This row has no id to copy.", markup=False)
            return
        self.copy_to_clipboard(text)
        self.notify(f"Copied {short_id(text, 40)} to the clipboard (OSC 52).", markup=False)

    def action_toggle_repair(self) -> None:
        self.repair_open = not self.repair_open
        self.query_one(RepairPane).display = self.repair_open
        if self.repair_open:
            self._set_fixes(self.wb.plan.fixes)
            row = self.query_one(Timeline).current_row
            here = self._fix_of_row(row) if row is not None else None
            self._refresh_fixes(keep=here if here is not None else self._next_fix(0))
            self.query_one("#fix-list").focus()
        else:
            self.query_one(Timeline).focus()
        self.refresh_bindings()

    def action_apply_fix(self) -> None:
        fix = self._selected_fix()
        if fix is None:
            return
        if not fix.actionable:
            why = "it is skipped" if fix.skipped else "it changes nothing"
            self.notify(f"Not applied: {why}.", markup=False, severity="warning")
            return
        old, at = self.fixes, self.fixes.index(fix)
        if self.wb.apply(fix):
            self.notify(f"Applied: {clean_line(fix.detail, 200)}", markup=False)
            self._refresh_state()
            self._select_after(old, at)

    def _select_after(self, old: list[Fix], at: int) -> None:
        """After `old[at]` was applied: select the first fix after it (in the old order)
        that is still in the plan and changes something."""
        where: dict[tuple, int] = {}
        for j, f in enumerate(self.fixes):
            for fd in f.findings:
                if fd.key:
                    where.setdefault(fd.key, j)
        target = None
        for f in old[at + 1 :]:
            hits = [where[fd.key] for fd in f.findings if fd.key in where]
            if hits and self.fixes[min(hits)].actionable:
                target = min(hits)
                break
        if target is None:
            target = self._next_fix(0)
        if self.fixes:
            self.query_one("#fix-list", OptionList).highlighted = target

    def action_skip_fix(self) -> None:
        fix = self._selected_fix()
        if fix is None:
            return
        at = self.fixes.index(fix)
        now = self.wb.skip(fix)
        self.notify("Skipped." if now else "Not skipped any more.", markup=False)
        self._refresh_fixes(keep=at)
        if now and at + 1 < len(self.fixes):
            self.query_one("#fix-list", OptionList).highlighted = self._next_fix(at + 1)

    def action_cycle_fix(self) -> None:
        fix = self._selected_fix()
        if fix is None:
            return
        if len(fix.actions) < 2:
            self.notify(f"{fix.code} has no alternative.", markup=False)
            return
        new = self.wb.cycle(fix)
        self.notify(f"Action: {new}", markup=False)
        self._refresh_fixes()

    def action_apply_all(self) -> None:
        n = self.wb.apply_all()
        self.notify(
            f"Applied {n} fix{'es' if n != 1 else ''}." if n else "Nothing to apply.", markup=False
        )
        if n:
            self._refresh_state()

    def action_undo(self) -> None:
        step = self.wb.undo()
        if step is None:
            self.notify("Nothing to undo.", markup=False)
            return
        self.notify(f"Undone: {clean_line(step.label, 200)}", markup=False)
        self._refresh_state()

    def action_redo(self) -> None:
        step = self.wb.redo()
        if step is None:
            self.notify("Nothing to redo.", markup=False)
            return
        self.notify(f"Redone: {clean_line(step.label, 200)}", markup=False)
        self._refresh_state()

    def action_help(self) -> None:
        self.push_screen(HelpScreen(help_sections(self), self.query_one(Timeline).legend()))

    # search (in a worker: it reads every row)
    def action_search(self) -> None:
        self.push_screen(SearchScreen(self.last_search), self._search_done)

    def _search_done(self, query: str | None) -> None:
        if not query or self.query_one(Timeline).state is None:
            return  # nothing typed, or the session went away meanwhile
        self.last_search = query
        self._run_search(query, jump=True)

    def _run_search(self, query: str, jump: bool) -> None:
        state = self.query_one(Timeline).state
        if state is not None:
            self._search_worker(query, state, jump)

    # description: the default would repr() the arguments, i.e. the whole session
    @work(thread=True, exclusive=True, group="search", exit_on_error=False, description="search")
    def _search_worker(self, query: str, state: TimelineState, jump: bool) -> None:
        worker = get_current_worker()
        rows = search_rows(
            state.session, state.table, query, lambda: worker.is_cancelled, state.pairing
        )
        if rows is not None:
            self.post_message(SearchDone(query, state.version, rows, jump))

    def on_search_done(self, msg: SearchDone) -> None:
        tl = self.query_one(Timeline)
        if tl.state is None or msg.version != tl.state.version:
            return  # the rows changed meanwhile; a newer search is on its way
        if not msg.rows:
            if msg.jump:
                self.notify(
                    f"Not found: {clean_line(msg.query, 80)}", markup=False, severity="warning"
                )
            self._clear_search()
            return
        self.search = Search(msg.query, msg.rows)
        tl.set_match(msg.query)
        if msg.jump:
            self._step_match(True, include_current=False)
        self._update_search_bar()

    def _step_match(self, forward: bool, include_current: bool = False) -> None:
        tl = self.query_one(Timeline)
        rows = self.search.rows
        cur = tl.current_row_index or 0
        if forward:
            k = bisect_left(rows, cur) if include_current else bisect_right(rows, cur)
            target = rows[k] if k < len(rows) else rows[0]
        else:
            k = bisect_left(rows, cur) - 1
            target = rows[k] if k >= 0 else rows[-1]
        if tl.findings_only and not tl.state.table.rows[target].findings:
            tl.set_findings_only(False)
            self._update_header()
        tl.go_to_row(target)
        tl.focus()
        self._update_search_bar()

    def action_next_match(self) -> None:
        if self.search is None:
            self.notify("No search yet: press / first.", markup=False)
            return
        self._step_match(True)

    def action_prev_match(self) -> None:
        if self.search is None:
            self.notify("No search yet: press / first.", markup=False)
            return
        self._step_match(False)

    def _update_search_bar(self) -> None:
        bar = self.query_one("#search-bar", Static)
        if self.search is None:
            bar.display = False
            return
        rows = self.search.rows
        n = len(rows)
        cur = self.query_one(Timeline).current_row_index
        k = bisect_left(rows, cur) if cur is not None else n
        count = f"match {k + 1} of {n}" if k < n and rows[k] == cur else f"{n} matches"
        bar.update(
            Content.assemble(
                ("/", "bold $text-accent"),
                (clean_line(self.search.query, 40), "bold"),
                f"  {count}",
                ("   ] next  [ previous  esc clears", "dim"),
            )
        )
        bar.display = True

    def _clear_search(self) -> None:
        self.workers.cancel_group(self, "search")
        self.search = None
        self.query_one(Timeline).set_match("")
        self._update_search_bar()

    # export
    def action_export(self) -> None:
        src = self.wb.original.path
        out = default_output(src)
        self.push_screen(
            ExportScreen(out, numbered_report(default_report(out))), self._export_chosen
        )

    def _export_chosen(self, paths: tuple[str, str] | None) -> None:
        if paths is None:
            return
        out, rep = paths
        src = self.wb.original.path
        if same_file(out, src):
            try:
                locked = read_only(os.stat(src), src)
            except OSError:
                locked = False
            self.push_screen(
                ConfirmScreen(
                    f"Overwrite the input file {clean_line(os.path.basename(src), 60)}"
                    + (", which is read-only" if locked else "")
                    + "? A backup copy (.bak) is written first.",
                    yes="Overwrite",
                    no="Cancel",
                ),
                lambda yes: yes and self._do_export(out, rep, in_place=True, force=locked),
            )
            return
        self._check_source(out, rep)

    @work(thread=True, exclusive=True, group="export-check", exit_on_error=False)
    def _check_source(self, out: str, rep: str) -> None:
        """Has the input changed on disk since it was read? (stat first; its bytes only when
        the stat differs)."""
        why = source_changed(self.wb.original)
        self.call_from_thread(self._source_checked, out, rep, why)

    def _source_checked(self, out: str, rep: str, why: str | None) -> None:
        if why is not None:
            name = clean_line(os.path.basename(self.wb.original.path), 60)
            self.push_screen(
                ConfirmScreen(
                    f"{name} {why} since histview read it. The copy is made from the "
                    "version read then, not from the file as it is now (R reloads it). "
                    "Export anyway?",
                    yes="Export anyway",
                    no="Cancel",
                ),
                lambda yes: yes and self._export_to_copy(out, rep),
            )
            return
        self._export_to_copy(out, rep)

    def _export_to_copy(self, out: str, rep: str) -> None:
        existing = [p for p in (out, rep) if p and os.path.lexists(p)]
        if existing:
            names = ", ".join(clean_line(os.path.basename(p), 60) for p in existing)
            self.push_screen(
                ConfirmScreen(
                    f"{names} already exist{'s' if len(existing) == 1 else ''}. Overwrite?",
                    yes="Overwrite",
                    no="Cancel",
                ),
                lambda yes: yes and self._do_export(out, rep, overwrite=True),
            )
            return
        self._do_export(out, rep)

    def _do_export(
        self,
        out: str,
        rep: str,
        *,
        in_place: bool = False,
        overwrite: bool = False,
        force: bool = False,
    ) -> None:
        try:
            res = self.wb.export(out, rep, in_place=in_place, overwrite=overwrite, force=force)
        except (ExportRefused, OSError) as exc:
            self.notify(
                clean_line(f"Export refused: {exc}; nothing was written", 400),
                markup=False,
                severity="error",
                timeout=8,
            )
            return
        self.exported = self.wb.session
        msg = f"Wrote {os.path.basename(res.output)}"
        if res.report:
            msg += f" and {os.path.basename(res.report)}"
        if res.backup:
            msg += f" (backup {os.path.basename(res.backup)})"
        if res.remaining_errors:
            msg += f"; {res.remaining_errors} error(s) remain"
        if res.late_copy or res.late_error:
            kept = (
                f"is in {os.path.basename(res.late_copy)}"
                if res.late_copy
                else f"could not be kept ({res.late_error})"
            )
            self.notify(
                clean_line(
                    f"The file was written to while it was replaced; what it held then {kept}; "
                    "the repaired file lacks those writes.",
                    400,
                ),
                markup=False,
                severity="error",
                timeout=12,
            )
        self.notify(clean_line(msg, 400), markup=False, timeout=8)
        self._update_header()

    # reload, close, quit: none of them loses applied fixes without asking
    def _confirm_loss(self, question: str, yes: str, then) -> None:
        """Run `then` at once, or after a yes when applied fixes are not exported."""
        if not self._unexported:
            then()
            return
        if any(isinstance(s, ConfirmScreen) and s.purpose == "loss" for s in self.screen_stack):
            return  # already asking
        n = len(self.wb.applied)
        self.push_screen(
            ConfirmScreen(
                f"{n} applied fix{'es are' if n != 1 else ' is'} not exported. {question}",
                yes=yes,
                no="Stay",
                purpose="loss",
            ),
            lambda ok: ok and then(),
        )

    def action_reload(self) -> None:
        self._confirm_loss("Reload the file and lose them?", "Reload", self._start_load)

    def action_close(self) -> None:
        if self.from_picker:
            self._confirm_loss("Close the session and lose them?", "Close", self._back_to_picker)
        else:
            self._confirm_loss("Quit anyway?", "Quit", self.exit)

    async def action_quit(self) -> None:
        """ctrl+q, ctrl+c and the palette's Quit: like q, they ask before losing fixes."""
        self._confirm_loss("Quit anyway?", "Quit", self.exit)

    def _back_to_picker(self) -> None:
        self._reset()
        self.query_one("#loading").display = False
        self._set_header(Content.styled("histview", "bold"))
        self._show_picker()

    # command palette
    def get_system_commands(self, screen: Screen):
        yield from super().get_system_commands(screen)
        for b in palette_bindings(self):
            keys = " / ".join(key_name(self, k) for k in b.key.split(","))
            help_text = f"{b.tooltip or b.description} ({keys})"
            yield SystemCommand(b.description, help_text, lambda a=b.action: self._palette_run(a))

    async def _palette_run(self, action: str) -> None:
        if self.wb is None and action in NEEDS_ANALYSIS:
            self.notify("The analysis is not ready yet.", markup=False)
            return
        if self.session is None and action in NEEDS_ROWS:
            self.notify("No session is open yet.", markup=False)
            return
        if action in NEEDS_REPAIR_PANE and not self.repair_open:
            self.action_toggle_repair()
        await self.run_action(action)


def _shares_finding(fix: Fix, row: Row) -> bool:
    ids = {id(f) for f in row.findings}
    return any(id(f) in ids for f in fix.findings)


def help_sections(app: HistviewApp) -> list[tuple[str, list[tuple[str, str]]]]:
    """The help screen's key list: every Binding, by where it works."""
    return [
        ("Timeline", help_rows(app, Timeline.BINDINGS)),
        ("Session", help_rows(app, app.BINDINGS)),
        (
            "Everywhere",
            [
                ("ctrl+p", "command palette: every action, and the theme"),
                ("j / k", "also scroll the detail, diff and help; move in lists"),
                ("click", "select a row"),
            ],
        ),
    ]


def palette_bindings(app: HistviewApp) -> list[Binding]:
    """The palette's commands: the app's keys and the timeline's top/bottom."""
    extra = [b for b in Timeline.BINDINGS if b.action in ("top", "bottom")]
    return [b for b in [*app.BINDINGS, *extra] if b.action not in PALETTE_SKIP]


def _joined(items: list[tuple[str, str]]) -> list:
    parts: list = []
    for k, (sev, text) in enumerate(items):
        if k:
            parts.append((" · ", "dim"))
        parts.append((f"{SEV_MARK[sev]} ", SEV_STYLE[sev]))
        parts.append(text)
    return parts


def header_name(path: str, limit: int = 60) -> str:
    """The session's name in the header: a Roo/Cline/Kilo task's folder, else the file name;
    shortened in its middle to fit."""
    parent, name = os.path.split(path)
    if name in TASK_FILES:
        grand, task = os.path.split(parent)
        name = f"{os.path.basename(grand) or 'task'}/{task}"
    return short_id(name, limit)


def row_id(session: Session, row: Row) -> str | None:
    """The id `y` copies: a block's tool id; for a message row, the message's own id
    (Claude Code uuid, Roo/OpenAI id), else its first tool id."""
    msg = session.messages[row.mi]
    if row.bi is not None:
        return msg.blocks[row.bi].tool_id
    own = msg.meta.get("uuid")
    if not own and isinstance(msg.raw, dict) and isinstance(msg.raw.get("id"), str):
        own = msg.raw["id"]
    if own:
        return own
    return next((b.tool_id for b in msg.blocks if b.tool_id), None)


def source_changed(original: Session) -> str | None:
    """Why the input is not what was read ('changed on disk', 'was deleted'), or None."""
    path = original.path
    try:
        st = os.stat(path)
    except OSError:
        return "was deleted or cannot be read"
    src = original.source
    if src is None or src.same_state(st):
        return None
    try:
        with open(path, "rb") as fh:
            same = fh.read() == src.data
    except OSError:
        return "cannot be read"
    return None if same else "changed on disk"


def needs_picker(path: str | None) -> bool:
    """A folder no format claims as one session (a projects folder, a folder of files)."""
    if not path or not os.path.isdir(path):
        return False
    try:
        resolve_path(path)
    except InputError:
        return True
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="histview",
        description="Open a session in the TUI (press ? inside for the keys).",
    )
    parser.add_argument(
        "file",
        nargs="?",
        help="session file or task folder; any other folder lists the sessions under it "
        "(default: a demo)",
    )
    parser.add_argument("--format", default=None)
    parser.add_argument("--target", default=None)
    parser.add_argument(
        "--pick",
        action="store_true",
        help="choose among your recent sessions (the places `histview list` searches)",
    )
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.file and not os.path.exists(args.file):
        # a typo is told on the command line, not on a full screen
        print(f"histview: {args.file}: no such file or folder", file=sys.stderr)
        return 2
    if args.file and os.path.isfile(args.file) and not os.access(args.file, os.R_OK):
        print(f"histview: {args.file}: cannot read: permission denied", file=sys.stderr)
        return 2
    path = args.file if args.file or args.pick else str(DEMO)
    app = HistviewApp(path, format=args.format, target=args.target, pick=args.pick)
    app.run()
    if app.load_error:
        print(f"histview: {app.load_error}", file=sys.stderr)
        return 2
    return app.return_code or 0
