"""Positions moved by steps whose messages came or went, read through the shifts rather
than rewritten (repair.incremental).

A `Shift` replaces one stretch of the message list by more or fewer messages: every
position after it moves. The shifts since a pairing was made whole compose into `Runs`:
the runs of its positions still there, each with what it moved by. A `MovedPairing` is a
pairing read that way: its calls and results are those of the pairing made whole (`root`),
at the positions the runs give them, copied when first read (a call or result and those it
links to move together: a link across a shift's stretch is paired again, so every link
lies within one run), and those of the messages paired again since (`own`), at their
positions now. A step that inserts a message near the start of a long session so moves
what it reads, not everything after the message.
"""

from __future__ import annotations

import sys
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from operator import attrgetter, indexOf, is_, itemgetter
from typing import TypeVar, overload

from .pairing import Lookup, Pairing, Result, Use, neighbours

_T = TypeVar("_T")
_V = TypeVar("_V")

Run = tuple[int, int, int]  # (first, end, by): the positions [first, end) are now at + by
Runs = tuple[Run, ...]  # sorted, not overlapping
UNMOVED: Runs = ((0, sys.maxsize, 0),)


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


def compose(runs: Runs, shift: Shift) -> Runs:
    """The runs after one more shift."""
    out: list[Run] = []
    for first, end, by in runs:
        # the run's positions now are [first + by, end + by): cut at the stretch
        cut1 = min(max(shift.start - by, first), end)
        cut2 = min(max(shift.old_stop - by, first), end)
        if first < cut1:
            out.append((first, cut1, by))
        if cut2 < end:
            out.append((cut2, end, by + shift.delta))
    return tuple(out)


Stretch = tuple[int, int, int, int]  # (a, b, c, d): old[a:b] became new[c:d]


def apart(old: list[_T], new: list[_T], shift: Shift) -> tuple[list[Stretch], Runs]:
    """The stretches of `shift` that changed, apart (a round of fixes spread over the
    session changes many short stretches, with the same messages between them), and the
    runs of old positions still there (`Runs`). The same objects in a row are skipped (in
    C); where they differ, the next object of `new` found among the next of `old` starts
    the next run (looked for in a window that doubles), what lies before it is a stretch.
    Every run holds the same objects in `old` and `new`; a stretch may hold one from
    elsewhere in `old` (it is read as a new message)."""
    i = j = shift.start
    n_old, n_new = len(old), len(new)
    runs: list[Run] = []
    out: list[Stretch] = []
    first = 0  # where the run being gathered starts, in old
    while True:
        a, b = iter(old), iter(new)
        a.__setstate__(i)  # type: ignore[attr-defined]
        b.__setstate__(j)  # type: ignore[attr-defined]
        try:
            same = indexOf(map(is_, a, b), False)
        except ValueError:
            same = min(n_old - i, n_new - j)
        i, j = i + same, j + same
        if i > first:
            runs.append((first, i, j - i))
        if i == n_old or j == n_new:
            break
        k = _next_same(old, new, i, j)
        if k is None:
            break
        out.append((i, k[0], j, k[1]))
        i, j = k
        first = i
    if i < n_old or j < n_new:
        out.append((i, n_old, j, n_new))
    runs.append((n_old, sys.maxsize, n_new - n_old))  # (as `compose` leaves it)
    return out, tuple(runs)


def _next_same(old: list[_T], new: list[_T], i: int, j: int) -> tuple[int, int] | None:
    """The first position of `new` from `j` on whose object is in `old` from `i` on, and
    where it is there (None: none is)."""
    w = 8
    while True:
        at = {id(x): k for k, x in enumerate(old[i : i + w], i)}
        for k, x in enumerate(new[j : j + w], j):
            got = at.get(id(x))
            if got is not None:
                return got, k
        if i + w >= len(old) and j + w >= len(new):
            return None
        w *= 2


_first = itemgetter(0)


def _now(run: Run) -> int:
    return run[0] + run[2]


def forward(runs: Runs, k: int) -> int | None:
    """Where position `k` (before the shifts) is now; None: gone with a stretch."""
    i = bisect_right(runs, k, key=_first) - 1
    if i >= 0 and k < runs[i][1]:
        return k + runs[i][2]
    return None


def forwarding(runs: Runs) -> Callable[[int], int | None]:
    """`forward` through `runs`, for many positions (the runs' starts listed once)."""
    firsts = [r[0] for r in runs]

    def at(k: int) -> int | None:
        first, end, by = runs[bisect_right(firsts, k) - 1]
        return k + by if first <= k < end else None

    return at


def backwarding(runs: Runs) -> Callable[[int], int | None]:
    """`backward` through `runs`, for many positions."""
    nows = [_now(r) for r in runs]

    def by(k: int) -> int | None:
        i = bisect_right(nows, k) - 1
        if i >= 0:
            first, end, moved = runs[i]
            if k < end + moved:
                return moved
        return None

    return by


def backward(runs: Runs, k: int) -> int | None:
    """What position `k` now moved by (None: not one of the positions before)."""
    i = bisect_right(runs, k, key=_now) - 1
    if i >= 0:
        first, end, by = runs[i]
        if k < end + by:
            return by
    return None


Spans = tuple[tuple[int, int], ...]  # (index, by) runs of a list: from the index on (to the
# next), what is read there moved by `by`; before the first, by nothing


def spliced(spans: Spans, i1: int, i2: int, size: int, d: int) -> Spans:
    """A list's `Spans` after its items [i1, i2) were replaced by `size` made now (moved
    by nothing) and what those after them hold moved by `d` more."""
    at_i2 = 0  # what the item at i2 moved by
    out: list[tuple[int, int]] = []
    for i, by in spans:
        if i < i1:
            out.append((i, by))
        if i <= i2:
            at_i2 = by
    out.append((i1, 0))
    out.append((i1 + size, at_i2 + d))
    out += [(i - i2 + i1 + size, by + d) for i, by in spans if i > i2]
    runs: list[tuple[int, int]] = []
    for i, by in out:
        if runs and runs[-1][0] == i:
            runs.pop()
        if (runs[-1][1] if runs else 0) != by:
            runs.append((i, by))
    return tuple(runs)


Own = tuple[list[Use], list[Use] | None, list[Result] | None]  # a message's calls, turn, results


class MovedPairing(Pairing):
    """`root` (a whole pairing) read through `runs`, with the calls and results of the
    messages paired again since (`own`: position now -> every call of the message, in
    block order; its turn, as `uses_by_message` holds it; its results; every position
    paired again has an entry). `gone_ids`: the ids of root's calls and results that are
    no longer read (paired again or dropped: every call and result of an id is paired
    again with it). The copies of root's calls and results are made when first read
    (`memo`, shared by the pairings with the same runs). Equal by value to the whole
    pairing of the messages now (tests/engine/test_incremental.py)."""

    def __init__(
        self,
        root: Pairing,
        runs: Runs,
        own: dict[int, Own],
        gone_ids: frozenset[str],
        live: list[int],
        wrong_role: bool,
        memo: dict[int, Use | Result] | None = None,
    ) -> None:
        self.root = root
        self.runs = runs
        self.own = own
        self.gone_ids = gone_ids
        self.live = live
        self.next_live = neighbours(live, 1)
        self.prev_live = neighbours(live, -1)
        self.wrong_role = wrong_role
        self.memo: dict[int, Use | Result] = {} if memo is None else memo
        self._root_uses = root.uses
        self._turns: dict[int, list[Use] | None] = {}
        self._answers: dict[int, list[Result] | None] = {}
        self._whole: tuple[list[Use], list[Result]] | None = None
        self.uses_by_message = Lookup(self._turn, self._keys_of(root.uses_by_message, 1))
        self.results_by_message = Lookup(self._results, self._keys_of(root.results_by_message, 2))

    @overload
    def _moved(self, x: Use, by: int) -> Use: ...
    @overload
    def _moved(self, x: Result, by: int) -> Result: ...
    def _moved(self, x: Use | Result, by: int) -> Use | Result:
        """A call or result of root at the position it moved to (`by`), and the calls and
        results it links to, copied alike when first read (a link may lead back to it)."""
        if not by:
            return x
        c = self.memo.get(id(x))
        if c is not None:
            return c
        # (each type's fields read in a branch of its own: a line that reads both is slower)
        if isinstance(x, Use):
            home = None if x.home is None else x.home + by
            u = Use(x.mi + by, x.bi, x.block, x.order, home, [], None, None, x.wrong_role)
            self.memo[id(x)] = u
            if x.results:
                u.results = [self._moved(r, by) for r in x.results]
            if x.dup_of is not None:
                u.dup_of = self._moved(x.dup_of, by)
            if x.partner is not None:
                u.partner = self._moved(x.partner, by)
            return u
        r = Result(x.mi + by, x.bi, x.block, None, x.before_use, None, x.wrong_role)
        self.memo[id(x)] = r
        if x.use is not None:
            r.use = self._moved(x.use, by)
        if x.partner is not None:
            r.partner = self._moved(x.partner, by)
        return r

    def calls_in(self, positions: Iterable[int]) -> list[Use]:
        out: list[Use] = []
        uses = self._root_uses
        for mi in positions:
            own = self.own.get(mi)
            if own is not None:
                out += own[0]
                continue
            by = backward(self.runs, mi)
            if by is None:
                continue
            k = mi - by
            lo = bisect_left(uses, k, key=_mi)
            out += [self._moved(u, by) for u in uses[lo : bisect_right(uses, k, lo=lo, key=_mi)]]
        return out

    def _turn(self, mi: int) -> list[Use] | None:
        return self._read(mi, 1, self._turns, self.root.uses_by_message, self._moved)

    def _results(self, mi: int) -> list[Result] | None:
        return self._read(mi, 2, self._answers, self.root.results_by_message, self._moved)

    def _read(
        self,
        mi: int,
        part: int,
        cache: dict[int, list[_T] | None],
        at: Mapping[int, list[_T]],
        copy: Callable[[_T, int], _T],
    ) -> list[_T] | None:
        """Message `mi`'s turn (`part` 1) or results (2): its own, or root's moved."""
        own = self.own.get(mi)
        if own is not None:
            return own[part]  # type: ignore[return-value]
        if mi in cache:
            return cache[mi]
        by = backward(self.runs, mi)
        got = None if by is None else at.get(mi - by)
        if got is not None and by:
            got = [copy(x, by) for x in got]
        cache[mi] = got
        return got

    def _keys_of(self, at: Mapping[int, list[_T]], part: int) -> Callable[[], list[int]]:
        def keys() -> list[int]:
            out = [k for k in (forward(self.runs, k) for k in at) if k is not None]
            out = [k for k in out if k not in self.own]
            out += [k for k, got in self.own.items() if got[part]]
            return sorted(out)

        return keys

    def _made_whole(self) -> tuple[list[Use], list[Result]]:
        if self._whole is None:
            uses: list[Use] = []
            results: list[Result] = []
            own, runs = self.own, self.runs
            for u in self.root.uses:
                k = forward(runs, u.mi)
                if k is not None and k not in own:
                    uses.append(self._moved(u, k - u.mi))
            for r in self.root.results:
                k = forward(runs, r.mi)
                if k is not None and k not in own:
                    results.append(self._moved(r, k - r.mi))
            for calls, _, answers in own.values():
                uses += calls
                results += answers or ()
            uses.sort(key=_place)
            results.sort(key=_place)
            self._whole = uses, results
        return self._whole

    @property
    def uses(self) -> list[Use]:  # type: ignore[override]
        return self._made_whole()[0]

    @property
    def results(self) -> list[Result]:  # type: ignore[override]
        return self._made_whole()[1]

    def tool_ids(self) -> set[str]:
        out = self.root.tool_ids() - self.gone_ids
        for calls, _, answers in self.own.values():
            out.update(u.tool_id for u in calls if u.tool_id)
            out.update(r.tool_id for r in answers or () if r.tool_id)
        return out


_mi = attrgetter("mi")


def _place(x: Use | Result) -> tuple[int, int]:
    return x.mi, x.bi
