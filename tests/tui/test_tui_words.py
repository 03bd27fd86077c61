"""A word for every key and one count: the header's message count is the one `histview check`
prints (with the file's own count beside it where the client splits, merges or leaves out
messages), and the keys that need the analysis answer while a large file is still read."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from tests.command import run
from tests.paths import SAMPLES
from tests.tui.tui_helpers import (
    burst,
    held_load,
    opened,
    opened_held,
    settle,
    timeline,
    typed_once_loaded,
    until,
    wait_ready,
    widget_text,
)
from tui.app import HistviewApp
from tui.main_screen import message_count
from tui.screens import ExportScreen

# (sample, what the header says): the file's messages, and the messages sent where it differs
COUNTED = [
    ("codex_missing_output.jsonl", "6 msgs · 11 sent"),  # calls and results sent apart
    ("openai_chat_user_between_calls.json", "6 msgs · 7 sent"),  # a tool message per result
    ("gemini_cli_doubled_after_resume.jsonl", "9 msgs · 8 sent"),  # one not sent
    ("roo_reused_tool_use_id.json", "15 msgs"),
]


@pytest.mark.parametrize(("name", "said"), COUNTED, ids=[c[0] for c in COUNTED])
async def test_the_header_counts_what_check_counts(name, said):
    path = SAMPLES / name
    _code, out, _err = run("check", "--json", path)
    sent = json.loads(out.splitlines()[0])["messages"]
    for size in ((80, 24), (120, 40)):
        async with opened(path, size) as (app, _pilot):
            header = widget_text(app, "#header")
            stored = len(app.main.derived.session.messages)
            assert said in header
            assert said == message_count(stored, sent)
            # the figure check prints is in the header, under its name when it differs
            assert (f"{sent} sent" if sent != stored else f"{sent} msgs") in header


def _said(app) -> list[str]:
    return [n.message for n in app._notifications]


# typed while the file is read, or once it is loaded: r, a search, n, f, ], N, y
TYPED = ["r", "slash", *"toolu_", "enter", "n", "f", "right_square_bracket", "N", "y"]


def _screen_after(app) -> tuple:
    """What the keys typed left on screen: the cursor's row, the view, the repair pane and
    its fix, the search bar, the last word."""
    main, tl = app.main, timeline(app)
    return (
        tl.current_row_index,
        tl.findings_only,
        main.repair_open,
        main.query_one("RepairPane").selected,
        widget_text(app, "#search-bar"),
        (_said(app) or [""])[-1],
    )


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_keys_typed_while_the_file_is_read_run_in_order(cc_file, monkeypatch, size):
    """A large file's first lines on screen, the rest still read: r, a search, n, f, ], N
    and y wait, each says what for, the header counts them; `u` says there is nothing to
    undo. Released, they run in the order typed: the screen is the one the same keys give
    once the file is loaded (the search bar says "match k of N": the search ran after r)."""
    loaded = await typed_once_loaded(cc_file, size, TYPED, _screen_after)
    assert loaded[4].startswith("/toolu_  match ") and loaded[5].startswith("Copied ")

    mb = cc_file.stat().st_size / 1e6
    still = "Still reading the file" + (f" ({mb:.0f} MB)" if mb >= 1 else "")
    reading = opened_held(monkeypatch, cc_file, size, "load_session", lambda m: m.head_only)
    async with reading as (app, pilot, gate):
        main = app.main
        await pilot.press(*TYPED, "u")
        await pilot.pause()
        assert [w.action for w in main._queued] == [
            "toggle_repair",
            "search",
            "next_finding",
            "toggle_filter",
            "next_match",
            "prev_finding",
            "copy_id",
        ]
        assert main.search is None and not main.repair_open
        assert "(7 waiting)" in widget_text(app, "#header")
        assert _said(app) == [
            f"{still}: the repair pane opens when the analysis is done.",
            f"{still}: the search for “toolu_” runs when it is read.",
            f"{still}: n goes to the next finding once they are found.",
            f"{still}: f shows the rows with findings once they are found.",
            f"{still}: ] goes to the next match once the search has run.",
            f"{still}: N goes to the previous finding once they are found.",
            f"{still}: y runs after the keys typed before it.",
            "Nothing to undo yet.",
        ]
        gate.set()
        await wait_ready(pilot)
        await settle(pilot)
        assert not main._queued and main._search_waiting is None
        assert "waiting" not in widget_text(app, "#header")
        assert _screen_after(app) == loaded


async def test_g_and_j_move_at_once_while_keys_wait(cc_file, monkeypatch):
    """On a large file's first lines, `G` goes to the last row read so far and says so,
    even with a search waiting; `]` with no search typed says so at once."""
    mb = cc_file.stat().st_size / 1e6
    still = "Still reading the file" + (f" ({mb:.0f} MB)" if mb >= 1 else "")
    with held_load(monkeypatch, "load_session", head=True) as gate:
        app = HistviewApp(str(cc_file))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: app.main is not None and app.main.head_only)
            main = app.main
            await pilot.press("right_square_bracket", "slash", *"toolu_", "enter", "G")
            await pilot.pause()
            tl = timeline(app)
            assert tl.current_row_index == len(tl.state.table.rows) - 1  # of the first lines
            assert _said(app) == [
                "No search yet: press / first.",
                f"{still}: the search for “toolu_” runs when it is read.",
                f"{still}: this is the last row read so far.",
            ]
            await pilot.press("k")
            assert tl.current_row_index == len(tl.state.table.rows) - 2
            gate.set()
            await wait_ready(pilot)
            await settle(pilot)
            # the search ran from the row the cursor was on
            assert main.search is not None and tl.current_row_index in main.search.rows


async def test_escape_drops_a_search_typed_while_the_file_is_read(cc_file, monkeypatch):
    with held_load(monkeypatch, "load_session", head=True) as gate:
        app = HistviewApp(str(cc_file))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: app.main is not None and app.main.head_only)
            main = app.main
            await pilot.press("slash", *"toolu_", "enter")
            await pilot.pause()
            assert "(1 waiting)" in widget_text(app, "#header")
            await pilot.press("escape")
            await pilot.pause()
            assert main._search_waiting is None and "waiting" not in widget_text(app, "#header")
            gate.set()
            await wait_ready(pilot)
            await settle(pilot)
            assert main.search is None and not widget_text(app, "#search-bar").strip()


async def test_steps_and_export_pressed_while_reading_run_in_order(cc_file, monkeypatch):
    """`A` then `u` then `e` while the file is read: they wait (u after a step it can undo),
    and run in order once the workbench is there: every fix applied, undone, then the
    export dialog opens."""
    with held_load(monkeypatch, "load_session", head=True) as gate:
        app = HistviewApp(str(cc_file))
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.main is not None and app.main.head_only)
            main = app.main
            await pilot.press("A", "u", "e")
            await pilot.pause()
            assert [w.action for w in main._queued] == ["apply_all", "undo", "export"]
            assert "(3 waiting)" in widget_text(app, "#header")
            gate.set()
            await until(pilot, lambda: isinstance(app.screen, ExportScreen))
            said = _said(app)
            assert any(s.startswith("Applied ") for s in said)
            assert any(s.startswith("Undone: ") for s in said)
            assert main.derived.applied == 0 and not main._queued


async def test_keys_pressed_while_the_findings_are_sought(cc_file, monkeypatch):
    """Every row read, the analysis running: `n` waits for the findings, `e` for the
    workbench; `n` runs on the first look (from the first problem, where the first screen
    puts the cursor), the export dialog opens when the workbench is there."""
    with held_load(monkeypatch, "first_look") as gate:
        app = HistviewApp(str(cc_file))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: app.main is not None and app.main.session is not None)
            main = app.main
            assert "analysing…" in widget_text(app, "#header")
            await pilot.press("n", "e")
            await pilot.pause()
            assert _said(app) == [
                "Still looking for problems: n goes to the next finding once they are found.",
                "Still looking for problems: the export dialog opens when the analysis is done.",
            ]
            assert [w.action for w in main._queued] == ["next_finding", "export"]
            assert "(2 waiting)" in widget_text(app, "#header")
            gate.set()
            await until(pilot, lambda: isinstance(app.screen, ExportScreen))
            assert not main._queued
            rows = timeline(app).state.table.finding_rows
            first = main.derived.first_problem
            assert timeline(app).current_row_index == rows[rows.index(first) + 1]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_keys_pressed_while_the_calls_are_paired_say_they_wait(cc_file, monkeypatch, size):
    """The first look on screen, the whole still made: `n` moves, `r` waits and says so;
    the header keeps the count check prints, the marks and what waits at 80 columns too."""
    with held_load(monkeypatch, "workbench_of") as gate:
        app = HistviewApp(str(cc_file))
        async with app.run_test(size=size) as pilot:
            await until(pilot, lambda: app.main is not None and app.main.filling)
            main = app.main
            at = timeline(app).current_row_index
            await pilot.press("n", "r")
            await pilot.pause()
            assert timeline(app).current_row_index != at
            assert _said(app) == [
                "Still pairing the calls and results: the repair pane opens when the analysis is done."
            ]
            header = widget_text(app, "#header")
            assert header.rstrip().endswith("pairing… (1 waiting)")
            assert len(header.rstrip()) <= size[0] - 2  # (its padding)
            sent = main.derived.sent
            assert sent != len(main.session.messages) and f"{sent} sent" in header
            gate.set()
            await settle(pilot)
            assert main.repair_open


async def test_repair_keys_with_the_pane_closed_say_where_they_work():
    """`a` and `s` act on the repair plan: with the pane closed they say so (nothing is
    applied); with it open `a` applies the selected fix without that word."""
    async with opened(SAMPLES / "roo_reused_tool_use_id.json", (80, 24)) as (app, pilot):
        await pilot.press("a", "s")
        await settle(pilot)
        word = "a and s act on the repair plan: r opens it."
        assert _said(app) == [word, word] and app.main.derived.applied == 0
        await pilot.press("r", "a")
        await settle(pilot)
        assert app.main.derived.applied == 1 and _said(app).count(word) == 2


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_keys_behind_a_waiting_key_wait_their_turn(cc_file, monkeypatch, size):
    """The first look on screen: `n` and `J` work now, but typed after `r` (which waits for
    the workbench) they wait behind it and say so; they then run after it, as once loaded."""
    keys = ["r", "n", "J"]

    def seen(app) -> tuple:
        return (*_screen_after(app)[:4], app.main.raw)

    loaded = await typed_once_loaded(cc_file, size, keys, seen)
    async with opened_held(monkeypatch, cc_file, size, "workbench_of", lambda m: m.filling) as (
        app,
        pilot,
        gate,
    ):
        main = app.main
        at = timeline(app).current_row_index
        await pilot.press(*keys)
        await pilot.pause()
        assert timeline(app).current_row_index == at and not main.raw
        still = "Still pairing the calls and results"
        assert _said(app) == [
            f"{still}: the repair pane opens when the analysis is done.",
            f"{still}: n runs after the keys typed before it.",
            f"{still}: J runs after the keys typed before it.",
        ]
        assert widget_text(app, "#header").rstrip().endswith("pairing… (3 waiting)")
        gate.set()
        await settle(pilot)
        assert seen(app) == loaded and main.raw


# typed while the file is read, each key reading what the one before it moved: the fix `a`
# applies is the one of the row `n` went to; `N` goes back from the row of the fix `s` moved
# the list to (after its plan); `n` runs from the fix the list keeps after `A`
FOLLOWED = [["r", "n", "a"], ["r", "s", "N", "y"], ["r", "A", "y", "n", "n", "f"]]


@pytest.mark.parametrize("keys", FOLLOWED, ids=["-".join(k) for k in FOLLOWED])
async def test_keys_from_the_queue_read_what_the_key_before_them_moved(cc_file, monkeypatch, keys):
    """Keys typed while the file is read run, once it is read, on what the key before
    them left: the cursor a move of the fix list put on its row and the fix a move of the
    cursor selected, as typed once loaded; not what the screen showed before those moves'
    messages came (`a` applied the first fix, `N` went back from the first finding)."""
    size = (80, 24)

    def seen(app) -> tuple:
        main = app.main
        done = [w for w in _said(app) if w.startswith(("Copied", "Applied", "Skipped"))]
        return (*_screen_after(app)[:5], str(app.focused), main.derived.applied, done[-1:])

    loaded = await typed_once_loaded(cc_file, size, keys, seen)
    reading = opened_held(monkeypatch, cc_file, size, "load_session", lambda m: m.head_only)
    async with reading as (app, pilot, gate):
        await pilot.press(*keys)
        await pilot.pause()
        assert len(app.main._queued) == len(keys)
        gate.set()
        await wait_ready(pilot)
        await settle(pilot)
        assert not app.main._queued and seen(app) == loaded


BURST = ["slash", *"read", "enter", "n"]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_a_search_typed_at_once_goes_to_the_search_box(size):
    """`/read⏎n` read in one burst: the keys after `/` reach the search box (not the
    timeline's bindings, `r` the repair pane, `e` the export, `a`, `d`…), then `n` runs:
    the screen the same keys give typed one at a time."""
    path = SAMPLES / "roo_reused_tool_use_id.json"
    loaded = await typed_once_loaded(path, size, BURST, _screen_after)
    assert loaded[4].startswith("/read  ") and not loaded[2]
    async with opened(path, size) as (app, pilot):
        burst(app, BURST)
        await until(pilot, lambda: not app._ahead and app.screen is app.main)
        await settle(pilot)
        assert _screen_after(app) == loaded and app.main.search.query == "read"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_keys_typed_at_once_while_the_file_is_read(cc_file, monkeypatch, size):
    """`r/toolu_⏎n` read in one burst while the file is read: r, the search and n wait,
    in that order, and run once it is read as the same keys typed once loaded."""
    keys = ["r", "slash", *"toolu_", "enter", "n"]
    loaded = await typed_once_loaded(cc_file, size, keys, _screen_after)
    reading = opened_held(monkeypatch, cc_file, size, "load_session", lambda m: m.head_only)
    async with reading as (app, pilot, gate):
        main = app.main
        burst(app, keys)
        await until(pilot, lambda: len(main._queued) == 3)
        assert [(w.action, w.query) for w in main._queued] == [
            ("toggle_repair", None),
            ("search", "toolu_"),
            ("next_finding", None),
        ]
        gate.set()
        await wait_ready(pilot)
        await settle(pilot)
        assert _screen_after(app)[:5] == loaded[:5]


async def test_enter_typed_before_the_app_took_the_terminal_searches():
    """Keys typed before the app put the terminal in raw mode come with enter as a newline
    (ctrl+j): in the search box it searches as enter does."""
    async with opened(SAMPLES / "roo_reused_tool_use_id.json", (80, 24)) as (app, pilot):
        burst(app, ["slash", *"read", "ctrl+j"])
        await until(pilot, lambda: not app._ahead and app.screen is app.main)
        await settle(pilot)
        assert app.main.search is not None and app.main.search.query == "read"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_a_search_read_before_its_box_is_there_counts_as_typed_slowly(cc_file, size):
    """`/toolu_01⏎n` read in one go, before the search box is mounted: the box says when it
    takes keys, each key goes to it once the one before is done, enter closes it at once
    and `n` runs on the screen below: the search bar's "match k of N" and the cursor are
    those the keys give typed one at a time."""
    keys = ["slash", *"toolu_01", "enter", "n"]
    loaded = await typed_once_loaded(cc_file, size, keys, _screen_after)
    assert loaded[4].startswith("/toolu_01  match ")
    async with opened(cc_file, size) as (app, pilot):
        burst(app, keys)
        await until(pilot, lambda: not app._ahead and app.screen is app.main)
        await settle(pilot)
        assert _screen_after(app) == loaded


# the export dialog's output field: to its end, ".json" off, "-mine.json" on, enter
TO_MINE = ["e", "end", *["backspace"] * 5, "minus", *"mine", "full_stop", *"json", "enter"]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_keys_read_before_the_export_dialog_is_there_fill_it(tmp_path, size):
    """`e`, a change to the output name and enter, read in one go before the export dialog
    is mounted: the keys reach its output field in the order typed (not the session
    screen's bindings: `e`, `n`, `j`...) and enter exports there, as typed one at a time."""

    def seen(app) -> tuple:
        folder = os.path.dirname(app.main.path)
        return (
            app.screen is app.main,
            app.main.exported is app.main.wb.session,
            sorted(os.listdir(folder)),
        )

    slow, fast = tmp_path / "slow", tmp_path / "fast"
    for folder in (slow, fast):
        folder.mkdir()
        shutil.copy(SAMPLES / "roo_reused_tool_use_id.json", folder / "s.json")
    loaded = await typed_once_loaded(slow / "s.json", size, TO_MINE, seen)
    assert loaded == (True, True, ["s.fixed-mine.json", "s.json", "s.report.json"])
    async with opened(fast / "s.json", size) as (app, pilot):
        burst(app, TO_MINE)
        await until(pilot, lambda: not app._ahead and app.screen is app.main)
        await settle(pilot)
        assert seen(app) == loaded
    assert (fast / "s.fixed-mine.json").read_bytes() == (slow / "s.fixed-mine.json").read_bytes()
    report = json.loads((fast / "s.report.json").read_text())
    assert report["output"] == str(fast / "s.fixed-mine.json")


async def test_keys_read_before_the_palette_is_there_go_to_its_input():
    """Textual's command palette says nothing of its own: its input taking the focus is its
    word; `ctrl+p theme` read in one go searches the palette for "theme"."""
    async with opened(SAMPLES / "roo_reused_tool_use_id.json", (80, 24)) as (app, pilot):
        burst(app, ["ctrl+p", *"theme"])
        await until(pilot, lambda: app.screen is not app.main and not app._ahead)
        await until(pilot, lambda: app._in_flight is None)
        assert type(app.screen).__name__ == "CommandPalette"
        assert [field.value for field in app.screen.query("Input")] == ["theme"]
