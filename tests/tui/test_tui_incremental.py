"""The rows and lanes after a repair step, made from those of the state before it (only
the messages the step changed drawn again: tui/state.py `derive` with `reuse`), are the
rows and lanes built whole: after random applies, undos, redos and changed actions, on
every sample and corpus file, fuzzed copies of them and generated sessions."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.gen import gen_claude_code
from repair import incremental
from repair.analysis import analyze
from repair.errors import InputError
from repair.formats import load_bytes
from repair.workbench import Workbench
from tests.engine.test_incremental import (
    SEEDS,
    _entry,
    _long,
    _shifting_steps,
    _steps,
    all_undone_and_redone,
    shifting_in_a_row,
)
from tests.fuzz_support import mutated_session, over_mutated_seeds
from tui import lanes
from tui.lanes import LaneLayout
from tui.rows import RowTable
from tui.state import Derived, derive


def _rows(t: RowTable) -> dict:
    return {
        "rows": [(r.kind, r.mi, r.bi, r.severity, [f.key for f in r.findings]) for r in t.rows],
        "message_row": t.message_row,
        "finding_rows": t.finding_rows,
        "has_time": t.has_time,
        "mark_width": t.mark_width,
    }


def _lanes(lay: LaneLayout) -> dict:
    drawn = lay.drawn()  # at their keys now (those a step moved read through its shift)
    ivs = [
        [(iv.start, iv.end, iv.state, iv.points, iv.lane, iv.travel, iv.owner) for iv in lane]
        for lane in drawn
    ]
    rows = range(len(lay.table.rows))
    return {
        "lanes": ivs,
        # each interval found again by its start and its end now (the index reads the keys as
        # made through the spans the steps moved them by)
        "found": [
            [
                (lay.index(k, iv.start) - 1, lay.index(k, iv.end, ends=True, right=False))
                for iv in lane
            ]
            for k, lane in enumerate(drawn)
        ],
        # the interval of each row's block, read from the lanes
        "own": [(iv.start, iv.end, iv.lane) if (iv := lay.own_at(r)) else None for r in rows],
        "used": lay.used_lanes,
        # what is drawn, row by row (the first rows and the last: keys read against the table)
        "cells": [lay.cells(r, 8) for r in sorted({*rows[:60], *rows[-60:]})],
    }


class Follow:
    """After each step: the state derived from the one before equals the one built whole."""

    def __init__(self, wb: Workbench, monkeypatch=None) -> None:
        self.shown: Derived = derive(*wb.view())
        self.kept: list[float] = []  # per step made from the one before: intervals kept
        # steps whose messages came or went, made from the one before: whether the lanes
        # were laid out whole (relayout gave up) each time
        self.shifted: list[bool] = []
        self.whole = 0
        if monkeypatch is not None:
            real = lanes.layout

            def counting(*args):
                self.whole += 1
                return real(*args)

            monkeypatch.setattr(lanes, "layout", counting)

    def __call__(self, wb: Workbench, done: list[str]) -> None:
        session, analysis = wb.view()
        moved = len(session.messages) != len(self.shown.session.messages)
        whole_before = self.whole
        got = derive(session, analysis, reuse=self.shown)
        relaid = self.whole != whole_before
        whole = derive(session, analysis)
        assert _rows(got.table) == _rows(whole.table), done
        assert _rows(got.base) == _rows(whole.base), done
        assert _lanes(got.lanes) == _lanes(whole.lanes), done
        if got.incremental and moved:
            self.shifted.append(relaid)
        elif got.incremental:
            # the intervals of the messages the step did not touch are those shown before
            before = {id(iv) for lane in self.shown.lanes.lanes for iv in lane}
            kept = sum(id(iv) in before for lane in got.lanes.lanes for iv in lane)
            self.kept.append(kept / max(1, len(before)))
        self.shown = got


@over_mutated_seeds(SEEDS, 100, mutations=(0, 2), steps=(1, 8))
def test_rows_and_lanes_after_random_steps_are_built_whole(which, rng_seed, mutations, steps):
    seed = SEEDS[which]
    rng = random.Random(rng_seed)
    session = mutated_session(seed, rng, mutations)
    if session is None:
        return
    wb = Workbench(session)
    _steps(wb, rng, steps, Follow(wb))


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(
    doc=st.lists(_entry, min_size=1, max_size=30),
    fmt=st.sampled_from(["roo", "anthropic"]),
    rng_seed=st.integers(0, 2**32 - 1),
)
def test_generated_sessions_after_random_steps(doc, fmt, rng_seed):
    """Small generated sessions: repeated and missing ids, id-less calls, results before
    their calls, text results, empty messages, stamps out of order."""
    try:
        session = load_bytes(json.dumps(doc).encode(), "/tmp/input.json", format=fmt)
    except InputError:
        return
    wb = Workbench(session)
    _steps(wb, random.Random(rng_seed), 6, Follow(wb))


def test_every_fix_of_a_long_session_redraws_only_what_it_changed():
    """Every fix of a 300-turn session one by one, some undone and redone: each state's
    rows and lanes are made from the state before and equal the whole build."""
    wb = Workbench(load_bytes(_long(300), "/tmp/long.json", format="anthropic"))
    follow = Follow(wb)
    steps = _steps(wb, random.Random(7), 60, follow)
    assert len(steps) >= 40
    assert len(follow.kept) >= len(steps) // 2
    assert min(follow.kept) > 0.9


@pytest.mark.parametrize("seed", range(3))
def test_rows_and_lanes_after_a_step_that_inserts_or_drops_a_message_are_moved(monkeypatch, seed):
    """A Claude Code fix that adds or drops a message (every row after it moves), then its
    undo and redo: the rows after it are moved, the lanes after it moved and coloured
    again only around the change (never laid out whole), and both equal the whole build."""
    data, _ = gen_claude_code(600, seed)
    wb = Workbench(load_bytes(data, "/tmp/input.jsonl"))
    follow = Follow(wb, monkeypatch)
    assert _shifting_steps(wb, follow)
    assert follow.shifted == [False, False, False]


@pytest.mark.parametrize(("seed", "max_spans"), [(0, 16), (1, 1)])
def test_rows_and_lanes_after_steps_that_insert_or_drop_messages_in_a_row_are_moved(
    monkeypatch, seed, max_spans
):
    """Several Claude Code fixes in a row that add or drop a message, all undone and
    redone: the lanes after each are the ones before read through the shifts so far (their
    keys moved when read; past `max_spans` runs of them a lane's are moved at once), never
    laid out whole, and equal the whole build."""
    monkeypatch.setattr(lanes, "_MAX_SPANS", max_spans)
    data, _ = gen_claude_code(600, seed)
    wb = Workbench(load_bytes(data, "/tmp/input.jsonl"))
    follow = Follow(wb, monkeypatch)
    assert len(shifting_in_a_row(wb, follow, 3)) >= 2
    assert wb.done and all_undone_and_redone(wb, follow)
    assert follow.shifted and not any(follow.shifted)


@st.composite
def _staggered(draw) -> list[dict]:
    """Turns whose results land up to five turns later (some missing, some twice): long,
    staggered lanes, so that a step's colouring reaches back over several of them."""
    n = draw(st.integers(4, 24))
    users: list[list[dict]] = [[] for _ in range(n)]
    msgs: list[dict] = [{"role": "user", "content": "go"}]
    for k in range(n):
        calls = [f"c{k}_{j}" for j in range(draw(st.integers(1, 3)))]
        msgs.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": c, "name": "ls", "input": {}} for c in calls
                ],
            }
        )
        for c in calls:
            for _ in range(draw(st.sampled_from([0, 1, 1, 1, 2]))):
                at = min(n - 1, k + draw(st.integers(0, 5)))
                users[at].append({"type": "tool_result", "tool_use_id": c, "content": "ok"})
        msgs.append({"role": "user", "content": users[k] or "next"})
    return msgs


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(doc=_staggered(), rng_seed=st.integers(0, 2**32 - 1))
def test_staggered_lanes_after_random_steps(doc, rng_seed):
    session = load_bytes(json.dumps(doc).encode(), "/tmp/input.json", format="anthropic")
    wb = Workbench(session)
    _steps(wb, random.Random(rng_seed), 6, Follow(wb))


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(
    doc=_staggered(),
    extra=_staggered(),
    at=st.integers(0, 40),
    drop=st.integers(0, 4),
    take=st.integers(0, 3),
)
def test_staggered_lanes_after_messages_inserted_or_dropped_anywhere(doc, extra, at, drop, take):
    """Any stretch of messages replaced by more or fewer (a lane's end dropped, a call
    put in between): the rows and lanes made from those before equal the whole build."""
    session = load_bytes(json.dumps(doc).encode(), "/tmp/input.json", format="anthropic")
    others = load_bytes(json.dumps(extra).encode(), "/tmp/x.json", format="anthropic")
    msgs = session.messages
    at = min(at, len(msgs))
    new = msgs[:at] + others.messages[1 : 1 + take] + msgs[at + drop :]
    if len(new) == len(msgs):
        return
    before = analyze(session, whole=True)
    incremental.prepare(before)
    shown = derive(session, before)
    after = session.copy_with(new)
    analysis = incremental.reanalyze(before, msgs, after, incremental.changes(msgs, new))
    if analysis is None:
        return
    got = derive(after, analysis, reuse=shown)
    whole = derive(after, analysis)
    assert got.incremental
    assert _rows(got.table) == _rows(whole.table)
    assert _lanes(got.lanes) == _lanes(whole.lanes)
