"""What the screen shows for one state of the workbench, built off the UI thread.

A worker (load, a repair step, a thread switch) builds a `Derived` from the workbench and
posts it; the UI thread only puts it on screen, and never asks the workbench anything that
grows with the session while a worker may be changing it. After a step, the rows and the
lanes are made from those of the state before it: only the messages it changed (and, for
the lanes, the calls and results whose pairing changed) are drawn again; where messages
came or went, the rows and lanes after them are moved (copies at their new positions).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from repair.analysis import Analysis, analyze, made_whole
from repair.incremental import Change, Shift, changes
from repair.model import Finding, Session
from repair.pairing import Pairing
from repair.plan import Fix
from repair.workbench import StepResult, View, Workbench

from .fix_lines import FixLines, fix_lines
from .lanes import LaneLayout, layout, relayout
from .rows import RowTable, lazy_rows, refound, update_rows, with_findings
from .summary import problems


@dataclass
class Derived:
    """One analysed state of one conversation, ready to draw."""

    session: Session
    base: RowTable  # the rows without findings (reused by the next step when it can)
    table: RowTable
    lanes: LaneLayout | None  # None: a first look (`first_look`), the lanes to come
    by_message: dict[int, list[Finding]]
    problems: list[tuple[str, str]]
    first_problem: int | None  # the row the first screen opens on
    numbers: list[int | None]  # each message's messages.N as the target receives it
    counts: dict[str, int]  # this conversation's findings per severity
    pairing: Pairing | None = None
    view: View = None
    # the whole session: findings over every conversation, the threads' names and counts
    total: dict[str, int] = field(default_factory=dict)
    threads: list[tuple[str, int, dict[str, int]]] = field(default_factory=list)
    main: tuple[int, dict[str, int]] = (0, {})  # the main conversation's messages, counts
    fixes: list[Fix] = field(default_factory=list)  # the plan of this conversation
    lines: FixLines | None = None  # the fix list (of `fixes`)
    applied: int = 0  # fixes applied so far, every conversation
    dirty: bool = False  # something applied (unexported unless the app exported it)
    state: Session | None = None  # the workbench's session this was built from
    index_width: int = 1  # the number column's width: the largest messages.N's digits
    incremental: bool = False  # rows and lanes made from the state before (a step)
    sent: int = 0  # the messages the target receives (`check`'s count: analysis.sent)
    refusal: str | None = None  # why an export of this state is refused whatever the paths
    findings: list[Finding] = field(default_factory=list)  # marked on `table`

    @property
    def whole(self) -> bool:
        """Not a first look: the lanes, the plan and the whole pairing are there."""
        return self.lanes is not None


def derive(
    session: Session,
    analysis: Analysis,
    table: RowTable | None = None,
    *,
    reuse: Derived | None = None,
    changed: Change | None = None,
    whole: bool = True,
) -> Derived:
    """Rows, lanes and texts for a conversation. `table`: rows already built (at load);
    `reuse`: the state shown before a step, whose rows and lanes are kept where the
    step changed nothing (when the conversation has as many messages); `changed`: the
    positions the step changed from `reuse` (found by comparing when not given).
    `whole=False`: a first look (`first_look`), without the lanes; the pairing drawn is the
    one rules speak of, not the whole one (which this does not build)."""
    if table is not None or reuse is None or reuse.lanes is None:
        changed = None
    elif changed is None or len(reuse.session.messages) != len(session.messages):
        changed = changes(reuse.session.messages, session.messages)
    lanes: LaneLayout | None = None
    if changed is not None and reuse is not None and reuse.lanes is not None:
        base = update_rows(reuse.base, session, changed)
        marked = None
        if not isinstance(changed, Shift):
            marked = refound(reuse.table, reuse.findings, base, analysis, changed)
        if marked is None:
            marked = with_findings(base, analysis)
        lanes = relayout(reuse.lanes, analysis.pairing, marked, changed)
    else:
        base = table if table is not None else lazy_rows(session)
        marked = with_findings(base, analysis)
        if whole:
            lanes = layout(analysis.pairing, marked)
    return Derived(
        session,
        base,
        marked,
        lanes,
        analysis.by_message(),
        problems(session, analysis),
        marked.first_problem(),
        analysis.numbers,
        analysis.counts(),
        analysis.pairing if whole else analysis.pairing.checked,
        incremental=changed is not None,
        index_width=len(str(max((k for k in analysis.numbers if k is not None), default=0))),
        sent=analysis.sent,
        findings=analysis.findings,
    )


def snapshot(
    wb: Workbench,
    view: View,
    *,
    table: RowTable | None = None,
    reuse: Derived | None = None,
    changed: Change | None = None,
) -> Derived:
    """Everything the screen needs about the workbench now, for conversation `view`. Runs in
    a worker: it may analyse and plan. `reuse`: the state shown before a step (of the same
    conversation), `changed` what the step changed from it (`step_changes`)."""
    session, analysis = wb.view(view)
    derived = derive(session, analysis, table, reuse=reuse, changed=changed)
    derived.view = view
    _count(
        derived,
        wb.session,
        wb.analysis,
        [wb.analysis_of(k) for k in range(len(wb.session.threads))],
    )
    derived.fixes = list(wb.plan_of(view).fixes)
    derived.lines = fix_lines(derived.fixes, reuse.lines if reuse is not None else None)
    derived.applied = len(wb.applied) + sum(len(f) for f in wb.thread_applied.values())
    derived.dirty = wb.dirty
    derived.state = wb.session
    derived.refusal = wb.export_refusal()
    return derived


def first_look(session: Session, table: RowTable) -> tuple[Derived, dict[View, Analysis]]:
    """What the screen shows of a session just read, from `check`'s analysis of each of its
    conversations (lean: the usual pairs not built, a client's request counted): the
    findings on the rows, the counts, the summary line, the first problem; not the lanes,
    the plan, the names and links of the usual pairs (`whole=False`). With the analyses:
    made whole (`analysis.made_whole`) they are a workbench's, whose `snapshot` is the
    rest."""
    analyses: dict[View, Analysis] = {None: analyze(session)}
    for k, thread in enumerate(session.threads):
        analyses[k] = analyze(thread, session.target)
    derived = derive(session, analyses[None], table, whole=False)
    derived.state = session
    threads = [analyses[k] for k in range(len(session.threads))]
    _count(derived, session, analyses[None], threads)
    return derived, analyses


def workbench_of(session: Session, analyses: dict[View, Analysis]) -> Workbench:
    """The workbench of a first look (`first_look`'s analyses, made whole)."""
    conv = session.threads
    whole = {v: made_whole(a, session if v is None else conv[v]) for v, a in analyses.items()}
    return Workbench(session, analyses=whole)


def _count(derived: Derived, session: Session, main: Analysis, threads: list[Analysis]) -> None:
    """The counts of the whole session on `derived`: its threads', the main one's, all."""
    derived.main = (len(session.messages), main.counts())
    derived.threads = [
        (t.label or f"thread {k}", len(t.messages), threads[k].counts())
        for k, t in enumerate(session.threads)
    ]
    total = dict(main.counts())
    for _label, _n, counts in derived.threads:
        for sev, n in counts.items():
            total[sev] += n
    derived.total = total


def step_changes(shown: Derived, result: StepResult) -> frozenset[int] | None:
    """The positions `result`'s step changed in the main conversation shown as `shown`
    (None: not known; `derive` compares the message lists then)."""
    before = result.step.after if result.undone else result.step.before
    if shown.view is not None or shown.state is not before:
        return None
    return result.changed.get(None, frozenset())
