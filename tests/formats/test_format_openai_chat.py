"""The `openai-chat` adapter: detection against the Anthropic/Roo lists, the normal form
(tool_calls -> tool_use, a run of tool messages -> one user message), lossless export, and
the tool messages a fix writes."""

from __future__ import annotations

import json

import pytest

from repair.analysis import analyze
from repair.formats import detect, get_adapter, load_session, probe_bytes
from repair.model import SYNTHETIC_RESULT_TEXT
from repair.place import Place
from repair.plan import Choices, apply_all
from tests.formats.build import compact, load
from tests.paths import SAMPLES


def pretty(obj) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, indent=2) + "\n").encode()


def calls(*ids: str, content=None) -> dict:
    return {
        "role": "assistant",
        "content": content,
        "tool_calls": [
            {
                "id": i,
                "type": "function",
                "function": {"name": "get", "arguments": json.dumps({"k": i})},
            }
            for i in ids
        ],
    }


def tool(i: str, content: str = "ok") -> dict:
    return {"role": "tool", "tool_call_id": i, "content": content}


def u(text: str) -> dict:
    return {"role": "user", "content": text}


def a(text: str) -> dict:
    return {"role": "assistant", "content": text}


def errors(data: bytes, path: str = "chat.json") -> list:
    return [f for f in analyze(load(data, path)).findings if f.severity == "error"]


def fixed(data: bytes, choices: Choices | None = None, path: str = "chat.json") -> bytes:
    s, _ = apply_all(load(data, path), choices)
    return s.export_bytes()


HEALTHY = [
    {"role": "system", "content": "be brief"},
    u("weather in Paris and Rome?"),
    calls("call_1", "call_2"),
    tool("call_1", "18C"),
    tool("call_2", "24C"),
    a("Paris 18C, Rome 24C."),
]


# ---------------------------------------------------------------- detection


def winner(data: bytes, path: str = "x.json") -> str:
    return detect(probe_bytes(data, path=path)).name


def test_tool_calls_list_and_request_body_are_openai_chat():
    assert winner(compact(HEALTHY)) == "openai-chat"
    body = {"model": "gpt-4o", "messages": HEALTHY, "tools": [], "temperature": 0}
    assert winner(pretty(body)) == "openai-chat"
    assert load(pretty(body)).target == "openai-chat"


def test_plain_anthropic_list_is_not_openai_chat():
    doc = [
        u("hi"),
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}],
        },
    ]
    probe = probe_bytes(compact(doc), path="x.json")
    assert get_adapter("openai-chat").detect(probe) == 0
    assert detect(probe).name == "anthropic"


def test_roo_v2_envelope_with_tool_role_messages_is_not_openai_chat():
    doc = {
        "version": 2,
        "messages": [
            u("hi"),
            {
                "role": "assistant",
                "content": [
                    {"type": "tool-call", "toolCallId": "t1", "toolName": "x", "input": {}}
                ],
            },
            {
                "role": "tool",
                "content": [
                    {"type": "tool-result", "toolCallId": "t1", "toolName": "x", "output": "ok"}
                ],
            },
        ],
    }
    assert get_adapter("openai-chat").detect(probe_bytes(compact(doc), path="x.json")) == 0


def test_system_role_list_without_tools_goes_to_openai_chat_plain_list_to_anthropic():
    assert winner(compact([{"role": "system", "content": "s"}, u("hi"), a("yo")])) == "openai-chat"
    assert winner(compact([u("hi"), a("yo")])) == "anthropic"


def test_jsonl_of_message_records_is_openai_chat():
    data = b"\n".join(compact({"messages": m}) for m in (HEALTHY, [u("x"), a("y")])) + b"\n"
    assert winner(data, "x.jsonl") == "openai-chat"


def test_both_dialects_in_one_list_goes_to_anthropic():
    doc = [
        u("hi"),
        calls("c1"),
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "ok"}],
        },
    ]
    probe = probe_bytes(compact(doc), path="x.json")
    assert 0 < get_adapter("openai-chat").detect(probe) < get_adapter("anthropic").detect(probe)


# ---------------------------------------------------------------- normal form


def test_normal_form_of_a_tool_round_trip():
    s = load(compact(HEALTHY))
    shape = [(m.role, m.hidden, [(b.type, b.tool_id) for b in m.blocks], m.src) for m in s.messages]
    assert shape == [
        ("system", True, [("text", None)], {"path": "/0"}),
        ("user", False, [("text", None)], {"path": "/1"}),
        ("assistant", False, [("tool_use", "call_1"), ("tool_use", "call_2")], {"path": "/2"}),
        ("user", False, [("tool_result", "call_1"), ("tool_result", "call_2")], {"path": "/3"}),
        ("assistant", False, [("text", None)], {"path": "/5"}),
    ]
    use = s.messages[2].blocks[1]
    assert (use.name, use.data["input"], use.place()) == (
        "get",
        {"k": "call_2"},
        Place(pointer="/2/tool_calls/1"),
    )
    assert [b.place() for b in s.messages[3].blocks] == [Place(pointer="/3"), Place(pointer="/4")]
    assert analyze(s).findings == []


def test_content_next_to_tool_calls_is_a_text_block_null_and_empty_are_not():
    s = load(compact([u("go"), calls("c1", content="Let me look."), tool("c1"), a("done")]))
    assert [b.type for b in s.messages[1].blocks] == ["text", "tool_use"]
    for content in (None, ""):
        s = load(compact([u("go"), calls("c1", content=content), tool("c1"), a("done")]))
        assert [b.type for b in s.messages[1].blocks] == ["tool_use"]
        assert analyze(s).findings == []


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        ({"role": "tool", "content": "x"}, "tool_call_id"),
        ({"content": "x"}, "without a role"),
        ({"role": "assistant", "content": None, "tool_calls": [{"type": "function"}]}, "has no id"),
        ({"role": "user", "content": 42}, "content is a number"),
        ({"role": "wizard", "content": "x"}, "unknown role"),
    ],
)
def test_malformed_messages_are_located_and_written_back(entry, reason):
    data = pretty([u("hi"), entry, calls("c1"), tool("c1"), a("ok")])
    s = load(data)
    assert s.format == "openai-chat"
    bad = [m for m in s.messages if m.malformed]
    assert len(bad) == 1 and reason in bad[0].malformed
    assert ("malformed", {"path": "/1"}) in [
        (f.code, f.source.to_json()) for f in analyze(s).findings
    ]
    assert s.export_bytes() == data


@pytest.mark.parametrize("dump", [compact, pretty, lambda o: json.dumps(o).encode()])
def test_round_trip_keeps_the_bytes(dump):
    for doc in (HEALTHY, {"model": "m", "messages": HEALTHY, "n": 1}):
        data = dump(doc)
        assert load(data).export_bytes() == data


@pytest.mark.parametrize("dump", [compact, pretty, lambda o: json.dumps(o).encode()])
def test_an_edited_document_is_written_in_the_style_it_was_read_in(dump):
    """(the style is read from the bytes when the file is first written, not at load)"""
    doc = [u("go"), calls("c1", "c2"), tool("c2", "B"), u("next"), a("ok")]
    out = fixed(dump(doc))
    assert out == dump(json.loads(out)) and out != dump(doc)


# ---------------------------------------------------------------- fixes written back


def test_user_message_between_calls_and_tool_messages():
    doc = [u("weather?"), calls("c1", "c2"), u("in Celsius"), tool("c1"), tool("c2"), a("ok")]
    data = pretty(doc)
    found = errors(data)
    assert [(f.code, f.source.to_json()) for f in found] == [
        ("misplaced-tool-result", {"path": "/3"}),
        ("misplaced-tool-result", {"path": "/4"}),
    ]
    out = fixed(data)
    assert json.loads(out) == [doc[0], doc[1], doc[3], doc[4], doc[2], doc[5]]
    assert errors(out) == []


def test_missing_tool_message_is_added_right_after_the_call_in_call_order():
    doc = [u("two"), calls("c1", "c2"), tool("c2", "B"), u("next"), a("ok")]
    data = compact(doc)
    assert [(f.code, f.tool_use_id) for f in errors(data)] == [("orphan-tool-use", "c1")]
    out = json.loads(fixed(data))
    assert out[2] == {"role": "tool", "tool_call_id": "c1", "content": SYNTHETIC_RESULT_TEXT}
    assert out[:2] == doc[:2] and out[3:] == doc[2:]
    assert errors(compact(out)) == []


def test_missing_tool_messages_before_a_user_message():
    doc = [u("go"), calls("c1"), u("hello?"), a("ok")]
    out = json.loads(fixed(pretty(doc)))
    assert out == [
        doc[0],
        doc[1],
        {"role": "tool", "tool_call_id": "c1", "content": SYNTHETIC_RESULT_TEXT},
        doc[2],
        doc[3],
    ]


def test_missing_tool_message_before_the_next_assistant():
    doc = [u("go"), calls("c1"), a("ok"), u("thanks")]
    out = json.loads(fixed(pretty(doc)))
    assert out[2] == {"role": "tool", "tool_call_id": "c1", "content": SYNTHETIC_RESULT_TEXT}
    assert out[3:] == doc[2:]


def test_tool_message_without_a_call_is_dropped_or_turned_into_user_text():
    doc = [u("go"), a("hi"), tool("ghost", "stale output"), u("next"), a("ok")]
    data = pretty(doc)
    assert [f.code for f in errors(data)] == ["orphan-tool-result"]
    assert json.loads(fixed(data)) == [doc[0], doc[1], doc[3], doc[4]]
    as_text = json.loads(fixed(data, Choices(by_code={"orphan-tool-result": "to-text"})))
    assert [m["role"] for m in as_text] == ["user", "assistant", "user", "user", "assistant"]
    assert "stale output" in json.dumps(as_text[2])
    assert errors(pretty(as_text)) == []


def test_duplicate_tool_message_keeps_one():
    doc = [u("go"), calls("c1"), tool("c1", "[Tool use interrupted]"), tool("c1", "real"), a("ok")]
    data = compact(doc)
    assert [f.code for f in errors(data)] == ["duplicate-tool-result"]
    out = json.loads(fixed(data))
    assert out == [doc[0], doc[1], doc[3], doc[4]]


def test_duplicate_tool_call_id_is_renamed_in_the_call_and_its_tool_message():
    doc = [u("a"), calls("c1"), tool("c1"), u("b"), calls("c1"), tool("c1", "two"), a("ok")]
    data = pretty(doc)
    assert "duplicate-tool-use-id" in [f.code for f in errors(data)]
    out = json.loads(fixed(data))
    new_id = out[4]["tool_calls"][0]["id"]
    assert new_id != "c1" and out[5] == {**doc[5], "tool_call_id": new_id}
    assert out[:4] == doc[:4] and out[6] == doc[6]
    assert out[4] == {**doc[4], "tool_calls": [{**doc[4]["tool_calls"][0], "id": new_id}]}


def test_dropping_an_orphan_call_keeps_the_assistant_text():
    doc = [u("go"), calls("c1", content="Looking."), u("never mind"), a("ok")]
    out = json.loads(fixed(compact(doc), Choices(by_code={"orphan-tool-use": "drop-tool-use"})))
    assert out[1] == {"role": "assistant", "content": "Looking."}
    assert out[2:] == doc[2:]


def test_request_body_keeps_its_other_keys_on_edit():
    body = {
        "model": "gpt-4o",
        "messages": [u("go"), calls("c1"), u("hm"), a("ok")],
        "tools": [{"x": 1}],
    }
    out = json.loads(fixed(pretty(body)))
    assert list(out) == ["model", "messages", "tools"] and out["tools"] == [{"x": 1}]
    assert len(out["messages"]) == 5


# ---------------------------------------------------------------- JSONL of conversations


def test_jsonl_records_are_threads_and_untouched_lines_keep_their_bytes():
    lines = [
        json.dumps({"messages": HEALTHY}),
        "{broken",
        json.dumps({"messages": [u("go"), calls("c9"), u("hello?"), a("ok")], "id": 7}),
    ]
    data = ("\n".join(lines) + "\n").encode()
    s = load(data, "log.jsonl")
    assert s.format == "openai-chat" and [t.label for t in s.threads] == ["line 3"]
    assert analyze(s).summary() == {"malformed": 1}
    assert s.messages[-1].malformed and s.messages[-1].src == {"line": 2}
    thread = s.threads[0]
    found = [
        (f.code, f.source.to_json())
        for f in analyze(thread, s.target).findings
        if f.severity == "error"
    ]
    assert found == [("orphan-tool-use", {"line": 3, "path": "/messages/1/tool_calls/0"})]
    assert s.export_bytes() == data

    fixed_thread, _ = apply_all(thread)
    s.threads = [fixed_thread]
    out = s.export_bytes().decode().split("\n")
    assert out[:2] == lines[:2]
    rec = json.loads(out[2])
    assert rec["id"] == 7 and rec["messages"][2]["role"] == "tool"
    assert out[2].startswith('{"messages": [')  # the line keeps its separators


def test_rewriting_every_message_reproduces_the_sample():
    path = SAMPLES / "openai_chat_user_between_calls.json"
    s = load_session(str(path))
    rebuilt = s.copy_with([m.with_blocks(m.blocks) for m in s.messages])
    assert rebuilt.export_bytes() == path.read_bytes()


@pytest.mark.parametrize("empty", [{"role": "user", "content": []}, {"role": "user"}])
def test_an_empty_user_message_that_gets_a_result_is_written_as_its_tool_message(empty):
    """The synthetic result for a call goes into the empty user message after it; written
    back, that message stayed as an empty user message after the tool message and a second
    fix dropped it (found by the fuzzer). It is the tool message alone; the report keeps the
    empty message as read."""
    data = compact([HEALTHY[0], u("weather?"), calls("call_1"), empty, a("no idea")])
    s, applied = apply_all(load(data))
    assert [f.code for f in applied] == ["orphan-tool-use"]
    written = s.export()
    msgs = json.loads(written.data)
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "assistant"]
    assert written.dropped_records == [{"path": "/3", "outcome": "deleted", "record": empty}]
    assert fixed(written.data) == written.data
