"""The `bedrock` adapter: Converse message lists and request bodies are detected from their
blocks (never read as broken Anthropic), checked under Bedrock's rules, and fixed in Converse
shape with everything else kept."""

from __future__ import annotations

import io
import json

import pytest

from repair.analysis import analyze
from repair.cli import main
from repair.formats import detect, get_adapter, load_session, probe_bytes
from repair.model import SYNTHETIC_RESULT_TEXT
from repair.plan import Choices, apply_all
from tests.formats.build import load
from tests.paths import SAMPLES

SAMPLE = SAMPLES / "bedrock_parallel_results_split.json"
A, B = "tooluse_Xq3vN8sRT2ubWk0JmA7yLg", "tooluse_b9LdPq4oSvKc1EhZr6TwFA"


def use(tid: str, name: str = "get_weather", **inp) -> dict:
    return {"toolUse": {"toolUseId": tid, "name": name, "input": inp}}


def result(tid: str, text: str = "sunny", status: str = "success") -> dict:
    return {"toolResult": {"toolUseId": tid, "content": [{"text": text}], "status": status}}


def msg(role: str, *content) -> dict:
    return {"role": role, "content": list(content)}


def body(*messages, **extra) -> bytes:
    doc = {
        "modelId": "anthropic.claude-3-5-sonnet-20240620-v1:0",
        "system": [{"text": "You are a weather bot."}],
        "toolConfig": {"tools": [{"toolSpec": {"name": "get_weather"}}]},
        **extra,
        "messages": list(messages),
    }
    return json.dumps(doc, indent=2).encode() + b"\n"


def findings(session, target=None):
    return [
        (f.code, f.severity, f.tool_use_id, f.source.to_json())
        for f in analyze(session, target).findings
        if f.severity != "info"
    ]


def fixed_doc(session, **strategy) -> dict:
    out, _ = apply_all(session, Choices(by_code=strategy) if strategy else None)
    return json.loads(out.export_bytes())


# ------------------------------------------------------------------ the sample


def test_results_split_over_two_user_messages_are_two_errors_under_bedrock():
    s = load_session(str(SAMPLE))
    assert (s.format, s.target) == ("bedrock", "bedrock")
    assert findings(s) == [
        ("consecutive-same-role", "error", None, {"path": "/3"}),
        ("misplaced-tool-result", "error", B, {"path": "/3/content/0"}),
    ]
    # Anthropic merges the two user messages: a symptom there, not a 400
    assert findings(s, "anthropic") == [
        ("misplaced-tool-result", "warning", B, {"path": "/3/content/0"})
    ]


def test_fix_moves_the_result_into_the_turns_user_message(tmp_path):
    src = SAMPLE.read_bytes()
    out = tmp_path / "fixed.json"
    code = main(["fix", str(SAMPLE), "-o", str(out)], stdout=io.StringIO(), stderr=io.StringIO())
    assert code == 0
    before, after = json.loads(src), json.loads(out.read_bytes())
    assert len(after) == len(before) - 1
    assert after[2]["content"] == [before[2]["content"][0], before[3]["content"][0]]
    assert after[:2] == before[:2] and after[3:] == before[4:]
    assert out.read_bytes().startswith(b'[\n  {\n    "role"') and out.read_bytes().endswith(b"]\n")
    again = load_session(str(out))
    assert findings(again) == []
    assert again.export_bytes() == out.read_bytes()
    assert fixed_doc(again) == after  # fixing twice changes nothing


def test_round_trip_is_byte_identical():
    s = load_session(str(SAMPLE))
    assert s.export_bytes() == SAMPLE.read_bytes()
    data = body(msg("user", {"text": "hi"}), msg("assistant", {"text": "hello"}))
    assert load(data).export_bytes() == data


# ------------------------------------------------------------------ fixes in Converse shape


def test_unanswered_tool_use_gets_an_error_tool_result_and_the_body_is_kept():
    data = body(
        msg("user", {"text": "Weather in Paris?"}),
        msg("assistant", use("tooluse_1", city="Paris")),
        msg("user", {"text": "never mind, Berlin?"}),
        msg("assistant", {"text": "Berlin is sunny."}),
        inferenceConfig={"maxTokens": 512},
    )
    s = load(data)
    assert findings(s) == [
        ("orphan-tool-use", "error", "tooluse_1", {"path": "/messages/1/content/0"})
    ]
    doc = fixed_doc(s)
    assert doc["messages"][2]["content"] == [
        {
            "toolResult": {
                "toolUseId": "tooluse_1",
                "content": [{"text": SYNTHETIC_RESULT_TEXT}],
                "status": "error",
            }
        },
        {"text": "never mind, Berlin?"},
    ]
    before = json.loads(data)
    assert {k: v for k, v in doc.items() if k != "messages"} == {
        k: v for k, v in before.items() if k != "messages"
    }
    assert list(doc) == list(before)


def test_trailing_tool_use_is_left_for_the_agent_unless_asked():
    data = body(msg("user", {"text": "Paris?"}), msg("assistant", use("tooluse_1")))
    s = load(data)
    assert findings(s) == [
        ("pending-tool-use", "warning", "tooluse_1", {"path": "/messages/1/content/0"})
    ]
    doc = fixed_doc(s, **{"pending-tool-use": "insert-result"})
    assert doc["messages"][2] == {
        "role": "user",
        "content": [
            {
                "toolResult": {
                    "toolUseId": "tooluse_1",
                    "content": [{"text": SYNTHETIC_RESULT_TEXT}],
                    "status": "error",
                }
            }
        ],
    }


def test_orphan_and_duplicate_results_are_dropped_and_reused_ids_renamed():
    data = body(
        msg("user", {"text": "Paris?"}),
        msg("assistant", use("tooluse_1")),
        msg("user", result("tooluse_1"), result("tooluse_1", "sunny again"), result("tooluse_x")),
        msg("assistant", use("tooluse_1")),
        msg("user", result("tooluse_1", "rain")),
        msg("assistant", {"text": "done"}),
    )
    s = load(data)
    codes = [f[0] for f in findings(s)]
    assert codes == ["duplicate-tool-result", "orphan-tool-result", "duplicate-tool-use-id"]
    doc = fixed_doc(s)
    assert doc["messages"][2]["content"] == [result("tooluse_1")]
    assert doc["messages"][3]["content"] == [use("tooluse_1_hv2")]
    assert doc["messages"][4]["content"] == [result("tooluse_1_hv2", "rain")]
    assert findings(load(json.dumps(doc).encode())) == []


def test_wrong_result_id_is_remapped_to_its_call():
    data = body(
        msg("user", {"text": "Paris?"}),
        msg("assistant", use("tooluse_new")),
        msg("user", result("tooluse_old")),
        msg("assistant", {"text": "sunny"}),
    )
    s = load(data)
    assert [f[0] for f in findings(s)] == ["mismatched-tool-result-id"]
    assert fixed_doc(s)["messages"][2]["content"] == [result("tooluse_new")]


def test_reasoning_is_a_thinking_block_kept_as_written():
    reasoning = {
        "reasoningContent": {"reasoningText": {"text": "Paris is in France", "signature": "c2ln"}}
    }
    redacted = {"reasoningContent": {"redactedContent": "ZW5j"}}
    data = body(
        msg("user", {"text": "Paris?"}),
        msg("assistant", reasoning, redacted, use("tooluse_1")),
        msg("user", {"text": "go on"}),
    )
    s = load(data)
    assert [b.type for b in s.messages[1].blocks] == ["thinking", "redacted_thinking", "tool_use"]
    assert s.messages[1].blocks[0].data["thinking"] == "Paris is in France"
    doc = fixed_doc(s)
    assert doc["messages"][1]["content"] == [reasoning, redacted, use("tooluse_1")]


# ------------------------------------------------------------------ detection


def probe(doc) -> str:
    return detect(probe_bytes(json.dumps(doc).encode(), path="x")).name


def test_converse_documents_are_bedrock_and_never_anthropic():
    text_only = [msg("user", {"text": "hi"}), msg("assistant", {"text": "hello"})]
    assert probe(text_only) == "bedrock"
    assert probe({"modelId": "m", "messages": text_only}) == "bedrock"
    assert probe({"modelId": "m", "messages": []}) == "bedrock"
    assert probe(json.loads(SAMPLE.read_bytes())) == "bedrock"
    sample = probe_bytes(SAMPLE.read_bytes(), path="x")
    assert get_adapter("anthropic").detect(sample) == 0
    assert get_adapter("roo").detect(sample) == 0
    out = io.StringIO()
    assert main(["check", "--format", "anthropic", str(SAMPLE)], stdout=out, stderr=out) == 2
    assert "does not look like anthropic" in out.getvalue()


@pytest.mark.parametrize(
    "doc",
    [
        [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
        {
            "model": "claude",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}],
        },
        [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c", "function": {"name": "f"}}],
            }
        ],
    ],
)
def test_anthropic_and_openai_documents_are_not_bedrock(doc):
    assert probe(doc) != "bedrock"


@pytest.mark.parametrize(
    ("block", "why"),
    [
        ({"text": "a", "image": {}}, "content[0] is not a Converse block"),
        ({"type": "text", "text": "a"}, "is an Anthropic block (text)"),
        ({"text": 5}, "content[0].text is a number"),
        ({"toolUse": "x"}, "content[0].toolUse is a string, not an object"),
    ],
)
def test_a_broken_block_makes_its_message_malformed_with_the_reason(block, why):
    data = body(msg("user", {"text": "hi"}), msg("assistant", {"text": "a"}), msg("user", block))
    s = load(data)
    assert s.format == "bedrock"
    (bad,) = [m for m in s.messages if m.malformed]
    assert why in bad.malformed and bad.src == {"path": "/messages/2"}
    assert s.export_bytes() == data


def test_content_that_is_not_a_list_is_malformed():
    s = load(body(msg("user", {"text": "hi"}), {"role": "assistant", "content": "plain"}))
    assert s.messages[1].malformed == "content is a string"
