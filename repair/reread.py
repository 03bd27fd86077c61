"""The workbench made again over its file read exactly (every number literal kept).

The TUI reads a session as `check` and `fix` do, without the whole-file scan for number
literals orjson would change (`load_session(exact_numbers=False)`, docs/reading.md). What
writes it first shows that what it wrote reads exactly, else raises `InexactNumbers` before
anything is written (`formats.base.check_numbers`). `fix` then does everything again; the
TUI has the user's steps to keep: `read_exactly` reads the file again keeping every literal
and makes each step again on it. A step of one fix is matched to the fix of the new plan
with the same code, action and findings (code, message, block, tool id); an `apply_all`
settles again with the choices it was made with. Every state reached must have the shape
of the one it stands for (roles, block types, tool ids, per message), else nothing is
kept: `ExportRefused` says so (nothing was written).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from .analysis import Analysis, analyze
from .errors import ExportRefused
from .formats import load_session
from .model import Finding, Session
from .plan import Choices, Fix, make_plan
from .workbench import Step, View, Workbench

Signature = tuple[str, int | None, int | None, str | None]
Key = tuple[Hashable, ...]


def read_exactly(wb: Workbench) -> Workbench:
    """A workbench over `wb`'s file read again exactly, at the same state: the same steps
    done (and undone, to redo), the same choices. ExportRefused when the file changed on
    disk since it was read, or a step does not come out the same."""
    old = wb.original
    session = load_session(old.path, old.format, old.target, exact_numbers=True)
    if old.source is not None and (
        session.source is None or not old.source.same_state(session.source.stat)
    ):
        raise ExportRefused(
            f"{old.path}: it holds number literals that must be read again to be written "
            "exactly, and it changed on disk since histview read it; reload it (R) and "
            "apply the fixes again"
        )
    _same_shape(old, session)
    new = Workbench(session)
    keys: dict[Key, Key] = {}
    redo = list(reversed(wb.undone))
    for step in [*wb.done, *redo]:
        _again(new, step, keys)
    for _ in redo:
        new.undo()
    new.choices = _translated(wb.choices, keys)
    return new


def _again(new: Workbench, step: Step, keys: dict[Key, Key]) -> None:
    """Make `step` again on `new` (whose state has the shape of `step.before`)."""
    if step.settled is not None:
        choices, threads = step.settled
        _learn(keys, step.before, new, threads)
        saved = new.choices
        new.choices = _translated(choices, keys)
        try:
            new.apply_all(threads=threads)
        finally:
            new.choices = saved
    else:
        view: View = None
        fixes = step.fixes
        if step.threads:
            view, fixes = step.threads[0].index, step.threads[0].fixes
        if len(fixes) != 1:
            raise _differs(new)
        new.apply(_matching(new, fixes[0], view), view)
    _same_shape(step.after, new.session)


def _matching(new: Workbench, fix: Fix, view: View) -> Fix:
    """The fix of `new`'s plan for conversation `view` that is `fix` (made on a state of the
    same shape), with `fix`'s action."""
    analysis = new.analysis_of(view)
    found = _by_signature(analysis.findings)
    mine = [found.get(_signature(f)) for f in fix.findings]
    if any(f is None for f in mine):
        raise _differs(new)
    chosen = Choices(by_key={f.key: fix.action for f in mine if f is not None})
    want = sorted(_signature(f) for f in fix.findings)
    for candidate in make_plan(new.conversation(view), analysis, chosen).fixes:
        if (
            candidate.code == fix.code
            and candidate.action == fix.action
            and sorted(_signature(f) for f in candidate.findings) == want
        ):
            return candidate
    raise _differs(new)


def _learn(keys: dict[Key, Key], before: Session, new: Workbench, threads: bool) -> None:
    """Map the finding keys of the old state `before` to those of `new`'s state (findings
    paired by code and place): a choice made for one is made for the other."""
    pairs: list[tuple[Analysis, Analysis]] = [(analyze(before, whole=True), new.analysis)]
    if threads:
        for k, thread in enumerate(before.threads):
            pairs.append((analyze(thread, before.target, whole=True), new.analysis_of(k)))
    for was, now in pairs:
        found = _by_signature(now.findings)
        for f in was.findings:
            got = found.get(_signature(f))
            if got is not None:
                keys.setdefault(f.key, got.key)


def _translated(choices: Choices, keys: dict[Key, Key]) -> Choices:
    return Choices(
        {keys.get(k, k): a for k, a in choices.by_key.items()},
        dict(choices.by_code),
        {keys.get(k, k) for k in choices.skipped},
        choices.only,
    )


def _signature(f: Finding) -> Signature:
    return (f.code, f.position, f.block_index, f.tool_use_id)


def _by_signature(findings: list[Finding]) -> dict[Signature, Finding]:
    out: dict[Signature, Finding] = {}
    for f in findings:
        out.setdefault(_signature(f), f)
    return out


def _shape(session: Session) -> Any:
    return (
        [
            (
                m.role,
                m.hidden,
                m.malformed is None,
                tuple((b.type, b.tool_id, b.name) for b in m.blocks),
            )
            for m in session.messages
        ],
        [_shape(t) for t in session.threads],
    )


def _same_shape(was: Session, now: Session) -> None:
    if _shape(was) != _shape(now):
        raise _differs(now)


def _differs(session: Session | Workbench) -> ExportRefused:
    path = session.original.path if isinstance(session, Workbench) else session.path
    return ExportRefused(
        f"{path}: it holds number literals that must be read again to be written exactly, "
        "and the fixes applied could not be made again on it as they were; reload it (R) "
        "and apply them again"
    )
