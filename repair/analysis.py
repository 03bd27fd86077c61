"""Findings (docs/codes.md): what would make the target provider answer 400, and the evidence."""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cache
from operator import attrgetter
from types import EllipsisType
from typing import Any, cast

from . import clients, codes, targets, wire
from .codes import Severity
from .gcpause import gc_paused
from .model import (
    TOOL_RESULT,
    TOOL_USE,
    Block,
    Finding,
    Message,
    Session,
    block_text,
    source_of,
    text_is_blank,
)
from .pairing import Pairing, Result, Use, pair
from .place import Place


@dataclass
class Analysis:
    findings: list[Finding]
    pairing: Pairing
    target: str
    numbers: list[int | None] = field(default_factory=list)  # messages.N by position
    sent: int = 0  # messages (wire entries) the provider receives
    # what the client target sends, where the analysis emulated it, and the findings the
    # format made from its records (repair.incremental follows both after a step)
    request: wire.Request | None = field(default=None, repr=False, compare=False)
    records: tuple[Finding, ...] = field(default=(), repr=False, compare=False)

    @property
    def not_sent(self) -> int:
        """Messages of the file the provider does not receive (hidden, malformed, dropped)."""
        return sum(1 for k in self.numbers if k is None)

    def summary(self) -> dict[str, int]:
        return dict(Counter(f.code for f in self.findings))

    def counts(self) -> dict[str, int]:
        c = Counter(f.severity for f in self.findings)
        return {str(s): c.get(s, 0) for s in Severity}

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.ERROR]

    def by_message(self) -> dict[int, list[Finding]]:
        out: dict[int, list[Finding]] = {}
        for f in self.findings:
            if f.position is not None:
                out.setdefault(f.position, []).append(f)
        return out


def analyze(
    session: Session, target: str | None = None, *, whole: bool = False, steps: bool = True
) -> Analysis:
    """The findings. `whole`: the caller reads the whole pairing at once (the workbench: the
    TUI's lanes, the plans), so it is made at once instead of the lean one first; with
    `steps` (a whole analysis the next step's increment follows), the client's request is
    built too, where the increment re-sends it in part, instead of counted."""
    with gc_paused():
        return _analyze(session, target or session.target, whole, steps)


def _analyze(session: Session, target: str, whole: bool = False, steps: bool = True) -> Analysis:
    msgs = session.messages
    rules = _IdRules.of(target)
    p = pair(
        msgs,
        remap=not getattr(session.adapter, "unique_call_ids", False),
        usual_id=None if whole else rules.fine,
        all_usual=rules.all_fine,
    )
    client = clients.get(target)
    # A client that only repairs (`only_repairs`) sends the messages as they are unless a
    # finding's code is one it repairs; then what it really sends is judged and numbered.
    # Which findings there are does not depend on the request (only their numbers, details
    # and severities do), so one collect usually does: the request is built first when the
    # pairing shows a fault such a client may repair, and a wrong guess collects again.
    request = None
    if client is not None and (not client.only_repairs or _may_repair(p, msgs)):
        request = _sending(client, session, whole and steps)
    numbers, sent = _numbers(msgs, target, request, len(p.live))
    out = _collect(p, msgs, target, numbers, request)
    if client is not None and client.only_repairs:
        repairs = any(codes.get(f.code).repair_by_client(target) for f in out.findings)
        if repairs != (request is not None):
            request = _sending(client, session, whole and steps) if repairs else None
            numbers, sent = _numbers(msgs, target, request, len(p.live))
            out = _collect(p, msgs, target, numbers, request)
    records = add_record_findings(session, out)
    findings = out.findings + list(session.load_findings)
    findings.sort(key=finding_order)
    return Analysis(findings, p, target, numbers, sent, request, records)


def made_whole(analysis: Analysis, session: Session) -> Analysis:
    """What `analyze(session, whole=True)` gives, from `analyze(session)` of the same
    messages (the TUI shows that one first): the whole pairing built, and the client's
    request built where a whole analysis builds it instead of counting it
    (tests/engine/test_pairing_lean.py)."""
    request = analysis.request
    client = clients.get(analysis.target)
    if request is not None and client is not None and client.send_part is not None:
        request = client.send(session)
    with gc_paused():
        return replace(analysis, pairing=analysis.pairing.whole(), request=request)


def _sending(client: clients.Client, session: Session, whole: bool) -> wire.Request:
    """What the analysis reads of the client's request: counted by its light twin where
    there is one (`Client.light`), else built; built for a whole analysis of a client whose
    request the next step's increment re-sends in part (`Client.send_part`)."""
    light = None if whole and client.send_part is not None else client.light
    return (light or client.send)(session)


def add_record_findings(session: Session, out: _Collector) -> tuple[Finding, ...]:
    """The findings the format makes from its records (Claude Code's chain), added."""
    record_findings = getattr(session.adapter, "chain_findings", None)
    start = len(out.findings)
    for code, mi, detail, key, repaired in record_findings(session) if record_findings else ():
        out.add(code, mi, None, None, detail, key=key, repaired=repaired)
    return tuple(out.findings[start:])


def _may_repair(p: Pairing, msgs: list[Message]) -> bool:
    """A guess (never a judgement): a call without a result, a result without its call or an
    unreadable message, the faults clients repair while they send."""
    return (
        any(not u.results for u in p.checked_uses)
        or any(r.use is None for r in p.checked_results)
        or any(m.malformed is not None for m in msgs)
    )


def _numbers(
    msgs: list[Message], target: str, request: wire.Request | None, live: int
) -> tuple[list[int | None], int]:
    if request is None:
        return wire.provider_numbers(msgs, target, live)
    return request.numbering(len(msgs), wire.wire_for(target))


def _collect(
    p: Pairing,
    msgs: list[Message],
    target: str,
    numbers: list[int | None],
    client: wire.Request | None,
    only: set[int] | None = None,
) -> _Collector:
    """The findings; with `only`, those at these positions alone (repair.incremental: `p`
    then holds the calls and results there, with the whole session's links)."""
    out = _Collector(msgs, target, numbers, client)
    _id_findings(p, msgs, out)
    _role_findings(p, msgs, out)
    _tool_findings(p, msgs, out)
    _shape_findings(p, msgs, out, only)
    _time_findings(p, msgs, out, only)
    _client_findings(msgs, out)
    if len(p.live) < len(msgs):  # (a malformed message is not live)
        for i in range(len(msgs)) if only is None else sorted(only):
            m = msgs[i]
            if m.malformed is not None:
                out.add("malformed", i, None, None, m.malformed, key=(m.uid,))
    if only is not None:
        out.findings = [f for f in out.findings if f.position in only]
    return out


def _named(k: int | None, mi: int) -> int | str:
    """How a detail names message `mi`, sent as messages.`k` (None: not sent)."""
    return k if k is not None else f"(not sent, row {mi})"


class _Collector:
    def __init__(
        self,
        msgs: list[Message],
        target: str,
        numbers: list[int | None],
        client: wire.Request | None = None,
    ) -> None:
        self.msgs = msgs
        self.target = target
        self.findings: list[Finding] = []
        self.reach: dict[int, int] = {}  # _merges_cleanly's walks
        self.numbers = numbers  # position in msgs -> the provider's messages.N (None: not sent)
        self.client = client  # what the client target sends, where it is emulated
        self.wire = wire.wire_for(target)
        # what `add` says of each code under this target, read once (a session may hold
        # tens of thousands of findings of one code): (code, lenient) -> its client's
        # repair, its rule, its severity when the client repairs it and when not
        self._said: dict[tuple[str, bool], tuple[str | None, str | None, Severity, Severity]] = {}

    def number_of(self, mi: int, block: Block | None) -> int | None:
        """A finding's messages.N: its message's, or (where the wire splits a message into
        several entries: Chat `tool` messages, Responses items) the entry holding its block."""
        k = self.numbers[mi]
        if k is None or block is None or self.wire.split is wire.WIRES["anthropic"].split:
            return k
        if self.client is None:
            return wire.entry_of(self.msgs[mi], k, block, self.wire)
        got = self.client.block_entry(self.wire, mi, block)
        return k if got is None else got

    def reads_no_block(self) -> bool:
        """Whether a result's number and repair are known without its block: the wire
        sends each message as one entry, and the client (if any) leaves every result as it
        is (a `Message.answers` finder then passes `add` the place, the block not made)."""
        c = self.client
        return self.wire.split is wire.WIRES["anthropic"].split and (
            c is None or not (c.left_out or c.changed)
        )

    def nb(self, mi: int, block: Block) -> int | str:
        """How a detail names the message holding `block`: the entry that carries it."""
        return _named(self.number_of(mi, block), mi)

    def n(self, mi: int) -> int | str:
        """How a detail names message `mi`: its number as sent."""
        return _named(self.numbers[mi], mi)

    def add(
        self,
        code: str,
        mi: int,
        bi: int | None,
        tool_id: str | None,
        detail: str,
        *,
        key: tuple[Hashable, ...],
        lenient: bool = False,
        repaired: bool | None = None,
        number: int | None | EllipsisType = ...,
    ) -> None:
        """`repaired`: whether the client target repairs this finding, where the finder
        knows (None: as the client's emulated request tells). `number`: its messages.N,
        where the finder has it already (`number_of`)."""
        msg = self.msgs[mi]
        block = msg.blocks[bi] if bi is not None and bi < len(msg.blocks) else None
        said = self._said_of(code, lenient)
        # what the client target sends instead; where its sending is emulated, only the
        # findings it really repairs (the block is left out or the call answered by it)
        says = said[0]
        if repaired is not None:
            says = says if repaired else None
        elif says is not None and self.client is not None and not self.client.repairs(block, mi):
            says = None
        number = self.number_of(mi, block) if number is ... else number
        self.findings.append(
            _finding(code, said, says, mi, bi, tool_id, detail, key, number, source_of(block, msg))
        )

    def add_unread(
        self,
        code: str,
        rows: Iterable[tuple[int, int | None, int, str | None, str, tuple[Hashable, ...], Place]],
    ) -> None:
        """`add` of findings whose blocks are not read (`reads_no_block`): each row its
        message, the message's messages.N, its block index, tool id, detail, key and where
        the block was read. The client leaves such a block as it is: none is repaired."""
        said = self._said_of(code, False)
        says = said[0] if self.client is None else None
        append = self.findings.append
        for mi, number, bi, tool_id, detail, key, source in rows:
            append(_finding(code, said, says, mi, bi, tool_id, detail, key, number, source))

    def _said_of(
        self, code: str, lenient: bool
    ) -> tuple[str | None, str | None, Severity, Severity]:
        """What `add` says of each code under this target: its client's repair, its rule,
        its severity when the client repairs it and when not (read once per code)."""
        said = self._said.get((code, lenient))
        if said is None:
            declared = codes.get(code)
            target = self.target
            said = self._said[code, lenient] = (
                declared.repair_by_client(target),
                declared.rule_for(target),
                declared.severity_for(target, lenient=lenient, repaired=True),
                declared.severity_for(target, lenient=lenient, repaired=False),
            )
        return said


def _finding(
    code: str,
    said: tuple[str | None, str | None, Severity, Severity],
    says: str | None,
    mi: int,
    bi: int | None,
    tool_id: str | None,
    detail: str,
    key: tuple[Hashable, ...],
    number: int | None,
    source: Place,
) -> Finding:
    """A finding of `code` (`said`: `_Collector._said_of` it) at `mi`; `says`: what the
    client sends instead (None: it sends it as it is)."""
    return Finding(
        code,
        said[3] if says is None else said[2],
        number,
        bi,
        tool_id,
        f"{detail} {says}" if says else detail,
        said[1],
        source,
        (code, *key),
        mi,
        says,
    )


def _tool_findings(p: Pairing, msgs: list[Message], out: _Collector) -> None:
    last_live = p.live[-1] if p.live else None
    use: Use | None  # a call; below, the call a result answers (if any)
    for use in p.checked_uses:
        if use.dup_of is None and use.results and not p.wrong_role:
            continue  # the usual case: answered, its id its own
        # an id-less call pairs with nothing: its invalid-tool-id finding says it all; a block
        # in the wrong role's message is judged once wrong-role-block has moved it
        if not use.has_id or (p.wrong_role and _moving(use)):
            continue
        if use.dup_of is not None:
            out.add(
                "duplicate-tool-use-id",
                use.mi,
                use.bi,
                use.tool_id,
                f"tool_use id {use.tool_id} ({use.name}) is already used in message "
                f"{out.nb(use.dup_of.mi, use.dup_of.block)}; tool_use ids must be unique in a request.",
                key=(msgs[use.mi].uid, use.block.bid),
            )
        if use.results or use.partner is not None:
            continue
        if use.mi == last_live:
            out.add(
                "pending-tool-use",
                use.mi,
                use.bi,
                use.tool_id,
                f"the session ends while tool_use {use.tool_id} ({use.name}) waits for its "
                + _pending_end(out.target),
                key=(msgs[use.mi].uid, use.block.bid),
            )
        else:
            where = (
                f"message {out.n(use.home)}"
                if use.home is not None
                else "a user message right after it"
            )
            out.add(
                "orphan-tool-use",
                use.mi,
                use.bi,
                use.tool_id,
                f"tool_use {use.tool_id} ({use.name}) has no tool_result anywhere; the provider "
                f"expects one in {where}.",
                key=(msgs[use.mi].uid, use.block.bid),
            )

    for res in p.checked_results:
        use = res.use
        if (
            use is not None
            and use.results[0] is res
            and (res.mi == use.home or res.block.type != TOOL_RESULT)
            and not p.wrong_role
        ):
            continue  # the usual case: the first result of its call, where it belongs
        key = (msgs[res.mi].uid, res.block.bid)
        if p.wrong_role and (res.wrong_role or (res.use is not None and _moving(res.use))):
            continue
        if res.use is None:
            if not res.has_id and not res.text_answer:
                continue  # invalid-tool-id
            if res.partner is not None:
                partner = res.partner
                if not partner.has_id:
                    continue  # the call's invalid-tool-id fix gives it this result's id
                out.add(
                    "mismatched-tool-result-id",
                    res.mi,
                    res.bi,
                    res.tool_id,
                    f"tool_result id {res.tool_id} matches no tool_use, while tool_use "
                    f"{partner.tool_id} ({partner.name}) of message {out.nb(partner.mi, partner.block)} has no result: "
                    "the same call under a wrong id.",
                    key=key,
                )
            elif not res.text_answer:
                out.add(
                    "orphan-tool-result",
                    res.mi,
                    res.bi,
                    res.tool_id,
                    f"tool_result {res.tool_id} answers no tool_use in the session.",
                    key=key,
                )
            continue
        use = res.use
        if res.is_duplicate:
            first = use.results[0]
            call = (use.block.tool_id, use.block.name)
            _duplicate(
                out, res.mi, res.bi, res.block, res.block.tool_id, call, first.mi, first.block, key
            )
            continue
        if len(use.results) == 1 and res.mi != use.home and not res.text_answer:
            _misplaced(p, msgs, out, use, res, key)
    if p.checked_copies:
        _copies(msgs, out, p.checked_copies)


def _copies(msgs: list[Message], out: _Collector, copies: list[tuple[int, int]]) -> None:
    """duplicate-tool-result for each second copy of the turns answered twice
    (`Pairing.checked_copies`: call message, home), as said of a duplicate result above."""
    unread = out.reads_no_block()
    rows: list[tuple[int, int | None, int, str | None, str, tuple[Hashable, ...], Place]] = []
    for asked, home in copies:
        calls = msgs[asked].calls()  # (a loader may name them without making the blocks)
        msg = msgs[home]
        n = len(calls)
        # (a loader may read the results from its records: the home's blocks not made)
        light = msg.answers(n) if unread else None  # (the second copies)
        if light is not None:
            # each copy and its first are in the home, no block read: one number, one "where"
            here, where = _answered_where(out, home, None, home, None)
            uid = msg.uid
            rows += [
                (home, here, bi, tid, _duplicate_detail(call, where), (uid, bid), place)
                for call, (bi, tid, bid, place) in zip(calls, light, strict=True)
            ]
            continue
        if rows:  # (the findings in the order of the turns)
            out.add_unread("duplicate-tool-result", rows)
            rows = []
        answers = [
            (bi, b)
            for bi, b in enumerate(msg.blocks)
            if b.type == TOOL_RESULT or (b.tool_id and b.type != TOOL_USE)
        ]
        for call, (_, first), (bi, copy) in zip(calls, answers[:n], answers[n:], strict=True):
            key = (msg.uid, copy.bid)
            _duplicate(out, home, bi, copy, copy.tool_id, call, home, first, key)
    if rows:
        out.add_unread("duplicate-tool-result", rows)


def _duplicate(
    out: _Collector,
    mi: int,
    bi: int,
    block: Block | None,
    tool_id: str | None,
    call: tuple[str | None, str | None],
    first_mi: int,
    first: Block | None,
    key: tuple[Hashable, ...],
) -> None:
    """duplicate-tool-result: `block` (at `mi`, `bi`, its tool id `tool_id`) answers
    `call` (its tool id and name), already answered by `first` (at `first_mi`)."""
    here, where = _answered_where(out, mi, block, first_mi, first)
    out.add(
        "duplicate-tool-result",
        mi,
        bi,
        tool_id,
        _duplicate_detail(call, where),
        key=key,
        number=here,
    )


def _answered_where(
    out: _Collector, mi: int, block: Block | None, first_mi: int, first: Block | None
) -> tuple[int | None, str]:
    """A duplicate result's messages.N (`block` at `mi`), and where its call was answered
    first (`first` at `first_mi`), as its detail says it."""
    # (each number once: a Gemini CLI chat may hold tens of thousands of these)
    first_k, here = out.number_of(first_mi, first), out.number_of(mi, block)
    n = _named(first_k, first_mi)
    same = first_k == here if here is not None else first_mi == mi
    where = f"the call is answered twice in message {n}" if same else f"the first is in message {n}"
    return here, where


def _duplicate_detail(call: tuple[str | None, str | None], where: str) -> str:
    """duplicate-tool-result's detail: `call` (its tool id and name) answered again."""
    return (
        f"another tool_result for tool_use {call[0]} ({call[1] or '?'}); {where}, "
        "and each tool_use must have a single result."
    )


def _pending_end(target: str) -> str:
    """How a pending call's detail ends: what happens to it on the next request (a client
    target that answers or drops it says so in its own sentence)."""
    code = codes.get("pending-tool-use")
    if code.repair_by_client(target):
        return "result."
    if code.severity_for(target) is Severity.ERROR:
        return "result; the next request sends the call without it."
    return "result; the agent must answer it before it sends anything else."


def _moving(use: Use) -> bool:
    """The call or one of its results sits in the wrong role's message."""
    return use.wrong_role or any(r.wrong_role for r in use.results)


def id_problem(block: Block, target: str) -> str | None:
    """Why the provider refuses this tool block's id, in words; None when it is fine."""
    return _IdRules.of(target).problem(block)


# an id pattern that is one character class repeated (`[a-zA-Z0-9_-]+`)
_ONE_CLASS = re.compile(r"\[[^\]]*\]\+")


@dataclass(frozen=True)
class _IdRules:
    name: str
    pattern: re.Pattern[str] | None
    max_length: int | None

    @staticmethod
    @cache
    def of(target: str) -> _IdRules:
        rules = targets.get(targets.get(target).rules)
        pattern = re.compile(rules.id_pattern) if rules.id_pattern else None
        return _IdRules(rules.name, pattern, rules.id_max_length)

    def fine(self, value: str | None) -> bool:
        """The usual case, decided without a look at the data: an id the target accepts."""
        if not value or (self.max_length is not None and len(value) > self.max_length):
            return False
        return self.pattern is None or self.pattern.fullmatch(value) is not None

    def all_fine(self, ids: list[str | None]) -> bool:
        """`fine` of each id, in one pass over them all: a pattern that is one character
        class repeated matches each of several strings when it matches them joined."""
        if not all(ids):  # (None or "")
            return False
        got = cast(list[str], ids)
        if self.max_length is not None and max(map(len, got), default=0) > self.max_length:
            return False
        pattern = self.pattern
        if pattern is None or not got:
            return True
        if not _ONE_CLASS.fullmatch(pattern.pattern):
            return all(map(self.fine, got))
        return pattern.fullmatch("".join(got)) is not None

    def problem(self, block: Block) -> str | None:
        if self.fine(block.tool_id):
            return None
        key = "id" if block.type == TOOL_USE else "tool_use_id"
        data = block.data if isinstance(block.data, dict) else {}
        if key not in data:
            return f"has no {key}"
        value = data[key]
        if value is None:
            return f"has {key} null"
        if not isinstance(value, str):
            return f"has a {_json_type(value)} as {key}, not a string"
        if not value:
            return f"has an empty {key}"
        if self.max_length is not None and len(value) > self.max_length:
            return (
                f"has a {key} of {len(value)} characters; the {self.name} target accepts at "
                f"most {self.max_length}"
            )
        return (
            f"has {key} {value}, outside what the {self.name} target accepts "
            f"(^{self.pattern.pattern if self.pattern is not None else ''}$)"
        )


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _id_findings(p: Pairing, msgs: list[Message], out: _Collector) -> None:
    rules = _IdRules.of(out.target)
    # `rules.fine` spelt out: this runs for every call and every result
    longest = rules.max_length if rules.max_length is not None else sys.maxsize
    match = rules.pattern.fullmatch if rules.pattern is not None else bool
    for use in p.checked_uses:
        tid = use.block.tool_id
        if tid and len(tid) <= longest and match(tid) is not None:
            continue
        why = rules.problem(use.block)
        if why is None:
            continue
        if use.has_id:
            fix = "the fix renames it and its results"
        elif use.partner is not None:
            fix = f"the result in message {out.nb(use.partner.mi, use.partner.block)} is its positional partner"
        else:
            fix = "it cannot pair with any result"
        out.add(
            "invalid-tool-id",
            use.mi,
            use.bi,
            use.tool_id,
            f"tool_use {use.name} {why}; {fix}.",
            key=(msgs[use.mi].uid, use.block.bid),
        )
    for res in p.checked_results:
        tid = res.block.tool_id
        if tid and len(tid) <= longest and match(tid) is not None:
            continue
        if res.text_answer:
            continue
        why = rules.problem(res.block)
        if why is None:
            continue
        if res.use is not None:
            fix = (
                f"it answers tool_use {res.use.name} of message {out.nb(res.use.mi, res.use.block)}"
            )
        elif res.partner is not None:
            fix = f"tool_use {res.partner.name} of message {out.nb(res.partner.mi, res.partner.block)} is its positional partner"
        else:
            fix = "it answers no tool_use"
        out.add(
            "invalid-tool-id",
            res.mi,
            res.bi,
            res.tool_id,
            f"tool_result {why}; {fix}.",
            key=(msgs[res.mi].uid, res.block.bid),
        )


def _role_findings(p: Pairing, msgs: list[Message], out: _Collector) -> None:
    for use in p.checked_uses:
        if use.wrong_role:
            out.add(
                "wrong-role-block",
                use.mi,
                use.bi,
                use.tool_id,
                f"tool_use {use.tool_id} ({use.name}) is inside a {msgs[use.mi].role} message; "
                "only assistant messages make tool calls.",
                key=(msgs[use.mi].uid, use.block.bid),
            )
    for res in p.checked_results:
        if res.wrong_role:
            out.add(
                "wrong-role-block",
                res.mi,
                res.bi,
                res.tool_id,
                f"tool_result {res.tool_id} is inside an assistant message; tool results "
                "belong in the user message after the call.",
                key=(msgs[res.mi].uid, res.block.bid),
            )


def _misplaced(
    p: Pairing,
    msgs: list[Message],
    out: _Collector,
    use: Use,
    res: Result,
    key: tuple[Hashable, ...],
) -> None:
    if res.before_use:
        detail = (
            f"the result of tool_use {use.tool_id} ({use.name}) comes before the call "
            f"(message {out.nb(use.mi, use.block)}); it belongs right after it."
        )
        out.add("misplaced-tool-result", res.mi, res.bi, use.tool_id, detail, key=key)
        return
    if use.home is None:
        detail = (
            f"the result of tool_use {use.tool_id} ({use.name}) is in message {out.nb(res.mi, res.block)}, "
            f"but the message after the call (message {out.nb(use.mi, use.block)}) is not a user message "
            "holding it."
        )
        out.add("misplaced-tool-result", res.mi, res.bi, use.tool_id, detail, key=key)
        return
    merged = _merges_cleanly(p, msgs, use.home, res, out.reach)
    if merged:
        detail = (
            f"the result of tool_use {use.tool_id} ({use.name}) is in message {out.nb(res.mi, res.block)}, "
            f"not in message {out.n(use.home)} with the turn's other results; Anthropic merges "
            "the two, Bedrock rejects it."
        )
    else:
        detail = (
            f"the result of tool_use {use.tool_id} ({use.name}) is in message {out.nb(res.mi, res.block)}, "
            f"not in message {out.n(use.home)} right after the call."
        )
    out.add("misplaced-tool-result", res.mi, res.bi, use.tool_id, detail, key=key, lenient=merged)


def _merges_cleanly(
    p: Pairing, msgs: list[Message], home: int, res: Result, reach: dict[int, int]
) -> bool:
    """True when only result-only user messages lie between home and the result's message,
    so a provider that merges consecutive user turns sees the results first. `reach` keeps,
    per home, the first message after it that is not result-only: one walk per home."""
    end = reach.get(home)
    if end is None:
        end = home
        while msgs[end].role == "user" and all(b.type == TOOL_RESULT for b in msgs[end].blocks):
            nxt = p.next_live.get(end)
            if nxt is None:
                break
            end = nxt
        reach[home] = end
    if not home <= res.mi <= end:
        return False
    return all(b.type == TOOL_RESULT for b in msgs[res.mi].blocks[: res.bi])


def _client_findings(msgs: list[Message], out: _Collector) -> None:
    """What the client target adds after the history on its own (where a code declares it)."""
    if out.client is None or not codes.get("trailing-tool-results").repair_by_client(out.target):
        return
    for mi in out.client.added_after:
        out.add(
            "trailing-tool-results",
            mi,
            None,
            None,
            "the session ends on tool results the model has not answered.",
            key=(msgs[mi].uid,),
        )


def _shape_findings(
    p: Pairing, msgs: list[Message], out: _Collector, only: set[int] | None = None
) -> None:
    last_live = p.live[-1] if p.live else None
    separate_results = targets.get(out.target).separate_results
    client = targets.get(out.target).is_client
    # (over every live message: `prev` is the message looked at before, `m.live` holds, and
    # the usual text block's blank test is spelt out; with `only`, neither holds)
    prev: int | None = None
    for mi in p.live if only is None else sorted(only):
        m = msgs[mi]
        if only is not None:
            if not m.live:
                continue
            prev = p.prev_live.get(mi)
        role = m.role
        if m._plain_shape:  # (`Message.plain_shape`): neither rule below finds anything
            if prev is not None and msgs[prev].role == role:
                _same_role(msgs, out, prev, mi, separate_results)
            prev = mi
            continue
        blocks = m.blocks
        # tool-result-not-first: one finding per message, at the first late result (a result
        # in an assistant message is wrong-role-block instead; without one, nothing is late)
        if role != "assistant" and m.tool_ids()[1]:
            seen_other = None
            for bi, b in enumerate(blocks):
                if b.type == TOOL_RESULT:
                    if seen_other is not None:
                        out.add(
                            "tool-result-not-first",
                            mi,
                            bi,
                            b.tool_id,
                            f"a {blocks[seen_other].type} block (block {seen_other}) comes "
                            "before the tool_result blocks; results must come first in the "
                            "message.",
                            key=(m.uid,),
                        )
                        break
                elif seen_other is None and not (b.tool_id and b.type == "text"):
                    seen_other = bi
        # A client resumes by sending a new prompt after the history: its last assistant
        # message is not the final one of the request.
        final_assistant = mi == last_live and role == "assistant" and not client
        # A final assistant message may be empty, but not whitespace: the API refuses trailing
        # whitespace there, so one holding only whitespace is repaired like an empty one.
        if not final_assistant or _whitespace_only(blocks):
            if not blocks:
                out.add(
                    "empty-content",
                    mi,
                    None,
                    None,
                    f"the {role} message has empty content; only a final assistant message "
                    "may be empty.",
                    key=(m.uid,),
                )
            else:
                for bi, b in enumerate(blocks):
                    if b.type != "text":
                        continue
                    data = b.data
                    text = data.get("text") if type(data) is dict else None
                    if text.isspace() if type(text) is str and text else _blank_text(data):
                        out.add(
                            "empty-content",
                            mi,
                            bi,
                            None,
                            f"text block {bi} is empty or whitespace only; text blocks must "
                            "contain non-whitespace text.",
                            key=(m.uid, b.bid),
                        )
        if prev is not None and msgs[prev].role == role:
            _same_role(msgs, out, prev, mi, separate_results)
        prev = mi


def _same_role(
    msgs: list[Message], out: _Collector, prev: int, mi: int, separate_results: bool
) -> None:
    """consecutive-same-role: message `mi` has the role of the live message before it."""
    results_only = bool(msgs[prev].blocks) and all(b.type == TOOL_RESULT for b in msgs[prev].blocks)
    if not (separate_results and results_only):
        out.add(
            "consecutive-same-role",
            mi,
            None,
            None,
            f"two {msgs[mi].role} messages in a row (messages {out.n(prev)} and {out.n(mi)}).",
            key=(msgs[mi].uid,),
        )


def _whitespace_only(blocks: Sequence[Block]) -> bool:
    """Only text blocks, all blank, and some whitespace in them (not merely empty)."""
    if not blocks or not all(b.type == "text" and _blank_text(b.data) for b in blocks):
        return False
    return any(block_text(b) for b in blocks)


_blank_text = text_is_blank  # (`not text or text.isspace()`: `not text.strip()`, no copy)


def _time_findings(
    p: Pairing, msgs: list[Message], out: _Collector, only: set[int] | None = None
) -> None:
    prev_t: float | None = None
    prev_i: int | None = None
    order: Iterable[int] = p.live if only is None else sorted(only)
    if only is None:
        stamps = [t for t in map(_stamp, map(msgs.__getitem__, p.live)) if t is not None]
        if stamps == sorted(stamps):  # the usual case, found in C: every stamp in order
            order = ()
    for mi in order:
        t = msgs[mi].timestamp  # (a Claude Code message keeps it apart from a meta dict)
        if t is None or (only is not None and not msgs[mi].live):
            continue
        if only is not None:  # the live message stamped last before this one
            prev_i = p.prev_live.get(mi)
            while prev_i is not None and msgs[prev_i].timestamp is None:
                prev_i = p.prev_live.get(prev_i)
            prev_t = msgs[prev_i].timestamp if prev_i is not None else None
        if prev_t is not None and prev_i is not None and t < prev_t:
            out.add(
                "out-of-order-timestamp",
                mi,
                None,
                None,
                f"stamped {_fmt_delta(prev_t - t)} earlier than message {out.n(prev_i)} "
                f"({_fmt_time(t)} < {_fmt_time(prev_t)}).",
                key=(msgs[mi].uid,),
            )
        prev_t, prev_i = t, mi
    for res in p.checked_results:
        use = res.use
        if use is None:
            continue
        t_res, t_use = msgs[res.mi].timestamp, msgs[use.mi].timestamp
        if t_res is not None and t_use is not None and t_res < t_use:
            out.add(
                "result-before-use",
                res.mi,
                res.bi,
                use.tool_id,
                f"the result of tool_use {use.tool_id} ({use.name}) is stamped "
                f"{_fmt_delta(t_use - t_res)} before the call (message {out.nb(use.mi, use.block)}).",
                key=(msgs[res.mi].uid, res.block.bid),
            )


_stamp = attrgetter("timestamp")


def _fmt_delta(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 120:
        return f"{seconds:.1f} s"
    return f"{seconds / 60:.1f} min"


def _fmt_time(t: float) -> str:
    try:
        return datetime.fromtimestamp(t, UTC).strftime("%H:%M:%S.%f")[:-3]
    except (OverflowError, OSError, ValueError):
        return str(t)


def finding_order(f: Finding) -> tuple[int, int, int, str]:
    """How findings are listed: by message, block, severity (worst first), code."""
    return (
        f.position if f.position is not None else -1,
        f.block_index if f.block_index is not None else -1,
        f.severity.rank,
        f.code,
    )
