"""A block's own time (Adapter.block_time), for the formats that stamp each record or item:
the TUI shows it on result rows instead of the message's time."""

from __future__ import annotations

from repair.formats import load_session
from tests.paths import SAMPLES


def _times(name: str) -> dict[tuple[int, str], float | None]:
    s = load_session(str(SAMPLES / name))
    return {
        (mi, b.tool_id): s.adapter.block_time(s, b)
        for mi, m in enumerate(s.messages)
        for b in m.blocks
        if b.tool_id and b.type == "tool_result"
    }


def test_claude_code_result_has_its_own_record_time():
    # line 8: the lint result, written 7.5 s after the first record of its user message
    s = load_session(str(SAMPLES / "claude_code_parallel_interrupted.jsonl"))
    lint = _times("claude_code_parallel_interrupted.jsonl")[(2, "toolu_01dl7dXTPyLsxPFkThf4VucS")]
    assert lint is not None and 7 < lint - s.messages[2].timestamp < 8


def test_codex_output_has_its_line_time():
    times = _times("codex_missing_output.jsonl")
    assert list(times.values()) and all(t is not None for t in times.values())


def test_opencode_result_is_the_part_end_time():
    s = load_session(str(SAMPLES / "opencode_stuck_running.json"))
    res = [b for m in s.messages for b in m.blocks if b.type == "tool_result"]
    uses = [b for m in s.messages for b in m.blocks if b.type == "tool_use"]
    assert res and all(s.adapter.block_time(s, b) is not None for b in res)
    # a call's time is its start, before its result's end
    first = uses[0]
    answer = next(b for b in res if b.tool_id == first.tool_id)
    assert s.adapter.block_time(s, first) < s.adapter.block_time(s, answer)


def test_formats_without_block_times_say_none():
    s = load_session(str(SAMPLES / "roo_subtask_delegation_duplicate.json"))
    assert all(s.adapter.block_time(s, b) is None for m in s.messages for b in m.blocks)
