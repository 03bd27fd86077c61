"""Fix plans (docs/codes.md, Fixes): a fix per finding (grouped per turn where one change answers
several findings), each a list of primitive edits, with a default action and alternatives.

Fixes are computed against one state. `apply_fixes` applies every fix whose messages no
earlier fix of the same round touched; `apply_all` repeats rounds until nothing is left,
so fixes that interact (rename an id, then answer that call) settle in a few passes.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import codes
from .analysis import Analysis, analyze, id_problem, made_whole
from .codes import NONE, Group
from .edits import (
    DropBlock,
    DropIfEmpty,
    DropMessage,
    Edit,
    InsertBlock,
    InsertMessage,
    MergeMessages,
    MoveBlock,
    Patch,
    Relink,
    ReorderBlocks,
    SetId,
)
from .gcpause import gc_paused
from .jsonio import text_of
from .model import (
    SYNTHETIC_PREFIX,
    SYNTHETIC_RESULT_TEXT,
    TOOL_RESULT,
    TOOL_USE,
    Block,
    Finding,
    Message,
    Session,
    block_from_anthropic,
    content_text,
)
from .pairing import LeanPairing, Pairing, Result, Use
from .placeholders import is_placeholder

Built = tuple[list[Edit], frozenset[int], str]  # edits, message uids touched, detail
Builder = Callable[["_Ctx", list[Finding]], Built]
BUILDERS: dict[tuple[str, str], Builder] = {}
# fixes of one plan: (code, action, group, the finding's key when it forms no group)
GroupKey = tuple[str, str, tuple[Hashable, ...] | None, tuple[Hashable, ...] | None]


def builds(code: str, action: str) -> Callable[[Builder], Builder]:
    """Register a fix builder for `action` on findings of `code` (declared in repair.codes)."""

    def register(fn: Builder) -> Builder:
        assert action in codes.get(code).actions, (code, action)
        BUILDERS[(code, action)] = fn
        return fn

    return register


def actions_for(code: str, target: str) -> tuple[str, ...]:
    return codes.get(code).actions_for(target)


@dataclass
class Fix:
    code: str
    findings: list[Finding]
    action: str
    actions: tuple[str, ...]
    edits: list[Edit]
    touches: frozenset[int]
    detail: str
    skipped: bool = False
    # why no fix may make this change (the format's `Adapter.frozen`): left out, as a skip is
    frozen: str | None = None
    # the span of message positions its builder read (its findings' included), which a step
    # must leave alone for the fix to stay in the next plan (repair.replan); None: made again
    # after every step (a builder reading what the plan's other fixes took: new ids)
    reads: tuple[int, int] | None = field(default=None, compare=False, repr=False)
    group: GroupKey | None = field(default=None, compare=False, repr=False)  # `Planner.key`

    @property
    def finding(self) -> Finding:
        return self.findings[0]

    @property
    def key(self) -> tuple[Hashable, ...]:
        return self.findings[0].key

    @property
    def message_index(self) -> int | None:
        """The message as the provider numbers it (messages.N)."""
        return self.findings[0].message_index

    @property
    def position(self) -> int | None:
        """The message's index in Session.messages."""
        return self.findings[0].position

    @property
    def tool_use_id(self) -> str | None:
        return self.findings[0].tool_use_id

    @property
    def actionable(self) -> bool:
        return bool(self.edits) and not self.skipped and self.frozen is None


@dataclass
class Plan:
    fixes: list[Fix]
    analysis: Analysis
    # each fix by its group's key (`Planner.key`): what the next plan keeps (repair.replan)
    groups: dict[GroupKey, Fix] = field(default_factory=dict, compare=False, repr=False)

    @property
    def actionable(self) -> list[Fix]:
        return [f for f in self.fixes if f.actionable]


@dataclass
class Choices:
    """What the user chose: per finding key, per code (`--strategy`), skips, `--only`."""

    by_key: dict[tuple[Hashable, ...], str] = field(default_factory=dict)
    by_code: dict[str, str] = field(default_factory=dict)
    skipped: set[tuple[Hashable, ...]] = field(default_factory=set)
    only: set[str] | None = None

    def action(self, finding: Finding, actions: tuple[str, ...]) -> str:
        if self.only is not None and finding.code not in self.only:
            return NONE
        chosen = self.by_key.get(finding.key) or self.by_code.get(finding.code)
        return chosen if chosen in actions else actions[0]

    def copy(self) -> Choices:
        return Choices(dict(self.by_key), dict(self.by_code), set(self.skipped), self.only)


def make_plan(
    session: Session, analysis: Analysis | None = None, choices: Choices | None = None
) -> Plan:
    # (a lean analysis, as `check` makes it, will do too: the plan reads the calls and
    # results it checks, which every finding is at, and the messages' own blocks)
    analysis = analysis or analyze(session, whole=True)
    return Planner(session, analysis, choices or Choices()).whole()


# builders that read what the plan's fixes before them took (new ids): made again each time
_WIDE = {("duplicate-tool-use-id", "rename"), ("invalid-tool-id", "assign-id")}
_EVERYWHERE = (0, sys.maxsize)


class Planner:
    """The fixes of one state (its analysis, the choices): findings grouped (`key`, a fix
    answers a group) and each group's fix built, in the plan's order (`make_plan`, and
    `repair.replan` for the groups a step changed)."""

    def __init__(self, session: Session, analysis: Analysis, choices: Choices) -> None:
        self.analysis = analysis
        self.choices = choices
        self.ctx = _Ctx(session, analysis.pairing, analysis.target, analysis.numbers)
        self.held = session.adapter.frozen(session) if session.adapter is not None else None
        self.following = _Following(session.messages)

    def whole(self) -> Plan:
        """Every finding's fix."""
        plan = Plan([], self.analysis)
        for gkey, findings in self.group(self.analysis.findings).items():
            fix = self.fix(gkey, findings)
            plan.fixes.append(fix)
            plan.groups[gkey] = fix
        return plan

    def key(self, f: Finding) -> GroupKey:
        action = self.choices.action(f, actions_for(f.code, self.analysis.target))
        group = self.ctx.group_of(f)
        return (f.code, action, group, f.key if group is None else None)

    def group(self, findings: Iterable[Finding]) -> dict[GroupKey, list[Finding]]:
        """The findings by the fix that answers them, in the order of their first."""
        groups: dict[GroupKey, list[Finding]] = {}
        for f in findings:
            gkey = self.key(f)
            got = groups.get(gkey)
            if got is None:
                groups[gkey] = [f]
            else:
                got.append(f)
        return groups

    def fix(self, gkey: GroupKey, findings: list[Finding]) -> Fix:
        code, action = gkey[0], gkey[1]
        acts = actions_for(code, self.analysis.target)
        reads = self.ctx.msgs
        at = [f.position for f in findings if f.position is not None]
        reads.lo, reads.hi = (min(at), max(at)) if len(at) == len(findings) else _EVERYWHERE
        edits, touches, detail = self.ctx.build(code, action, findings)
        skipped = any(f.key in self.choices.skipped for f in findings)
        fix = Fix(code, findings, action, acts, edits, touches, detail, skipped, group=gkey)
        if (code, action) not in _WIDE:
            fix.reads = (reads.lo, reads.hi)
        if self.held is not None:
            uid = frozen_at(fix, self.held, self.following)
            if uid is not None:
                fix.frozen = self.held.why.get(uid, "")
        return fix


def apply_fixes(
    session: Session, fixes: Iterable[Fix], *, chain: bool = False
) -> tuple[Session, list[Fix]]:
    """Apply the fixes whose messages no earlier fix touched; return the new session and
    the fixes applied (the others wait for a fresh plan). `chain` (`settle`, where the
    numbers do not change with the blocks: `_chaining`): the fixes that wait are applied
    after them, a wave at a time, as the next rounds would apply them, while every fix
    applied and every one waiting is one the next round's plan would make again alike
    (`_chains`)."""
    adapter = session.adapter
    patch = (
        Patch(session.messages, merged=adapter.merged, kept=adapter.writes_merged_as_read)
        if adapter
        else Patch(session.messages)
    )
    applied: list[Fix] = []
    wave = list(fixes)
    while wave:
        touched: set[int] = set()
        waiting: list[Fix] = []
        for fix in wave:
            if not fix.actionable:
                continue
            if fix.touches & touched:
                waiting.append(fix)
                continue
            for edit in fix.edits:
                # what it removed is this application's (a fix kept across steps, or previewed
                # before, was applied to another state: `DropBlock` of a block gone since)
                edit.removed, edit.has_removed, edit.removed_bids = None, False, ()
                edit.apply(patch)
            touched |= fix.touches
            applied.append(fix)
        wave = waiting if chain and _chains(patch, applied, waiting) else []
    out = session.copy_with(patch.rebuild())
    if patch.file_edits:  # record edits: the adapter applies them to what `out` writes
        out = session.adapter.apply_file_edits(out, patch.file_edits)
    # the messages made, stamped as written: what the analysis finds is what `check` finds
    if session.adapter is not None:
        made = {uid for uid, w in patch.work.items() if w.changed}
        made.update(patch.created)
        base = session.messages
        for uid in patch.dropped:  # its neighbours are neighbours now
            k = patch.index.get(uid)
            if k is not None:
                made.update(m.uid for m in base[max(k - 1, 0) : k + 2])
        out = session.adapter.stamped(out, made)
    return out, applied


# Fixes the next round's plan makes again alike after a round of such fixes, none dropping
# or adding a message, where the numbers do not change with the blocks: keep-best of a
# duplicate result reads its call's results (a result answers one call: another call's
# copies dropped leave them as they were), the call's home and the messages' numbers, and
# drops, moves no block but the call's results and orders the home's results.
# tests/engine/test_chained_rounds.py holds `settle` with them to the rounds one by one.
_CHAINABLE = {("duplicate-tool-result", "keep-best")}
_CHAIN_EDITS = (DropBlock, ReorderBlocks, DropIfEmpty)


def _chainable(fix: Fix) -> bool:
    return (fix.code, fix.action) in _CHAINABLE and all(type(e) in _CHAIN_EDITS for e in fix.edits)


def _chains(patch: Patch, applied: list[Fix], waiting: list[Fix]) -> bool:
    """Whether the next round would apply `waiting` as planned now: every fix applied and
    waiting is chainable and no message came or went (the numbers as they were)."""
    return (
        bool(waiting)
        and not patch.dropped
        and not patch.inserted_after
        and not patch.file_edits
        and all(_chainable(f) for f in waiting)
        and all(_chainable(f) for f in applied)
    )


def _chaining(target: str) -> bool:
    """Whether a fix that drops or orders blocks, no message, leaves the numbers under
    `target` as they were: a wire of one entry per message, and a client (if any) that
    numbers the messages, not their blocks."""
    from . import clients, wire

    client = clients.get(target)
    return wire.wire_for(target).split is wire.WIRES["anthropic"].split and (
        client is None or client.numbers_by_message
    )


# A round's fixes that wait for a fix of the round applied in the same round, as the rounds
# after it would apply them (`_chains`; False: a round each, the long way)
CHAINED = True


def apply_all(
    session: Session,
    choices: Choices | None = None,
    max_rounds: int = 50,
    *,
    frozen: Frozen | None = None,
) -> tuple[Session, list[Fix]]:
    settled = settle(session, choices, max_rounds, frozen=frozen)
    return settled.session, settled.applied


# After a round that left fixes for the next, the state is analysed whole at once (False:
# lean first, as after any other round; the same plan either way: tests/engine/test_made_whole.py)
WHOLE_AT_ONCE = True


@dataclass
class Settled:
    """Rounds of plans applied until none is left: the result, the fixes, and the analyses
    of the first state and of the last (which callers need and need not compute again)."""

    session: Session
    applied: list[Fix]
    first: Analysis
    last: Analysis
    last_whole: bool = True  # False: `last` is a lean analysis (`analyze`, not whole)


def settle(
    session: Session,
    choices: Choices | None = None,
    max_rounds: int = 50,
    *,
    frozen: Frozen | None = None,
    plan: Plan | None = None,
) -> Settled:
    """`frozen`: what no fix may change (a thread's records that another conversation
    owns, repair.threads); a fix that would is left out. `plan`: the plan of `session`
    with `choices`, where the caller has it (the first round's: not made again).

    After a round whose incremental analysis declined (its edits spread over the whole
    session), the state is analysed as `check` does (`analyze`, lean), and planned (the
    whole pairing and request made) only where a finding may be fixed: the last round's
    analysis (`Settled.last`) is then a lean one (`made_whole` makes it whole). After a
    round that left fixes for the next (they touched a message a fix of the round
    touched: a turn's calls answered twice), it is analysed whole at once, as `made_whole`
    would make it (0.7 s instead of 1.1 s at 100k messages)."""
    with gc_paused():
        from .incremental import changes, reanalyze

        choices = choices or Choices()
        applied: list[Fix] = []
        first = None
        analysis = None
        ready = plan
        deferred = False  # the last round left fixes for the next (their messages touched)
        for _ in range(max_rounds):
            if first is not None and analysis is None:  # the increment declined
                if deferred and WHOLE_AT_ONCE:  # (more to fix: the whole analysis, cheaper)
                    analysis = analyze(session, whole=True)
                else:
                    analysis = analyze(session)
                    if not may_fix(analysis, choices):
                        return Settled(session, applied, first, analysis, last_whole=False)
                    analysis = made_whole(analysis, session)
            plan = ready if ready is not None else make_plan(session, analysis, choices)
            ready = None
            first = first or plan.analysis
            todo = plan.actionable
            if frozen:
                todo = [f for f in todo if not edits_frozen(session.messages, f, frozen)]
            if not todo:  # (a lean first analysis, or one followed lean: made whole when asked)
                lean = isinstance(plan.analysis.pairing, LeanPairing)
                return Settled(session, applied, first, plan.analysis, last_whole=not lean)
            chain = CHAINED and _chaining(plan.analysis.target)
            after, done = apply_fixes(session, todo, chain=chain)
            applied.extend(done)
            deferred = len(done) < len(todo)
            # the next round's analysis from this one's, where the round allows it
            analysis = reanalyze(
                plan.analysis, session.messages, after, changes(session.messages, after.messages)
            )
            session = after
        return Settled(session, applied, first or analyze(session), analysis or analyze(session))


def may_fix(analysis: Analysis, choices: Choices) -> bool:
    """Whether a plan of the analysed state may hold a fix to apply: a finding whose chosen
    action changes something and that is not skipped (a fix whose findings are all
    without an action or skipped changes nothing)."""
    target = analysis.target
    return any(
        f.key not in choices.skipped and choices.action(f, actions_for(f.code, target)) != NONE
        for f in analysis.findings
    )


@dataclass(frozen=True)
class Frozen:
    """What fixes must leave alone: the messages holding a record another conversation
    owns (by uid) and the blocks read from such a record (by bid), in a thread
    (repair.threads); or what the format declares no fix may change (`Adapter.frozen`: a
    Codex compaction's history), with `why` (by message uid). A mixed message's own blocks
    may still be dropped or renamed."""

    messages: frozenset[int]
    blocks: frozenset[int]
    why: Mapping[int, str] = field(default_factory=dict)


class _Following:
    """uid -> the uid of the message after it (None: before the first), made when first
    asked for (a plan asks only for a fix that inserts a message)."""

    def __init__(self, messages: list[Message]) -> None:
        self.messages = messages
        self._next: dict[int | None, int | None] | None = None

    def get(self, uid: int | None) -> int | None:
        if self._next is None:
            uids = [m.uid for m in self.messages]
            self._next = dict(zip([None, *uids], [*uids, None], strict=True))
        return self._next.get(uid)


def edits_frozen(messages: list[Message], fix: Fix, frozen: Frozen) -> bool:
    """Whether the fix changes what `frozen` names (`frozen_at`), `messages` its state's."""
    return frozen_at(fix, frozen, _Following(messages)) is not None


def frozen_at(fix: Fix, frozen: Frozen, following: _Following) -> int | None:
    """The held message (its uid) the fix would change, if any: a block read from a
    frozen record, or a message holding one (a block inserted, blocks reordered or merged
    in, the message dropped, a message inserted right before it, which re-links its
    record)."""
    held = frozen.messages
    for e in fix.edits:
        at: int | None
        if isinstance(e, InsertMessage):
            at = following.get(e.after_uid)
            hit = at in held
        elif isinstance(e, (DropBlock, SetId)):
            at, hit = e.message_uid, e.bid in frozen.blocks
        elif isinstance(e, MoveBlock):
            mine = e.bid in frozen.blocks
            at, hit = (e.message_uid if mine else e.to_uid), mine or e.to_uid in held
        elif isinstance(e, MergeMessages):
            at = e.message_uid if e.message_uid in held else e.second_uid
            hit = at in held
        elif isinstance(e, DropIfEmpty):
            continue  # fires only when the fix's own drops emptied the message
        else:
            at = e.message_uid
            hit = at in held
        if hit and at is not None:
            return at
    return None


_ID_OK = re.compile(r"[^A-Za-z0-9_-]")


class _At:
    """(message, block) -> the call or result there, found in its message's list (a plan
    builds no index of every call and result of the session); those in no list (`others`,
    asked for when first needed) in an index of their own."""

    def __init__(
        self, by_message: Mapping[int, list[Any]], others: Callable[[], list[Any]]
    ) -> None:
        self.by_message = by_message
        self.others = others
        self._rest: dict[tuple[int, int], Any] | None = None

    def get(self, at: tuple[int | None, int | None]) -> Any:
        mi, bi = at
        if mi is None or bi is None:  # no block there
            return None
        for x in self.by_message.get(mi, ()):
            if x.bi == bi:
                return x
        if self._rest is None:
            self._rest = {(x.mi, x.bi): x for x in self.others()}
        return self._rest.get((mi, bi))

    def __getitem__(self, at: tuple[int | None, int | None]) -> Any:
        got = self.get(at)
        if got is None:
            raise KeyError(at)
        return got


class _Reads:
    """The messages as the fix builders read them, the span of positions read noted (`lo`,
    `hi`: `Fix.reads`)."""

    __slots__ = ("items", "lo", "hi")

    def __init__(self, items: list[Message]) -> None:
        self.items = items
        self.lo, self.hi = _EVERYWHERE

    def __getitem__(self, mi: int) -> Message:
        if mi < self.lo:
            self.lo = mi
        if mi > self.hi:
            self.hi = mi
        return self.items[mi]


class _Ctx:
    """What the fix builders read: the messages, the pairing, lookups by block."""

    def __init__(
        self, session: Session, p: Pairing, target: str, numbers: list[int | None]
    ) -> None:
        self.msgs = _Reads(session.messages)
        self.adapter = session.adapter
        self.p = p
        self.target = target
        self.numbers = numbers  # the provider's messages.N by position
        # a call in the wrong role's message is in no turn; every result is in its message's list
        # (a lean pairing's calls and results checked: every one a finding is at, with all
        # its links; a turn answered twice is not among them)
        c = p.whole() if p.checked_copies else p.checked
        self.use_at = _At(
            c.uses_by_message, lambda: [u for u in c.uses if u.wrong_role] if p.wrong_role else []
        )
        self.result_at = _At(c.results_by_message, list)
        self._ids: set[str] | None = None
        self._next_n: dict[str, int] = {}
        self._orders: dict[int, dict[str, int]] = {}
        self._assigned: dict[int, str] = {}  # invalid call's block bid -> its new id
        self._claimed: set[str] = set()

    def n(self, mi: int) -> int | str:
        """How a fix's detail names message `mi`: the provider's number, as findings do."""
        k = self.numbers[mi] if mi < len(self.numbers) else None
        return k if k is not None else f"(not sent, row {mi})"

    def group_of(self, f: Finding) -> tuple[Hashable, ...] | None:
        """Findings with the same group key are answered by one fix (codes.Group)."""
        group = codes.get(f.code).group
        if group is Group.MESSAGE:
            return ("msg", f.position)
        if group is None or f.position is None or f.block_index is None:
            return None
        res = self.result_at.get((f.position, f.block_index))
        if res is None or res.use is None:
            return None
        if group is Group.CALL_MESSAGE:
            return ("turn", res.use.mi)
        return ("use", res.use.mi, res.use.bi)

    def uid(self, mi: int) -> int:
        return self.msgs[mi].uid

    def kept_apart(self, a: int, b: int) -> str | None:
        """Why messages a and b (one role, in a row) cannot be merged in the written file."""
        adapter = self.adapter
        return None if adapter is None else adapter.kept_apart(self.msgs[a], self.msgs[b])

    def use_order(self, assistant_mi: int) -> dict[str, int]:
        msg = self.msgs[assistant_mi]  # (noted as read by every fix that asks)
        order = self._orders.get(assistant_mi)
        if order is None:
            order = self._orders[assistant_mi] = {}
            if msg.role == "assistant" and msg.live:  # its calls' order, as the pairing's
                calls = (b for b in msg.blocks if b.type == TOOL_USE)
                for k, b in enumerate(calls):
                    order.setdefault(b.tool_id or "", k)
        return order

    def all_ids(self) -> set[str]:
        if self._ids is None:
            self._ids = self.p.tool_ids()
        return self._ids

    def build(self, code: str, action: str, findings: list[Finding]) -> Built:
        if action == NONE:
            return [], frozenset(), "No change: " + codes.get(code).none_reason
        return BUILDERS[(code, action)](self, findings)

    # orphan-tool-use / pending-tool-use
    def _uses(self, findings: list[Finding]) -> list[Use]:
        return [self.use_at[_spot(f)] for f in findings]

    @builds("orphan-tool-use", "insert-result")
    @builds("pending-tool-use", "insert-result")
    def answer_calls(self, findings: list[Finding]) -> Built:
        uses = self._uses(findings)
        a = uses[0].mi
        synth = [synthetic_result(u.tool_id or "") for u in uses]
        ids = ", ".join(u.tool_id or "?" for u in uses)
        home = uses[0].home
        if home is not None:
            edits: list[Edit] = [
                InsertBlock(
                    "insert_block",
                    self.uid(home),
                    f"add a synthetic error result for {u.tool_id}",
                    block=b,
                )
                for u, b in zip(uses, synth, strict=True)
            ]
            edits.append(
                ReorderBlocks(
                    "reorder_blocks",
                    self.uid(home),
                    "tool results first, in call order",
                    use_order=self.use_order(a),
                )
            )
            return (
                edits,
                frozenset({self.uid(a), self.uid(home)}),
                (f"Insert a synthetic error result for {ids} into message {self.n(home)}."),
            )
        msg = Message(role="user", blocks=tuple(synth), meta=_meta_like(self.msgs[a]))
        edit = InsertMessage(
            "insert_message",
            msg.uid,
            f"new user message answering {ids}",
            after_uid=self.uid(a),
            message=msg,
        )
        return (
            [edit],
            frozenset({self.uid(a)}),
            (
                f"Insert a user message after message {self.n(a)} with a synthetic error result for {ids}."
            ),
        )

    @builds("orphan-tool-use", "drop-tool-use")
    def drop_calls(self, findings: list[Finding]) -> Built:
        uses = self._uses(findings)
        a = self.uid(uses[0].mi)
        edits: list[Edit] = [
            DropBlock("drop_block", a, f"drop tool_use {u.tool_id} ({u.name})", bid=u.block.bid)
            for u in uses
        ]
        edits.append(DropIfEmpty("drop_message", a, "drop the assistant message left empty"))
        ids = ", ".join(u.tool_id or "?" for u in uses)
        return (
            edits,
            frozenset({a}),
            f"Drop the unanswered tool_use {ids} from message {self.n(uses[0].mi)}.",
        )

    # orphan-tool-result
    def _results(self, findings: list[Finding]) -> list[Result]:
        return [self.result_at[_spot(f)] for f in findings]

    @builds("orphan-tool-result", "drop")
    def drop_orphan_result(self, findings: list[Finding]) -> Built:
        (res,) = self._results(findings)
        m = self.uid(res.mi)
        edits = [
            DropBlock("drop_block", m, f"drop orphan tool_result {res.tool_id}", bid=res.block.bid),
            DropIfEmpty("drop_message", m, "drop the message left empty"),
        ]
        return (
            edits,
            frozenset({m}),
            (
                f"Drop the tool_result {res.tool_id} from message {self.n(res.mi)} (kept in the report)."
            ),
        )

    @builds("orphan-tool-result", "to-text")
    def orphan_result_to_text(self, findings: list[Finding]) -> Built:
        (res,) = self._results(findings)
        m = self.uid(res.mi)
        blocks = result_as_text(res.block)
        edits: list[Edit] = [
            InsertBlock(
                "insert_block", m, "the result's content as text", block=b, before_bid=res.block.bid
            )
            for b in blocks
        ]
        edits.append(
            DropBlock("drop_block", m, f"drop tool_result {res.tool_id}", bid=res.block.bid)
        )
        return (
            edits,
            frozenset({m}),
            (
                f"Turn the tool_result {res.tool_id} of message {self.n(res.mi)} into a text block that keeps its content."
            ),
        )

    # mismatched-tool-result-id
    @builds("mismatched-tool-result-id", "remap")
    def remap_results(self, findings: list[Finding]) -> Built:
        results = [(r, _partner_of(r)) for r in self._results(findings)]
        home = results[0][0].mi
        a = results[0][1].mi
        edits: list[Edit] = [
            SetId(
                "set_id",
                self.uid(home),
                f"tool_use_id {r.tool_id} -> {u.tool_id}",
                bid=r.block.bid,
                new_id=u.tool_id or "",
            )
            for r, u in results
        ]
        edits.append(
            ReorderBlocks(
                "reorder_blocks",
                self.uid(home),
                "tool results first, in call order",
                use_order=self.use_order(a),
            )
        )
        pairs = ", ".join(f"{r.tool_id} -> {u.tool_id}" for r, u in results)
        return (
            edits,
            frozenset({self.uid(home), self.uid(a)}),
            (f"Give the result in message {self.n(home)} its call's id ({pairs})."),
        )

    @builds("mismatched-tool-result-id", "drop")
    def drop_mismatched(self, findings: list[Finding]) -> Built:
        results = self._results(findings)
        home = self.uid(results[0].mi)
        edits: list[Edit] = [
            DropBlock("drop_block", home, f"drop tool_result {r.tool_id}", bid=r.block.bid)
            for r in results
        ]
        edits.append(DropIfEmpty("drop_message", home, "drop the message left empty"))
        ids = ", ".join(r.tool_id or "?" for r in results)
        return (
            edits,
            frozenset({home}),
            f"Drop the wrong-id result {ids} from message {self.n(results[0].mi)}.",
        )

    # duplicate-tool-result
    @builds("duplicate-tool-result", "keep-best")
    def keep_best_result(self, findings: list[Finding]) -> Built:
        res0 = self._results(findings)[0]
        use = _use_of(res0)
        held = {id(r): is_placeholder(r.block) for r in use.results}  # (read once each)
        keep = best_result(use, held)
        edits: list[Edit] = []
        touches = {self.uid(use.mi)} | {self.uid(r.mi) for r in use.results}
        home_edits, home_touch, home_where = self._bring_home(use, [keep])
        edits += home_edits
        touches |= home_touch
        for r in use.results:
            if r is not keep:
                edits.append(
                    DropBlock(
                        "drop_block",
                        self.uid(r.mi),
                        f"drop the extra result for {use.tool_id}",
                        bid=r.block.bid,
                    )
                )
        for mi in dict.fromkeys(r.mi for r in use.results):
            edits.append(DropIfEmpty("drop_message", self.uid(mi), "drop the message left empty"))
        why = (
            "a real result over a placeholder"
            if held[id(use.results[0])] != held[id(keep)]
            else "the best of the results"
        )
        return (
            edits,
            frozenset(touches),
            (
                f"Keep one result for {use.tool_id} ({why}, from message {self.n(keep.mi)})"
                f"{' moved' + home_where if home_where else ''} and drop "
                f"{len(use.results) - 1} other(s)."
            ),
        )

    def _bring_home(self, use: Use, results: list[Result]) -> tuple[list[Edit], set[int], str]:
        """Edits that move `results` into the call's home message (created if missing)."""
        moving = [r for r in results if r.mi != use.home]
        if not moving:
            if use.home is None:
                return [], set(), ""
            return (
                [
                    ReorderBlocks(
                        "reorder_blocks",
                        self.uid(use.home),
                        "tool results first, in call order",
                        use_order=self.use_order(use.mi),
                    )
                ],
                {self.uid(use.home)},
                "",
            )
        edits: list[Edit] = []
        if use.home is None:
            msg = Message(role="user", blocks=(), meta=_meta_like(self.msgs[use.mi]))
            edits.append(
                InsertMessage(
                    "insert_message",
                    msg.uid,
                    "new user message right after the call",
                    after_uid=self.uid(use.mi),
                    message=msg,
                )
            )
            home_uid, where = msg.uid, f" into a new user message after message {self.n(use.mi)}"
        else:
            home_uid, where = self.uid(use.home), f" into message {self.n(use.home)}"
        for r in moving:
            edits.append(
                MoveBlock(
                    "move_block",
                    self.uid(r.mi),
                    f"move the result of {use.tool_id} from message {self.n(r.mi)}",
                    bid=r.block.bid,
                    to_uid=home_uid,
                )
            )
        edits.append(
            ReorderBlocks(
                "reorder_blocks",
                home_uid,
                "tool results first, in call order",
                use_order=self.use_order(use.mi),
            )
        )
        for mi in dict.fromkeys(r.mi for r in moving):
            edits.append(DropIfEmpty("drop_message", self.uid(mi), "drop the message left empty"))
        touches = {home_uid} | {self.uid(r.mi) for r in moving}
        return edits, touches, where

    # misplaced-tool-result
    @builds("misplaced-tool-result", "move-home")
    def move_results_home(self, findings: list[Finding]) -> Built:
        results = self._results(findings)
        use = _use_of(results[0])
        edits, touches, where = self._bring_home(use, results)
        ids = ", ".join(r.tool_id or "?" for r in results)
        return (
            edits,
            frozenset(touches | {self.uid(use.mi)}),
            f"Move the result{'s' if len(results) > 1 else ''} of {ids}{where}.",
        )

    # duplicate-tool-use-id
    @builds("duplicate-tool-use-id", "rename")
    def rename_calls(self, findings: list[Finding]) -> Built:
        mi = _pos(findings[0])
        edits: list[Edit] = []
        touches = {self.uid(mi)}
        said: list[str] = []
        for f in findings:
            use = self.use_at[_spot(f)]
            new_id = self._fresh_id(use.tool_id or "toolu")
            edits.append(
                SetId(
                    "set_id",
                    self.uid(use.mi),
                    f"tool_use id {use.tool_id} -> {new_id}",
                    bid=use.block.bid,
                    new_id=new_id,
                )
            )
            for r in use.results:
                edits.append(
                    SetId(
                        "set_id",
                        self.uid(r.mi),
                        f"its result's tool_use_id -> {new_id}",
                        bid=r.block.bid,
                        new_id=new_id,
                    )
                )
                touches.add(self.uid(r.mi))
            said.append(f"{use.tool_id} -> {new_id}" + (" (and its result)" if use.results else ""))
        shown = ", ".join(said[:3]) + (f" and {len(said) - 3} more" if len(said) > 3 else "")
        what = "tool_use" if len(said) == 1 else f"{len(said)} tool_use ids"
        return (
            edits,
            frozenset(touches),
            f"Rename the later {what} of message {self.n(mi)}: {shown}.",
        )

    def _fresh_id(self, old: str) -> str:
        ids = self.all_ids()
        base = _ID_OK.sub("_", old) or "toolu"
        n = self._next_n.get(base, 2)  # counts on per base: linear however many renames
        while f"{base}_hv{n}" in ids:
            n += 1
        self._next_n[base] = n + 1
        new = f"{base}_hv{n}"
        ids.add(new)
        return new

    # invalid-tool-id
    def new_id_for(self, use: Use) -> str:
        """The id an invalid call gets (the same for every fix of this plan): its positional
        partner's when that is usable and free, a sanitised copy of a rejected id when free,
        else a new one."""
        got = self._assigned.get(use.block.bid)
        if got is not None:
            return got
        ids = self.all_ids()
        partner = use.partner
        partner_id = partner.tool_id if partner is not None else None
        if (
            partner is not None
            and partner_id  # has_id: a non-empty string
            and partner_id not in self._claimed
            and id_problem(partner.block, self.target) is None
        ):
            new = partner_id
        elif use.tool_id and (clean := _ID_OK.sub("_", use.tool_id)) not in ids:
            new = clean
            ids.add(new)
        else:
            new = self._fresh_id(use.tool_id or "toolu")
        self._claimed.add(new)
        self._assigned[use.block.bid] = new
        return new

    def _id_edits(self, use: Use, new_id: str) -> tuple[list[Edit], set[int]]:
        """SetId on the call and every result that answers it (or partners it) under an
        id other than `new_id`."""
        edits: list[Edit] = []
        touches = {self.uid(use.mi)}
        if use.tool_id != new_id:
            edits.append(
                SetId(
                    "set_id",
                    self.uid(use.mi),
                    f"tool_use id {_shown(use.tool_id)} -> {new_id}",
                    bid=use.block.bid,
                    new_id=new_id,
                )
            )
        partner = [use.partner] if use.partner is not None else []
        for r in [*use.results, *partner]:
            if r.tool_id != new_id:
                edits.append(
                    SetId(
                        "set_id",
                        self.uid(r.mi),
                        f"its result's tool_use_id {_shown(r.tool_id)} -> {new_id}",
                        bid=r.block.bid,
                        new_id=new_id,
                    )
                )
            touches.add(self.uid(r.mi))
        return edits, touches

    @builds("invalid-tool-id", "assign-id")
    def assign_ids(self, findings: list[Finding]) -> Built:
        mi = _pos(findings[0])
        edits: list[Edit] = []
        touches: set[int] = {self.uid(mi)}
        said: list[str] = []
        for f in findings:
            at = _spot(f)
            use = self.use_at.get(at)
            if use is not None:
                new = self.new_id_for(use)
                more, t = self._id_edits(use, new)
                said.append(f"tool_use {use.name} ({use.tool_id or 'no id'}) -> {new}")
            else:
                res = self.result_at[at]
                call = res.use or res.partner
                if call is None:
                    new = self._fresh_id("toolu")
                    more = [
                        SetId(
                            "set_id",
                            self.uid(res.mi),
                            f"tool_use_id {_shown(res.tool_id)} -> {new} (it answers no call)",
                            bid=res.block.bid,
                            new_id=new,
                        )
                    ]
                    t = {self.uid(res.mi)}
                elif res.use is None and id_problem(call.block, self.target) is None:
                    new = call.tool_id or ""  # a usable call id: the result takes it
                    more = [
                        SetId(
                            "set_id",
                            self.uid(res.mi),
                            f"tool_use_id {_shown(res.tool_id)} -> {new}",
                            bid=res.block.bid,
                            new_id=new,
                        )
                    ]
                    t = {self.uid(res.mi), self.uid(call.mi)}
                else:  # the call's id is refused as well: both get the call's new id
                    new = self.new_id_for(call)
                    more, t = self._id_edits(call, new)
                said.append(f"tool_result {res.tool_id or '(no id)'} -> {new}")
            edits += more
            touches |= t
        return (
            edits,
            frozenset(touches),
            f"Give valid ids in message {self.n(mi)}: {', '.join(said)}.",
        )

    @builds("invalid-tool-id", "drop")
    def drop_invalid(self, findings: list[Finding]) -> Built:
        mi = _pos(findings[0])
        m = self.uid(mi)
        edits: list[Edit] = []
        for f in findings:
            b = self.msgs[mi].blocks[_spot(f)[1]]
            edits.append(
                DropBlock("drop_block", m, f"drop {b.type} {_shown(b.tool_id)}", bid=b.bid)
            )
        edits.append(DropIfEmpty("drop_message", m, "drop the message left empty"))
        return (
            edits,
            frozenset({m}),
            f"Drop the {len(findings)} block(s) with an invalid id from message {self.n(mi)} (kept in "
            "the report).",
        )

    # wrong-role-block
    @builds("wrong-role-block", "move")
    def move_to_role(self, findings: list[Finding]) -> Built:
        mi = _pos(findings[0])
        msg = self.msgs[mi]
        blocks = [msg.blocks[_spot(f)[1]] for f in findings]
        edits: list[Edit] = []
        anchor: int | None  # the message a new one goes after (None: first)
        if msg.role == "assistant":  # results: into the user message after this one
            nxt = self.p.next_live.get(mi)
            want, kind, anchor = "user", "tool_result", msg.uid
            if nxt is not None and self.msgs[nxt].role == "user":
                dest: Message | None = self.msgs[nxt]
                where = f"message {self.n(nxt)}"
            else:
                dest, where = None, f"a new user message after message {self.n(mi)}"
        else:  # calls: to the end of the assistant message before this one
            prev = self.p.prev_live.get(mi)
            want, kind = "assistant", "tool_use"
            anchor = self.msgs[mi - 1].uid if mi > 0 else None
            if prev is not None and self.msgs[prev].role == "assistant":
                dest, where = self.msgs[prev], f"the end of message {self.n(prev)}"
            else:
                dest, where = None, f"a new assistant message before message {self.n(mi)}"
        if dest is None:
            dest = Message(role=want, blocks=(), meta=_meta_like(msg))
            edits.append(
                InsertMessage(
                    "insert_message",
                    dest.uid,
                    f"new {want} message for the {kind} blocks",
                    after_uid=anchor,
                    message=dest,
                )
            )
        for b in blocks:
            edits.append(
                MoveBlock(
                    "move_block",
                    msg.uid,
                    f"move {kind} {_shown(b.tool_id)} into the {want} message",
                    bid=b.bid,
                    to_uid=dest.uid,
                )
            )
        if want == "user":
            edits.append(
                ReorderBlocks(
                    "reorder_blocks",
                    dest.uid,
                    "tool results first, in call order",
                    use_order=self.use_order(mi),
                )
            )
        edits.append(DropIfEmpty("drop_message", msg.uid, "drop the message left empty"))
        ids = ", ".join(_shown(b.tool_id) for b in blocks)
        return (
            edits,
            frozenset({msg.uid, dest.uid}),
            f"Move {kind} {ids} from the {msg.role} message {self.n(mi)} into {where}.",
        )

    @builds("wrong-role-block", "to-text")
    def wrong_role_to_text(self, findings: list[Finding]) -> Built:
        mi = _pos(findings[0])
        # the blocks, and the results of a call turned into text: they answer nothing now
        todo: dict[tuple[int, int], Block] = {}
        for f in findings:
            bi = _spot(f)[1]
            todo[(mi, bi)] = self.msgs[mi].blocks[bi]
            use = self.use_at.get((mi, bi))
            for r in use.results if use is not None else ():
                todo[(r.mi, r.bi)] = r.block
        edits: list[Edit] = []
        for (at, _), b in sorted(todo.items(), key=lambda item: item[0]):
            uid = self.uid(at)
            if b.type == TOOL_RESULT:
                why = (
                    "found inside an assistant message"
                    if self.msgs[at].role == "assistant"
                    else "whose call was inside a user message"
                )
                texts = result_as_text(
                    b, f"{SYNTHETIC_PREFIX} Tool result for {_shown(b.tool_id)}, {why}:"
                )
            else:
                texts = [use_as_text(b)]
            edits += [
                InsertBlock("insert_block", uid, f"the {b.type} as text", block=t, before_bid=b.bid)
                for t in texts
            ]
            edits.append(
                DropBlock("drop_block", uid, f"drop {b.type} {_shown(b.tool_id)}", bid=b.bid)
            )
        extra = len(todo) - len(findings)
        return (
            edits,
            frozenset(self.uid(at) for at, _ in todo),
            f"Turn the {len(findings)} misplaced tool block(s) of message {self.n(mi)} into text that "
            "keeps their content"
            + (f", and the {extra} result(s) of those calls." if extra else "."),
        )

    # tool-result-not-first
    @builds("tool-result-not-first", "reorder")
    def results_first(self, findings: list[Finding]) -> Built:
        (f,) = findings
        mi = _pos(f)
        prev = self.p.prev_live.get(mi)
        order = self.use_order(prev) if prev is not None else {}
        touches = {self.uid(mi)} | ({self.uid(prev)} if prev is not None else set())
        edit = ReorderBlocks(
            "reorder_blocks", self.uid(mi), "tool results first, in call order", use_order=order
        )
        return (
            [edit],
            frozenset(touches),
            f"Put the tool results of message {self.n(mi)} before its other blocks.",
        )

    # empty-content
    @builds("empty-content", "drop-empty")
    def drop_empty(self, findings: list[Finding]) -> Built:
        mi = _pos(findings[0])
        msg = self.msgs[mi]
        empty_bids = {msg.blocks[f.block_index].bid for f in findings if f.block_index is not None}
        if msg.blocks and len(empty_bids) < len(msg.blocks):
            edits: list[Edit] = [
                DropBlock("drop_block", msg.uid, "drop an empty text block", bid=b)
                for b in empty_bids
            ]
            return (
                edits,
                frozenset({msg.uid}),
                f"Drop the empty text block(s) of message {self.n(mi)}.",
            )
        edits = [DropMessage("drop_message", msg.uid, "drop the empty message")]
        touches = {msg.uid}
        prev, nxt = self.p.prev_live.get(mi), self.p.next_live.get(mi)
        detail = f"Drop the empty message {self.n(mi)}."
        if (
            prev is not None
            and nxt is not None
            and self.msgs[prev].role == self.msgs[nxt].role
            and self.kept_apart(prev, nxt) is None
        ):
            edits.append(
                MergeMessages(
                    "merge_messages",
                    self.uid(prev),
                    f"merge message {self.n(nxt)} into message {self.n(prev)}",
                    second_uid=self.uid(nxt),
                )
            )
            touches |= {self.uid(prev), self.uid(nxt)}
            before = self.p.prev_live.get(prev)
            if self.msgs[prev].role == "user" and before is not None:
                edits.append(
                    ReorderBlocks(
                        "reorder_blocks",
                        self.uid(prev),
                        "tool results first, in call order",
                        use_order=self.use_order(before),
                    )
                )
                touches.add(self.uid(before))
            detail = f"Drop the empty message {self.n(mi)} and merge messages {self.n(prev)} and {self.n(nxt)}, now adjacent."
        return edits, frozenset(touches), detail

    @builds("empty-content", "fill")
    def fill_empty(self, findings: list[Finding]) -> Built:
        mi = _pos(findings[0])
        msg = self.msgs[mi]
        edits: list[Edit] = []
        for f in findings:
            if f.block_index is None:
                edits.append(
                    InsertBlock(
                        "insert_block",
                        msg.uid,
                        "placeholder text",
                        block=text_block(f"{SYNTHETIC_PREFIX} (this message was empty)"),
                    )
                )
            else:
                b = msg.blocks[f.block_index]
                edits.append(
                    InsertBlock(
                        "insert_block",
                        msg.uid,
                        "placeholder text",
                        block=text_block(f"{SYNTHETIC_PREFIX} (this text was empty)"),
                        before_bid=b.bid,
                    )
                )
                edits.append(
                    DropBlock("drop_block", msg.uid, "drop the empty text block", bid=b.bid)
                )
        return (
            edits,
            frozenset({msg.uid}),
            f"Fill the empty content of message {self.n(mi)} with a placeholder text.",
        )

    # consecutive-same-role
    @builds("consecutive-same-role", "merge")
    def merge_same_role(self, findings: list[Finding]) -> Built:
        (f,) = findings
        mi = _pos(f)
        prev = self.p.prev_live[mi]
        why = self.kept_apart(prev, mi)
        if why is not None:
            return [], frozenset(), f"No change: {why}."
        edits: list[Edit] = [
            MergeMessages(
                "merge_messages",
                self.uid(prev),
                f"merge message {self.n(mi)} into message {self.n(prev)}",
                second_uid=self.uid(mi),
            )
        ]
        touches = {self.uid(prev), self.uid(mi)}
        before = self.p.prev_live.get(prev)
        if self.msgs[mi].role == "user" and before is not None:
            edits.append(
                ReorderBlocks(
                    "reorder_blocks",
                    self.uid(prev),
                    "tool results first, in call order",
                    use_order=self.use_order(before),
                )
            )
            touches.add(self.uid(before))
        return edits, frozenset(touches), f"Merge message {self.n(mi)} into message {self.n(prev)}."

    # broken-chain
    @builds("broken-chain", "relink")
    def relink(self, findings: list[Finding]) -> Built:
        (f,) = findings
        _, record, parent, where, lost, missing, line = f.key  # line: the record's
        if not parent:
            return [], frozenset(), f"No change: {where}."
        assert isinstance(line, int)
        m = self.uid(_pos(f))
        edit = Relink(
            "relink",
            m,
            f"line {line}: parentUuid {missing} -> {parent} ({where})",
            record=str(record),
            line=line,
            parent=str(parent),
        )
        return (
            [edit],
            frozenset({m}),
            f"Re-link line {line} to {where}: {lost}.",
        )

    # malformed
    @builds("malformed", "drop")
    def drop_malformed(self, findings: list[Finding]) -> Built:
        (f,) = findings
        m = self.uid(_pos(f))
        return (
            [DropMessage("drop_message", m, "drop the malformed record")],
            frozenset({m}),
            (f"Drop the malformed record at {f.place()} (kept in the report)."),
        )


def _pos(f: Finding) -> int:
    """The message a finding is at (every finding the analysis makes names one)."""
    if f.position is None:
        raise ValueError(f"a {f.code} finding names no message")
    return f.position


def _spot(f: Finding) -> tuple[int, int]:
    """The block a finding is about: its message position and block index."""
    if f.block_index is None:
        raise ValueError(f"a {f.code} finding names no block")
    return _pos(f), f.block_index


def _use_of(res: Result) -> Use:
    """The call a result answers (a duplicate or misplaced result has one)."""
    if res.use is None:
        raise ValueError(f"the result {res.tool_id} answers no call")
    return res.use


def _partner_of(res: Result) -> Use:
    """The call a result with a wrong id most likely answers (a mismatched one has one)."""
    if res.partner is None:
        raise ValueError(f"the result {res.tool_id} has no positional partner")
    return res.partner


def _shown(tool_id: str | None) -> str:
    return tool_id if tool_id else "(none)"


def synthetic_result(tool_id: str) -> Block:
    return block_from_anthropic(
        {
            "type": TOOL_RESULT,
            "tool_use_id": tool_id,
            "content": SYNTHETIC_RESULT_TEXT,
            "is_error": True,
        }
    )


def text_block(text: str) -> Block:
    return block_from_anthropic({"type": "text", "text": text})


def result_as_text(block: Block, head: str | None = None) -> list[Block]:
    """A tool_result turned into text that keeps its content (images stay images)."""
    data = block.data if isinstance(block.data, dict) else {}
    content = data.get("content")
    head = head or f"{SYNTHETIC_PREFIX} Tool result for unknown call {block.tool_id}:"
    text = content_text(content)
    out = [text_block(f"{head}\n{text}" if text else head)]
    if isinstance(content, list):
        out += [
            block_from_anthropic(c)
            for c in content
            if isinstance(c, dict) and c.get("type") == "image"
        ]
    return out


def use_as_text(block: Block) -> Block:
    """A tool_use turned into text that keeps its name, id and input."""
    data = block.data if isinstance(block.data, dict) else {}
    try:
        args = text_of(data.get("input"))
    except (TypeError, ValueError, RecursionError):
        args = repr(data.get("input"))
    return text_block(
        f"{SYNTHETIC_PREFIX} Tool call {block.name or '?'} ({_shown(block.tool_id)}), found "
        f"inside a user message, with input: {args}"
    )


def best_result(use: Use, held: Mapping[int, bool] | None = None) -> Result:
    """The duplicate policy (docs/codes.md, Fixes): real over placeholder, then non-error over error, then the one
    already home, then the earliest. `held`: id(result) -> whether it is a placeholder,
    where the caller has it."""

    def rank(item: tuple[int, Result]) -> tuple[int, int, int, int]:
        k, r = item
        p = held[id(r)] if held is not None else is_placeholder(r.block)
        return (p, r.block.is_error, r.mi != use.home, k)

    return min(enumerate(use.results), key=rank)[1]


def _meta_like(neighbour: Message) -> dict[str, Any]:
    t = neighbour.timestamp
    return {"timestamp": t, "synthetic": True} if t is not None else {"synthetic": True}
