"""The session screen (README, The TUI): a linked timeline, the selected message, the repair plan.

Loading and the first analysis run in a thread worker; the screen paints the timeline as soon
as the rows exist (SessionLoaded) and adds lanes, marks, counts and the summary line when the
analysis is ready (AnalysisReady). Search, repair steps, previews and exports run in workers
too. All engine work goes through `repair.workbench.Workbench`. Its keys are declared once,
in `MainScreen.BINDINGS`: the footer, the help screen, the command palette and the README's
key table come from them. Being a screen of its own, none of them works while a modal is on
top of it.
"""

from __future__ import annotations

import os
import time
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from textual import events, on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import LoadingIndicator, Static
from textual.worker import get_current_worker

from repair.errors import ExportRefused, InputError, WriteFailed
from repair.files import (
    FileText,
    default_output,
    default_report,
    numbered,
    read_only,
    same_file,
)
from repair.formats import load_session
from repair.formats.base import check_numbers
from repair.formats.head import load_head
from repair.gcpause import gc_paused
from repair.jsonio import InexactNumbers
from repair.model import Session
from repair.plan import Fix
from repair.reread import read_exactly
from repair.sanitize import clean_line
from repair.workbench import View, Workbench, cannot_write

from .detail import SEV_STYLE, message_detail, raw_json
from .fix_lines import FixLines, fix_lines
from .keys import (
    ANSWERS_WHILE_LOADING,
    APP_KEYS,
    PALETTE_KEY,
    WAITS_FOR_FIRST_LOOK,
    WAITS_FOR_WORKBENCH,
    JKScroll,
    KeysFooter,
    declared,
    help_rows,
    key_name,
)
from .messages import (
    AnalysisReady,
    ExactRead,
    ExportDone,
    LoadFailed,
    PreviewReady,
    PromiseReady,
    ScreenReady,
    SearchDone,
    SessionLoaded,
    StepDone,
    ViewShown,
)
from .picker import TASK_FILES
from .repair_pane import RepairPane
from .rows import SEV_MARK, Row, build_rows, lazy_rows, search_rows, short_id
from .screens import ConfirmScreen, ExportScreen, HelpScreen, SearchScreen, ThreadScreen
from .state import Derived, first_look, snapshot, step_changes, workbench_of
from .summary import clean_text
from .timeline import Timeline, TimelineState


@dataclass
class Search:
    query: str
    rows: list[int]  # matching table rows, ascending


@dataclass(frozen=True)
class Waiting:
    """A key typed before what it needs was there, or behind keys waiting: it runs in the
    order typed (`MainScreen._run_queued`)."""

    action: str
    query: str | None = None  # a search's text


# What an action needs: the rows, the findings, the workbench, the repair pane open. While
# the file is read or analysed, such a key waits for what it needs (`_deferred`); on the
# "cannot open" screen it is off (check_action).
NEEDS_ROWS = {"search", "next_match", "prev_match", "copy_id", "toggle_raw", "top", "bottom"}
# what the rows read so far are enough for (a large file's first lines)
NEEDS_SOME_ROWS = {"copy_id", "toggle_raw", "top", "bottom"}
NEEDS_REPAIR_PANE = {"apply_fix", "skip_fix", "cycle_fix"}
NEEDS_FINDINGS = {"next_finding", "prev_finding", "toggle_filter"}
NEEDS_ANALYSIS = NEEDS_FINDINGS | (set(WAITS_FOR_WORKBENCH) - {"reload"})
NAME_ROOM = 12  # the header's file name below this: the short message count
TARGET_ROOM = 24  # the header's file name below this (narrow): the target left out
PROMISE_AUTO_BYTES = 16_000_000  # above: the promise is read back when exporting only
PALETTE_SKIP = {"escape", "focus_detail"}
SPINNER_FRAME = 1 / 16  # the loading indicator's (Textual's own interval)
DETAIL_MODES = ("normal", "wide", "hidden")


def _key(key: str, action: str, description: str, **kw: Any) -> Binding:
    """A key of the session screen: its id (what the help screen, the palette and the README
    table are keyed by) is its action's name."""
    return Binding(key, action, description, id=action, **kw)


class MainScreen(Screen[None]):
    """One session: header, summary line, timeline and detail, the repair pane, search bar.
    Dismissed (back to the picker) by q when it was opened from the picker."""

    # Each key once: the footer shows those with show=True, the help screen lists them all
    # (the tooltip is the longer text), the command palette runs them; the id names the
    # binding for a keymap.
    BINDINGS = [
        _key("question_mark", "help", "Help", tooltip="keys and what the timeline draws"),
        _key(
            "q",
            "close",
            "Quit",
            tooltip="quit (or back to the picker); asks before losing fixes",
        ),
        _key(
            "n",
            "next_finding",
            "Next finding",
            tooltip="next row with a finding",
        ),
        _key(
            "N",
            "prev_finding",
            "Previous finding",
            show=False,
            tooltip="previous row with a finding",
        ),
        _key("slash", "search", "Search", tooltip="search text or a tool id"),
        _key(
            "right_square_bracket",
            "next_match",
            "Next match",
            show=False,
            tooltip="next search match",
        ),
        _key(
            "left_square_bracket",
            "prev_match",
            "Previous match",
            show=False,
            tooltip="previous search match",
        ),
        _key(
            "f",
            "toggle_filter",
            "Findings only",
            show=False,
            tooltip="show only rows with findings (toggle)",
        ),
        _key(
            "enter",
            "focus_detail",
            "Detail",
            show=False,
            tooltip="focus the detail pane",
        ),
        _key(
            "escape",
            "escape",
            "Back",
            show=False,
            tooltip="back to the timeline; there, clear the search",
        ),
        _key(
            "J",
            "toggle_raw",
            "Raw JSON",
            show=False,
            tooltip="raw JSON of the message",
        ),
        _key(
            "d",
            "cycle_detail",
            "Detail size",
            show=False,
            tooltip="detail pane: wider, hidden, back to normal",
        ),
        _key(
            "y",
            "copy_id",
            "Copy id",
            show=False,
            tooltip="copy the selected tool id (or message id)",
        ),
        _key(
            "r",
            "toggle_repair",
            "Repair",
            tooltip="open / close the repair plan",
        ),
        _key("a", "apply_fix", "Apply", tooltip="apply the selected fix"),
        _key(
            "s",
            "skip_fix",
            "Skip",
            show=False,
            tooltip="skip the fix and go to the next (again: take it back)",
        ),
        _key(
            "tab",
            "cycle_fix",
            "Alternative",
            show=False,
            priority=True,
            tooltip="switch the fix to its alternative action",
        ),
        _key(
            "A",
            "apply_all",
            "Apply all",
            show=False,
            tooltip="apply all remaining fixes",
        ),
        _key("u", "undo", "Undo", show=False, tooltip="undo the last repair step"),
        _key("ctrl+y", "redo", "Redo", show=False, tooltip="redo the last undone step"),
        _key(
            "e",
            "export",
            "Export",
            tooltip="write the repaired session and its report",
        ),
        _key(
            "R",
            "reload",
            "Reload",
            show=False,
            tooltip="read the file again; asks before losing fixes",
        ),
        _key(
            "t",
            "threads",
            "Threads",
            show=False,
            tooltip="switch between the conversation and its sidechain and subagent threads",
        ),
    ]

    # the state the screen shows; their watchers keep the widgets in step
    repair_open = reactive(False, bindings=True)
    detail_mode = reactive(DETAIL_MODES[0])
    raw = reactive(False, init=False)
    # a repair step, a thread switch or an export running in a worker ("applying …")
    busy: reactive[str | None] = reactive(None, bindings=True, init=False)

    def __init__(
        self,
        path: str | None,
        *,
        session: Session | None = None,
        format: str | None = None,
        target: str | None = None,
        from_picker: bool = False,
        t0: float | None = None,
    ) -> None:
        super().__init__()
        self.path = path
        self.from_picker = from_picker
        self.given_session = session
        self.format = format
        self.target = target
        self.session: Session | None = None
        self.wb: Workbench | None = None
        self.derived: Derived | None = None
        self.fixes: list[Fix] = []
        self.lines: FixLines | None = None  # the fix list shown (of `fixes`)
        self.version = 0
        self.last_search = ""
        self.search: Search | None = None
        self.exported: Session | None = None
        self.load_error: str | None = None
        self.timings: dict[str, float] = {}
        # what check_action said of each key when the footer was last asked to show them
        self._keys_shown: tuple[bool | None, ...] = ()
        self._detail_width = 0  # the detail pane's row its header's lines were named in
        # at each mark of `timings` (first paint, analysis ready, ...): the process's CPU
        # time and the UI thread's, taken there (bench/tui_bench.py)
        self.mark_cpu: dict[str, tuple[float, float]] = {}
        self._resumed = False  # shown once (Textual's ScreenResume)
        self.head_only = False  # the rows shown are a large file's first lines
        self._first_analysis = True
        # the first look is on screen, the workbench (lanes, plan, steps) still to come
        self.filling = False
        self._t0 = time.perf_counter() if t0 is None else t0
        self.view: View = None  # the conversation shown: None the main one, k thread k
        # the keys pressed while busy that would race the step, while the file is read
        # those that need what is not there yet, and those typed behind them: they run in
        # the order typed once what each needs is there
        self._queued: list[Waiting] = []  # toggle_repair, search, next_finding, undo, ...
        self._search_waiting: str | None = None  # a search typed, running: keys wait for it
        self._from_queue = False  # a key the queue runs: its turn has come
        self._step_started = 0.0
        # what check finds in an export of a state (read back): (state, the line shown)
        self.promise: tuple[Session, Content] | None = None
        self._preview_key: tuple | None = None  # the preview asked for (state, fix)
        self._preview_running = False
        self._preview_next: tuple | None = None  # asked while another one ran
        self._previews: dict[tuple, tuple] = {}  # (state id, fix key, view) -> preview
        # after a step, until its state is drawn: the preview and promise workers wait (they
        # would take the interpreter from the redraw)
        self._hold_workers = False
        # workbenches whose file was scanned for odd number literals and holds none
        self._numbers_seen: set[Workbench] = set()
        # the workbench whose file could not be read again exactly, and why
        self._exact_error: tuple[Workbench, str] | None = None

    @property
    def bench(self) -> Workbench:
        """The workbench of the session on screen. The actions that use it are enabled once
        the analysis is ready (check_action: NEEDS_ANALYSIS), and their workers after them."""
        if self.wb is None:
            raise RuntimeError("the session is not analysed yet")
        return self.wb

    def _gone(self) -> bool:
        """The screen was closed or the app is shutting down: a worker's late result has
        nowhere to go."""
        return not self.is_attached or self.app._exit

    # layout
    def compose(self) -> ComposeResult:
        yield Static(Content("histview"), id="header", markup=False)
        yield Static(id="summary", markup=False)
        # (with the first detail mode's class, which its watcher sets at mount: the pane is
        # not restyled then)
        with Horizontal(id="main", classes=f"-detail-{DETAIL_MODES[0]}"):
            yield Timeline(id="timeline")
            with JKScroll(id="detail-scroll", can_focus=True):
                yield Static(id="detail", markup=False)
        yield LoadingIndicator(id="loading")
        yield Static(id="load-error", markup=False)
        yield RepairPane(id="repair")
        yield Static(id="search-bar", markup=False)
        yield KeysFooter(compact=True)

    def on_mount(self) -> None:
        for wid in ("#load-error", "#main", "#summary", "#search-bar"):
            self.query_one(wid).display = False
        self._narrow(self.size.width)
        self.bindings_updated_signal.subscribe(self, self._keys_asked, immediate=True)
        self._start_load()

    def watch_repair_open(self, open_: bool) -> None:
        self.query_one(RepairPane).display = open_

    # loading
    def _reset(self) -> None:
        """Forget the session on screen (before a reload, or back to the picker)."""
        for group in (
            "load",
            "search",
            "step",
            "preview",
            "describe",
            "promise",
            "export-check",
            "raw-numbers",
        ):
            self.workers.cancel_group(self, group)
        self.session = self.wb = self.derived = self.exported = None
        self.head_only = False
        self.filling = False
        self._set_fixes()
        self.view = None
        self.busy = None
        self._queued = []
        self._search_waiting = None
        self.promise = None
        self._previews.clear()
        self._preview_key = self._preview_next = None
        self.search = None
        self.load_error = None
        self.raw = False
        self._first_analysis = True
        self.repair_open = False
        tl = self.query_one(Timeline)
        tl.set_match("")
        tl.findings_only = False
        tl.set_state(None)
        for wid in ("#main", "#summary", "#search-bar", "#load-error"):
            self.query_one(wid).display = False
        self.refresh_bindings()

    def _start_load(self) -> None:
        self._reset()
        self._spinner(True)
        name = header_name(self.path or "session")
        self._set_header(Content.assemble(("histview ", "bold"), f"loading {name} …"))
        self.load()

    @work(thread=True, exit_on_error=False, exclusive=True, group="load")
    def load(self) -> None:
        t0 = time.perf_counter()
        cpu = self._phase_cpu()
        # The cyclic GC would rescan the growing object graph again and again while a large
        # session is built: it is off during the load, and what was built is frozen after.
        with gc_paused(freeze=True):
            if self.given_session is None and self.path:
                # a large file's first lines first, as a log viewer shows them
                head = load_head(self.path, self.format, self.target)
                if head is not None:
                    table = build_rows(head)
                    self.post_message(
                        SessionLoaded(head, table, time.perf_counter() - t0, head=True)
                    )
                cpu("head_cpu")
            try:
                # without the whole-file scan for number literals orjson changes, as
                # `check` and `fix` read: a write that meets one reads the file again
                # exactly first (`_export_worker`, repair.reread)
                # a large file's CRCs (what a write and later reads are checked against)
                # made once the analysis is shown, not while it is awaited
                session = self.given_session or load_session(
                    self.path or "", self.format, self.target, exact_numbers=False, crcs_later=True
                )
            except InputError as exc:
                self.post_message(LoadFailed(str(exc)))
                return
            except Exception as exc:  # a bug in an adapter must not become a traceback
                name = os.path.basename(self.path or "session")
                self.post_message(
                    LoadFailed(f"{name}: could not be read ({type(exc).__name__}: {exc})")
                )
                return
            cpu("load_cpu")
            # the rows counted from the tool ids the loader read: a message's blocks are
            # made when its rows are drawn (or read: a search, a finding)
            table = lazy_rows(session)
            cpu("rows_cpu")
            self.post_message(SessionLoaded(session, table, time.perf_counter() - t0))
            # the findings first, from `check`'s analysis; the whole pairing, the request a
            # step re-sends, the lanes and the plan after, while the keys work
            first, analyses = first_look(session, table)
            cpu("analysis_cpu")
            self.post_message(AnalysisReady(None, first))
            del first  # (what only the first look holds is let go as soon as it can be)
            wb = workbench_of(session, analyses)
            del analyses
            # the same rows: those not drawn yet stay unmade, their messages' blocks too
            derived = snapshot(wb, None, table=table)
            cpu("whole_cpu")
            self.post_message(AnalysisReady(wb, derived))
            wb.prepare_steps()  # after the analysis is on its way: the first step's index
            if session.source is not None and isinstance(session.source.held, FileText):
                session.source.held.seal()  # (a write would make them first, if sooner)

    def _spinner(self, shown: bool) -> None:
        """The loading indicator, shown while the file is read; hidden, its animation's
        timer stops too (it would wake the UI thread 16 times a second for the session's
        life, drawing nothing)."""
        box = self.query_one("#loading", LoadingIndicator)
        box.display = shown
        box.auto_refresh = SPINNER_FRAME if shown else None

    def _key_states(self) -> tuple[bool | None, ...]:
        return tuple(
            self.check_action(b.action, ()) for b in self.BINDINGS if isinstance(b, Binding)
        )

    def _keys_asked(self, _screen: Screen) -> None:
        self._keys_shown = self._key_states()

    def _refresh_keys(self) -> None:
        """Ask the footer to show the keys again if what `check_action` says of them changed
        since it was last asked (here, or by Textual on a change of focus): a footer
        recomposes every key each time it is asked, which the UI thread pays for while the
        worker reads a large file."""
        if self._key_states() != self._keys_shown:
            self.refresh_bindings()

    def _phase_cpu(self) -> Callable[[str], None]:
        """Note the calling thread's CPU time since the last note under a name (the load
        worker's phases, in `timings`: what `bench/tui_bench.py` reports)."""
        last = [time.thread_time()]

        def note(name: str) -> None:
            now = time.thread_time()
            self.timings[name] = now - last[0]
            last[0] = now

        return note

    def on_session_loaded(self, msg: SessionLoaded) -> None:
        t0 = time.perf_counter()
        was_head = self.head_only
        self.session = msg.session
        self.head_only = msg.head
        self._spinner(False)
        self.query_one("#main").display = True
        self.version += 1
        tl = self.query_one(Timeline)
        # the whole session keeps the row the cursor is on among the first lines
        keep = tl.current_row_index if was_head else None
        tl.set_state(TimelineState(msg.session, msg.table, None, self.version), keep_row=keep)
        if not was_head:
            self._focus(tl)
        self._update_header()
        self._refresh_keys()
        what = "head" if msg.head else "loaded"
        self.timings[what] = time.perf_counter() - self._t0
        self.timings[what + "_worker"] = msg.seconds
        if "first_paint" not in self.timings:
            self.call_after_refresh(self._mark, "first_paint")
        self.timings["ui_" + what] = time.perf_counter() - t0

    def on_analysis_ready(self, msg: AnalysisReady) -> None:
        t0 = time.perf_counter()
        self.wb = msg.workbench
        # a first look (no workbench yet): the actions that need it wait for the whole
        self.filling = msg.workbench is None
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
        if self.filling:
            self.timings["ui_analysis"] = time.perf_counter() - t0
            self._mark("analysis_ready")
            self._run_queued_soon()  # (those the first look is enough for)
            return
        self.timings["ui_whole"] = time.perf_counter() - t0
        self._mark("whole_ready")
        self._update_header()
        self._run_queued_soon()

    def on_load_failed(self, msg: LoadFailed) -> None:
        self.load_error = msg.text
        self._queued, self._search_waiting = [], None  # (the screen says what works)
        self._spinner(False)
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
        self._update_summary()
        self.call_after_refresh(self._detail_resized)

    def _narrow(self, width: int) -> None:
        self.query_one("#main").set_class(width < 100, "-narrow")

    def _mark(self, what: str) -> None:
        self.timings[what] = time.perf_counter() - self._t0
        self.mark_cpu[what] = (time.process_time(), time.thread_time())

    def _show_state(self, derived: Derived, keep_row: int | None = None) -> None:
        """Put an analysed state on screen: rows, lanes, header, summary line."""
        self.derived = derived
        self.version += 1
        tl = self.query_one(Timeline)
        state = TimelineState(
            derived.session,
            derived.table,
            derived.lanes,
            self.version,
            derived.pairing,
            derived.numbers,
            _width=derived.index_width,
        )
        tl.set_state(state, keep_row=tl.current_row_index if keep_row is None else keep_row)
        self._update_header()
        self._update_summary()
        # (a search of the queue still running is run again on the new rows first)
        if self._search_waiting is not None:
            self._run_search(self._search_waiting, jump=True)
        elif self.search is not None:
            self._run_search(self.search.query, jump=False)

    # header / summary / detail
    def _set_header(self, content: Content) -> None:
        self.query_one("#header", Static).update(content)

    def _update_header(self) -> None:
        d = self.derived
        s = d.session if d is not None else self.session
        if s is None:
            return
        width = self.size.width - 2
        wide = width >= 100
        right: list = [f"  {message_count(len(s.messages), d.sent if d else None)}  "]
        waiting = self._keys_waiting
        if self.head_only:
            right = [f"  first {len(s.messages)} msgs  ", ("reading…", "italic dim")]
        elif d is None:
            right.append(("analysing…", "italic dim"))
        else:
            right += _counts(d.counts, wide)
            if d.threads:
                t = d.total
                right.append(("  all:", "dim"))
                right += _counts(t, False, short=True)
            if d.applied:
                right.append((f"  {d.applied} fixed", "$text-success"))
            if self._unexported:
                right.append(("  *unexported", "italic $text-warning"))
        if self.busy:
            more = f" (+{len(self._queued)} waiting)" if self._queued else ""
            right.append((f"  ⟳ {self.busy}{more}", "bold reverse $text-warning"))
        elif self.filling:
            more = f" ({waiting} waiting)" if waiting else ""
            right.append((f"  pairing…{more}", "italic dim"))
        elif d is None and waiting:  # (after "reading…" or "analysing…")
            right.append((f" ({waiting} waiting)", "italic dim"))
        if self.query_one(Timeline).findings_only:
            right.append(("  [findings only]", "reverse"))
        label = "histview " if wide else ""
        full = self.wb.original.path if self.wb else s.path
        # the target where it is not the format's own client (claude-code → claude-code); it
        # decides what is an error, so only a name cut below a readable length drops it
        fmt = f"  {s.format}"
        if s.target != s.format:
            aimed = f"{fmt} → {s.target}"
            room = width - len(label) - Content.assemble(aimed, *right).cell_length
            if wide or room >= min(len(header_name(full)), TARGET_ROOM):
                fmt = aimed
        tail = Content.assemble(fmt, *right)
        if d is not None and width - len(label) - tail.cell_length < NAME_ROOM:
            # narrow: the count `check` prints alone, the file's own gives way to the marks
            right[0] = f"  {message_count(len(s.messages), d.sent, short=True)}  "
            tail = Content.assemble(fmt, *right)
        # the counts and marks always show; the name gives way (shortened in its middle)
        room = max(width - len(label) - tail.cell_length, 8)
        # a thread shown: its label after the file's name (the label gives way first)
        thread = ""
        if d is not None and d.view is not None:  # named in full on the summary line
            thread = f" › thread {d.view + 1}/{len(d.threads)}"
        name = header_name(full, room - len(thread))
        self._set_header(
            Content.assemble(
                (label, "bold"), (name, "bold $text-accent"), (thread, "bold $text-warning"), tail
            )
        )

    def _update_summary(self) -> None:
        box = self.query_one("#summary", Static)
        if self.derived is None:
            box.display = False
            return
        items = self.derived.problems
        if not items:
            parts: list = [
                ("✓ ", "bold $text-success"),
                clean_text(len(self.derived.session.messages), self.derived.sent),
            ]
        elif all(sev == "info" for sev, _ in items):
            parts = [
                ("✓ ", "bold $text-success"),
                "Nothing the provider rejects · ",
                *_joined(items),
            ]
        else:
            parts = _joined(items)
        threads = self.derived.threads
        if self.derived.view is not None:
            label = clean_line(self.derived.session.label or "thread", 60)
            parts = [(f"{label} ", "bold $text-warning"), ("· ", "dim"), *parts]
        line = Content.assemble(*parts)
        if threads and self.derived.view is None:
            bad = sum(1 for _l, _n, c in threads if c["error"] or c["warning"])
            hint = Content.styled(
                f"   ({len(threads)} thread{'s' if len(threads) != 1 else ''}"
                + (f", {bad} with problems" if bad else "")
                + ": t lists them)",
                "dim",
            )
            # the key that lists them is kept whole: the problems give way to it
            room = self.size.width - 2  # (the box's padding)
            if line.cell_length + hint.cell_length > room:
                line = line.truncate(max(room - hint.cell_length, 20), ellipsis=True)
            line += hint
        box.update(line)
        box.display = True

    @property
    def _unexported(self) -> bool:
        d = self.derived
        return bool(d is not None and d.dirty and d.state is not self.exported)

    @on(Timeline.RowChanged)
    def _row_changed(self, event: Timeline.RowChanged) -> None:
        self._show_detail()
        if self.search is not None:
            self._update_search_bar()
        # a row the cursor has left since (keys run in a burst): the newer move's event follows
        if event.row is not None and event.row is self.query_one(Timeline).current_row:
            self._fix_follows_cursor()

    def _show_detail(self) -> None:
        tl = self.query_one(Timeline)
        row = tl.current_row
        detail = self.query_one("#detail", Static)
        if row is None or tl.state is None:
            detail.update(Content.styled("(no row selected)", "italic dim"))
            return
        session = tl.state.session
        if self.raw:
            shown = raw_json(session.messages[row.mi])
        else:
            findings = []
            numbers = None
            if self.derived is not None and tl.state.numbers is not None:
                findings = self.derived.by_message.get(row.mi, [])
                numbers = self.derived.numbers
            width = self._detail_width = self._detail_row()
            shown = message_detail(session, row, findings, tl.state.pairing, numbers, width)
        # the same text and styles (the row the first lines showed, read again with the
        # whole session): not set again, which would lay the screen out again
        old = detail.content
        if not (isinstance(old, Content) and old.plain == shown.plain and old.spans == shown.spans):
            detail.update(shown)
        self.query_one("#detail-scroll", JKScroll).scroll_home(animate=False)

    def _detail_row(self) -> int:
        """The detail pane's row, a vertical scrollbar's room left out whether one shows or
        not (the text it is measured for is not in it yet)."""
        scroll = self.query_one("#detail-scroll", JKScroll)
        return max(1, scroll.size.width - scroll.styles.scrollbar_size_vertical)

    def _detail_resized(self) -> None:
        """The pane's row changed (`d`, the terminal resized): the header's lines named anew."""
        scroll = self.query_one("#detail-scroll", JKScroll)
        width = self._detail_width  # 0: no message's lines named yet
        if self.raw or not width or not scroll.display or self._detail_row() == width:
            return
        y = scroll.scroll_y
        self._show_detail()
        scroll.scroll_to(y=y, animate=False)

    # state changes
    def _refresh_fixes(self, keep: int | None = None) -> None:
        """The plan of the state on screen into the fix list (its plan was made with it)."""
        if keep is None:
            keep = self.query_one(RepairPane).selected or 0
        self._set_fixes()
        prompts = self.lines.prompts if self.lines is not None else None
        self.query_one(RepairPane).show_fixes(self.fixes, keep, prompts)
        # now, as the messages of the move and the new list would (see `_select_fix`): the
        # list goes to the fix of the cursor's row if it has one, else the cursor to `keep`
        self._fix_follows_cursor()
        self._cursor_follows_fix()
        self._show_preview()

    def _set_fixes(self) -> None:
        """The plan of the state on screen, and its fix list (made by the worker that made
        the state: nothing here grows with the plan)."""
        d = self.derived
        self.lines = d.lines if d is not None else None
        self.fixes = self.lines.fixes if self.lines is not None else []

    def _selected_fix(self) -> Fix | None:
        if not self.repair_open or not self.fixes:
            return None
        i = self.query_one(RepairPane).selected
        if i is None or i >= len(self.fixes):
            return None
        return self.fixes[i]

    # the preview: what happens to the blocks comes first (its own worker, quick), the
    # records written after (one worker at a time: the latest request waits for it)
    def _show_preview(self) -> None:
        fix = self._selected_fix()
        pane = self.query_one(RepairPane)
        if fix is None or not fix.edits or fix.frozen is not None or self.derived is None:
            self._preview_key = None
            pane.show_preview(fix, None)
            return
        key = (id(self.derived.state), fix.key, fix.action, self.view)
        self._preview_key = key
        got = self._previews.get(key)
        if got is not None:
            pane.show_preview(fix, got[0], pending=got[1])
            if not got[1]:
                return
        else:
            pane.show_preview(fix, None, pending=True)
        if self.busy or self._hold_workers:
            return  # asked again when the step is done and drawn
        # a skipped fix still shows what it would change
        shown = replace(fix, skipped=False) if fix.skipped else fix
        if got is None:
            self._describe_worker(key, shown, self.view)
        if self._preview_running:
            self._preview_next = key
            return
        self._start_preview(key, fix)

    def _start_preview(self, key: tuple, fix: Fix) -> None:
        self._preview_running = True
        self._preview_worker(key, replace(fix, skipped=False) if fix.skipped else fix, self.view)

    @work(thread=True, exclusive=True, group="describe", exit_on_error=False)
    def _describe_worker(self, key: tuple, fix: Fix, view: View) -> None:
        try:
            with gc_paused(freeze=True):
                quick = self.bench.preview(fix, view, records=False)
        except Exception:  # the full preview says what went wrong
            return
        self.post_message(PreviewReady(key, fix, quick, pending=True))

    @work(thread=True, group="preview", exit_on_error=False, description="preview")
    def _preview_worker(self, key: tuple, fix: Fix, view: View) -> None:
        try:
            with gc_paused(freeze=True):
                full = self.bench.preview(fix, view)
        except InexactNumbers:  # its records would show a literal other than as read
            self.post_message(PreviewReady(key, fix, None, pending=False))
            self.app.call_from_thread(self._read_exactly)
            return
        except Exception as exc:  # a preview must never take the app down
            self.post_message(PreviewReady(key, fix, None, pending=False))
            self.app.call_from_thread(
                self.notify,
                clean_line(f"No preview: {type(exc).__name__}: {exc}", 300),
                markup=False,
                severity="error",
            )
            return
        self.post_message(PreviewReady(key, fix, full, pending=False))

    def on_preview_ready(self, msg: PreviewReady) -> None:
        if self._gone():
            return
        done = self._previews.get(msg.key)
        if msg.pending and done is not None and not done[1]:
            return  # the records came first: keep them
        self._previews[msg.key] = (msg.preview, msg.pending)
        if len(self._previews) > 64:
            self._previews.pop(next(iter(self._previews)))
        if msg.key == self._preview_key:
            self.query_one(RepairPane).show_preview(msg.fix, msg.preview, pending=msg.pending)
        if msg.pending:
            return
        self._preview_running = False
        nxt, self._preview_next = self._preview_next, None
        if nxt is not None and nxt == self._preview_key and not self.busy:
            fix = self._selected_fix()
            if fix is not None:
                self._start_preview(nxt, fix)

    def _fix_of_row(self, row: Row) -> int | None:
        """The plan's fix for one of the row's findings (one that changes something first)."""
        lines = self.lines
        if lines is None:
            return None
        of = lines.of_finding
        hits = [lines.index(of[id(f)]) for f in row.findings if id(f) in of]
        if not hits:
            return None
        return min(hits, key=lambda i: (not self.fixes[i].actionable, i))

    def _fix_follows_cursor(self) -> None:
        row = self.query_one(Timeline).current_row
        if self.repair_open and row is not None:
            self._select_fix_of_row(row)

    def _select_fix_of_row(self, row: Row) -> None:
        current = self._selected_fix()
        if current is not None and _shares_finding(current, row):
            return  # the selected fix is already about this row
        i = self._fix_of_row(row)
        if i is not None:
            self.query_one(RepairPane).selected = i

    def on_repair_pane_fix_highlighted(self, event: RepairPane.FixHighlighted) -> None:
        self._show_preview()
        if self.query_one(Timeline).moved_at > event.made:
            return  # the cursor moved since (keys typed fast): its row's fix follows it
        self._cursor_follows_fix()

    def _select_fix(self, i: int) -> None:
        # the cursor goes to its row now, not when FixHighlighted comes: a key typed ahead
        # (waiting for this step or plan) runs from the row (`N` after `s`)
        self.query_one(RepairPane).selected = i
        self._cursor_follows_fix()

    def _cursor_follows_fix(self) -> None:
        fix = self._selected_fix()
        tl = self.query_one(Timeline)
        if fix is None or tl.state is None:
            return
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
        if self.load_error is not None and (action in NEEDS_ROWS or action in NEEDS_ANALYSIS):
            return False  # (the "cannot open" screen names the keys that work)
        if action in NEEDS_REPAIR_PANE and not self._pane_open_then():
            return False
        if action == "reload" and (not self.path or self.given_session is not None):
            return False
        return True

    @property
    def _loading(self) -> bool:
        """The file is read or analysed: the workbench is still to come."""
        return self.wb is None and self.load_error is None

    def _pane_open_then(self) -> bool:
        """The repair pane is open, or will be once the keys waiting have run."""
        opens = sum(1 for w in self._queued if w.action == "toggle_repair")
        return self.repair_open != (opens % 2 == 1)

    def _deferred(self, action: str) -> bool:
        """True when `action` does not run now, with a word: while a step runs, an action
        that would race it waits for it; while the file is read or analysed, one that needs
        what is not there yet waits for it; behind keys waiting, any waits its turn. They run
        in the order typed (`_run_queued`), the header counts them."""
        if self._from_queue:
            return False
        loading = self._loading
        if loading and action in ("undo", "redo") and not self._steps_waiting():
            self.notify(f"Nothing to {action} yet.", markup=False)
            return True
        if action in ANSWERS_WHILE_LOADING:  # (they move in what is shown, as j and k do)
            if loading and self.session is None:
                self.notify(f"{self._still()}: {ANSWERS_WHILE_LOADING[action]}.", markup=False)
                return True
            return False
        races = action in WAITS_FOR_WORKBENCH and self.busy is not None
        if not (races or self._keys_waiting or not self._ready(action)):
            return False
        self._wait(Waiting(action))
        return True

    def _ready(self, action: str) -> bool:
        """What `action` needs is there: the workbench, the first look (every row, the
        findings, the cursor where the first screen puts it), some rows."""
        if not self._loading:
            return True
        if action in WAITS_FOR_WORKBENCH:
            return False
        if action in NEEDS_SOME_ROWS:
            return self.session is not None
        return self.derived is not None

    @property
    def _keys_waiting(self) -> int:
        """The keys typed that have not run yet (a search of the queue running counts)."""
        return len(self._queued) + (self._search_waiting is not None)

    def _wait(self, key: Waiting) -> None:
        """Put a key in the queue, and say what it waits for (not during a step: the
        header's "⟳ applying… (+1 waiting)" says it)."""
        self._queued.append(key)
        self._update_header()
        if self.busy is not None or not self._loading:
            return
        what = key_name(_keys_of(self.BINDINGS, key.action)[0])
        if key.query is not None:
            what = f"the search for “{clean_line(key.query, 40)}”"
        if self._ready(key.action):
            word = f"{what} runs after the keys typed before it"
        elif key.query is not None:
            word = f"{what} runs when it is read"
        else:
            word = (WAITS_FOR_WORKBENCH | WAITS_FOR_FIRST_LOOK)[key.action]
        self.notify(f"{self._still()}: {word}.", markup=False)

    def key_word(self, event: events.Key) -> None:
        """What a key typed on this screen says before its binding runs (the app calls it,
        once it knows the key is not typed ahead of a modal screen)."""
        # G / End on a large file's first lines goes to the last of them, and says so
        if self.head_only and event.key in _keys_of(Timeline.BINDINGS, "bottom"):
            self._bottom_word()
        # the repair pane's own keys (not tab: it moves the focus) with the pane closed: off
        # (check_action), they say where they work
        if self._pane_open_then() or self.load_error is not None:
            return
        keys = _keys_of(self.BINDINGS, "apply_fix") + _keys_of(self.BINDINGS, "skip_fix")
        if event.key in keys:
            said = " and ".join(keys)
            self.notify(f"{said} act on the repair plan: r opens it.", markup=False)

    def _steps_waiting(self) -> bool:
        return any(w.action in ("apply_fix", "apply_all") for w in self._queued)

    def _still(self) -> str:
        """What the load is doing, as a key waiting for it says."""
        if self.session is None or self.head_only:
            try:
                mb = os.path.getsize(self.path) / 1e6 if self.path else 0.0
            except OSError:
                mb = 0.0
            return "Still reading the file" + (f" ({mb:.0f} MB)" if mb >= 1 else "")
        if self.derived is None:
            return "Still looking for problems"
        return "Still pairing the calls and results"

    def _run_queued_soon(self) -> None:
        # after the refresh, then behind what the app was asked meanwhile: a focus change
        # (Widget.focus is a callback on the app's queue) lands before the next key reads it
        if self._queued:
            self.call_after_refresh(self.app.call_later, self._run_queued)

    async def _run_queued(self) -> None:
        # in order, each once what it needs is there; until one starts a step or a search,
        # or opens a modal screen: the rest wait for it
        while (
            self._queued
            and not self.busy
            and self._search_waiting is None
            and not self._modal_open()
            and self._ready(self._queued[0].action)
        ):
            key = self._queued.pop(0)
            if key.query is not None:
                self._search_waiting = key.query
                self._run_search(key.query, jump=True)
                continue
            tl, pane = self.query_one(Timeline), self.query_one(RepairPane)
            row, fix = tl.current_row_index, pane.selected
            self._from_queue = True
            try:
                await self.run_action(key.action)
            finally:
                self._from_queue = False
            # what follows a move of the cursor or of the fix list's selection follows it
            # now, not when its message comes: the next key reads it (`a` the fix, `n` the row)
            if tl.current_row_index != row:
                self._fix_follows_cursor()
            elif pane.selected != fix:
                self._cursor_follows_fix()
        self._update_header()

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        # (before Textual's own handler) its first resume does not restyle the screen: every
        # widget was styled as it was mounted, just before, and nothing changed since
        if not self._resumed:
            self._resumed = True
            event.refresh_styles = False
        # a modal screen a queued key opened is closed: the keys behind it run; the modal's
        # answer is taken (its callback ran before this): the keys typed ahead come here
        self._run_queued_soon()
        self.app.post_message(ScreenReady(self))

    def _modal_open(self) -> bool:
        return self.app.screen is not self

    def _focus(self, widget: Widget) -> None:
        # at once: Widget.focus waits its turn on the app's queue, and a key run from the
        # queue right after this one reads the focus (y copies the fix's id or the row's)
        self.set_focus(widget)

    def _jump_finding(self, forward: bool) -> None:
        tl = self.query_one(Timeline)
        if tl.state is None:
            return
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
        self._focus(tl)

    def action_next_finding(self) -> None:
        if not self._deferred("next_finding"):
            self._jump_finding(True)

    def action_prev_finding(self) -> None:
        if not self._deferred("prev_finding"):
            self._jump_finding(False)

    def action_top(self) -> None:
        if not self._deferred("top"):
            self.query_one(Timeline).action_top()

    def action_bottom(self) -> None:
        if self.head_only:
            self._bottom_word()
        if not self._deferred("bottom"):
            self.query_one(Timeline).action_bottom()

    def _bottom_word(self) -> None:
        self.notify(f"{self._still()}: this is the last row read so far.", markup=False)

    def action_toggle_filter(self) -> None:
        if self._deferred("toggle_filter"):
            return
        tl = self.query_one(Timeline)
        if tl.state is None:
            return
        if not tl.findings_only and not tl.state.table.finding_rows:
            self.notify("No findings in this session: nothing to filter to.", markup=False)
            return
        tl.set_findings_only(not tl.findings_only)
        self._update_header()

    def action_focus_detail(self) -> None:
        if self.query_one(RepairPane).list_has_focus:
            return
        if self.detail_mode == "hidden":
            self.detail_mode = "normal"
        self._focus(self.query_one("#detail-scroll"))

    def action_escape(self) -> None:
        tl = self.query_one(Timeline)
        if self.focused is not tl:
            self._focus(tl)
        elif self.search is not None or self._search_waiting is not None or self._searches_queued:
            # (the searches typed while the file was read, too: the other keys still run)
            self._queued = [w for w in self._queued if w.query is None]
            self._search_waiting = None
            self._clear_search()
            self._update_header()
            self._run_queued_soon()

    def action_toggle_raw(self) -> None:
        if self._deferred("toggle_raw"):
            return
        self.raw = not self.raw
        wb = self.wb
        if self.raw and wb is not None and not wb.original.numbers_exact:
            # the records shown were parsed by orjson: the file is scanned once for the
            # literals it changes, and read again exactly if it holds one
            self._raw_numbers_worker(wb)

    @work(thread=True, exclusive=True, group="raw-numbers", exit_on_error=False)
    def _raw_numbers_worker(self, wb: Workbench) -> None:
        if wb in self._numbers_seen:
            return
        try:
            with gc_paused():
                check_numbers(wb.original)
        except InexactNumbers:
            self.app.call_from_thread(self._read_exactly)
            return
        except Exception:  # (the file gone: the raw view shows what was read)
            return
        self._numbers_seen.add(wb)

    def watch_raw(self) -> None:
        self._show_detail()

    def action_cycle_detail(self) -> None:
        i = DETAIL_MODES.index(self.detail_mode)
        self.detail_mode = DETAIL_MODES[(i + 1) % len(DETAIL_MODES)]

    def watch_detail_mode(self, mode: str) -> None:
        main = self.query_one("#main")
        for m in DETAIL_MODES:
            main.set_class(m == mode, f"-detail-{m}")
        if mode == "hidden" and self.focused is self.query_one("#detail-scroll"):
            self._focus(self.query_one(Timeline))
        self.call_after_refresh(self._detail_resized)

    def action_copy_id(self) -> None:
        if self._deferred("copy_id"):
            return
        if self.query_one(RepairPane).list_has_focus:
            fix = self._selected_fix()
            text = fix.tool_use_id if fix is not None else None
        else:
            tl = self.query_one(Timeline)
            row = tl.current_row
            text = row_id(tl.state.session, row) if row is not None and tl.state else None
        if not text:
            self.notify("This row has no id to copy.", markup=False)
            return
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied {short_id(text, 40)} to the clipboard (OSC 52).", markup=False)

    def action_toggle_repair(self) -> None:
        if self._deferred("toggle_repair"):
            return
        self.repair_open = not self.repair_open
        if self.repair_open:
            self._set_fixes()
            row = self.query_one(Timeline).current_row
            here = self._fix_of_row(row) if row is not None else None
            self._refresh_fixes(keep=here if here is not None else self._next_fix(0))
            self.query_one(RepairPane).focus_list()
            self._ask_promise()
        else:
            self._focus(self.query_one(Timeline))
        self.refresh_bindings()

    # repair steps: each runs in the step worker; the screen shows "⟳ applying …" and the
    # keys that would race it are disabled until StepDone puts the new state on screen
    def action_apply_fix(self) -> None:
        if self._deferred("apply_fix"):
            return
        fix = self._selected_fix()
        if fix is None:
            return
        if not fix.actionable:
            if fix.frozen is not None:
                self.notify(
                    f"Not applied. {cannot_write(fix.frozen)}", markup=False, severity="warning"
                )
                return
            why = "it is skipped" if fix.skipped else "it changes nothing"
            self.notify(f"Not applied: {why}.", markup=False, severity="warning")
            return
        self._run_step("apply", fix, self.fixes.index(fix))

    def action_apply_all(self) -> None:
        if self._deferred("apply_all"):
            return
        self._run_step("apply_all")

    def action_undo(self) -> None:
        if self._deferred("undo"):
            return
        self._run_step("undo")

    def action_redo(self) -> None:
        if self._deferred("redo"):
            return
        self._run_step("redo")

    BUSY_TEXT = {
        "apply": "applying the fix…",
        "apply_all": "applying every fix…",
        "undo": "undoing…",
        "redo": "redoing…",
    }

    def _run_step(self, what: str, fix: Fix | None = None, at: int = 0) -> None:
        self.busy = self.BUSY_TEXT[what]
        self._step_started = time.perf_counter()
        self._step_worker(what, fix, at, list(self.fixes), self.view, self.derived)

    def watch_busy(self, text: str | None) -> None:
        self._update_header()
        if text is None:
            self._run_queued_soon()

    @work(thread=True, exclusive=True, group="step", exit_on_error=False, description="step")
    def _step_worker(
        self,
        what: str,
        fix: Fix | None,
        at: int,
        old_fixes: list[Fix],
        view: View,
        shown: Derived | None,
    ) -> None:
        wb = self.bench
        t0 = time.perf_counter()
        c0 = time.thread_time()
        try:
            with gc_paused(freeze=True):
                if what == "apply":
                    result = wb.apply(fix, view) if fix is not None else None
                elif what == "apply_all":
                    result = wb.apply_all(threads=True)
                elif what == "undo":
                    result = wb.undo()
                else:
                    result = wb.redo()
                derived = None
                if result is not None:
                    same = shown is not None and shown.view == view
                    changed = step_changes(shown, result) if shown is not None and same else None
                    derived = snapshot(wb, view, reuse=shown if same else None, changed=changed)
        except Exception as exc:  # a bug in a fix must not take the app down
            self.post_message(StepDone(what, None, None, "", error=f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(
            StepDone(
                what,
                result,
                derived,
                "",
                fix,
                at,
                old_fixes,
                seconds=time.perf_counter() - t0,
                cpu=time.thread_time() - c0,
            )
        )

    def on_step_done(self, msg: StepDone) -> None:
        if self._gone():
            return
        t0 = time.perf_counter()
        self.busy = None
        if msg.error is not None:
            self.notify(
                clean_line(f"The step failed: {msg.error}", 400), markup=False, severity="error"
            )
            return
        res = msg.result
        if res is None:
            self.notify(
                {
                    "apply": "Not applied: it changes nothing now.",
                    "apply_all": "Nothing to apply.",
                    "undo": "Nothing to undo.",
                    "redo": "Nothing to redo.",
                }[msg.what],
                markup=False,
            )
            self._show_preview()
            return
        text = {
            "apply": f"Applied: {clean_line(res.label, 200)}",
            "apply_all": f"Applied {res.count} fix{'es' if res.count != 1 else ''}.",
            "undo": f"Undone: {clean_line(res.label, 200)}",
            "redo": f"Redone: {clean_line(res.label, 200)}",
        }[msg.what]
        self.notify(text, markup=False)
        self._hold_workers = True
        if msg.derived is not None:
            self._show_state(msg.derived)
        if self.repair_open:
            self._refresh_fixes()
            if msg.what == "apply":
                self._select_after(msg.old_fixes, msg.at)
        self._ask_promise()
        self.timings["step_ui"] = time.perf_counter() - t0
        self.timings["step_worker"] = msg.seconds
        self.timings["step_worker_cpu"] = msg.cpu
        self.call_after_refresh(self._step_drawn)

    def _step_drawn(self) -> None:
        self.timings["step_total"] = time.perf_counter() - self._step_started
        self.timings["steps"] = self.timings.get("steps", 0) + 1
        self._hold_workers = False
        if self.repair_open and not self.busy:
            self._show_preview()
            self._ask_promise()

    def _select_after(self, old: list[Fix], at: int) -> None:
        """After `old[at]` was applied: select the first fix after it (in the old order)
        that is still in the plan (the same fix, or one holding a finding of it) and changes
        something. The plans before and after agree up to the step's fixes: the search
        starts there."""
        lines = self.lines
        of = lines.of_finding if lines is not None else {}
        target = None
        for f in old[at + 1 :]:
            if lines is not None and f.findings and all(of.get(id(x)) is f for x in f.findings):
                hit: int | None = lines.index(f)  # kept by the plan after the step
            else:
                keys = {fd.key for fd in f.findings if fd.key}
                start = max(0, min(at, len(self.fixes)) - 8)
                hit = next(
                    (
                        j
                        for j in range(start, len(self.fixes))
                        if any(fd.key in keys for fd in self.fixes[j].findings)
                    ),
                    None,
                )
            if hit is not None and self.fixes[hit].actionable:
                target = hit
                break
        if target is None:
            target = self._next_fix(0)
        if self.fixes:
            self._select_fix(target)

    def action_skip_fix(self) -> None:
        if self._deferred("skip_fix"):
            return
        fix = self._selected_fix()
        if fix is None:
            return
        at = self.fixes.index(fix)
        now = self.bench.skip(fix)
        self.notify("Skipped." if now else "Not skipped any more.", markup=False)
        self._replan(keep=at, then=self._next_fix(at + 1) if now else None)

    def action_cycle_fix(self) -> None:
        if self._deferred("cycle_fix"):
            return
        fix = self._selected_fix()
        if fix is None:
            return
        if len(fix.actions) < 2:
            self.notify(f"{fix.code} has no alternative.", markup=False)
            return
        new = self.bench.cycle(fix)
        self.notify(f"Action: {new}", markup=False)
        self._replan(keep=self.fixes.index(fix))

    def _replan(self, keep: int, then: int | None = None) -> None:
        """A choice changed (skip, alternative): the plan is made again in the step worker
        (the analysis stays); the list keeps its place."""
        self.busy = "planning…"
        self._plan_worker(self.view, keep, then)

    @work(thread=True, exclusive=True, group="step", exit_on_error=False, description="plan")
    def _plan_worker(self, view: View, keep: int, then: int | None) -> None:
        with gc_paused(freeze=True):
            lines = fix_lines(list(self.bench.plan_of(view).fixes), self.lines)
        self.app.call_from_thread(self._replanned, lines, keep, then)

    def _replanned(self, lines: FixLines, keep: int, then: int | None) -> None:
        self.busy = None
        if self.derived is not None:
            self.derived.fixes, self.derived.lines = lines.fixes, lines
        self._refresh_fixes(keep=keep)
        if then is not None and self.fixes:
            self._select_fix(then)

    # threads: the conversation and its sidechain / subagent threads, one at a time
    def action_threads(self) -> None:
        if self._deferred("threads"):
            return
        d = self.derived
        if d is None:
            return
        if not d.threads:
            self.notify("This session has no sidechain or subagent threads.", markup=False)
            return
        rows = [("main conversation", *d.main), *d.threads]
        current = 0 if self.view is None else self.view + 1
        self.app.push_screen(ThreadScreen(rows, current), self._thread_chosen)

    def _thread_chosen(self, choice: int | None) -> None:
        if choice is None:
            return
        view: View = None if choice == 0 else choice - 1
        if view == self.view:
            return
        self.busy = "opening the thread…"
        self._view_worker(view)

    @work(thread=True, exclusive=True, group="step", exit_on_error=False, description="view")
    def _view_worker(self, view: View) -> None:
        with gc_paused(freeze=True):
            derived = snapshot(self.bench, view)
        self.post_message(ViewShown(view, derived))

    def on_view_shown(self, msg: ViewShown) -> None:
        if self._gone():
            return
        self.view = msg.view
        self.busy = None
        self._clear_search()
        tl = self.query_one(Timeline)
        tl.findings_only = False
        self._show_state(msg.derived, keep_row=msg.derived.first_problem or 0)
        tl.go_to_row(msg.derived.first_problem or 0)
        if self.repair_open:
            self._refresh_fixes(keep=self._next_fix(0))
        label = msg.derived.session.label if msg.view is not None else "main conversation"
        self.notify(f"Showing {clean_line(label, 80)}.", markup=False)

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(help_sections(), self.query_one(Timeline).legend()))

    # search (in a worker: it reads every row)
    def action_search(self) -> None:
        self.app.push_screen(SearchScreen(self.last_search), self._search_done)

    def _search_done(self, query: str | None) -> None:
        if not query:
            return
        self.last_search = query
        if self._keys_waiting or not self._ready("search"):
            self._wait(Waiting("search", query))  # (it runs on every row, in its turn)
            return
        if self.query_one(Timeline).state is None:
            return  # the session went away meanwhile
        self._search_waiting = query  # (the keys typed after it wait for its jump)
        self._run_search(query, jump=True)

    @property
    def _searches_queued(self) -> bool:
        return any(w.query is not None for w in self._queued)

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
        if msg.query == self._search_waiting and msg.jump:  # the queue's search: its turn
            self._search_waiting = None
            self._update_header()
            self._run_queued_soon()  # (after the jump below: this handler ends first)
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
        if self.search is None or tl.state is None:
            return
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
        self._focus(tl)
        self._update_search_bar()

    def action_next_match(self) -> None:
        if not self._no_search() and not self._deferred("next_match"):
            self._step_match(True)

    def action_prev_match(self) -> None:
        if not self._no_search() and not self._deferred("prev_match"):
            self._step_match(False)

    def _no_search(self) -> bool:
        """`]` / `[` without a search to step through, nor one waiting: says so."""
        if self.search is not None or self._search_waiting is not None or self._searches_queued:
            return False
        self.notify("No search yet: press / first.", markup=False)
        return True

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
        if self._deferred("export"):
            return
        derived = self.derived
        if derived is not None and derived.state is self.bench.session and derived.refusal:
            self._refused(derived.refusal)  # said now, not after the dialog's enter
            return
        src = self.bench.original.path
        out = default_output(src)  # (free names, both: a name typed that is taken is asked)
        self.app.push_screen(ExportScreen(out, numbered(default_report(out))), self._export_chosen)

    def _refused(self, why: str) -> None:
        self.notify(
            clean_line(f"Export refused: {why}; nothing was written", 400),
            markup=False,
            severity="error",
            timeout=8,
        )

    def _export_chosen(self, paths: tuple[str, str] | None) -> None:
        if paths is None:
            return
        out, rep = paths
        src = self.bench.original.path
        if same_file(out, src):
            try:
                locked = read_only(os.stat(src), src)
            except OSError:
                locked = False
            self.app.push_screen(
                ConfirmScreen(
                    f"Overwrite the input file {clean_line(os.path.basename(src), 60)}"
                    + (", which is read-only" if locked else "")
                    + "? A backup copy (.bak) is written first.",
                    yes="Overwrite",
                    no="Cancel",
                ),
                _on_yes(lambda: self._do_export(out, rep, in_place=True, force=locked)),
            )
            return
        self._check_source(out, rep)

    @work(thread=True, exclusive=True, group="export-check", exit_on_error=False)
    def _check_source(self, out: str, rep: str) -> None:
        """Has the input changed on disk since it was read? (stat first; its bytes only when
        the stat differs)."""
        why = source_changed(self.bench.original)
        self.app.call_from_thread(self._source_checked, out, rep, why)

    def _source_checked(self, out: str, rep: str, why: str | None) -> None:
        if why is not None:
            name = clean_line(os.path.basename(self.bench.original.path), 60)
            self.app.push_screen(
                ConfirmScreen(
                    f"{name} {why} since histview read it. The copy is made from the "
                    "version read then, not from the file as it is now (R reloads it). "
                    "Export anyway?",
                    yes="Export anyway",
                    no="Cancel",
                ),
                _on_yes(lambda: self._export_to_copy(out, rep)),
            )
            return
        self._export_to_copy(out, rep)

    def _export_to_copy(self, out: str, rep: str) -> None:
        existing = [p for p in (out, rep) if p and os.path.lexists(p)]
        if existing:
            names = ", ".join(clean_line(os.path.basename(p), 60) for p in existing)
            self.app.push_screen(
                ConfirmScreen(
                    f"{names} already exist{'s' if len(existing) == 1 else ''}. Overwrite?",
                    yes="Overwrite",
                    no="Cancel",
                ),
                _on_yes(lambda: self._do_export(out, rep, overwrite=True)),
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
        self.busy = "exporting…"
        self._export_worker(out, rep, in_place, overwrite, force, self.view)

    @work(thread=True, exclusive=True, group="step", exit_on_error=False, description="export")
    def _export_worker(
        self, out: str, rep: str, in_place: bool, overwrite: bool, force: bool, view: View
    ) -> None:
        wb = self.bench
        state = wb.session
        exact: tuple[Workbench, Derived] | None = None
        try:
            with gc_paused(freeze=True):
                try:
                    res = wb.export(out, rep, in_place=in_place, overwrite=overwrite, force=force)
                except InexactNumbers:
                    # a literal orjson changes would be written: the file read again keeping
                    # every literal, the steps made again on it, then written (nothing was)
                    self.app.call_from_thread(
                        setattr, self, "busy", "reading the file again, numbers exactly…"
                    )
                    wb = read_exactly(wb)
                    state = wb.session
                    exact = (wb, snapshot(wb, view))
                    self.app.call_from_thread(setattr, self, "busy", "exporting…")
                    res = wb.export(out, rep, in_place=in_place, overwrite=overwrite, force=force)
        except (ExportRefused, WriteFailed, OSError, InputError) as exc:
            self.post_message(ExportDone(state, None, str(exc), exact))
            return
        except Exception as exc:  # a bug must not take the app (and the fixes) down
            self.post_message(
                ExportDone(state, None, f"internal error: {type(exc).__name__}: {exc}", exact)
            )
            return
        self.post_message(ExportDone(state, res, None, exact))

    def on_export_done(self, msg: ExportDone) -> None:
        if self._gone():
            return
        self.busy = None
        if msg.exact is not None:
            self._use_exact(*msg.exact)
        if msg.result is None:
            self._refused(msg.error or "")
            return
        res = msg.result
        self.exported = msg.state
        text = f"Wrote {os.path.basename(res.output)}"
        if res.report:
            text += f" and {os.path.basename(res.report)}"
        if res.backup:
            text += f" (backup {os.path.basename(res.backup)})"
        if res.checked is not None:
            text += f"; check finds {_counts_text(res.checked.counts())} in it"
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
        self.notify(clean_line(text, 400), markup=False, timeout=8)
        self._update_header()

    def _read_exactly(self) -> None:
        """A preview or the promise would write a number literal other than as read: the
        file is read again keeping every literal (in the step worker's group: no step runs
        meanwhile); when a step runs, the next preview asks again. Once it failed for this
        workbench (the file changed on disk), the promise says why instead."""
        if self._gone() or self.busy or self.wb is None:
            return
        if self._exact_error is not None and self._exact_error[0] is self.wb:
            self._show_exact_error(self._exact_error[1])
            return
        self.busy = "reading the file again, numbers exactly…"
        self._exact_worker(self.wb, self.view)

    @work(thread=True, exclusive=True, group="step", exit_on_error=False, description="exact")
    def _exact_worker(self, wb: Workbench, view: View) -> None:
        try:
            with gc_paused(freeze=True):
                again = read_exactly(wb)
                derived = snapshot(again, view)
        except (ExportRefused, InputError) as exc:  # it changed on disk, or a step differs
            self.post_message(ExactRead(None, None, str(exc)))
            return
        except Exception as exc:
            self.post_message(ExactRead(None, None, f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(ExactRead(again, derived, None))

    def on_exact_read(self, msg: ExactRead) -> None:
        if self._gone():
            return
        self.busy = None
        if msg.workbench is None or msg.derived is None:
            error = msg.error or ""
            if self.wb is not None:
                self._exact_error = (self.wb, error)
            self.notify(
                clean_line(f"Could not read the file again exactly: {error}", 400),
                markup=False,
                severity="error",
                timeout=10,
            )
            self._show_exact_error(error)
            return
        self._use_exact(msg.workbench, msg.derived)

    def _show_exact_error(self, error: str) -> None:
        """The promise of the state on screen: an export would be refused, and why."""
        state = self.derived.state if self.derived is not None else None
        if state is None:
            return
        text = Content.assemble(
            ("Exported now: refused: ", "bold $text-error"), clean_line(error, 300)
        )
        self.promise = (state, text)
        if self.repair_open:
            self.query_one(RepairPane).show_promise(text)

    def _use_exact(self, wb: Workbench, derived: Derived) -> None:
        """From now on the workbench over the file read exactly (repair.reread): the same
        state, every number literal kept."""
        self.wb = wb
        self._previews.clear()
        self._preview_key = self._preview_next = None
        self.promise = None
        self._show_state(derived)
        self._show_detail()
        if self.repair_open:
            self._refresh_fixes()
            self._ask_promise()
        self.notify(
            "The file holds number literals orjson would change (a huge integer, 1e400, "
            "1.50…): it was read again keeping each as written, and the fixes applied were "
            "made again on it before writing.",
            markup=False,
            timeout=10,
        )

    # the promise: what `check` finds in an export of the state on screen (the bytes it
    # would write, read back), while the repair pane is open
    def _ask_promise(self) -> None:
        if not self.repair_open or self.wb is None or self.derived is None:
            return
        src = self.bench.original.source
        size = src.size if src is not None else 0
        if size > PROMISE_AUTO_BYTES:
            # the read-back parses the whole file again: on a large session it would hold
            # the interpreter for seconds after every step; the export does it instead
            self.query_one(RepairPane).show_promise(
                Content.assemble(
                    ("Exported now: ", "bold"),
                    (
                        f"what check finds is read back from the {size / 1e6:.0f} MB written "
                        "when you export (e)",
                        "dim",
                    ),
                )
            )
            return
        state = self.derived.state
        if self.promise is not None and self.promise[0] is state:
            self.query_one(RepairPane).show_promise(self.promise[1])
            return
        self.query_one(RepairPane).show_promise(
            Content.styled("Exported now: checking what it would write…", "italic dim")
        )
        if not self._hold_workers:
            self._promise_worker(state)

    @work(thread=True, exclusive=True, group="promise", exit_on_error=False, description="promise")
    def _promise_worker(self, state: Session) -> None:
        try:
            with gc_paused(freeze=True):
                checked = self.bench.read_back(state)
        except InexactNumbers:
            self.app.call_from_thread(self._read_exactly)
            return
        except (ExportRefused, InputError) as exc:
            self.post_message(PromiseReady(state, None, str(exc)))
            return
        except Exception as exc:
            self.post_message(PromiseReady(state, None, f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(PromiseReady(state, checked, None))

    def on_promise_ready(self, msg: PromiseReady) -> None:
        if self._gone():
            return
        if self.derived is None or msg.state is not self.derived.state:
            return  # a newer state is on screen; its promise is on its way
        if msg.checked is None:
            text = Content.assemble(
                ("Exported now: refused: ", "bold $text-error"),
                clean_line(msg.error or "", 300),
            )
        else:
            c = msg.checked.counts()
            text = Content.assemble(
                ("Exported now, check finds: ", "bold"),
                *_counts(c, True),
                ("  (the bytes it would write, read back)", "dim"),
            )
        self.promise = (msg.state, text)
        if self.repair_open:
            self.query_one(RepairPane).show_promise(text)

    # reload, close, quit: none of them loses applied fixes without asking
    def _confirm_loss(self, question: str, yes: str, then) -> None:
        """Run `then` at once, or after a yes when applied fixes are not exported."""
        if not self._unexported:
            then()
            return
        n = self.derived.applied if self.derived is not None else 0
        text = f"{n} applied fix{'es are' if n != 1 else ' is'} not exported. {question}"
        asking = [s for s in self.app.screen_stack if isinstance(s, ConfirmScreen)]
        if any(s.purpose == "loss" and s.question == text for s in asking):
            return  # already asking
        if asking and asking[-1] is self.app.screen and asking[-1].purpose == "loss":
            asking[-1].dismiss(False)  # another loss (reload, close): this one is asked instead
        self.app.push_screen(
            ConfirmScreen(
                text,
                yes=yes,
                no="Stay",
                purpose="loss",
            ),
            _on_yes(then),
        )

    def action_reload(self) -> None:
        if self._deferred("reload"):
            return
        self._confirm_loss("Reload the file and lose them?", "Reload", self._start_load)

    def action_close(self) -> None:
        if self.from_picker:
            self._confirm_loss("Close the session and lose them?", "Close", self._back_to_picker)
        else:
            self.ask_quit()

    def ask_quit(self) -> None:
        """q, ctrl+q, ctrl+c and the palette's Quit ask before losing fixes."""
        self._confirm_loss("Quit anyway?", "Quit", self.app.exit)

    def _back_to_picker(self) -> None:
        self._reset()
        self.dismiss()

    # command palette: the app asks the screen it was opened on
    def palette_commands(self) -> Iterator[SystemCommand]:
        for b in palette_bindings():
            keys = " / ".join(key_name(k) for k in b.key.split(","))
            help_text = f"{b.tooltip or b.description} ({keys})"
            yield SystemCommand(b.description, help_text, lambda a=b.action: self._palette_run(a))

    async def _palette_run(self, action: str) -> None:
        if self.load_error is not None and (action in NEEDS_ANALYSIS or action in NEEDS_ROWS):
            self.notify("No session is open.", markup=False)
            return
        if action in NEEDS_REPAIR_PANE and not self._pane_open_then():
            self.action_toggle_repair()
        await self.run_action(action)


def _keys_of(bindings: list, action: str) -> list[str]:
    """The keys bound to `action` ("G,end": G and end)."""
    return [k.strip() for b in declared(bindings) if b.action == action for k in b.key.split(",")]


def _on_yes(then: Callable[[], object]) -> Callable[[bool | None], None]:
    """A ConfirmScreen's callback: `then()` after a yes."""

    def answer(yes: bool | None) -> None:
        if yes:
            then()

    return answer


def _shares_finding(fix: Fix, row: Row) -> bool:
    ids = {id(f) for f in row.findings}
    return any(id(f) in ids for f in fix.findings)


def key_sections() -> list[tuple[str, list[Binding]]]:
    """Every key of a session, by where it works (the declarations themselves)."""
    return [
        ("Timeline", declared(Timeline.BINDINGS)),
        ("Session", declared(MainScreen.BINDINGS)),
        ("Everywhere", [*declared(APP_KEYS), PALETTE_KEY]),
    ]


def help_sections() -> list[tuple[str, list[tuple[str, str]]]]:
    """The help screen's key list: every Binding, by where it works, and two notes."""
    notes = [
        ("j / k", "also scroll the detail, diff and help; move in lists"),
        ("click", "select a row"),
    ]
    return [
        (title, help_rows(keys) + (notes if title == "Everywhere" else []))
        for title, keys in key_sections()
    ]


def readme_key_table() -> str:
    """The README's key table (Markdown, two keys a row), made from the same declarations;
    a test keeps the README equal to it."""
    rows = [row for _title, keys in key_sections() for row in help_rows(keys)]
    cells = [f"| `{k}` | {what} |" for k, what in rows]
    if len(cells) % 2:
        cells.append("| | |")
    lines = ["| key | action | key | action |", "|---|---|---|---|"]
    lines += [a + b[1:] for a, b in zip(cells[::2], cells[1::2], strict=True)]
    return "\n".join(lines) + "\n"


def palette_bindings() -> list[Binding]:
    """The palette's commands: the session screen's keys and the timeline's top/bottom."""
    extra = [b for b in declared(Timeline.BINDINGS) if b.action in ("top", "bottom")]
    return [b for b in declared(MainScreen.BINDINGS) + extra if b.action not in PALETTE_SKIP]


def _counts(c: dict[str, int], wide: bool, short: bool = False) -> list:
    """Header parts for severity counts: ● 2 errors  ▲ 1 warning  ○ 0 info."""
    e, w, i = c.get("error", 0), c.get("warning", 0), c.get("info", 0)
    sep = " " if short else "  "
    return [
        (
            f"{' ' if short else ''}● {e}" + (f" error{'s' if e != 1 else ''}" if wide else ""),
            "bold $text-error" if e else "dim",
        ),
        sep,
        (
            f"▲ {w}" + (f" warning{'s' if w != 1 else ''}" if wide else ""),
            "bold $text-warning" if w else "dim",
        ),
        sep,
        (f"○ {i}" + (" info" if wide else ""), "$text-primary" if i else "dim"),
    ]


def _counts_text(c: dict[str, int]) -> str:
    e, w, i = c.get("error", 0), c.get("warning", 0), c.get("info", 0)
    return f"{e} error{'s' if e != 1 else ''}, {w} warning{'s' if w != 1 else ''}, {i} info"


def _joined(items: list[tuple[str, str]]) -> list:
    parts: list = []
    for k, (sev, text) in enumerate(items):
        if k:
            parts.append((" · ", "dim"))
        parts.append((f"{SEV_MARK[sev]} ", SEV_STYLE[sev]))
        parts.append(text)
    return parts


def message_count(stored: int, sent: int | None, short: bool = False) -> str:
    """The header's count: the messages of the file; where the target receives another
    number (a client splits, merges or leaves out messages), also that one, the number
    `histview check` prints ("6 msgs · 11 sent"; `short`: "11 sent")."""
    text = f"{stored} msgs"
    if sent is None or sent == stored:
        return text
    return f"{sent} sent" if short else f"{text} · {sent} sent"


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
        same = src.same_bytes_as(path)
    except OSError:
        return "cannot be read"
    return None if same else "changed on disk"
