"""The turns a write touches (`touched_turns`): where the writer plans a Claude Code
conversation again, the rest of its records written as they were read.

The writer (write.py) lays out the new message list turn by turn (an assistant message and
the user messages after it); a turn whose messages are all the very messages read keeps the
chain's order, its records written as read. So a plan of the whole conversation and a plan
of the stretches around the messages a fix made, each with one untouched turn before it
(the turn whose records a re-link there may re-parent) and ending where an untouched turn
starts, write the same bytes. `touched_turns` finds those stretches, or says (None) that
the whole conversation is planned: messages moved, an assistant id that reaches across a
stretch's edge, a stretch's records not the chain's between its edges.
tests/formats/test_cc_write_narrow.py holds the two plans equal on generated sessions.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from ...model import Message

if TYPE_CHECKING:
    from .chain import Graph
    from .load import View

# more changed messages than 1 in this many: the whole conversation is planned
_FEW = 8


@dataclass(frozen=True, slots=True)
class Turns:
    """A stretch of whole turns: messages [old, old_end) as read, [new, new_end) of the
    message list written, and the entries [chain, chain_end) of the chain (`View.chain`)."""

    old: int
    old_end: int
    new: int
    new_end: int
    chain: int
    chain_end: int


def whole(view: View, messages: list[Message]) -> Turns:
    return Turns(0, len(view.messages), 0, len(messages), 0, len(view.chain))


Gap = tuple[int, int, int, int]  # (a, b, i, j): old[a:b] written as new[i:j]


def touched_turns(
    view: View, messages: list[Message], chain_idx: list[int], gaps: list[Gap] | None
) -> list[Turns] | None:
    """The stretches of turns that hold every message of `messages` that is not the message
    read at its place (and every message read that is gone), in order; None: plan the whole
    conversation. `chain_idx`: the line of each chain entry; `gaps`: `gaps(view.messages,
    messages)`."""
    old = view.messages
    if gaps is None or len(gaps) * _FEW > len(old):
        return None

    def is_start(k: int) -> bool:
        m = old[k]
        return m.role == "assistant" and not m.hidden and bool(view.msg_records(m))

    out: list[Turns] = []
    for a, b, i1, i2 in gaps:
        # back to the turn before the one that holds old[a - 1]
        start, found = a, 0
        while start > 0 and found < 2:
            start -= 1
            if is_start(start):
                found += 1
        if found < 2:
            start = 0
        end = b
        while end < len(old) and not is_start(end):
            end += 1
        new, new_end = i1 - (a - start), i2 + (end - b)
        if out and start <= out[-1].old_end:
            last = out.pop()
            start, new = last.old, last.new
        out.append(Turns(start, end, new, new_end, 0, 0))
    if not _distinct(view):
        return None
    got: list[Turns] = []
    for t in out:
        cs = 0 if t.old == 0 else _first(view, old[t.old])
        ce = len(chain_idx) if t.old_end == len(old) else _first(view, old[t.old_end])
        if cs is None or ce is None or (got and cs <= got[-1].chain_end):
            return None
        got.append(Turns(t.old, t.old_end, t.new, t.new_end, cs, ce))
    # no assistant message.id reaches across an edge (Claude Code merges by it)
    edges = sorted({c for t in got for c in (t.chain, t.chain_end) if 0 < c < len(chain_idx)})
    reach = reach_at(mids_of(view.file.graph, chain_idx), edges)
    if any(r >= c for r, c in zip(reach, edges, strict=True)):
        return None
    return got


def gaps(old: list[Message], new: list[Message]) -> list[Gap] | None:
    """Where `new` holds other messages than `old`: (a, b, i, j), old[a:b] written as
    new[i:j]; the messages between are the very messages of `old`, in order (else None; None
    too where a list holds a message twice). So the messages of the gaps are those of each
    list that are not in the other (`changed`)."""
    at = {id(m): k for k, m in enumerate(old)}
    if len(at) != len(old):
        return None
    get = at.get
    gaps = []
    pj = pi = -1
    for i, m in enumerate(new):
        p = get(id(m))
        if p is None:
            continue
        if p <= pj:
            return None  # moved
        if p != pj + 1 or i != pi + 1:
            gaps.append((pj + 1, p, pi + 1, i))
        pj, pi = p, i
    if pj + 1 != len(old) or pi + 1 != len(new):
        gaps.append((pj + 1, len(old), pi + 1, len(new)))
    return gaps


def changed(old: list[Message], new: list[Message], gaps: list[Gap]) -> list[Message]:
    """The messages of `new` not in `old` and those of `old` not in `new` (the very
    objects), from their `gaps`: no pass over the lists."""
    return [m for a, b, i, j in gaps for m in (*new[i:j], *old[a:b])]


_NOT = object()


def mids_of(g: Graph, lines: list[int]) -> list[Any]:
    """Each line's message.id as Claude Code merges assistant records by it: an assistant
    record's (None: without one), `_NOT` for any other record."""
    kind, mid = g.kind, g.mid
    return [mid[i] if kind[i] == "assistant" else _NOT for i in lines]


def mid_reach(mids: list[Any]) -> list[int]:
    """For each place of a sequence of records (their `mids_of`), the furthest place an
    assistant message.id seen up to it reaches (its last record in the sequence; records
    without an id count as one id): a sequence cut before place i where `reach[i - 1] < i`
    builds into messages of its own on each side."""
    return list(accumulate(map(_last_places(mids).__getitem__, mids), max))


def reach_at(mids: list[Any], places: list[int]) -> list[int]:
    """`mid_reach(mids)[c - 1]` for each place c of `places` (ascending, each > 0): the
    furthest of the places seen up to each, taken a slice at a time (not a list as long as
    `mids` made one item at a time)."""
    last = _last_places(mids)
    out: list[int] = []
    top, done = -1, 0
    for c in places:
        if c > done:
            top = max(top, max(map(last.__getitem__, mids[done:c])))
            done = c
        out.append(top)
    return out


def _last_places(mids: list[Any]) -> dict[Any, int]:
    """Each message.id's last place (-1 for records of no assistant)."""
    last = dict(zip(mids, range(len(mids)), strict=True))
    last[_NOT] = -1
    return last


def _distinct(view: View) -> bool:
    """The chain holds no node twice (so no line twice: a line holds one uuid)."""
    return len(view.line_places()) == len(view.chain)  # (made once: stamping made it)


def _first(view: View, m: Message) -> int | None:
    """The chain place of the message's first record (None: a record off the chain, or not
    its first on the chain); the chain holds no line twice (`_distinct`)."""
    at = view.line_places()
    places = [at.get(r) for r in view.msg_records(m)]
    if not places or None in places or places[0] != min(places):  # type: ignore[type-var]
        return None
    return places[0]
