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

from repair.pairing import Pairing

from .rows import RowTable

PAIRED = "paired"
ORPHAN_USE = "orphan-use"
ORPHAN_RESULT = "orphan-result"
DUPLICATE = "duplicate"
MISPLACED = "misplaced"
ABOVE = "above"  # result drawn above its use
MISMATCH = "mismatch"  # result under a wrong id, linked to the call it most likely answers
OVERFLOW = "overflow"
STATES = (PAIRED, ORPHAN_USE, ORPHAN_RESULT, DUPLICATE, MISPLACED, ABOVE, MISMATCH, OVERFLOW)

# (top end, pass-through, bottom end, fork) per state
_GLYPHS = {
    PAIRED: ("╭", "│", "╰", "├"),
    MISPLACED: ("╭", "│", "╰", "├"),
    DUPLICATE: ("╭", "│", "╰", "├"),
    ABOVE: ("┏", "┃", "┗", "┣"),
    MISMATCH: ("╭", "┆", "╰", "├"),
    ORPHAN_USE: ("╭", "┆", "╵", "├"),  # the end dangles: no result row
    ORPHAN_RESULT: ("╷", "┆", "╰", "├"),  # no start: the lane comes from nowhere
}


@dataclass(slots=True)
class Interval:
    start: int
    end: int
    state: str
    points: tuple[int, ...]  # rows that are real ends (use / result rows)
    lane: int = 0


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
            top, mid, bottom, fork = _GLYPHS[iv.state]
            if row == iv.start:
                ch = top
            elif row == iv.end:
                ch = bottom
            elif row in iv.points:
                ch = fork
            else:
                ch = mid
            out.append((ch, iv.state))
        out.extend((" ", None) for _ in range(width - len(out)))
        mine = self.own.get(row)
        if mine is not None:
            if mine.lane >= width:
                if width:
                    out[-1] = ("»", OVERFLOW)
            else:
                # connector from the lane to the row text, over the lanes it passes
                for c in range(mine.lane + 1, width):
                    ch, st = out[c]
                    out[c] = ("┼" if ch in "│┃┆" else "─", mine.state)
        return out


def _intervals(pairing: Pairing, table: RowTable) -> list[Interval]:
    n = len(table.rows)
    br = table.block_row
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
            out.append(Interval(pts[0], pts[-1], state, tuple(pts)))
        elif use.partner is not None and (use.partner.mi, use.partner.bi) in br:
            r = br[(use.partner.mi, use.partner.bi)]
            lo, hi = min(u, r), max(u, r)
            out.append(Interval(lo, hi, MISMATCH, (lo, hi)))
        else:
            out.append(Interval(u, min(u + 1, n - 1), ORPHAN_USE, (u,)))
    for res in pairing.results:
        if res.use is None and res.partner is None:
            r = br.get((res.mi, res.bi))
            if r is not None:
                out.append(Interval(max(r - 1, 0), r, ORPHAN_RESULT, (r,)))
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
