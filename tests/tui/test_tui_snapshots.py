"""Snapshot tests of the TUI (pytest-textual-snapshot). Each SVG was converted to PNG and
looked at before it was accepted. Deterministic: animations off (conftest), fixed sizes,
basenames only on screen, no clock on screen (times come from the session)."""

from __future__ import annotations

import re
import shutil
import threading
from pathlib import Path

import pytest

from tests.paths import CLIENT_FIXTURES, DEMO, SAMPLES, sample_files
from tests.tui.tui_helpers import HOSTILE, settle, wait_ready
from tui.app import HistviewApp

SNAPS = Path(__file__).parent / "__snapshots__" / "test_tui_snapshots"
SIZES = [(80, 24), (120, 40)]
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")

CLEAN = b"""[
{"role":"user","content":"List the files, please."},
{"role":"assistant","content":[{"type":"text","text":"Listing them."},{"type":"tool_use","id":"toolu_1","name":"list_files","input":{"path":"."}}]},
{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"README.md\\nsrc/"}]},
{"role":"assistant","content":[{"type":"text","text":"There is a README.md and a src/ folder."}]}
]"""


def _app(path) -> HistviewApp:
    return HistviewApp(str(path))


def _after(*keys: str):
    """run_before: the session ready, `keys` pressed, then every worker they started (a
    repair step, the preview, the promise) done and drawn."""

    async def run_before(pilot) -> None:
        await wait_ready(pilot)
        await pilot.press(*keys)
        await settle(pilot)

    return run_before


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_clean_session(snap_compare, tmp_path, size):
    path = tmp_path / "clean_session.json"
    path.write_bytes(CLEAN)
    assert snap_compare(_app(path), terminal_size=size, run_before=wait_ready)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_demo_broken(snap_compare, size):
    """The demo: every kind of lane (paired, orphan, duplicate, misplaced, above, mismatch)."""
    assert snap_compare(_app(DEMO), press=["n"], terminal_size=size, run_before=wait_ready)


@pytest.mark.parametrize("sample", sample_files(), ids=lambda p: p.name)
def test_broken_sample(snap_compare, sample):
    assert snap_compare(_app(sample), press=["n"], terminal_size=(120, 40), run_before=wait_ready)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_detail_raw_json(snap_compare, size):
    assert snap_compare(
        _app(DEMO), press=["n", "n", "n", "J"], terminal_size=size, run_before=wait_ready
    )


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_repair_preview(snap_compare, size):
    assert snap_compare(_app(DEMO), terminal_size=size, run_before=_after("r"))


def _copy(tmp_path) -> Path:
    dst = tmp_path / DEMO.name
    shutil.copy(DEMO, dst)
    return dst


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_after_apply(snap_compare, tmp_path, size):
    assert snap_compare(_app(_copy(tmp_path)), terminal_size=size, run_before=_after("r", "a"))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_after_undo(snap_compare, tmp_path, size):
    assert snap_compare(_app(_copy(tmp_path)), terminal_size=size, run_before=_after("r", "a", "u"))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_help_screen(snap_compare, size):
    assert snap_compare(
        _app(DEMO), press=["question_mark"], terminal_size=size, run_before=wait_ready
    )


def _no_control_bytes(name: str) -> None:
    path = SNAPS / name
    if not path.exists():  # --snapshot-update writes it at the end of the session
        return
    svg = path.read_text(encoding="utf-8")
    bad = sorted({f"U+{ord(c):04X}" for c in CONTROL.findall(svg)} - {"U+000A"})
    assert not bad, f"raw control characters in {name}: {bad}"


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_hostile_timeline_and_detail(snap_compare, size):
    assert snap_compare(_app(HOSTILE), press=["j"], terminal_size=size, run_before=wait_ready)
    _no_control_bytes(f"test_hostile_timeline_and_detail[{size[0]}x{size[1]}].svg")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_hostile_repair_preview(snap_compare, size):
    assert snap_compare(_app(HOSTILE), terminal_size=size, run_before=_after("r"))
    _no_control_bytes(f"test_hostile_repair_preview[{size[0]}x{size[1]}].svg")


def test_hostile_raw_json_and_notification(snap_compare):
    async def run_before(pilot):
        await wait_ready(pilot)
        await pilot.press("j", "J")
        pilot.app.main.last_search = "[@click=app.quit]none\x1b[2J\u202e"

    assert snap_compare(
        _app(HOSTILE), press=["slash", "enter"], terminal_size=(120, 40), run_before=run_before
    )
    _no_control_bytes("test_hostile_raw_json_and_notification.svg")


ROO_TT = SAMPLES / "roo_subtask_delegation_duplicate.json"  # results stamped before the call


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_first_screen_names_the_problem(snap_compare, size):
    """Nothing pressed: the cursor on the first error with its finding in the detail, the
    summary line, the time column with the time-travel marks and the travel lane."""
    assert snap_compare(_app(ROO_TT), terminal_size=size, run_before=wait_ready)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_help_legend(snap_compare, size):
    """The legend at the end of help: every mark in the colours the timeline uses."""
    assert snap_compare(
        _app(DEMO), press=["question_mark", "G"], terminal_size=size, run_before=wait_ready
    )


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_search_highlight(snap_compare, size):
    async def run_before(pilot):
        await wait_ready(pilot)
        await pilot.press("g", "slash", *"new_task", "enter")
        await pilot.app.workers.wait_for_complete()
        await pilot.press("right_square_bracket")

    assert snap_compare(_app(ROO_TT), terminal_size=size, run_before=run_before)


def test_detail_hidden_80x24(snap_compare):
    """d twice: the timeline takes the whole width (clock times come back)."""
    assert snap_compare(
        _app(ROO_TT), press=["d", "d"], terminal_size=(80, 24), run_before=wait_ready
    )


def test_light_theme(snap_compare):
    async def run_before(pilot):
        await wait_ready(pilot)
        pilot.app.theme = "textual-light"
        await pilot.pause()

    assert snap_compare(_app(ROO_TT), terminal_size=(120, 40), run_before=run_before)


# issue 10 points 5-7: the preview of what is written, the busy state, threads, broken chains

CLAUDE = SAMPLES / "claude_code_parallel_interrupted.jsonl"
SPLIT = SAMPLES / "anthropic_parallel_results_split.json"
BROKEN_CHAIN = CLIENT_FIXTURES / "claude" / "broken"


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_preview_of_a_jsonl_record(snap_compare, size):
    """Claude Code: the new result record with its parentUuid, the line re-linked to it."""
    assert snap_compare(_app(CLAUDE), terminal_size=size, run_before=_after("r"))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_preview_block_description(snap_compare, size):
    """A JSON document: what happens to the blocks first, then the entries written."""
    assert snap_compare(_app(SPLIT), terminal_size=size, run_before=_after("r"))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_busy_state(snap_compare, tmp_path, size, monkeypatch):
    """A fix being applied (held until the screenshot is taken) and an undo waiting."""
    from repair.workbench import Workbench

    go = threading.Event()
    real = Workbench.apply

    def apply(self, fix, view=None):
        go.wait(5)
        return real(self, fix, view)

    monkeypatch.setattr(Workbench, "apply", apply)

    async def run_before(pilot):
        await wait_ready(pilot)
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("a")
        await pilot.pause()
        await pilot.press("u")
        await pilot.pause()

    try:
        assert snap_compare(_app(_copy(tmp_path)), terminal_size=size, run_before=run_before)
    finally:
        go.set()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_thread_switcher(snap_compare, tmp_path, size):
    from tests.claude_code_records import session_with_subagents

    main = session_with_subagents(tmp_path, bad=True)
    assert snap_compare(_app(main), terminal_size=size, run_before=_after("t"))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_broken_chain_row(snap_compare, tmp_path, size):
    """The first screen on a chain cut by a lost record: the row, its finding, the count."""
    src = tmp_path / "broken-chain-cut.jsonl"
    shutil.copy(BROKEN_CHAIN / src.name, src)
    assert snap_compare(_app(src), terminal_size=size, run_before=wait_ready)
