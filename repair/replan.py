"""The plan after a step, from the plan before it: only the fixes the step may have changed
are made again.

A fix is made from its findings, the messages its builder reads (`Fix.reads`: the span of
their positions, its findings' included), the pairing at them and the numbers. The
analysis after a step (repair.incremental) keeps every finding it did not make again as
the same object: one whose message, and every message that shares a tool id or a turn
with it, the step left alone. So a fix of the plan before stays when each of its findings
is kept, no position in its span changed and its builder reads nothing the plan's other
fixes took (new ids: `Fix.reads` None); the rest of the findings (made again, or of a fix
that does not stay) are grouped and built as `make_plan` does, and a group of theirs that
a staying fix answered before takes that fix's findings too (the fix is made again). The
fixes come in `make_plan`'s order: by their first finding.

`replan` declines (the whole plan, as `make_plan` makes it) where the step inserted or
dropped messages (every position after it moved: the analysis makes every finding again),
the numbers moved (a fix's detail names messages by number), the target changed, or the
format holds messages no fix may change (`Adapter.frozen`: whether a fix is left out reads
the message after it). tests/engine/test_replan.py checks it equals `make_plan` after
random steps, apply-all, undo and redo.
"""

from __future__ import annotations

from bisect import bisect_left

from .analysis import Analysis, finding_order
from .incremental import changed_positions, refound
from .model import Message, Session
from .plan import Choices, Fix, GroupKey, Plan, Planner


def replan(
    before: Plan, old: list[Message], session: Session, analysis: Analysis, choices: Choices
) -> Plan | None:
    """The plan of `session`, analysed as `analysis`, with `choices`; `before`: the plan of
    the message list `old` with the same choices, `analysis` made from its analysis
    (`incremental.reanalyze`). None: this step needs the whole plan (`make_plan`); where
    that is found after the plan's reading of the state began, the whole plan."""
    prior = before.analysis
    if analysis.target != prior.target or len(before.groups) != len(before.fixes):
        return None
    changed = changed_positions(old, session.messages)
    if changed is None or analysis.numbers != prior.numbers:
        return None
    planner = Planner(session, analysis, choices)
    if planner.held is not None:
        return planner.whole()
    step = refound(prior.findings, analysis.findings)
    was = step.was
    gone = [f.position for f in step.gone]
    if None in gone:
        return planner.whole()
    # a fix stays unless its span holds a changed message or a finding made again
    spots = sorted(changed.union(k for k in gone if k is not None))
    groups = dict(before.groups)
    fixes: list[Fix] = []  # those that stay, in their order
    loose: set[int] = set()  # the findings of the fixes made again
    for fix in before.fixes:
        span = fix.reads
        if span is not None:
            k = bisect_left(spots, span[0])
            if k == len(spots) or spots[k] > span[1]:
                fixes.append(fix)
                continue
        _drop(groups, fix, loose)
    made = planner.group(f for f in analysis.findings if id(f) in loose or id(f) not in was)
    while taken := [groups[g] for g in made if g in groups]:
        # a group a staying fix answered: made again, with that fix's findings
        for fix in taken:
            _drop(groups, fix, loose)
            fixes.remove(fix)
        made = planner.group(f for f in analysis.findings if id(f) in loose or id(f) not in was)
    # each made fix where its first finding is among those of the fixes that stay (the
    # findings are in `finding_order`), built in the plan's order (new ids are taken in it)
    at = 0
    for gkey, findings in made.items():
        order = finding_order(findings[0])
        at = bisect_left(fixes, order, lo=at, key=_first)
        if at < len(fixes) and _first(fixes[at]) == order:
            return planner.whole()  # (two findings of one place and code: in the list's order)
        fix = planner.fix(gkey, findings)
        groups[gkey] = fix
        fixes.insert(at, fix)
        at += 1
    return Plan(fixes, analysis, groups)


def _first(fix: Fix) -> tuple[int, int, int, str]:
    return finding_order(fix.findings[0])


def _drop(groups: dict[GroupKey, Fix], fix: Fix, loose: set[int]) -> None:
    """`fix` is made again: its findings are grouped again with those the step made."""
    if fix.group is not None and groups.get(fix.group) is fix:
        del groups[fix.group]
    loose.update(map(id, fix.findings))
