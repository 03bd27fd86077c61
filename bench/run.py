"""Time and memory of `check` on the generated sessions, as ratios to parsing the same file.

    python bench/gen.py && python bench/run.py
    python bench/run.py --files roo_100k.json --repeat 5
    python bench/run.py --profile roo_100k.json     # where the time goes (cProfile)

For every file in bench/out/manifest.json, each figure comes from its own fresh process, in
N paired rounds: a round runs the baseline and histview one right after the other, so a
load change on the shared machine hits both; each ratio is the median of its rounds' ratios:

- time, in process: `load_session` + `analyze` against a bare `orjson.loads` of the file
  (for JSONL: `orjson.loads` of each line, the records kept in a list); both include
  reading the file. The parse is timed twice: as a plain script runs it (Python's cyclic
  GC on, which collects repeatedly while the parsed objects pile up) and with the GC off
  (what the parse itself costs; histview pauses the GC while loading);
- time, command: `histview check FILE` against `python -c "orjson.loads(...)"`, wall clock of
  the whole process (interpreter start included);
- peak memory: the child's ru_maxrss (from wait4) for a check and for a bare parse, raw and
  net of an idle interpreter that imported the same modules; and the tracemalloc peak of
  the work itself (Python allocations only).

A file whose manifest entry says `"mode": "fix"` (or every file, with `--fix`) is timed
with the repair instead of the check: `load_session`, `Workbench.apply_all` (every round of
plan and apply) and `Workbench.export` (the bytes, the one read-back, the report, written),
and `histview fix FILE -o OUT` for the command.

A format that cannot be loaded (its adapter is missing) is skipped with the reason.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(__file__).resolve().parent / "out"
# Issue 12: check <= 1.5x a GC-on parse for every format, <= 2.0x a GC-off parse for Roo and
# Claude Code; peak memory <= 2x the parse's.
GOAL_GC_ON = 1.5
GOAL_GC_OFF = 2.0
GOAL_GC_OFF_FORMATS = ("roo", "claude_code")
GOAL_MEMORY = 2.0


# --------------------------------------------------------------------------------------
# Worker: runs inside the child process


def _parse(path: str) -> object:
    import orjson

    with open(path, "rb") as fh:
        data = fh.read()
    if path.endswith(".jsonl"):
        # the records are kept, as a loader must keep them
        records = [orjson.loads(line) for line in data.split(b"\n") if line.strip()]
    else:
        records = orjson.loads(data)
    return records


def _check(path: str) -> tuple[float, float]:
    from repair.analysis import analyze
    from repair.formats import load_session

    # as `histview check` loads it (a --compare checkout may predate the keyword)
    params = inspect.signature(load_session).parameters
    kw = {"exact_numbers": False} if "exact_numbers" in params else {}
    if "writes" in params:
        kw["writes"] = False
    t0 = time.perf_counter()
    session = load_session(path, **kw)
    t1 = time.perf_counter()
    analyze(session)
    return t1 - t0, time.perf_counter() - t1


def _fix(path: str) -> tuple[float, float, float]:
    """What `histview fix FILE -o OUT` does: load, apply every fix (every round), export:
    the bytes, the one read-back, the report, written to a temporary folder."""
    import repair.cli
    from repair.formats import load_session
    from repair.gcpause import gc_paused
    from repair.plan import Choices
    from repair.workbench import Workbench

    with tempfile.TemporaryDirectory() as tmp, gc_paused():  # as the CLI runs it
        t0 = time.perf_counter()
        # as `repair.cli.fixed`: read without the number scan (not in a --compare checkout
        # from before it); the generated files hold no literal orjson would change, so the
        # export never asks for the exact read (InexactNumbers)
        fast = hasattr(repair.cli, "fixed")
        session = load_session(path, exact_numbers=False) if fast else load_session(path)
        t1 = time.perf_counter()
        wb = Workbench(session, Choices())
        wb.apply_all(threads=True)
        t2 = time.perf_counter()
        wb.export(os.path.join(tmp, "out" + Path(path).suffix))
        return t1 - t0, t2 - t1, time.perf_counter() - t2


def _imports(mode: str) -> None:
    import orjson  # noqa: F401

    if mode != "parse":
        import repair.analysis  # noqa: F401
        import repair.formats

        repair.formats.adapters()


def worker(mode: str, path: str, repeat: int, trace: bool) -> dict:
    """mode: parse | parse-nogc | check | fix | idle-parse | idle-check (the idle modes only
    import, for the RSS baseline)."""
    _imports("check" if mode in ("check", "fix", "idle-check") else "parse")
    if mode.startswith("idle"):
        return {}
    if mode == "parse-nogc":
        import gc

        gc.disable()
        mode = "parse"
    if trace:
        import tracemalloc

        tracemalloc.start()
    times, cpus, split = [], [], None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        if mode == "parse":
            _parse(path)
        else:
            parts = _check(path) if mode == "check" else _fix(path)
        times.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
        if mode != "parse" and times[-1] == min(times):
            split = parts
    out: dict = {"best": min(times), "all": times, "cpu": min(cpus)}
    if split and mode == "check":
        out["load"], out["analyze"] = split
    elif split:
        out["load"], out["analyze"], out["export"] = split
    if trace:
        out["traced_peak"] = tracemalloc.get_traced_memory()[1]
    return out


# --------------------------------------------------------------------------------------
# Driver


def _child(args: list[str], root: Path = ROOT) -> tuple[dict, int, float]:
    """Run a child; return its JSON output, its peak RSS in bytes and its wall time."""
    env = dict(os.environ, PYTHONPATH=str(root))
    t = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=root)
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise RuntimeError(
            f"{' '.join(args[:4])}... exited {proc.returncode}: {err.decode()[-2000:]}"
        )
    data = json.loads(out) if out.strip().startswith(b"{") else {}
    return data, usage.ru_maxrss * 1024, wall


def _work(
    mode: str, path: Path, repeat: int = 1, trace: bool = False, root: Path = ROOT
) -> tuple[dict, int]:
    args = [sys.executable, __file__, "--worker", mode, str(path), "--repeat", str(repeat)]
    args += ["--root", str(root)]
    if trace:
        args.append("--trace")
    data, rss, _ = _child(args, root)
    return data, rss


def _cli_wall(cmd, repeat: int, root: Path = ROOT) -> tuple[float, int]:
    """`cmd`: the command, or a function of the run number that gives it."""
    best, rss = float("inf"), 0
    for k in range(repeat):
        _, peak, wall = _child(cmd(k) if callable(cmd) else cmd, root)
        best = min(best, wall)
        rss = max(rss, peak)
    return best, rss


def can_load(path: Path, expected: str | None = None) -> str | None:
    """None when the file loads, else why not (in a child: loading may be heavy)."""
    code = (
        "import sys\nfrom repair.formats import probe_path, detect\n"
        "p = probe_path(sys.argv[1])\nprint(detect(p).name)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, env=env, cwd=ROOT
    )
    if r.returncode != 0:
        return (r.stderr.decode().strip().splitlines() or ["cannot load"])[-1]
    fmt = r.stdout.decode().strip()
    expected = expected or ("claude-code" if path.suffix == ".jsonl" else "roo")
    expected = expected.replace("_", "-")
    if fmt != expected:
        return f"detected as {fmt!r}: the {expected} adapter is not available"
    return None


def histview_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("histview")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "tui.cli"]


def _median(values: list[float]) -> float:
    return statistics.median(values)


def measure(
    path: Path, repeat: int, mode: str = "check", trace: bool = True, compare: Path | None = None
) -> dict:
    """Paired runs: each round runs the GC-on parse, the GC-off parse and the check, each
    in a fresh process, one after the other, so a load change on this shared machine hits
    all three; every ratio is the median of its per-round ratios. `compare`: another
    checkout of histview (the code before a change), whose check runs in the same rounds;
    its figures come back under "before". The two run in turn first and second: on this
    machine the slot alone moved a `fix -o` of the same code by 0.2-0.3x (the export's
    write and fsync most)."""
    rounds, before = [], []
    for k in range(repeat):
        parse, rss_parse = _work("parse", path)
        parse_nogc, _ = _work("parse-nogc", path)
        if compare is not None and k % 2:
            old, rss_old = _work(mode, path, root=compare)
        check, rss_check = _work(mode, path)
        rounds.append((parse, parse_nogc, check, rss_parse, rss_check))
        if compare is not None:
            if not k % 2:
                old, rss_old = _work(mode, path, root=compare)
            before.append((parse, parse_nogc, old, rss_parse, rss_old))
    _, idle_parse = _work("idle-parse", path)
    _, idle_check = _work("idle-check", path)
    if trace:
        traced_parse, _ = _work("parse", path, trace=True)
        traced_check, _ = _work(mode, path, trace=True)
    else:
        traced_parse = traced_check = {"traced_peak": float("nan")}
    bare = [
        sys.executable,
        "-c",
        "import sys, orjson; orjson.loads(open(sys.argv[1], 'rb').read())",
    ]
    if path.suffix == ".jsonl":
        bare = [
            sys.executable,
            "-c",
            "import sys, orjson\n"
            "r = [orjson.loads(l) for l in open(sys.argv[1], 'rb').read().split(b'\\n') if l.strip()]",
        ]
    cli_rounds, cli_before = [], []
    # the same entry point for both trees when comparing (the console script is this one's)
    hv = [sys.executable, "-m", "tui.cli"] if compare is not None else histview_cmd()
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(repeat):
            cli_parse, cli_parse_rss = _cli_wall([*bare, str(path)], 1)
            if mode == "fix":
                cmd = [*hv, "fix", str(path), "-o", f"{tmp}/{k}{path.suffix}"]
            else:
                cmd = [*hv, "check", str(path)]
            cli_check, cli_check_rss = _cli_wall(cmd, 1)
            cli_rounds.append((cli_parse, cli_check, cli_parse_rss, cli_check_rss))
            if compare is not None:
                cmd_old = [*cmd[:-1], f"{tmp}/old{k}{path.suffix}"] if mode == "fix" else cmd
                old_check, old_rss = _cli_wall(cmd_old, 1, compare)
                cli_before.append((cli_parse, old_check, cli_parse_rss, old_rss))
    out = _figures(path, mode, rounds, cli_rounds, idle_parse, idle_check)
    out.update(
        traced_ratio=traced_check["traced_peak"] / traced_parse["traced_peak"],
        traced_parse=traced_parse["traced_peak"],
        traced_check=traced_check["traced_peak"],
        load_average=os.getloadavg(),
    )
    if compare is not None:
        out["before"] = _figures(path, mode, before, cli_before, idle_parse, idle_check)
    return out


def _figures(path: Path, mode: str, rounds: list, cli_rounds: list, idle_parse, idle_check):
    med = _median
    parse_s = med([r[0]["best"] for r in rounds])
    parse_nogc_s = med([r[1]["best"] for r in rounds])
    check_s = med([r[2]["best"] for r in rounds])
    rss_parse = med([r[3] for r in rounds])
    rss_check = med([r[4] for r in rounds])
    return {
        "mode": mode,
        "rounds": len(rounds),
        "export_s": med([r[2]["export"] for r in rounds]) if mode == "fix" else None,
        "bytes": path.stat().st_size,
        "parse_s": parse_s,
        "check_s": check_s,
        "load_s": med([r[2]["load"] for r in rounds]),
        "analyze_s": med([r[2]["analyze"] for r in rounds]),
        "time_ratio": med([r[2]["best"] / r[0]["best"] for r in rounds]),
        "parse_nogc_s": parse_nogc_s,
        "time_ratio_nogc": med([r[2]["best"] / r[1]["best"] for r in rounds]),
        # CPU time (this process's, from process_time): what the work costs, whatever the
        # other processes on the machine do to the wall clock
        "cpu_parse_s": med([r[0]["cpu"] for r in rounds]),
        "cpu_parse_nogc_s": med([r[1]["cpu"] for r in rounds]),
        "cpu_check_s": med([r[2]["cpu"] for r in rounds]),
        "cpu_ratio": med([r[2]["cpu"] / r[0]["cpu"] for r in rounds]),
        "cpu_ratio_nogc": med([r[2]["cpu"] / r[1]["cpu"] for r in rounds]),
        "cli_parse_s": med([c[0] for c in cli_rounds]),
        "cli_check_s": med([c[1] for c in cli_rounds]),
        "cli_ratio": med([c[1] / c[0] for c in cli_rounds]),
        "rss_parse": rss_parse,
        "rss_check": rss_check,
        "rss_ratio": med([r[4] / r[3] for r in rounds]),
        "rss_net_ratio": (rss_check - idle_check) / max(1, rss_parse - idle_parse),
        "cli_rss_ratio": med([c[3] / c[2] for c in cli_rounds]),
    }


def _mb(n: float) -> str:
    return f"{n / 1e6:.0f} MB" if n >= 10e6 else f"{n / 1e6:.1f} MB"


def report(name: str, messages: int, r: dict) -> str:
    ok_t = "ok" if r["time_ratio"] <= GOAL_GC_ON else "MISSED"
    strict = r["mode"] == "check" and name.startswith(GOAL_GC_OFF_FORMATS)
    ok_t0 = ("  [ok]" if r["time_ratio_nogc"] <= GOAL_GC_OFF else "  [MISSED]") if strict else ""
    ok_m = "ok" if r["rss_ratio"] <= GOAL_MEMORY else "MISSED"
    if r.get("mode") == "fix":
        work = (
            f"fix {r['check_s']:.3f} s (load {r['load_s']:.3f} + apply_all {r['analyze_s']:.3f}"
            f" + export {r['export_s']:.3f})"
        )
    else:
        work = f"check {r['check_s']:.3f} s (load {r['load_s']:.3f} + analyze {r['analyze_s']:.3f})"
    cmd = "histview fix -o" if r.get("mode") == "fix" else "histview check"
    return "\n".join(
        [
            f"{name}  ({messages} messages, {_mb(r['bytes'])}; medians of {r['rounds']} paired"
            f" runs, each ratio the median of the rounds' own ratios, not the quotient of the"
            f" median times beside it; load average {r['load_average'][0]:.1f})",
            f"  time    {work}"
            f" / parse {r['parse_s']:.3f} s = {r['time_ratio']:.2f}x  [{ok_t}];"
            f" / parse with GC off {r['parse_nogc_s']:.3f} s = {r['time_ratio_nogc']:.2f}x{ok_t0}",
            f"  cpu     {r['cpu_check_s']:.3f} s / parse {r['cpu_parse_s']:.3f} s = {r['cpu_ratio']:.2f}x;"
            f" / parse with GC off {r['cpu_parse_nogc_s']:.3f} s = {r['cpu_ratio_nogc']:.2f}x",
            f"  command {cmd} {r['cli_check_s']:.3f} s / python orjson.loads {r['cli_parse_s']:.3f} s"
            f" = {r['cli_ratio']:.2f}x",
            f"  memory  peak RSS {_mb(r['rss_check'])} / {_mb(r['rss_parse'])} = {r['rss_ratio']:.2f}x"
            f"  [{ok_m}]; net of the interpreter {r['rss_net_ratio']:.2f}x;"
            f" traced {_mb(r['traced_check'])} / {_mb(r['traced_parse'])} = {r['traced_ratio']:.2f}x",
            f"  command peak RSS ratio {r['cli_rss_ratio']:.2f}x",
        ]
    )


def profile(path: Path, top: int, mode: str = "check") -> None:
    import cProfile
    import pstats

    sys.path.insert(0, str(ROOT))
    _imports("check")
    prof = cProfile.Profile()
    prof.runcall(_fix if mode == "fix" else _check, str(path))
    stats = pstats.Stats(prof)
    stats.strip_dirs().sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--files", help="comma-separated names from the manifest (default: all)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--compare",
        type=Path,
        metavar="DIR",
        help="another checkout of histview (e.g. `git worktree add /tmp/before main`): its"
        " check runs in the same rounds, and both are reported",
    )
    ap.add_argument(
        "--no-trace", action="store_true", help="skip the tracemalloc runs (slow on big files)"
    )
    ap.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    ap.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    ap.add_argument(
        "--profile", metavar="NAME", help="cProfile one check of this file (with --fix: one fix)"
    )
    ap.add_argument(
        "--fix", action="store_true", help="time `fix -o` on every file named (not `check`)"
    )
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--worker", nargs=2, metavar=("MODE", "FILE"), help=argparse.SUPPRESS)
    ap.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.worker:
        mode, path = args.worker
        sys.path.insert(0, str(args.root))
        print(json.dumps(worker(mode, path, args.repeat, args.trace)))
        return 0
    if args.profile:
        manifest_path = args.out / "manifest.json"
        info = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
        mode = "fix" if args.fix else info.get(args.profile, {}).get("mode", "check")
        profile(args.out / args.profile, args.top, mode)
        return 0

    manifest_path = args.out / "manifest.json"
    if not manifest_path.exists():
        print(f"no {manifest_path}: run `python bench/gen.py` first", file=sys.stderr)
        return 2
    manifest = json.loads(manifest_path.read_text())
    names = args.files.split(",") if args.files else list(manifest)
    results = {}
    for name in names:
        path = args.out / name
        info = manifest.get(name, {})
        why = can_load(path, info.get("format"))
        if why:
            print(f"{name}: skipped ({why})")
            continue
        mode = "fix" if args.fix else info.get("mode", "check")
        r = measure(path, args.repeat, mode, not args.no_trace, args.compare)
        results[name] = r
        messages = manifest.get(name, {}).get("messages", 0)
        if "before" in r:
            old = dict(r, **r["before"])
            print(report(f"{name} BEFORE ({args.compare})", messages, old), flush=True)
        print(report(name, messages, r), flush=True)
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
