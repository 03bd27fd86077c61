"""Where one TUI step's worker time goes, without the app: the load worker's work (load,
rows, workbench, first snapshot, the first step's index), then one apply as `_step_worker`
makes it (`Workbench.apply`, `step_changes`, `snapshot` reusing the state shown), under
cProfile. Picks the fix as `tui_bench.py --fix` does.

    .venv/bin/python bench/step_profile.py FILE 'orphan-tool-use:insert-result+@0.5' [N]

N: how many profile lines to print (default 40; 0: no profile, the CPU time of five
applies, each on a fresh copy of the state shown).
"""

from __future__ import annotations

import cProfile
import os
import pstats
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.tui_bench import pick  # noqa: E402
from repair.formats.load import load_session  # noqa: E402
from repair.gcpause import gc_paused  # noqa: E402
from repair.workbench import Workbench  # noqa: E402
from tui.rows import build_rows  # noqa: E402
from tui.state import snapshot, step_changes  # noqa: E402


def main() -> None:
    if len(sys.argv) < 3 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        raise SystemExit(0 if sys.argv[1:2] in (["-h"], ["--help"]) else 2)
    path, want = sys.argv[1], sys.argv[2]
    lines = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    with gc_paused(freeze=True):
        session = load_session(path, exact_numbers=False)
        wb = Workbench(session)
        shown = snapshot(wb, None, table=build_rows(session))
        wb.prepare_steps()
    at = pick(shown.session, shown.fixes, want)
    if at is None:
        raise SystemExit(f"{path}: no fix matches {want!r}")
    fix = shown.fixes[at]
    if not lines:
        for _ in range(5):
            r0 = resource.getrusage(resource.RUSAGE_THREAD)
            with gc_paused(freeze=True):
                result = wb.apply(fix, None)
                assert result is not None
                snapshot(wb, None, reuse=shown, changed=step_changes(shown, result))
            r1 = resource.getrusage(resource.RUSAGE_THREAD)
            user, sys_ = r1.ru_utime - r0.ru_utime, r1.ru_stime - r0.ru_stime
            faults = r1.ru_minflt - r0.ru_minflt
            print(
                f"{user + sys_:.3f} s CPU ({user:.3f} user, {sys_:.3f} system, {faults} page faults)"
            )
            wb.undo()
            wb.analysis  # noqa: B018 (the state before, analysed as it was shown)
        return
    prof = cProfile.Profile()
    c0 = time.thread_time()
    with gc_paused(freeze=True):
        prof.enable()
        result = wb.apply(fix, None)
        assert result is not None
        derived = snapshot(wb, None, reuse=shown, changed=step_changes(shown, result))
        prof.disable()
    cpu = time.thread_time() - c0
    print(f"{fix.code}:{fix.action} at message {fix.position}: {cpu:.3f} s CPU, ", end="")
    print(f"incremental={derived.incremental}")
    pstats.Stats(prof).sort_stats("cumulative").print_stats(lines)


if __name__ == "__main__":
    main()
