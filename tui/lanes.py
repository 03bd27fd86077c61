"""The link gutter: each pairing is a vertical lane between its tool_use row and its result
row(s). Lanes are allocated by interval colouring (sort by start, reuse the lowest free lane
through a heap: O(n log n)); pairings open at the same time never share a column.

Intervals are held in row keys (`rows.row_key`: message and block, not row indices), so
that a repair step, which changes a few messages, keeps every interval elsewhere as it is
even when rows come or go before it. The colouring restarts at each clear point (a row no
interval crosses): after a step only the stretch between the clear points around what
changed is coloured again (`relayout`), and the result is the whole layout's. A step that
inserts or drops messages (a `Shift`) moves the keys after its stretch: those intervals are
kept as they are, each lane's `spans` saying from which interval on the keys read moved by
how much (`_shifted`: a step costs the intervals it draws, not those after it), those
reaching into or across the stretch are drawn again, and the colouring is made again
around them as above.

Rendering a row asks `cells(row, width)`: per lane one bisect into that lane's sorted,
non-overlapping intervals, so the cost per row does not depend on the session size.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from operator import attrgetter

from repair import codes
from repair.incremental import Shift, paired_again, shifted_again
from repair.moved import Spans, spliced
from repair.pairing import Pairing, Result, Use

from .rows import _KEY_SHIFT, RowTable, key_message, row_key

PAIRED = "paired"
ORPHAN_USE = "orphan-use"
ORPHAN_RESULT = "orphan-result"
DUPLICATE = "duplicate"
MISPLACED = "misplaced"
ABOVE = "above"  # result drawn above its use
MISMATCH = "mismatch"  # result under a wrong id, linked to the call it most likely answers
TRAVEL = "travel"  # the stretch of a lane down to a result stamped before its call
OVERFLOW = "overflow"

# The one declaration of what the gutter draws: per state its glyphs (top end, pass-through,
# bottom end, fork, connector to the row) and what it means. The timeline draws from it and
# the help legend is rendered from it, in the timeline's own styles.
LANE_KINDS: dict[str, tuple[tuple[str, str, str, str, str], str]] = {
    PAIRED: (("╭", "│", "╰", "├", "─"), "a call and its result"),
    ORPHAN_USE: (("╭", "┆", "╵", "├", "─"), "call with no result (dangling end)"),
    ORPHAN_RESULT: (("╷", "┆", "╰", "├", "─"), "result with no call (no start)"),
    DUPLICATE: (("╭", "│", "╰", "├", "─"), "duplicate results (a fork per result)"),
    MISPLACED: (("╭", "│", "╰", "├", "─"), "result not right after its call"),
    ABOVE: (("┏", "┃", "┗", "┣", "━"), "result drawn above its call"),
    MISMATCH: (("╭", "┆", "╰", "├", "─"), "result under a wrong id"),
    TRAVEL: (("╭", "│", "╰", "├", "╌"), "result stamped before its call"),
}
STATES = (*LANE_KINDS, OVERFLOW)
OVERFLOW_GLYPH = "»"
OVERFLOW_TEXT = "more lanes than the gutter shows"


def legend_sample(state: str) -> str:
    """How a lane of this state looks, as drawn (for the help legend)."""
    if state == OVERFLOW:
        return OVERFLOW_GLYPH
    top, mid, bottom, fork, conn = LANE_KINDS[state][0]
    if state == ORPHAN_USE:
        return f"{top}{conn} {mid} {bottom}"
    if state == ORPHAN_RESULT:
        return f"{top} {mid} {bottom}{conn}"
    if state in (DUPLICATE, TRAVEL):
        first = LANE_KINDS[PAIRED][0][4] if state == TRAVEL else conn
        return f"{top}{first} {mid} {fork}{conn} {bottom}{conn}"
    return f"{top}{conn} {mid} {bottom}{conn}"


@dataclass(slots=True)
class Interval:
    start: int  # row keys (rows.row_key)
    end: int
    state: str
    points: tuple[int, ...]  # keys of the rows that are real ends (use / result rows)
    lane: int = 0
    travel: tuple[int, ...] = ()  # keys of result rows stamped before the call
    owner: int = 0  # the message of the call (or of the result without a call) drawn
    rank: int = 0  # 0 a call's lane, 1 a result's without a call (orders equal spans)

    def travels_at(self, key: int) -> bool:
        """The row at `key` lies on the stretch from the previous end down to a
        time-travelling result."""
        for t in self.travel:
            prev = max((p for p in self.points if p < t), default=self.start)
            if prev < key <= t:
                return True
        return False


def _order(iv: Interval) -> tuple[int, int, int]:
    return (iv.start, iv.end, iv.rank)


@dataclass
class LaneLayout:
    """Each lane's intervals in order and their starts, their keys as made: a lane's
    `spans` say where the keys moved since (a step that inserts or drops messages moves
    the keys after it: `_shifted`), and an interval is read at its keys now (`at`: a copy
    when they moved, made once)."""

    lanes: list[list[Interval]]
    starts: list[list[int]]
    used_lanes: int
    table: RowTable  # the rows the keys are read against
    pairing: Pairing | None = None  # what it was drawn from (relayout compares)
    travel: frozenset[int] = frozenset()
    spans: list[Spans] = field(default_factory=list)  # per lane (missing: none moved)
    _moved: dict[int, Interval] = field(default_factory=dict, repr=False, compare=False)

    def spans_of(self, lane: int) -> Spans:
        return self.spans[lane] if lane < len(self.spans) else ()

    def at(self, lane: int, k: int) -> Interval:
        """Interval `k` of `lane`, at its keys now."""
        iv = self.lanes[lane][k]
        by = 0
        for i, b in self.spans_of(lane):
            if i > k:
                break
            by = b
        if not by:
            return iv
        got = self._moved.get(id(iv))
        if got is None:
            got = self._moved[id(iv)] = _moved_interval(iv, by)
        return got

    def drawn(self) -> list[list[Interval]]:
        """Every lane's intervals at their keys now."""
        return [[self.at(lane, k) for k in range(len(ivs))] for lane, ivs in enumerate(self.lanes)]

    def index(self, lane: int, key: int, *, ends: bool = False, right: bool = True) -> int:
        """How many intervals of `lane` start (`ends`: end), at their keys now, at or before
        `key` (`right`), or before it."""
        items, st = self.lanes[lane], self.starts[lane]
        segs = ((0, 0), *self.spans_of(lane))
        for j in range(len(segs) - 1, -1, -1):
            f, by = segs[j]
            e = segs[j + 1][0] if j + 1 < len(segs) else len(items)
            if f >= e:
                continue
            first = (items[f].end if ends else st[f]) + by
            if first < key or (right and first == key):
                cut = bisect_right if right else bisect_left
                if ends:
                    return cut(items, key - by, f, e, key=_end)
                return cut(st, key - by, f, e)
        return 0

    def covering(self, lane: int, key: int) -> Interval | None:
        k = self.index(lane, key) - 1
        if k < 0:
            return None
        iv = self.at(lane, k)
        return iv if iv.end >= key else None

    def owner(self, key: int) -> Interval | None:
        """The interval the block at row key `key` belongs to (one of its points: an
        interval's points are no other's, and a lane's intervals do not overlap; read
        from the lanes, so that a step that moves the keys after it need not index them)."""
        for lane in range(len(self.lanes)):
            iv = self.covering(lane, key)
            if iv is not None and key in iv.points:
                return iv
        return None

    def own_at(self, row: int) -> Interval | None:
        """The interval of the block on row `row` (None: a message row, or no lane)."""
        return self.owner(self.table.key(row))

    def rows_of(self, iv: Interval) -> tuple[int, int]:
        """The first and last row the interval spans."""
        table = self.table
        return table.row_of_key(iv.start) or 0, table.row_of_key(iv.end) or 0

    def cells(self, row: int, width: int) -> list[tuple[str, str | None]]:
        """`width` gutter cells for `row`: (character, state or None)."""
        key = self.table.key(row)
        out: list[tuple[str, str | None]] = []
        mine = None
        for lane in range(len(self.lanes)):
            iv = self.covering(lane, key)
            if iv is not None and key in iv.points:
                mine = iv
            if lane >= width:
                continue
            if iv is None:
                out.append((" ", None))
                continue
            state = TRAVEL if iv.travel and iv.travels_at(key) else iv.state
            top, mid, bottom, fork, _conn = LANE_KINDS[state][0]
            if key == iv.start:
                ch = top
            elif key == iv.end:
                ch = bottom
            elif key in iv.points:
                ch = fork
            else:
                ch = mid
            out.append((ch, state))
        out.extend((" ", None) for _ in range(width - len(out)))
        if mine is not None:
            if mine.lane >= width:
                if width:
                    out[-1] = (OVERFLOW_GLYPH, OVERFLOW)
            else:
                # connector from the lane to the row text, over the lanes it passes
                state = TRAVEL if key in mine.travel else mine.state
                conn = LANE_KINDS[state][0][4]
                for c in range(mine.lane + 1, width):
                    ch, st = out[c]
                    out[c] = ("┼" if ch in "│┃┆" else conn, state)
        return out


def _travel_keys(table: RowTable) -> frozenset[int]:
    rows = table.rows
    return frozenset(
        table.key(ri)
        for ri in table.finding_rows
        if any(codes.get(f.code).travel for f in rows[ri].findings)
    )


def _use_interval(use: Use, table: RowTable, travel: frozenset[int]) -> Interval | None:
    u = row_key(use.mi, use.bi)
    if use.results:
        pts = [u] + [row_key(r.mi, r.bi) for r in use.results]
        if len(use.results) > 1:
            state = DUPLICATE
        elif use.results[0].before_use:
            state = ABOVE
        elif use.results[0].mi != use.home and not use.results[0].text_answer:
            state = MISPLACED
        else:
            state = PAIRED
        pts.sort()
        late = tuple(p for p in pts if p in travel)
        return Interval(pts[0], pts[-1], state, tuple(pts), travel=late, owner=use.mi)
    if use.partner is not None:
        r = row_key(use.partner.mi, use.partner.bi)
        lo, hi = min(u, r), max(u, r)
        return Interval(lo, hi, MISMATCH, (lo, hi), owner=use.mi)
    # a call without a result: down to the row after it
    at = table.block_row.get((use.mi, use.bi))
    if at is None:
        return None
    end = table.key(at + 1) if at + 1 < len(table.rows) else u
    return Interval(u, end, ORPHAN_USE, (u,), owner=use.mi)


def _result_interval(res: Result, table: RowTable) -> Interval | None:
    """A result without a call: up from the row before it."""
    at = table.block_row.get((res.mi, res.bi))
    if at is None:
        return None
    k = row_key(res.mi, res.bi)
    return Interval(table.key(max(at - 1, 0)), k, ORPHAN_RESULT, (k,), owner=res.mi, rank=1)


def _intervals(
    pairing: Pairing, table: RowTable, travel: frozenset[int], owners: list[int] | None = None
) -> list[Interval]:
    """The intervals of every pairing, or of those drawn from the messages at `owners`."""
    if owners is None:
        uses: Iterable[Use] = pairing.uses
        results: Iterable[Result] = pairing.results
    else:
        uses = pairing.calls_in(owners)
        results = pairing.results_in(owners)
    out: list[Interval] = []
    for use in uses:
        iv = _use_interval(use, table, travel)
        if iv is not None:
            out.append(iv)
    for res in results:
        if res.use is None and res.partner is None:
            iv = _result_interval(res, table)
            if iv is not None:
                out.append(iv)
    return out


def _colour(intervals: list[Interval]) -> list[list[Interval]]:
    """Lanes for `intervals` (sorted by `_order`), each given its lane: the lowest free."""
    active: list[tuple[int, int]] = []  # (end, lane)
    free: list[int] = []
    lanes: list[list[Interval]] = []
    for iv in intervals:
        while active and active[0][0] < iv.start:
            heapq.heappush(free, heapq.heappop(active)[1])
        if free:
            lane = heapq.heappop(free)
        else:
            lane = len(lanes)
            lanes.append([])
        iv.lane = lane
        lanes[lane].append(iv)
        heapq.heappush(active, (iv.end, lane))
    return lanes


def layout(pairing: Pairing, table: RowTable) -> LaneLayout:
    travel = _travel_keys(table)
    intervals = _intervals(pairing, table, travel)
    intervals.sort(key=_order)
    lanes = _colour(intervals)
    starts = [[iv.start for iv in lane] for lane in lanes]
    return LaneLayout(lanes, starts, len(lanes), table, pairing, travel)


def _moved_interval(iv: Interval, dk: int) -> Interval:
    """`iv` with its keys moved by `dk` (whole messages)."""
    pts = iv.points
    pts = (pts[0] + dk, pts[1] + dk) if len(pts) == 2 else tuple([p + dk for p in pts])
    return Interval(
        iv.start + dk,
        iv.end + dk,
        iv.state,
        pts,
        iv.lane,
        tuple([t + dk for t in iv.travel]) if iv.travel else (),
        iv.owner + (dk >> _KEY_SHIFT),
        iv.rank,
    )


# Beyond this share of the messages drawn again, the whole layout is no dearer.
_MAX_SHARE = 0.2


def relayout(
    before: LaneLayout, pairing: Pairing, table: RowTable, changed: Collection[int] | Shift
) -> LaneLayout:
    """The layout of `pairing` over `table` (equal to `layout(pairing, table)`), made from
    `before`, the layout of the state before a step that changed the messages at `changed`
    (as many messages before and after). The intervals drawn from a message whose rows,
    calls, results or stamped-before-its-call marks changed are made again, and the lanes
    coloured again between the clear points around them."""
    travel = _travel_keys(table)
    old = before.pairing
    if old is None:
        return layout(pairing, table)
    span: tuple[int, int] | None = None  # what the intervals gone with a shift spanned
    if isinstance(changed, Shift):
        got = shifted_again(old, pairing)
        if got is None or got[0] != changed:
            return layout(pairing, table)
        before, span, owners_gone = _shifted(before, changed, table)
        dirty = set(range(changed.start, changed.stop)) | got[1] | owners_gone
        repaired: frozenset[int] | None = frozenset()
    else:
        dirty = set(changed)
        repaired = paired_again(old, pairing)
    dirty.update(key_message(k) for k in travel ^ before.travel)
    if repaired is not None:
        dirty |= repaired
    else:
        for new_at, old_at in (
            (pairing.uses_by_message, old.uses_by_message),
            (pairing.results_by_message, old.results_by_message),
        ):
            dirty.update(mi for mi, got in new_at.items() if old_at.get(mi) is not got)
            dirty.update(mi for mi in old_at if mi not in new_at)
        # calls in a message of the wrong role are in no turn (uses_by_message)
        for either in (old, pairing):
            if either.wrong_role:
                dirty.update(u.mi for u in either.uses if u.wrong_role)
    if len(dirty) > max(64, _MAX_SHARE * len(table.message_row)):
        return layout(pairing, table)
    # every interval with an end in a dirty message goes, and with it every interval drawn
    # from the same message as one that goes: they are drawn again from the new pairing
    old_table = before.table
    gone: dict[int, Interval] = {}
    owners = set(dirty)
    todo = list(dirty)
    while todo:
        mi = todo.pop()
        if mi >= len(old_table.message_row):
            continue
        for ri in old_table.message_rows(mi)[1:]:
            iv = before.owner(old_table.key(ri))
            if iv is not None and id(iv) not in gone:
                gone[id(iv)] = iv
                if iv.owner not in owners:
                    owners.add(iv.owner)
                    todo.append(iv.owner)
    fresh = _intervals(pairing, table, travel, sorted(owners))
    if not gone and not fresh and span is None:
        return LaneLayout(
            before.lanes, before.starts, before.used_lanes, table, pairing, travel, before.spans
        )
    moved = [*gone.values(), *fresh]
    lo = min((iv.start for iv in moved), default=span[0] if span else 0)
    hi = max((iv.end for iv in moved), default=span[1] if span else 0)
    if span is not None:
        lo, hi = min(lo, span[0]), max(hi, span[1])
    # out to the clear points: no interval kept crosses lo or hi
    lanes, starts = before.lanes, before.starts
    while True:
        lo0, hi0 = lo, hi
        for lane in range(len(lanes)):
            a, b = _span(before, lane, lo, hi)
            if a < b:
                lo = min(lo, before.at(lane, a).start)
                hi = max(hi, before.at(lane, b - 1).end)
        if (lo, hi) == (lo0, hi0):
            break
    slices = [_span(before, lane, lo, hi) for lane in range(len(lanes))]
    kept = [
        iv
        for lane, (a, b) in enumerate(slices)
        for iv in (before.at(lane, k) for k in range(a, b))
        if id(iv) not in gone
    ]
    # coloured again: a kept interval whose lane changes is copied (the layout on screen
    # holds the old one)
    old_lane = {id(iv): iv.lane for iv in kept}
    again = [
        Interval(iv.start, iv.end, iv.state, iv.points, iv.lane, iv.travel, iv.owner, iv.rank)
        for iv in kept
    ]
    stretch = sorted([*again, *fresh], key=_order)
    coloured = _colour(stretch)
    again_by_id = {id(c): k for c, k in zip(again, kept, strict=True)}
    coloured = [
        [
            again_by_id[id(iv)]
            if id(iv) in again_by_id and old_lane[id(again_by_id[id(iv)])] == iv.lane
            else iv
            for iv in lane
        ]
        for lane in coloured
    ]
    new_lanes: list[list[Interval]] = []
    new_starts: list[list[int]] = []
    new_spans: list[Spans] = []
    for k in range(max(len(lanes), len(coloured))):
        mid = coloured[k] if k < len(coloured) else []
        sp: Spans = ()
        if k < len(lanes):
            a, b = slices[k]
            items = lanes[k][:a] + mid + lanes[k][b:]
            st = starts[k][:a] + [iv.start for iv in mid] + starts[k][b:]
            sp = spliced(before.spans_of(k), a, b, len(mid), 0)
        else:
            items, st = mid, [iv.start for iv in mid]
        new_lanes.append(items)
        new_starts.append(st)
        new_spans.append(sp)
    while new_lanes and not new_lanes[-1]:
        new_lanes.pop()
        new_starts.pop()
        new_spans.pop()
    return LaneLayout(new_lanes, new_starts, len(new_lanes), table, pairing, travel, new_spans)


def _shifted(
    before: LaneLayout, shift: Shift, table: RowTable
) -> tuple[LaneLayout, tuple[int, int], set[int]]:
    """`before` read at the positions after `shift` (against `table`, the rows after
    it): the intervals after the stretch kept as they are, their keys moved when read (the
    lanes' `spans`), those that reach into it or across it left out. Returns the layout,
    the span (in row keys now) the intervals left out covered, and the messages they were
    drawn from."""
    k0 = row_key(shift.start, None)  # the stretch, before: [k0, k1)
    k1 = row_key(shift.old_stop, None)
    d = shift.delta
    dk = d << _KEY_SHIFT
    after = row_key(shift.stop, None)  # the first key after the stretch now
    lanes: list[list[Interval]] = []
    starts: list[list[int]] = []
    spans: list[Spans] = []
    gone: list[Interval] = []
    for k, (lane, st) in enumerate(zip(before.lanes, before.starts, strict=True)):
        a = before.index(k, k0, ends=True, right=False)  # the first that ends in or after it
        b = max(a, before.index(k, k1, right=False))  # the first that starts after it
        gone += [before.at(k, i) for i in range(a, b)]
        lanes.append(lane[:a] + lane[b:])
        starts.append(st[:a] + st[b:])
        spans.append(spliced(before.spans_of(k), a, b, 0, dk))
    while lanes and not lanes[-1]:
        lanes.pop()
        starts.pop()
        spans.pop()
    lo = min((iv.start for iv in gone), default=k0)
    hi = max((iv.end + dk if iv.end >= k1 else after for iv in gone), default=after)
    owners = {o for o in (shift.moved(iv.owner) for iv in gone) if o is not None}
    travel = frozenset(k if k < k0 else k + dk for k in before.travel if not k0 <= k < k1)
    out = LaneLayout(lanes, starts, len(lanes), table, before.pairing, travel, spans)
    for k, sp in enumerate(spans):
        if len(sp) > _MAX_SPANS:  # read whole again: a copy of each interval moved
            out.lanes[k] = [out.at(k, i) for i in range(len(lanes[k]))]
            out.starts[k] = [iv.start for iv in out.lanes[k]]
            out.spans[k] = ()
    return out, (min(lo, k0), max(hi, after)), owners


# Past this many runs of moved keys in a lane, its intervals are moved at once.
_MAX_SPANS = 16


_start = attrgetter("start")
_end = attrgetter("end")


def _span(lay: LaneLayout, lane: int, lo: int, hi: int) -> tuple[int, int]:
    """The slice of a lane (sorted, not overlapping) of the intervals that meet [lo, hi]."""
    a = lay.index(lane, lo) - 1
    if a < 0 or lay.at(lane, a).end < lo:
        a += 1
    return a, max(a, lay.index(lane, hi))
