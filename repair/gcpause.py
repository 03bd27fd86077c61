"""Pause Python's cyclic GC while building large object graphs.

Loading and analysing a 100k-message session creates millions of objects and no cycles worth
collecting; with the collector on, repeated full collections over the live graph cost more
than the parse itself (measured in the Textual notes: 161-345 MB/s with GC, 740 MB/s without).

When a long pause ends, what was built is frozen (`gc.freeze()`: moved to the permanent
generation) before the collector is switched back on. Otherwise the first allocation after
`gc.enable()` starts a young collection over every object built meanwhile, and later full
collections walk them again: 1.7 s of CPU on a 100k-message Roo file's load and analysis
(bench/README.md). Frozen objects are still freed by reference counting; only a cycle
among them (a pairing's calls and results point at each other) waits for `gc.unfreeze()`, so
a pause that built little (a small session, a test) is not frozen: its collection is cheap.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# Young objects (allocations less deallocations) above which a pause ends in a freeze.
FREEZE_ABOVE = 200_000


# Pauses in progress, over every thread: the collector is one per process, so a worker's
# pause that ends while another's runs must leave it off (else the other builds its
# millions of objects with the collector on: a full collection then holds the interpreter
# for a second, the TUI's event loop with it).
_lock = threading.Lock()
_active = 0
_enabled_before = True


@contextmanager
def gc_paused(freeze: bool = False) -> Iterator[None]:
    """The collector off inside; `freeze`: what was built is moved out of its reach after
    (a long-lived session the TUI keeps, never rescanned by later collections), before the
    collector is on again: else the first allocation after it, often on the UI thread while
    a worker returns, collects the millions of new objects at once (0.2 s at 100k). The
    outermost pause freezes on its own when it built a lot (FREEZE_ABOVE). Pauses in
    several threads at once: the collector is on again when the last one ends."""
    global _active, _enabled_before
    with _lock:
        if _active == 0:
            _enabled_before = gc.isenabled()
        _active += 1
        gc.disable()
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            last = _active == 0
            if freeze or (last and _enabled_before and gc.get_count()[0] > FREEZE_ABOVE):
                gc.freeze()
            if last and _enabled_before:
                gc.enable()
