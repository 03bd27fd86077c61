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


async def apply_first_fix(pilot, code: str) -> list[Any]:
    """Open the repair pane (`r`), check its first fix is of `code`, apply it (`a`); the
    session's messages after it."""
    app = pilot.app
    await pilot.press("r")
    await settle(pilot)
    assert app.main._selected_fix().code == code
    await pilot.press("a")
    await settle(pilot)
    return list(app.main.wb.session.messages)


async def raw_json_of(pilot, k: int) -> str:
    """The raw JSON the detail pane shows (`J`) of message `k`, its first row selected."""
    tl = timeline(pilot.app)
    tl.go_to_row(tl.state.table.row_of(k, 1))
    await pilot.pause()
    await pilot.press("J")
    await pilot.pause()
    return widget_text(pilot.app, "#detail")


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


@asynccontextmanager
async def opened_held(
    monkeypatch, path, size: tuple[int, int], name: str, shown: Callable[[Any], object]
) -> AsyncIterator[tuple[Any, Any, threading.Event]]:
    """The app run headless on `path`, its load held at `name` (as `held_load`; a large
    file's first lines shown meanwhile when held at `load_session`) until `shown(main)`:
    `(app, pilot, gate)`; set the gate to let the load go on."""
    from tui.app import HistviewApp

    with held_load(monkeypatch, name, head=name == "load_session") as gate:
        app = HistviewApp(str(path))
        async with app.run_test(size=size) as pilot:
            await until(pilot, lambda: app.main is not None and shown(app.main))
            yield app, pilot, gate


async def typed_once_loaded(path, size: tuple[int, int], keys: list[str], seen: Callable):
    """What `seen(app)` gives after `keys` are typed, one at a time, once `path` is loaded."""
    async with opened(path, size) as (app, pilot):
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        return seen(app)


CHARS = {
    "slash": "/",
    "enter": "\r",
    "ctrl+j": "\n",
    "right_square_bracket": "]",
    "left_square_bracket": "[",
    "minus": "-",
    "full_stop": ".",
}


def burst(app, keys: list[str]) -> None:
    """`keys` read in one go, as a terminal hands keys typed faster than the UI takes them
    (pilot.press waits for each to be handled)."""
    from textual import events

    for key in keys:
        app.post_message(events.Key(key, CHARS.get(key, key if len(key) == 1 else None)))
