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
  at those messages, at the message after each changed one (and the first stamped one
  after a changed stamp: it is compared with that stamp), and where a
  misplaced-tool-result finding was (its detail reads the messages up to its call's
  home); every other finding is kept as it was.

Under a client target whose request was emulated (Claude Code repairs some faults when it
sends), the request is followed too: the stretch from an assistant message the client
keeps before the messages paired again to the next one after them is sent again on its
own (`Client.send_part`) and spliced into the request before; the numbers after it move
by what the stretch gained or lost, and where they moved every finding is made again (the
details name messages by number). A request counted, not built (Codex's, always: its
numbers are those of the entries Codex sends) is counted again over the stretch paired
again (`Client.light_part`: Codex's sending starts afresh at every message) and spliced
into the count before: the numbers after it move by the entries it gained or lost, a
block's entry after it is read through the count before, moved. Both need every tool id
of the stretch to lie within it, before and after the step (the client reads the rest of
the session through them). The format's findings from its records (Claude Code's chain)
are made again after each step.

A step that inserts or drops messages (a result moved home out of a message it empties, a
result inserted as a message of its own) is a `Shift` (`changes`): one stretch of the
list replaced by more or fewer messages, every position after it moved. The pairing is
moved first (`_moved`: a `moved.MovedPairing` reads the calls and results of the last
whole pairing through the shifts since, copying one at its new position when it is first
read, so the step costs what it reads, not what follows the stretch; the old analysis
keeps its own; the id index moves the same way), then the stretch, both ends of every
link that crosses it and the live messages next to it are paired again as above. The
request's entries after the stretch move with it, the provider's numbers after it move by
the entries the stretch gained or lost, and every finding is made again (positions and
numbers moved), with the first stamped message after the stretch (its stamp is compared
with another now).

A round of `apply_all` changes short stretches all over the session (a thousand fixes):
its one `Shift` spans the session. After a lean analysis (`_apart`), the stretches are
found apart (`moved.apart`: the same messages between them skipped in C), the checked
calls and results copied at their positions now, and the stretches, the live messages
next to each and what shares an id or a turn with them paired again, as the analysis
pairs (usual pairs not made); every finding is made again, the messages read as they are
(a client that would repair a finding now: the whole analysis).

`reanalyze` declines (None: analyse the whole session) where that does not hold: a changed
message (same count) changed its role, liveness or number of wire entries (a
recounted request numbers again), the stretch of a shift is a large part of the session
and the analysis before it is not a lean one (or was built), the client's sending is
emulated and cannot be sent or counted in part (or a tool id of the stretch lies outside
it; a round apart under such a client), whether a client that only repairs repairs
something changed, or the ids to pair again reach a large part of the session.
tests/engine/test_incremental.py checks it equals `analyze` after random steps (shifts
included), Claude Code sessions included, after any stretch replaced by another, and
after rounds of stretches far apart; tests/engine/test_incremental_counted.py after steps
on Codex rollouts (random ones, generated ones, one where Codex repairs nothing).
"""

from __future__ import annotations

import weakref
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import compress, count, islice
from operator import attrgetter, indexOf, is_, is_not
from typing import TYPE_CHECKING, TypeVar

from . import clients, codes, wire
from .analysis import Analysis, _collect, _IdRules, add_record_findings, finding_order
from .gcpause import gc_paused
from .model import Block, Finding, Message, Session
from .moved import (
    UNMOVED,
    MovedPairing,
    Own,
    Runs,
    Spans,
    Stretch,
    apart,
    backwarding,
    compose,
    forward,
    forwarding,
    spliced,
)
from .moved import Shift as Shift  # (where tui/ finds it)
from .pairing import LeanPairing, Pairing, Result, Use, neighbours, pair

if TYPE_CHECKING:
    from .formats.base import Adapter

_Tool = TypeVar("_Tool", Use, Result)  # a call or a result

# Beyond this share of the messages, pairing them again is no cheaper than the whole.
_MAX_SHARE = 0.2


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
    elif len(new) - len(old) != shift.delta:
        return None
    elif max(shift.stop, shift.old_stop) - shift.start > max(64, int(len(new) * _MAX_SHARE)):
        return _apart(before, old, session, shift)  # (a round's fixes, spread out)
    client = clients.get(target)
    # a request counted (`Client.light`) is counted again over a stretch and spliced in
    # where the client counts a part (`Client.light_part`); else (a lean analysis's
    # request) there is nothing to splice into
    recount = before.request is not None and before.request.counted is not None
    if recount and (client is None or client.light_part is None):
        return None
    if recount and isinstance(changed, frozenset) and _too_far_apart(changed, len(new)):
        return None
    if not _may_follow(before, session):
        return None
    w = wire.wire_for(target)
    if shift is None:
        assert isinstance(changed, frozenset)
        for c in changed:
            a, b = old[c], new[c]
            if a.role != b.role or a.live != b.live or wire.is_sent(a, w) != wire.is_sent(b, w):
                return None
            if (
                not recount
                and w.split is not wire.WIRES["anthropic"].split
                and _entries(a, w) != _entries(b, w)
            ):
                return None  # (the numbers are kept: a recounted request numbers again)
        p = before.pairing
        got = _paired_again(p, session, changed, [(c, old[c]) for c in changed])
    else:
        # every position after the stretch moves: the pairing moved first, then the
        # stretch, the pairs that cross it and its neighbours are paired again
        moved = _moved(before.pairing, new, shift)
        if moved is None:
            return None
        p, seeds = moved
        got = _paired_again(
            p, session, seeds, [(None, m) for m in old[shift.start : shift.old_stop]]
        )
    if got is None:
        return None
    pairing, redo = got
    where = set(redo)
    if isinstance(changed, frozenset):
        for c in changed:
            nxt = p.next_live.get(c)
            if nxt is not None:
                where.add(nxt)
            if old[c].timestamp != new[c].timestamp:
                # the next stamped message is compared with this one's stamp now
                stamped = _next_stamped(p, new, c + 1)
                if stamped is not None:
                    where.add(stamped)
        where.update(
            f.position
            for f in before.findings
            if f.code == "misplaced-tool-result" and f.position is not None
        )
    elif shift is not None:
        pairing.__dict__["_from"] = (weakref.ref(before.pairing), frozenset(redo), shift)
        stamped = _next_stamped(p, new, shift.stop)
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
        # step to one after it (or counted again over the stretch paired again), spliced
        # into the request before
        assert client is not None
        if recount:
            assert client.light_part is not None
            resent = _recount(client, before, pairing, old, session, redo, shift)
        elif client.send_part is None or w.split is not wire.WIRES["anthropic"].split:
            return None
        else:
            resent = _resend(client.send_part, before, pairing, old, new, redo, w, shift)
        if resent is None:
            return None
        closing = request.added_after  # (a closing turn's message may lie before it)
        request, numbers, sent, start, stop = resent
        where.update(range(start, stop))
        where.update(request.added_after)
        if shift is None:
            where.update(closing)
        if numbers != before.numbers and shift is None:  # details name messages by number
            where.update(f.position for f in before.findings if f.position is not None)
    elif shift is not None:
        numbers, sent = _renumbered(before, new, target, shift)
    return _found(before, session, pairing, where, numbers, sent, request, all_at=shift is not None)


def _found(
    before: Analysis,
    session: Session,
    pairing: Pairing,
    where: set[int],
    numbers: list[int | None],
    sent: int,
    request: wire.Request | None,
    *,
    all_at: bool,
) -> Analysis | None:
    """The analysis after a step: the findings made again at `where` (with `all_at`, every
    finding at a message is among them: positions moved), the others kept; None where
    whether the client repairs something changed (it decides what the analysis reads: its
    request, or the messages as they are)."""
    new, target = session.messages, session.target
    load = {id(f) for f in session.load_findings}
    records = {id(f) for f in before.records}
    positions = sorted(where)
    checked = pairing.checked  # (a lean pairing followed: what its rules read)
    view = Pairing(
        checked.calls_in(positions),
        checked.results_in(positions),
        pairing.live,
        pairing.next_live,
        pairing.prev_live,
        checked.uses_by_message,
        checked.results_by_message,
        pairing.wrong_role,
    )
    out = _collect(view, new, target, numbers, request, where)
    kept = [
        f
        for f in before.findings
        if (f.position is None if all_at else f.position not in where)
        and id(f) not in load
        and id(f) not in records
    ]
    made = out.findings
    found = add_record_findings(session, out)
    client = clients.get(target)
    if client is not None and client.only_repairs:
        repairs = any(codes.get(f.code).repair_by_client(target) for f in (*kept, *made))
        if repairs != (request is not None):
            return None
    findings = kept + out.findings + list(session.load_findings)
    findings.sort(key=finding_order)
    return Analysis(findings, pairing, target, numbers, sent, request, found)


def _apart(before: Analysis, old: list[Message], session: Session, shift: Shift) -> Analysis | None:
    """The analysis after a step whose changes lie apart over much of the session (a
    round of `apply_all`: a thousand fixes, each inserting, dropping or replacing a few
    messages), from a lean one (`LeanPairing`, not built) before it: each stretch that
    changed (`moved.apart`) is paired again as one `Shift`'s is, all at once. The calls
    and results checked are copied at their positions now, each moved on its own (a link
    across a stretch needs no pairing again: what pairs reads the order of the messages,
    which did not change), the live messages found again in the stretches; the stretches,
    the live messages next to each, and what shares an id or a turn with them are paired
    again. Every finding is made again (positions and numbers moved), with the first
    stamped message after each stretch. A client's request is not spliced: the messages
    are read as they are, and where the client would repair a finding now, None (the
    whole analysis builds its request)."""
    new, target = session.messages, session.target
    p = before.pairing
    if not isinstance(p, LeanPairing) or p.built or p.checked_copies or p.wrong_role:
        return None
    client = clients.get(target)
    if (client is not None and not client.only_repairs) or not _may_follow(before, session):
        return None  # (its request numbers the messages: not spliced here)
    parts, runs = apart(old, new, shift)
    fwd = forwarding(runs)
    live = _live_apart(p.live, new, parts, runs, len(old))
    next_live, prev_live = neighbours(live, 1), neighbours(live, -1)
    mid = LeanPairing(
        new,
        p._remap,
        live,
        next_live,
        prev_live,
        _odd_moved(p.checked, fwd, (live, next_live, prev_live)),
        [],
    )
    seeds: set[int] = set()
    hint: dict[str, int] = {}  # an id a message of a stretch held -> its position before
    for a, b, c, d in parts:
        seeds.update(range(c, d))
        k = bisect_left(live, c)
        if k > 0:
            seeds.add(live[k - 1])
        if k < len(live) and live[k] < d:
            k = bisect_left(live, d, lo=k)
        if k < len(live):
            seeds.add(live[k])
        for i in range(a, b):
            if old[i].live:
                for held in old[i].tool_ids():
                    for tid in held:
                        if tid:
                            hint.setdefault(tid, i)
    mid.__dict__["_ids_at"] = _MovedIds(_ids_at(p), runs, hint, mid)
    gone = [(None, m) for a, b, _, _ in parts for m in old[a:b]]
    got = _paired_again(mid, session, seeds, gone)
    if got is None:
        return None
    pairing, redo = got
    where = set(redo)
    for _, _, _, d in parts:
        stamped = _next_stamped(pairing, new, d)
        if stamped is not None:
            where.add(stamped)
    for f in before.findings:
        if f.position is not None:
            moved = fwd(f.position)
            if moved is not None:
                where.add(moved)
    numbers, sent = wire.provider_numbers(new, target, len(live))
    return _found(before, session, pairing, where, numbers, sent, None, all_at=True)


def _too_far_apart(changed: Iterable[int], n: int) -> bool:
    """Whether positions `changed` (of `n` messages) reach over more than a share of the
    session that the increment follows: every one is paired again (`_to_pair_again`), so a
    request counted again over the stretch from the first to the last (`_stretch`) would be
    as long; known before any of it is paired (a round of `apply_all` that changed fixes
    all over the session: 0.2-0.5 s paired again, at 100k, then declined)."""
    limit = max(64, int(n * _MAX_SHARE))
    return bool(changed) and max(changed) - min(changed) + 1 > limit


def _too_many(positions: list[int], limit: int) -> bool:
    return len(positions) > limit and len(set(positions)) > limit


def _may_follow(before: Analysis, session: Session) -> bool:
    """Whether what the step may change can be followed: no client target whose sending is
    emulated whole (not only repairs) and cannot be counted in part, and the load's findings
    those of the analysis before."""
    client = clients.get(session.target)
    if client is not None and not client.only_repairs and client.light_part is None:
        return False
    load = {id(f) for f in session.load_findings}
    return sum(1 for f in before.findings if id(f) in load) == len(session.load_findings)


def _live_apart(
    old_live: list[int], new: list[Message], parts: list[Stretch], runs: Runs, n: int
) -> list[int]:
    """The live messages after the stretches `parts` (between `runs`, of the `n` old
    positions) changed: those of each run moved, those of each stretch found again."""
    if len(old_live) == n and all(new[k].live for _, _, c, d in parts for k in range(c, d)):
        return list(range(len(new)))  # (every message live before, and every new one)
    live: list[int] = []
    done = 0  # the new positions before it are done
    for first, end, by in runs:
        if first + by > done:  # a stretch's new messages
            live += [k for k in range(done, first + by) if new[k].live]
        end = min(end, n)
        i = bisect_left(old_live, first)
        j = bisect_left(old_live, end, lo=i)
        live += [k + by for k in old_live[i:j]] if by else old_live[i:j]
        done = end + by
    return live


def _odd_moved(
    odd: Pairing,
    forward: Callable[[int], int | None],
    live: tuple[list[int], Mapping[int, int], Mapping[int, int]],
) -> Pairing:
    """The calls and results of `odd` outside the stretches (`forward`: where an old
    position is now, None in a stretch), copied at their positions now, linked to each
    other's copies (a link into a stretch keeps the old one: its end shares an id or a
    turn with the stretch, so it is paired again and the copy replaced)."""
    copies: dict[int, Use | Result] = {}
    uses: list[Use] = []
    results: list[Result] = []
    for u in odd.uses:
        k = forward(u.mi)
        if k is not None:
            home = None if u.home is None else forward(u.home)
            c = Use(k, u.bi, u.block, u.order, home, u.results, u.dup_of, u.partner, u.wrong_role)
            copies[id(u)] = c
            uses.append(c)
    for r in odd.results:
        k = forward(r.mi)
        if k is not None:
            c2 = Result(k, r.bi, r.block, r.use, r.before_use, r.partner, r.wrong_role)
            copies[id(r)] = c2
            results.append(c2)
    for u in uses:
        u.results = [copies.get(id(r), r) for r in u.results]  # type: ignore[misc]
        if u.dup_of is not None:
            u.dup_of = copies.get(id(u.dup_of), u.dup_of)  # type: ignore[assignment]
        if u.partner is not None:
            u.partner = copies.get(id(u.partner), u.partner)  # type: ignore[assignment]
    for r in results:
        if r.use is not None:
            r.use = copies.get(id(r.use), r.use)  # type: ignore[assignment]
        if r.partner is not None:
            r.partner = copies.get(id(r.partner), r.partner)  # type: ignore[assignment]
    uses_by_message: dict[int, list[Use]] = {}
    for mi, turn in odd.uses_by_message.items():
        k = forward(mi)
        if k is not None:
            uses_by_message[k] = [copies[id(u)] for u in turn]  # type: ignore[misc]
    results_by_message: dict[int, list[Result]] = {}
    for mi, answers in odd.results_by_message.items():
        k = forward(mi)
        if k is not None:
            results_by_message[k] = [copies[id(r)] for r in answers]  # type: ignore[misc]
    return Pairing(uses, results, *live, uses_by_message, results_by_message, False)


class _MovedIds:
    """The tool-id index while the stretches of `_apart` are paired again: an id's
    positions now outside the stretches, those it had before (read from the index before,
    `old`, moved by `runs`; every position in a stretch is paired again anyway). The index
    before is asked with a message known to hold the id (what a lean index reads): the
    message's position before, or, for an id a message of a stretch held, that one's
    (`hint`; none: the index of every message is made). Once paired again, the pairing's
    index is the lean one of the messages now (`replaced`): an id no stretch holds is in a
    turn no stretch touched, or among the calls and results checked."""

    __slots__ = ("old", "forward", "backward", "hint", "p")

    def __init__(
        self, old: _IdIndex | _LeanIds, runs: Runs, hint: dict[str, int], p: LeanPairing
    ) -> None:
        self.old, self.hint, self.p = old, hint, p
        self.forward, self.backward = forwarding(runs), backwarding(runs)

    def get(self, tid: str, at: int | None = None) -> list[int]:
        k = None
        if at is not None:
            by = self.backward(at)
            if by is not None:
                k = at - by
        if k is None:
            k = self.hint.get(tid)
        return [x for x in map(self.forward, self.old.get(tid, k)) if x is not None]

    def replaced(self, ids: set[str], held: Iterable[tuple[str, int]]) -> _LeanIds:
        return _LeanIds(self.p).replaced(ids, held)


def _next_stamped(p: Pairing, new: list[Message], stop: int) -> int | None:
    """The first stamped live message at or after `stop` (the end of a shift's stretch):
    it is compared with the stamped live message before it, which may now be another
    (the live messages next to the stretch are paired again, so their findings are made
    again already)."""
    live = p.live
    k = bisect_left(live, stop)
    while k < len(live) and new[live[k]].timestamp is None:
        k += 1
    return live[k] if k < len(live) else None


def _renumbered(
    before: Analysis, new: list[Message], target: str, shift: Shift
) -> tuple[list[int | None], int]:
    """The provider's numbers after a shift, from those before: each message's entries are
    its own, so the stretch is numbered on its own and the numbers after it move."""
    part, count = wire.provider_numbers(new[shift.start : shift.stop], target)
    return _spliced_numbers(before, shift.start, shift.old_stop, part, count)


def _spliced_numbers(
    before: Analysis, start: int, old_stop: int, part: list[int | None], count: int
) -> tuple[list[int | None], int]:
    """The numbers after the messages [start, old_stop) of `before` were replaced by a
    stretch sent as `count` entries, numbered `part` from its first entry (the numbers
    after it move by the entries it gained or lost), and the entries sent in all."""
    old_numbers = before.numbers

    def entries_before(k: int) -> int:  # the entries of the messages before old position k
        while k < len(old_numbers):
            got = old_numbers[k]
            if got is not None:
                return got
            k += 1
        return before.sent

    base = entries_before(start)
    delta = base + count - entries_before(old_stop)
    tail = old_numbers[old_stop:]
    numbers = old_numbers[:start]
    numbers += [None if k is None else k + base for k in part]
    numbers += [k if k is None else k + delta for k in tail] if delta else tail
    return numbers, before.sent + delta


def _moved(p: Pairing, new: list[Message], shift: Shift) -> tuple[Pairing, set[int]] | None:
    """`p` with its positions moved by `shift` (in the new message list): a `MovedPairing`
    that reads the calls and results after the stretch at their new positions when asked
    for (those in it are left out), and the positions to pair again: the stretch, the live
    messages next to it, and both ends of every link that crosses it (a call before it
    answered after it: a `MovedPairing` moves a call and what it links to together). Live
    messages are found again in `new`."""
    if isinstance(p, MovedPairing):
        root, runs, own, gone_ids = p.root, p.runs, p.own, p.gone_ids
    else:
        root, runs, own, gone_ids = p, UNMOVED, {}, frozenset()
    d = shift.delta
    start, old_stop = shift.start, shift.old_stop
    seeds = set(range(start, shift.stop))
    for lo, hi in _long_links(root):
        a, b = forward(runs, lo), forward(runs, hi)
        if a is not None and b is not None and a not in own:
            _cross(seeds, a, b, shift)
    for calls, _, answers in own.values():
        for u in calls:
            for x in (*u.results, u.dup_of, u.partner):
                if x is not None:
                    _cross(seeds, min(u.mi, x.mi), max(u.mi, x.mi), shift)
        for r in answers or ():
            if r.use is not None:
                _cross(seeds, min(r.mi, r.use.mi), max(r.mi, r.use.mi), shift)
    old_live = p.live
    k1 = bisect_left(old_live, start)
    k2 = bisect_left(old_live, old_stop, lo=k1)
    live = old_live[:k1]
    live += [i for i in range(start, shift.stop) if new[i].live]
    live += [i + d for i in old_live[k2:]] if d else old_live[k2:]
    # the live messages next to the stretch: a call's home, a result's turn
    k = bisect_left(live, shift.start)
    if k > 0:
        seeds.add(live[k - 1])
    k = bisect_left(live, shift.stop)
    if k < len(live):
        seeds.add(live[k])
    wrong_at = {x for x in (shift.moved(k) for k in _wrong_at(p)) if x is not None}
    out = MovedPairing(
        root, compose(runs, shift), _own_moved(own, shift), gone_ids, live, bool(wrong_at)
    )
    out.__dict__["_ids_at"] = _ids_at(p).moved(shift)
    out.__dict__["_wrong_at"] = wrong_at
    return out, seeds


def _own_moved(own: dict[int, Own], shift: Shift) -> dict[int, Own]:
    """The calls and results paired again since the root pairing, after `shift`: those
    after its stretch copied at their new positions (links among them to the copies)."""
    d = shift.delta
    out: dict[int, Own] = {}
    copies: dict[int, Use | Result] = {}
    later: list[Use | Result] = []
    for mi, (calls, turn, answers) in own.items():
        k = shift.moved(mi)
        if k is None:
            continue
        if k == mi:
            out[mi] = calls, turn, answers
            continue
        new_calls = [copies.setdefault(id(u), _copy(u, d)) for u in calls]
        new_answers = [copies.setdefault(id(r), _copy(r, d)) for r in answers or ()]
        later += new_calls
        later += new_answers
        new_turn = None if turn is None else [copies[id(u)] for u in turn]
        out[k] = new_calls, new_turn, new_answers or None  # type: ignore[assignment]
    for x in later:
        if isinstance(x, Use):
            x.results = [copies.get(id(r), r) for r in x.results]  # type: ignore[misc]
            if x.dup_of is not None:
                x.dup_of = copies.get(id(x.dup_of), x.dup_of)  # type: ignore[assignment]
            if x.partner is not None:
                x.partner = copies.get(id(x.partner), x.partner)  # type: ignore[assignment]
        else:
            if x.use is not None:
                x.use = copies.get(id(x.use), x.use)  # type: ignore[assignment]
            if x.partner is not None:
                x.partner = copies.get(id(x.partner), x.partner)  # type: ignore[assignment]
    return out


def _copy(x: _Tool, d: int) -> _Tool:
    """A call or result moved by `d` (its links are set by the caller)."""
    if isinstance(x, Use):
        home = None if x.home is None else x.home + d
        return Use(
            x.mi + d, x.bi, x.block, x.order, home, x.results, x.dup_of, x.partner, x.wrong_role
        )
    return Result(x.mi + d, x.bi, x.block, x.use, x.before_use, x.partner, x.wrong_role)


def _cross(seeds: set[int], a: int, b: int, shift: Shift) -> None:
    """A link between positions `a` <= `b` (before `shift`) that crosses its stretch or
    reaches into it from outside: the ends outside it are paired again (an end in it is
    paired again with its ids, among those the step replaced)."""
    start, old_stop = shift.start, shift.old_stop
    if b < start or a >= old_stop or (start <= a and b < old_stop):
        return
    if a < start:
        seeds.add(a)
    if b >= old_stop:
        seeds.add(b + shift.delta)


def _long_links(p: Pairing) -> list[tuple[int, int]]:
    """The links of a whole pairing between calls and results (a result's call, a call's
    duplicate, a mismatched partner) that a shift may cross without both ends being the
    live messages next to its stretch: neither in one message nor in two live messages in
    a row (its positions, lower first; kept with the pairing)."""
    got = p.__dict__.get("_long_links")
    if got is None:
        got = []
        nxt = p.next_live.get
        for u in p.uses:
            m = u.mi
            for x in (*u.results, u.dup_of, u.partner):
                if x is not None and x.mi != m:
                    lo, hi = (m, x.mi) if m < x.mi else (x.mi, m)
                    if nxt(lo) != hi:
                        got.append((lo, hi))
        p.__dict__["_long_links"] = got
    return got


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
    d = 0 if shift is None else shift.delta

    def keeps(k: int, after: bool) -> bool:  # the client sends assistant message k, its own first
        if shift is not None:
            if k >= shift.stop:
                k -= d
            elif k >= shift.start:
                return False  # new: not in the request before
        i = first.get(k)
        return i is not None and req.messages[i].role == "assistant"

    got = _stretch(before, p_new, old, new, redo, shift, keeps)
    if got is None:
        return None
    start, stop, own = got
    old_stop = stop - d  # where the stretch ends in `old`
    part = send_part(new, start, stop)
    if start > 0 and not (
        part.messages
        and part.messages[0].role == "assistant"
        and part.messages[0].positions[:1] == [start]
    ):
        return None  # the client no longer keeps the message the stretch starts with
    i1 = first.get(start) if start > 0 else 0
    i2 = first.get(old_stop) if old_stop < len(old) else len(req.messages)
    assert i1 is not None and i2 is not None
    # the sent messages after the stretch are those before, their positions moved when
    # read (`Request.moved`), not copied
    request = _spliced_request(
        req,
        part,
        start,
        old_stop,
        d,
        own,
        messages=req.messages[:i1] + part.messages + req.messages[i2:],
        moved=spliced(req.moved, i1, i2, len(part.messages), d),
    )
    # numbers: the stretch numbered from its first entry, those after moved by the change
    mine: list[int | None] = [None] * (stop - start)
    entry = 0
    for sm in part.messages:
        for k in sm.positions:
            if mine[k - start] is None:
                mine[k - start] = entry
        entry += len(w.split(sm))
    numbers, sent = _spliced_numbers(before, start, old_stop, mine, entry)
    grew = len(part.messages) - (i2 - i1)
    mine_first = {sm.positions[0]: i1 + k for k, sm in enumerate(part.messages) if sm.positions}
    request.__dict__["_first_sent"] = _FirstSent(first, start, stop, d, mine_first, grew)
    return request, numbers, sent, start, stop


def _recount(
    client: clients.Client,
    before: Analysis,
    p_new: Pairing,
    old: list[Message],
    session: Session,
    redo: list[int],
    shift: Shift | None = None,
) -> tuple[wire.Request, list[int | None], int, int, int] | None:
    """`_resend` of a request counted, not built (`Request.counted`): the stretch from the
    first position paired again to the last (widened to where the client's sending starts
    afresh, before and after the step: `Client.afresh`; Codex's at every message) is
    counted again on its own (`Client.light_part`) and spliced into the counted request
    before; the numbers after it move by the entries it gained or lost, and a block's
    entry after it is read through the counted request before, moved (`_Entries`).
    Returns as `_resend` does; None to decline."""
    req = before.request
    assert req is not None and req.counted is not None and client.light_part is not None
    chain = req.counted.entry_of
    if isinstance(chain, _Entries) and chain.depth >= _DEPTH:
        return None  # (before the stretch is counted: the whole analysis counts it all)
    new = session.messages
    d = 0 if shift is None else shift.delta
    afresh = client.afresh
    keeps = None
    if afresh is not None:

        def keeps(k: int, after: bool) -> bool:  # afresh at new k and where it was before
            return afresh(new, k) and afresh(old, k - d if after else k)

    got = _stretch(before, p_new, old, new, redo, shift, keeps)
    if got is None:
        return None
    start, stop, own = got
    old_stop = stop - d
    part = client.light_part(session, start, stop)
    c = part.counted
    assert c is not None
    numbers, sent = _spliced_numbers(before, start, old_stop, c.numbers, c.total)
    entry_of = req.counted.entry_of
    if entry_of is not None:
        assert c.entry_of is not None
        base = _entry_base(numbers, start, sent)
        entry_of = _Entries(entry_of, c.entry_of, start, stop, d, base, sent - before.sent)
    elif c.blocks is not None or req.counted.blocks is not None:
        return None  # (no counted request keeps its blocks' entries by id and is counted in part)
    counted = wire.Counted(req.counted.split, numbers, sent, None, entry_of)
    request = _spliced_request(req, part, start, old_stop, d, own, counted=counted)
    return request, numbers, sent, start, stop


def _entry_base(numbers: list[int | None], start: int, sent: int) -> int:
    """The first entry from position `start` on (the entries before it); `sent` where no
    message from there is sent."""
    for k in range(start, len(numbers)):
        got = numbers[k]
        if got is not None:
            return got
    return sent


class _Entries:
    """`Counted.entry_of` of a request counted again over [start, stop) and spliced into
    `before`'s (a step): a block's entry is read from the stretch's own count (`part`,
    from its first entry: + `base`) or from `before`'s, moved after the stretch (its
    positions by `d`, its entries by `grew`). A chain of steps is read through in turn;
    past `_DEPTH` steps the increment declines (the whole analysis counts afresh)."""

    __slots__ = ("before", "part", "start", "stop", "d", "base", "grew", "depth")

    def __init__(
        self,
        before: Callable[[int, Block], int | None],
        part: Callable[[int, Block], int | None],
        start: int,
        stop: int,
        d: int,
        base: int,
        grew: int,
    ) -> None:
        self.before, self.part = before, part
        self.start, self.stop, self.d, self.base, self.grew = start, stop, d, base, grew
        self.depth: int = before.depth + 1 if isinstance(before, _Entries) else 1

    def __call__(self, position: int, block: Block) -> int | None:
        if position < self.start:
            return self.before(position, block)
        if position < self.stop:
            got = self.part(position, block)
            return None if got is None else got + self.base
        got = self.before(position - self.d, block)
        return None if got is None else got + self.grew


def _stretch(
    before: Analysis,
    p_new: Pairing,
    old: list[Message],
    new: list[Message],
    redo: list[int],
    shift: Shift | None,
    keeps: Callable[[int, bool], bool] | None,
) -> tuple[int, int, set[str]] | None:
    """The stretch [start, stop) of `new` a client sends again after a step: from the
    first position paired again (and the shift's stretch) to the last, widened to
    positions where the client's sending starts afresh (`keeps(k, after)`, at its start
    and, `after`, at its end; None: at any), and the
    tool ids it holds (before and after the step), each of which must lie within it;
    None where it is too long or an id lies outside it."""
    n = len(new)
    d = 0 if shift is None else shift.delta
    limit = max(64, int(n * _MAX_SHARE))
    if shift is not None:
        # a shift may pair nothing again (it drops messages that hold no tool id)
        lo = min(redo[0], shift.start) if redo else shift.start
        hi = max(redo[-1] + 1, shift.stop) if redo else shift.stop
    elif redo:
        lo, hi = redo[0], redo[-1] + 1
    else:
        return None
    start, stop = lo, hi
    if keeps is not None:
        while start > 0 and not keeps(start, False):
            start -= 1
            if lo - start > limit:
                return None
        while stop < n and not keeps(stop, True):
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
    return start, stop, own


def _spliced_request(
    req: wire.Request,
    part: wire.Request,
    start: int,
    old_stop: int,
    d: int,
    own: set[str],
    messages: list[wire.SentMessage] | None = None,
    moved: Spans = (),
    counted: wire.Counted | None = None,
) -> wire.Request:
    """`req` with what it says of the messages [start, old_stop) replaced by what `part`
    says of the stretch sent again (the positions after it moved by `d`; `own`: the
    stretch's tool ids, which no answer outside it carries): what the client leaves out,
    drops, adds or changes, and the calls it answers; the sent messages (and how their
    positions moved) or the count given."""

    def listed(
        got: list[tuple[int, Block, str]], mine: list[tuple[int, Block, str]]
    ) -> list[tuple[int, Block, str]]:
        return (
            [e for e in got if e[0] < start]
            + mine
            + [(e[0] + d, e[1], e[2]) for e in got if e[0] >= old_stop]
        )

    def by_position(got: dict[int, str], mine: dict[int, str]) -> dict[int, str]:
        out = {k: why for k, why in got.items() if k < start}
        out.update(mine)
        out.update((k + d, why) for k, why in got.items() if k >= old_stop)
        return out

    return wire.Request(
        req.sender,
        messages if messages is not None else [],
        client=req.client,
        left_out=listed(req.left_out, part.left_out),
        dropped=by_position(req.dropped, part.dropped),
        added_after=by_position(req.added_after, part.added_after),
        changed=listed(req.changed, part.changed),
        answered={a for a in req.answered if a not in own} | part.answered,
        counted=counted,
        moved=moved,
    )


class _FirstSent:
    """`_first_sent` of a request spliced from `before`'s: the stretch [start, stop) read
    from its own (`mine`), the positions after it from `before`'s, moved. A chain of
    steps is read through in turn; past `_DEPTH` steps it is made whole."""

    __slots__ = ("before", "start", "stop", "d", "mine", "grew", "depth")

    def __init__(
        self,
        before: dict[int, int] | _FirstSent,
        start: int,
        stop: int,
        d: int,
        mine: dict[int, int],
        grew: int,
    ) -> None:
        self.before, self.start, self.stop, self.d = before, start, stop, d
        self.mine, self.grew = mine, grew
        self.depth: int = before.depth + 1 if isinstance(before, _FirstSent) else 1

    def get(self, k: int) -> int | None:
        if k < self.start:
            return self.before.get(k)
        if k < self.stop:
            return self.mine.get(k)
        got = self.before.get(k - self.d)
        return None if got is None else got + self.grew


_DEPTH = 16


def _first_sent(req: wire.Request) -> dict[int, int] | _FirstSent:
    """Session position -> the index of the sent message it opens (kept with the request:
    each step's spliced request gets its own)."""
    got = req.__dict__.get("_first_sent")
    if got is None or (isinstance(got, _FirstSent) and got.depth > _DEPTH):
        got = {ps[0]: i for i, ps in enumerate(req.positions()) if ps}
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
    positions now (a step copies those, not `base`)."""

    __slots__ = ("base", "moves", "own")

    def __init__(
        self,
        base: dict[str, list[int]],
        moves: Runs | None = None,
        own: dict[str, list[int]] | None = None,
    ) -> None:
        self.base = base
        self.moves = moves  # the runs of base positions still there; None: none moved
        self.own = own if own is not None else {}

    def get(self, tid: str, at: int | None = None) -> list[int]:
        """`at`: a position known to hold `tid` (what `_LeanIds` reads; not needed here)."""
        got = self.own.get(tid)
        if got is not None:
            return got
        found = self.base.get(tid, [])
        moves = self.moves
        if moves is None:
            return found
        return [k for k in (forward(moves, k) for k in found) if k is not None]

    def moved(self, shift: Shift) -> _IdIndex:
        """The index after `shift`."""
        own = {
            tid: [k for k in map(shift.moved, at) if k is not None] for tid, at in self.own.items()
        }
        return _IdIndex(self.base, compose(self.moves or UNMOVED, shift), own)

    def replaced(self, ids: set[str], held: Iterable[tuple[str, int]]) -> _IdIndex:
        """The index after the calls and results carrying `ids` were paired again."""
        return _IdIndex(self.base, self.moves, _own_after(self.own, ids, held))


def _own_after(
    own: dict[str, list[int]], ids: set[str], held: Iterable[tuple[str, int]]
) -> dict[str, list[int]]:
    """An index's ids paired again (`own`) after those carrying `ids` were paired again
    (`held`: the id and position now of each call and result carrying one)."""
    out = {tid: at for tid, at in own.items() if tid not in ids}
    for tid in ids:
        out[tid] = []
    for tid, mi in held:
        out.setdefault(tid, []).append(mi)
    return out


class _LeanIds:
    """The `_IdIndex` of a lean pairing not built (`LeanPairing`), without an entry for
    every id of the session: an id its checked calls and results carry is where they are
    (`checked`); any other is a usual pair's or a turn's answered twice
    (`pairing._usual_ids`), carried by the message it was found in (`at`, which `get` is
    told) and that message's turn partner, and by no other message. An id asked for without
    `at`, or not where `at` says, is read from the index of every live message (made when
    first needed, kept with the pairing). Ids paired again by steps since are read from
    `own`, as `_IdIndex` reads them (the rest of the session did not change: an id a step
    changes is paired again). tests/engine/test_pairing_lean.py holds it equal to
    the index of every message, after steps too."""

    __slots__ = ("p", "checked", "own")

    def __init__(
        self,
        p: LeanPairing,
        checked: dict[str, list[int]] | None = None,
        own: dict[str, list[int]] | None = None,
    ) -> None:
        self.p = p
        self.checked = _by_id(p.checked_uses, p.checked_results) if checked is None else checked
        self.own = own if own is not None else {}

    def get(self, tid: str, at: int | None = None) -> list[int]:
        got = self.own.get(tid)
        if got is None:
            got = self.checked.get(tid)
        if got is None and at is not None:
            got = self._turn(tid, at)
        if got is None:
            got = self._every().get(tid, [])
        return got

    def _turn(self, tid: str, at: int) -> list[int] | None:
        """The positions of `tid` in the usual turn of the message at `at`, where that
        message holds it (None: read the whole index)."""
        p = self.p
        msgs = p.messages
        if at >= len(msgs) or not msgs[at].live:
            return None
        here = _count(msgs[at], tid)
        if not here:
            return None
        if msgs[at].role == "assistant":
            other = p.next_live.get(at)
        else:
            other = p.prev_live.get(at)
        if other is None:
            return None
        there = _count(msgs[other], tid)
        if not there:
            return None
        if at < other:
            return [at] * here + [other] * there
        return [other] * there + [at] * here

    def _every(self) -> dict[str, list[int]]:
        """Tool id -> the live messages that hold it (no call in a user message and no
        answer in an assistant one: `pairing._usual_ids`)."""
        p = self.p
        got: dict[str, list[int]] | None = p.__dict__.get("_ids_every")
        if got is None:
            got = {}
            msgs = p.messages
            for mi in p.live:
                calls, answers = msgs[mi].tool_ids()
                for tid in (*calls, *answers):
                    if tid:
                        got.setdefault(tid, []).append(mi)
            p.__dict__["_ids_every"] = got
        return got

    def moved(self, shift: Shift) -> _IdIndex:
        """The index after `shift` (of every id: a moved pairing is not lean)."""
        return _IdIndex(self._every(), None, self.own).moved(shift)

    def replaced(self, ids: set[str], held: Iterable[tuple[str, int]]) -> _LeanIds:
        return _LeanIds(self.p, self.checked, _own_after(self.own, ids, held))


def _count(m: Message, tid: str) -> int:
    """How many of the message's calls and answers carry `tid`."""
    calls, answers = m.tool_ids()
    return calls.count(tid) + answers.count(tid)


def _ids_at(p: Pairing) -> _IdIndex | _LeanIds:
    """The pairing's `_IdIndex` (a lean pairing's `_LeanIds`), made when first asked for."""
    got = p.__dict__.get("_ids_at")
    if got is None and isinstance(p, LeanPairing) and not p.built:
        got = p.__dict__["_ids_at"] = _LeanIds(p)
    if got is None:
        got = p.__dict__["_ids_at"] = _IdIndex(_by_id(p.uses, p.results))
    return got


def _by_id(uses: list[Use], results: list[Result]) -> dict[str, list[int]]:
    """Tool id -> the positions of the calls and of the results that carry it."""
    out: dict[str, list[int]] = {}
    for u in uses:
        if u.tool_id:
            out.setdefault(u.tool_id, []).append(u.mi)
    for r in results:
        if r.tool_id:
            out.setdefault(r.tool_id, []).append(r.mi)
    return out


def prepare(analysis: Analysis) -> None:
    """Index the analysis's calls and results by tool id now (a worker does it after a
    whole analysis), so that the first step after it need not."""
    with gc_paused():
        p = analysis.pairing
        _ids_at(p)
        _wrong_at(p)
        _long_links(p.root if isinstance(p, MovedPairing) else p)
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
    p: Pairing,
    new: list[Message],
    changed: Iterable[int],
    gone: Iterable[tuple[int | None, Message]],
) -> tuple[list[int], set[str]] | None:
    """The positions whose calls and results are paired again (sorted) and the tool ids
    they hold (every position holding one is among them), from the positions `changed`
    and the messages the step replaced (`gone`: their ids count too; each with its
    position in `p`, None where it has none); None when too many."""
    limit = max(64, int(len(new) * _MAX_SHARE))
    todo = sorted(changed)
    if _too_many(todo, limit):
        return None  # (each of them is among those paired again)
    at = _ids_at(p)
    seen: set[int] = set()
    ids: set[str] = set()
    for k, m in gone:
        for held in m.tool_ids():  # (every block's tool id, its blocks not made)
            for tid in held:
                if tid and tid not in ids:
                    ids.add(tid)
                    todo.extend(at.get(tid, k))
    while todo:
        mi = todo.pop()
        if mi in seen:
            continue
        seen.add(mi)
        if len(seen) > limit:
            return None
        for held in new[mi].tool_ids():
            for tid in held:
                if tid and tid not in ids:
                    ids.add(tid)
                    todo.extend(at.get(tid, mi))
        # a turn is paired with its home: the call message and the message after it
        if new[mi].live:
            nxt, prv = p.next_live.get(mi), p.prev_live.get(mi)
            if new[mi].role == "assistant" and nxt is not None:
                todo.append(nxt)
            if prv is not None and new[prv].role == "assistant":
                todo.append(prv)
    return sorted(seen), ids


def _paired_again(
    p: Pairing,
    session: Session,
    changed: Iterable[int],
    gone: Iterable[tuple[int | None, Message]],
) -> tuple[Pairing, list[int]] | None:
    """`p` with the messages `_to_pair_again` finds paired again, and their positions."""
    got = _to_pair_again(p, session.messages, changed, gone)
    if got is None:
        return None
    redo, ids = got
    return _pair_again(p, session.messages, redo, ids, session.adapter, session.target), redo


def _pair_again(
    p: Pairing, new: list[Message], redo: list[int], ids: set[str], adapter: Adapter, target: str
) -> Pairing:
    """`p` with the calls and results of the messages at `redo` paired again. A lean
    pairing not built is followed lean: the messages are paired as the analysis pairs the
    session (`pair(..., usual_id=)`: no call or result made for a usual pair; every
    holder of an id is among them, so an id is usual among them as in the session)."""
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
    remap = not getattr(adapter, "unique_call_ids", False)
    lean = isinstance(p, LeanPairing) and not p.built and not p.checked_copies and not _wrong_at(p)
    if lean:
        rules = _IdRules.of(target)
        sub = pair(part, remap=remap, usual_id=rules.fine, all_usual=rules.all_fine)
        if sub.checked_copies:  # (a turn answered twice: every call and result made)
            sub = pair(part, remap=remap)
    else:
        sub = pair(part, remap=remap)
    made = sub.checked  # (all of it, unless lean)
    for u in made.uses:
        u.mi = order[u.mi]
        if u.home is not None:
            u.home = order[u.home]
    for r in made.results:
        r.mi = order[r.mi]
    fresh: list[Use | Result] = [*made.uses, *made.results]
    wrong_at = (_wrong_at(p) - redo_set) | {x.mi for x in fresh if x.wrong_role}
    held: Iterable[tuple[str, int]]
    out: Pairing
    if lean and not wrong_at:
        # followed lean: the calls and results checked, those paired again in their place
        assert isinstance(p, LeanPairing)
        out = p.followed(new, _replaced(p.checked, redo, made, order, False))
        held = _held(new, redo)  # (a usual pair's ids too: no call or result made for it)
    else:
        assert made is sub  # (a part with a block in the wrong role is paired whole)
        if isinstance(p, MovedPairing):
            out = _own_paired_again(p, redo, ids, sub, order, bool(wrong_at))
        else:
            out = _replaced(p, redo, sub, order, bool(wrong_at))
        held = [(x.tool_id, x.mi) for x in fresh if x.tool_id]
    out.__dict__["_ids_at"] = _ids_at(p).replaced(ids, held)
    out.__dict__["_wrong_at"] = wrong_at
    out.__dict__["_from"] = (weakref.ref(p), frozenset(redo))
    return out


def _held(new: list[Message], redo: list[int]) -> list[tuple[str, int]]:
    """(id, position) of each call and result of the live messages at `redo` (in a lean
    pairing's messages: no call in a user message, no answer in an assistant one)."""
    out: list[tuple[str, int]] = []
    for mi in redo:
        m = new[mi]
        if m.live:
            for got in m.tool_ids():
                out += [(tid, mi) for tid in got if tid]
    return out


def _own_paired_again(
    p: MovedPairing, redo: list[int], ids: set[str], sub: Pairing, order: list[int], wrong: bool
) -> MovedPairing:
    """A moved pairing with the calls and results of the messages at `redo` paired again
    (`sub`, its positions those of `order`): its own now."""
    calls: dict[int, list[Use]] = {mi: [] for mi in redo}
    for u in sub.uses:
        calls[u.mi].append(u)
    turns = {order[k]: got for k, got in sub.uses_by_message.items()}
    answers = {order[k]: got for k, got in sub.results_by_message.items()}
    own = dict(p.own)
    for mi in redo:
        own[mi] = calls[mi], turns.get(mi), answers.get(mi)
    return MovedPairing(p.root, p.runs, own, p.gone_ids | ids, p.live, wrong, p.memo)


def _replaced(p: Pairing, redo: list[int], sub: Pairing, order: list[int], wrong: bool) -> Pairing:
    """`p` with the calls and results of the messages at `redo` replaced by those of
    `sub` (its positions those of `order`)."""
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
    return Pairing(
        uses,
        results,
        p.live,
        p.next_live,
        p.prev_live,
        uses_by_message,
        results_by_message,
        wrong,
    )


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
    a = _same_run(map(is_, old, new), n)
    b = _same_run(map(is_, islice(reversed(old), n - a), reversed(new)), n - a)
    return Shift(a, len(old) - b, len(new) - b)


def _same_run(same: Iterator[bool], n: int) -> int:
    """How many of `same` are True before the first False (`n`: none is False)."""
    try:
        return indexOf(same, False)
    except ValueError:
        return n


@dataclass(frozen=True)
class Refound:
    """What an analysis after a step changed of the findings before it (`refound`): the
    increment keeps every finding it did not make again as the same object."""

    gone: list[Finding]  # findings before that are not kept (dropped or made again)
    came: list[Finding]  # findings after that are new objects (made by the step)
    was: set[int]  # id() of each finding before

    def positions(self) -> set[int | None]:
        """The messages where a finding went or came."""
        return {f.position for f in self.gone} | {f.position for f in self.came}


def refound(before: list[Finding], after: list[Finding]) -> Refound:
    """Which findings a step's analysis made again, from the findings before and after it
    (the plan kept across it, `repair.replan`, and the TUI's rows, `tui.rows.refound`)."""
    was = set(map(id, before))
    now = set(map(id, after))
    return Refound(
        [f for f in before if id(f) not in now], [f for f in after if id(f) not in was], was
    )


def changed_positions(old: list[Message], new: list[Message]) -> frozenset[int] | None:
    """Positions in `new` holding a message that is not in `old` (messages are never
    mutated: an edited one is a new object); None when messages came or went, so every
    position after the first change moved."""
    if len(old) != len(new):
        return None
    return frozenset(compress(count(), map(is_not, old, new)))  # (no Python loop over 100k)
