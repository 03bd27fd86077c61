"""The TUI load worker's work under several conditions, to tell the app's cost from the machine's.

    .venv/bin/python bench/tui_where.py FILE [--rounds N] [--modes bare,thread,textual,app]

Each round runs, each in a fresh process and one after the other, the work the load worker
does until the first look is posted (the first lines and their rows, `load_session` as `check`
reads, the rows counted, `first_look`), with the collector paused as the worker pauses it:

- `bare`: in the main thread of a process that imported the engine and the TUI's row modules;
- `thread`: the same in a thread of its own;
- `textual`: the same in a thread, after `import tui.app` (Textual and all of the app);
- `app`: the app itself (`HistviewApp` headless, as `tui_bench.py` runs it), its worker timed.

Per run: that thread's CPU (user and system), its page faults, its voluntary switches (in the
app: waits for the interpreter lock) and involuntary ones, by phase (the first lines, the load,
the rows and first look), the RSS before the work; then the medians per mode and phase, and,
per phase, in how many rounds the app's was above the bare process's. `--child MODE FILE` is one
run (what a round starts; under `valgrind --tool=callgrind --separate-threads=yes
--cache-sim=yes` it gives the worker thread's instructions and cache misses: in `app` mode the
worker stops after the first look, `--stop-after-look`). With `DELAY=S` in the environment the
app's worker starts S seconds after the screen is mounted (after Textual's start, whose work
on the UI thread otherwise runs between the worker's slices).
"""

from __future__ import annotations

import asyncio
import os
import resource
import statistics
import subprocess
import sys
import threading
import time

import orjson

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

PHASES = ("head", "load", "look")


def rusage() -> dict[str, float]:
    r = resource.getrusage(resource.RUSAGE_THREAD)
    return {
        "cpu": time.thread_time(),
        "user": r.ru_utime,
        "sys": r.ru_stime,
        "faults": r.ru_minflt,
        "waits": r.ru_nvcsw,
        "preempted": r.ru_nivcsw,
    }


def since(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    return {k: b[k] - a[k] for k in a}


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def work(path: str, out: dict) -> None:
    """The load worker's work until the first look (tui/main_screen.py `MainScreen.load`)."""
    from repair.formats import load_session
    from repair.formats.head import load_head
    from repair.gcpause import gc_paused
    from tui.rows import build_rows, lazy_rows
    from tui.state import first_look

    out["rss"] = rss_mb()
    marks = [rusage()]
    with gc_paused(freeze=True):
        head = load_head(path, None, None)
        if head is not None:
            build_rows(head)
        marks.append(rusage())
        session = load_session(path, None, None, exact_numbers=False, crcs_later=True)
        marks.append(rusage())
        first_look(session, lazy_rows(session))
        marks.append(rusage())
    out.update({p: since(marks[i], marks[i + 1]) for i, p in enumerate(PHASES)})
    out["kept"] = session  # not freed inside the process's time


def in_app(path: str, out: dict, stop_after_look: bool) -> None:
    from tui import main_screen
    from tui.app import HistviewApp

    phases = {"head_cpu": "head", "load_cpu": "load", "analysis_cpu": "look"}
    original = main_screen.MainScreen._phase_cpu

    def phase_cpu(self):  # the worker's phases, as `MainScreen.timings` notes them
        note = original(self)
        last = [rusage()]
        out["rss"] = rss_mb()

        def noted(name: str) -> None:
            note(name)
            if name in phases:
                now = rusage()
                out[phases[name]] = since(last[0], now)
                last[0] = now

        return noted

    main_screen.MainScreen._phase_cpu = phase_cpu  # type: ignore[method-assign]
    if os.environ.get("DELAY"):
        load = main_screen.MainScreen.load

        def later(self):
            self.set_timer(float(os.environ["DELAY"]), lambda: load(self))

        main_screen.MainScreen.load = later  # type: ignore[method-assign]
    if stop_after_look:

        def stop(*args, **kwargs):
            raise RuntimeError("stopped after the first look")

        main_screen.workbench_of = stop  # type: ignore[assignment]

    async def run() -> None:
        app = HistviewApp(path)
        async with app.run_test(size=(120, 40)):
            while "look" not in out:
                await asyncio.sleep(0.02)
            while stop_after_look and any(w.is_running for w in app.workers):
                await asyncio.sleep(0.02)

    asyncio.run(run())


def child(mode: str, path: str, stop_after_look: bool) -> None:
    out: dict = {}
    if mode in ("textual", "app"):
        import tui.app  # noqa: F401
    import repair.formats  # noqa: F401
    import tui.rows  # noqa: F401
    import tui.state  # noqa: F401

    if mode == "bare":
        work(path, out)
    elif mode in ("thread", "textual"):
        t = threading.Thread(target=work, args=(path, out))
        t.start()
        t.join()
    else:
        in_app(path, out, stop_after_look)
    out.pop("kept", None)
    sys.stdout.write(orjson.dumps(out).decode() + "\n")
    sys.stdout.flush()
    os._exit(0)


def one(mode: str, path: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = "/tmp/histview-bench-pyc"  # compiled once, as installed
    args = [sys.executable, os.path.abspath(__file__), "--child", mode, path]
    got = subprocess.run(args, capture_output=True, check=True, env=env)
    return orjson.loads(got.stdout.splitlines()[-1])


def main(path: str, rounds: int, modes: list[str]) -> None:
    runs: dict[str, list[dict]] = {m: [] for m in modes}
    for k in range(rounds):
        for mode in modes:
            r = one(mode, path)
            runs[mode].append(r)
            whole = {key: sum(r[p][key] for p in PHASES) for key in r["head"]}
            print(
                f"round {k + 1} {mode:8} CPU {whole['cpu']:.3f} s (user {whole['user']:.2f}, "
                f"system {whole['sys']:.2f}): "
                + ", ".join(f"{p} {r[p]['cpu']:.3f}" for p in PHASES)
                + f"; faults {whole['faults']:.0f}, lock waits {whole['waits']:.0f}, "
                f"preempted {whole['preempted']:.0f}; RSS before {r['rss']:.0f} MB; "
                f"load average {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    for mode in modes:
        print(
            f"{mode:8} medians: "
            + ", ".join(
                f"{p} {statistics.median(r[p]['cpu'] for r in runs[mode]):.3f} s" for p in PHASES
            )
        )
    if "bare" in runs and "app" in runs:
        for p in PHASES:
            d = [a[p]["cpu"] - b[p]["cpu"] for a, b in zip(runs["app"], runs["bare"], strict=True)]
            print(
                f"app - bare, {p}: median {statistics.median(d):+.3f} s, the app's higher in "
                f"{sum(x > 0 for x in d)} of {len(d)} rounds"
            )


if __name__ == "__main__":
    argv = sys.argv[1:]
    if argv[:1] == ["--child"]:
        child(argv[1], argv[2], "--stop-after-look" in argv or bool(os.environ.get("STOP")))
    elif not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
    else:
        n = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 5
        modes = argv[argv.index("--modes") + 1].split(",") if "--modes" in argv else None
        main(argv[0], n, modes or ["bare", "thread", "textual", "app"])
