"""Helpers shared by the TUI tests: paths to sessions and waiting until the app is ready."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_sessions"
DEMO = REPO / "tui" / "demo" / "demo_session.json"
HOSTILE = SAMPLES / "hostile_markup_escapes.json"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "real"


async def wait_ready(pilot) -> None:
    """Wait for the load worker and the analysis (a real condition, not a sleep)."""
    app = pilot.app
    await app.workers.wait_for_complete()
    for _ in range(200):
        await pilot.pause()
        if app.wb is not None or app.load_error is not None:
            break
    await pilot.pause()
