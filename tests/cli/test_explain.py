"""`histview explain`: every provider error text explain knows (the current, older and Responses
texts) is recognised, its numbers and ids pulled out, and with FILE mapped onto
the message that was sent and the findings behind it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repair import explain
from tests.command import run
from tests.paths import SAMPLES

# (text as the API answers it, rule id, messages.N, content.M, ids)
TEXTS = [
    ("messages.7: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01A, toolu_01B. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", "A1", 7, None, ["toolu_01A", "toolu_01B"]),
    ("messages.8.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01C. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", "A2", 8, 1, ["toolu_01C"]),
    ("messages.8.content.2: each tool_use must have a single result. Found multiple `tool_result` blocks with id: toolu_01D", "A4", 8, 2, ["toolu_01D"]),
    ("messages.9.content.0: `tool_use` ids must be unique", "A5", 9, 0, []),
    ("tool_use ids must be unique", "A5", None, None, []),
    ("messages.1.content.1.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'", "A6", 1, 1, []),
    ("messages.0.content.0.tool_result.tool_use_id: Field required", "A6", 0, 0, []),
    ("messages.3: all messages must have non-empty content except for the optional final assistant message", "A8", 3, None, []),
    ("messages: text content blocks must be non-empty", "A8b", None, None, []),
    ("messages: text content blocks must contain non-whitespace text", "A8b", None, None, []),
    ("messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.", "A1-old", 2, None, []),
    ('messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row', "A9", None, None, []),
    ("Expected toolResult blocks at messages.4.content for the following Ids: tooluse_aB3-x", "B1", 4, None, ["tooluse_aB3-x"]),
    ("The number of toolResult blocks at messages.6.content exceeds the number of toolUse blocks of previous turn.", "B2", 6, None, []),
    ("The toolResult blocks at messages.6.content contain duplicate Ids: tooluse_x1", "B3", 6, None, ["tooluse_x1"]),
    ("The toolUse blocks at messages.5.content contain duplicate Ids: tooluse_x2", "B3-use", 5, None, ["tooluse_x2"]),
    ("A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.", "B5", None, None, []),
    ("The content field in the Message object at messages.3 is empty", "B6", 3, None, []),
    ("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_abc, call_def", "O1", None, None, ["call_abc", "call_def"]),
    ("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. (insufficient tool messages following tool_calls message)", "O1", None, None, []),
    ("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", "O2", None, None, []),
    ("messages with role 'tool' must be a response to a preceding message with 'tool_calls'", "O2", None, None, []),
    ("Invalid parameter: 'tool_call_id' of 'call_z9' not found in 'tool_calls' of previous message.", "O3", None, None, ["call_z9"]),
    ("Duplicate value for 'tool_call_id' of 'call_x'", "O4", None, None, ["call_x"]),
    ("Invalid parameter: Duplicate value for 'tool_call_id' of 'call_9', in messages[7] and messages[8].", "O4", 8, None, ["call_9"]),
    ("No tool output found for function call call_Q1.", "R1", None, None, ["call_Q1"]),
    ("No tool call found for function call output with call_id call_Q2.", "R2", None, None, ["call_Q2"]),
    ("Duplicate item found with id fc_123. Remove duplicate items from your input and try again.", "R4", None, None, ["fc_123"]),
    ("Item 'rs_1' of type 'reasoning' was provided without its required following item.", "R3", None, None, ["rs_1"]),
    ("API Error: 400 due to tool use concurrency issues. Run /rewind to recover the conversation.", "CC", None, None, []),
]  # fmt: skip


@pytest.mark.parametrize("text, rule, n, m, ids", TEXTS, ids=[t[1] for t in TEXTS])
def test_every_known_error_text_is_recognised_with_its_numbers_and_ids(text, rule, n, m, ids):
    (hit,) = explain.match(text)
    assert (hit.rule.id, hit.n, hit.m, hit.ids) == (rule, n, m, ids)


def test_rules_name_finding_codes_that_exist():
    from repair.codes import CODES

    for rule in explain.RULES:
        assert set(rule.codes) <= set(CODES), rule.id


def test_a_pasted_error_body_with_json_escaping_still_matches():
    body = (
        '400 {"type":"error","error":{"type":"invalid_request_error","message":"messages.33: '
        "`tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_vrtx_01KKMxh6V7Kx6g5tZbQBfQ9b. Each `tool_use` block must have a corresponding "
        '`tool_result` block in the next message."},"request_id":"req_vrtx_011CXDA6q3bAL2vMavcCemUc"}'
    )
    wrapped = json.dumps({"error": {"message": body}})  # escaped once more, as in a log file
    for text in (body, wrapped, body.replace(" Each", "\n     Each")):
        (hit,) = explain.match(text)
        assert (hit.rule.id, hit.n, hit.ids) == ("A1", 33, ["toolu_vrtx_01KKMxh6V7Kx6g5tZbQBfQ9b"])


def test_bedrock_but_found_separates_expected_and_found_ids():
    (hit,) = explain.match(
        "Expected toolResult blocks at messages.5.content for the following Ids: t1, t2, but found: t3"
    )
    assert (hit.rule.id, hit.n, hit.ids, hit.found) == ("B1", 5, ["t1", "t2"], ["t3"])


def test_a1_old_reports_the_missing_count():
    (hit,) = explain.match(
        "messages.2: Did not find 3 `tool_result` block(s) at the beginning of this message."
    )
    assert hit.count == 3


def test_two_errors_in_one_paste_are_both_explained():
    text = (
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: a1."
        " ... later: messages.5.content.0: `tool_use` ids must be unique"
    )
    assert [h.rule.id for h in explain.match(text)] == ["A1", "A5"]


# ---------------------------------------------------------------- the command


def write(path: Path, doc) -> str:
    path.write_text(json.dumps(doc, indent=1))
    return str(path)


def use(i: str) -> dict:
    return {"type": "tool_use", "id": i, "name": "Bash", "input": {"command": "ls"}}


def result(i: str, text: str = "ok") -> dict:
    return {"type": "tool_result", "tool_use_id": i, "content": text}


A1 = (
    "messages.{n}: `tool_use` ids were found without `tool_result` blocks immediately after: "
    "{ids}. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
)


def test_unknown_text_says_so_and_exits_1():
    code, out, _ = run("explain", "Error: the flux capacitor is out of plutonium")
    assert code == 1 and "does not know this error text" in out


def test_without_file_explains_the_rule_and_the_codes():
    code, out, _ = run("explain", A1.format(n=12, ids="toolu_01A"))
    assert code == 0
    assert "Anthropic error (rule A1)" in out
    assert "messages.12 (the assistant message with the tool calls); id toolu_01A" in out
    assert "orphan-tool-use" in out and "tool-result-not-first" in out
    assert "text block comes before the results" in out  # A1 also means A3


def test_messages_n_counts_only_sent_messages(tmp_path):
    """A Roo task whose early turns were condensed: the hidden messages are not sent, so the
    API's messages.3 is the file's messages[5]."""
    t = 1_760_000_000_000
    doc = [
        {"role": "user", "content": [{"type": "text", "text": "fix the build"}], "ts": t},
        {"role": "assistant", "content": [{"type": "text", "text": "old"}], "ts": t + 1, "condenseParent": "c1"},
        {"role": "user", "content": [{"type": "text", "text": "old too"}], "ts": t + 2, "condenseParent": "c1"},
        {"role": "assistant", "content": [{"type": "text", "text": "Summary: ..."}], "ts": t + 3, "isSummary": True, "condenseId": "c1"},
        {"role": "user", "content": [{"type": "text", "text": "go on"}], "ts": t + 4},
        {"role": "assistant", "content": [use("toolu_7")], "ts": t + 5},
        {"role": "user", "content": [{"type": "text", "text": "continue"}], "ts": t + 6},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "ts": t + 7},
    ]  # fmt: skip
    path = write(tmp_path / "api_conversation_history.json", doc)
    code, out, _ = run("explain", A1.format(n=3, ids="toolu_7"), path)
    assert code == 0
    assert "(roo, target anthropic, 6 messages sent)" in out
    assert "messages.3 is messages[5] in the file (2 hidden or malformed record(s)" in out
    assert f"  {path}:messages[5].content[0]: error orphan-tool-use tool_use toolu_7" in out
    assert f"Repair: histview fix {path} --only orphan-tool-use" in out


def test_malformed_records_are_not_counted_either(tmp_path):
    doc = [
        {"role": "user", "content": "hi"},
        {"role": "user", "content": 5},
        {"role": "assistant", "content": [use("toolu_1")]},
        {"role": "user", "content": "continue"},
    ]
    path = write(tmp_path / "s.json", doc)
    _, out, _ = run("explain", A1.format(n=1, ids="toolu_1"), path)
    assert "messages.1 is messages[2] in the file (1 hidden or malformed" in out
    assert "messages[2].content[0]: error orphan-tool-use" in out


def test_a1_caused_by_text_before_the_results_points_at_that(tmp_path):
    doc = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [use("toolu_1")]},
        {"role": "user", "content": [{"type": "text", "text": "note"}, result("toolu_1")]},
        {"role": "assistant", "content": "ok"},
    ]
    path = write(tmp_path / "s.json", doc)
    _, out, _ = run("explain", A1.format(n=1, ids="toolu_1"), path)
    assert f"{path}:messages[2].content[1]: error tool-result-not-first" in out
    assert "--only tool-result-not-first" in out


def test_a2_names_the_block_and_its_finding(tmp_path):
    doc = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "sure"},
        {"role": "user", "content": [result("toolu_9", "stale output")]},
    ]
    path = write(tmp_path / "s.json", doc)
    text = (
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
    )
    _, out, _ = run("explain", text, path)
    assert "content.0 is tool_result toolu_9 “stale output”" in out
    assert f"{path}:messages[2].content[0]: error orphan-tool-result" in out


def test_bedrock_error_is_judged_under_bedrock_rules(tmp_path):
    doc = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [use("t1"), use("t2")]},
        {"role": "user", "content": [result("t1")]},
        {"role": "user", "content": [result("t2")]},
        {"role": "assistant", "content": "ok"},
    ]
    path = write(tmp_path / "s.json", doc)
    text = "Expected toolResult blocks at messages.2.content for the following Ids: t1, t2"
    _, out, _ = run("explain", text, path)
    assert "target bedrock" in out
    assert f"{path}:messages[3].content[0]: error misplaced-tool-result" in out
    assert f"Repair: histview fix {path} --target bedrock --only misplaced-tool-result" in out


def test_an_index_beyond_the_file_and_an_unknown_id_are_said(tmp_path):
    doc = [{"role": "user", "content": "go"}, {"role": "assistant", "content": "ok"}]
    path = write(tmp_path / "s.json", doc)
    code, out, _ = run("explain", A1.format(n=40, ids="toolu_gone"), path)
    assert code == 0
    assert "messages.40 does not exist: the file sends 2 messages" in out
    assert "toolu_gone does not occur in this file" in out
    assert "histview finds no orphan-tool-use" in out


def test_unreadable_file_is_one_line_exit_2(tmp_path):
    path = tmp_path / "s.json"
    path.write_text("{nope")
    code, _, err = run("explain", A1.format(n=1, ids="x"), str(path))
    assert code == 2 and err.startswith(f"histview: {path}:") and len(err.splitlines()) == 1


def test_session_text_in_the_explanation_is_sanitised(tmp_path):
    doc = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "sure"},
        {"role": "user", "content": [result("toolu_9", "\x1b[2J\x1b]52;c;cGF5bG9hZA==\x07")]},
    ]
    path = write(tmp_path / "s.json", doc)
    text = "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9."
    _, out, _ = run("explain", text, path)
    assert "\x1b" not in out and "\x07" not in out
    assert "␛[2J" in out


@pytest.mark.skipif(
    not (SAMPLES / "roo_bedrock_wrong_tool_use_id.json").exists(), reason="sample not written"
)
def test_the_bedrock_wrong_id_sample():
    path = str(SAMPLES / "roo_bedrock_wrong_tool_use_id.json")
    text = (
        "Expected toolResult blocks at messages.8.content for the following Ids: "
        "tooluse_ZM5jOGqqqj4YS4kJrJUFeD, but found: tooluse_aLiIja3JwyhJ9HiQ-iK-MZ"
    )
    code, out, _ = run("explain", text, path)
    assert code == 0
    assert "error mismatched-tool-result-id" in out
    assert "--only mismatched-tool-result-id" in out
