"""`histview messages`: the conversation as the provider receives it, numbered messages.N like
its errors; records not sent shown as a count; `--json` the request list itself."""

from __future__ import annotations

import json

from repair.formats import load_session
from repair.wire import request_body
from tests.command import run
from tests.paths import CLIENT_FIXTURES, SAMPLES

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


def test_numbers_what_is_sent_and_counts_what_is_not(tmp_path):
    path = tmp_path / "api_conversation_history.json"
    path.write_text(json.dumps(CONDENSED))
    code, out, _ = run("messages", str(path))
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
    _, check_out, _ = run("check", str(path), "--json")
    (finding,) = json.loads(check_out)["findings"]
    assert finding["code"] == "orphan-tool-use" and finding["message_index"] == 1
    at = lines.index(next(ln for ln in lines if ln.startswith("messages.1 ")))
    assert lines[at + 3].startswith("  ! error orphan-tool-use content.1: ")


def test_json_is_the_anthropic_messages_list(tmp_path):
    path = tmp_path / "api_conversation_history.json"
    path.write_text(json.dumps(CONDENSED))
    code, out, _ = run("messages", str(path), "--json")
    assert code == 0
    body = json.loads(out)
    assert list(body) == ["messages"]
    assert body["messages"] == [
        {k: v for k, v in m.items() if k in ("role", "content")} for m in CONDENSED[2:]
    ]
    assert body == request_body(load_session(str(path)))


def test_hostile_text_is_shown_safely():
    sample = SAMPLES / "hostile_markup.json"
    code, out, _ = run("messages", str(sample))
    assert code == 0
    assert "\x1b" not in out and "\u202e" not in out


def test_unreadable_file_is_one_line_exit_2(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{not json")
    code, out, err = run("messages", str(path))
    assert code == 2 and out == ""
    assert err.startswith(f"histview: {path}") and len(err.splitlines()) == 1


BROKEN_CC = CLIENT_FIXTURES / "claude" / "broken"


def test_claude_code_file_is_shown_as_the_client_sends_it():
    """The late lint result: Claude Code 2.1.197 answers the call with its placeholder and
    leaves the real result out (measured: tests/fixtures/clients/claude/)."""
    path = BROKEN_CC / "misplaced-tool-result.jsonl"
    code, out, _ = run("messages", str(path))
    assert code == 0
    lines = out.splitlines()
    assert "8 messages sent to Anthropic API (1P, Vertex) by Claude Code 2.1.197" in lines[0]
    at = lines.index("messages.2 user  (line 4)")
    assert lines[at + 1] == (
        "  + [0] tool_result toolu_01BbbbBashLint000000002 (error) "
        '"[Tool result missing due to internal error]"  (added by Claude Code 2.1.197)'
    )
    assert lines[at + 2].startswith("    [1] tool_result toolu_01AaaaBashTests00000001 ")
    left = next(ln for ln in lines if ln.startswith("    - tool_result"))
    assert "lint clean (late)" in left and "(left out by Claude Code 2.1.197: " in left
    code, out, _ = run("messages", str(path), "--json")
    sent = json.loads(out)["messages"]
    assert sent[2]["content"][0]["content"] == "[Tool result missing due to internal error]"
    # the late result left out of the prompt's message (a list: two records were merged)
    assert sent[4]["content"] == [{"type": "text", "text": "now show me the config"}]


def test_a_call_the_client_drops_moves_the_numbers_as_the_client_does(tmp_path):
    """Claude Code drops an unanswered call's record when it resumes; a message of only that
    call goes, and the user messages around it merge: messages.N after it are the client's
    numbers, in check, messages and explain."""

    def rec(n, parent, kind, content, **extra):
        r = {"parentUuid": f"u{parent}" if parent else None, "isSidechain": False}
        r.update(sessionId="s", type=kind, uuid=f"u{n}", timestamp=f"2026-01-01T00:00:0{n}Z")
        r["message"] = {"role": kind, "content": content, **extra}
        return r

    use = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}
    recs = [
        rec(1, None, "user", "run it"),
        rec(2, 1, "assistant", [use], id="msg_1"),
        rec(3, 2, "user", "never mind, say hi"),
        rec(4, 3, "assistant", [{"type": "text", "text": "hi"}], id="msg_2"),
        rec(5, 4, "assistant", [{"type": "text", "text": ""}], id="msg_2"),  # sent: refused
        rec(6, 5, "user", "thanks"),
        rec(7, 6, "assistant", [{"type": "text", "text": "bye"}], id="msg_3"),
    ]
    one = tmp_path / "s.jsonl"
    one.write_text("".join(json.dumps(r) + "\n" for r in recs))
    code, out, _ = run("check", str(one), "--json")
    found = {f["code"]: f for f in json.loads(out)["findings"]}
    assert found["orphan-tool-use"]["severity"] == "warning"
    assert found["orphan-tool-use"]["message_index"] is None  # not sent at all
    # the response "hi" + "" is the third message of the file, the second Claude Code sends
    assert found["empty-content"]["severity"] == "error"
    assert found["empty-content"]["message_index"] == 1
    _, listing, _ = run("messages", str(one))
    assert "(1 message not sent here: left out by Claude Code 2.1.197" in listing
    heads = [ln.split()[0] for ln in listing.splitlines() if ln.startswith("messages.")]
    assert heads == ["messages.0", "messages.1", "messages.2", "messages.3"]
    body = json.loads(run("messages", str(one), "--json")[1])["messages"]
    assert [m["role"] for m in body] == ["user", "assistant", "user", "assistant"]
    assert body[0]["content"] == [
        {"type": "text", "text": "run it\n"},
        {"type": "text", "text": "never mind, say hi"},
    ]
    # explain maps messages.N through the same numbering
    code, out, _ = run("explain", "messages.1: text content blocks must be non-empty", str(one))
    assert "(claude-code, target claude-code, 4 messages sent)" in out
    assert "messages.1 is messages[3] in the file" in out
    assert "error empty-content" in out


def test_codex_compacted_items_of_no_content_are_listed_where_codex_sends_them():
    """A compacted line's history holds an assistant item of `content: []` inside and a user
    one last: Codex CLI 0.169 sends each as it is, where it is (measured:
    tests/fixtures/clients/codex/compacted_empty_item.sent.json), listed as a line's are."""
    path = CLIENT_FIXTURES / "codex" / "compacted_empty_item.jsonl"
    code, out, _ = run("messages", "--target", "codex", str(path))
    assert code == 0
    lines = out.splitlines()
    assert "7 messages sent to OpenAI Responses by Codex CLI 0.169" in lines[0]
    heads = [ln for ln in lines if ln.startswith("messages.")]
    assert heads == [
        "messages.0 user  (line 16)",
        "messages.1 assistant",
        "messages.2 assistant  (line 16)",
        "messages.3 user",
        "messages.4 user  (line 17)",
        "messages.5 reasoning  (line 20)",
        "messages.6 assistant  (line 21)",
    ]
    for empty in ("messages.1 assistant", "messages.3 user"):
        assert lines[lines.index(empty) + 1] == "    [0] message (no content)"
    code, out, _ = run("messages", "--target", "codex", str(path), "--json")
    sent = json.loads(out)["input"]  # (the Responses request's items)
    assert sent[1] == {"type": "message", "role": "assistant", "content": []}
    assert sent[3] == {"type": "message", "role": "user", "content": []}
