"""TUI figures.

Open: time to first paint and to "analysis ready", and the time to render one page of
timeline rows (it should not grow with the session).

    .venv/bin/python bench/tui_bench.py [sizes...]          (default 1000 100000)

Synthetic Anthropic sessions are generated in-process (a few broken pairs sprinkled in).

Steps: for each file, one apply (`a`), its undo (`u`) and redo (`ctrl+y`) with the repair
pane open, and with `--all` then apply-all (`A`) and its undo, each measured as: the UI
thread's time (the StepDone handler that puts the new state on screen), the longest stall
of the event loop from the key to the redrawn result and on until every worker is done
(the preview of the next fix, the promise): a 5 ms timer's largest gap, what a user feels
as frozen; the worker's time (wall, and the worker thread's CPU time: on a shared machine
the wall clock waits for other processes), and the time from the key to the redrawn
result.

    .venv/bin/python bench/tui_bench.py --steps [--all] [--fix CODE[:ACTION]] bench/out/roo_10k.json

`--fix` applies the first fix of that finding code (and action) instead of the first fix of
the plan; with a `+` after it, the first that inserts or drops a message (e.g.
`--fix misplaced-tool-result:move-home+`); with `@F` after it, the first at or after that
fraction of the messages (`--fix misplaced-tool-result:move-home+@0.5`: halfway down, where
a step that inserts or drops a message moves half the session).

First rows of a file: the time from the app's start to its first rows painted and to the
analysis shown (the findings on the rows, the counts, the summary line: the first look,
from `check`'s analysis), each beside a GC-off parse of the same file (orjson per line for
JSONL, records kept) timed in a child process before and after each run, the mean of the two
the reference (wall and CPU: on the shared machine the CPU ratio is the steadier one), the CPU time of the load worker per
phase (the first lines, the load, the rows, the first look's analysis and what the screen
builds from it) and of the whole process (the rest: the UI thread and Textual), taken by
the app at its marks, beside `check`'s load and analysis timed the same way in a child
process (what the TUI adds is the difference), the UI thread's handlers, the longest stall
of the event loop from the first rows to the whole (the longest gap between the bench's
20 ms polls beyond their sleep), the peak RSS of the process that ran the app, and then the
whole ready (the lanes, the plan, the workbench a step needs: the worker's `whole` phase).
Each run of the app is a fresh process (it imports the format modules it uses, as a user's
start does; its peak RSS is its own); the children run with their bytecode compiled once, as
an installed histview's is (not with this machine's PYTHONDONTWRITEBYTECODE, which compiles
every module at every start). A second line per run splits what the TUI adds to
`check` (its CPU until analysis ready less check's load and analysis): the worker's head and
load against check's load, the rows, the first look against check's analysis, the UI
thread, the rest of the process. `check` runs in a child before and after each app run and
the mean of the two is the reference (the same work's CPU time moves by a third within
seconds on the shared machine); with `--repeat N` a last line gives the medians over the
runs and in how many each part was above zero. The parse is also timed with its records freed inside the
time, as `bench/run.py`'s GC-off parse (the baseline of `check`'s ratio there).
With `--keys`, `j` is pressed every 0.1 s until the whole is ready and each press is timed
until the cursor moved and the screen was redrawn (the stall then from a 5 ms timer).

    .venv/bin/python bench/tui_bench.py --file bench/out/claude_code_100k.jsonl [--repeat 3] [--keys]
        [--compare TREE]

With `--compare TREE` (a checkout or a `git archive` of one) that tree's app runs too, the
two alternating within each round, each beside its own parse and `check`; the last line gives
the paired differences (the UI thread's and the process's CPU until analysis ready, the ratio).

(bench/gen.py writes the files.)
"""

from __future__ import annotations

import asyncio
import os
import resource
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

import orjson  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from repair.plan import apply_fixes  # noqa: E402
from tui.app import HistviewApp  # noqa: E402
from tui.repair_pane import RepairPane  # noqa: E402
from tui.timeline import Timeline  # noqa: E402


def synthetic(n_messages: int) -> bytes:
    msgs = [{"role": "user", "content": "Start the task."}]
    k = 0
    while len(msgs) < n_messages:
        tid = f"toolu_{k:08d}"
        msgs.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"Step {k}: reading a file."},
                    {
                        "type": "tool_use",
                        "id": tid,
                        "name": "read_file",
                        "input": {"path": f"src/f{k}.py"},
                    },
                ],
            }
        )
        if k % 997 == 13:  # an interrupted call now and then
            msgs.append({"role": "user", "content": [{"type": "text", "text": "stop, go on"}]})
        else:
            msgs.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": tid,
                            "content": f"line 1\nline 2 of f{k}",
                        },
                    ],
                }
            )
        k += 1
    return orjson.dumps(msgs[:n_messages])


async def measure(path: str) -> dict[str, float]:
    app = HistviewApp(path)
    t0 = time.perf_counter()
    async with app.run_test(size=(120, 40)) as pilot:
        while app.main is None or "first_paint" not in app.main.timings:
            await pilot.pause(0.02)
        first_paint = time.perf_counter() - t0
        while app.main is None or "analysis_ready" not in app.main.timings:
            await pilot.pause(0.01)
        ready = time.perf_counter() - t0
        await pilot.pause()
        tl = app.main.query_one(Timeline)
        height = tl.scrollable_content_region.height
        pages = []
        for where in (0, len(tl.view) // 2, len(tl.view) - height):
            tl.scroll_to(y=max(where, 0), animate=False, immediate=True)
            await pilot.pause()
            tl._cache.clear()
            s = time.perf_counter()
            for y in range(height):
                tl.render_line(y)
            pages.append(time.perf_counter() - s)
        rows = len(tl.view)
        print("   timings:", {k: round(v, 2) for k, v in app.main.timings.items()})
    return {
        "first_paint": first_paint,
        "analysis_ready": ready,
        "page": min(pages),
        "page_max": max(pages),
        "rows": rows,
        "height": height,
    }


class Lag:
    """The longest gap between ticks of a 5 ms callback on the app's event loop (an
    asyncio `call_later` chain: a Textual timer would go through the app's message queue
    and itself take a share of the UI thread and of the interpreter lock it measures)."""

    def __init__(self, app: HistviewApp) -> None:
        self.loop = asyncio.get_running_loop()
        self.last = time.perf_counter()
        self.worst = 0.0
        self.loop.call_later(0.005, self.tick)

    def tick(self) -> None:
        now = time.perf_counter()
        self.worst = max(self.worst, now - self.last)
        self.last = now
        self.loop.call_later(0.005, self.tick)

    def reset(self) -> None:
        self.last = time.perf_counter()
        self.worst = 0.0


async def idle(app: HistviewApp, pilot) -> None:
    """Until no worker runs (the preview and the promise included)."""
    while app.main.busy or any(w.is_running for w in app.workers):
        await pilot.pause(0.05)
    await pilot.pause(0.05)


STEPS = (("a", "apply"), ("u", "undo"), ("ctrl+y", "redo"))
ALL_STEPS = (("A", "apply-all"), ("u", "undo all"))


def pick(session, fixes, want: str | None) -> int | None:
    """The index of the first fix matching `want` (CODE or CODE:ACTION, `+` at the end:
    only a fix that inserts or drops a message; `@F` after that: only a fix at or after
    that fraction of the messages) that changes something; None when `want` is None."""
    if want is None:
        return None
    want, _, fraction = want.partition("@")
    since = float(fraction or 0) * len(session.messages)
    shifts = want.endswith("+")
    code, _, action = want.rstrip("+").partition(":")
    for i, f in enumerate(fixes):
        if f.code != code or (action and f.action != action) or not f.actionable:
            continue
        if (f.position or 0) < since:
            continue
        if shifts:
            after, _ = apply_fixes(session, [f])
            if len(after.messages) == len(session.messages):
                continue
        return i
    raise SystemExit(f"no fix {want!r} in the plan")


async def measure_steps(
    path: str, every: bool = False, want: str | None = None
) -> list[tuple[str, dict[str, float]]]:
    app = HistviewApp(path)
    out = []
    async with app.run_test(size=(120, 40)) as pilot:
        while app.main is None or "whole_ready" not in app.main.timings:
            await pilot.pause(0.05)
        await pilot.press("r")
        await idle(app, pilot)
        at = pick(app.main.derived.session, app.main.fixes, want)
        if at is not None:
            app.main.query_one(RepairPane).selected = at
            await idle(app, pilot)
        lag = Lag(app)
        n_msgs = len(app.main.derived.session.messages)
        for key, name in STEPS + (ALL_STEPS if every else ()):
            done = app.main.timings.get("steps", 0)
            await idle(app, pilot)
            lag.reset()
            await pilot.press(key)
            while app.main.timings.get("steps", 0) == done:
                await asyncio.sleep(0.005)  # not `pilot.pause`: it waits on every widget
            worst = lag.worst
            await idle(app, pilot)  # the preview of the next fix (and, small files, the promise)
            after = lag.worst
            out.append(
                (
                    name,
                    {
                        "messages": n_msgs,
                        "ui": app.main.timings["step_ui"],
                        "stall": worst,
                        "stall_after": after,
                        "worker": app.main.timings["step_worker"],
                        "cpu": app.main.timings.get("step_worker_cpu", float("nan")),
                        "total": app.main.timings["step_total"],
                        "incremental": float(getattr(app.main.derived, "incremental", False)),
                    },
                )
            )
    return out


def main_steps(paths: list[str], every: bool, want: str | None) -> None:
    for path in paths:
        for name, r in asyncio.run(measure_steps(path, every, want)):
            print(
                f"{os.path.basename(path):24} {name:9} {int(r['messages']):>7} msgs: "
                f"UI thread {r['ui'] * 1000:6.1f} ms, longest stall {r['stall'] * 1000:6.1f} ms "
                f"(until idle {r['stall_after'] * 1000:6.1f} ms), worker {r['worker']:5.2f} s "
                f"(CPU {r['cpu']:5.2f} s), key to redrawn {r['total']:5.2f} s; "
                f"load average {os.getloadavg()[0]:.1f}"
                + (" (rows and lanes incremental)" if r["incremental"] else ""),
                flush=True,
            )


PARSE_NOGC = """
import gc, os, sys, time, orjson
gc.disable()
t = time.perf_counter()
c = time.process_time()
data = open(sys.argv[1], "rb").read()
if sys.argv[1].endswith(".jsonl"):
    records = [orjson.loads(line) for line in data.split(b"\\n") if line.strip()]
else:
    records = orjson.loads(data)
wall, cpu = time.perf_counter() - t, time.process_time() - c
del records, data  # freed inside the time too, as bench/run.py's parse frees them
print(wall, cpu, time.process_time() - c, flush=True)
os._exit(0)
"""


# What `histview check` does of the same work, in a child process timed as the TUI is: from
# the modules the app imports (its adapters imported in the window, as the TUI's worker
# does), the GC paused as the CLI pauses it, nothing freed in the window (the process ends).
CHECK = """
import os, sys, time
sys.path.insert(0, sys.argv[2])
from repair.analysis import analyze
from repair.formats import load_session
from repair.gcpause import gc_paused
c = time.process_time()
with gc_paused():
    session = load_session(sys.argv[1], exact_numbers=False)
    loaded = time.process_time()
    analyze(session)
    for thread in session.threads:
        analyze(thread, session.target)
print(loaded - c, time.process_time() - loaded, flush=True)
os._exit(0)
"""


# The children run as an installed histview does, its modules' bytecode compiled once (pip
# writes it at install): without PYTHONDONTWRITEBYTECODE, which makes every start compile
# every module the run imports again (0.1-0.25 s of the format modules alone, inside the
# first phase that imports them), the bytecode kept outside the tree. `warm` compiles it
# before the first timed run.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AS_INSTALLED = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
AS_INSTALLED["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "histview-bench-pyc")

WARM = """
import sys
sys.path.insert(0, sys.argv[1])
import repair.analysis, repair.formats, tui.app
repair.formats.adapters()
"""


def warm(root: str = ROOT) -> None:
    subprocess.run([sys.executable, "-c", WARM, root], check=True, env=AS_INSTALLED)


def check_cpu(path: str, root: str = ROOT) -> tuple[float, float]:
    """`check`'s load and analysis CPU time, as the TUI's window counts them."""
    out = subprocess.run(
        [sys.executable, "-c", CHECK, path, root],
        capture_output=True,
        check=True,
        text=True,
        env=AS_INSTALLED,
    )
    load, analysis = out.stdout.split()
    return float(load), float(analysis)


def parse_nogc(path: str) -> tuple[float, float, float]:
    """The parse's wall and CPU time, and its CPU time with the records freed after it
    (`bench/run.py`'s GC-off parse, the baseline of `check`'s ratio there)."""
    out = subprocess.run(
        [sys.executable, "-c", PARSE_NOGC, path],
        capture_output=True,
        check=True,
        text=True,
        env=AS_INSTALLED,
    )
    wall, cpu, freed = out.stdout.split()
    return float(wall), float(cpu), float(freed)


async def key_to_screen(app: HistviewApp) -> float:
    """`j` sent as the terminal driver sends a key, timed until the timeline's cursor moved
    and the screen was refreshed after it. (Not `Pilot.press`: it waits until every widget
    has emptied its queue, each a task of its own, which a busy worker makes take seconds.)"""
    from textual import events

    tl = app.main.query_one(Timeline)
    before = tl.cursor
    drawn = asyncio.Event()
    start = time.perf_counter()
    key = events.Key("j", "j")
    key.set_sender(app)
    app._driver.send_message(key)
    while tl.cursor == before and time.perf_counter() - start < 30:
        await asyncio.sleep(0.001)
    tl.call_after_refresh(drawn.set)
    await drawn.wait()
    return time.perf_counter() - start


async def first_rows(path: str, keys: bool = False) -> dict[str, float]:
    """`keys`: while the analysis runs, press `j` every 0.1 s and time each press until the
    app has handled it (what a user feels while the view fills in).

    The wall clock and the CPU times of a mark are those the app took at it (`mark_cpu`: in
    the handler that put the analysis on screen), not when this loop saw it. Without `keys`
    the longest stall of the event loop is the longest gap between this loop's 20 ms polls
    beyond their sleep: a timer of its own (`Lag`, 5 ms) would cost the UI thread about
    0.08 s of CPU over a 100k load, and the worker the switches, which the app does not."""
    app = HistviewApp(path)
    t0 = time.perf_counter()
    c0 = time.process_time()
    u0 = time.thread_time()  # this thread runs the app's event loop: the UI thread
    presses: list[float] = []
    # polled with plain sleeps: `Pilot.pause` waits for every widget's queue first, work
    # a user's terminal does not add to the UI thread
    async with app.run_test(size=(120, 40)):
        while app.main is None or "first_paint" not in app.main.timings:
            await asyncio.sleep(0.01)
        first = time.perf_counter() - t0
        head = "head" in app.main.timings
        lag = Lag(app) if keys else None
        worst = 0.0

        async def until(mark: str) -> None:
            nonlocal worst
            last = time.perf_counter()
            while mark not in app.main.timings:
                if keys:
                    presses.append(await key_to_screen(app))
                    await asyncio.sleep(0.1)
                else:
                    await asyncio.sleep(POLL)
                    now = time.perf_counter()
                    worst = max(worst, now - last - POLL)
                    last = now

        await until("analysis_ready")
        await until("whole_ready")  # then the whole (lanes, plan, the workbench a step needs)
        stall = lag.worst if lag is not None else worst
        timings = dict(app.main.timings)
        marks = dict(app.main.mark_cpu)
    worker = sum(v for k, v in timings.items() if k.endswith("_cpu") and k != "whole_cpu")
    return {
        "first_rows": first,
        "analysis_ready": timings["analysis_ready"],
        "whole_ready": timings["whole_ready"],
        "whole_cpu": marks["whole_ready"][0] - c0,
        "head": head,
        "cpu": marks["analysis_ready"][0] - c0,
        "worker_cpu": worker,
        "ui_cpu": marks["analysis_ready"][1] - u0,
        "stall": stall,
        "presses": presses,
        "timings": timings,
    }


POLL = 0.02


def one_run(path: str, keys: bool, root: str = ROOT) -> dict:
    """`first_rows` in a fresh process, as a user starts the app: each run imports the
    format modules it uses, and its peak RSS is its own. `root`: the tree whose app runs
    (its own `bench/tui_bench.py --one`)."""
    script = os.path.join(root, "bench", "tui_bench.py")
    args = [sys.executable, script, "--one", path] + (["--keys"] if keys else [])
    out = subprocess.run(args, capture_output=True, check=True, env=AS_INSTALLED)
    return orjson.loads(out.stdout.splitlines()[-1])


def main_one(path: str, keys: bool) -> None:
    r = asyncio.run(first_rows(path, keys))
    r["rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sys.stdout.write("\n" + orjson.dumps(r).decode() + "\n")
    sys.stdout.flush()
    os._exit(0)  # (the session is not torn down: the process ends)


def main_file(paths: list[str], repeat: int, keys: bool, compare: str | None = None) -> None:
    """`compare`: another tree's app (and its `check`) run too, the two alternating in each
    round (which goes first alternates too), each with its own references; the last lines
    give both trees' medians and the paired differences."""
    trees = [ROOT] + ([os.path.abspath(compare)] if compare else [])
    for root in trees:
        warm(root)
    for path in paths:
        size = os.path.getsize(path)
        parts: dict[str, list[dict[str, float]]] = {root: [] for root in trees}
        rounds = [(k, root) for k in range(repeat) for root in trees[:: 1 - 2 * (k % 2)]]
        for k, root in rounds:
            # the parse and `check` before and after the app, their means the references: on
            # this machine the same process's CPU time moves by a third within seconds
            # (docs/performance.md, "The TUI's load"), so one run beside the app's says little
            parse_before = parse_nogc(path)
            before = check_cpu(path, root)
            r = one_run(path, keys, root)
            after = check_cpu(path, root)
            parse, parse_cpu, parse_freed = (
                (a + b) / 2 for a, b in zip(parse_before, parse_nogc(path), strict=True)
            )
            check_load, check_analysis = (before[0] + after[0]) / 2, (before[1] + after[1]) / 2
            check = check_load + check_analysis
            t = r["timings"]
            phases = ", ".join(
                f"{name} {t[name + '_cpu']:.2f}"
                for name in ("head", "load", "rows", "analysis")
                if name + "_cpu" in t
            )
            presses = sorted(r["presses"])
            tree = f" [{root}]" if compare else ""
            print(
                f"{os.path.basename(path)} ({size / 1e6:.0f} MB) run {k + 1}{tree}: "
                f"first rows {r['first_rows']:.2f} s"
                f"{' (the first lines)' if r['head'] else ''}, "
                f"analysis ready {r['analysis_ready']:.2f} s; parse with GC off {parse:.2f} s "
                f"= {r['analysis_ready'] / parse:.2f}x (CPU: process {r['cpu']:.2f} s / parse "
                f"{parse_cpu:.2f} s = {r['cpu'] / parse_cpu:.2f}x, / parse and free "
                f"{parse_freed:.2f} s = {r['cpu'] / parse_freed:.2f}x; load worker "
                f"{r['worker_cpu']:.2f} s: {phases}; UI thread {r['ui_cpu']:.2f} s; `check` "
                f"in a child, before and after {sum(before):.2f} and {sum(after):.2f} s, mean "
                f"{check:.2f} s = {check / parse_cpu:.2f}x "
                f"({check / parse_freed:.2f}x): load {check_load:.2f}, "
                f"analysis {check_analysis:.2f}); UI handlers "
                f"{t.get('ui_loaded', 0) * 1000:.0f} + {t.get('ui_analysis', 0) * 1000:.0f} ms, "
                f"longest stall after first rows {r['stall'] * 1000:.0f} ms; "
                f"whole (lanes, plan, steps) ready {r['whole_ready']:.2f} s = "
                f"{r['whole_ready'] / parse:.2f}x (CPU: process {r['whole_cpu']:.2f} s = "
                f"{r['whole_cpu'] / parse_cpu:.2f}x; the worker's whole phase "
                f"{t.get('whole_cpu', 0):.2f} s, UI handler {t.get('ui_whole', 0) * 1000:.0f} ms)"
                + (
                    f", {len(presses)} key presses while loading: median "
                    f"{presses[len(presses) // 2] * 1000:.0f} ms, worst {presses[-1] * 1000:.0f} ms"
                    if presses
                    else ""
                )
                + f"; peak RSS {r['rss']:.0f} MB; load average {os.getloadavg()[0]:.1f}",
                flush=True,
            )
            part = beyond_check(r, check_load, check_analysis)
            part.update(
                ready=r["analysis_ready"] / parse,
                ready_cpu=r["cpu"] / parse_cpu,
                ready_freed=r["cpu"] / parse_freed,
                check=check / parse_cpu,
                check_freed=check / parse_freed,
                worker=r["worker_cpu"],
                ui=r["ui_cpu"],
            )
            part.update(process=r["cpu"])
            parts[root].append(part)
            print(f"  {beyond_line(part, parse_cpu)}", flush=True)
        for root in trees:
            if repeat > 1:
                tree = f"[{root}] " if compare else ""
                print(f"  {tree}{summary(parts[root])}", flush=True)
        if compare:
            print(f"  {paired(parts[ROOT], parts[trees[1]], trees[1])}", flush=True)


def paired(mine: list[dict[str, float]], theirs: list[dict[str, float]], other: str) -> str:
    """This tree less the other, round by round (each round ran both, one after the other)."""

    def diff(key: str, scale: float, unit: str) -> str:
        ds = sorted(a[key] - b[key] for a, b in zip(mine, theirs, strict=True))
        mid = len(ds) // 2
        med = ds[mid] if len(ds) % 2 else (ds[mid - 1] + ds[mid]) / 2
        return (
            f"{med * scale:+.{0 if unit == 'ms' else 2}f} {unit} "
            f"(lower in {sum(d < 0 for d in ds)} of {len(ds)})"
        )

    return (
        f"this tree less {other}, per round, medians: UI thread until analysis ready "
        f"{diff('ui', 1000, 'ms')}, process CPU until analysis ready {diff('process', 1, 's')}, "
        f"analysis ready / GC-off parse {diff('ready', 1, 'x')}"
    )


def beyond_check(r: dict, check_load: float, check_analysis: float) -> dict[str, float]:
    """What the TUI's CPU until analysis ready adds to `check`'s load and analysis, by part:
    the load worker's phases beyond check's (the head, the rows, the first look's screen
    work; its load against check's, which moves with the machine), the UI thread, the rest
    of the process (Textual's start before the app's screen, other threads)."""
    t = r["timings"]
    return {
        "extra": r["cpu"] - check_load - check_analysis,
        # the format modules are imported in the head (check: in its load)
        "load": t.get("head_cpu", 0.0) + t["load_cpu"] - check_load,
        "rows": t.get("rows_cpu", 0.0),
        "look": t["analysis_cpu"] - check_analysis,
        "ui": r["ui_cpu"],
        "rest": r["cpu"] - r["worker_cpu"] - r["ui_cpu"],
    }


def beyond_line(p: dict[str, float], parse_cpu: float) -> str:
    return (
        f"the TUI beyond `check`: {p['extra']:+.2f} s CPU = {p['extra'] / parse_cpu:+.2f}x the "
        f"parse: head and load {p['load']:+.2f} against check's load, rows {p['rows']:.2f}, "
        f"first look {p['look']:+.2f} against check's analysis, UI thread {p['ui']:.2f}, "
        f"rest of the process {p['rest']:+.2f}"
    )


def summary(parts: list[dict[str, float]]) -> str:
    """Medians over the runs, and in how many runs each part of the TUI beyond `check` was
    above zero: a part that is the TUI's is above zero in every run, the machine's swing
    is not."""

    def median(xs: list[float]) -> float:
        mid = len(xs) // 2
        return xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2

    def med(key: str) -> str:
        xs = sorted(p[key] for p in parts)
        return f"{median(xs):+.2f} ({sum(x > 0 for x in xs)} of {len(xs)} above 0)"

    def ratio(key: str) -> str:
        xs = sorted(p[key] for p in parts)
        return f"{median(xs):.2f}x ({xs[0]:.2f}-{xs[-1]:.2f})"

    return (
        f"over {len(parts)} runs, medians: analysis ready {ratio('ready')} the GC-off parse "
        f"(CPU {ratio('ready_cpu')}; against the parse and free, `bench/run.py`'s baseline of "
        f"`check`, {ratio('ready_freed')}), `check` in a child {ratio('check')} "
        f"({ratio('check_freed')}); the TUI beyond "
        f"`check` {med('extra')} s CPU: head and load {med('load')}, first look "
        f"{med('look')}, rows {med('rows')}, UI thread {med('ui')}, rest {med('rest')}"
    )


def main(sizes: list[int]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = os.path.join(tmp, f"synthetic_{n}.json")
            data = synthetic(n)
            with open(path, "wb") as fh:
                fh.write(data)
            r = asyncio.run(measure(path))
            print(
                f"{n:>7} messages ({len(data) / 1e6:6.1f} MB, {r['rows']} rows): "
                f"first paint {r['first_paint']:.2f} s, analysis ready {r['analysis_ready']:.2f} s, "
                f"one page ({r['height']} rows, uncached) {r['page'] * 1000:.1f} ms "
                f"(worst of top/middle/bottom {r['page_max'] * 1000:.1f} ms)",
                flush=True,
            )


if __name__ == "__main__":
    if sys.argv[1:2] in (["--help"], ["-h"]):
        print(__doc__)
    elif sys.argv[1:2] == ["--steps"]:
        args = sys.argv[2:]
        want = args[args.index("--fix") + 1] if "--fix" in args else None
        paths = [a for a in args if a.endswith((".json", ".jsonl"))]
        main_steps(paths, "--all" in args, want)
    elif sys.argv[1:2] == ["--one"]:
        main_one(sys.argv[2], "--keys" in sys.argv)
    elif sys.argv[1:2] == ["--file"]:
        repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 1
        paths = [a for a in sys.argv[2:] if a.endswith((".json", ".jsonl"))]
        compare = sys.argv[sys.argv.index("--compare") + 1] if "--compare" in sys.argv else None
        main_file(paths, repeat, "--keys" in sys.argv, compare)
    else:
        main([int(a) for a in sys.argv[1:]] or [1000, 100_000])
