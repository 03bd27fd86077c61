"""A repair session: the current state, the plan, choices, undo/redo and export.

The CLI and the TUI both drive this; it holds no UI. Every step keeps the whole message
list of the state before it (a list of references, cheap), so undo is exact.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import orjson

from .analysis import Analysis, analyze
from .errors import ExportRefused
from .files import backup_path, default_output, default_report, digest_of, write_atomic
from .model import Session
from .plan import Choices, Fix, Plan, apply_all, apply_fixes, make_plan
from .preview import Preview, preview
from .report import build_report


@dataclass
class Step:
    before: Session
    after: Session
    fixes: list[Fix]
    label: str


@dataclass
class ExportResult:
    output: str
    report: str | None
    backup: str | None
    remaining_errors: int


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
        return [f for step in self.done for f in step.fixes]

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

    def apply_all(self) -> int:
        after, done = apply_all(self.session, self.choices)
        if not done:
            return 0
        self._push(Step(self.session, after, done, f"apply all ({len(done)} fixes)"))
        return len(done)

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
    def report(self, output: str | None) -> dict:
        return build_report(
            file=self.original.path,
            output=output,
            format=self.original.format,
            target=self.session.target,
            fixes=self.applied,
            before=self.original_analysis,
            after=self.analysis,
        )

    def export(
        self,
        output: str | None = None,
        report: str | None = None,
        *,
        in_place: bool = False,
        overwrite: bool = False,
    ) -> ExportResult:
        """Write the current state. Refuses while malformed records remain, over an existing
        file unless `overwrite`, and in place when the input changed since it was read."""
        malformed = [f for f in self.analysis.findings if f.code == "malformed"]
        if malformed:
            raise ExportRefused(
                f"{len(malformed)} malformed record(s) remain (first: message "
                f"{malformed[0].message_index}); drop them explicitly (strategy malformed=drop)"
            )
        data = self.session.export_bytes()
        src = self.original.path
        backup = None
        if in_place:
            output = src
            if self.original.digest and digest_of(src) != self.original.digest:
                raise ExportRefused(f"{src} changed since it was read; load it again")
            backup = backup_path(src)
            with open(src, "rb") as fh:
                write_atomic(backup, fh.read())
        else:
            output = output or default_output(src)
            if os.path.abspath(output) == os.path.abspath(src):
                raise ExportRefused("the output is the input file; use in-place mode for that")
            if os.path.exists(output) and not overwrite:
                raise ExportRefused(f"{output} exists; refusing to overwrite it")
        report_path = report if report is not None else default_report(output)
        if report_path and os.path.exists(report_path) and not (overwrite or in_place):
            raise ExportRefused(f"{report_path} exists; refusing to overwrite it")
        write_atomic(output, data)
        if report_path:
            doc = self.report(output)
            doc["backup"] = backup
            write_atomic(report_path, orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
        return ExportResult(output, report_path or None, backup, len(self.analysis.errors))
