"""The cyclic GC is one per process: a pause in one thread that ends while another
thread's pause runs leaves the collector off until the last one ends."""

from __future__ import annotations

import gc
import threading

from repair.gcpause import gc_paused


def test_the_collector_stays_off_until_the_last_pause_in_any_thread_ends():
    assert gc.isenabled()
    started, release = threading.Event(), threading.Event()
    seen: list[bool] = []

    def other() -> None:
        with gc_paused():
            started.set()
            release.wait(5)
            seen.append(gc.isenabled())

    t = threading.Thread(target=other)
    with gc_paused(freeze=True):
        t.start()
        assert started.wait(5)
    # this thread's pause is over; the other's runs: the collector is still off
    assert not gc.isenabled()
    release.set()
    t.join(5)
    assert seen == [False]
    assert gc.isenabled()
    gc.unfreeze()


def test_a_pause_inside_a_pause_restores_nothing_early():
    with gc_paused():
        with gc_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_pause_where_the_collector_was_off_leaves_it_off():
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
