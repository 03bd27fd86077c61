"""The timeline's rows are found without making the blocks of a message known to hold no
tool block (`Message.holds_tool_blocks`: its tool ids read by the loader), and the load's
rows are counted from those ids and made when read (`lazy_rows`); both are the rows found
from every block made: on every sample, fixture and corpus file and mutated copies of
them; and a step keeps the table made when read (`update_rows`), equal to the rows built
at once of each state after it."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from bench.gen import gen_claude_code
from repair.analysis import analyze
from repair.formats import load_bytes
from repair.incremental import Shift, changes
from repair.model import LazyMessage
from repair.workbench import Workbench
from tests.engine.test_incremental import (
    SEEDS,
    _shifting_steps,
    _steps,
    all_undone_and_redone,
    shifting_in_a_row,
)
from tests.fuzz_support import mutated_session, over_mutated_seeds
from tui.rows import LazyRows, RowTable, build_rows, lazy_rows, with_findings
from tui.state import derive


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


class KeptThroughSteps:
    """After each repair step the state's rows are made from the state before (`derive` with
    `reuse`, `update_rows`): still a table made when read, whose rows are `build_rows`' of
    the new state (with the findings marked too), and the step made the rows of the
    messages it changed and no other. Between steps some rows are read (as a draw or a
    finding makes them), so that rows made and unmade both go through the next step."""

    def __init__(self, wb: Workbench, rng: random.Random) -> None:
        session, analysis = wb.view()
        self.shown = derive(session, analysis, lazy_rows(session))
        self.rng = rng

    def __call__(self, wb: Workbench, done: list[str]) -> None:
        session, analysis = wb.view()
        before = self.shown
        made_before = _made(before.base)
        got = derive(session, analysis, reuse=before)
        assert isinstance(got.base.rows, LazyRows) and isinstance(got.table.rows, LazyRows)
        step = changes(before.session.messages, session.messages)
        remade = range(step.start, step.stop) if isinstance(step, Shift) else step
        if got.incremental:
            rows_of = got.base.message_rows
            assert _made(got.base) <= made_before + sum(len(rows_of(mi)) for mi in remade), done
        # read through copies: the rows left unmade stay so for the next step
        eager = build_rows(session)
        assert _table(_copy(got.base)) == _table(eager), done
        assert _table(_copy(got.table)) == _table(with_findings(eager, analysis)), done
        for _ in range(3):
            if len(got.base.rows):
                got.base.rows[self.rng.randrange(len(got.base.rows))]  # noqa: B018 (made)
        self.shown = got


def _made(table: RowTable) -> int:
    rows = table.rows
    assert isinstance(rows, LazyRows)
    return sum(r is not None for r in rows._made)


def _copy(table: RowTable) -> RowTable:
    return replace(table, rows=table.rows.copy())


@over_mutated_seeds(SEEDS, 100, mutations=(0, 2), steps=(1, 8))
def test_rows_made_when_read_after_random_steps_are_the_rows_built_at_once(
    which, rng_seed, mutations, steps
):
    """The load's table kept through applies, undos, redos and changed actions."""
    rng = random.Random(rng_seed)
    session = mutated_session(SEEDS[which], rng, mutations)
    if session is None:
        return
    wb = Workbench(session)
    _steps(wb, rng, steps, KeptThroughSteps(wb, rng))


@pytest.mark.parametrize("seed", range(2))
def test_rows_made_when_read_after_messages_inserted_or_dropped(seed):
    """Claude Code fixes that add or drop a message (every row after it moves: those made
    are moved, those unmade stay unmade), several in a row, all undone and redone."""
    data, _ = gen_claude_code(600, seed)
    wb = Workbench(load_bytes(data, "/tmp/input.jsonl"))
    assert _shifting_steps(wb, KeptThroughSteps(wb, random.Random(seed)))
    wb = Workbench(load_bytes(data, "/tmp/input.jsonl"))
    kept = KeptThroughSteps(wb, random.Random(seed))
    assert len(shifting_in_a_row(wb, kept, 3)) >= 2
    assert all_undone_and_redone(wb, kept)
