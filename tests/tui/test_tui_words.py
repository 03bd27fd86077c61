"""A word for every key and one count: the header's message count is the one `histview check`
prints (with the file's own count beside it where the client splits, merges or leaves out
messages), and the keys that need the analysis answer while a large file is still read."""

from __future__ import annotations

import json

import pytest

from tests.command import run
from tests.paths import SAMPLES
from tests.tui.tui_helpers import (
    held_load,
    opened,
    settle,
    timeline,
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


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_keys_pressed_while_the_file_is_read_answer_or_wait(cc_file, monkeypatch, size):
    """A large file's first lines on screen, the rest still read: `/` takes the search and
    runs it when every row is there; `r` waits for the workbench; `n`, `f`, `]` and `u` say
    at once why they cannot run yet, `G` that it went to the last row read so far; the
    header counts what waits. Released: the search
    ran, the repair pane is open, nothing waits."""
    mb = cc_file.stat().st_size / 1e6
    still = "Still reading the file" + (f" ({mb:.0f} MB)" if mb >= 1 else "")
    with held_load(monkeypatch, "load_session", head=True) as gate:
        app = HistviewApp(str(cc_file))
        async with app.run_test(size=size) as pilot:
            await until(pilot, lambda: app.main is not None and app.main.head_only)
            main = app.main
            await pilot.press("slash", *"toolu_", "enter")
            await pilot.pause()
            assert main.search is None and main._search_waiting == "toolu_"
            await pilot.press("r", "n", "f", "right_square_bracket", "u", "G")
            await pilot.pause()
            tl = timeline(app)
            assert tl.current_row_index == len(tl.state.table.rows) - 1  # of the first lines
            assert main._queued == ["toggle_repair"] and not main.repair_open
            assert "(2 waiting)" in widget_text(app, "#header")
            said = _said(app)
            assert said == [
                f"{still}: the search for “toolu_” runs when it is read.",
                f"{still}: the repair pane opens when the analysis is done.",
                f"{still}: n and N go to the findings once they are found.",
                f"{still}: f shows the rows with findings once they are found.",
                f"{still}: the search for “toolu_” runs when it is read.",
                "Nothing to undo yet.",
                f"{still}: this is the last row read so far.",
            ]
            assert not timeline(app).findings_only
            gate.set()
            await wait_ready(pilot)
            await settle(pilot)
            assert main.search is not None and main.search.query == "toolu_"
            assert main.search.rows and timeline(app).current_row_index in main.search.rows
            assert main.repair_open and main.fixes and not main._queued
            assert "waiting" not in widget_text(app, "#header")


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
            assert main._queued == ["apply_all", "undo", "export"]
            assert "(3 waiting)" in widget_text(app, "#header")
            gate.set()
            await until(pilot, lambda: isinstance(app.screen, ExportScreen))
            said = _said(app)
            assert any(s.startswith("Applied ") for s in said)
            assert any(s.startswith("Undone: ") for s in said)
            assert main.derived.applied == 0 and not main._queued


async def test_keys_pressed_while_the_findings_are_sought(cc_file, monkeypatch):
    """Every row read, the analysis running: `n` says why it cannot move yet, `e` waits
    and opens the export dialog when the workbench is there."""
    with held_load(monkeypatch, "first_look") as gate:
        app = HistviewApp(str(cc_file))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: app.main is not None and app.main.session is not None)
            main = app.main
            assert "analysing…" in widget_text(app, "#header")
            await pilot.press("n", "e")
            await pilot.pause()
            assert _said(app) == [
                "Still looking for problems: n and N go to the findings once they are found.",
                "Still looking for problems: the export dialog opens when the analysis is done.",
            ]
            assert main._queued == ["export"] and "(1 waiting)" in widget_text(app, "#header")
            gate.set()
            await until(pilot, lambda: isinstance(app.screen, ExportScreen))
            assert not main._queued


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
