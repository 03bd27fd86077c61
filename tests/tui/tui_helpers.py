"""Helpers shared by the TUI tests: waiting until the app is ready or idle."""

from __future__ import annotations

import functools
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
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


@contextmanager
def held_load(monkeypatch, name: str, head: bool = False) -> Iterator[threading.Event]:
    """The load worker stops at `tui.main_screen.NAME` until the event is set:
    `load_session` (the file being read), `first_look` (the findings sought),
    `workbench_of` (the whole made, the first look on screen). `head`: a large file's first
    lines are shown meanwhile (the cc_file fixture's)."""
    from repair.formats.head import load_head
    from tui import main_screen

    gate = threading.Event()
    real = getattr(main_screen, name)

    def held(*args, **kw):
        gate.wait(30)
        return real(*args, **kw)

    monkeypatch.setattr(main_screen, name, held)
    if head:
        monkeypatch.setattr(
            main_screen, "load_head", functools.partial(load_head, size=100_000, small=0)
        )
    try:
        yield gate
    finally:
        gate.set()


async def until(pilot, ready: Callable[[], object]) -> None:
    """Pause until `ready()` holds (a real condition, not a sleep)."""
    for _ in range(2000):
        if ready():
            return
        await pilot.pause()
    raise AssertionError("never happened")
