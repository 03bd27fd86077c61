"""The detail pane's header names every line a message was read from, as `histview messages`
names them (one function, `lines_words`): a Claude Code message of twelve parallel calls,
their results between them, is "lines 2, 4, 6 … 24 (12)" at 80 columns, not "line 2"; a
list too long for the pane's row keeps its first lines, its last and the count, on a row of
its own, and is named anew when the pane gets wider (`d`)."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from repair.place import lines_words
from tests.claude_code_records import assistant, jsonl, result, text, tool_use, user
from tests.tui.tui_helpers import opened, timeline, widget_text


def _parallel_calls(path, calls: int = 12):
    """A user line, then `calls` calls of one message.id, each followed by its result."""
    records = [user(1, None, "run them all", 1)]
    parent = n = 1
    for i in range(calls):
        n += 1
        records.append(assistant(n, parent, "msg_P", tool_use(f"toolu_{i:02d}", f"job {i}"), n))
        parent, n = n, n + 1
        records.append(result(n, parent, f"toolu_{i:02d}", f"done {i}", n))
        parent = n
    records.append(assistant(n + 1, parent, "msg_Q", text("all done"), n + 1))
    path.write_bytes(jsonl(records))
    return path


async def _header(path, size: tuple[int, int], keys: tuple[str, ...] = ()) -> list[str]:
    """The detail pane's first two rows of text on the parallel calls' message."""
    async with opened(path, size) as (app, pilot):
        tl = timeline(app)
        tl.go_to_row(tl.state.table.row_of(1, 0))
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
            await pilot.pause()
        return widget_text(app, "#detail").splitlines()[:2]


async def test_the_header_names_each_line_of_a_message_of_parallel_calls(tmp_path):
    path = _parallel_calls(tmp_path / "parallel.jsonl")
    assert await _header(path, (120, 40)) == [
        "messages.1 · assistant · 10:00:02 UTC",
        "lines 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24",
    ]
    # the narrow pane (23 columns a row) keeps the first lines, the last and the count
    assert await _header(path, (80, 24)) == [
        "messages.1 · assistant · 10:00:02 UTC",
        "lines 2, 4, 6 … 24 (12)",
    ]


async def test_a_wider_pane_names_more_of_the_lines(tmp_path):
    path = _parallel_calls(tmp_path / "parallel.jsonl")
    wide = await _header(path, (80, 24), keys=("d",))  # d: the detail pane wide
    assert wide[1] == "lines 2, 4, 6, 8, 10, 12, 14, 16 … 24 (12)"


def test_messages_names_the_lines_with_the_same_words(tmp_path):
    path = _parallel_calls(tmp_path / "parallel.jsonl")
    code = "import sys; from tui.cli import main; sys.argv[0] = 'histview'; main()"
    out = subprocess.run(
        [sys.executable, "-c", code, "messages", str(path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "messages.1 assistant  (lines 2, 4, 6, 8, 10, 12, 14 … 24 (12))" in out.splitlines()


@given(
    st.lists(st.integers(1, 10**7), min_size=1, max_size=60, unique=True).map(sorted),
    st.integers(1, 120),
)
def test_lines_are_shortened_between_numbers_keeping_the_last_and_the_count(lines, width):
    words = lines_words(lines, width)
    if len(lines) == 1:
        assert words == f"line {lines[0]}"
        return
    whole = "lines " + ", ".join(map(str, lines))
    shortest = f"lines {lines[0]} … {lines[-1]} ({len(lines)})"
    if len(whole) <= width or len(whole) <= len(shortest):
        assert words == whole
        return
    listed, _, tail = words.removeprefix("lines ").partition(" … ")
    shown = [int(n) for n in listed.split(", ")]
    assert shown == lines[: len(shown)]  # the first lines, each whole
    assert len(shown) < len(lines) - 1
    assert tail == f"{lines[-1]} ({len(lines)})"
    assert len(words) <= width or words == shortest
    # as many as the row holds: one more would not fit
    longer = f"lines {listed}, {lines[len(shown)]} … {tail}"
    assert len(longer) > width


async def test_a_merged_message_is_named_by_the_lines_of_both():
    """A fix merges two Codex assistant messages (an empty user message between them
    dropped): the header names the first's line and the second's."""
    from tests.engine.test_merge_clients import ORIGINAL
    from tests.tui.tui_helpers import apply_first_fix

    async with opened(ORIGINAL, (80, 24)) as (app, pilot):
        msgs = await apply_first_fix(pilot, "empty-content")
        merged = next(k for k, m in enumerate(msgs) if m.role == "assistant" and m.live)
        tl = timeline(app)
        tl.go_to_row(tl.state.table.row_of(merged, 0))
        await pilot.pause()
        head = widget_text(app, "#detail").splitlines()
        # numbered as Codex sends it: each item before it an entry of its own
        assert head[0].startswith("messages.2 · assistant")
        assert head[1] == "lines 6, 9 · row 1 of the file"
