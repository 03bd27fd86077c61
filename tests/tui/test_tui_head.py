"""The TUI's first rows of a large session: a Claude Code file's first lines are shown, then
the whole session replaces them."""

from __future__ import annotations

import functools

import tui.main_screen as main_screen
from repair.formats.head import load_head
from tests.tui.tui_helpers import wait_ready
from tui.app import AnalysisReady, HistviewApp, SessionLoaded


async def test_tui_shows_the_first_lines_then_the_whole_session(cc_file, monkeypatch):  # noqa: F811
    monkeypatch.setattr(
        main_screen, "load_head", functools.partial(load_head, size=100_000, small=0)
    )
    seen = []
    app = HistviewApp(str(cc_file))
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        await wait_ready(pilot)
        posted = [m for m in seen if isinstance(m, (SessionLoaded, AnalysisReady))]
        assert [type(m) for m in posted] == [
            SessionLoaded,
            SessionLoaded,
            AnalysisReady,  # the first look
            AnalysisReady,  # the whole, with its workbench
        ]
        head, whole = posted[0], posted[1]
        assert head.head and not whole.head
        assert len(head.session.messages) < len(whole.session.messages)
        main = app.main
        assert not main.head_only and main.session is whole.session
        header = str(main.query_one("#header").render())
        assert "reading" not in header and f"{len(whole.session.messages)} msgs" in header
        assert main.check_action("bottom", ()) and main.check_action("search", ())


async def test_tui_makes_a_large_files_crcs_once_the_analysis_is_shown(
    cc_file, monkeypatch, tmp_path
):
    """The TUI reads a large file left alone without its CRCs (`crcs_later`) and makes them
    after the analysis: once its load is done they are those a read that makes them gives,
    and the file is the one read."""
    from repair.files import FileText
    from repair.formats import load_session
    from repair.formats import probe as probe_mod
    from repair.formats.claude_code import adapter

    monkeypatch.setattr(probe_mod, "UNHELD_BYTES", 0)
    monkeypatch.setattr(adapter, "LEAN_BYTES", 0)
    monkeypatch.setattr(FileText, "SETTLED_NS", -(1 << 62))  # (the file left alone before)
    path = tmp_path / "s.jsonl"
    path.write_bytes(cc_file.read_bytes())
    loads = []
    real = main_screen.load_session
    monkeypatch.setattr(
        main_screen, "load_session", lambda *a, **kw: loads.append(kw) or real(*a, **kw)
    )
    app = HistviewApp(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        await app.workers.wait_for_complete()
        assert [kw.get("crcs_later") for kw in loads] == [True]
        source = app.main.session.source
        held = source.held
        assert isinstance(held, FileText) and not held._later and not held._changed
        assert held._crcs == load_session(str(path)).source.held._crcs
        assert source.same_bytes_as(str(path))
