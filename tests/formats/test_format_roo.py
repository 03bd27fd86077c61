"""The `roo` adapter (Roo Code / Kilo / Cline api_conversation_history.json): detection,
timestamps, condense/truncation hiding, the three tool dialects, the v2 envelope, task
folders, lossless export of real files, and export after the engine's edits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repair.analysis import analyze
from repair.formats import get_adapter, load_bytes, load_session, probe_bytes
from repair.model import SYNTHETIC_RESULT_TEXT, Block, Message, block_from_anthropic
from repair.place import Place
from repair.plan import apply_all
from tests.formats.build import compact, synthetic
from tests.paths import CORPUS

REAL_ROO = CORPUS / "roo"
CLINE_TASK = REAL_ROO / "cline_gmfstu_task_1769053680585"
ROO_TASK = REAL_ROO / "roo_jsboige_task_ac8aa7b4"


def findings(session):
    return analyze(session).findings


def env(text: str) -> dict:
    return {"type": "text", "text": f"<environment_details>\n{text}\n</environment_details>"}


# Native tool_use/tool_result with Roo keys; toolu_2 lost its result.
NATIVE = [
    {
        "role": "user",
        "content": [{"type": "text", "text": "<task>\nfix it\n</task>"}, env("a")],
        "ts": 1767720000000,
    },
    {
        "role": "assistant",
        "id": "msg_01",
        "content": [
            {"type": "text", "text": "Reading both."},
            {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a"}},
            {"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {"path": "b"}},
        ],
        "ts": 1767720004100,
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "A"},
            env("b"),
        ],
        "ts": 1767720004900,
    },
    {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "ts": 1767720006000},
]


# ---------------------------------------------------------------------------- detection


@pytest.mark.parametrize(
    "doc",
    [
        [
            {"role": "user", "content": "hi", "ts": 1},
            {"role": "assistant", "content": "yo", "ts": 2},
        ],
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "yo", "isSummary": True},
        ],
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "yo", "modelInfo": {"modelId": "m"}, "metrics": {}},
        ],
        [
            {"role": "user", "content": "hi"},
            {"type": "reasoning", "encrypted_content": "zz"},
            {"role": "assistant", "content": "yo"},
        ],
        [
            {"role": "user", "content": [{"type": "text", "text": "<task>\ndo\n</task>"}]},
            {"role": "assistant", "content": "yo"},
        ],
        [
            {"role": "user", "content": "<environment_details>\nx\n</environment_details>"},
            {"role": "assistant", "content": "yo"},
        ],
        {"version": 2, "messages": [{"role": "user", "content": "hi"}]},
    ],
    ids=[
        "ts",
        "isSummary",
        "cline modelInfo",
        "role-less reasoning",
        "<task>",
        "<environment_details>",
        "v2 envelope",
    ],
)
def test_roo_markers_select_roo(doc):
    assert load_bytes(compact(doc)).format == "roo"


def test_plain_anthropic_list_is_not_roo_but_can_be_forced():
    doc = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    probe = probe_bytes(compact(doc), path="x.json")
    assert 0 < get_adapter("roo").detect(probe) < get_adapter("anthropic").detect(probe)
    assert load_bytes(compact(doc)).format == "anthropic"
    assert load_bytes(compact(doc), format="roo").format == "roo"


@pytest.mark.parametrize(
    "doc",
    [
        {"model": "m", "messages": [{"role": "user", "content": "hi", "ts": 1}]},
        [
            {"role": "user", "content": "hi", "ts": 1},
            {
                "role": "assistant",
                "content": None,
                "ts": 2,
                "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c", "content": "r", "ts": 3},
        ],
        {"info": {"id": "ses_1"}, "messages": [{"info": {}, "parts": []}]},
        {"version": 3},
        [1, 2],
    ],
    ids=["request body", "openai chat", "opencode", "not an envelope", "numbers"],
)
def test_not_roo(doc):
    assert get_adapter("roo").detect(probe_bytes(compact(doc), path="x.json")) == 0


# ---------------------------------------------------------------------------- load


def test_ts_becomes_seconds_and_keys_survive():
    data = compact(NATIVE)
    s = load_bytes(data)
    assert s.messages[0].timestamp == pytest.approx(1767720000.0)
    assert s.messages[1].timestamp == pytest.approx(1767720004.1)
    assert s.messages[1].src == {"path": "/1"}
    assert s.messages[1].blocks[2].place() == Place(pointer="/1/content/2")
    assert s.export_bytes() == data


def test_role_less_reasoning_item_is_hidden_not_malformed():
    doc = [
        NATIVE[0],
        {
            "type": "reasoning",
            "id": "rs_1",
            "encrypted_content": "gAAA",
            "summary": [],
            "ts": 1767720001000,
        },
        *NATIVE[1:],
    ]
    s = load_bytes(compact(doc))
    r = s.messages[1]
    assert r.role is None and r.hidden and r.malformed is None
    assert r.src == {"path": "/1"}
    assert r.timestamp == pytest.approx(1767720001.0)
    codes = [f.code for f in findings(s)]
    assert "malformed" not in codes
    assert "orphan-tool-use" in codes  # the rest is checked around it


def test_role_less_entry_that_is_not_reasoning_is_malformed():
    doc = [NATIVE[0], {"content": "lost role", "ts": 1767720001000}, *NATIVE[1:]]
    data = compact(doc)
    s = load_bytes(data)
    assert s.messages[1].malformed == "no role"
    assert s.messages[1].src == {"path": "/1"}
    assert ("malformed", 1) in {(f.code, f.position) for f in findings(s)}
    assert s.export_bytes() == data


def test_malformed_content_inside_a_roo_file():
    doc = [*NATIVE[:2], {"role": "user", "content": 12, "ts": 5}, *NATIVE[2:]]
    s = load_bytes(compact(doc))
    assert s.messages[2].malformed == "content is a number"
    assert s.messages[3].blocks[0].tool_id == "toolu_1"


# ---------------------------------------------------------------------------- condense / truncation


def condensed(summary_id: str, parent_id: str) -> list:
    """Two turns condensed into a summary; the second turn's tool_use has no result (it
    would be an orphan if it were live)."""
    return [
        {
            "role": "user",
            "content": "<task>\nstart\n</task>",
            "ts": 1000,
            "condenseParent": parent_id,
        },
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t_old", "name": "read_file", "input": {}}],
            "ts": 2000,
            "condenseParent": parent_id,
        },
        {"role": "user", "content": "never answered", "ts": 3000, "condenseParent": parent_id},
        {
            "role": "user",
            "content": [{"type": "text", "text": "## Conversation Summary\nwe read"}],
            "ts": 3001,
            "isSummary": True,
            "condenseId": summary_id,
        },
        {"role": "assistant", "content": "continuing", "ts": 4000},
    ]


def test_condensed_messages_are_hidden_and_not_checked():
    s = load_bytes(compact(condensed("c-1", "c-1")))
    assert [m.hidden for m in s.messages] == [True, True, True, False, False]
    assert s.messages[3].meta.get("is_summary") is True
    assert "c-1" in s.messages[0].meta["hidden_reason"]
    assert not [f for f in findings(s) if f.code == "orphan-tool-use"]


def test_condense_tag_pointing_at_a_missing_summary_is_ignored():
    s = load_bytes(compact(condensed("c-1", "c-gone")))
    assert not any(m.hidden for m in s.messages)
    assert s.messages[0].meta["orphan_tag"] == "condenseParent=c-gone"
    assert ("orphan-tool-use", 1) in {(f.code, f.message_index) for f in findings(s)}


def test_truncated_messages_are_hidden_while_their_marker_exists():
    doc = [
        {"role": "user", "content": "<task>\nt\n</task>", "ts": 1},
        {
            "role": "user",
            "content": "[Sliding window truncation: 2 messages hidden to reduce context]",
            "ts": 2,
            "isTruncationMarker": True,
            "truncationId": "tr-1",
        },
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "x", "name": "f", "input": {}}],
            "ts": 3,
            "truncationParent": "tr-1",
        },
        {"role": "user", "content": "hidden", "ts": 4, "truncationParent": "tr-1"},
        {"role": "assistant", "content": "next", "ts": 5, "truncationParent": "tr-missing"},
    ]
    s = load_bytes(compact(doc))
    assert [m.hidden for m in s.messages] == [False, False, True, True, False]
    assert s.messages[1].meta.get("is_truncation_marker") is True
    assert s.messages[4].meta["orphan_tag"] == "truncationParent=tr-missing"
    assert not [f for f in findings(s) if f.code == "orphan-tool-use"]


# ---------------------------------------------------------------------------- dialects


def test_xml_dialect_loads_as_plain_text_with_nothing_to_pair():
    doc = [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nlist\n</task>"}], "ts": 1},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "<list_files>\n<path>.</path>\n</list_files>"}],
            "ts": 2,
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "[list_files for '.'] Result:"},
                {"type": "text", "text": "a.txt"},
                env("x"),
            ],
            "ts": 3,
        },
        {"role": "assistant", "content": [{"type": "text", "text": "done"}], "ts": 4},
    ]
    s = load_bytes(compact(doc))
    assert all(b.type == "text" and b.tool_id is None for m in s.messages for b in m.blocks)
    assert not [f for f in findings(s) if f.severity == "error"]


def cline_turn(names: list[str], answers: list[str]) -> list:
    uses = [
        {"type": "tool_use", "id": f"toolu_{k}", "name": n, "input": {"path": f"f{k}"}}
        for k, n in enumerate(names)
    ]
    texts = [
        {"type": "text", "text": f"[{a} for 'f{k}'] Result:\ncontent {k}"}
        for k, a in enumerate(answers)
    ]
    return [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nread\n</task>"}]},
        {
            "role": "assistant",
            "content": uses,
            "modelInfo": {"modelId": "m", "providerId": "p"},
            "metrics": {"tokens": {"prompt": 1, "completion": 2, "cached": 0}},
        },
        {"role": "user", "content": [*texts, env("e")]},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "ok"}],
            "modelInfo": {"modelId": "m", "providerId": "p"},
        },
    ]


def test_cline_text_results_answer_their_tool_use_by_position():
    s = load_bytes(
        compact(cline_turn(["read_file", "search_files"], ["read_file", "search_files"]))
    )
    texts = s.messages[2].blocks
    assert [(b.tool_id, b.name) for b in texts] == [
        ("toolu_0", "read_file"),
        ("toolu_1", "search_files"),
        (None, None),
    ]
    assert not [f for f in findings(s) if f.code in ("orphan-tool-use", "pending-tool-use")]


def test_cline_text_result_with_another_tool_name_does_not_answer():
    s = load_bytes(
        compact(cline_turn(["read_file", "write_to_file"], ["read_file", "execute_command"]))
    )
    assert [b.tool_id for b in s.messages[2].blocks] == ["toolu_0", None, None]
    orphans = [f.tool_use_id for f in findings(s) if f.code == "orphan-tool-use"]
    assert orphans == ["toolu_1"]


def test_cline_result_header_with_brackets_in_the_argument():
    cmd = "tr '[:upper:]' '[:lower:]'"
    doc = cline_turn(["execute_command"], ["execute_command"])
    doc[2]["content"][0]["text"] = f"[execute_command for '{cmd}'] Result:\nCommand executed."
    s = load_bytes(compact(doc))
    assert s.messages[2].blocks[0].tool_id == "toolu_0"


def test_native_dialect_pairs_normally():
    s = load_bytes(compact(NATIVE))
    assert s.messages[2].blocks[0].tool_id == "toolu_1"
    assert s.messages[2].blocks[1].tool_id is None
    assert [f.tool_use_id for f in findings(s) if f.code == "orphan-tool-use"] == ["toolu_2"]


# ---------------------------------------------------------------------------- real files


def _real(task: Path) -> Path:
    path = task / "api_conversation_history.json"
    if not path.is_file():
        pytest.skip(f"corpus file absent: {path}")
    return path


@pytest.mark.parametrize("task", [CLINE_TASK, ROO_TASK], ids=["cline", "roo"])
def test_real_file_round_trip_is_byte_identical(task):
    path = _real(task)
    data = path.read_bytes()
    s = load_session(str(path))
    assert s.format == "roo"
    assert s.export_bytes() == data
    rebuilt = s.copy_with([m.with_blocks(m.blocks) for m in s.messages])
    assert rebuilt.export_bytes() == data


def test_real_cline_task_folder_has_no_false_orphans():
    _real(CLINE_TASK)
    s = load_session(str(CLINE_TASK))  # the folder, not the file
    assert s.path.endswith("api_conversation_history.json")
    assert len(s.messages) == 94
    answered = [b for m in s.messages for b in m.blocks if b.type == "text" and b.tool_id]
    assert len(answered) == 46  # 47 tool_use, the last one ends the session
    got = {(f.code, f.severity) for f in findings(s)}
    assert ("orphan-tool-use", "error") not in got
    assert ("pending-tool-use", "warning") in got


def test_real_roo_xml_task():
    path = _real(ROO_TASK)
    s = load_session(str(path))
    assert len(s.messages) == 62
    assert s.messages[1].meta.get("is_summary") is True
    assert s.messages[0].timestamp == pytest.approx(1755635332.532)
    assert not any(b.type in ("tool_use", "tool_result") for m in s.messages for b in m.blocks)
    assert not [f for f in findings(s) if f.severity == "error"]


# ---------------------------------------------------------------------------- task folders


def test_task_folder_resolves_to_its_history(tmp_path):
    folder = tmp_path / "tasks" / "3f0c-uuid"
    folder.mkdir(parents=True)
    (folder / "ui_messages.json").write_text("[]")
    (folder / "api_conversation_history.json").write_bytes(compact(NATIVE))
    assert get_adapter("roo").claim_folder(str(folder)) == str(
        folder / "api_conversation_history.json"
    )
    s = load_session(str(folder))
    assert s.format == "roo" and len(s.messages) == 4


def test_legacy_claude_messages_file_in_a_task_folder(tmp_path):
    (tmp_path / "claude_messages.json").write_bytes(compact(NATIVE))
    assert load_session(str(tmp_path)).format == "roo"


# ---------------------------------------------------------------------------- edits (array)


def test_synthetic_result_keeps_compact_style_and_other_entries():
    data = compact(NATIVE)
    s = load_bytes(data)
    home = s.messages[2]
    new_home = home.with_blocks([home.blocks[0], synthetic("toolu_2"), home.blocks[1]])
    out_bytes = s.copy_with([*s.messages[:2], new_home, s.messages[3]]).export_bytes()
    assert b"\n" not in out_bytes and b'", "' not in out_bytes  # compact, no trailing newline
    out = json.loads(out_bytes)
    assert out[0] == NATIVE[0] and out[1] == NATIVE[1] and out[3] == NATIVE[3]
    assert out[2]["ts"] == NATIVE[2]["ts"]
    assert [b.get("tool_use_id") for b in out[2]["content"]] == ["toolu_1", "toolu_2", None]
    # only the edited entry's bytes changed
    assert out_bytes.startswith(
        data[: data.index(b'{"role":"user","content":[{"type":"tool_result"')]
    )


def test_new_message_gets_the_previous_messages_ts():
    doc = [
        NATIVE[0],
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
            "ts": 1767720004100,
        },
        {"role": "assistant", "content": [{"type": "text", "text": "again"}], "ts": 1767720009000},
    ]
    s = load_bytes(compact(doc))
    new = Message(role="user", blocks=(synthetic("t1"),))
    out = json.loads(s.copy_with([s.messages[0], s.messages[1], new, s.messages[2]]).export_bytes())
    assert out[2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "t1",
                "content": SYNTHETIC_RESULT_TEXT,
                "is_error": True,
            }
        ],
        "ts": 1767720004100,
    }
    assert list(out[2]) == ["role", "content", "ts"]


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(
    times=st.lists(st.one_of(st.none(), st.integers(1, 9), st.just("late")), min_size=1),
    steps=st.lists(st.tuples(st.integers(0, 30), st.sampled_from(["new", "edit", "drop"]))),
)
def test_each_new_message_gets_the_ts_of_the_entry_written_before_it(times, steps):
    """Messages histview makes, edits and drops anywhere (runs of new ones too): the entries
    as loaded are written as read, an edited one keeps its `ts`, and each new one takes the
    last time `ts` written before it (none when there is none)."""
    doc = []
    for k, t in enumerate(times):
        entry = {
            "role": "user" if k % 2 else "assistant",
            "content": [{"type": "text", "text": f"m{k}"}],
        }
        if t is not None:
            entry["ts"] = t
        doc.append(entry)
    s = load_bytes(compact(doc))
    msgs = list(s.messages)
    for at, what in steps:
        at = at % (len(msgs) + 1)
        if what == "new":
            msgs.insert(
                at,
                Message(role="user", blocks=(block_from_anthropic({"type": "text", "text": "n"}),)),
            )
        elif at < len(msgs) and what == "edit":
            msgs[at] = msgs[at].with_blocks([block_from_anthropic({"type": "text", "text": "e"})])
        elif at < len(msgs):
            del msgs[at]
    out = json.loads(s.copy_with(msgs).export_bytes())
    last = None
    for m, entry in zip(msgs, out, strict=True):
        if m.raw is None:
            assert entry.get("ts") == last and ("ts" in entry) == (last is not None)
        elif m in s.messages:
            assert entry == m.raw
        else:
            assert entry.get("ts") == m.raw.get("ts") and entry["content"][0]["text"] == "e"
        if isinstance(entry.get("ts"), int):
            last = entry["ts"]


def test_hidden_entries_stay_where_they_were_after_an_edit():
    doc = condensed("c-1", "c-1")
    s = load_bytes(compact(doc))
    last = s.messages[4]
    edited = last.with_blocks(
        [*last.blocks, block_from_anthropic({"type": "text", "text": "more"})]
    )
    out = json.loads(s.copy_with([*s.messages[:4], edited]).export_bytes())
    assert out[:4] == doc[:4]
    assert out[4]["content"] == [
        {"type": "text", "text": "continuing"},
        {"type": "text", "text": "more"},
    ]


def test_fix_native_orphan_then_check_is_clean():
    s = load_bytes(compact(NATIVE))
    fixed, _ = apply_all(s)
    again = load_bytes(fixed.export_bytes())
    assert again.format == "roo"
    assert [f for f in findings(again) if f.severity == "error"] == []
    assert json.loads(fixed.export_bytes())[2]["ts"] == NATIVE[2]["ts"]


def test_fix_inserting_a_whole_message_keeps_the_timeline():
    doc = [
        NATIVE[0],
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
            "ts": 1767720004100,
        },
        {"role": "assistant", "content": [{"type": "text", "text": "again"}], "ts": 1767720009000},
        {"role": "user", "content": [{"type": "text", "text": "go"}], "ts": 1767720010000},
    ]
    s = load_bytes(compact(doc))
    fixed, _ = apply_all(s)
    out = json.loads(fixed.export_bytes())
    ts = [e["ts"] for e in out]
    assert ts == sorted(ts)
    assert [f for f in findings(load_bytes(compact(out))) if f.severity == "error"] == []


# ---------------------------------------------------------------------------- v2 envelope

V2 = {
    "version": 2,
    "messages": [
        {
            "role": "user",
            "content": [{"type": "text", "text": "<user_message>\nread two\n</user_message>"}],
            "ts": 1000,
        },
        {
            "role": "assistant",
            "content": [
                {"type": "reasoning", "text": "think"},
                {"type": "text", "text": "Reading."},
                {
                    "type": "tool-call",
                    "toolCallId": "c1",
                    "toolName": "read_file",
                    "input": {"path": "a"},
                },
                {
                    "type": "tool-call",
                    "toolCallId": "c2",
                    "toolName": "read_file",
                    "input": {"path": "b"},
                },
            ],
            "ts": 2000,
        },
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "c1",
                    "toolName": "read_file",
                    "output": {"type": "text", "value": "A"},
                }
            ],
            "ts": 3000,
        },
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "c2",
                    "toolName": "read_file",
                    "output": {"type": "error-text", "value": "no such file"},
                }
            ],
            "ts": 3000,
        },
        {"role": "user", "content": [env("x")], "ts": 3000},
        {"role": "assistant", "content": "done", "ts": 4000},
    ],
}


def test_v2_parts_become_anthropic_blocks():
    data = compact(V2)
    s = load_bytes(data)
    assert s.format == "roo"
    # the two tool records and the user record after them are one user message, as the
    # AI SDK sends them
    assert [m.role for m in s.messages] == ["user", "assistant", "user", "assistant"]
    a = s.messages[1]
    assert [b.type for b in a.blocks] == ["reasoning", "text", "tool_use", "tool_use"]
    assert a.blocks[2].data == {
        "type": "tool_use",
        "id": "c1",
        "name": "read_file",
        "input": {"path": "a"},
    }
    assert a.blocks[2].src == {"path": "/messages/1/content/2"}
    group = s.messages[2]
    assert group.src == {"path": "/messages/2"}
    assert [(b.type, b.tool_id, b.is_error) for b in group.blocks] == [
        ("tool_result", "c1", False),
        ("tool_result", "c2", True),
        ("text", None, False),
    ]
    assert group.blocks[1].src == {"path": "/messages/3/content/0"}
    assert group.blocks[2].src == {"path": "/messages/4/content/0"}
    assert group.blocks[0].data["content"] == "A"
    assert group.timestamp == pytest.approx(3.0)
    assert s.export_bytes() == data
    rebuilt = s.copy_with([m.with_blocks(m.blocks) for m in s.messages])
    assert rebuilt.export_bytes() == data
    assert findings(s) == []


def test_v2_synthetic_result_goes_into_the_tool_record_in_ai_sdk_shape():
    doc = json.loads(json.dumps(V2))
    del doc["messages"][3]  # c2's result is lost
    s = load_bytes(compact(doc))
    assert [f.tool_use_id for f in findings(s) if f.code == "orphan-tool-use"] == ["c2"]
    fixed, _ = apply_all(s)
    out = json.loads(fixed.export_bytes())
    assert out["version"] == 2
    msgs = out["messages"]
    assert msgs[:2] == doc["messages"][:2] and msgs[3:] == doc["messages"][3:]
    assert msgs[2] == {
        "role": "tool",
        "content": [
            doc["messages"][2]["content"][0],
            {
                "type": "tool-result",
                "toolCallId": "c2",
                "toolName": "read_file",
                "output": {"type": "error-text", "value": SYNTHETIC_RESULT_TEXT},
            },
        ],
        "ts": 3000,
    }
    assert [f for f in findings(load_bytes(compact(out))) if f.severity == "error"] == []


def test_v2_results_missing_entirely_get_a_tool_record_before_the_user_record():
    doc = json.loads(json.dumps(V2))
    del doc["messages"][2:4]
    s = load_bytes(compact(doc))
    fixed, _ = apply_all(s)
    msgs = json.loads(fixed.export_bytes())["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool", "user", "assistant"]
    assert [p["toolCallId"] for p in msgs[2]["content"]] == ["c1", "c2"]
    assert msgs[2]["ts"] == 3000  # the time of the user record it was split from
    assert msgs[3] == doc["messages"][2]
    assert [
        f
        for f in findings(load_bytes(compact({"version": 2, "messages": msgs})))
        if f.severity == "error"
    ] == []


def test_v2_set_id_edits_the_part_in_place():
    doc = json.loads(json.dumps(V2))
    s = load_bytes(compact(doc))
    a, g = s.messages[1], s.messages[2]
    use = a.blocks[3]
    res = g.blocks[1]
    new_use = Block(
        type=use.type,
        data={**use.data, "id": "c2b"},
        tool_id="c2b",
        name=use.name,
        src=use.src,
        origin=use.origin,
        bid=use.bid,
    )
    new_res = Block(
        type=res.type,
        data={**res.data, "tool_use_id": "c2b"},
        tool_id="c2b",
        is_error=True,
        src=res.src,
        origin=res.origin,
        bid=res.bid,
    )
    msgs = [
        s.messages[0],
        a.with_blocks([*a.blocks[:3], new_use]),
        g.with_blocks([g.blocks[0], new_res]),
        *s.messages[3:],
    ]
    out = json.loads(s.copy_with(msgs).export_bytes())["messages"]
    assert out[1]["content"][3] == {
        "type": "tool-call",
        "toolCallId": "c2b",
        "toolName": "read_file",
        "input": {"path": "b"},
    }
    assert out[2] == doc["messages"][2]  # the untouched tool record, verbatim
    assert out[3]["content"][0]["toolCallId"] == "c2b"
    assert out[3]["content"][0]["output"] == {"type": "error-text", "value": "no such file"}


def test_v2_dropped_result_drops_its_empty_tool_record():
    s = load_bytes(compact(V2))
    g = s.messages[2]
    msgs = [*s.messages[:2], g.with_blocks([g.blocks[0], g.blocks[2]]), *s.messages[3:]]
    out = json.loads(s.copy_with(msgs).export_bytes())["messages"]
    assert [m["role"] for m in out] == ["user", "assistant", "tool", "user", "assistant"]
    assert out[2] == V2["messages"][2]


def test_v2_malformed_and_reasoning_records():
    doc = {
        "version": 2,
        "messages": [
            {"role": "user", "content": "hi", "ts": 1},
            {"type": "reasoning", "encrypted_content": "zz", "ts": 2},
            {"role": "assistant", "content": 5, "ts": 3},
            {"role": "tool", "content": "not parts", "ts": 4},
            {"role": "assistant", "content": "ok", "ts": 5},
        ],
    }
    data = compact(doc)
    s = load_bytes(data)
    assert s.messages[1].hidden and s.messages[1].role is None and not s.messages[1].malformed
    assert s.messages[2].malformed == "content is a number"
    assert s.messages[2].src == {"path": "/messages/2"}
    assert s.messages[3].malformed
    assert s.export_bytes() == data
    edited = s.messages[4].with_blocks([block_from_anthropic({"type": "text", "text": "fine"})])
    out = json.loads(s.copy_with([*s.messages[:4], edited]).export_bytes())["messages"]
    assert out[:4] == doc["messages"][:4]
    assert out[4] == {"role": "assistant", "content": [{"type": "text", "text": "fine"}], "ts": 5}


def test_v2_results_reordered_across_tool_records_stay_in_order():
    doc = json.loads(json.dumps(V2))
    msgs = doc["messages"]
    msgs[2], msgs[3] = msgs[3], msgs[2]  # c2's record before c1's
    s = load_bytes(compact(doc))
    g = s.messages[2]
    assert [b.tool_id for b in g.blocks] == ["c2", "c1", None]
    reordered = g.with_blocks([g.blocks[1], g.blocks[0], g.blocks[2]])
    out = json.loads(s.copy_with([*s.messages[:2], reordered, *s.messages[3:]]).export_bytes())
    again = load_bytes(compact(out))
    assert [b.tool_id for b in again.messages[2].blocks] == ["c1", "c2", None]
    # the parts themselves are written unchanged
    parts = [p for m in out["messages"] if m["role"] == "tool" for p in m["content"]]
    assert parts == [msgs[3]["content"][0], msgs[2]["content"][0]]


def test_v2_string_user_content_stays_a_string_when_results_are_hoisted():
    doc = {
        "version": 2,
        "messages": [
            {"role": "user", "content": "go", "ts": 1},
            {
                "role": "assistant",
                "content": [{"type": "tool-call", "toolCallId": "k", "toolName": "f", "input": {}}],
                "ts": 2,
            },
            {"role": "user", "content": "what happened?", "ts": 3},
        ],
    }
    s = load_bytes(compact(doc))
    home = s.messages[2]
    out = json.loads(
        s.copy_with(
            [*s.messages[:2], home.with_blocks([synthetic("k"), *home.blocks])]
        ).export_bytes()
    )["messages"]
    assert out[2] == {
        "role": "tool",
        "content": [
            {
                "type": "tool-result",
                "toolCallId": "k",
                "toolName": "f",
                "output": {"type": "error-text", "value": SYNTHETIC_RESULT_TEXT},
            }
        ],
        "ts": 3,
    }
    assert out[3] == doc["messages"][2]


def test_v2_new_tool_message_gets_previous_ts():
    doc = {
        "version": 2,
        "messages": [
            {"role": "user", "content": "go", "ts": 10},
            {
                "role": "assistant",
                "content": [{"type": "tool-call", "toolCallId": "k", "toolName": "f", "input": {}}],
                "ts": 20,
            },
            {"role": "assistant", "content": "more", "ts": 30},
        ],
    }
    s = load_bytes(compact(doc))
    new = Message(role="user", blocks=(synthetic("k"),))
    out = json.loads(s.copy_with([*s.messages[:2], new, s.messages[2]]).export_bytes())["messages"]
    assert out[2]["role"] == "tool" and out[2]["ts"] == 20
    assert out[2]["content"][0]["toolCallId"] == "k"
    assert out[3] == doc["messages"][2]


@pytest.mark.parametrize("target", ["anthropic", "bedrock"])
def test_v2_fix_is_clean_and_idempotent(target):
    doc = json.loads(json.dumps(V2))
    del doc["messages"][3]  # c2's result is lost
    doc["messages"].insert(2, {"role": "user", "content": "interrupting", "ts": 2500})
    s = load_bytes(compact(doc), target=target)
    assert analyze(s).errors
    fixed, _ = apply_all(s)
    out = fixed.export_bytes()
    again = load_bytes(out, target=target)
    assert analyze(again).errors == []
    refixed, applied = apply_all(again)
    assert applied == []
    assert refixed.export_bytes() == out


def test_v2_text_added_to_a_group_goes_to_its_user_record():
    s = load_bytes(compact(V2))
    g = s.messages[2]
    note = block_from_anthropic({"type": "text", "text": "[histview] note"})
    out = json.loads(
        s.copy_with(
            [*s.messages[:2], g.with_blocks([*g.blocks, note]), s.messages[3]]
        ).export_bytes()
    )["messages"]
    assert out[2:4] == V2["messages"][2:4]  # tool records verbatim
    assert out[4] == {
        "role": "user",
        "content": [*V2["messages"][4]["content"], note.data],
        "ts": 3000,
    }
