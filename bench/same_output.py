"""Does a change keep what `histview` prints? Runs `check --json` (under the default target,
`openai-chat` and `bedrock`) and `messages --json` on every sample, fixture and corpus file
with this checkout and with another one (BEFORE: a tree, e.g. `git archive main | tar -x -C
/tmp/before`), and lists the runs whose output differs. A speed-up must leave it empty.
With `--fix`: `fix FILE -o OUT` instead, comparing what it prints, the file it writes and
its report (without the `created` time; the temporary folder named alike in both).

    .venv/bin/python bench/same_output.py /tmp/before
    .venv/bin/python bench/same_output.py /tmp/before --extra bench/out/codex_100k.jsonl
    .venv/bin/python bench/same_output.py /tmp/before --fix --extra /work/bench-out-all/roo_100k.json
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
SHARED = HERE.parent / "shared"
TARGETS = ("", "openai-chat", "bedrock")


def session_files() -> list[Path]:
    roots = [HERE / "sample_sessions", HERE / "tests" / "fixtures", SHARED / "corpus"]
    files = []
    for root in roots:
        if root.is_dir():
            files += [p for p in sorted(root.rglob("*")) if p.is_file() and p.suffix != ".md"]
    return files


def run(tree: Path, args: list[str]) -> bytes:
    env = {**os.environ, "PYTHONPATH": str(tree), "NO_COLOR": "1"}
    code = "import sys; from tui.cli import main; sys.argv[0] = 'histview'; main()"
    done = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, cwd=tree, timeout=600
    )
    # paths are printed as given; the trees differ only in where they run
    return done.stdout + b"\n--stderr--\n" + done.stderr + f"\nrc={done.returncode}".encode()


def fixed(tree: Path, file: Path) -> bytes:
    """What `fix FILE -o OUT --report R` prints and writes, the folder and the time taken out."""
    with tempfile.TemporaryDirectory() as tmp:
        out, rep = Path(tmp, "out" + file.suffix), Path(tmp, "report.json")
        said = run(tree, ["fix", str(file), "-o", str(out), "--report", str(rep)])
        parts = [said] + [p.read_bytes() if p.exists() else b"(none)" for p in (out, rep)]
        got = b"\n--file--\n".join(parts).replace(tmp.encode(), b"<TMP>")
    return re.sub(rb'"created": "[^"]*"', b'"created": ""', got)


def runs(files: list[Path]) -> list[list[str]]:
    out = []
    for f in files:
        for target in TARGETS:
            out.append(["check", "--json", str(f), *(["--target", target] if target else [])])
        out.append(["messages", "--json", str(f)])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("before", type=Path, help="the other checkout's tree")
    ap.add_argument("--extra", action="append", default=[], help="another file (repeatable)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--fix", action="store_true", help="compare `fix -o` (output, report)")
    opts = ap.parse_args()
    files = session_files() + [Path(e).resolve() for e in opts.extra]
    todo = [["fix", str(f)] for f in files] if opts.fix else runs(files)

    def one(args: list[str]) -> tuple[list[str], bool]:
        if opts.fix:
            f = Path(args[1])
            return args, fixed(HERE, f) == fixed(opts.before.resolve(), f)
        return args, run(HERE, args) == run(opts.before.resolve(), args)

    differ = 0
    with ThreadPoolExecutor(opts.jobs) as pool:
        for args, same in pool.map(one, todo):
            if not same:
                differ += 1
                print("differs:", " ".join(args))
    print(f"{len(todo) - differ} of {len(todo)} runs print the same ({len(files)} files)")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
