"""Format detection is stable: an OpenAI chat body is openai-chat, `fix` reads its output
back as the format it wrote, a second `fix` changes nothing, and Roo's empty task is an empty
session."""

from __future__ import annotations

import json

import pytest

from repair.formats import load_session
from repair.workbench import Workbench
from tests.command import run
from tests.paths import SAMPLES


def test_openai_body_with_a_system_message_and_no_tool_calls_is_openai_chat(tmp_path):
    path = tmp_path / "request.json"
    path.write_text(
        json.dumps(
            {
                "model": "gpt-4o",
                "max_tokens": 200,
                "messages": [
                    {"role": "system", "content": "You are terse."},
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": "hello"},
                ],
            }
        )
    )
    code, out, err = run("check", str(path))
    assert (code, err) == (0, "")
    assert "format openai-chat" in out and "malformed" not in out


def test_anthropic_body_with_a_stray_system_message_stays_anthropic(tmp_path):
    """Only Anthropic blocks next to it keep a system entry in an Anthropic reading."""
    doc = {
        "model": "claude",
        "messages": [
            {"role": "system", "content": "x"},
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]},
        ],
    }
    path = tmp_path / "body.json"
    path.write_text(json.dumps(doc))
    assert load_session(str(path)).format == "anthropic"


def test_fix_that_removes_the_last_tool_message_reads_its_output_as_openai_chat(tmp_path):
    doc = [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": "It is sunny."},
        {"role": "tool", "tool_call_id": "call_gone", "content": "{}"},
        {"role": "user", "content": "thanks"},
    ]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(doc, indent=2))
    assert load_session(str(path)).format == "openai-chat"
    out = tmp_path / "fixed.json"
    code, stdout, err = run("fix", str(path), "-o", str(out))
    assert err == "" and code == 0, stdout
    assert b'"tool"' not in out.read_bytes()
    assert "now 0 errors" in stdout
    # a plain user/assistant list: --format openai-chat reads it, and fixing again is a no-op
    assert load_session(str(out), format="openai-chat").format == "openai-chat"
    again = tmp_path / "again.json"
    code, stdout, err = run("fix", str(out), "-o", str(again))
    assert (code, err) == (0, "") and "(0 fixes" in stdout
    assert again.read_bytes() == out.read_bytes()


@pytest.mark.parametrize("sample", sorted(p.name for p in SAMPLES.glob("*.json*")))
def test_a_second_fix_changes_nothing(tmp_path, sample):
    src = SAMPLES / sample
    out = tmp_path / f"fixed{src.suffix}"
    code, _, err = run("fix", str(src), "-o", str(out), "--strategy", "malformed=drop")
    assert err == "" and code in (0, 1)
    first = load_session(str(out))
    assert first.format == load_session(str(src)).format
    wb = Workbench(first)
    assert wb.apply_all() is None, [f.code for f in wb.applied]
    out2 = tmp_path / f"again{src.suffix}"
    code2, _, err2 = run("fix", str(out), "-o", str(out2))
    assert err2 == "" and code2 == code
    assert out2.read_bytes() == out.read_bytes()


def test_an_empty_roo_task_is_an_empty_session(tmp_path):
    task = tmp_path / "tasks" / "1769811002563"
    task.mkdir(parents=True)
    (task / "api_conversation_history.json").write_text("[]")
    session = load_session(str(task))
    assert (session.format, session.messages) == ("roo", [])
    code, out, err = run("check", str(task))
    assert (code, err) == (0, "") and "no problems (0 messages, format roo" in out


def test_an_empty_list_under_another_name_is_still_unknown(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text("[]")
    code, _, err = run("check", str(path))
    assert code == 2 and "unknown format" in err


def test_a_claude_code_file_left_with_one_metadata_line_reads_back(tmp_path):
    """Dropping the only (broken) record leaves one file-history-snapshot line: one JSON
    document, still a Claude Code transcript (the read-back used to refuse it after writing)."""
    lines = (SAMPLES / "claude_code_parallel_interrupted.jsonl").read_text().splitlines()
    path = tmp_path / "s.jsonl"
    path.write_text(lines[0] + "\n" + lines[1][:150] + "\n")
    out = tmp_path / "fixed.jsonl"
    code, stdout, err = run("fix", str(path), "-o", str(out), "--strategy", "malformed=drop")
    assert (code, err) == (0, ""), stdout
    assert out.read_text() == lines[0] + "\n"
    code, stdout, err = run("check", str(out))
    assert (code, err) == (0, "") and "format claude-code" in stdout


def test_fix_reads_its_output_back_as_written_even_when_too_bare_to_detect(tmp_path):
    """The only record left has no parentUuid: detection would not call it Claude Code, but
    fix knows what it wrote (it used to exit 2 after writing both files)."""
    lines = (SAMPLES / "claude_code_parallel_interrupted.jsonl").read_text().splitlines()
    first, second = json.loads(lines[1]), json.loads(lines[2])
    first["parentUuid"] = {"odd": True}  # malformed: dropped by the fix
    del second["parentUuid"]
    second["parentUuid_"] = None
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    out = tmp_path / "fixed.jsonl"
    code, stdout, err = run("fix", str(path), "-o", str(out), "--strategy", "malformed=drop")
    assert err == "" and code in (0, 1), stdout
    assert "wrote" in stdout and out.exists()
    assert load_session(str(out), format="claude-code", written=True).format == "claude-code"
