"""A status line on stderr while a command works on a file, for a person at a terminal: what
it is doing and for how long ("histview: repairing big.jsonl … 12 s"). A 200 MB session takes
seconds to read and half a minute to repair; without it the terminal shows nothing at all.

Nothing is written where stderr is no terminal (a pipe, a file, CI), nor for work that ends
within `DELAY`: a quick command prints exactly what it printed before. The line is erased
before the command prints anything else (`Out.line`, `Out.error`), so results and errors
never share a line with it. The text is histview's own words and a file name made safe by
`sanitize.clean_line`.
"""

from __future__ import annotations

import io
import os
import threading
import time
from typing import TextIO

DELAY = 0.5  # seconds of work before the line first shows
TICK = 0.25  # how often its time is brought up to date


def wants_progress(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class Progress:
    """One line on `stream`, redrawn in place by a daemon thread every `TICK` once `DELAY`
    has passed since `start`; `stop` erases it. `show` changes what it says."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._text = ""
        self._t0 = 0.0
        self._width = 0  # the length of the line drawn last (erased by spaces)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, text: str) -> None:
        self.stop()
        self._text, self._t0 = text, time.monotonic()
        self._draw()  # (at once where no delay is asked)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="histview-progress", daemon=True)
        self._thread.start()

    def show(self, text: str) -> None:
        """What the line says from now on: drawn at once once the line shows (a phase as
        it begins, not a tick later: the thread may wait for the interpreter's lock)."""
        self._text = text
        self._draw()

    @property
    def running(self) -> bool:
        return self._thread is not None

    def stop(self) -> None:
        """The thread ended and the line erased (nothing written if it never showed)."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stop.set()
        thread.join()
        with self._lock:
            if self._width:
                self._write("\r" + " " * self._width + "\r")
                self._width = 0

    def _run(self) -> None:
        stop = self._stop
        if stop.wait(DELAY):
            return
        while not stop.is_set():
            self._draw(stop)
            stop.wait(TICK)

    def _draw(self, stop: threading.Event | None = None) -> None:
        """The line as it reads now, once `DELAY` has passed (not after `stop`)."""
        with self._lock:
            if stop is not None and stop.is_set():
                return
            elapsed = time.monotonic() - self._t0
            if elapsed < DELAY:
                return
            line = f"histview: {self._text} … {elapsed:.0f} s"
            line = line[: self._columns() - 1]  # (a wrapped line is not redrawn in place)
            pad = " " * max(0, self._width - len(line))
            self._write("\r" + line + pad)
            self._width = len(line)

    def _columns(self) -> int:
        try:
            return os.get_terminal_size(self.stream.fileno()).columns
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            return 80

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: the work goes on
            self._width = 0
