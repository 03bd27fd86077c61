"""The timeline's rows are found without making the blocks of a message known to hold no
tool block (`Message.holds_tool_blocks`: its tool ids read by the loader), and the load's
rows are counted from those ids and made when read (`lazy_rows`); both are the rows found
from every block made: on every sample, fixture and corpus file and mutated copies of
them."""

from __future__ import annotations

import random

from repair.analysis import analyze
from repair.model import LazyMessage
from tests.engine.test_incremental import SEEDS
from tests.fuzz_support import mutated_session, over_mutated_seeds
from tui.rows import build_rows, lazy_rows, with_findings


def _rows(session) -> list[tuple]:
    table = build_rows(session)
    return [(r.kind, r.mi, r.bi) for r in table.rows] + [tuple(table.message_row)]


def _twins(which: int, rng_seed: int, mutations: int) -> tuple | None:
    """One mutated seed loaded twice: as read, and with every block made."""
    seed = SEEDS[which]
    lazy = mutated_session(seed, random.Random(rng_seed), mutations)
    made = mutated_session(seed, random.Random(rng_seed), mutations)
    if lazy is None:
        return None
    assert made is not None
    for m in made.messages:
        m.blocks  # noqa: B018 (made now, before the rows ask)
    return lazy, made


@over_mutated_seeds(SEEDS, 300, mutations=(0, 2))
def test_rows_found_without_blocks_are_the_rows_of_every_block(which, rng_seed, mutations):
    twins = _twins(which, rng_seed, mutations)
    if twins is None:
        return
    lazy, made = twins
    assert _rows(lazy) == _rows(made)
    # a message the rows left unmade holds no tool block
    for a, b in zip(lazy.messages, made.messages, strict=True):
        if isinstance(a, LazyMessage) and not a.made():
            assert not any(
                blk.tool_id or blk.type in ("tool_use", "tool_result") for blk in b.blocks
            )


def _table(table) -> list:
    return [
        [(r.kind, r.mi, r.bi, r.severity, [f.key for f in r.findings]) for r in table.rows],
        table.message_row,
        table.finding_rows,
        table.has_time,
        table.mark_width,
    ]


@over_mutated_seeds(SEEDS, 300, mutations=(0, 2))
def test_rows_made_when_read_are_the_rows_built_at_once(which, rng_seed, mutations):
    """The load's table (`lazy_rows`: counted from the tool ids the loader read, each
    message's rows made when one is read) is `build_rows`' of every block made, with and
    without the findings marked, read from the end up (the End key) or in order (a search);
    counting made no message's blocks, and reading the last row made only its message's."""
    twins = _twins(which, rng_seed, mutations)
    if twins is None:
        return
    lazy, made = twins
    # the messages whose tool ids the loader read, their blocks not made yet
    known = [
        m
        for m in lazy.messages
        if isinstance(m, LazyMessage) and not m.made() and m._tool_ids is not None
    ]
    table = lazy_rows(lazy)
    assert not any(m.made() for m in known)
    eager = build_rows(made)
    assert table.message_row == eager.message_row and len(table.rows) == len(eager.rows)
    if eager.rows:
        assert table.rows[-1] == eager.rows[-1]
        last = lazy.messages[eager.rows[-1].mi]
        assert not any(m.made() for m in known if m is not last)
    analysis = analyze(made)
    assert _table(with_findings(table, analysis)) == _table(with_findings(eager, analysis))
    assert _table(table) == _table(eager)
