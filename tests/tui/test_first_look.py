"""The TUI's first look at a session just read (`state.first_look`: `check`'s lean analysis,
the rows made when read, no lanes, no plan) shows what the whole state shows of the
findings: the same rows and marks, counts, summary line, first problem and numbers, on
every sample, fixture and corpus file and mutated copies of them; in the app, the keys
work while the whole is made, and those that need it wait for it."""

from __future__ import annotations

import random

from repair.workbench import Workbench
from tests.engine.test_incremental import SEEDS
from tests.fuzz_support import mutated_session, over_mutated_seeds
from tests.tui.tui_helpers import held_load, settle, timeline, until, widget_text
from tui.app import HistviewApp
from tui.rows import lazy_rows
from tui.state import first_look, snapshot, workbench_of


def _shown(d) -> dict:
    """What the screen shows of a state's findings."""
    return {
        "rows": [
            (r.kind, r.mi, r.bi, r.severity, [f.key for f in r.findings]) for r in d.table.rows
        ],
        "message_row": d.table.message_row,
        "finding_rows": d.table.finding_rows,
        "mark_width": d.table.mark_width,
        "has_time": d.table.has_time,
        "by_message": {mi: [f.key for f in fs] for mi, fs in d.by_message.items()},
        "problems": d.problems,
        "first_problem": d.first_problem,
        "numbers": d.numbers,
        "counts": d.counts,
        "total": d.total,
        "threads": d.threads,
        "main": d.main,
        "index_width": d.index_width,
    }


@over_mutated_seeds(SEEDS, 200, mutations=(0, 2))
def test_first_look_shows_the_findings_of_the_whole(which, rng_seed, mutations):
    session = mutated_session(SEEDS[which], random.Random(rng_seed), mutations)
    if session is None:
        return
    first, analyses = first_look(session, lazy_rows(session))
    assert first.lanes is None and not first.whole and not first.fixes
    seeded = snapshot(workbench_of(session, analyses), None)
    fresh = snapshot(Workbench(session), None)
    assert _shown(first) == _shown(fresh) == _shown(seeded)
    assert seeded.whole and [f.key for f in seeded.fixes] == [f.key for f in fresh.fixes]
    assert seeded.lanes is not None and fresh.lanes is not None
    assert seeded.lanes.used_lanes == fresh.lanes.used_lanes


async def test_the_first_look_takes_keys_and_the_whole_keeps_the_cursor(cc_file, monkeypatch):
    """While the whole is made: the findings are on the rows (the cursor on the first
    problem, `n` the next finding), End reaches the last row, the detail names the row's
    findings; the whole then draws the lanes and keeps the cursor on its row."""
    with held_load(monkeypatch, "workbench_of") as gate:
        app = HistviewApp(str(cc_file))
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.main is not None and app.main.filling)
            main = app.main
            tl = timeline(app)
            first = main.derived
            assert tl.state.lanes is None and main.wb is None
            assert first.first_problem is not None
            assert tl.current_row_index == first.first_problem
            assert "pairing…" in widget_text(app, "#header")
            assert widget_text(app, "#summary")  # the problems in words
            await pilot.press("n")
            assert tl.current_row.findings and tl.current_row_index > first.first_problem
            assert "messages." in widget_text(app, "#detail")
            await pilot.press("G")
            last = len(tl.state.table.rows) - 1
            assert tl.current_row_index == last
            gate.set()
            await until(pilot, lambda: main.wb is not None)
            await settle(pilot)
            assert not main.filling and tl.state.lanes is not None
            assert tl.current_row_index == last
            assert "pairing…" not in widget_text(app, "#header")
            assert _shown(main.derived) == _shown(first)


async def test_keys_that_need_the_workbench_wait_for_it(cc_file, monkeypatch):
    """`r` (the repair pane) pressed during the first look waits, said in the header, and
    opens the pane once the whole is there."""
    with held_load(monkeypatch, "workbench_of") as gate:
        app = HistviewApp(str(cc_file))
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.main is not None and app.main.filling)
            main = app.main
            await pilot.press("r")
            assert not main.repair_open and [w.action for w in main._queued] == ["toggle_repair"]
            assert "(1 waiting)" in widget_text(app, "#header")
            gate.set()
            await settle(pilot)
            assert main.wb is not None and main.repair_open and not main._queued
            assert main.fixes and main.fixes == list(main.derived.fixes)


async def test_a_key_waiting_behind_a_modal_runs_when_it_closes(cc_file, monkeypatch):
    """`e` then `t` pressed during the first look: the export screen opens when the whole
    is there, `t` waits for it, and runs (once) when the export screen is closed (the
    generated session has no threads: `t` says so)."""
    with held_load(monkeypatch, "workbench_of") as gate:
        app = HistviewApp(str(cc_file))
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.main is not None and app.main.filling)
            main = app.main
            await pilot.press("e", "t")
            assert [w.action for w in main._queued] == ["export", "threads"]
            gate.set()
            await until(pilot, lambda: app.screen is not main)
            assert [w.action for w in main._queued] == ["threads"]
            await pilot.press("escape")
            await settle(pilot)
            said = [n.message for n in app._notifications]
            assert said.count("This session has no sidechain or subagent threads.") == 1
            assert not main._queued
            assert "waiting" not in widget_text(app, "#header")


def _footer(app) -> dict[str, bool]:
    """The footer's keys as drawn: action -> enabled."""
    from textual.widgets._footer import FooterKey

    return {k.action: not k.has_class("-disabled") for k in app.main.query(FooterKey)}


def _said(app, shown: dict[str, bool]) -> dict[str, bool]:
    """What `check_action` says of the footer's keys and of Apply (shown only while the
    repair pane is open or is to open: False hides a key)."""
    main = app.main
    said = {a: main.check_action(a, ()) is True for a in shown if a != "command_palette"}
    if main.check_action("apply_fix", ()) is not False:
        said["apply_fix"] = main.check_action("apply_fix", ()) is True
    return said


async def test_the_footer_follows_the_keys_while_the_view_fills_in(cc_file, monkeypatch):
    """The footer is asked again only when what the keys can do changed: on the first
    look and on the whole it draws each key as `check_action` says; `r` typed during the
    first look (it waits) then opens the pane and Apply shows. The loading indicator stops
    its animation's timer once the rows are shown."""
    from textual.widgets import LoadingIndicator

    with held_load(monkeypatch, "workbench_of") as gate:
        app = HistviewApp(str(cc_file))
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.main is not None and app.main.filling)
            await _footer_drawn(pilot)
            shown = _footer(app)
            assert "search" in shown and "apply_fix" not in shown
            assert {a: e for a, e in shown.items() if a != "command_palette"} == _said(app, shown)
            spinner = app.main.query_one(LoadingIndicator)
            assert not spinner.display and spinner.auto_refresh is None
            await pilot.press("r")
            gate.set()
            await settle(pilot)
            await _footer_drawn(pilot)
            assert app.main.repair_open
            shown = _footer(app)
            assert shown["apply_fix"]
            assert {a: e for a, e in shown.items() if a != "command_palette"} == _said(app, shown)


async def _footer_drawn(pilot) -> None:
    """The footer recomposes after the refresh that follows a change: two pauses."""
    await pilot.pause()
    await pilot.pause()


def _composed(app) -> list[tuple[str, bool]]:
    """What Textual's own footer would draw now (the long way): each shown binding's action
    once, in order, disabled or not, and the command palette's key."""
    seen: dict[str, bool] = {}
    for key, (_, b, enabled, _tip) in app.main.active_bindings.items():
        if b.show or key == app.COMMAND_PALETTE_BINDING:
            seen.setdefault(b.action, not enabled)
    return list(seen.items())


async def test_the_footer_recomposed_only_on_a_change_draws_what_a_recompose_would(
    cc_file, monkeypatch
):
    """The footer skips a recompose when the keys it would draw are the same: at each
    change of what the keys can do (the first look, the whole, the repair pane, a focus
    change) what it draws is what Textual's footer would compose then."""
    from textual.widgets._footer import FooterKey

    def drawn() -> list[tuple[str, bool]]:
        return [(k.action, k.has_class("-disabled")) for k in app.main.query(FooterKey)]

    with held_load(monkeypatch, "workbench_of") as gate:
        app = HistviewApp(str(cc_file))
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.main is not None and app.main.filling)
            await _footer_drawn(pilot)
            assert drawn() == _composed(app)
            gate.set()
            await settle(pilot)
            await _footer_drawn(pilot)
            assert drawn() == _composed(app)
            for key in ("r", "tab", "r", "shift+tab"):
                await pilot.press(key)
                await settle(pilot)
                await _footer_drawn(pilot)
                assert drawn() == _composed(app), key
