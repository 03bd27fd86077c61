"""The fix list after a step, made from the list before it (tui.fix_lines), reads as the
list of the plan made whole: the same lines (the tool ids where two lines of one code name
one message, the number column's width) and the same fix for each finding."""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from repair.errors import InputError
from repair.formats import load_bytes
from repair.workbench import Workbench
from tests.engine.test_incremental import _TARGETS, _entry, _steps
from tests.engine.test_replan import _long
from tui.fix_lines import FixLines, fix_lines


def _read(lines: FixLines) -> tuple:
    of = {k: lines.fixes.index(f) for k, f in lines.of_finding.items()}
    return [str(p) for p in lines.prompts], of


def _follow(wb: Workbench, steps: int, rng: random.Random) -> None:
    shown = [fix_lines(list(wb.plan.fixes))]

    def check(wb: Workbench, done: list[str]) -> None:
        fixes = list(wb.plan.fixes)
        got = fix_lines(fixes, shown[0])
        assert _read(got) == _read(fix_lines(fixes)), done
        shown[0] = got

    _steps(wb, rng, steps, check)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(
    doc=st.lists(_entry, min_size=1, max_size=14),
    target=st.sampled_from(_TARGETS),
    rng_seed=st.integers(0, 2**32 - 1),
)
def test_the_fix_list_after_random_steps_is_the_whole_list(doc, target, rng_seed):
    try:
        session = load_bytes(
            json.dumps(doc).encode(), "/tmp/input.json", format="roo", target=target
        )
    except InputError:
        return
    _follow(Workbench(session), 6, random.Random(rng_seed))


def test_a_step_that_fixes_the_last_two_digit_message_narrows_the_number_column():
    """Fixes at messages 2 to 10: applying the one at message 10 leaves one-digit numbers,
    and every line loses the column's second place; undone, every line has it again."""
    wb = Workbench(load_bytes(_long(5), "/tmp/input.json", format="roo"))
    before = fix_lines(list(wb.plan.fixes))
    assert str(before.prompts[0]).split()[1] == "m2" and " m2 " in str(before.prompts[0])
    wb.apply(wb.plan.fixes[-1])
    after = fix_lines(list(wb.plan.fixes), before)
    assert _read(after) == _read(fix_lines(list(wb.plan.fixes)))
    assert [str(p) for p in after.prompts] == [
        str(p).replace("  m", " m", 1) for p in before.prompts[:-1]
    ]
    wb.undo()
    again = fix_lines(list(wb.plan.fixes), after)
    assert [str(p) for p in again.prompts] == [str(p) for p in before.prompts]


def test_a_step_across_a_digit_of_the_numbers_keeps_the_column_width():
    """Roo 9 turns: messages 1 to 19; the step changes lines of every width."""
    for seed in range(5):
        _follow(
            Workbench(load_bytes(_long(9), "/tmp/input.json", format="roo")), 6, random.Random(seed)
        )
