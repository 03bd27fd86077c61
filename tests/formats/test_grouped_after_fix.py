"""After a fix, a Codex, OpenAI chat or opencode session holds its messages as the written
file groups them (repair.formats.regroup), so the TUI's header and pane find what `check`
finds in the output (issue 10 point 5).

Measured with Codex CLI 0.169 (`../shared/clients/resume codex`): a rollout holding an
output item and then a user message item is sent as those two items, a
`function_call_output` and a `message` (it merges nothing), so the session holds them as
two messages: a result written before the user's text is a message of its own, and a merge
of results with text is not offered (the file cannot hold it)."""

from __future__ import annotations

import json
from collections import Counter

from repair.formats import load_bytes
from repair.workbench import Workbench
from tests.engine.test_memory_is_written import checked, in_memory
from tests.formats.test_format_codex import call, meta, output, rollout, say, user
from tests.paths import CLIENT_FIXTURES, SAMPLES

OPENCODE = CLIENT_FIXTURES / "opencode"


def bench(path, target: str | None = None) -> Workbench:
    session = load_bytes(path.read_bytes(), f"/tmp/input{path.suffix}")
    if target is not None:
        session.target = target
    return Workbench(session)


def shape(wb: Workbench) -> list[tuple[str | None, list[str]]]:
    return [(m.role, [b.type for b in m.blocks]) for m in wb.session.messages if m.live]


def only(wb: Workbench, code: str, action: str | None = None):
    (fix,) = [f for f in wb.plan.fixes if f.code == code]
    while action is not None and fix.action != action:
        wb.cycle(fix)
        (fix,) = [f for f in wb.plan.fixes if f.code == code]
    return fix


def test_a_codex_output_written_before_the_users_text_is_a_message_of_its_own():
    """The sample's unanswered call is followed by the user's text: the output goes before
    it, and the session says, as `check` of the output does, that two user messages follow
    each other (info under Anthropic; it was 0 in memory and 1 in the file)."""
    wb = bench(SAMPLES / "codex_missing_output.jsonl", "anthropic")
    assert wb.apply(only(wb, "orphan-tool-use")) is not None
    assert shape(wb)[4:6] == [("user", ["tool_result"]), ("user", ["text"])]
    assert in_memory(wb) == checked(wb) == Counter({("consecutive-same-role", "info"): 1})


def test_results_and_text_are_not_merged_where_the_file_writes_them_apart():
    """Bedrock: the result moved home stays before the user's text, the error stays, and
    the merge says why it changes nothing; the promise is what the file holds."""
    for path, format_name in (
        (SAMPLES / "openai_chat_user_between_calls.json", "OpenAI chat"),
        (SAMPLES / "codex_missing_output.jsonl", "Codex"),
    ):
        wb = bench(path, "bedrock")
        assert wb.apply_all() is not None
        merge = only(wb, "consecutive-same-role")
        assert not merge.actionable
        assert merge.detail.startswith(f"No change: {format_name} writes ")
        error = Counter({("consecutive-same-role", "error"): 1})
        assert in_memory(wb) == checked(wb) == error, path.name


def test_a_codex_turn_of_parallel_calls_stays_one_when_a_middle_call_is_answered():
    """Calls a, b, c with outputs for a and c after them: b's output is written with the
    turn's outputs, not right after b (which cut the turn and left a's output misplaced)."""
    data = rollout(
        meta(),
        user("2025-11-20T10:00:01.000Z", "three things"),
        call("2025-11-20T10:00:02.000Z", "a"),
        call("2025-11-20T10:00:02.100Z", "b"),
        call("2025-11-20T10:00:02.200Z", "c"),
        output("2025-11-20T10:00:03.000Z", "a"),
        output("2025-11-20T10:00:03.100Z", "c"),
        say("2025-11-20T10:00:04.000Z", "done"),
    )
    wb = Workbench(load_bytes(data, "/tmp/r.jsonl"))
    assert wb.apply_all() is not None
    assert in_memory(wb) == checked(wb) == Counter()
    written = [json.loads(x)["payload"] for x in wb.session.export().data.splitlines()[1:]]
    assert [(p["type"], p.get("call_id")) for p in written[1:7]] == [
        ("function_call", "a"),
        ("function_call", "b"),
        ("function_call", "c"),
        ("function_call_output", "b"),
        ("function_call_output", "a"),
        ("function_call_output", "c"),
    ]


def test_opencode_user_messages_left_in_a_row_are_one():
    """Dropping the running call empties its step: the results before it and the user's
    text after it are one user message in the export, and in the session."""
    wb = bench(OPENCODE / "blank_user_text.json")
    assert wb.apply(only(wb, "orphan-tool-use", "drop-tool-use")) is not None
    assert ("user", ["tool_result", "text"]) in shape(wb)
    assert in_memory(wb) == checked(wb)


def test_opencode_a_running_call_is_not_merged_with_the_step_after_it():
    """Dropping the empty user message between a step with a running call and the next
    step leaves the two apart (opencode sends the call's result between them), so the call
    reads back as it is held: unanswered before another step, not pending at the end."""
    for target in (None, "anthropic", "bedrock"):
        wb = bench(OPENCODE / "blank_user_text.json", target)
        fix = only(wb, "empty-content", "drop-empty")
        assert "merge" not in fix.detail
        assert wb.apply(fix) is not None
        assert shape(wb)[-2:] == [("assistant", ["tool_use"]), ("assistant", ["text"])]
        assert in_memory(wb) == checked(wb)
        assert ("pending-tool-use", "warning") not in in_memory(wb)


def test_opencode_dropping_a_call_drops_the_result_of_its_part():
    """A tool part is a call and its result: dropping the call with an invalid id drops the
    result too in the export, so the session holds no orphan result either."""
    wb = bench(OPENCODE / "unsanitised_id.json", "anthropic")
    fix = next(f for f in wb.plan.actionable if f.code == "invalid-tool-id")
    while fix.action != "drop":
        wb.cycle(fix)
        fix = next(f for f in wb.plan.actionable if f.code == "invalid-tool-id")
    assert wb.apply(fix) is not None
    assert all(b.type != "tool_result" for m in wb.session.messages for b in m.blocks)
    assert in_memory(wb) == checked(wb)


def test_opencode_results_are_stamped_with_the_end_time_the_export_gives_them():
    """The running part is closed with the last time its message recorded: the results
    message holding it is read back with that time, and so it is held."""
    wb = bench(OPENCODE / "parallel_one_running.json")
    fix = next(f for f in wb.plan.actionable if "ParallelRunning" in (f.tool_use_id or ""))
    assert fix.action == "insert-result" and wb.apply(fix) is not None
    assert in_memory(wb) == checked(wb)
    again = load_bytes(wb.session.export().data, "/tmp/input.json")
    assert [m.timestamp for m in wb.session.messages] == [m.timestamp for m in again.messages]
