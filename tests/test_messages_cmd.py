"""`histview messages`: the conversation as the provider receives it, numbered messages.N like
its errors; records not sent shown as a count; `--json` the request list itself."""

from __future__ import annotations

import json
from pathlib import Path

from repair.formats import load_session
from repair.wire import request_body
from tui.cli import main

# A Roo history whose first two messages were condensed away: they are shown, not sent.
CONDENSED = [
    {"role": "user", "content": "old question", "ts": 1, "condenseParent": "c-1"},
    {"role": "assistant", "content": "old answer", "ts": 2, "condenseParent": "c-1"},
    {
        "role": "user",
        "content": [{"type": "text", "text": "summary of the above"}],
        "ts": 3,
        "isSummary": True,
        "condenseId": "c-1",
    },
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Running it."},
            {"type": "tool_use", "id": "toolu_1", "name": "execute_command", "input": {}},
        ],
        "ts": 4,
    },
    {"role": "user", "content": [{"type": "text", "text": "go on"}], "ts": 5},
    {"role": "assistant", "content": "done", "ts": 6},
]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_numbers_what_is_sent_and_counts_what_is_not(capsys, tmp_path):
    path = tmp_path / "api_conversation_history.json"
    path.write_text(json.dumps(CONDENSED))
    code, out, _ = run(capsys, "messages", str(path))
    assert code == 0
    lines = out.splitlines()
    assert "4 messages sent to Anthropic" in lines[0]
    assert "2 messages of the file not sent" in lines[0]
    # the condensed pair is a count where it was, then numbering starts at the summary
    assert lines[1].startswith("   (2 messages not sent here: ")
    assert lines[2].startswith("messages.0 user") and "summary of the above" in lines[3]
    heads = [ln.split()[0] for ln in lines if ln.startswith("messages.")]
    assert heads == ["messages.0", "messages.1", "messages.2", "messages.3"]
    # the finding is listed under the message the provider names, with check's number
    _, check_out, _ = run(capsys, "check", str(path), "--json")
    (finding,) = json.loads(check_out)["findings"]
    assert finding["code"] == "orphan-tool-use" and finding["message_index"] == 1
    at = lines.index(next(ln for ln in lines if ln.startswith("messages.1 ")))
    assert lines[at + 3].startswith("  ! error orphan-tool-use content.1: ")


def test_json_is_the_anthropic_messages_list(capsys, tmp_path):
    path = tmp_path / "api_conversation_history.json"
    path.write_text(json.dumps(CONDENSED))
    code, out, _ = run(capsys, "messages", str(path), "--json")
    assert code == 0
    body = json.loads(out)
    assert list(body) == ["messages"]
    assert body["messages"] == [
        {k: v for k, v in m.items() if k in ("role", "content")} for m in CONDENSED[2:]
    ]
    assert body == request_body(load_session(str(path)))


def test_hostile_text_is_shown_safely(capsys):
    sample = Path(__file__).resolve().parents[1] / "sample_sessions" / "hostile_markup.json"
    code, out, _ = run(capsys, "messages", str(sample))
    assert code == 0
    assert "\x1b" not in out and "\u202e" not in out


def test_unreadable_file_is_one_line_exit_2(capsys, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{not json")
    code, out, err = run(capsys, "messages", str(path))
    assert code == 2 and out == ""
    assert err.startswith(f"histview: {path}") and len(err.splitlines()) == 1
