"""Instructions, not seconds: `check` (or `fix`) against the GC-off parse, counted by valgrind.

    .venv/bin/python bench/icount.py FILE [--fix] [--compare DIR]

On a machine shared with other people's work the clock of a 3 s run moves by 20-30% from one
run to the next, more than most changes to a loader are worth; the instructions a run
executes do not move. Each figure is `bench/run.py`'s own child (`--worker MODE FILE`) run
once under `valgrind --tool=callgrind`, less the same child that only imports (`idle-*`):
the parse with the GC off, the check (or the fix) of this checkout, and with `--compare`
that of another checkout. Each tree runs once without valgrind first, so the modules it
imports (lazily too) are compiled before anything is counted, and every child runs with
PYTHONHASHSEED=0: without these the same tree counted 1,626 M and 1,696 M on two runs. The
ratio of instructions is not the ratio of time (a parse spends more of its time waiting for
memory than Python code does), so the issue's figures stay `bench/run.py`'s; this says
whether a change does less work, and how much, on any load. Under valgrind a run is about
50x slower: use a file of 10k messages
(`bench/gen.py --out DIR --sizes "" --same-id 0 --reused-id 0 --others 0 --claude-code 10000`,
or `--others 10000 --only codex`).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "bench" / "run.py"


def _worker(mode: str, path: Path, root: Path) -> list[str]:
    return [
        sys.executable,
        str(RUN),
        "--worker",
        mode,
        str(path),
        "--repeat",
        "1",
        "--root",
        str(root),
    ]


def _env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(root)
    env["PYTHONHASHSEED"] = "0"  # (set and dict orders, so the count, the same every run)
    # bytecode compiled once, outside the trees: not counted again in every run
    env["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "histview-icount-pyc")
    return env


def warm(mode: str, path: Path, root: Path) -> None:
    """The run once without valgrind: every module it imports, lazily too, compiled."""
    subprocess.run(_worker(mode, path, root), capture_output=True, cwd=root, env=_env(root))


def instructions(mode: str, path: Path, root: Path) -> int:
    """The instructions of `bench/run.py --worker MODE FILE` with `root`'s histview."""
    with tempfile.TemporaryDirectory() as tmp:
        args = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out"]
        args += _worker(mode, path, root)
        proc = subprocess.run(args, capture_output=True, text=True, cwd=root, env=_env(root))
        got = re.search(r"refs:\s*([\d,]+)", proc.stderr)
        if proc.returncode != 0 or got is None:
            raise SystemExit(f"valgrind {mode} {path.name}: {proc.stderr[-1500:]}")
        return int(got.group(1).replace(",", ""))


def net(mode: str, path: Path, root: Path) -> int:
    """The instructions of MODE less those of the same child that only imports."""
    idle = "idle-parse" if mode == "parse-nogc" else "idle-check"
    return instructions(mode, path, root) - instructions(idle, path, root)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", type=Path)
    ap.add_argument("--fix", action="store_true", help="count `fix -o` (not `check`)")
    ap.add_argument("--compare", type=Path, metavar="DIR", help="another checkout, counted too")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed", file=sys.stderr)
        return 2
    mode = "fix" if args.fix else "check"
    trees = [("this checkout", ROOT)] + ([("compared", args.compare)] if args.compare else [])
    for _, root in trees:  # the first run of a tree compiles its bytecode: not counted
        warm(mode, args.file, root)
    parse = net("parse-nogc", args.file, ROOT)
    print(f"{args.file.name}: parse with GC off {parse / 1e6:,.0f} M instructions", flush=True)
    counts = {}
    for name, root in trees:
        counts[name] = n = net(mode, args.file, root)
        print(f"  {mode} ({name}): {n / 1e6:,.0f} M = {n / parse:.3f}x the parse", flush=True)
    if args.compare:
        now, before = counts["this checkout"], counts["compared"]
        print(f"  this checkout / compared: {now / before:.4f} ({(now - before) / 1e6:+,.0f} M)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
