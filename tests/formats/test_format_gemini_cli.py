"""The `gemini-cli` adapter: Gemini CLI chats replayed as Gemini CLI 0.61 loads them (records
updated by id, `$set`, `$rewindTo`, the older `.json`), seen as the history it sends, and
written back so that it sends each tool response once: lossless when nothing changed, and only
the records a fix needs otherwise."""

from __future__ import annotations

import io
import json

import pytest

from repair.analysis import analyze
from repair.cli import main
from repair.formats import detect, load_bytes, load_session, probe_bytes
from repair.plan import Choices, apply_all
from tests.paths import DATA, SAMPLES, SHARED

DATA = DATA / "gemini_cli"
SAMPLE = SAMPLES / "gemini_cli_doubled_after_resume.jsonl"
CORPUS = SHARED / "corpus" / "generated" / "gemini_cli"
CHATS = [p for p in sorted(DATA.glob("*.json*")) if p.name != "requests.json"]
T = "2026-11-23T08:11:{:02d}.000Z"


# ------------------------------------------------------------------ building chats


def header(**extra) -> dict:
    return {
        "sessionId": "5e55a0ff-0000-4000-8000-000000000001",
        "projectHash": "ab" * 32,
        "startTime": T.format(0),
        "lastUpdated": T.format(0),
        "kind": "main",
        **extra,
    }


def user(rid: str, text: str, s: int = 1) -> dict:
    return {"id": rid, "timestamp": T.format(s), "type": "user", "content": [{"text": text}]}


def gemini(rid: str, content="", calls=(), s: int = 2, **extra) -> dict:
    rec = {
        "id": rid,
        "timestamp": T.format(s),
        "type": "gemini",
        "content": content,
        "thoughts": [],
        "model": "gemini-2.5-pro",
        **extra,
    }
    if calls:
        rec["toolCalls"] = list(calls)
    return rec


def response(cid: str | None, name: str, output: str = "ok") -> dict:
    fr = {"name": name, "response": {"output": output}}
    if cid is not None:
        fr = {"id": cid, **fr}
    return {"functionResponse": fr}


def call(cid: str | None, name: str, output: str | None = "ok", args=None) -> dict:
    tc = {"name": name, "args": args or {}, "status": "success"}
    if cid is not None:
        tc = {"id": cid, **tc}
    if output is not None:
        tc["result"] = [response(cid, name, output)]
    return tc


def responses(rid: str, *parts: dict, s: int = 3) -> dict:
    return {"id": rid, "timestamp": T.format(s), "type": "user", "content": list(parts)}


def jsonl(*recs) -> bytes:
    return b"".join(
        (r if isinstance(r, bytes) else json.dumps(r, separators=(",", ":")).encode()) + b"\n"
        for r in recs
    )


def load(data: bytes, **kw):
    return load_bytes(data, path="chat.jsonl", **kw)


def found(session) -> list[tuple]:
    return [
        (f.code, f.severity, f.tool_use_id, f.message_index)
        for f in analyze(session).findings
        if f.severity != "info"
    ]


def fix(session, **strategy):
    fixed, _ = apply_all(session, Choices(by_code=strategy) if strategy else None)
    return fixed.export_bytes()


def records(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def live(session) -> list:
    return [m for m in session.messages if m.live]


# ------------------------------------------------------------------ detection and loading


def test_real_gemini_cli_chat_is_detected_and_each_doubled_response_reported():
    files = sorted(CORPUS.glob("session-*.jsonl")) if CORPUS.is_dir() else []
    if not files:
        pytest.skip("Gemini CLI corpus absent")
    s = load_session(str(files[0]))
    assert (s.format, s.target) == ("gemini-cli", "gemini-cli")  # the client is the target
    got = [(f.code, f.severity, f.tool_use_id, f.source.to_json()) for f in analyze(s).findings]
    assert got == [
        ("duplicate-tool-result", "error", "list_directory_1795421502201_0", {"line": 8}),
        ("duplicate-tool-result", "error", "read_file_1795421502342_0", {"line": 13}),
        ("duplicate-tool-result", "error", "read_file_1795421502345_1", {"line": 13}),
    ]
    assert s.export_bytes() == files[0].read_bytes()


def test_a_chat_gemini_cli_wrote_reads_as_the_history_it_sends():
    s = load_session(str(DATA / "clean_seed.jsonl"))
    shape = [(m.role, [(b.type, b.tool_id) for b in m.blocks]) for m in live(s)]
    assert shape == [
        ("user", [("text", None)]),
        ("assistant", [("tool_use", "list_directory_1795434258819_0")]),
        (
            "user",
            [
                ("tool_result", "list_directory_1795434258819_0"),
                ("tool_result", "list_directory_1795434258819_0"),
            ],
        ),
        (
            "assistant",
            [("tool_use", "read_file_1795434258949_0"), ("tool_use", "read_file_1795434258951_1")],
        ),
        (
            "user",
            [
                ("tool_result", "read_file_1795434258949_0"),
                ("tool_result", "read_file_1795434258951_1"),
                ("tool_result", "read_file_1795434258949_0"),
                ("tool_result", "read_file_1795434258951_1"),
            ],
        ),
        ("assistant", [("text", None)]),
    ]
    # Gemini CLI's own context record is shown, not sent
    hidden = [m for m in s.messages if m.hidden]
    assert len(hidden) == 1 and "does not send" in hidden[0].meta["hidden_reason"]
    # each block points at the line of the record holding it
    assert [b.src for b in live(s)[2].blocks] == [{"line": 7}, {"line": 8}]
    assert s.label == "6f55130f-8c99-434f-988e-5aab1413dce2"


def test_a_record_written_again_keeps_its_place_and_takes_the_new_content():
    data = jsonl(
        header(),
        user("u1", "hi"),
        gemini("g1", ""),
        {"$set": {"lastUpdated": T.format(3)}},
        gemini("g1", "hello there"),
        user("u2", "bye", s=4),
    )
    s = load(data)
    assert [(m.role, m.blocks[0].data["text"]) for m in live(s)] == [
        ("user", "hi"),
        ("assistant", "hello there"),
        ("user", "bye"),
    ]
    assert live(s)[1].src == {"line": 5}


def test_rewind_drops_the_message_and_everything_after_it_shown_as_hidden_rows():
    data = jsonl(
        header(),
        user("u1", "first"),
        gemini("g1", "one"),
        user("u2", "second", s=3),
        gemini("g2", "two", s=4),
        {"$rewindTo": "u2"},
        user("u3", "instead", s=5),
        gemini("g3", "three", s=6),
    )
    s = load(data)
    assert [m.blocks[0].data["text"] for m in live(s)] == ["first", "one", "instead", "three"]
    gone = [m for m in s.messages if m.hidden]
    assert [m.blocks[0].data["text"] for m in gone] == ["second", "two"]
    assert all("$rewindTo on line 6" in m.meta["hidden_reason"] for m in gone)
    assert s.export_bytes() == data


def test_rewind_to_an_unknown_id_clears_the_chat_as_gemini_cli_does():
    data = jsonl(
        header(), user("u1", "a"), gemini("g1", "b"), {"$rewindTo": "nope"}, user("u2", "c")
    )
    s = load(data)
    assert [m.blocks[0].data["text"] for m in live(s)] == ["c"]


def test_a_messages_set_replaces_the_whole_conversation():
    data = jsonl(
        header(),
        user("u1", "old"),
        gemini("g1", "old answer"),
        {"$set": {"messages": [user("u1", "kept"), gemini("g9", "new answer")]}},
        user("u2", "next", s=5),
    )
    s = load(data)
    assert [m.blocks[0].data["text"] for m in live(s)] == ["kept", "new answer", "next"]
    assert live(s)[1].blocks[0].src == {"line": 4, "path": "/$set/messages/1/content"}
    assert [m.meta["hidden_reason"] for m in s.messages if m.hidden] == [
        "left out of the messages $set on line 4"
    ]


def test_records_gemini_cli_does_not_send_are_hidden():
    data = jsonl(
        header(),
        user("c1", "<session_context>\nThis is the Gemini CLI.</session_context>"),
        user("u1", "/help"),
        {"id": "i1", "timestamp": T.format(2), "type": "info", "content": "Resuming chat"},
        {"id": "e1", "timestamp": T.format(2), "type": "error", "content": "quota"},
        user("u2", "real question"),
        gemini("g1", "answer"),
    )
    s = load(data)
    assert [m.blocks[0].data["text"] for m in live(s)] == ["real question", "answer"]
    assert sum(m.hidden for m in s.messages) == 4
    assert found(s) == []


def test_calls_and_responses_without_ids_pair_by_name_in_order():
    data = jsonl(
        header(),
        user("u1", "read both"),
        gemini("g1", calls=[call(None, "read_file", None), call(None, "read_file", None)]),
        responses("r1", response(None, "read_file", "A"), response(None, "read_file", "B")),
        gemini("g2", "done", s=4),
    )
    s = load(data)
    uses = [b for b in live(s)[1].blocks]
    results = [b for b in live(s)[2].blocks]
    assert [b.tool_id for b in uses] == [b.tool_id for b in results]
    assert uses[0].tool_id != uses[1].tool_id
    assert found(s) == []


def test_a_response_without_id_and_no_call_is_an_orphan():
    data = jsonl(
        header(),
        user("u1", "hi"),
        gemini("g1", "text only"),
        responses("r1", response(None, "glob", "x")),
        gemini("g2", "ok", s=4),
    )
    assert found(load(data)) == [("orphan-tool-result", "error", found_id(load(data)), 2)]


def found_id(session) -> str:
    return next(f.tool_use_id for f in analyze(session).findings)


def test_thoughts_are_thinking_blocks_that_are_not_sent():
    data = jsonl(
        header(),
        user("u1", "hi"),
        gemini("g1", "answer", thoughts=[{"subject": "Plan", "description": "say hi"}]),
        gemini("g2", [{"text": "only a thought", "thought": True}], s=3),
    )
    s = load(data)
    assert [(b.type, b.data.get("thinking")) for b in live(s)[1].blocks][0] == (
        "thinking",
        "**Plan** say hi",
    )
    assert s.messages[-1].hidden and "only thoughts" in s.messages[-1].meta["hidden_reason"]


def test_a_model_turn_with_an_empty_text_part_is_left_out_as_gemini_cli_does():
    data = jsonl(
        header(),
        user("u1", "go"),
        gemini("g1", [{"text": ""}], calls=[call("ls__1", "ls")]),
        gemini("g2", "done", s=4),
    )
    s = load(data)
    hidden = [m for m in s.messages if m.hidden]
    assert hidden and "empty part" in hidden[0].meta["hidden_reason"]
    # what Gemini CLI 0.61 then sends (measured): user ["go", response 1], model "done"
    assert [[(b.type, b.tool_id) for b in m.blocks] for m in live(s)] == [
        [("text", None), ("tool_result", "1")],
        [("text", None)],
    ]
    assert [f[0] for f in found(s)] == ["orphan-tool-result", "tool-result-not-first"]


def test_every_chat_round_trips_byte_for_byte():
    for path in [*CHATS, SAMPLE]:
        s = load_session(str(path))
        assert s.format == "gemini-cli", path
        assert s.export_bytes() == path.read_bytes(), path


def test_crlf_and_missing_final_newline_round_trip_and_are_kept_on_fix():
    data = (DATA / "clean_seed.jsonl").read_bytes().rstrip(b"\n").replace(b"\n", b"\r\n")
    s = load(data)
    assert s.export_bytes() == data
    out = fix(s)
    assert b"\r\n" in out and not out.endswith(b"\n") and b"\n" not in out.replace(b"\r\n", b"")


@pytest.mark.parametrize("nl", [b"\n", b"\r\n"])
def test_a_fixed_chat_ends_in_one_newline_as_read(nl):
    data = (DATA / "clean_seed.jsonl").read_bytes().rstrip(b"\n").replace(b"\n", nl) + nl
    out = fix(load(data))
    assert out != data and out.endswith(nl) and not out.endswith(nl + nl)
    assert out.count(nl) == len(out.split(nl)) - 1 == len(records(out.replace(b"\r", b"")))


# ------------------------------------------------------------------ fixes


def test_fix_keeps_one_copy_of_each_response_in_the_user_record():
    src = (DATA / "clean_seed.jsonl").read_bytes()
    s = load(src)
    out = fix(s)
    before, after = src.splitlines(), out.splitlines()
    assert len(after) == len(before)
    changed = [i + 1 for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert changed == [7, 8, 12, 13]  # the two gemini records and their two responses records
    recs = {r["id"]: r for r in records(out) if "id" in r}
    for r in recs.values():
        for tc in r.get("toolCalls") or ():
            assert "result" not in tc and tc["id"].startswith(tc["name"] + "__")
        if r["type"] == "user" and isinstance(r["content"], list):
            for p in r["content"]:
                if "functionResponse" in p:  # the id Gemini CLI sends: no name__ prefix
                    assert not p["functionResponse"]["id"].startswith("read_file__")
                    assert not p["functionResponse"]["id"].startswith("list_directory__")
    again = load(out)
    assert found(again) == []
    assert fix(again) == out  # fixing twice changes nothing


def test_orphan_call_gets_an_error_response_in_its_turn():
    s = load_session(str(DATA / "orphan_call.jsonl"))
    # numbered as the Gemini API receives it: the session context record is not sent, so
    # the first response turn is contents[2] (the recorded request's number too)
    assert found(s) == [
        ("duplicate-tool-result", "error", "list_directory_1795434258819_0", 2),
        ("orphan-tool-use", "error", "read_file_1795434258951_1", 3),
        ("duplicate-tool-result", "error", "read_file_1795434258949_0", 4),
    ]
    out = fix(s)
    resp = records(out)[12]
    assert resp["type"] == "user"
    parts = [p["functionResponse"] for p in resp["content"]]
    assert [p["id"] for p in parts] == ["read_file_1795434258949_0", "read_file_1795434258951_1"]
    assert parts[1]["name"] == "read_file"
    assert parts[1]["response"]["error"].startswith("[histview] No result")
    assert found(load(out)) == []


def test_response_without_a_call_is_dropped_and_kept_in_the_report():
    s = load_session(str(DATA / "orphan_response.jsonl"))
    assert ("orphan-tool-result", "error", "glob_1795434258700_0", 2) in found(s)  # contents[2]
    fixed, applied = apply_all(s)
    dropped = [e.removed for f in applied for e in f.edits if e.has_removed]
    assert any(d.get("tool_use_id") == "glob_1795434258700_0" for d in dropped)
    out = fixed.export_bytes()
    assert b"glob" not in out
    assert found(load(out)) == []


def test_trailing_call_gets_a_responses_record_right_after_its_call():
    src = (DATA / "trailing_call.jsonl").read_bytes()
    s = load(src)
    assert [f[:3] for f in found(s)][1:] == [
        ("pending-tool-use", "error", "read_file_1795434258949_0"),
        ("pending-tool-use", "error", "read_file_1795434258951_1"),
    ]
    out = fix(s)
    recs = records(out)
    new = recs[-1]
    assert new["type"] == "user" and new["timestamp"] == recs[-2]["timestamp"]
    assert [p["functionResponse"]["id"] for p in new["content"]] == [
        "read_file_1795434258949_0",
        "read_file_1795434258951_1",
    ]
    assert out.startswith(b"\n".join(src.splitlines()[:6]))
    # nothing the Gemini API refuses; under the gemini-cli target, a warning that Gemini CLI
    # closes the history with its own "interrupted" model turn (measured), nothing to fix
    assert found(load(out)) == [("trailing-tool-results", "warning", None, 4)]
    assert [f.code for f in analyze(load(out), "gemini").findings] == []
    assert fix(load(out)) == out
    assert fix(load(src)) == out  # deterministic: the same id and bytes every time


def test_doubled_history_saved_back_by_a_resume_is_fixed_inside_its_messages_set():
    src = SAMPLE.read_bytes()
    s = load(src)
    codes = [f[0] for f in found(s)]
    assert codes == ["duplicate-tool-result"] * 8
    out = fix(s)
    before, after = src.splitlines(), out.splitlines()
    assert [i + 1 for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b] == [18]
    msgs = records(out)[17]["$set"]["messages"]
    turns = [m for m in msgs if m["type"] == "user" and "functionResponse" in json.dumps(m)]
    assert [len(m["content"]) for m in turns] == [1, 2]
    assert found(load(out)) == []


def test_legacy_json_chat_is_fixed_in_its_own_style():
    path = DATA / "legacy_chat.json"
    s = load_session(str(path))
    assert [f.source.to_json() for f in analyze(s).findings] == [
        {"path": "/messages/3/content/0"},
        {"path": "/messages/5/content/0"},
        {"path": "/messages/5/content/1"},
    ]
    out = fix(s)
    assert out.startswith(b'{\n  "sessionId"') and not out.endswith(b"\n")
    assert found(load_bytes(out, path="chat.json")) == []


def test_duplicate_call_id_is_renamed_with_its_name_prefix_and_its_response():
    data = jsonl(
        header(),
        user("u1", "ls twice"),
        gemini("g1", calls=[call("ls__c1", "ls", None)]),
        responses("r1", response("ls__c1", "ls", "a")),
        gemini("g2", calls=[call("ls__c1", "ls", None)], s=4),
        responses("r2", response("ls__c1", "ls", "b"), s=5),
        gemini("g3", "done", s=6),
    )
    s = load(data)
    assert [f[0] for f in found(s)] == ["duplicate-tool-use-id"]
    recs = records(fix(s))
    assert recs[4]["toolCalls"][0]["id"] == "ls__c1_hv2"
    assert recs[5]["content"][0]["functionResponse"]["id"] == "c1_hv2"
    assert recs[2:4] == records(data)[2:4]


def test_malformed_lines_are_reported_kept_and_dropped_only_when_asked(tmp_path):
    good = jsonl(header(), user("u1", "hi"), gemini("g1", "yes"))
    data = good + b'{"id":"u2","type":"user","content":[{"te\n'
    s = load(data)
    bad = [m for m in s.messages if m.malformed]
    assert len(bad) == 1 and "line 4" in bad[0].malformed
    assert [(f.code, f.source.to_json()) for f in analyze(s).findings] == [
        ("malformed", {"line": 4})
    ]
    src = tmp_path / "chat.jsonl"
    src.write_bytes(data)
    out = io.StringIO()
    code = main(["fix", str(src), "-o", str(tmp_path / "a.jsonl")], stdout=out, stderr=out)
    assert code == 2 and not (tmp_path / "a.jsonl").exists()
    assert fix(s, malformed="drop") == good


@pytest.mark.parametrize(
    ("rec", "why"),
    [
        ({"id": "x", "type": "user", "content": 5}, "content is a number"),
        ({"id": "x", "type": "gemini", "content": "", "toolCalls": "ls"}, "toolCalls is a string"),
        (
            {"id": "x", "type": "gemini", "content": "", "toolCalls": [1]},
            "toolCalls[0] is a number",
        ),
        ({"id": "x", "content": "no type"}, "no type"),
        (
            {"id": "x", "type": "gemini", "content": "", "toolCalls": [{"id": "c", "result": 5}]},
            "toolCalls[0].result is a number, not parts or a string",
        ),
    ],
)
def test_records_of_the_wrong_shape_are_malformed_with_the_reason(rec, why):
    s = load(jsonl(header(), user("u1", "hi"), rec))
    (bad,) = [m for m in s.messages if m.malformed]
    assert why in bad.malformed and bad.src == {"line": 3}


def test_a_chat_of_only_its_header_loads_empty():
    data = jsonl(header())
    s = load(data)
    assert s.format == "gemini-cli" and s.messages == [] and s.export_bytes() == data


# ------------------------------------------------------------------ detection


def probe(data: bytes):
    return detect(probe_bytes(data, path="x"))


def test_gemini_cli_chats_are_not_read_by_other_adapters():
    for path in [*CHATS, SAMPLE]:
        assert probe(path.read_bytes()).name == "gemini-cli", path


def test_other_formats_are_not_read_as_gemini_cli():
    samples = SAMPLES
    for path in samples.glob("*.json*"):
        if path.name.startswith("gemini_cli"):
            continue
        assert probe(path.read_bytes()).name != "gemini-cli", path


def test_check_and_fix_on_the_command_line(tmp_path):
    out = io.StringIO()
    code = main(["check", str(DATA / "orphan_call.jsonl")], stdout=out, stderr=out)
    assert code == 1
    assert ":12: error orphan-tool-use tool_use read_file_1795434258951_1" in out.getvalue()
    dest = tmp_path / "fixed.jsonl"
    code = main(["fix", str(DATA / "orphan_call.jsonl"), "-o", str(dest)], stdout=out, stderr=out)
    assert code == 0 and dest.exists()


def test_a_fix_in_a_chat_without_ids_writes_the_ids_on_both_sides():
    src = DATA / "no_ids.jsonl"
    s = load_session(str(src))
    # Gemini CLI pairs the first copy by name; the second copy answers no call it knows
    assert [f[0] for f in found(s)] == ["orphan-tool-result"] * 3
    out = fix(s)
    calls = [tc for r in records(out) for tc in r.get("toolCalls") or ()]
    parts = [
        p["functionResponse"]
        for r in records(out)
        if r.get("type") == "user" and isinstance(r["content"], list)
        for p in r["content"]
        if "functionResponse" in p
    ]
    assert [tc["id"] for tc in calls] == [
        f"{tc['name']}__{p['id']}" for tc, p in zip(calls, parts, strict=True)
    ]
    assert all(p["id"].startswith("synth_") for p in parts)
    assert found(load(out)) == [] and fix(load(out)) == out


def test_lone_surrogates_and_huge_numbers_survive_a_rewritten_record():
    src = (DATA / "clean_seed.jsonl").read_bytes()
    odd = src.replace(b"alpha\\n", b"alpha \\ud800\\n", 1)
    odd = odd.replace(b'"input":10,', b'"input":9007199254740993123,')
    assert odd.count(b"\\ud800") == 1 and odd.count(b"9007199254740993123") == 5
    out = fix(load(odd))
    assert out != odd
    assert out.count(b"alpha \\ud800\\n") == 1 and out.count(b"9007199254740993123") == 5
    out.decode("utf-8")  # still valid UTF-8
    again = load(out)
    assert found(again) == [] and again.export_bytes() == out


def test_writing_twice_gives_the_same_bytes():
    s = load_session(str(DATA / "trailing_call.jsonl"))
    fixed, _ = apply_all(s)
    assert fixed.export_bytes() == fixed.export_bytes()


@pytest.mark.parametrize("name", ["chat.jsonl", "chat.json"])
def test_every_record_a_fix_deletes_or_rewrites_is_in_the_report_whole(tmp_path, name):
    """A repaired turn's records lose the stored copies of its responses and the `name__`
    prefix of its ids; a response left alone in its record drops the record (its id with
    it): the report keeps each such record as read, numbers exactly (found by the fuzzer)."""
    recs = [
        header(),
        user("u1", "ls"),
        gemini("g1", calls=[call("ls__c1", "ls", "files", args={"n": "@N"})]),
        responses("r1", response("ls__c1", "ls", "files"), response("ls__c1", "ls", "again")),
        responses("r2", response("zz__c9", "zz", "nobody asked")),
        gemini("g2", "done", s=4),
    ]
    if name.endswith(".jsonl"):
        data = jsonl(*recs)
    else:
        data = json.dumps({**recs[0], "messages": recs[1:]}, indent=2).encode()
    src = tmp_path / name
    src.write_bytes(data.replace(b'"@N"', b"1e400"))
    out = io.StringIO()
    code = main(["fix", str(src), "-o", str(tmp_path / ("out" + src.suffix))], stdout=out)
    assert code == 0, out.getvalue()
    report_bytes = (tmp_path / "out.report.json").read_bytes()
    report = json.loads(report_bytes)
    kept = {d["record"]["id"]: d for d in report["dropped_records"]}
    assert kept["r2"]["outcome"] == "deleted"
    assert kept["g1"]["outcome"] == "rewritten"
    assert kept["g1"]["record"]["toolCalls"][0]["result"][0]["functionResponse"]["id"] == "ls__c1"
    assert b'"n": 1e400' in report_bytes
    where = "line" if name.endswith(".jsonl") else "path"
    assert all(where in d for d in report["dropped_records"])


def test_responses_sent_with_a_turn_gemini_cli_leaves_out_are_written_before_it():
    """In empty_model_text.jsonl the second call turn is left out and its responses are sent
    with the first turn's. With the first turn's responses record dropped (malformed), the
    first response was written into the later responses record, after the left-out turn:
    the two model turns became neighbours, both were left out, and a second fix dropped the
    response (found by the fuzzer). It goes into a record of its own after its call."""
    lines = (DATA / "empty_model_text.jsonl").read_bytes().splitlines()
    rec = json.loads(lines[7])
    assert rec["type"] == "user" and "functionResponse" in rec["content"][0]
    del rec["type"]
    lines[7] = json.dumps(rec, separators=(",", ":")).encode()
    s = load(b"\n".join(lines) + b"\n")
    out = fix(s, malformed="drop")
    again = load(out)
    calls = [b.tool_id for m in live(again) for b in m.blocks if b.type == "tool_use"]
    assert calls == ["list_directory_1795434258819_0"]
    assert [f[0] for f in found(again)] == []
    assert fix(again) == out


def test_responses_are_written_before_the_text_of_their_message():
    """A user text record between a call turn and its responses record is sent merged with
    them: [copy of the response, text, response]. The kept response was written into the
    responses record after the text, so the written file sent [text, response] and a second
    fix reordered it (found by the fuzzer): it goes into a record of its own before the text."""
    data = jsonl(
        header(),
        user("u1", "ls"),
        gemini("g1", calls=[call("ls__c1", "ls", "files")]),
        user("u2", "and then?", s=3),
        responses("r1", response("ls__c1", "ls", "files"), s=4),
        gemini("g2", "done", s=5),
    )
    s = load(data)
    assert [f[0] for f in found(s)] == ["duplicate-tool-result", "tool-result-not-first"]
    out = fix(s)
    again = load(out)
    assert [b.type for b in live(again)[2].blocks] == ["tool_result", "text"]
    assert found(again) == [] and fix(again) == out
