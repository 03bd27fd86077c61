"""The Codex, opencode and OpenAI chat samples, through the command line a user runs:
`check` reports the incident where it is, `fix -o` writes a file whose repair is in place,
that file checks clean, and everything the fix did not need to touch is as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repair.formats import load_session
from repair.model import SYNTHETIC_RESULT_TEXT
from tests.command import run
from tests.paths import SAMPLES

CODEX = SAMPLES / "codex_missing_output.jsonl"
OPENCODE = SAMPLES / "opencode_stuck_running.json"
OPENAI = SAMPLES / "openai_chat_user_between_calls.json"


def check_json(path: Path) -> dict:
    code, out, _ = run("check", "--json", str(path))
    obj = json.loads(out.splitlines()[0])
    obj["exit"] = code
    return obj


def fix_to(src: Path, tmp_path: Path) -> Path:
    out = tmp_path / f"fixed{src.suffix}"
    code, said, err = run("fix", str(src), "-o", str(out))
    assert code == 0, said + err
    return out


@pytest.mark.parametrize(
    ("path", "fmt", "target", "exit", "expected"),
    [
        # Codex and opencode answer the interrupted call themselves when they resume: a
        # warning saying what they send instead
        (
            CODEX,
            "codex",
            "codex",
            0,
            [("orphan-tool-use", "warning", "call_H3dKf8sJ0eWq5RtY2uIo6PaL", {"line": 14})],
        ),
        (
            OPENCODE,
            "opencode",
            "opencode",
            0,
            [
                (
                    "orphan-tool-use",
                    "warning",
                    "toolu_01Hc4NwPz8QeR2tYm6KvB9Jx",
                    {"path": "/messages/2/parts/2"},
                )
            ],
        ),
        (
            OPENAI,
            "openai-chat",
            "openai-chat",
            1,
            [
                ("consecutive-same-role", "info", None, {"path": "/messages/4"}),
                (
                    "misplaced-tool-result",
                    "error",
                    "call_8fKq2LmN4pRs6TuV0wXy1Za3",
                    {"path": "/messages/4"},
                ),
                (
                    "misplaced-tool-result",
                    "error",
                    "call_3bCd5EfG7hIj9KlM1nOp2QrS",
                    {"path": "/messages/5"},
                ),
            ],
        ),
    ],
)
def test_check_reports_the_incident_where_it_is(path, fmt, target, exit, expected):
    obj = check_json(path)
    assert (obj["format"], obj["target"], obj["exit"]) == (fmt, target, exit)
    got = [(f["code"], f["severity"], f["tool_use_id"], f["source"]) for f in obj["findings"]]
    assert got == expected
    for f in obj["findings"]:
        assert (f["client_repair"] is not None) == (f["severity"] == "warning")


@pytest.mark.parametrize(
    ("path", "provider"), [(CODEX, "openai-responses"), (OPENCODE, "anthropic")]
)
def test_the_provider_target_still_judges_the_raw_history(path, provider):
    code, out, _ = run("check", "--json", "--target", provider, str(path))
    obj = json.loads(out.splitlines()[0])
    assert code == 1 and obj["target"] == provider
    assert [(f["code"], f["severity"], f["client_repair"]) for f in obj["findings"]] == [
        ("orphan-tool-use", "error", None)
    ]


@pytest.mark.parametrize("path", [CODEX, OPENCODE, OPENAI])
def test_samples_round_trip_byte_for_byte(path):
    assert load_session(str(path)).export_bytes() == path.read_bytes()


@pytest.mark.parametrize("path", [CODEX, OPENCODE, OPENAI])
def test_fixed_file_checks_clean_and_a_second_fix_changes_nothing(path, tmp_path):
    out = fix_to(path, tmp_path)
    obj = check_json(out)
    assert obj["exit"] == 0
    assert [f for f in obj["findings"] if f["severity"] != "info"] == []
    again = tmp_path / "again"
    again.mkdir()
    code, _, _ = run("fix", str(out), "-o", str(again / out.name))
    assert code == 0
    assert (again / out.name).read_bytes() == out.read_bytes()


def test_codex_fix_inserts_one_output_line_right_after_the_call(tmp_path):
    before = CODEX.read_bytes().decode().split("\n")
    after = fix_to(CODEX, tmp_path).read_bytes().decode().split("\n")
    assert len(after) == len(before) + 1
    assert after[:14] == before[:14] and after[15:] == before[14:]
    call = json.loads(before[13])
    new = json.loads(after[14])
    assert new == {
        "timestamp": call["timestamp"],
        "type": "response_item",
        "payload": {
            "type": "function_call_output",
            "call_id": call["payload"]["call_id"],
            "output": SYNTHETIC_RESULT_TEXT,
        },
    }


def test_opencode_fix_sets_the_stuck_part_to_error_and_touches_nothing_else(tmp_path):
    before = json.loads(OPENCODE.read_bytes())
    written = fix_to(OPENCODE, tmp_path).read_bytes()
    after = json.loads(written)
    state = after["messages"][2]["parts"][2]["state"]
    old = before["messages"][2]["parts"][2]["state"]
    assert old["status"] == "running" and "end" not in old["time"]
    assert state["status"] == "error"
    assert state["error"] == SYNTHETIC_RESULT_TEXT
    assert state["input"] == old["input"] and state["metadata"] == old["metadata"]
    assert state["time"]["start"] == old["time"]["start"] <= state["time"]["end"]
    before["messages"][2]["parts"][2]["state"] = state
    assert after == before
    assert written.endswith(b"\n") and written.startswith(b'{\n  "info": {')


def test_openai_fix_puts_the_tool_messages_right_after_the_assistant(tmp_path):
    before = json.loads(OPENAI.read_bytes())
    after = json.loads(fix_to(OPENAI, tmp_path).read_bytes())
    roles = [m["role"] for m in after["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "tool", "user", "assistant"]
    m = before["messages"]
    assert after["messages"] == [m[0], m[1], m[2], m[4], m[5], m[3], m[6]]
    assert after["tools"] == before["tools"] and after["model"] == before["model"]
