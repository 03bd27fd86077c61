"""A repair session: the current state, the plan, choices, undo/redo and export.

The CLI and the TUI both drive this; it holds no UI. Every step keeps the whole message
list of the state before it (a list of references, cheap), so undo is exact.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field

from . import codes
from .analysis import Analysis, analyze
from .errors import ExportRefused
from .files import Staging, Watch, backup_path, plan_paths
from .model import Session
from .plan import Choices, Fix, Plan, apply_fixes, make_plan, settle
from .preview import Preview, preview
from .report import build_report, encode_report
from .threads import ThreadPlan, ThreadStep, fix_threads, plan_thread_writes, thread_key


@dataclass
class Step:
    before: Session
    after: Session
    fixes: list[Fix]
    label: str
    threads: list[ThreadStep] = field(default_factory=list)  # fixes of the extra threads


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
    # the output as read back from the bytes before they were renamed into place (its
    # subagent threads are the files beside it when it was read: re-read them from disk
    # after writing subagent files); None when the session's own file was not written
    read_back: Session | None = None


def read_back(data: bytes, format: str, path: str, target: str) -> Session:
    """The bytes an export is about to write, read as the format they are written in (no
    detection guard: a repair may leave a file too bare to recognise). ExportRefused when
    they do not read, so that nothing is written: the one read-back of every write."""
    from .errors import InputError
    from .formats import load_bytes

    try:
        session = load_bytes(data, path=path, format=format, target=target)
    except InputError as exc:
        at = f"{exc.where}: " if exc.where else ""
        raise ExportRefused(
            f"the repaired file would not read back as {format} ({at}{exc.message})"
        ) from None
    for thread in session.threads:
        thread.target = target
    return session


class Workbench:
    def __init__(self, session: Session, choices: Choices | None = None) -> None:
        self.original = session
        self.session = session
        self.choices = choices or Choices()
        self.done: list[Step] = []
        self.undone: list[Step] = []
        self._analysis: tuple[Session, Analysis] | None = None
        self._plan: tuple[Session, int, Plan] | None = None
        self._choice_version = 0
        self._original_analysis: Analysis | None = None

    # state
    @property
    def analysis(self) -> Analysis:
        if self._analysis is None or self._analysis[0] is not self.session:
            self._analysis = (self.session, analyze(self.session))
        return self._analysis[1]

    @property
    def original_analysis(self) -> Analysis:
        if self._original_analysis is None:
            self._original_analysis = (
                self.analysis if self.session is self.original else analyze(self.original)
            )
        return self._original_analysis

    @property
    def plan(self) -> Plan:
        if (
            self._plan is None
            or self._plan[0] is not self.session
            or self._plan[1] != self._choice_version
        ):
            self._plan = (
                self.session,
                self._choice_version,
                make_plan(self.session, self.analysis, self.choices),
            )
        return self._plan[2]

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
    def preview(self, fix: Fix) -> Preview:
        after, _ = apply_fixes(self.session, [fix])
        return preview(self.session, after)

    def apply(self, fix: Fix) -> bool:
        if not fix.actionable:
            return False
        after, done = apply_fixes(self.session, [fix])
        if not done:
            return False
        self._push(Step(self.session, after, done, fix.detail))
        return True

    def apply_all(self, *, threads: bool = False) -> int:
        """Apply every fix until none is left; with `threads`, in every extra thread too
        (sidechains, subagent files: each fixed on its own). Returns how many applied."""
        settled = settle(self.session, self.choices)
        after, done = settled.session, settled.applied
        if self.session is self.original and self._original_analysis is None:
            self._original_analysis = settled.first
        steps: list[ThreadStep] = []
        if threads and self.session.threads:
            new_threads, steps = fix_threads(self.session, self.choices)
            if steps:
                after = dataclasses.replace(after, threads=new_threads)
        n = len(done) + sum(len(ts.fixes) for ts in steps)
        if not n:
            return 0
        self._push(Step(self.session, after, done, f"apply all ({n} fixes)", steps))
        self._analysis = (after, settled.last)  # the last round analysed it already
        return n

    def _push(self, step: Step) -> None:
        self.done.append(step)
        self.undone.clear()
        self.session = step.after

    def undo(self) -> Step | None:
        if not self.done:
            return None
        step = self.done.pop()
        self.undone.append(step)
        self.session = step.before
        return step

    def redo(self) -> Step | None:
        if not self.undone:
            return None
        step = self.undone.pop()
        self.done.append(step)
        self.session = step.after
        return step

    # output
    def report(
        self,
        output: str | None,
        backup: str | None = None,
        dropped_records: list[dict] | None = None,
        thread_writes: ThreadPlan | None = None,
    ) -> dict:
        doc = build_report(
            file=self.original.path,
            output=output,
            format=self.original.format,
            target=self.session.target,
            fixes=self.applied,
            before=self.original_analysis,
            after=self.analysis,
            backup=backup,
            dropped_records=dropped_records,
        )
        if self.session.threads:
            doc["threads"] = self._thread_reports(output, thread_writes)
        return doc

    def _file_changed(self) -> bool:
        """The session's own file changes: its conversation or an inline sidechain was fixed."""
        if self.applied:
            return True
        return any(thread_key(self.session, k)[0] == "inline" for k in self.thread_applied)

    def _thread_reports(self, output: str | None, plan: ThreadPlan | None) -> list[dict]:
        """Per thread: what was fixed, what its file lost, what remains (the report's
        `threads`); an inline sidechain is written with the session, into `output`."""
        written = {w.index: w for w in plan.writes} if plan is not None else {}
        applied = self.thread_applied
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
                after=analyze(thread),
                backup=w.backup if w else None,
                dropped_records=w.dropped_records if w else None,
            )
            del doc["created"]
            out.append({"thread": thread.label, **doc})
        return out

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
        malformed = [f for f in self.analysis.findings if codes.get(f.code).blocks_export]
        if malformed:
            raise ExportRefused(
                f"{len(malformed)} malformed record(s) remain (first: "
                f"{malformed[0].place()}); drop them explicitly (strategy malformed=drop)"
            )
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
        written = self.session.export()
        again = None
        if paths.backup or not in_place:
            again = read_back(written.data, self.original.format, paths.output, self.session.target)
        for w in threads.writes:
            if w.format is not None:
                read_back(w.data, w.format, w.path, self.session.target)
        doc = self.report(paths.output, paths.backup, written.dropped_records, threads)
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
                staging.add(paths.backup, source.data, like=src_stat, exact=True)
            for w in threads.writes:
                if w.backup:
                    staging.add(w.backup, w.source.data, like=w.source.stat, exact=True)
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
                    written.data,
                    replace=paths.replace_output,
                    **_mode_of(paths.output, paths.replace_output, src_stat),
                )
            if in_place and paths.backup:
                watches.append(Watch(source, paths.output))
                watches += [Watch(w.source, w.path) for w in threads.writes if w.replace]
            staging.commit(
                before_replace=(lambda: [w.check() for w in watches]) if watches else None
            )
            for watch in watches:
                if not watch.moved():
                    continue
                copy = backup_path(watch.real)
                try:
                    watch.save_as(copy)
                except (ExportRefused, OSError) as exc:
                    copy, error = None, str(exc)
                else:
                    error = None
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
            len(self.analysis.errors),
            late,
            late_error,
            threads=[(w.label, w.path, w.backup) for w in threads.writes],
            thread_late=thread_late,
            read_back=again,
        )


def _mode_of(path: str, replace: bool, src_stat) -> dict:
    """A replaced file keeps its mode and owner; a new one is narrowed to the input's."""
    if replace:
        return {"like": os.stat(path), "exact": True}
    return {"like": src_stat, "exact": False}
