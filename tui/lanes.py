"""The link gutter: each pairing is a vertical lane between its tool_use row and its result
row(s). Lanes are allocated by interval colouring (sort by start, reuse the lowest free lane
through a heap: O(n log n)); pairings open at the same time never share a column.

Rendering a row asks `cells(row, width)`: per lane one bisect into that lane's sorted,
non-overlapping intervals, so the cost per row does not depend on the session size.
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from dataclasses import dataclass

from repair import codes
from repair.pairing import Pairing

from .rows import RowTable

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
    start: int
    end: int
    state: str
    points: tuple[int, ...]  # rows that are real ends (use / result rows)
    lane: int = 0
    travel: tuple[int, ...] = ()  # result rows stamped before the call

    def travels_at(self, row: int) -> bool:
        """`row` lies on the stretch from the previous end down to a time-travelling result."""
        for t in self.travel:
            prev = max((p for p in self.points if p < t), default=self.start)
            if prev < row <= t:
                return True
        return False


@dataclass
class LaneLayout:
    lanes: list[list[Interval]]
    starts: list[list[int]]
    own: dict[int, Interval]  # row -> the interval this row's block belongs to
    used_lanes: int

    def covering(self, lane: int, row: int) -> Interval | None:
        k = bisect_right(self.starts[lane], row) - 1
        if k < 0:
            return None
        iv = self.lanes[lane][k]
        return iv if iv.end >= row else None

    def cells(self, row: int, width: int) -> list[tuple[str, str | None]]:
        """`width` gutter cells for `row`: (character, state or None)."""
        out: list[tuple[str, str | None]] = []
        for lane in range(min(width, len(self.lanes))):
            iv = self.covering(lane, row)
            if iv is None:
                out.append((" ", None))
                continue
            state = TRAVEL if iv.travel and iv.travels_at(row) else iv.state
            top, mid, bottom, fork, _conn = LANE_KINDS[state][0]
            if row == iv.start:
                ch = top
            elif row == iv.end:
                ch = bottom
            elif row in iv.points:
                ch = fork
            else:
                ch = mid
            out.append((ch, state))
        out.extend((" ", None) for _ in range(width - len(out)))
        mine = self.own.get(row)
        if mine is not None:
            if mine.lane >= width:
                if width:
                    out[-1] = (OVERFLOW_GLYPH, OVERFLOW)
            else:
                # connector from the lane to the row text, over the lanes it passes
                state = TRAVEL if row in mine.travel else mine.state
                conn = LANE_KINDS[state][0][4]
                for c in range(mine.lane + 1, width):
                    ch, st = out[c]
                    out[c] = ("┼" if ch in "│┃┆" else conn, state)
        return out


def _travel_rows(table: RowTable) -> set[int]:
    rows = table.rows
    return {
        ri for ri in table.finding_rows if any(codes.get(f.code).travel for f in rows[ri].findings)
    }


def _intervals(pairing: Pairing, table: RowTable) -> list[Interval]:
    n = len(table.rows)
    br = table.block_row
    travel = _travel_rows(table)
    out: list[Interval] = []
    for use in pairing.uses:
        u = br.get((use.mi, use.bi))
        if u is None:
            continue
        if use.results:
            pts = [u] + [br[(r.mi, r.bi)] for r in use.results if (r.mi, r.bi) in br]
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
            out.append(Interval(pts[0], pts[-1], state, tuple(pts), travel=late))
        elif use.partner is not None and (use.partner.mi, use.partner.bi) in br:
            r = br[(use.partner.mi, use.partner.bi)]
            lo, hi = min(u, r), max(u, r)
            out.append(Interval(lo, hi, MISMATCH, (lo, hi)))
        else:
            out.append(Interval(u, min(u + 1, n - 1), ORPHAN_USE, (u,)))
    for res in pairing.results:
        if res.use is None and res.partner is None:
            at = br.get((res.mi, res.bi))
            if at is not None:
                out.append(Interval(max(at - 1, 0), at, ORPHAN_RESULT, (at,)))
    return out


def layout(pairing: Pairing, table: RowTable) -> LaneLayout:
    intervals = _intervals(pairing, table)
    intervals.sort(key=lambda iv: (iv.start, iv.end))
    active: list[tuple[int, int]] = []  # (end, lane)
    free: list[int] = []
    lanes: list[list[Interval]] = []
    starts: list[list[int]] = []
    own: dict[int, Interval] = {}
    for iv in intervals:
        while active and active[0][0] < iv.start:
            heapq.heappush(free, heapq.heappop(active)[1])
        if free:
            lane = heapq.heappop(free)
        else:
            lane = len(lanes)
            lanes.append([])
            starts.append([])
        iv.lane = lane
        lanes[lane].append(iv)
        starts[lane].append(iv.start)
        heapq.heappush(active, (iv.end, lane))
        for p in iv.points:
            own[p] = iv
    return LaneLayout(lanes, starts, own, len(lanes))
