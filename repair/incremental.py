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

A step that inserts or drops messages (a result moved home out of a message it empties, a
result inserted as a message of its own) is a `Shift` (`changes`): one stretch of the
list replaced by more or fewer messages, every position after it moved. The pairing is
moved first (`_moved`: the calls and results after the stretch are copies at their new
positions, the old analysis keeps its own; the live messages, the per-message lists and
the id index move with them, the id index lazily), then the stretch, both ends of every
link that crosses it and the live messages next to it are paired again as above. The
request's entries after the stretch move with it, the provider's numbers after it move by
the entries the stretch gained or lost, and every finding is made again (positions and
numbers moved), with the first stamped message after the stretch (its stamp is compared
with another now).

`reanalyze` declines (None: analyse the whole session) where that does not hold: a changed
message (same count) changed its role, liveness, timestamp or number of wire entries, the
stretch of a shift is a large part of the session, the client's sending is emulated and
cannot be sent in part (or a tool id of the stretch lies outside it), whether the client
repairs something changed, or the ids to pair again reach a large part of the session.
tests/engine/test_incremental.py checks it equals `analyze` after random steps (shifts
included), Claude Code sessions included, and after any stretch replaced by another.
"""

from __future__ import annotations

import sys
import weakref
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from itertools import groupby
from operator import attrgetter, is_, itemgetter
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


@dataclass(frozen=True, slots=True)
class Shift:
    """Messages came or went, in one stretch: `old[start:old_stop]` became
    `new[start:stop]` (the messages around it are the same objects), so every position at
    or after `old_stop` moved by `delta`."""

    start: int
    old_stop: int
    stop: int

    @property
    def delta(self) -> int:
        return self.stop - self.old_stop

    def moved(self, k: int) -> int | None:
        """Where old position `k` is now (None: it was in the stretch)."""
        if k < self.start:
            return k
        return None if k < self.old_stop else k + self.stop - self.old_stop

    def inverse(self) -> Shift:
        """The shift that takes the new positions back (an undo)."""
        return Shift(self.start, self.stop, self.old_stop)


Change = frozenset[int] | Shift  # what a step changed: positions (as many messages) or a Shift


def reanalyze(
    before: Analysis, old: list[Message], session: Session, changed: Change | None
) -> Analysis | None:
    """The analysis of `session` (its target), given `before`, the analysis of the message
    list `old` it was made from by replacing the messages at `changed` (or, a `Shift`,
    those of one stretch by as many others or more or fewer); None when this step needs
    the whole analysis."""
    with gc_paused():
        return _reanalyze(before, old, session, changed)


def _reanalyze(
    before: Analysis, old: list[Message], session: Session, changed: Change | None
) -> Analysis | None:
    new = session.messages
    target = session.target
    if changed is None or before.target != target:
        return None
    shift = changed if isinstance(changed, Shift) else None
    if shift is None:
        if len(old) != len(new):
            return None
        if not changed:
            return before
    elif len(new) - len(old) != shift.delta or max(shift.stop, shift.old_stop) - shift.start > max(
        64, int(len(new) * _MAX_SHARE)
    ):
        return None
    client = clients.get(target)
    if client is not None and not client.only_repairs:
        return None
    load = {id(f) for f in session.load_findings}
    if sum(1 for f in before.findings if id(f) in load) != len(session.load_findings):
        return None
    w = wire.wire_for(target)
    if shift is None:
        assert isinstance(changed, frozenset)
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
        got = _to_pair_again(p, new, changed, [old[c] for c in changed])
    else:
        # every position after the stretch moves: the pairing moved first, then the
        # stretch, the pairs that cross it and its neighbours are paired again
        moved = _moved(before.pairing, new, shift)
        if moved is None:
            return None
        p, seeds = moved
        got = _to_pair_again(p, new, seeds, old[shift.start : shift.old_stop])
    if got is None:
        return None
    redo, ids = got
    pairing = _pair_again(p, new, redo, ids, adapter=session.adapter)
    where = set(redo)
    if isinstance(changed, frozenset):
        for c in changed:
            nxt = p.next_live.get(c)
            if nxt is not None:
                where.add(nxt)
        where.update(
            f.position
            for f in before.findings
            if f.code == "misplaced-tool-result" and f.position is not None
        )
    elif shift is not None:
        pairing.__dict__["_from"] = (weakref.ref(before.pairing), frozenset(redo), shift)
        stamped = _next_stamped(p, new, shift)
        if stamped is not None:
            where.add(stamped)
        # every finding is made again: positions moved, and details name messages by
        # number or (not sent) by position
        for f in before.findings:
            if f.position is not None:
                k = shift.moved(f.position)
                if k is not None:
                    where.add(k)
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
        resent = _resend(client.send_part, before, pairing, old, new, redo, w, shift)
        if resent is None:
            return None
        request, numbers, sent, start, stop = resent
        where.update(range(start, stop))
        if numbers != before.numbers and shift is None:  # details name messages by number
            where.update(f.position for f in before.findings if f.position is not None)
    elif shift is not None:
        numbers, sent = _renumbered(before, new, target, shift)
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
        if (f.position not in where if shift is None else f.position is None)
        and id(f) not in load
        and id(f) not in records
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


def _next_stamped(p: Pairing, new: list[Message], shift: Shift) -> int | None:
    """The first stamped live message after a shift's stretch: it is compared with the
    stamped live message before it, which may now be another (the live messages next to
    the stretch are paired again, so their findings are made again already)."""
    live = p.live
    k = bisect_left(live, shift.stop)
    while k < len(live) and new[live[k]].timestamp is None:
        k += 1
    return live[k] if k < len(live) else None


def _renumbered(
    before: Analysis, new: list[Message], target: str, shift: Shift
) -> tuple[list[int | None], int]:
    """The provider's numbers after a shift, from those before: each message's entries are
    its own, so the stretch is numbered on its own and the numbers after it move."""
    old_numbers = before.numbers

    def entries_before(k: int) -> int:  # the entries of the messages before old position k
        while k < len(old_numbers):
            got = old_numbers[k]
            if got is not None:
                return got
            k += 1
        return before.sent

    base = entries_before(shift.start)
    part, count = wire.provider_numbers(new[shift.start : shift.stop], target)
    end = entries_before(shift.old_stop)
    delta = base + count - end
    tail = old_numbers[shift.old_stop :]
    numbers = old_numbers[: shift.start]
    numbers += [None if k is None else k + base for k in part]
    numbers += [k if k is None else k + delta for k in tail] if delta else tail
    return numbers, before.sent + delta


def _moved(p: Pairing, new: list[Message], shift: Shift) -> tuple[Pairing, set[int]] | None:
    """`p` with its positions moved by `shift` (in the new message list): the calls and
    results after the stretch are copies at their new positions (the old pairing keeps
    its own), those in it are left out; and the positions to pair again: the stretch, the
    live messages next to it, and both ends of every link that crosses it (a call before
    it answered after it). Live messages are found again in `new`."""
    d = shift.delta
    start, old_stop = shift.start, shift.old_stop
    old_uses, old_results = p.uses, p.results
    ua = bisect_left(old_uses, start, key=_mi)
    ub = bisect_left(old_uses, old_stop, lo=ua, key=_mi)
    ra = bisect_left(old_results, start, key=_mi)
    rb = bisect_left(old_results, old_stop, lo=ra, key=_mi)
    tail_uses, tail_results = old_uses[ub:], old_results[rb:]
    # (this runs over every call and result after the stretch: spelt out)
    moved_uses = [
        Use(
            u.mi + d,
            u.bi,
            u.block,
            u.order,
            None if u.home is None else u.home + d,
            u.results,
            u.dup_of,
            u.partner,
            u.wrong_role,
        )
        for u in tail_uses
    ]
    moved_results = [
        Result(r.mi + d, r.bi, r.block, r.use, r.before_use, r.partner, r.wrong_role)
        for r in tail_results
    ]
    use_of = dict(zip(map(id, tail_uses), moved_uses, strict=True)).get
    result_of = dict(zip(map(id, tail_results), moved_results, strict=True)).get
    seeds = set(range(shift.start, shift.stop))
    # links between copies go to the copies; a link out of them crosses the stretch (or
    # reaches into it), and both its ends are paired again
    for u in moved_uses:
        got = u.results
        if len(got) == 1 and (x := result_of(id(got[0]))) is not None:
            u.results = [x]
        elif got:
            u.results = [result_of(id(r)) or r for r in got]
            for r in got:
                if result_of(id(r)) is None:
                    _cross(seeds, u, r, start)
        if u.dup_of is not None:
            u.dup_of = use_of(id(u.dup_of)) or u.dup_of
        if u.partner is not None:
            y = result_of(id(u.partner))
            if y is None:
                _cross(seeds, u, u.partner, start)
            else:
                u.partner = y
    for r in moved_results:
        if r.use is not None:
            z = use_of(id(r.use))
            if z is None:
                _cross(seeds, r, r.use, start)
            else:
                r.use = z
        if r.partner is not None:
            z = use_of(id(r.partner))
            if z is None:
                _cross(seeds, r, r.partner, start)
            else:
                r.partner = z
    uses_by_message = _before(p.uses_by_message, old_uses[:ua], start)
    for k, g in groupby((u for u in moved_uses if not u.wrong_role), _mi):
        uses_by_message[k] = list(g)
    results_by_message = _before(p.results_by_message, old_results[:ra], start)
    for k, g2 in groupby(moved_results, _mi):
        results_by_message[k] = list(g2)
    old_live = p.live
    k1 = bisect_left(old_live, start)
    k2 = bisect_left(old_live, old_stop, lo=k1)
    live = old_live[:k1]
    live += [i for i in range(start, shift.stop) if new[i].live]
    live += [i + d for i in old_live[k2:]]
    next_live = dict(zip(live, live[1:], strict=False))
    prev_live = dict(zip(live[1:], live, strict=False))
    # the live messages next to the stretch: a call's home, a result's turn
    k = bisect_left(live, shift.start)
    if k > 0:
        seeds.add(live[k - 1])
    k = bisect_left(live, shift.stop)
    if k < len(live):
        seeds.add(live[k])
    wrong_at = {x for x in (shift.moved(k) for k in _wrong_at(p)) if x is not None}
    out = Pairing(
        old_uses[:ua] + moved_uses,
        old_results[:ra] + moved_results,
        live,
        next_live,
        prev_live,
        uses_by_message,
        results_by_message,
        bool(wrong_at),
    )
    out.__dict__["_ids_at"] = _ids_at(p).moved(shift)
    out.__dict__["_wrong_at"] = wrong_at
    return out, seeds


def _before(
    by_message: Mapping[int, list[_Tool]], head: list[_Tool], start: int
) -> dict[int, list[_Tool]]:
    """The entries of `by_message` before position `start`, where `head` are the calls or
    results there: read from whichever is shorter."""
    if len(head) * 2 > len(by_message):
        return {k: v for k, v in by_message.items() if k < start}
    out: dict[int, list[_Tool]] = {}
    for x in head:
        k = x.mi
        if k not in out:
            got = by_message.get(k)
            if got is not None:
                out[k] = got
    return out


def _cross(seeds: set[int], moved: Use | Result, other: Use | Result, start: int) -> None:
    """A moved call or result linked to one that was not moved: both are paired again (one
    in the stretch is paired again with it, its ids among those the step replaced)."""
    seeds.add(moved.mi)
    if other.mi < start:
        seeds.add(other.mi)


def _resend(
    send_part: Callable[[list[Message], int, int], wire.Request],
    before: Analysis,
    p_new: Pairing,
    old: list[Message],
    new: list[Message],
    redo: list[int],
    w: wire.Wire,
    shift: Shift | None = None,
) -> tuple[wire.Request, list[int | None], int, int, int] | None:
    """The client's request after a step, from `before.request`: the messages from an
    assistant message the client keeps at or before the first position paired again
    (`start`; 0 when there is none) to the next such message after the last (`stop`; the
    end when none) are sent again on their own and spliced in. The client's sending reads
    the rest of the session only through tool ids (which results exist, which call ids
    came before): every id of the stretch must lie within it, before and after the step.
    After a `shift` the stretch holds the shift's, and what follows it moves.
    Returns the request, the numbers, the entries sent, start and stop; None to decline."""
    req = before.request
    assert req is not None
    if req.dropped or req.added_after or req.changed:
        return None
    first = _first_sent(req)
    n = len(new)
    d = 0 if shift is None else shift.delta
    limit = max(64, int(n * _MAX_SHARE))

    def keeps(k: int) -> bool:  # the client sends assistant message k, its own first
        if shift is not None:
            if k >= shift.stop:
                k -= d
            elif k >= shift.start:
                return False  # new: not in the request before
        i = first.get(k)
        return i is not None and req.messages[i].role == "assistant"

    if shift is not None:
        # a shift may pair nothing again (it drops messages that hold no tool id)
        lo = min(redo[0], shift.start) if redo else shift.start
        hi = max(redo[-1] + 1, shift.stop) if redo else shift.stop
    elif redo:
        lo, hi = redo[0], redo[-1] + 1
    else:
        return None
    start = lo
    while start > 0 and not keeps(start):
        start -= 1
        if lo - start > limit:
            return None
    stop = hi
    while stop < n and not keeps(stop):
        stop += 1
        if stop - hi > limit:
            return None
    if stop - start > limit:
        return None
    old_stop = stop - d  # where the stretch ends in `old`
    at_old, at_new = _ids_at(before.pairing), _ids_at(p_new)
    own: set[str] = set()
    for m in (*old[start:old_stop], *new[start:stop]):
        for b in m.blocks:
            if b.tool_id:
                own.add(b.tool_id)
    for tid in own:
        if any(not start <= k < old_stop for k in at_old.get(tid)):
            return None
        if any(not start <= k < stop for k in at_new.get(tid)):
            return None
    part = send_part(new, start, stop)
    if start > 0 and not (
        part.messages
        and part.messages[0].role == "assistant"
        and part.messages[0].positions[:1] == [start]
    ):
        return None  # the client no longer keeps the message the stretch starts with
    i1 = first[start] if start > 0 else 0
    i2 = first[old_stop] if old_stop < len(old) else len(req.messages)
    tail = req.messages[i2:]
    if d:
        SentMessage = wire.SentMessage
        tail = [
            SentMessage(
                sm.role,
                sm.blocks,
                [sm.positions[0] + d] if len(sm.positions) == 1 else [k + d for k in sm.positions],
            )
            for sm in tail
        ]
    request = wire.Request(
        req.sender,
        req.messages[:i1] + part.messages + tail,
        client=req.client,
        left_out=[e for e in req.left_out if e[0] < start]
        + part.left_out
        + [(e[0] + d, e[1], e[2]) for e in req.left_out if e[0] >= old_stop],
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
    end = before.numbers[old_stop] if old_stop < len(old) else before.sent
    assert end is not None
    delta = entry - end
    after = before.numbers[old_stop:]
    numbers += [k if k is None else k + delta for k in after] if delta else after
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


class _IdIndex:
    """Tool id -> the positions of the calls and results that carry it (kept with the
    pairing: each step's pairing gets its own). After steps whose messages came or went,
    the positions read from `base` are moved when read, through `moves` (the shifts so far
    composed: the runs of positions of `base` that are still there, each with what it
    moved by) rather than all at once; `own` holds the ids paired again since, at their
    positions now."""

    __slots__ = ("base", "moves", "own")

    def __init__(
        self,
        base: dict[str, list[int]],
        moves: tuple[tuple[int, int, int], ...] | None = None,
        own: dict[str, list[int]] | None = None,
    ) -> None:
        self.base = base
        self.moves = moves  # (first, end, by) runs of base positions, sorted; None: none moved
        self.own = own if own is not None else {}

    def get(self, tid: str) -> list[int]:
        got = self.own.get(tid)
        if got is not None:
            return got
        at = self.base.get(tid, [])
        moves = self.moves
        if moves is None:
            return at
        out = []
        for k in at:
            i = bisect_right(moves, k, key=_first) - 1
            if i >= 0 and k < moves[i][1]:
                out.append(k + moves[i][2])
        return out

    def moved(self, shift: Shift) -> _IdIndex:
        """The index after `shift`."""
        own = {
            tid: [k for k in map(shift.moved, at) if k is not None] for tid, at in self.own.items()
        }
        runs: list[tuple[int, int, int]] = []
        for first, end, by in self.moves if self.moves is not None else ((0, sys.maxsize, 0),):
            # the run's positions now are [first + by, end + by): cut at the stretch
            cut1 = min(max(shift.start - by, first), end)
            cut2 = min(max(shift.old_stop - by, first), end)
            if first < cut1:
                runs.append((first, cut1, by))
            if cut2 < end:
                runs.append((cut2, end, by + shift.delta))
        return _IdIndex(self.base, tuple(runs), own)

    def replaced(self, ids: set[str], fresh: Iterable[Use | Result]) -> _IdIndex:
        """The index after the calls and results carrying `ids` were paired again."""
        own = {tid: at for tid, at in self.own.items() if tid not in ids}
        if self.moves is None:
            base = dict(self.base)
            for tid in ids:
                base.pop(tid, None)
            for x in fresh:
                if x.tool_id:
                    base.setdefault(x.tool_id, []).append(x.mi)
            return _IdIndex(base, None, own)
        for tid in ids:
            own[tid] = []
        for x in fresh:
            if x.tool_id:
                own.setdefault(x.tool_id, []).append(x.mi)
        return _IdIndex(self.base, self.moves, own)


_first = itemgetter(0)


def _ids_at(p: Pairing) -> _IdIndex:
    """The pairing's `_IdIndex`, built when first asked for."""
    got = p.__dict__.get("_ids_at")
    if got is None:
        base: dict[str, list[int]] = {}
        for u in p.uses:
            if u.tool_id:
                base.setdefault(u.tool_id, []).append(u.mi)
        for r in p.results:
            if r.tool_id:
                base.setdefault(r.tool_id, []).append(r.mi)
        got = p.__dict__["_ids_at"] = _IdIndex(base)
    return got


def prepare(analysis: Analysis) -> None:
    """Index the analysis's calls and results by tool id now (a worker does it after a
    whole analysis), so that the first step after it need not."""
    with gc_paused():
        _ids_at(analysis.pairing)
        _wrong_at(analysis.pairing)
        if analysis.request is not None:
            _first_sent(analysis.request)


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
    p: Pairing, new: list[Message], changed: Iterable[int], gone: Iterable[Message]
) -> tuple[list[int], set[str]] | None:
    """The positions whose calls and results are paired again (sorted) and the tool ids
    they hold (every position holding one is among them), from the positions `changed`
    and the messages the step replaced (`gone`: their ids count too); None when too
    many."""
    at = _ids_at(p)
    limit = max(64, int(len(new) * _MAX_SHARE))
    todo = sorted(changed)
    seen: set[int] = set()
    ids: set[str] = set()
    for m in gone:
        for b in m.blocks:
            tid = b.tool_id
            if tid and tid not in ids:
                ids.add(tid)
                todo.extend(at.get(tid))
    while todo:
        mi = todo.pop()
        if mi in seen:
            continue
        seen.add(mi)
        if len(seen) > limit:
            return None
        for b in new[mi].blocks:
            tid = b.tool_id
            if tid and tid not in ids:
                ids.add(tid)
                todo.extend(at.get(tid))
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
    out.__dict__["_ids_at"] = _ids_at(p).replaced(ids, fresh)
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
        got = y.__dict__.get("_from")
        if got is not None and got[0]() is x and len(got) == 2:
            again: frozenset[int] = got[1]
            return again
    return None


def shifted_again(a: Pairing, b: Pairing) -> tuple[Shift, frozenset[int]] | None:
    """Where pairing `b` was made from `a` (or `a` from `b`: an undo) by a step whose
    messages came or went: the shift from `a`'s positions to `b`'s, and the positions in
    `b` whose calls and results were paired again; None when that is not known."""
    got = b.__dict__.get("_from")
    if got is not None and got[0]() is a and len(got) == 3:
        return got[2], got[1]
    got = a.__dict__.get("_from")
    if got is not None and got[0]() is b and len(got) == 3:
        shift: Shift = got[2]
        back = shift.inverse()
        again = {x for x in (back.moved(k) for k in got[1]) if x is not None}
        again.update(range(shift.start, shift.old_stop))
        return back, frozenset(again)
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


def changes(old: list[Message], new: list[Message]) -> Change:
    """What a step changed from `old` to `new`: the positions of the new messages
    (`changed_positions`), or where messages came or went, the `Shift` of the one stretch
    holding every difference (the longest run of the same messages at each end left out)."""
    got = changed_positions(old, new)
    if got is not None:
        return got
    n = min(len(old), len(new))
    same = list(map(is_, old, new))
    a = same.index(False) if False in same else n
    same = list(map(is_, reversed(old), reversed(new)))[: n - a]
    b = same.index(False) if False in same else n - a
    return Shift(a, len(old) - b, len(new) - b)


def changed_positions(old: list[Message], new: list[Message]) -> frozenset[int] | None:
    """Positions in `new` holding a message that is not in `old` (messages are never
    mutated: an edited one is a new object); None when messages came or went, so every
    position after the first change moved."""
    if len(old) != len(new):
        return None
    return frozenset(i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a is not b)
