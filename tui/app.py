"""The histview TUI (SPEC §8): a linked timeline, the selected message, the repair plan.

Loading and the first analysis run in a thread worker; the app paints the timeline as soon
as the rows exist (SessionLoaded) and adds lanes, marks and counts when the analysis is ready
(AnalysisReady). All engine work goes through `repair.workbench.Workbench`.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from bisect import bisect_left, bisect_right
from contextlib import contextmanager
from pathlib import Path

from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, LoadingIndicator, OptionList, Static

from repair.errors import ExportRefused, InputError
from repair.files import default_output, default_report, numbered_report, read_only, same_file
from repair.formats import load_session, resolve_path
from repair.model import Session, block_text
from repair.plan import Fix
from repair.sanitize import clean_line
from repair.workbench import Workbench

from .detail import message_detail, raw_json
from .lanes import LaneLayout, layout
from .picker import PickerScreen, PickSource
from .repair_pane import RepairPane
from .rows import RowTable, build_rows, with_findings
from .screens import ConfirmScreen, ExportScreen, HelpScreen, SearchScreen
from .timeline import Timeline, TimelineState

DEMO = Path(__file__).resolve().parent / "demo" / "demo_session.json"


@contextmanager
def gc_paused(freeze: bool = False):
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
        if freeze:
            gc.freeze()


class SessionLoaded(Message):
    def __init__(self, session: Session, table: RowTable, seconds: float) -> None:
        super().__init__()
        self.session = session
        self.table = table
        self.seconds = seconds


class AnalysisReady(Message):
    def __init__(self, workbench: Workbench, table: RowTable, lanes: LaneLayout) -> None:
        super().__init__()
        self.workbench = workbench
        self.table = table
        self.lanes = lanes


class LoadFailed(Message):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


# (action, title, help) — the command palette lists every one of these
COMMANDS: list[tuple[str, str, str]] = [
    ("next_finding", "Next finding", "Jump to the next row with a finding (n)"),
    ("prev_finding", "Previous finding", "Jump to the previous row with a finding (N)"),
    ("top", "Top", "First row (g)"),
    ("bottom", "Bottom", "Last row (G)"),
    ("search", "Search", "Search text or a tool id (/)"),
    ("toggle_filter", "Findings only", "Show only rows with findings (f)"),
    ("focus_detail", "Focus detail", "Focus the detail pane (enter)"),
    ("toggle_raw", "Raw JSON", "Raw JSON of the selected message (J)"),
    ("toggle_repair", "Repair plan", "Open or close the repair plan (r)"),
    ("apply_fix", "Apply fix", "Apply the selected fix (a)"),
    ("skip_fix", "Skip fix", "Skip the selected fix (s)"),
    ("cycle_fix", "Cycle alternative", "Switch the selected fix to its alternative (tab)"),
    ("apply_all", "Apply all", "Apply all remaining fixes (A)"),
    ("undo", "Undo", "Undo the last repair step (u)"),
    ("redo", "Redo", "Redo the last undone step (ctrl+y)"),
    ("export", "Export", "Write the repaired file and the report (e)"),
    ("help", "Help", "Keys and the gutter legend (?)"),
    ("request_quit", "Quit", "Quit histview (q)"),
]

MAIN_ONLY = {
    "next_finding",
    "prev_finding",
    "search",
    "toggle_filter",
    "focus_detail",
    "toggle_raw",
    "toggle_repair",
    "apply_fix",
    "skip_fix",
    "cycle_fix",
    "apply_all",
    "undo",
    "redo",
    "export",
    "help",
    "request_quit",
    "top",
    "bottom",
}
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


class HistviewApp(App):
    CSS_PATH = "histview.tcss"
    TITLE = "histview"
    ENABLE_COMMAND_PALETTE = True

    BINDINGS = [
        Binding("n", "next_finding", "Next finding"),
        Binding("N", "prev_finding", "Prev finding", show=False),
        Binding("slash", "search", "Search"),
        Binding("f", "toggle_filter", "Filter"),
        Binding("enter", "focus_detail", "Detail", show=False),
        Binding("escape", "focus_timeline", "Timeline", show=False),
        Binding("J", "toggle_raw", "Raw JSON", show=False),
        Binding("r", "toggle_repair", "Repair"),
        Binding("a", "apply_fix", "Apply"),
        Binding("s", "skip_fix", "Skip", show=False),
        Binding("tab", "cycle_fix", "Alternative", show=False, priority=True),
        Binding("A", "apply_all", "Apply all", show=False),
        Binding("u", "undo", "Undo"),
        Binding("ctrl+y", "redo", "Redo", show=False),
        Binding("e", "export", "Export"),
        Binding("question_mark", "help", "Help"),
        Binding("q", "request_quit", "Quit"),
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
        self.picker_now = now  # a fixed clock for the picker's ages (tests)
        self.picker_workers = check_workers
        self.given_session = session
        self.format = format
        self.target = target
        self.session: Session | None = None
        self.wb: Workbench | None = None
        self.fixes: list[Fix] = []
        self.raw = False
        self.repair_open = False
        self.version = 0
        self.last_search = ""
        self.exported: Session | None = None
        self.load_error: str | None = None
        self.timings: dict[str, float] = {}
        self._t0 = time.perf_counter()

    # layout
    def compose(self) -> ComposeResult:
        yield Static(Content("histview"), id="header", markup=False)
        with Horizontal(id="main"):
            yield Timeline(id="timeline")
            with VerticalScroll(id="detail-scroll", can_focus=True):
                yield Static(id="detail", markup=False)
        yield LoadingIndicator(id="loading")
        yield Static(id="load-error", markup=False)
        yield RepairPane(id="repair")
        yield Footer()

    def on_mount(self) -> None:
        self.theme = "textual-dark"
        self.query_one("#repair").display = False
        self.query_one("#load-error").display = False
        self.query_one("#main").display = False
        if self.pick:
            source = PickSource(self.path if self.path and os.path.isdir(self.path) else None)
            picker = PickerScreen(source, now=self.picker_now, workers=self.picker_workers)
            self.push_screen(picker, self._picked)
            return
        self._start_load()

    def _picked(self, path: str | None) -> None:
        if path is None:
            self.exit()
            return
        self.path = path
        self._start_load()

    def _start_load(self) -> None:
        name = os.path.basename(self.path) if self.path else "session"
        self._set_header(
            Content.assemble(("histview ", "bold"), f"loading {clean_line(name, 60)} …")
        )
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
            analysis = wb.analysis
            table = with_findings(table, analysis)
            lanes = layout(analysis.pairing, table)
            self.post_message(AnalysisReady(wb, table, lanes))

    def on_session_loaded(self, msg: SessionLoaded) -> None:
        self.session = msg.session
        self.query_one("#loading").display = False
        self.query_one("#main").display = True
        self.version += 1
        tl = self.query_one(Timeline)
        tl.set_state(TimelineState(msg.session, msg.table, None, self.version))
        tl.focus()
        self._update_header()
        self.timings["loaded"] = time.perf_counter() - self._t0
        self.timings["load_worker"] = msg.seconds
        self.call_after_refresh(self._mark, "first_paint")

    def on_analysis_ready(self, msg: AnalysisReady) -> None:
        self.wb = msg.workbench
        self.version += 1
        tl = self.query_one(Timeline)
        tl.set_state(
            TimelineState(self.wb.session, msg.table, msg.lanes, self.version),
            keep_row=tl.current_row_index,
        )
        self._update_header()
        self.refresh_bindings()
        self._show_detail()
        self._mark("analysis_ready")

    def on_load_failed(self, msg: LoadFailed) -> None:
        self.load_error = msg.text
        self.query_one("#loading").display = False
        box = self.query_one("#load-error", Static)
        box.update(
            Content.assemble(
                ("Cannot open this session\n\n", "bold $error"),
                clean_line(msg.text, 2000),
                ("\n\nPress q to quit.", "dim"),
            )
        )
        box.display = True
        self._set_header(Content.assemble(("histview ", "bold"), ("load failed", "$error")))

    def on_resize(self) -> None:
        self._update_header()

    def _mark(self, what: str) -> None:
        self.timings[what] = time.perf_counter() - self._t0

    # header / detail
    def _set_header(self, content: Content) -> None:
        self.query_one("#header", Static).update(content)

    def _update_header(self) -> None:
        s = self.wb.session if self.wb else self.session
        if s is None:
            return
        name = clean_line(os.path.basename(s.path), 40)
        parts: list = [("histview ", "bold"), (name, "bold $accent"), f"  {s.format} → {s.target}"]
        parts.append(f"  {len(s.messages)} msgs  ")
        if self.wb is None:
            parts.append(("analysing…", "italic dim"))
        else:
            c = self.wb.analysis.counts()
            wide = self.size.width >= 100
            e, w, i = c["error"], c["warning"], c["info"]
            parts += [
                (
                    f"● {e}" + (f" error{'s' if e != 1 else ''}" if wide else ""),
                    "bold $error" if e else "dim",
                ),
                "  ",
                (
                    f"▲ {w}" + (f" warning{'s' if w != 1 else ''}" if wide else ""),
                    "bold $warning" if w else "dim",
                ),
                "  ",
                (f"○ {i}" + (" info" if wide else ""), "$primary" if i else "dim"),
            ]
            if self.wb.done:
                parts.append((f"  {len(self.wb.applied)} fixed", "$success"))
            if self._unexported:
                parts.append(("  *unexported", "italic $warning"))
        tl = self.query_one(Timeline)
        if tl.findings_only:
            parts.append(("  [findings only]", "reverse"))
        self._set_header(Content.assemble(*parts))

    @property
    def _unexported(self) -> bool:
        return bool(self.wb and self.wb.dirty and self.wb.session is not self.exported)

    @on(Timeline.RowChanged)
    def _row_changed(self, event: Timeline.RowChanged) -> None:
        self._show_detail()

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
            if self.wb is not None:
                findings = self.wb.analysis.by_message().get(row.mi, []) if tl.state.lanes else []
            detail.update(message_detail(session, row, findings))
        self.query_one("#detail-scroll", VerticalScroll).scroll_home(animate=False)

    # state changes
    def _refresh_state(self) -> None:
        """Rebuild rows and lanes for the workbench's current session (after a step)."""
        wb = self.wb
        with gc_paused():
            analysis = wb.analysis
            table = build_rows(wb.session, analysis)
            lanes = layout(analysis.pairing, table)
        self.version += 1
        tl = self.query_one(Timeline)
        keep = tl.current_row_index
        tl.set_state(TimelineState(wb.session, table, lanes, self.version), keep_row=keep)
        self._update_header()
        if self.repair_open:
            self._refresh_fixes()

    def _refresh_fixes(self, keep: int | None = None) -> None:
        fl = self.query_one("#fix-list", OptionList)
        if keep is None:
            keep = fl.highlighted or 0
        self.fixes = list(self.wb.plan.fixes)
        pane = self.query_one(RepairPane)
        pane.show_fixes(self.fixes, keep)
        self._show_preview()

    def _selected_fix(self) -> Fix | None:
        if not self.repair_open or not self.fixes:
            return None
        i = self.query_one("#fix-list", OptionList).highlighted
        if i is None or i >= len(self.fixes):
            return None
        return self.fixes[i]

    def _show_preview(self) -> None:
        fix = self._selected_fix()
        pv = self.wb.preview(fix) if fix is not None and fix.actionable else None
        self.query_one(RepairPane).show_preview(fix, pv)

    @on(OptionList.OptionHighlighted, "#fix-list")
    def _fix_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        fix = self._selected_fix()
        self._show_preview()
        if fix is not None:
            tl = self.query_one(Timeline)
            row = tl.state.table.row_of(fix.message_index, fix.finding.block_index)
            if row is not None:
                tl.go_to_row(row)

    # actions
    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action in MAIN_ONLY and self.screen is not self.screen_stack[0]:
            return False
        if action in NEEDS_ANALYSIS and self.wb is None:
            return False
        if action in NEEDS_REPAIR_PANE and not self.repair_open:
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
        self.query_one("#detail-scroll").focus()

    def action_focus_timeline(self) -> None:
        self.query_one(Timeline).focus()

    def action_toggle_raw(self) -> None:
        self.raw = not self.raw
        self._show_detail()

    def action_toggle_repair(self) -> None:
        self.repair_open = not self.repair_open
        pane = self.query_one(RepairPane)
        pane.display = self.repair_open
        if self.repair_open:
            first = next((i for i, f in enumerate(self.wb.plan.fixes) if f.actionable), 0)
            self._refresh_fixes(keep=first)
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
        if self.wb.apply(fix):
            self.notify(f"Applied: {clean_line(fix.detail, 200)}", markup=False)
            self._refresh_state()

    def action_skip_fix(self) -> None:
        fix = self._selected_fix()
        if fix is not None:
            now = self.wb.skip(fix)
            self.notify("Skipped." if now else "Not skipped any more.", markup=False)
            self._refresh_fixes()

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
        self.push_screen(HelpScreen())

    # search
    def action_search(self) -> None:
        self.push_screen(SearchScreen(self.last_search), self._search_done)

    def _search_done(self, query: str | None) -> None:
        if not query:
            return
        self.last_search = query
        tl = self.query_one(Timeline)
        row = find_row(tl.state.session, tl.state.table, query, (tl.current_row_index or 0) + 1)
        if row is None:
            self.notify(f"Not found: {clean_line(query, 80)}", markup=False, severity="warning")
            return
        if tl.findings_only and row not in tl.state.table.finding_rows:
            tl.set_findings_only(False)
            self._update_header()
        tl.go_to_row(row)
        tl.focus()

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
                    + "? A backup copy (.bak) is written first."
                ),
                lambda yes: yes and self._do_export(out, rep, in_place=True, force=locked),
            )
            return
        existing = [p for p in (out, rep) if p and os.path.lexists(p)]
        if existing:
            names = ", ".join(clean_line(os.path.basename(p), 60) for p in existing)
            self.push_screen(
                ConfirmScreen(
                    f"{names} already exist{'s' if len(existing) == 1 else ''}. Overwrite?"
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

    # quit
    def action_request_quit(self) -> None:
        if self._unexported:
            self.push_screen(
                ConfirmScreen(
                    f"{len(self.wb.applied)} applied fix(es) are not exported. Quit anyway?"
                ),
                lambda yes: yes and self.exit(),
            )
        else:
            self.exit()

    # command palette
    def get_system_commands(self, screen: Screen):
        yield from super().get_system_commands(screen)
        for action, title, help_text in COMMANDS:
            yield SystemCommand(title, help_text, lambda a=action: self._palette_run(a))

    async def _palette_run(self, action: str) -> None:
        if self.wb is None and action in NEEDS_ANALYSIS:
            self.notify("The analysis is not ready yet.", markup=False)
            return
        if action in NEEDS_REPAIR_PANE and not self.repair_open:
            self.action_toggle_repair()
        await self.run_action(action)


def find_row(session: Session, table: RowTable, query: str, start: int) -> int | None:
    """First row at/after `start` (wrapping) whose tool id equals `query` or whose text
    contains it (case-insensitive)."""
    q = query.lower()
    rows = table.rows
    n = len(rows)
    for k in range(n):
        ri = (start + k) % n
        row = rows[ri]
        msg = session.messages[row.mi]
        if row.bi is None:
            blocks = [b for b in msg.blocks if b.tool_id is None]
            if msg.malformed and q in msg.malformed.lower():
                return ri
        else:
            blocks = [msg.blocks[row.bi]]
        for b in blocks:
            if b.tool_id and q == b.tool_id.lower():
                return ri
            if b.name and q in b.name.lower():
                return ri
            if q in block_text(b).lower():
                return ri
            if b.tool_id and q in b.tool_id.lower():
                return ri
    return None


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
    parser = argparse.ArgumentParser(prog="histview", description="Open a session in the TUI.")
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
    path = args.file if args.file or args.pick else str(DEMO)
    app = HistviewApp(path, format=args.format, target=args.target, pick=args.pick)
    app.run()
    return 1 if app.load_error else (app.return_code or 0)
