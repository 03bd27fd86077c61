"""Helpers shared by the TUI tests: waiting until the app is ready or idle."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from tests.paths import SAMPLES

HOSTILE = SAMPLES / "hostile_markup_escapes.json"


async def wait_ready(pilot) -> None:
    """Wait for the load worker and the analysis (a real condition, not a sleep)."""
    app = pilot.app
    await app.workers.wait_for_complete()
    for _ in range(200):
        await pilot.pause()
        main = app.main
        if main is not None and (main.wb is not None or main.load_error is not None):
            break
    await pilot.pause()


@asynccontextmanager
async def opened(path, size: tuple[int, int], **options: Any) -> AsyncIterator[tuple[Any, Any]]:
    """The app run headless at `size` on the session `path`, its load and analysis done:
    `(app, pilot)`."""
    from tui.app import HistviewApp

    app = HistviewApp(str(path), **options)
    async with app.run_test(size=size) as pilot:
        await wait_ready(pilot)
        yield app, pilot


async def settle(pilot) -> None:
    """Wait until the app's workers are done (a repair step, a preview, the promise, an
    export) and what they posted is on screen (a real condition, not a sleep)."""
    from textual.worker import WorkerCancelled

    app = pilot.app
    for _ in range(400):
        try:
            await app.workers.wait_for_complete()
        except WorkerCancelled:  # an exclusive worker replaced by the next one
            pass
        await pilot.pause()
        main = app.main
        idle = main is None or (not main.busy and not main._queued)
        if idle and not any(w.is_running for w in app.workers):
            break
    await pilot.pause()


def timeline(app):
    """The session screen's timeline."""
    from tui.timeline import Timeline

    return app.main.query_one(Timeline)


def widget_text(app, selector: str) -> str:
    """The text of a widget of the session screen (or of a modal screen given)."""
    from tui.app import HistviewApp

    root = app.main if isinstance(app, HistviewApp) else app
    return str(root.query_one(selector).render())
