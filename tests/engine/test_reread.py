"""`repair.reread.read_exactly`: the workbench made again over its file read keeping every
number literal, at the same state (the TUI's way out of `InexactNumbers`)."""

from __future__ import annotations

import pytest

from repair.formats import load_session
from repair.jsonio import InexactNumbers
from repair.reread import read_exactly
from repair.workbench import Workbench
from tests.claude_code_records import session_with_subagents

BIG = "12345678901234567890123"  # orjson reads it as a float


def _with_big(path, key: str) -> None:
    lines = path.read_text().splitlines()
    path.write_text("\n".join(ln[:-1] + f',"{key}{i}":{BIG}}}' for i, ln in enumerate(lines)))


def test_a_step_of_a_subagent_thread_is_made_again_on_the_exact_read(tmp_path):
    """A fix applied to a subagent file whose records hold a literal orjson changes: the
    export refuses before writing; read again exactly, the thread's step is made again on
    the thread of the new read (undone and redone there), and its export writes the
    subagent file's literals as read."""
    main = session_with_subagents(tmp_path, bad=True)
    agent = tmp_path / "sess" / "subagents" / "agent-a1.jsonl"
    _with_big(agent, "a")
    _with_big(main, "m")
    wb = Workbench(load_session(str(main), exact_numbers=False))
    assert not wb.original.numbers_exact
    fix = next(f for f in wb.plan_of(1).fixes if f.actionable)
    assert wb.apply(fix, 1) is not None
    assert wb.apply_all(threads=True) is None  # nothing else to fix
    with pytest.raises(InexactNumbers):
        wb.export()  # nothing written
    assert not (tmp_path / "sess.fixed.jsonl").exists()
    again = read_exactly(wb)
    assert again.original.numbers_exact and again is not wb
    assert [(f.code, f.action) for f in again.thread_applied[1]] == [(fix.code, fix.action)]
    assert [m.role for m in again.session.threads[1].messages] == [
        m.role for m in wb.session.threads[1].messages
    ]
    again.undo()
    assert not again.thread_applied and again.undone
    again.redo()
    result = again.export()
    assert result.threads
    written = (tmp_path / "sess.fixed" / "subagents" / "agent-a1.jsonl").read_text()
    assert written.count(BIG) == agent.read_text().count(BIG) > 0
    assert "e+22" not in written
