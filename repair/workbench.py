"""A repair session: the current state, the plan, choices, undo/redo and export.

The CLI and the TUI both drive this; it holds no UI. Every step keeps the whole message
list of the state before it (a list of references, cheap), so undo is exact.

A session's extra threads (Claude Code sidechains and subagent files) are conversations of
their own: `view(k)` is thread k (None: the main conversation) with its analysis, and a fix
of a thread is applied to that thread. Each step answers with a `StepResult` naming the
message positions it changed in each conversation, so a caller redraws only those.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any

from . import codes
from .analysis import Analysis, analyze, made_whole
from .errors import ExportRefused
from .files import Staging, Watch, as_read, backup_path, plan_paths
from .formats.base import check_numbers
from .incremental import changed_positions, changes, prepare, reanalyze
from .model import Message, Session
from .plan import Choices, Fix, Plan, apply_fixes, make_plan, settle
from .preview import Preview, describe, preview
from .readback import ReadBack, read_back
from .replan import replan
from .report import build_report, encode_report
from .sanitize import clean_line
from .threads import (
    ThreadPlan,
    ThreadStep,
    fix_threads,
    own_file,
    plan_thread_writes,
    thread_key,
)

View = int | None  # which conversation: None the main one, k the session's thread k
_KEPT = 4  # states whose analysis and plan are kept


@dataclass(frozen=True, slots=True)
class Analysed:
    """The analysis of a state's messages: whole (`analyze(..., whole=True)`), or lean (as
    `check` makes it: apply_all's last round, made whole when `Workbench.analysis` asks; an
    export reads its findings as they are)."""

    messages: list[Message]
    analysis: Analysis
    whole: bool


@dataclass
class Step:
    before: Session
    after: Session
    fixes: list[Fix]
    label: str
    threads: list[ThreadStep] = field(default_factory=list)  # fixes of the extra threads
    # made by apply_all: the choices then and whether the threads were fixed too (what
    # repair.reread needs to make the step again on the file read exactly)
    settled: tuple[Choices, bool] | None = None


@dataclass
class StepResult:
    """What one step (apply, apply all, undo, redo) changed: per conversation it touched,
    the positions in its new message list that are new or changed (None: the list was
    rebuilt, e.g. messages were inserted or dropped). The state itself is `Workbench.view`."""

    step: Step
    undone: bool
    changed: dict[View, frozenset[int] | None]

    @property
    def label(self) -> str:
        return self.step.label

    @property
    def count(self) -> int:
        """Fixes the step holds (in the main conversation and in threads)."""
        return len(self.step.fixes) + sum(len(ts.fixes) for ts in self.step.threads)


@dataclass
class ExportResult:
    output: str
    report: str | None
    backup: str | None
    remaining_errors: int
    # In place: the input was written to between the last check and the rename; what it
    # held then is kept in `late_copy` (the repaired file does not have it), or could not be
    # kept: `late_error` says why.
    late_copy: str | None = None
    late_error: str | None = None
    # subagent files written: (label, path, backup); those written to while being replaced
    threads: list[tuple[str, str, str | None]] = field(default_factory=list)
    thread_late: list[str] = field(default_factory=list)
    # what `check` finds in the files written (read back before they were written)
    checked: ReadBack = field(kw_only=True)


class Workbench:
    def __init__(
        self,
        session: Session,
        choices: Choices | None = None,
        analyses: dict[View, Analysis] | None = None,
    ) -> None:
        """`analyses`: of the session's conversations (None: the main one, k: thread k),
        made whole (`analyze(..., whole=True)`, `analysis.made_whole`) by the caller."""
        self.original = session
        self.session = session
        self.choices = choices or Choices()
        self.done: list[Step] = []
        self.undone: list[Step] = []
        # the analyses of the last few states, the latest first (by their message list): an
        # undo or a redo goes back to a state analysed already
        self._analyses: list[Analysed] = []
        # the plans of the last few states, the latest first (by message list and choices)
        self._plans: list[tuple[list[Message], int, Plan]] = []
        self._choice_version = 0
        self._original_analysis: Analysis | None = None
        # thread index -> (thread, its analysis) and (thread, choice version, plan)
        self._thread_analysis: dict[int, tuple[Session, Analysis]] = {}
        self._thread_plan: dict[int, tuple[Session, int, Plan]] = {}
        self._read_back: tuple[Session, ReadBack] | None = None
        self._bytes: list[tuple[Session, bytes]] = []
        for view, given in (analyses or {}).items():
            if view is None:
                self._remember(Analysed(session.messages, given, whole=True))
            else:
                self._thread_analysis[view] = (session.threads[view], given)

    # state
    @property
    def analysis(self) -> Analysis:
        # keyed by the message list: a step that changes only a thread keeps it
        msgs = self.session.messages
        got = self._analysed(msgs)
        if got is not None and got.whole:
            if got is not self._analyses[0]:
                self._remember(got)
            return got.analysis
        if got is not None:  # apply_all's lean analysis: made whole
            analysis = made_whole(got.analysis, self.session)
        else:
            last = next((a for a in self._analyses if a.whole), None)
            made = None
            if last is not None:
                # from the state analysed last (the one before this step): what changed
                prev = last.messages
                made = reanalyze(last.analysis, prev, self.session, changes(prev, msgs))
            analysis = made if made is not None else analyze(self.session, whole=True)
        self._remember(Analysed(msgs, analysis, whole=True))
        return analysis

    def _analysed(self, msgs: list[Message]) -> Analysed | None:
        """The analysis kept of the state with these messages, if any."""
        return next((a for a in self._analyses if a.messages is msgs), None)

    def _remember(self, got: Analysed) -> None:
        """Keep `got` first; a lean analysis does not take the place of a whole one."""
        old = self._analysed(got.messages)
        if old is not None and old.whole and not got.whole:
            got = old
        self._analyses = [got, *(a for a in self._analyses if a.messages is not got.messages)]
        del self._analyses[_KEPT:]

    def _checked(self) -> Analysis:
        """The current state's findings: its analysis kept, lean where apply_all left it so
        (not made whole for an export), else `analysis`."""
        got = self._analysed(self.session.messages)
        return self.analysis if got is None else got.analysis

    def prepare_steps(self) -> None:
        """Index the current analysis for the next step's increment now
        (`incremental.prepare`; else that step does it): for a caller with time to spare,
        as the TUI's load worker once the analysis is on screen."""
        prepare(self.analysis)

    def conversation(self, view: View = None) -> Session:
        """The main conversation (None) or thread `view`, as it is now."""
        return self.session if view is None else self.session.threads[view]

    def analysis_of(self, view: View = None) -> Analysis:
        if view is None:
            return self.analysis
        thread = self.session.threads[view]
        got = self._thread_analysis.get(view)
        if got is None or got[0] is not thread:
            got = (thread, analyze(thread, self.session.target, whole=True))
            self._thread_analysis[view] = got
        return got[1]

    def plan_of(self, view: View = None) -> Plan:
        if view is None:
            return self.plan
        thread = self.session.threads[view]
        got = self._thread_plan.get(view)
        if got is None or got[0] is not thread or got[1] != self._choice_version:
            plan = make_plan(thread, self.analysis_of(view), self.choices)
            got = self._thread_plan[view] = (thread, self._choice_version, plan)
        return got[2]

    def view(self, view: View = None) -> tuple[Session, Analysis]:
        return self.conversation(view), self.analysis_of(view)

    def counts(self) -> dict[str, int]:
        """Findings per severity over the main conversation and every thread."""
        total = dict(self.analysis.counts())
        for k in range(len(self.session.threads)):
            for sev, n in self.analysis_of(k).counts().items():
                total[sev] += n
        return total

    @property
    def original_analysis(self) -> Analysis:
        if self._original_analysis is None:
            self._original_analysis = (
                self.analysis if self.session is self.original else analyze(self.original)
            )
        return self._original_analysis

    @property
    def plan(self) -> Plan:
        msgs, version = self.session.messages, self._choice_version
        got = next((p for p in self._plans if p[0] is msgs and p[1] == version), None)
        if got is None:
            got = (
                msgs,
                version,
                self._replanned() or make_plan(self.session, self.analysis, self.choices),
            )
        if not self._plans or self._plans[0] is not got:
            self._plans = [got, *(p for p in self._plans if p is not got)][:_KEPT]
        return got[2]

    def _replanned(self) -> Plan | None:
        """The plan of the current state from the latest plan kept with these choices (of
        the state before a step, as its analysis is: `replan`), where it can be."""
        version = self._choice_version
        last = next((p for p in self._plans if p[1] == version), None)
        if last is None:
            return None
        return replan(last[2], last[0], self.session, self.analysis, self.choices)

    @property
    def dirty(self) -> bool:
        return self.session is not self.original and bool(self.done)

    @property
    def applied(self) -> list[Fix]:
        """The fixes applied to the main conversation."""
        return [f for step in self.done for f in step.fixes]

    @property
    def thread_applied(self) -> dict[int, list[Fix]]:
        """Thread index -> the fixes applied to that thread (`apply_all(threads=True)`)."""
        out: dict[int, list[Fix]] = {}
        for step in self.done:
            for ts in step.threads:
                out.setdefault(ts.index, []).extend(ts.fixes)
        return out

    @property
    def changed(self) -> bool:
        """Something was applied, to the main conversation or to a thread."""
        return any(step.fixes or step.threads for step in self.done)

    # choices
    def cycle(self, fix: Fix) -> str:
        """Switch the fix to its next action; returns the new action."""
        acts = fix.actions
        nxt = acts[(acts.index(fix.action) + 1) % len(acts)] if fix.action in acts else acts[0]
        for f in fix.findings:
            self.choices.by_key[f.key] = nxt
        self._choice_version += 1
        return nxt

    def skip(self, fix: Fix) -> bool:
        """Toggle skipping the fix; returns True when it is now skipped."""
        keys = {f.key for f in fix.findings}
        if keys & self.choices.skipped:
            self.choices.skipped -= keys
            now = False
        else:
            self.choices.skipped |= keys
            now = True
        self._choice_version += 1
        return now

    # steps
    def preview(self, fix: Fix, view: View = None, *, records: bool = True) -> Preview:
        """What applying `fix` now would do (the description) and write (the records;
        without `records`, only the description: it costs only the messages touched)."""
        before = self.conversation(view)
        numbers = self.analysis_of(view).numbers
        if fix.frozen is not None:  # left out of every plan: what it would do, and why not
            after, _ = apply_fixes(before, [dataclasses.replace(fix, frozen=None)])
            return Preview([*describe(before, after, numbers), cannot_write(fix.frozen)], [])
        after, _ = apply_fixes(before, [fix])
        if not records:
            return Preview(describe(before, after, numbers), [])
        try:
            shown = preview(before, after, numbers, bytes_of=self._bytes_of)
        except ExportRefused as exc:
            # the format's writer refuses what the fix makes: said where its records would
            # be, as `fix` says it
            return Preview([*describe(before, after, numbers), cannot_write(str(exc))], [])
        # the records shown hold every literal as read (an export asked already; a format
        # that names its changed records without one, Claude Code, did not): else
        # InexactNumbers
        if not any(s is after for s, _ in self._bytes):
            check_numbers(after)
        return shown

    def preview_applied(self, view: View = None) -> Preview:
        """What every applied step together writes: the session as read to the current
        state (the dry run's diff)."""
        if view is None:
            before, numbers = self.original, self.original_analysis.numbers
        else:
            before = self.original.threads[view]
            numbers = analyze(before, self.session.target).numbers
        after = self.conversation(view)
        return preview(
            before,
            after,
            numbers,
            bytes_of=self._bytes_of,
        )

    def _bytes_of(self, session: Session) -> bytes:
        """What `session` writes (its export's bytes), kept for the last few states: every
        preview of one state compares against the same bytes."""
        for s, data in self._bytes:
            if s is session:
                return data
        data = session.export().data
        self._bytes = [(session, data), *self._bytes[:3]]
        return data

    def apply(self, fix: Fix, view: View = None) -> StepResult | None:
        """Apply one fix of the main conversation (or of thread `view`); None when it
        changes nothing."""
        if not fix.actionable:
            return None
        before = self.conversation(view)
        after, done = apply_fixes(before, [fix])
        if not done:
            return None
        if view is None:
            return self._push(Step(self.session, after, done, fix.detail))
        threads = list(self.session.threads)
        threads[view] = after
        main = dataclasses.replace(self.session, threads=threads)
        return self._push(
            Step(self.session, main, [], fix.detail, [ThreadStep(view, before, after, done)])
        )

    def apply_all(self, *, threads: bool = False) -> StepResult | None:
        """Apply every fix until none is left; with `threads`, in every extra thread too
        (sidechains, subagent files: each fixed on its own). None when nothing applied."""
        settled = settle(self.session, self.choices, plan=self._first_plan())
        after, done = settled.session, settled.applied
        if self.session is self.original and self._original_analysis is None:
            self._original_analysis = settled.first
        steps: list[ThreadStep] = []
        if threads and self.session.threads:
            # the threads of the state settled: a re-link of the main chain writes the
            # file and loads it again, inline sidechains included
            new_threads, steps = fix_threads(after, self.choices)
            if steps:
                after = dataclasses.replace(after, threads=new_threads)
        n = len(done) + sum(len(ts.fixes) for ts in steps)
        if not n:
            return None
        result = self._push(
            Step(
                self.session,
                after,
                done,
                f"apply all ({n} fixes)",
                steps,
                settled=(self.choices.copy(), threads),
            )
        )
        # the last round analysed it already (lean, as `check` does: made whole when asked)
        self._remember(Analysed(after.messages, settled.last, whole=settled.last_whole))
        return result

    def _first_plan(self) -> Plan:
        """The plan apply_all starts from: the one at hand, or where nothing was analysed
        yet (`fix`), one made from a lean analysis, as `check` makes it (the calls and results
        checked; the rest paired when an increment or the whole pairing needs them)."""
        if self._analyses:
            return self.plan
        return make_plan(self.session, analyze(self.session), self.choices)

    def _push(self, step: Step) -> StepResult:
        self.done.append(step)
        self.undone.clear()
        self.session = step.after
        return _result(step, undone=False)

    def undo(self) -> StepResult | None:
        return self._step(self.done, self.undone, undone=True)

    def redo(self) -> StepResult | None:
        return self._step(self.undone, self.done, undone=False)

    def _step(self, take: list[Step], put: list[Step], *, undone: bool) -> StepResult | None:
        """The last step of `take` undone (or done again), moved to `put`."""
        if not take:
            return None
        step = take.pop()
        put.append(step)
        self.session = step.before if undone else step.after
        return _result(step, undone=undone)

    # output
    def read_back(self, state: Session | None = None) -> ReadBack:
        """What `check` will find in the files an export of the current state (or of
        `state`, a state of this workbench) writes: their bytes, loaded again
        (repair.readback). Raises ExportRefused when the format's writer refuses them. The
        dry run's and the TUI's promise, and what an export of that state reports; cached
        for the last state asked."""
        current = self.session if state is None else state
        got = self._read_back
        if got is not None and got[0] is current:
            return got[1]
        threads: dict[int, tuple[str, bytes | None]] = {}
        for k, thread in enumerate(current.threads):
            if own_file(current, thread) and self._thread_changed(k, current):
                threads[k] = (thread.path, thread.export().data)
        rb = read_back(
            current,
            self._bytes_of(current),
            threads,
            original=self.original,
            known=self._known(current),
        )
        self._read_back = (current, rb)
        return rb

    def _thread_changed(self, k: int, state: Session | None = None) -> bool:
        """Thread k is not the thread as read (a fix was applied to it)."""
        original = self.original.threads
        current = (state or self.session).threads
        return k >= len(original) or current[k] is not original[k]

    def _known(self, state: Session | None = None) -> dict[int, Analysis]:
        """Analyses already made, by id() of their session: what a read-back of bytes that
        did not change need not make again."""
        current = state or self.session
        known = {id(self.original): self.original_analysis}
        kept = self._analysed(current.messages)
        if kept is not None:
            known[id(current)] = kept.analysis
        for k, thread in enumerate(current.threads):
            got = self._thread_analysis.get(k)
            if got is not None and got[0] is thread:
                known[id(thread)] = got[1]
        return known

    def report(
        self,
        output: str | None,
        backup: str | None = None,
        dropped_records: list[dict[str, Any]] | None = None,
        thread_writes: ThreadPlan | None = None,
        checked: ReadBack | None = None,
    ) -> dict[str, Any]:
        """The report; `checked`: the written files read back (what remains in them)."""
        doc = build_report(
            file=self.original.path,
            output=output,
            format=self.original.format,
            target=self.session.target,
            fixes=self.applied,
            before=self.original_analysis,
            after=checked.main if checked is not None else self.analysis,
            backup=backup,
            dropped_records=dropped_records,
            after_session=checked.sessions[0] if checked is not None else self.session,
            choices=self.choices,
        )
        if self.session.threads:
            doc["threads"] = self._thread_reports(output, thread_writes, checked)
        return doc

    def _file_changed(self) -> bool:
        """The session's own file changes: its conversation or an inline sidechain was fixed."""
        if self.applied:
            return True
        return any(thread_key(self.session, k)[0] == "inline" for k in self.thread_applied)

    def _thread_reports(
        self, output: str | None, plan: ThreadPlan | None, checked: ReadBack | None = None
    ) -> list[dict[str, Any]]:
        """Per thread: what was fixed, what its file lost, what remains (the report's
        `threads`); an inline sidechain is written with the session, into `output`."""
        written = {w.index: w for w in plan.writes} if plan is not None else {}
        applied = self.thread_applied
        read = checked.analyses[1:] if checked is not None else []
        read_from = checked.sessions[1:] if checked is not None else []
        out = []
        for k, thread in enumerate(self.session.threads):
            before = self.original.threads[k] if k < len(self.original.threads) else thread
            w = written.get(k)
            inline = thread_key(self.session, k)[0] == "inline"
            doc = build_report(
                file=thread.path,
                output=w.path if w else (output if inline else None),
                format=thread.format,
                target=thread.target,
                fixes=applied.get(k, []),
                before=analyze(before),
                after=read[k] if k < len(read) else self.analysis_of(k),
                backup=w.backup if w else None,
                dropped_records=w.dropped_records if w else None,
                after_session=read_from[k] if k < len(read) else thread,
                choices=self.choices,
            )
            del doc["created"]
            out.append({"thread": thread.label, **doc})
        return out

    def export_refusal(self) -> str | None:
        """Why the current state cannot be written whatever the paths (`export` refuses
        with these words), None when it can: malformed records remain."""
        malformed = [f for f in self._checked().findings if f.code in codes.BLOCKS_EXPORT]
        if not malformed:
            return None
        return (
            f"{len(malformed)} malformed record(s) remain (first: "
            f"{malformed[0].place()}); drop them first: --strategy malformed=drop (in "
            "the TUI's repair plan, tab switches the fix to drop)"
        )

    def export(
        self,
        output: str | None = None,
        report: str | None = None,
        *,
        in_place: bool = False,
        overwrite: bool = False,
        force: bool = False,
    ) -> ExportResult:
        """Write the current state and its report: the one write path of the CLI and the TUI
        (docs/writing.md). All or nothing: every path is checked first, the report and the
        output (and, in place, the backup of the bytes that were read) are encoded and
        staged beside their targets, then renamed into place: backup, report, output.

        Refuses (ExportRefused, nothing written) while malformed records remain; when a path
        collides with another or with the input; over an existing file unless `overwrite`;
        in place when the input is read-only (unless `force`) or changed since it was read
        (checked again right before the rename). WriteFailed when the file system refuses or
        the report cannot be encoded; nothing is replaced then either."""
        refusal = self.export_refusal()
        if refusal is not None:
            raise ExportRefused(refusal)
        source = self.original.source
        paths = plan_paths(
            self.original.path,
            source,
            output,
            report,
            in_place=in_place,
            overwrite=overwrite,
            force=force,
        )
        threads = plan_thread_writes(
            self.original,
            self.session,
            paths.output,
            in_place=in_place,
            overwrite=overwrite,
            force=force,
        )
        if in_place and threads.writes and not self._file_changed():
            paths.backup = None  # only subagent files changed: the input stays as it is
        current = self.session
        written = current.export()
        # the one read-back: what check will find in these bytes (refused if they do not
        # load back as the repaired session), before anything is written; made once per
        # state (the TUI's promise already made it)
        got = self._read_back
        if got is not None and got[0] is current:
            checked = got[1].at(paths.output, {w.index: w.path for w in threads.writes})
        else:
            changed_threads = {
                w.index: (w.path, w.data if self._thread_changed(w.index) else None)
                for w in threads.writes
            }
            checked = read_back(
                current,
                written.body,
                changed_threads,
                path=paths.output,
                original=self.original,
                known=self._known(),
            )
        doc = self.report(paths.output, paths.backup, written.dropped_records, threads, checked)
        report_bytes = encode_report(doc)
        src_stat = source.stat if source is not None else None
        staging = Staging()
        watches: list[Watch] = []
        made: list[str] = []
        late = late_error = None
        thread_late: list[str] = []
        try:
            for folder in threads.folders:  # the output's subagents folder
                os.mkdir(folder)
                made.append(folder)
            if paths.backup:
                read = as_read(self.original.path, source)
                staging.add(paths.backup, read.data, like=src_stat, exact=True)
            for w in threads.writes:
                if w.backup:
                    read = as_read(w.path, w.source)
                    staging.add(w.backup, read.data, like=read.stat, exact=True)
            staging.add(
                paths.report,
                report_bytes,
                replace=paths.replace_report,
                **_mode_of(paths.report, paths.replace_report, src_stat),
            )
            for w in threads.writes:
                like = w.source.stat if w.source is not None else src_stat
                for path, data in w.extra:
                    staging.add(path, data, **_mode_of(path, False, like))
                staging.add(w.path, w.data, replace=w.replace, **_mode_of(w.path, w.replace, like))
            if paths.backup or not in_place:
                staging.add(
                    paths.output,
                    written.body,
                    replace=paths.replace_output,
                    **_mode_of(paths.output, paths.replace_output, src_stat),
                )
            if in_place and paths.backup:
                watches.append(Watch(as_read(self.original.path, source), paths.output))
                watches += [
                    Watch(as_read(w.path, w.source), w.path) for w in threads.writes if w.replace
                ]

            def check_inputs() -> None:
                for watch in watches:
                    watch.check()

            staging.commit(before_replace=check_inputs if watches else None)
            for watch in watches:
                if not watch.moved():
                    continue
                kept = backup_path(watch.real)
                copy: str | None = None
                error: str | None = None
                try:
                    watch.save_as(kept)
                except (ExportRefused, OSError) as exc:
                    error = str(exc)
                else:
                    copy = kept
                if watch.real == paths.output:
                    late, late_error = copy, error
                else:
                    thread_late.append(
                        f"{watch.real}: what it held then is kept in {copy}"
                        if copy
                        else f"{watch.real}: what it held then could not be kept ({error})"
                    )
        except BaseException:
            staging.discard()
            for folder in reversed(made):
                try:
                    os.rmdir(folder)
                except OSError:
                    pass
            raise
        finally:
            for watch in watches:
                watch.close()
        return ExportResult(
            paths.output,
            paths.report,
            paths.backup,
            checked.errors,
            late,
            late_error,
            threads=[(w.label, w.path, w.backup) for w in threads.writes],
            thread_late=thread_late,
            checked=checked,
        )


def cannot_write(why: str) -> str:
    """A preview's words for a fix that cannot be written (`Fix.frozen`, or the writer
    refused what it makes)."""
    return clean_line(f"This fix cannot be written: {why}.", 400)


def _result(step: Step, *, undone: bool) -> StepResult:
    old, new = (step.after, step.before) if undone else (step.before, step.after)
    changed: dict[View, frozenset[int] | None] = {}
    if old.messages is not new.messages:
        changed[None] = changed_positions(old.messages, new.messages)
    for ts in step.threads:
        a, b = (ts.after, ts.before) if undone else (ts.before, ts.after)
        changed[ts.index] = changed_positions(a.messages, b.messages)
    return StepResult(step, undone, changed)


def _mode_of(path: str, replace: bool, src_stat: os.stat_result | None) -> dict[str, Any]:
    """A replaced file keeps its mode and owner; a new one is narrowed to the input's."""
    if replace:
        return {"like": os.stat(path), "exact": True}
    return {"like": src_stat, "exact": False}
