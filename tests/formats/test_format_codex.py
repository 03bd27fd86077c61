"""The `codex` adapter: detection, load of real rollouts (pairs by call_id, line numbers),
lossless export, and the lines a fix writes (output right after its call, dropped lines,
rewritten ids) with everything else byte-identical."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repair.analysis import analyze
from repair.formats import detect, get_adapter, load_bytes, load_session, probe_bytes
from repair.model import SYNTHETIC_RESULT_TEXT
from repair.plan import Choices, apply_all
from tests.paths import CORPUS

REAL = CORPUS / "codex"


def real_rollouts() -> list[Path]:
    if not REAL.is_dir():
        pytest.skip("real Codex corpus absent")
    files = sorted(REAL.glob("*/rollout-*.jsonl"))
    if not files:
        pytest.skip("real Codex corpus absent")
    return files


def line(ts: str, rtype: str, payload: dict) -> str:
    return json.dumps(
        {"timestamp": ts, "type": rtype, "payload": payload},
        ensure_ascii=False,
        separators=(",", ":"),
    )


def meta() -> str:
    return line(
        "2025-11-20T10:00:00.000Z",
        "session_meta",
        {"id": "s1", "cwd": "/p", "originator": "codex_cli_rs", "cli_version": "0.58.0"},
    )


def user(ts: str, text: str) -> str:
    return line(
        ts,
        "response_item",
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]},
    )


def say(ts: str, text: str) -> str:
    return line(
        ts,
        "response_item",
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text}],
        },
    )


def call(ts: str, cid: str, cmd: str = "ls") -> str:
    args = json.dumps({"command": ["bash", "-lc", cmd]})
    return line(
        ts,
        "response_item",
        {"type": "function_call", "name": "shell", "arguments": args, "call_id": cid},
    )


def output(ts: str, cid: str, text: str = "ok") -> str:
    return line(
        ts, "response_item", {"type": "function_call_output", "call_id": cid, "output": text}
    )


def event(ts: str, kind: str = "token_count") -> str:
    return line(ts, "event_msg", {"type": kind, "info": None})


def rollout(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def fix(data: bytes, choices: Choices | None = None) -> tuple[bytes, list]:
    s = load_bytes(data, path="rollout.jsonl")
    fixed, applied = apply_all(s, choices)
    return fixed.export_bytes(), applied


def errors(data: bytes, target: str | None = None) -> list:
    s = load_bytes(data, path="rollout.jsonl")
    return [f for f in analyze(s, target).findings if f.severity == "error"]


def problems(data: bytes) -> list[tuple[str, str]]:
    """(code, severity) of every finding above info, under the default target (Codex)."""
    s = load_bytes(data, path="rollout.jsonl")
    return [(f.code, f.severity) for f in analyze(s).findings if f.severity != "info"]


# ---------------------------------------------------------------- detection


def test_rollout_is_detected_as_codex_and_targets_codex():
    data = rollout(meta(), user("2025-11-20T10:00:01.000Z", "hi"))
    probe = probe_bytes(data, path="r.jsonl")
    assert detect(probe).name == "codex"
    assert load_bytes(data, path="r.jsonl").target == "codex"


def test_rollout_starting_with_a_response_item_is_still_codex():
    data = rollout(user("2025-11-20T10:00:01.000Z", "hi"), event("2025-11-20T10:00:02.000Z"))
    assert detect(probe_bytes(data, path="r.jsonl")).name == "codex"


@pytest.mark.parametrize(
    "records",
    [
        # Claude Code records
        [
            {
                "parentUuid": None,
                "type": "user",
                "uuid": "u1",
                "sessionId": "S",
                "message": {"role": "user", "content": "hi"},
                "timestamp": "2026-01-01T00:00:00Z",
            },
            {
                "parentUuid": "u1",
                "type": "assistant",
                "uuid": "a1",
                "sessionId": "S",
                "message": {"role": "assistant", "content": [{"type": "text", "text": "yo"}]},
                "timestamp": "2026-01-01T00:00:01Z",
            },
        ],
        # Chat Completions records
        [{"messages": [{"role": "user", "content": "hi"}]}, {"messages": []}],
    ],
)
def test_other_jsonl_is_not_codex(records):
    data = ("\n".join(json.dumps(r) for r in records) + "\n").encode()
    assert get_adapter("codex").detect(probe_bytes(data, path="x.jsonl")) == 0


def test_json_documents_are_not_codex():
    data = json.dumps([{"role": "user", "content": "hi"}]).encode()
    assert get_adapter("codex").detect(probe_bytes(data, path="x.json")) == 0


# ---------------------------------------------------------------- real rollouts


def test_real_rollout_pairs_every_call_and_reports_no_error():
    for path in real_rollouts():
        s = load_session(str(path))
        assert s.format == "codex"
        uses = [b for m in s.messages for b in m.blocks if b.type == "tool_use"]
        results = [b for m in s.messages for b in m.blocks if b.type == "tool_result"]
        analysis = analyze(s)
        answered = [u for u in analysis.pairing.uses if u.results]
        assert len(uses) == len(results) == len(answered)
        if "0.58.0" in str(path):
            assert len(answered) == 39
        assert [f.code for f in analysis.findings if f.severity == "error"] == []
        # every block points at its own line, holding the item with that call_id
        raw_lines = path.read_bytes().split(b"\n")
        for b in uses + results:
            rec = json.loads(raw_lines[b.src["line"] - 1])
            assert rec["payload"]["call_id"] == b.tool_id


def test_real_rollout_round_trips_byte_for_byte_and_fix_changes_nothing():
    for path in real_rollouts():
        data = path.read_bytes()
        s = load_session(str(path))
        assert s.export_bytes() == data
        fixed, applied = apply_all(s)
        assert fixed.export_bytes() == data
        assert not [f for f in applied if f.code != "out-of-order-timestamp"]


def test_real_rollout_messages_group_calls_and_outputs():
    path = real_rollouts()[0]
    s = load_session(str(path))
    live = [m for m in s.messages if m.live]
    # every output sits in the user message right after its call's assistant message
    for a, b in zip(live, live[1:], strict=False):
        if a.role == "assistant" and any(x.type == "tool_use" for x in a.blocks):
            assert b.role == "user" and b.blocks[0].type == "tool_result"
            assert b.blocks[0].tool_id == [x for x in a.blocks if x.type == "tool_use"][0].tool_id


# ---------------------------------------------------------------- load details


def test_load_maps_items_to_blocks_with_lines_and_times():
    data = rollout(
        meta(),
        user("2025-11-20T10:00:01.000Z", "list files"),
        event("2025-11-20T10:00:01.500Z"),
        line(
            "2025-11-20T10:00:02.000Z",
            "response_item",
            {"type": "reasoning", "summary": [], "content": None, "encrypted_content": "x"},
        ),
        call("2025-11-20T10:00:02.000Z", "c1"),
        output("2025-11-20T10:00:03.000Z", "c1", "a.txt"),
        say("2025-11-20T10:00:04.000Z", "There is a.txt"),
    )
    s = load_bytes(data, path="r.jsonl")
    shape = [(m.role, [b.type for b in m.blocks], m.src["line"]) for m in s.messages]
    assert shape == [
        ("user", ["text"], 2),
        ("assistant", ["reasoning", "tool_use"], 4),
        ("user", ["tool_result"], 6),
        ("assistant", ["text"], 7),
    ]
    use = s.messages[1].blocks[1]
    assert (use.tool_id, use.name, use.data["input"], use.src) == (
        "c1",
        "shell",
        {"command": ["bash", "-lc", "ls"]},
        {"line": 5},
    )
    assert s.messages[2].blocks[0].data["content"] == "a.txt"
    assert s.messages[1].timestamp == pytest.approx(1763632802.0)
    assert s.label == "s1"


def test_developer_messages_are_hidden_and_ghost_snapshots_pass_through():
    data = rollout(
        meta(),
        line(
            "2025-11-20T10:00:00.500Z",
            "response_item",
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": "<permissions>"}],
            },
        ),
        line(
            "2025-11-20T10:00:00.600Z",
            "response_item",
            {"type": "ghost_snapshot", "ghost_commit": {}},
        ),
        user("2025-11-20T10:00:01.000Z", "hi"),
    )
    s = load_bytes(data, path="r.jsonl")
    assert [(m.role, m.hidden) for m in s.messages] == [("developer", True), ("user", False)]
    assert s.export_bytes() == data


def test_broken_lines_are_malformed_rows_kept_on_export():
    data = rollout(
        meta(),
        user("2025-11-20T10:00:01.000Z", "hi"),
        '{"timestamp":"2025-11-20T10:00:02.000Z","type":"response_item","payl',
        line("2025-11-20T10:00:03.000Z", "response_item", {"type": "function_call", "name": "x"}),
        say("2025-11-20T10:00:04.000Z", "ok"),
    )
    s = load_bytes(data, path="r.jsonl")
    bad = [(m.src["line"], m.malformed) for m in s.messages if m.malformed]
    assert [b[0] for b in bad] == [3, 4]
    assert "not JSON" in bad[0][1] and "call_id" in bad[1][1]
    found = [(f.code, f.source.to_json()) for f in analyze(s).findings]
    assert ("malformed", {"line": 3}) in found and ("malformed", {"line": 4}) in found
    assert s.export_bytes() == data


def test_items_before_a_compaction_are_history_not_checked():
    data = rollout(
        meta(),
        user("2025-11-20T10:00:01.000Z", "do it"),
        call("2025-11-20T10:00:02.000Z", "old"),  # never answered, but compacted away
        user("2025-11-20T10:00:03.000Z", "go on"),
        line("2025-11-20T10:00:04.000Z", "compacted", {"message": "summary"}),
        user("2025-11-20T10:00:05.000Z", "next"),
        say("2025-11-20T10:00:06.000Z", "done"),
    )
    s = load_bytes(data, path="r.jsonl")
    assert [m.hidden for m in s.messages] == [True, True, True, False, False]
    assert analyze(s).findings == []


def test_a_message_left_out_of_the_history_says_why_and_keeps_its_time():
    """The listing says why a row is hidden (`hidden_reason`), an instruction message has no
    such reason (it is sent), and every message keeps its first line's time."""
    dev = line(
        "2025-11-20T10:00:02.500Z",
        "response_item",
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "b"}]},
    )
    data = rollout(
        meta(),
        user("2025-11-20T10:00:01.000Z", "do it"),
        call("2025-11-20T10:00:02.000Z", "old"),
        line("2025-11-20T10:00:04.000Z", "compacted", {"message": "summary"}),
        dev,
        user("2025-11-20T10:00:05.000Z", "next"),
    )
    s = load_bytes(data, path="r.jsonl")
    gone = "not in the history Codex resumes (replaced by a compaction or rolled back)"
    t = 1763632800.0  # 2025-11-20T10:00:00Z
    assert [list(m.meta.items()) for m in s.messages] == [
        [("hidden_reason", gone), ("timestamp", t + 1)],
        [("hidden_reason", gone), ("timestamp", t + 2)],
        [("timestamp", t + 4)],  # the compacted line's history (the summary)
        [("timestamp", t + 2.5)],
        [("timestamp", t + 5)],
    ]
    assert [m.timestamp for m in s.messages] == [t + 1, t + 2, t + 4, t + 2.5, t + 5]


def test_crlf_and_no_trailing_newline_round_trip():
    body = "\r\n".join(
        [meta(), user("2025-11-20T10:00:01.000Z", "hi"), say("2025-11-20T10:00:02.000Z", "yo")]
    )
    data = body.encode()
    assert load_bytes(data, path="r.jsonl").export_bytes() == data


# ---------------------------------------------------------------- fixes written back


def test_orphan_call_gets_an_output_line_right_after_it():
    lines = [
        meta(),
        user("2025-11-20T10:00:01.000Z", "run it"),
        call("2025-11-20T10:00:02.000Z", "c1", "pytest"),
        event("2025-11-20T10:00:30.000Z", "turn_aborted"),
        user("2025-11-20T10:00:40.000Z", "never mind"),
        say("2025-11-20T10:00:41.000Z", "ok"),
    ]
    data = rollout(*lines)
    # Codex answers the call with "aborted" when it resumes: a warning under Codex, an error
    # for a provider reading the raw history
    assert problems(data) == [("orphan-tool-use", "warning")]
    assert [f.code for f in errors(data, "openai-responses")] == ["orphan-tool-use"]
    out, _ = fix(data)
    written = out.decode().split("\n")
    assert written[:3] == lines[:3] and written[4:7] == lines[3:6]
    new = json.loads(written[3])
    assert new == {
        "timestamp": "2025-11-20T10:00:02.000Z",
        "type": "response_item",
        "payload": {
            "type": "function_call_output",
            "call_id": "c1",
            "output": SYNTHETIC_RESULT_TEXT,
        },
    }
    assert written[3] == json.dumps(new, ensure_ascii=False, separators=(",", ":"))
    assert problems(out) == [] and errors(out, "openai-responses") == []
    # fixing again changes nothing
    assert fix(out)[0] == out


def test_parallel_calls_each_get_their_output_after_their_own_line():
    lines = [
        meta(),
        user("2025-11-20T10:00:01.000Z", "two things"),
        call("2025-11-20T10:00:02.000Z", "a"),
        call("2025-11-20T10:00:02.100Z", "b"),
        output("2025-11-20T10:00:03.000Z", "b"),
        event("2025-11-20T10:00:03.500Z"),
        user("2025-11-20T10:00:04.000Z", "next"),
    ]
    out, _ = fix(rollout(*lines))
    written = out.decode().split("\n")
    assert written[2] == lines[2]
    assert json.loads(written[3])["payload"]["call_id"] == "a"
    assert json.loads(written[3])["timestamp"] == "2025-11-20T10:00:02.000Z"
    assert written[4:8] == lines[3:7]
    s = load_bytes(out, path="r.jsonl")
    assert [f for f in analyze(s).findings if f.severity == "error"] == []


def test_custom_tool_call_gets_a_custom_tool_call_output():
    data = rollout(
        meta(),
        user("2025-11-20T10:00:01.000Z", "patch"),
        line(
            "2025-11-20T10:00:02.000Z",
            "response_item",
            {
                "type": "custom_tool_call",
                "status": "completed",
                "call_id": "p1",
                "name": "apply_patch",
                "input": "*** Begin Patch",
            },
        ),
        user("2025-11-20T10:00:40.000Z", "stop"),
    )
    out, _ = fix(data)
    new = json.loads(out.decode().split("\n")[3])
    assert new["payload"]["type"] == "custom_tool_call_output"
    assert new["payload"]["call_id"] == "p1"


def test_orphan_output_line_is_dropped_and_nothing_else_changes():
    lines = [
        meta(),
        user("2025-11-20T10:00:01.000Z", "run"),
        call("2025-11-20T10:00:02.000Z", "c1"),
        output("2025-11-20T10:00:03.000Z", "c1"),
        event("2025-11-20T10:00:03.100Z"),
        user("2025-11-20T10:00:04.000Z", "and?"),
        output("2025-11-20T10:00:05.000Z", "ghost"),
        say("2025-11-20T10:00:06.000Z", "done"),
    ]
    data = rollout(*lines)
    assert problems(data) == [("orphan-tool-result", "warning")]
    assert [f.code for f in errors(data, "openai-responses")] == ["orphan-tool-result"]
    out, applied = fix(data)
    assert out == rollout(*(lines[:6] + lines[7:]))
    assert [f.code for f in applied] == ["orphan-tool-result"]


def test_duplicate_output_keeps_the_real_one():
    lines = [
        meta(),
        user("2025-11-20T10:00:01.000Z", "run"),
        call("2025-11-20T10:00:02.000Z", "c1"),
        output("2025-11-20T10:00:03.000Z", "c1", "aborted"),
        output("2025-11-20T10:00:03.500Z", "c1", "real output"),
        say("2025-11-20T10:00:06.000Z", "done"),
    ]
    data = rollout(*lines)
    assert [f.code for f in errors(data)] == ["duplicate-tool-result"]
    out, _ = fix(data)
    assert errors(out) == []
    kept = [json.loads(x) for x in out.decode().split("\n") if '"function_call_output"' in x]
    assert len(kept) == 1


def test_duplicate_call_id_is_renamed_on_the_later_call_and_its_output_only():
    lines = [
        meta(),
        user("2025-11-20T10:00:01.000Z", "run"),
        call("2025-11-20T10:00:02.000Z", "c1"),
        output("2025-11-20T10:00:03.000Z", "c1"),
        user("2025-11-20T10:00:04.000Z", "again"),
        call("2025-11-20T10:00:05.000Z", "c1"),
        output("2025-11-20T10:00:06.000Z", "c1", "second"),
        say("2025-11-20T10:00:07.000Z", "done"),
    ]
    data = rollout(*lines)
    assert "duplicate-tool-use-id" in [f.code for f in errors(data)]
    out, _ = fix(data)
    written = out.decode().split("\n")
    assert written[:5] == lines[:5] and written[7] == lines[7]
    new_call, new_out = json.loads(written[5]), json.loads(written[6])
    new_id = new_call["payload"]["call_id"]
    assert new_id != "c1" and new_out["payload"]["call_id"] == new_id
    # only the call_id changed on those lines
    assert written[5] == lines[5].replace('"c1"', json.dumps(new_id))
    assert errors(out) == []


def test_output_under_an_unknown_id_is_never_given_to_another_call():
    # Codex call ids are unique per call: "c1-typo" is not c1 under a wrong id. Codex drops
    # the stray output and answers c1 with "aborted"; histview does the same in the file.
    lines = [
        meta(),
        user("2025-11-20T10:00:01.000Z", "run"),
        call("2025-11-20T10:00:02.000Z", "c1"),
        output("2025-11-20T10:00:03.000Z", "c1-typo"),
        say("2025-11-20T10:00:06.000Z", "done"),
    ]
    data = rollout(*lines)
    assert problems(data) == [("orphan-tool-use", "warning"), ("orphan-tool-result", "warning")]
    out, _ = fix(data)
    written = out.decode().split("\n")
    assert written[:3] == lines[:3] and written[4] == lines[4]
    assert json.loads(written[3])["payload"] == {
        "type": "function_call_output",
        "call_id": "c1",
        "output": SYNTHETIC_RESULT_TEXT,
    }
    assert problems(out) == []


def test_codex_normalize_mixed_inserts_and_removals_shape():
    # The shape of Codex's own test `normalize_mixed_inserts_and_removals`
    # (codex-rs/core/src/context_manager/history_tests.rs): calls c1, t1 (custom tool) and
    # s1 (local shell) without outputs, and a stray output of c2. Codex answers the three
    # calls with "aborted" and drops c2's output; nothing is remapped.
    lines = [
        meta(),
        user("2025-11-20T10:00:01.000Z", "go"),
        call("2025-11-20T10:00:02.000Z", "c1"),
        output("2025-11-20T10:00:02.500Z", "c2"),
        line(
            "2025-11-20T10:00:03.000Z",
            "response_item",
            {"type": "custom_tool_call", "call_id": "t1", "name": "tool", "input": "{}"},
        ),
        line(
            "2025-11-20T10:00:03.100Z",
            "response_item",
            {
                "type": "local_shell_call",
                "call_id": "s1",
                "status": "completed",
                "action": {"type": "exec", "command": ["echo"]},
            },
        ),
    ]
    data = rollout(*lines)
    found = analyze(load_bytes(data, path="r.jsonl")).findings
    assert [(f.code, f.tool_use_id, f.severity) for f in found] == [
        ("orphan-tool-use", "c1", "warning"),
        ("orphan-tool-result", "c2", "warning"),
        ("pending-tool-use", "t1", "warning"),
        ("pending-tool-use", "s1", "warning"),
    ]
    out, _ = fix(data)
    items = [json.loads(x)["payload"] for x in out.decode().splitlines()[2:]]
    assert [(p["type"], p["call_id"]) for p in items] == [
        ("function_call", "c1"),
        ("function_call_output", "c1"),
        ("custom_tool_call", "t1"),
        ("custom_tool_call_output", "t1"),
        ("local_shell_call", "s1"),
        ("function_call_output", "s1"),
    ]
    assert problems(out) == [] and errors(out, "openai-responses") == []


def test_pending_call_at_the_end_is_answered_right_after_the_call():
    data = rollout(
        meta(), user("2025-11-20T10:00:01.000Z", "run"), call("2025-11-20T10:00:02.000Z", "c1")
    )
    s = load_bytes(data, path="r.jsonl")
    found = analyze(s).findings
    assert [(f.code, f.severity, f.source.to_json()) for f in found] == [
        ("pending-tool-use", "warning", {"line": 3})
    ]
    assert found[0].client_repair is not None and '"aborted"' in found[0].client_repair
    # Responses refuses a trailing call without an output
    assert [(f.code, f.rule) for f in analyze(s, "openai-responses").findings] == [
        ("pending-tool-use", "openai-responses/function-call-needs-output")
    ]
    assert analyze(s, "openai-responses").findings[0].severity == "error"
    out, _ = fix(data)
    assert json.loads(out.decode().split("\n")[3])["payload"]["call_id"] == "c1"
    # `none` leaves the call for the agent
    assert fix(data, Choices(by_code={"pending-tool-use": "none"}))[0] == data


def test_orphan_output_turned_into_text_becomes_a_user_message_item():
    lines = [
        meta(),
        user("2025-11-20T10:00:01.000Z", "hi"),
        output("2025-11-20T10:00:02.000Z", "ghost", "the old output"),
        say("2025-11-20T10:00:06.000Z", "done"),
    ]
    out, _ = fix(rollout(*lines), Choices(by_code={"orphan-tool-result": "to-text"}))
    written = out.decode().split("\n")
    assert written[:2] == lines[:2] and written[3] == lines[3]
    item = json.loads(written[2])["payload"]
    assert item["type"] == "message" and item["role"] == "user"
    assert "the old output" in item["content"][0]["text"]
    assert item["content"][0]["type"] == "input_text"
    assert errors(out) == []


def test_empty_text_part_is_dropped_from_its_message_item():
    lines = [
        meta(),
        line(
            "2025-11-20T10:00:01.000Z",
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "hi"},
                    {"type": "input_text", "text": "  "},
                ],
            },
        ),
        say("2025-11-20T10:00:02.000Z", "yo"),
        user("2025-11-20T10:00:03.000Z", "more"),
    ]
    s = load_bytes(rollout(*lines), path="r.jsonl")
    fixed, _ = apply_all(s, Choices(by_code={"empty-content": "drop-empty"}))
    written = fixed.export_bytes().decode().split("\n")
    assert json.loads(written[1])["payload"]["content"] == [{"type": "input_text", "text": "hi"}]
    assert written[2:4] == lines[2:4]


def test_user_message_between_call_and_output_is_misplaced_and_fixed_by_order():
    lines = [
        meta(),
        user("2025-11-20T10:00:01.000Z", "run"),
        call("2025-11-20T10:00:02.000Z", "c1"),
        user("2025-11-20T10:00:02.500Z", "also check b"),
        output("2025-11-20T10:00:03.000Z", "c1"),
        say("2025-11-20T10:00:06.000Z", "done"),
    ]
    data = rollout(*lines)
    assert [(f.code, f.source.to_json()) for f in errors(data)] == [
        ("misplaced-tool-result", {"line": 5})
    ]
    out, _ = fix(data)
    assert out == rollout(lines[0], lines[1], lines[2], lines[4], lines[3], lines[5])
    assert errors(out) == []


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b""])
def test_one_line_rollout_is_codex_and_round_trips(end):
    data = meta().encode() + end
    s = load_bytes(data, path="r.jsonl")
    assert s.format == "codex" and s.messages == []
    assert s.export_bytes() == data


def test_line_weaving_reproduces_the_real_rollout_when_every_message_is_rebuilt():
    # new Message objects with the same blocks take the line-by-line path, not the fast one
    for path in real_rollouts():
        s = load_session(str(path))
        rebuilt = s.copy_with([m.with_blocks(m.blocks) for m in s.messages])
        assert rebuilt.export_bytes() == path.read_bytes()


def test_a_message_item_without_content_parts_keeps_its_line_when_another_line_is_fixed():
    """`content: []` gives the item no block; it is still written where it was (it used to
    vanish from the output whenever anything else in the file was fixed)."""
    empty = line(
        "2025-11-20T10:00:01.500Z",
        "response_item",
        {"type": "message", "role": "user", "content": []},
    )
    data = rollout(
        meta(),
        user("2025-11-20T10:00:01.000Z", "list files"),
        empty,
        call("2025-11-20T10:00:02.000Z", "c1"),
        user("2025-11-20T10:00:09.000Z", "and?"),
    )
    out, applied = fix(data)
    assert [f.code for f in applied] == ["orphan-tool-use"]
    lines = out.decode().splitlines()
    assert lines[2] == empty
    assert '"function_call_output"' in lines[4]


def test_a_synthetic_output_follows_the_rest_of_its_calls_turn():
    """A reasoning item after the calls belongs to the same turn: the new output goes after
    it, so the file reads back as the repaired session (written right after its call, the
    turn was split and the other call's output became misplaced; found by the fuzzer). Codex
    0.169.0 resumes such a file and sends call, reasoning, then this output as the call's."""
    thinking = line(
        "2025-11-20T10:00:02.200Z",
        "response_item",
        {"type": "reasoning", "summary": [], "encrypted_content": "x"},
    )
    lines = [
        meta(),
        user("2025-11-20T10:00:01.000Z", "two things"),
        call("2025-11-20T10:00:02.000Z", "a"),
        call("2025-11-20T10:00:02.100Z", "b"),
        thinking,
        output("2025-11-20T10:00:03.000Z", "a"),
        user("2025-11-20T10:00:04.000Z", "next"),
    ]
    out, applied = fix(rollout(*lines))
    assert [f.code for f in applied] == ["orphan-tool-use"]
    written = out.decode().split("\n")
    assert written[2:5] == lines[2:5]
    assert json.loads(written[5])["payload"] == {
        "type": "function_call_output",
        "call_id": "b",
        "output": SYNTHETIC_RESULT_TEXT,
    }
    assert written[6:8] == lines[5:7]
    assert errors(out) == []
    assert fix(out)[0] == out


def test_every_line_a_fix_drops_or_rewrites_is_in_the_report_whole():
    """A dropped output's line keeps its own timestamp in the report (only the block was
    there: the timestamp was lost; found by the fuzzer); a line rewritten with a new call id
    is there as read."""
    orphan = output("2025-11-20T10:00:05.123Z", "nobody")
    data = rollout(
        meta(),
        user("2025-11-20T10:00:01.000Z", "ls twice"),
        call("2025-11-20T10:00:02.000Z", "c1"),
        output("2025-11-20T10:00:03.000Z", "c1"),
        call("2025-11-20T10:00:04.000Z", "c1"),
        output("2025-11-20T10:00:04.500Z", "c1"),
        orphan,
        user("2025-11-20T10:00:09.000Z", "and?"),
    )
    s = load_bytes(data, path="rollout.jsonl")
    fixed, applied = apply_all(s)
    assert sorted(f.code for f in applied) == ["duplicate-tool-use-id", "orphan-tool-result"]
    kept = {(d["line"], d["outcome"]): d["record"] for d in fixed.export().dropped_records}
    assert kept[(7, "deleted")] == json.loads(orphan)
    assert kept[(5, "rewritten")]["payload"]["call_id"] == "c1"
    assert set(kept) == {(5, "rewritten"), (6, "rewritten"), (7, "deleted")}


@pytest.mark.parametrize("after", [[], ["assistant"]])
def test_an_empty_message_item_that_gets_a_result_is_written_as_its_output(after):
    """The synthetic output for a call goes into the empty user message item after it;
    written back, the empty item stayed after the output and a second fix dropped it (found
    by the fuzzer). It is the output line alone; the report keeps the empty item as read."""
    empty = line(
        "2025-11-20T10:00:03.000Z",
        "response_item",
        {"type": "message", "role": "user", "content": []},
    )
    reply = line(
        "2025-11-20T10:00:09.000Z",
        "response_item",
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "hm"}],
        },
    )
    data = rollout(
        meta(),
        user("2025-11-20T10:00:01.000Z", "go"),
        call("2025-11-20T10:00:02.000Z", "c1"),
        empty,
        *([reply] if after else []),
    )
    fixed_session, applied = apply_all(load_bytes(data, path="r.jsonl"))
    assert [f.code for f in applied] == ["orphan-tool-use"]
    written = fixed_session.export()
    assert empty.encode() not in written.data
    assert written.dropped_records == [
        {"line": 4, "outcome": "deleted", "record": json.loads(empty)}
    ]
    assert fix(written.data)[0] == written.data
