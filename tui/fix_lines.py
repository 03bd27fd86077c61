"""The fix list of one plan, made in a worker: its lines, and each finding's fix (for the
cursor to follow a row). After a step it is made from the list before it: the plan after a
step keeps the fixes it did not change (repair.replan), so only the stretch between the
longest same ends is made again (with the lines of the messages it names: two lines of one
code on one message name their tool ids)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice, repeat
from operator import indexOf, is_, is_not

from textual.content import Content

from repair import codes
from repair.plan import Fix

from .detail import SEV_STYLE
from .rows import SEV_MARK, short_id

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
    return fix_lines(fixes).prompts


@dataclass
class FixLines:
    fixes: list[Fix]
    prompts: list[Content]
    # lines per (code, message position): more than one names the tool id
    counts: dict[tuple[str, int | None], int]
    top: int  # the largest messages.N named: the width of the number column
    of_finding: dict[int, Fix]  # id(finding) -> its fix (one that changes something first)

    def index(self, fix: Fix) -> int:
        """Where `fix` (this object: not one equal to it) is in the list."""
        return indexOf(map(is_, self.fixes, repeat(fix)), True)


def fix_lines(fixes: list[Fix], before: FixLines | None = None) -> FixLines:
    """The lines of `fixes`; `before`: the list shown before a step, whose lines are kept
    where the plan kept the fixes (the same objects) and the width did not change."""
    if before is None or not before.fixes or not fixes:
        return _whole(fixes)
    old = before.fixes
    parts = _stretches(old, fixes)
    if parts is None:
        return _whole(fixes)  # (a plan made again whole: a choice changed)
    counts = dict(before.counts)
    of_finding = dict(before.of_finding)
    top = before.top
    for i, j, u, t in parts:
        for f in old[i : i + u]:
            counts[(f.code, f.position)] -= 1
            for x in f.findings:
                if of_finding.get(id(x)) is f:
                    del of_finding[id(x)]
            if (f.message_index or 0) >= top:
                top = -1  # (counted again below)
        for f in fixes[j : j + t]:
            counts[(f.code, f.position)] = counts.get((f.code, f.position), 0) + 1
            _note(of_finding, f)
    if top < 0:
        top = max((f.message_index or 0 for f in fixes), default=0)
    else:
        top = max([top, *(f.message_index or 0 for _, j, _, t in parts for f in fixes[j : j + t])])
    width = len(str(top))
    if width != len(str(before.top)):
        return _whole(fixes)
    prompts: list[Content] = []
    done = 0  # old lines copied or replaced up to here
    redo: set[int] = set()  # new lines made again: the stretches and the lines of their
    for i, j, u, t in parts:  # messages (two lines of one code on one message: tool ids)
        prompts += before.prompts[done:i]
        prompts += [None] * t  # type: ignore[list-item]
        done = i + u
        at = {f.position for f in (*old[i : i + u], *fixes[j : j + t])}
        redo.update(range(j, j + t))
        k = j - 1
        while k >= 0 and fixes[k].position in at:
            redo.add(k)
            k -= 1
        k = j + t
        while k < len(fixes) and fixes[k].position in at:
            redo.add(k)
            k += 1
    prompts += before.prompts[done:]
    for k in redo:
        f = fixes[k]
        prompts[k] = fix_prompt(f, width, counts[(f.code, f.position)] > 1)
    return FixLines(fixes, prompts, counts, top, of_finding)


_WINDOW = 64  # how far apart in the lists a stretch's ends are looked for


def _stretches(old: list[Fix], new: list[Fix]) -> list[tuple[int, int, int, int]] | None:
    """Where `new` differs from `old`, which it keeps in order but for a few stretches:
    (i, j, u, t): old[i:i+u] replaced by new[j:j+t]; None where that is not found (a plan
    made again whole)."""
    parts = []
    i = j = 0
    while True:
        run = _same_run(
            map(is_not, islice(old, i, None), islice(new, j, None)), min(len(old) - i, len(new) - j)
        )
        i, j = i + run, j + run
        if i >= len(old) or j >= len(new):
            if len(old) - i > _WINDOW or len(new) - j > _WINDOW:
                return None
            if i < len(old) or j < len(new):
                parts.append((i, j, len(old) - i, len(new) - j))
            return parts
        ahead = {id(f): u for u, f in enumerate(islice(old, i, i + _WINDOW))}
        hit = next(
            (
                (ahead[id(f)], t)
                for t, f in enumerate(islice(new, j, j + _WINDOW))
                if id(f) in ahead
            ),
            None,
        )
        if hit is None:  # (no fix in common: the rest is one stretch when short)
            if len(old) - i > _WINDOW or len(new) - j > _WINDOW:
                return None
            hit = len(old) - i, len(new) - j
        u, t = hit
        parts.append((i, j, u, t))
        i, j = i + u, j + t


def _whole(fixes: list[Fix]) -> FixLines:
    top = max((f.message_index or 0 for f in fixes), default=0)
    width = len(str(top))
    counts: dict[tuple[str, int | None], int] = {}
    for f in fixes:
        k = (f.code, f.position)
        counts[k] = counts.get(k, 0) + 1
    of_finding: dict[int, Fix] = {}
    for f in fixes:
        _note(of_finding, f)
    prompts = [fix_prompt(f, width, counts[(f.code, f.position)] > 1) for f in fixes]
    return FixLines(fixes, prompts, counts, top, of_finding)


def _note(of_finding: dict[int, Fix], fix: Fix) -> None:
    for x in fix.findings:
        got = of_finding.get(id(x))
        if got is None or (fix.actionable and not got.actionable):
            of_finding[id(x)] = fix


def _same_run(differs: Iterator[bool], n: int) -> int:
    """How many pairs before the first that differs (`n`: none does)."""
    try:
        return indexOf(differs, True)
    except ValueError:
        return n
