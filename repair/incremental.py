"""The analysis after a step, from the analysis before it: only the messages the step
changed and what pairs with them are looked at again.

A step (one fix applied, undone or redone) replaces a few messages (`changed`: their
positions; messages are never mutated, an edited one is a new object). What the analysis
finds depends on the rest of the session through tool ids (a result pairs with a call of
the same id anywhere, a repeated id is a duplicate of the first), through neighbours (a
call's home is the next live message, a turn's calls pair by position with its home's
unknown results, two messages of one role in a row) and through the numbering. So:

- the messages to pair again are the changed ones, every message holding a block with one
  of their tool ids (before or after the step), and the assistant message and home of
  each turn among them, until no new id comes in;
- they are paired by `pairing.pair` itself, on those messages alone with placeholders
  (same role, same liveness, no blocks) for the neighbours they read: the calls and
  results elsewhere keep their links, which cannot reach the re-paired ones;
- the findings are made again, by the analysis itself (`analysis._collect` with `only`),
  at those messages, at the message after each changed one, and where a
  misplaced-tool-result finding was (its detail reads the messages up to its call's
  home); every other finding is kept as it was.

Under a client target whose request was emulated (Claude Code repairs some faults when it
sends), the request is followed too: the stretch from an assistant message the client
keeps before the messages paired again to the next one after them is sent again on its
own (`Client.send_part`) and spliced into the request before; the numbers after it move
by what the stretch gained or lost, and where they moved every finding is made again (the
details name messages by number). The format's findings from its records (Claude Code's
chain) are made again after each step.

`reanalyze` declines (None: analyse the whole session) where that does not hold: messages
came or went (positions moved), a changed message changed its role, liveness, timestamp
or number of wire entries, the client's sending is emulated and cannot be sent in part (or
a tool id of the stretch lies outside it), whether the client repairs something changed,
or the ids to pair again reach a large part of the session. tests/engine/test_incremental.py
checks it equals `analyze` after random steps, Claude Code sessions included.
"""

from __future__ import annotations

import weakref
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, TypeVar

from . import clients, codes, wire
from .analysis import Analysis, _collect, add_record_findings, finding_order
from .gcpause import gc_paused
from .model import Message, Session
from .pairing import Pairing, Result, Use, pair

if TYPE_CHECKING:
    from .formats.base import Adapter

_Tool = TypeVar("_Tool", Use, Result)  # a call or a result

# Beyond this share of the messages, pairing them again is no cheaper than the whole.
_MAX_SHARE = 0.2


def reanalyze(
    before: Analysis, old: list[Message], session: Session, changed: frozenset[int] | None
) -> Analysis | None:
    """The analysis of `session` (its target), given `before`, the analysis of the message
    list `old` it was made from by replacing the messages at `changed`; None when this
    step needs the whole analysis."""
    with gc_paused():
        return _reanalyze(before, old, session, changed)


def _reanalyze(
    before: Analysis, old: list[Message], session: Session, changed: frozenset[int] | None
) -> Analysis | None:
    new = session.messages
    target = session.target
    if changed is None or len(old) != len(new) or before.target != target:
        return None
    if not changed:
        return before
    client = clients.get(target)
    if client is not None and not client.only_repairs:
        return None
    load = {id(f) for f in session.load_findings}
    if sum(1 for f in before.findings if id(f) in load) != len(session.load_findings):
        return None
    w = wire.wire_for(target)
    for c in changed:
        a, b = old[c], new[c]
        if (
            a.role != b.role
            or a.live != b.live
            or a.timestamp != b.timestamp
            or wire.is_sent(a, w) != wire.is_sent(b, w)
        ):
            return None
        if w.split is not wire.WIRES["anthropic"].split and _entries(a, w) != _entries(b, w):
            return None
    p = before.pairing
    got = _to_pair_again(p, old, new, changed)
    if got is None:
        return None
    redo, ids = got
    pairing = _pair_again(p, new, redo, ids, adapter=session.adapter)
    where = set(redo)
    for c in changed:
        nxt = p.next_live.get(c)
        if nxt is not None:
            where.add(nxt)
    where.update(
        f.position
        for f in before.findings
        if f.code == "misplaced-tool-result" and f.position is not None
    )
    numbers, sent, request = before.numbers, before.sent, before.request
    if request is not None:
        # the client's request: sent again from an assistant message it keeps before the
        # step to one after it, spliced into the request before
        if (
            client is None
            or client.send_part is None
            or w.split is not wire.WIRES["anthropic"].split
        ):
            return None
        resent = _resend(client.send_part, before, p, pairing, old, new, redo, w)
        if resent is None:
            return None
        request, numbers, sent, start, stop = resent
        where.update(range(start, stop))
        if numbers != before.numbers:  # the details name messages by number
            where.update(f.position for f in before.findings if f.position is not None)
    records = {id(f) for f in before.records}
    positions = sorted(where)
    view = Pairing(
        _at(pairing.uses, positions),
        _at(pairing.results, positions),
        pairing.live,
        pairing.next_live,
        pairing.prev_live,
        pairing.uses_by_message,
        pairing.results_by_message,
        pairing.wrong_role,
    )
    out = _collect(view, new, target, numbers, request, where)
    kept = [
        f
        for f in before.findings
        if f.position not in where and id(f) not in load and id(f) not in records
    ]
    made = out.findings
    found = add_record_findings(session, out)
    if client is not None:
        # whether the client repairs something decides what the analysis reads (its
        # request, or the messages as they are): where that changes, the whole
        repairs = any(codes.get(f.code).repair_by_client(target) for f in (*kept, *made))
        if repairs != (request is not None):
            return None
    findings = kept + out.findings + list(session.load_findings)
    findings.sort(key=finding_order)
    return Analysis(findings, pairing, target, numbers, sent, request, found)


def _resend(
    send_part: Callable[[list[Message], int, int], wire.Request],
    before: Analysis,
    p_old: Pairing,
    p_new: Pairing,
    old: list[Message],
    new: list[Message],
    redo: list[int],
    w: wire.Wire,
) -> tuple[wire.Request, list[int | None], int, int, int] | None:
    """The client's request after a step, from `before.request`: the messages from an
    assistant message the client keeps at or before the first position paired again
    (`start`; 0 when there is none) to the next such message after the last (`stop`; the
    end when none) are sent again on their own and spliced in. The client's sending reads
    the rest of the session only through tool ids (which results exist, which call ids
    came before): every id of the stretch must lie within it, before and after the step.
    Returns the request, the numbers, the entries sent, start and stop; None to decline."""
    req = before.request
    assert req is not None
    if req.dropped or req.added_after or req.changed:
        return None
    first = _first_sent(req)
    n = len(new)
    limit = max(64, int(n * _MAX_SHARE))

    def keeps(k: int) -> bool:  # the client sends assistant message k, its own first
        i = first.get(k)
        return i is not None and req.messages[i].role == "assistant"

    start = redo[0]
    while start > 0 and not keeps(start):
        start -= 1
        if redo[0] - start > limit:
            return None
    stop = redo[-1] + 1
    while stop < n and not keeps(stop):
        stop += 1
        if stop - redo[-1] > limit:
            return None
    if stop - start > limit:
        return None
    at_old, at_new = _ids_at(p_old), _ids_at(p_new)
    own: set[str] = set()
    for k in range(start, stop):
        for m in (old[k], new[k]):
            for b in m.blocks:
                if b.tool_id:
                    own.add(b.tool_id)
    for tid in own:
        for at in (at_old.get(tid, ()), at_new.get(tid, ())):
            if any(not start <= k < stop for k in at):
                return None
    part = send_part(new, start, stop)
    if start > 0 and not (
        part.messages
        and part.messages[0].role == "assistant"
        and part.messages[0].positions[:1] == [start]
    ):
        return None  # the client no longer keeps the message the stretch starts with
    i1 = first[start] if start > 0 else 0
    i2 = first[stop] if stop < n else len(req.messages)
    request = wire.Request(
        req.sender,
        req.messages[:i1] + part.messages + req.messages[i2:],
        client=req.client,
        left_out=[e for e in req.left_out if not start <= e[0] < stop] + part.left_out,
        answered={a for a in req.answered if a not in own} | part.answered,
    )
    # numbers: the stretch numbered from its first entry, those after moved by the change
    base = before.numbers[start] if start > 0 else 0
    assert base is not None
    numbers = list(before.numbers[:start])
    mine: list[int | None] = [None] * (stop - start)
    entry = base
    for sm in part.messages:
        for k in sm.positions:
            if mine[k - start] is None:
                mine[k - start] = entry
        entry += len(w.split(sm))
    numbers += mine
    end = before.numbers[stop] if stop < n else before.sent
    assert end is not None
    delta = entry - end
    tail = before.numbers[stop:]
    numbers += [k if k is None else k + delta for k in tail] if delta else tail
    return request, numbers, before.sent + delta, start, stop


def _first_sent(req: wire.Request) -> dict[int, int]:
    """Session position -> the index of the sent message it opens (kept with the request:
    each step's spliced request gets its own)."""
    got = req.__dict__.get("_first_sent")
    if got is None:
        got = {sm.positions[0]: i for i, sm in enumerate(req.messages) if sm.positions}
        req.__dict__["_first_sent"] = got
    return got


def _entries(m: Message, w: wire.Wire) -> int:
    return len(w.split(wire.SentMessage(m.role or "user", wire.sent_blocks(m), [])))


def _ids_at(p: Pairing) -> dict[str, list[int]]:
    """Tool id -> the positions of the calls and results that carry it (kept with the
    pairing: each step's pairing gets its own, updated)."""
    got = p.__dict__.get("_ids_at")
    if got is None:
        got = {}
        for u in p.uses:
            if u.tool_id:
                got.setdefault(u.tool_id, []).append(u.mi)
        for r in p.results:
            if r.tool_id:
                got.setdefault(r.tool_id, []).append(r.mi)
        p.__dict__["_ids_at"] = got
    return got


def prepare(analysis: Analysis) -> None:
    """Index the analysis's calls and results by tool id now (a worker does it after a
    whole analysis), so that the first step after it need not."""
    with gc_paused():
        _ids_at(analysis.pairing)
        _wrong_at(analysis.pairing)


def _wrong_at(p: Pairing) -> set[int]:
    """The positions of the calls and results in the wrong role's message (kept with the
    pairing, like `_ids_at`)."""
    got = p.__dict__.get("_wrong_at")
    if got is None:
        got = set()
        if p.wrong_role:
            got = {u.mi for u in p.uses if u.wrong_role} | {r.mi for r in p.results if r.wrong_role}
        p.__dict__["_wrong_at"] = got
    return got


def _to_pair_again(
    p: Pairing, old: list[Message], new: list[Message], changed: frozenset[int]
) -> tuple[list[int], set[str]] | None:
    """The positions whose calls and results are paired again (sorted) and the tool ids
    they hold (every position holding one is among them); None when too many."""
    at = _ids_at(p)
    limit = max(64, int(len(new) * _MAX_SHARE))
    todo = sorted(changed)
    seen: set[int] = set()
    ids: set[str] = set()
    while todo:
        mi = todo.pop()
        if mi in seen:
            continue
        seen.add(mi)
        if len(seen) > limit:
            return None
        for m in (old[mi], new[mi]) if mi in changed else (new[mi],):
            for b in m.blocks:
                tid = b.tool_id
                if tid and tid not in ids:
                    ids.add(tid)
                    todo.extend(at.get(tid, ()))
        # a turn is paired with its home: the call message and the message after it
        if new[mi].live:
            nxt, prv = p.next_live.get(mi), p.prev_live.get(mi)
            if new[mi].role == "assistant" and nxt is not None:
                todo.append(nxt)
            if prv is not None and new[prv].role == "assistant":
                todo.append(prv)
    return sorted(seen), ids


def _pair_again(
    p: Pairing, new: list[Message], redo: list[int], ids: set[str], adapter: Adapter
) -> Pairing:
    """`p` with the calls and results of the messages at `redo` paired again."""
    redo_set = set(redo)
    # the messages paired, with placeholders for the neighbours they read: each one's next
    # live message (a call's home) and the live assistant message before it (whose calls
    # a result looks at first)
    take: set[int] = set(redo)
    for mi in redo:
        nxt = p.next_live.get(mi)
        if nxt is not None:
            take.add(nxt)
        prv = p.prev_live.get(mi)
        while prv is not None:
            take.add(prv)
            if new[prv].role == "assistant":
                break
            prv = p.prev_live.get(prv)
    order = sorted(take)
    part = [new[mi] if mi in redo_set else _placeholder(new[mi]) for mi in order]
    sub = pair(part, remap=not getattr(adapter, "unique_call_ids", False))
    for u in sub.uses:
        u.mi = order[u.mi]
        if u.home is not None:
            u.home = order[u.home]
    for r in sub.results:
        r.mi = order[r.mi]
    uses_by_message = dict(p.uses_by_message)
    results_by_message = dict(p.results_by_message)
    for mi in redo:
        uses_by_message.pop(mi, None)
        results_by_message.pop(mi, None)
    for k, calls in sub.uses_by_message.items():
        uses_by_message[order[k]] = calls
    for k, answers in sub.results_by_message.items():
        results_by_message[order[k]] = answers
    uses = _replace(p.uses, redo, sub.uses)
    results = _replace(p.results, redo, sub.results)
    fresh: list[Use | Result] = [*sub.uses, *sub.results]
    wrong_at = (_wrong_at(p) - redo_set) | {x.mi for x in fresh if x.wrong_role}
    out = Pairing(
        uses,
        results,
        p.live,
        p.next_live,
        p.prev_live,
        uses_by_message,
        results_by_message,
        bool(wrong_at),
    )
    at = dict(_ids_at(p))
    for tid in ids:
        at.pop(tid, None)
    for x in fresh:
        if x.tool_id:
            at.setdefault(x.tool_id, []).append(x.mi)
    out.__dict__["_ids_at"] = at
    out.__dict__["_wrong_at"] = wrong_at
    out.__dict__["_from"] = (weakref.ref(p), frozenset(redo))
    return out


def paired_again(a: Pairing, b: Pairing) -> frozenset[int] | None:
    """The positions whose calls and results differ between pairings `a` and `b`, where
    one was made from the other by a step's increment (either way: an undo goes back to
    the pairing before); None when that is not known."""
    if a is b:
        return frozenset()
    for x, y in ((a, b), (b, a)):
        got: tuple[weakref.ref[Pairing], frozenset[int]] | None = y.__dict__.get("_from")
        if got is not None and got[0]() is x:
            return got[1]
    return None


def _replace(items: list[_Tool], positions: list[int], fresh: list[_Tool]) -> list[_Tool]:
    """`items` (calls or results in file order) with those of the messages at `positions`
    (sorted) replaced by `fresh` (in file order)."""
    out: list[_Tool] = []
    start = 0
    k = 0
    for mi in positions:
        lo = bisect_left(items, mi, lo=start, key=_mi)
        hi = bisect_right(items, mi, lo=lo, key=_mi)
        out += items[start:lo]
        while k < len(fresh) and fresh[k].mi == mi:
            out.append(fresh[k])
            k += 1
        start = hi
    out += items[start:]
    return out


def _at(items: list[_Tool], positions: list[int]) -> list[_Tool]:
    """The calls or results (in file order) of the messages at `positions` (sorted)."""
    out: list[_Tool] = []
    for mi in positions:
        lo = bisect_left(items, mi, key=_mi)
        out += items[lo : bisect_right(items, mi, lo=lo, key=_mi)]
    return out


_mi = attrgetter("mi")  # a call's or result's message position

_PLACEHOLDERS: dict[tuple[str | None, bool, bool], Message] = {}


def _placeholder(m: Message) -> Message:
    """A message with `m`'s role and liveness and no blocks."""
    key = (m.role, m.hidden, m.malformed is not None)
    got = _PLACEHOLDERS.get(key)
    if got is None:
        got = _PLACEHOLDERS[key] = Message(
            role=m.role, blocks=(), hidden=m.hidden, malformed="" if m.malformed else None
        )
    return got


def changed_positions(old: list[Message], new: list[Message]) -> frozenset[int] | None:
    """Positions in `new` holding a message that is not in `old` (messages are never
    mutated: an edited one is a new object); None when messages came or went, so every
    position after the first change moved."""
    if len(old) != len(new):
        return None
    return frozenset(i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a is not b)
