"""Fuzz histview with mutated sessions: a long run started by hand.

    python bench/fuzz.py                       # 20000 cases, seed 1
    python bench/fuzz.py --cases 50000 --seed 7
    python bench/fuzz.py --minutes 30          # as many cases as fit
    python bench/fuzz.py --only roo            # seeds whose path contains "roo"
    python bench/fuzz.py --replay bench/out/fuzz/crash-3.json

Each case takes one seed (every file in sample_sessions/ and ../shared/corpus, so new formats
and samples are covered as they land), applies 1-3 random mutations (tests/fuzz_support.py:
structure, types, numbers, strings, bytes) and runs the public functions and the CLI on it,
checking that no exception escapes, that `fix` writes a result that reads back the same and
converges or refuses in one line, and that no string or number of the input is lost.

Failures are grouped by signature (exception type and the innermost histview frame, or the
broken promise); the first case of each group is saved to bench/out/fuzz/ with the mutations
that made it, so `--replay` runs it again. The summary says how many cases ran and how they
ended.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fuzz_support import Broken, Seed, check_case, mutate, seeds  # noqa: E402

OUT = ROOT / "bench" / "out" / "fuzz"


def signature(exc: BaseException) -> str:
    if isinstance(exc, Broken):
        # the promise and what broke it, without the case's own ids and numbers
        text = str(exc).split(", e.g.")[0].split(": histview: ")[0]
        return "broken: " + " ".join(w for w in text.split() if not any(c.isdigit() for c in w))
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/repair/" in f.filename]
    where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
    return f"{type(exc).__name__} at {where}"


def replay(path: Path) -> int:
    case = json.loads(path.read_text())
    data = bytes.fromhex(case["data"])
    with tempfile.TemporaryDirectory() as tmp:
        print(check_case(data, case["suffix"], Path(tmp)))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--cases", type=int, default=20000)
    ap.add_argument("--minutes", type=float, default=None, help="stop after this long")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default=None, help="seeds whose name contains this")
    ap.add_argument("--max-mutations", type=int, default=3)
    ap.add_argument("--replay", type=Path, default=None)
    ap.add_argument("--verbose", action="store_true", help="print each failure as it happens")
    args = ap.parse_args()
    if args.replay:
        return replay(args.replay)

    pool: list[Seed] = [s for s in seeds() if not args.only or args.only in s.name]
    if not pool:
        print("no seeds", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    OUT.mkdir(parents=True, exist_ok=True)
    ends: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    first: dict[str, Path] = {}
    start = time.monotonic()
    deadline = start + args.minutes * 60 if args.minutes else None
    n = 0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        while n < args.cases and (deadline is None or time.monotonic() < deadline):
            n += 1
            seed = rng.choice(pool)
            data, done = mutate(seed, rng, rng.randint(1, args.max_mutations))
            try:
                ends[check_case(data, seed.suffix, work)] += 1
            except Exception as exc:  # every escape is a finding of this run
                sig = signature(exc)
                failures[sig] += 1
                ends["FAILED"] += 1
                if sig not in first:
                    saved = OUT / f"crash-{len(first) + 1}.json"
                    saved.write_text(
                        json.dumps(
                            {
                                "signature": sig,
                                "seed": seed.name,
                                "mutations": done,
                                "error": "".join(traceback.format_exception(exc))[-4000:],
                                "suffix": seed.suffix,
                                "data": data.hex(),
                            },
                            indent=1,
                        )
                    )
                    first[sig] = saved
                    if args.verbose:
                        print(f"[{n}] {sig} ({seed.name}: {'; '.join(done)})", flush=True)
            if n % 1000 == 0:
                rate = n / (time.monotonic() - start)
                print(f"{n} cases, {rate:.0f}/s, {ends['FAILED']} failed", flush=True)
    took = time.monotonic() - start
    print(
        f"\n{n} cases in {took:.0f} s over {len(pool)} seeds: "
        + ", ".join(f"{k} {v}" for k, v in ends.most_common())
    )
    for sig, count in failures.most_common():
        print(f"  {count:6}  {sig}  -> {first[sig].relative_to(ROOT)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
