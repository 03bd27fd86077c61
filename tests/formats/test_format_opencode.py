"""The `opencode` adapter: `opencode export` JSON and the session.json + messages.json pair,
tool parts as call + derived result, lossless export, and the part states a fix writes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from repair.analysis import analyze
from repair.formats import detect, get_adapter, load_bytes, load_session, probe_bytes
from repair.model import SYNTHETIC_RESULT_TEXT
from repair.plan import Choices, apply_all
from repair.wire import request_body
from tests.formats.build import load
from tests.paths import CORPUS, SAMPLES

REAL = CORPUS / "opencode"
SES = "ses_18684d584ffe1JuGPUt8v6Igr8"


def real_pair() -> Path:
    folders = sorted(p.parent for p in REAL.glob("*/messages.json")) if REAL.is_dir() else []
    if not folders:
        pytest.skip("real opencode corpus absent")
    return folders[0]


def export_bytes(doc) -> bytes:
    """As `opencode export` writes it: JSON.stringify(x, null, 2) + newline."""
    return (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode()


def user(mid: str, text: str, created: int) -> dict:
    return {
        "info": {"id": mid, "sessionID": SES, "role": "user", "time": {"created": created}},
        "parts": [
            {"id": f"prt_{mid}_t", "sessionID": SES, "messageID": mid, "type": "text", "text": text}
        ],
    }


def tool(mid: str, k: int, call_id: str, status: str, **state) -> dict:
    st = {"status": status, "input": {"command": "ls"}, **state}
    return {
        "id": f"prt_{mid}_{k}",
        "sessionID": SES,
        "messageID": mid,
        "type": "tool",
        "callID": call_id,
        "tool": "bash",
        "state": st,
    }


def done(
    mid: str, k: int, call_id: str, out: str = "a.txt", start: int = 1000, end: int = 1010
) -> dict:
    return tool(
        mid,
        k,
        call_id,
        "completed",
        output=out,
        title="ls",
        metadata={},
        time={"start": start, "end": end},
    )


def running(mid: str, k: int, call_id: str, start: int = 2000) -> dict:
    return tool(mid, k, call_id, "running", title="ls", metadata={}, time={"start": start})


def assistant(mid: str, parts: list, created: int, completed: int | None = None, **info) -> dict:
    t = {"created": created} if completed is None else {"created": created, "completed": completed}
    return {
        "info": {
            "id": mid,
            "sessionID": SES,
            "role": "assistant",
            "time": t,
            "parentID": "msg_u1",
            **info,
        },
        "parts": [
            {"id": f"prt_{mid}_s", "sessionID": SES, "messageID": mid, "type": "step-start"},
            *parts,
        ],
    }


def export(*messages) -> bytes:
    info = {"id": SES, "title": "t", "version": "1.15.7", "time": {"created": 1, "updated": 2}}
    return export_bytes({"info": info, "messages": list(messages)})


def errors(data: bytes, target: str | None = None) -> list:
    return [f for f in analyze(load(data), target).findings if f.severity == "error"]


def problems(data: bytes) -> list[tuple[str, str]]:
    """(code, severity) above info under the default target (opencode itself)."""
    return [(f.code, f.severity) for f in analyze(load(data)).findings if f.severity != "info"]


def fix(data: bytes, choices: Choices | None = None) -> bytes:
    fixed, _ = apply_all(load(data), choices)
    return fixed.export_bytes()


# ---------------------------------------------------------------- detection


def test_export_and_message_list_are_opencode_and_nobody_else_claims_them():
    data = export(user("msg_u1", "hi", 1000))
    probe = probe_bytes(data, path="x.json")
    assert detect(probe).name == "opencode"
    listed = export_bytes([user("msg_u1", "hi", 1000)])
    assert detect(probe_bytes(listed, path="messages.json")).name == "opencode"
    for other in ("anthropic", "roo", "openai-chat"):
        assert get_adapter(other).detect(probe) == 0
        assert get_adapter(other).detect(probe_bytes(listed, path="m.json")) == 0


def test_plain_message_lists_are_not_opencode():
    data = json.dumps([{"role": "user", "content": "hi"}]).encode()
    assert get_adapter("opencode").detect(probe_bytes(data, path="x.json")) == 0


# ---------------------------------------------------------------- real files


def test_real_pair_loads_as_folder_file_and_export_with_exact_round_trip(tmp_path):
    folder = real_pair()
    by_folder = load_session(str(folder))
    by_file = load_session(str(folder / "messages.json"))
    assert by_folder.format == by_file.format == "opencode"
    assert by_folder.path.endswith("messages.json")
    assert by_folder.label == "Creating TEST_EDITS.md with poem"
    data = (folder / "messages.json").read_bytes()
    assert by_folder.export_bytes() == data
    assert by_file.export_bytes() == data

    info = json.loads((folder / "session.json").read_bytes())
    messages = json.loads(data)
    exported = tmp_path / "export.json"
    exported.write_bytes(export_bytes({"info": info, "messages": messages}))
    s = load_session(str(exported))
    assert s.format == "opencode" and s.target == "opencode"
    assert s.export_bytes() == exported.read_bytes()

    for session in (by_folder, s):
        kinds = [(m.role, [b.type for b in m.blocks]) for m in session.messages]
        assert kinds[1][1].count("tool_use") == 1
        assert kinds[2] == ("user", ["tool_result"])  # the write tool's completed result
        analysis = analyze(session)
        assert [f for f in analysis.findings if f.severity != "info"] == []
        assert all(u.results for u in analysis.pairing.uses)
        fixed, _ = apply_all(session)
        assert fixed.export_bytes() == session.export_bytes()


def test_real_pair_result_points_at_the_tool_state():
    s = load_session(str(real_pair()))
    res = s.messages[2].blocks[0]
    assert res.src == {"path": "/1/parts/2/state"}
    assert res.data["content"] == "Wrote file successfully."
    # the reasoning of another model is sent as text, before the call
    assert [b.type for b in s.messages[1].blocks] == ["text", "tool_use"]
    assert s.messages[1].blocks[1].src == {"path": "/1/parts/2"}


def test_edit_in_a_copied_pair_rewrites_messages_json_only(tmp_path):
    folder = tmp_path / "share"
    shutil.copytree(real_pair(), folder)
    doc = json.loads((folder / "messages.json").read_bytes())
    doc[1]["parts"][2]["state"] = {
        "status": "running",
        "input": {},
        "time": {"start": 1780154587879},
    }
    doc.append(user("msg_zzz", "hello?", 1780154600000))
    (folder / "messages.json").write_bytes(json.dumps(doc, indent=2).encode())
    s = load_session(str(folder))
    found = [f for f in analyze(s).findings if f.severity != "info"]
    assert [(f.code, f.severity) for f in found] == [("orphan-tool-use", "warning")]
    assert "[Tool execution was interrupted]" in (found[0].client_repair or "")
    assert [f.code for f in analyze(s, "anthropic").findings if f.severity == "error"] == [
        "orphan-tool-use"
    ]
    fixed, _ = apply_all(s)
    again = load_bytes(fixed.export_bytes(), path=str(folder / "messages.json"))
    assert [f for f in analyze(again).findings if f.severity != "info"] == []
    assert [f for f in analyze(again, "anthropic").findings if f.severity == "error"] == []


# ---------------------------------------------------------------- load details


def test_completed_and_error_parts_become_results_in_a_derived_user_message():
    data = export(
        user("msg_u1", "go", 1000),
        assistant(
            "msg_a1",
            [
                done("msg_a1", 1, "c1"),
                tool("msg_a1", 2, "c2", "error", error="boom", time={"start": 1001, "end": 1020}),
            ],
            1001,
            1030,
        ),
    )
    s = load(data)
    # the step-start part is not sent: it is not a block (it stays in the file)
    assert [(m.role, [b.type for b in m.blocks]) for m in s.messages] == [
        ("user", ["text"]),
        ("assistant", ["tool_use", "tool_use"]),
        ("user", ["tool_result", "tool_result"]),
    ]
    r1, r2 = s.messages[2].blocks
    assert (r1.tool_id, r1.data["content"], r1.is_error) == ("c1", "a.txt", False)
    assert (r2.tool_id, r2.data["content"], r2.is_error) == ("c2", "boom", True)
    assert s.messages[2].timestamp == pytest.approx(1.02)
    assert analyze(s).findings == []


def test_failed_assistant_messages_and_empty_messages_are_hidden():
    data = export(
        user("msg_u1", "go", 1000),
        assistant(
            "msg_a1",
            [running("msg_a1", 1, "c9")],
            1001,
            error={"name": "APIError", "data": {"message": "overloaded"}},
        ),
        {
            "info": {"id": "msg_u2", "sessionID": SES, "role": "user", "time": {"created": 1002}},
            "parts": [],
        },
        assistant(
            "msg_a2",
            [{"id": "p", "sessionID": SES, "messageID": "msg_a2", "type": "text", "text": "ok"}],
            1003,
        ),
    )
    s = load(data)
    assert [m.hidden for m in s.messages] == [False, True, True, False]
    assert analyze(s).findings == []


def test_aborted_message_with_a_running_tool_is_checked():
    data = export(
        user("msg_u1", "go", 1000),
        assistant(
            "msg_a1",
            [running("msg_a1", 1, "c9")],
            1001,
            error={"name": "MessageAbortedError", "data": {}},
        ),
        user("msg_u2", "sorry, go on", 3000),
    )
    found = [f for f in analyze(load(data)).findings if f.severity != "info"]
    assert [(f.code, f.severity, f.source.to_json()) for f in found] == [
        ("orphan-tool-use", "warning", {"path": "/messages/1/parts/1"})
    ]
    assert [f.code for f in errors(data, "anthropic")] == ["orphan-tool-use"]


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        ({"info": {"id": "m", "role": "user"}, "parts": "text"}, "not a list"),
        (
            {"info": {"id": "m", "role": "user"}, "parts": [{"text": "no type"}]},
            "part 0 has no type",
        ),
        ({"info": {"id": "m", "role": "robot"}, "parts": []}, "not user or assistant"),
        ({"parts": []}, "no info"),
        (
            {
                "info": {"id": "m", "role": "assistant"},
                "parts": [{"type": "tool", "tool": "x", "state": {}}],
            },
            "no callID",
        ),
    ],
)
def test_malformed_entries_are_reported_at_their_path_and_kept(entry, reason):
    data = export(user("msg_u1", "go", 1000), entry)
    s = load(data)
    bad = [m for m in s.messages if m.malformed]
    assert len(bad) == 1 and reason in bad[0].malformed
    assert [(f.code, f.source.to_json()) for f in analyze(s).findings if f.code == "malformed"] == [
        ("malformed", {"path": "/messages/1"})
    ]
    assert s.export_bytes() == data


# ---------------------------------------------------------------- fixes written back


def test_running_part_in_the_middle_becomes_an_error_with_an_end_time():
    data = export(
        user("msg_u1", "build", 1000),
        assistant("msg_a1", [running("msg_a1", 1, "c1", start=2000)], 1500),
        user("msg_u2", "it hung, go on", 9000),
        assistant(
            "msg_a2",
            [{"id": "p", "sessionID": SES, "messageID": "msg_a2", "type": "text", "text": "ok"}],
            9001,
            9002,
        ),
    )
    assert problems(data) == [("orphan-tool-use", "warning")]
    out = fix(data)
    doc = json.loads(out)
    part = doc["messages"][1]["parts"][1]
    assert part["state"] == {
        "status": "error",
        "input": {"command": "ls"},
        "error": SYNTHETIC_RESULT_TEXT,
        "metadata": {},
        "time": {"start": 2000, "end": 2000},
        # kept: nothing is lost (opencode 1.18.33 resumes such a state, its export drops it)
        "title": "ls",
    }
    # the rest of the document is untouched
    before = json.loads(data)
    before["messages"][1]["parts"][1] = part
    assert doc == before
    assert out.endswith(b"}\n") and b'\n  "messages": [' in out
    reloaded = load(out)
    assert problems(out) == [] and errors(out, "anthropic") == []
    res = [b for m in reloaded.messages for b in m.blocks if b.type == "tool_result"]
    assert [(r.tool_id, r.is_error, r.data["content"]) for r in res] == [
        ("c1", True, SYNTHETIC_RESULT_TEXT)
    ]
    assert fix(out) == out


def test_a_closed_parts_other_state_keys_are_kept():
    part = tool("msg_a1", 1, "c1", "pending", raw='{"command": "ls', odd={"k": 1})
    data = export(
        user("msg_u1", "build", 1000),
        assistant("msg_a1", [part], 1500),
        user("msg_u2", "go on", 9000),
    )
    out = fix(data)
    state = json.loads(out)["messages"][1]["parts"][1]["state"]
    assert state["status"] == "error"
    assert state["raw"] == '{"command": "ls' and state["odd"] == {"k": 1}
    # a part that recorded no time starts and ends at the message's last time, written as
    # opencode writes times (an integer, not 1500.0)
    assert b'"time":{"start":1500,"end":1500}' in b"".join(out.split())


def test_end_time_is_the_last_time_the_message_recorded():
    a = assistant("msg_a1", [running("msg_a1", 1, "c1", start=2000)], 1500)
    a["parts"].insert(
        1,
        {
            "id": "r",
            "sessionID": SES,
            "messageID": "msg_a1",
            "type": "reasoning",
            "text": "hm",
            "time": {"start": 1600, "end": 2600},
        },
    )
    out = fix(export(user("msg_u1", "x", 1000), a, user("msg_u2", "y", 9000)))
    state = json.loads(out)["messages"][1]["parts"][2]["state"]
    assert state["time"] == {"start": 2000, "end": 2600}


def test_pending_part_of_a_message_whose_other_call_completed():
    data = export(
        user("msg_u1", "two", 1000),
        assistant(
            "msg_a1", [done("msg_a1", 1, "c1"), tool("msg_a1", 2, "c2", "pending", raw="")], 1001
        ),
        user("msg_u2", "next", 9000),
    )
    assert [(f.code, f.tool_use_id) for f in errors(data, "anthropic")] == [
        ("orphan-tool-use", "c2")
    ]
    out = fix(data)
    parts = json.loads(out)["messages"][1]["parts"]
    assert parts[1] == json.loads(data)["messages"][1]["parts"][1]
    assert parts[2]["state"]["status"] == "error"
    assert parts[2]["state"]["time"] == {"start": 1010, "end": 1010}
    assert problems(out) == []


def test_last_message_running_is_pending_and_answered_unless_left_for_the_agent():
    data = export(
        user("msg_u1", "build", 1000), assistant("msg_a1", [running("msg_a1", 1, "c1")], 1500)
    )
    s = load(data)
    assert [(f.code, f.severity) for f in analyze(s).findings] == [("pending-tool-use", "warning")]
    out = fix(data)
    assert json.loads(out)["messages"][1]["parts"][1]["state"]["status"] == "error"
    assert fix(data, Choices(by_code={"pending-tool-use": "none"})) == data


def test_dropping_the_orphan_call_drops_its_part():
    data = export(
        user("msg_u1", "build", 1000),
        assistant("msg_a1", [running("msg_a1", 1, "c1")], 1500),
        user("msg_u2", "go on", 9000),
    )
    out = fix(data, Choices(by_code={"orphan-tool-use": "drop-tool-use"}))
    # the message had nothing else opencode sends: it goes (the report keeps it whole, its
    # part ids and times with it)
    assert [m["info"]["id"] for m in json.loads(out)["messages"]] == ["msg_u1", "msg_u2"]
    assert errors(out, "anthropic") == []
    fixed, _ = apply_all(load(data), Choices(by_code={"orphan-tool-use": "drop-tool-use"}))
    assert fixed.export().dropped_records == [
        {"path": "/messages/1", "outcome": "deleted", "record": json.loads(data)["messages"][1]}
    ]


def test_duplicate_call_ids_are_renamed_on_the_later_part():
    data = export(
        user("msg_u1", "a", 1000),
        assistant("msg_a1", [done("msg_a1", 1, "call_1")], 1001),
        assistant("msg_a2", [done("msg_a2", 1, "call_1", out="b")], 1100),
    )
    assert "duplicate-tool-use-id" in [f.code for f in errors(data)]  # opencode sends both
    out = fix(data)
    doc = json.loads(out)
    assert doc["messages"][1]["parts"][1]["callID"] == "call_1"
    new_id = doc["messages"][2]["parts"][1]["callID"]
    assert new_id != "call_1"
    assert errors(out) == []


def test_empty_text_part_is_dropped():
    data = export(
        user("msg_u1", "go", 1000),
        assistant(
            "msg_a1",
            [
                {"id": "e", "sessionID": SES, "messageID": "msg_a1", "type": "text", "text": " "},
                {"id": "t", "sessionID": SES, "messageID": "msg_a1", "type": "text", "text": "hi"},
            ],
            1001,
        ),
        user("msg_u2", "ok", 2000),
    )
    assert [f.code for f in errors(data)] == ["empty-content"]
    out = fix(data)
    assert [p.get("id") for p in json.loads(out)["messages"][1]["parts"]] == ["prt_msg_a1_s", "t"]


def test_rewriting_every_message_reproduces_the_real_file_and_the_sample():
    # new Message objects take the document-rewriting path: the JSON style must match
    sample = SAMPLES / "opencode_stuck_running.json"
    for path in (real_pair() / "messages.json", sample):
        s = load_session(str(path))
        rebuilt = s.copy_with([m.with_blocks(m.blocks) for m in s.messages])
        assert rebuilt.export_bytes() == path.read_bytes()


# ---------------------------------------------------------------- what opencode sends


def reasoning(mid: str, k: int, text: str, **extra) -> dict:
    return {
        "id": f"prt_{mid}_{k}",
        "sessionID": SES,
        "messageID": mid,
        "type": "reasoning",
        "text": text,
        "time": {"start": 1, "end": 2},
        **extra,
    }


def text(mid: str, k: int, value: str) -> dict:
    return {
        "id": f"prt_{mid}_{k}",
        "sessionID": SES,
        "messageID": mid,
        "type": "text",
        "text": value,
    }


CLAUDE = {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}


def test_an_assistant_message_of_unsigned_reasoning_is_sent_empty_and_fixed_by_removing_it():
    data = export(
        user("msg_u1", "go", 1000),
        assistant("msg_a1", [reasoning("msg_a1", 1, "thinking it over")], 1001, **CLAUDE),
        user("msg_u2", "well?", 2000),
        assistant("msg_a2", [text("msg_a2", 1, "done")], 2001, **CLAUDE),
    )
    s = load(data)
    # the Anthropic provider drops unsigned reasoning but still sends the message: refused
    assert [(m.role, len(m.blocks)) for m in s.messages] == [
        ("user", 1),
        ("assistant", 0),
        ("user", 1),
        ("assistant", 1),
    ]
    assert request_body(s)["messages"][1] == {"role": "assistant", "content": []}
    assert [(f.code, f.severity, f.message_index) for f in analyze(s).findings] == [
        ("empty-content", "error", 1)
    ]
    out = fix(data)
    assert [m["info"]["id"] for m in json.loads(out)["messages"]] == ["msg_u1", "msg_u2", "msg_a2"]
    assert problems(out) == [] and fix(out) == out


def test_signed_reasoning_is_a_thinking_block_and_other_models_reasoning_is_text():
    signed = {"metadata": {"anthropic": {"signature": "sig"}}}
    data = export(
        user("msg_u1", "go", 1000),
        assistant(
            "msg_a1",
            [reasoning("msg_a1", 1, "mine", **signed), text("msg_a1", 2, "a")],
            1001,
            **CLAUDE,
        ),
        user("msg_u2", "and?", 2000),
        assistant(
            "msg_a2",
            [reasoning("msg_a2", 1, "theirs"), text("msg_a2", 2, "b")],
            2001,
            providerID="openai",
            modelID="gpt-5",
        ),
        user("msg_u3", "ok", 3000),
    )
    s = load(data)
    assert [b.type for b in s.messages[1].blocks] == ["thinking", "text"]
    assert [b.data["text"] for b in s.messages[3].blocks] == ["theirs", "b"]


def test_steps_split_a_message_and_pieces_of_one_role_merge():
    a = assistant(
        "msg_a1",
        [
            text("msg_a1", 1, "first I look"),
            done("msg_a1", 2, "c1"),
            {"id": "prt_msg_a1_3", "sessionID": SES, "messageID": "msg_a1", "type": "step-start"},
            text("msg_a1", 4, "then I answer"),
        ],
        1001,
    )
    a["parts"][0]["id"] = "prt_msg_a1_0"  # the leading step-start, first in id order
    data = export(user("msg_u1", "go", 1000), a, user("msg_u2", "thanks", 2000))
    s = load(data)
    view = [(m.role, [b.type for b in m.blocks], m.origin) for m in s.messages]
    assert view == [
        ("user", ["text"], (0,)),
        ("assistant", ["text", "tool_use"], (1,)),
        ("user", ["tool_result"], (1,)),
        ("assistant", ["text"], (1,)),
        ("user", ["text"], (2,)),
    ]
    # rewriting every block puts each back into its own part
    rebuilt = s.copy_with([m.with_blocks(m.blocks) for m in s.messages])
    assert rebuilt.export_bytes() == data


def test_results_and_the_next_prompt_are_one_message_and_fixes_go_back_to_each_part():
    data = export(
        user("msg_u1", "go", 1000),
        assistant("msg_a1", [done("msg_a1", 1, "c1"), running("msg_a1", 2, "c2")], 1001),
        user("msg_u2", "   ", 9000),
        assistant("msg_a2", [text("msg_a2", 1, "ok")], 9001),
    )
    s = load(data)
    assert [(m.role, [b.type for b in m.blocks]) for m in s.messages][2] == (
        "user",
        ["tool_result", "text"],
    )
    assert s.messages[2].origin == (1, 2)
    sent = request_body(s)["messages"][2]["content"]
    assert [(b["type"], b.get("tool_use_id"), b.get("is_error")) for b in sent] == [
        ("tool_result", "c1", None),
        ("tool_result", "c2", True),
        ("text", None, None),
    ]
    assert [(f.code, f.severity) for f in analyze(s).findings if f.severity != "info"] == [
        ("orphan-tool-use", "warning"),
        ("empty-content", "error"),
    ]
    doc = json.loads(fix(data))
    assert doc["messages"][1]["parts"][2]["state"]["status"] == "error"
    assert doc["messages"][2]["parts"] == []  # the blank text goes; the message stays
    assert doc["messages"][3] == json.loads(data)["messages"][3]


def test_ids_opencode_sanitises_are_sent_sanitised():
    data = export(
        user("msg_u1", "go", 1000),
        assistant("msg_a1", [done("msg_a1", 1, "functions.todowrite:1")], 1001),
        user("msg_u2", "next", 2000),
    )
    s = load(data)
    sent = request_body(s)["messages"]
    assert sent[1]["content"][0]["id"] == "functions_todowrite_1"
    assert sent[2]["content"][0]["tool_use_id"] == "functions_todowrite_1"
    # Anthropic refuses the id in the file; opencode sends it sanitised: a warning that says so
    assert problems(data) == [("invalid-tool-id", "warning")] * 2
    assert all(
        "opencode 1.18 sends this id with '_'" in f.client_repair for f in analyze(s).findings
    )
    assert [f.severity for f in analyze(s, "anthropic").findings] == ["error", "error"]


def test_messages_are_read_in_created_time_order():
    data = export(
        user("msg_u1", "first", 1000),
        user("msg_u2", "third", 3000),
        assistant("msg_a1", [text("msg_a1", 1, "second")], 2000),
    )
    s = load(data)
    assert [m.origin for m in s.messages] == [(0,), (2,), (1,)]
    assert s.export_bytes() == data


def test_a_placeholder_text_goes_into_a_message_of_its_own_role():
    data = export(
        user("msg_u1", "go", 1000),
        assistant("msg_a1", [done("msg_a1", 1, "c1")], 1001),
        user("msg_u2", "   ", 9000),
        assistant("msg_a2", [text("msg_a2", 1, "ok")], 9001),
    )
    out = fix(data, Choices(by_code={"empty-content": "fill"}))
    doc = json.loads(out)
    # the results come from the assistant's tool part; the text stays in the user's message
    assert [p["type"] for p in doc["messages"][1]["parts"]] == ["step-start", "tool"]
    assert [p["text"] for p in doc["messages"][2]["parts"]][-1].startswith("[histview]")
    assert problems(out) == []


def test_a_closed_parts_odd_start_time_is_kept():
    part = tool("msg_a1", 1, "c1", "running", time={"start": [2000], "note": "x"})
    data = export(
        user("msg_u1", "build", 1000),
        assistant("msg_a1", [part], 1500),
        user("msg_u2", "go on", 9000),
    )
    state = json.loads(fix(data))["messages"][1]["parts"][1]["state"]
    assert state["status"] == "error"
    assert state["time"]["start"] == [2000] and state["time"]["note"] == "x"


@pytest.mark.parametrize("ptype", ["tool_result", "tool_use"])
def test_a_part_typed_like_a_normal_form_block_is_neither_a_call_nor_a_result(ptype):
    """opencode has no such part type: it sends nothing for it, histview shows it where the
    message is left out anyway, never pairs it, and writes it back."""
    odd = {"id": "prt_x", "sessionID": SES, "messageID": "msg_a1", "type": ptype, "id2": "t"}
    failed = {"id": "prt_y", "sessionID": SES, "messageID": "msg_a0", "type": ptype}
    data = export(
        user("msg_u0", "try", 500),
        assistant("msg_a0", [failed], 600, error={"name": "APIError", "data": {}}),
        user("msg_u1", "build", 1000),
        assistant("msg_a1", [running("msg_a1", 1, "c1"), odd], 1500),
        user("msg_u2", "go on", 9000),
    )
    s = load(data)
    assert [b.type for b in s.messages[1].blocks][-1] == f"opencode {ptype}"
    assert s.messages[1].hidden
    assert [b.type for b in s.messages[2].blocks] == ["tool_use"]  # the odd part: not sent
    assert [(f.code, f.severity) for f in analyze(s, "anthropic").findings] == [
        ("orphan-tool-use", "error")
    ]
    written = json.loads(fix(data))
    assert written["messages"][3]["parts"][2] == odd
    assert written["messages"][1]["parts"][-1] == failed


def test_a_message_opencode_sends_nothing_of_is_shown_and_kept_when_another_is_fixed():
    """An assistant message of empty text parts gives opencode nothing to send; it was in no
    row, so any fix dropped it from the file (found by the fuzzer). It is a hidden row and
    written back as it was."""
    a2 = assistant("msg_a2", [text("msg_a2", 1, "")], 2500)
    data = export(
        user("msg_u1", "build", 1000),
        assistant("msg_a1", [running("msg_a1", 1, "c1")], 1500),
        user("msg_u2", "go on", 2000),
        a2,
    )
    s = load(data)
    assert [(m.role, m.hidden) for m in s.messages][-1] == ("assistant", True)
    assert "opencode" in s.messages[-1].meta["hidden_reason"]
    out = fix(data)
    assert json.loads(out)["messages"][3] == a2
    assert fix(out) == out


@pytest.mark.parametrize("ptype", ["text", "reasoning"])
def test_a_text_or_reasoning_part_whose_text_is_not_a_string_is_malformed(ptype):
    odd = {"id": "prt_x", "sessionID": SES, "messageID": "msg_a1", "type": ptype, "text": True}
    data = export(
        user("msg_u1", "build", 1000),
        assistant("msg_a1", [odd], 1500),
        user("msg_u2", "go on", 2000),
    )
    s = load(data)
    [bad] = [m for m in s.messages if m.malformed]
    assert bad.malformed == f"{ptype} part 1 has a text that is a boolean"


def test_an_empty_step_of_unsigned_reasoning_is_dropped_with_its_part():
    """A later step holding only unsigned reasoning is sent as an empty assistant message
    (the Anthropic provider drops the reasoning): dropping that message drops the reasoning
    part from the file, so a second fix finds nothing (the part stayed and the message came
    back on every read; found by the fuzzer)."""
    step = {"id": "prt_msg_a1_2", "sessionID": SES, "messageID": "msg_a1", "type": "step-start"}
    a = assistant(
        "msg_a1",
        [done("msg_a1", 1, "c1"), step, reasoning("msg_a1", 3, "now what")],
        1001,
        **CLAUDE,
    )
    data = export(user("msg_u1", "go", 1000), a, user("msg_u2", "next", 2000))
    s = load(data)
    assert [(m.role, len(m.blocks)) for m in s.messages] == [
        ("user", 1),
        ("assistant", 1),
        ("user", 1),
        ("assistant", 0),
        ("user", 1),
    ]
    assert problems(data) == [("empty-content", "error")]
    out = fix(data)
    assert [p["type"] for p in json.loads(out)["messages"][1]["parts"]] == [
        "step-start",
        "tool",
        "step-start",
    ]
    assert problems(out) == [] and fix(out) == out


def test_a_thinking_block_taken_out_takes_its_part_with_it():
    signed = {"metadata": {"anthropic": {"signature": "sig"}}}
    a = assistant(
        "msg_a1",
        [reasoning("msg_a1", 1, "mine", **signed), text("msg_a1", 2, "a")],
        1001,
        **CLAUDE,
    )
    data = export(user("msg_u1", "go", 1000), a, user("msg_u2", "and?", 2000))
    s = load(data)
    m = s.messages[1]
    assert [b.type for b in m.blocks] == ["thinking", "text"]
    edited = s.copy_with([x if x is not m else m.with_blocks(m.blocks[1:]) for x in s.messages])
    parts = json.loads(edited.export_bytes())["messages"][1]["parts"]
    assert [p["type"] for p in parts] == ["step-start", "text"]
