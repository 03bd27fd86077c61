"""What a format declares no fix may change (`Adapter.frozen`: the history a Codex
`compacted` line stands for, which Codex rebuilds from that line and the writer writes as it
was): no plan applies a fix that changes it, so the writer never refuses what `apply_all`
made for that reason, and each fix left out says why, in the writer's words."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from repair import codes
from repair.errors import ExportRefused
from repair.formats.codex import compaction_kept
from repair.plan import Choices, apply_all, make_plan
from tests.formats.test_codex_lazy import _both, _line


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    lines=st.lists(_line(), min_size=1, max_size=12),
    target=st.sampled_from(["codex", "openai-responses", "bedrock", "anthropic"]),
    last=st.booleans(),
)
def test_no_fix_changes_a_compactions_history(lines, target, last):
    session = dataclasses.replace(_both(lines)[0], target=target)
    # every code's default action, or its last alternative (drop, to-text, fill, merge...)
    last_of = {c: codes.get(c).actions_for(target)[-1] for c in codes.CODES}
    choices = Choices(by_code=last_of if last else {})
    after, _ = apply_all(session, choices)
    try:
        after.export()
    except ExportRefused as exc:
        assert "compaction" not in str(exc), str(exc)
    state = after.state
    reasons = {compaction_kept(state.lines[i].lineno) for i in state.compacted_items}
    for fix in make_plan(after, choices=choices).fixes:
        assert fix.frozen is None or fix.frozen in reasons
