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
from collections.abc import Iterator
from contextlib import contextmanager

# Young objects (allocations less deallocations) above which a pause ends in a freeze.
FREEZE_ABOVE = 200_000


@contextmanager
def gc_paused(freeze: bool = False) -> Iterator[None]:
    """The collector off inside; `freeze`: what was built is moved out of its reach after
    (a long-lived session the TUI keeps, never rescanned by later collections), before the
    collector is on again: else the first allocation after it, often on the UI thread while
    a worker returns, collects the millions of new objects at once (0.2 s at 100k). The
    outermost pause freezes on its own when it built a lot (FREEZE_ABOVE)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze or (was_enabled and gc.get_count()[0] > FREEZE_ABOVE):
            gc.freeze()
        if was_enabled:
            gc.enable()
