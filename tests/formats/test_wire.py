"""What the provider receives, in each wire shape (repair/wire.py), numbered as the provider
numbers it: messages.N in findings, `histview messages`, `explain` and check's count agree,
for Anthropic, Bedrock Converse, Chat Completions (one `tool` message per result), Responses
(one item per call, output and reasoning) and Gemini contents; a client target sends its own
request (Codex's "aborted" outputs, Gemini CLI's merged turns and closing model turn)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from repair import explain, wire
from repair.analysis import analyze
from repair.formats import load_bytes, load_session
from repair.model import Block, Message
from repair.plan import apply_all
from repair.wire import request_body
from tests.command import run
from tests.paths import DATA, SAMPLES

GEMINI = DATA / "gemini_cli"


def test_chat_sends_each_tool_result_as_a_message_of_its_own_and_numbers_it():
    path = str(SAMPLES / "openai_chat_user_between_calls.json")
    code, out, _ = run("messages", path, "--json")
    assert code == 0
    msgs = json.loads(out)["messages"]
    assert [m["role"] for m in msgs] == [
        "system", "user", "assistant", "user", "tool", "tool", "assistant",
    ]  # fmt: skip
    assert msgs[2]["tool_calls"][1]["function"]["name"] == "get_forecast"
    assert json.loads(msgs[2]["tool_calls"][0]["function"]["arguments"])["city"] == "Lisbon"
    assert msgs[5]["tool_call_id"] == "call_3bCd5EfG7hIj9KlM1nOp2QrS"
    # each misplaced result is named by its own tool message; check counts what is sent
    _, out, _ = run("check", path, "--json")
    obj = json.loads(out)
    assert obj["messages"] == 7
    found = [(f["code"], f["message_index"]) for f in obj["findings"]]
    assert ("misplaced-tool-result", 4) in found and ("misplaced-tool-result", 5) in found


def test_explain_maps_a_chat_tool_message_to_its_result_block():
    call = {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    doc = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "a", "content": "one"},
        {"role": "tool", "tool_call_id": "a", "content": "two"},
    ]
    s = load_bytes(json.dumps(doc).encode(), path="chat.json")
    (m,) = explain.match("Duplicate value for 'tool_call_id' of 'a' in messages[3] and messages[4]")
    c = explain.locate(s, m)
    # messages[4] is the second tool message: the second result of the user row that holds both
    row = c.message_index
    assert s.messages[row].blocks[c.block_index].data["content"] == "two"
    (f,) = [f for f in analyze(s).findings if f.code == "duplicate-tool-result"]
    assert f.message_index == 4 and f in c.findings


def test_codex_input_carries_the_aborted_output_codex_adds_and_numbers_items():
    path = str(SAMPLES / "codex_missing_output.jsonl")
    _, out, _ = run("messages", path, "--json")
    items = json.loads(out)["input"]
    call = next(
        k for k, i in enumerate(items) if i.get("call_id") == "call_H3dKf8sJ0eWq5RtY2uIo6PaL"
    )
    assert items[call]["type"] == "function_call"
    assert items[call + 1] == {
        "type": "function_call_output",
        "call_id": "call_H3dKf8sJ0eWq5RtY2uIo6PaL",
        "output": "aborted",
    }
    (f,) = analyze(load_session(path)).findings
    assert (f.code, f.severity, f.message_index) == ("orphan-tool-use", "warning", call)
    # the items are the rollout's own (ids, encrypted reasoning and all)
    assert any(i.get("type") == "reasoning" and "encrypted_content" in i for i in items)


def test_gemini_cli_merges_turns_and_closes_a_history_that_ends_on_responses():
    s = load_session(str(GEMINI / "trailing_call.jsonl"))
    fixed, _ = apply_all(s)
    contents = request_body(fixed)["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user", "model", "user", "model"]
    assert contents[-1] == {
        "role": "model",
        "parts": [{"text": "[The previous response was interrupted before it completed.]"}],
    }
    assert [list(p) for p in contents[-2]["parts"]] == [["functionResponse"]] * 2
    (f,) = analyze(fixed).findings
    assert (f.code, f.severity, f.message_index) == ("trailing-tool-results", "warning", 4)
    assert "interrupted" in f.client_repair
    assert analyze(fixed, "gemini").findings == []  # nothing the Gemini API refuses


def test_gemini_cli_numbers_contents_as_gemini_cli_sends_them():
    s = load_session(str(GEMINI / "clean_seed.jsonl"))
    recorded = json.loads((GEMINI / "requests.json").read_text())["clean_seed"]["before"]
    a = analyze(s)
    # Gemini CLI's contents[2] and [4] hold the doubled responses (recorded request)
    assert {f.message_index for f in a.findings if f.code == "duplicate-tool-result"} == {2, 4}
    assert [c["role"] for c in recorded[:5]] == ["user", "model", "user", "model", "user"]
    assert len(request_body(s)["contents"]) == len(recorded) - 1  # the new prompt


def test_bedrock_messages_are_converse_blocks():
    _, out, _ = run("messages", str(SAMPLES / "bedrock_parallel_results_split.json"), "--json")
    msgs = json.loads(out)["messages"]
    assert set(msgs[1]["content"][1]) == {"toolUse"}
    assert msgs[1]["content"][1]["toolUse"]["name"] == "fetch_fetch"
    result = msgs[2]["content"][0]["toolResult"]
    assert result["toolUseId"] == "tooluse_Xq3vN8sRT2ubWk0JmA7yLg"
    assert isinstance(result["content"][0]["text"], str)


def test_check_counts_what_is_sent_and_says_what_is_not():
    doc = [
        {"role": "user", "content": "old", "ts": 1, "condenseParent": "c"},
        {"role": "user", "content": [{"type": "text", "text": "sum"}], "ts": 2,
         "isSummary": True, "condenseId": "c"},
        {"role": "assistant", "content": "ok", "ts": 3},
    ]  # fmt: skip
    s = load_bytes(json.dumps(doc).encode(), path="api_conversation_history.json")
    a = analyze(s)
    assert (a.sent, a.not_sent) == (2, 1)


def test_check_summary_names_the_messages_not_sent(tmp_path):
    path = tmp_path / "chat.jsonl"
    path.write_bytes((GEMINI / "clean_seed.jsonl").read_bytes())
    _, out, _ = run("check", str(path))
    assert "messages sent, 1 not sent, format gemini-cli, target gemini-cli" in out


_KINDS = ["text", "image", "tool_use", "tool_result", "thinking", "document", "output_text"]


@given(
    st.lists(
        st.tuples(st.sampled_from(["user", "assistant"]), st.lists(st.sampled_from(_KINDS))),
        max_size=12,
    ),
    st.sampled_from(["openai-chat", "openai-responses", "anthropic"]),
)
def test_numbering_counts_the_entries_the_request_holds(shapes, target):
    """provider_numbers counts each message's entries without rendering them: the number of
    entries the rendered request holds, message by message, whatever the blocks."""
    messages = [
        Message(role, tuple(Block(k, {"type": k, "text": "x"}) for k in kinds))
        for role, kinds in shapes
    ]
    numbers, total = wire.provider_numbers(messages, target)
    w = wire.wire_for(target)
    expect, n = [], 0
    for m in messages:
        expect.append(n)
        n += len(w.split(wire.SentMessage(m.role, wire.sent_blocks(m), [])))
    assert (numbers, total) == (expect, n)
