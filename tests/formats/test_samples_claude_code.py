"""The Claude Code sample sessions: histview finds exactly the incident each reproduces, at
its line; `fix` writes records Claude Code resumes (a new result record on the chain, the old
child re-linked, no new leaf); every untouched line keeps its bytes."""

from __future__ import annotations

import io
import json
import re

from repair.analysis import analyze
from repair.cli import main
from repair.formats import load_bytes, load_session
from repair.formats.claude_code.chain import build_graph, candidates, newest, walk
from repair.formats.claude_code.write import _iso
from repair.model import SYNTHETIC_RESULT_TEXT
from repair.plan import apply_all
from tests.paths import SAMPLES

PARALLEL = SAMPLES / "claude_code_parallel_interrupted.jsonl"
DUPLICATE = SAMPLES / "claude_code_duplicate_id_after_resume.jsonl"

TESTS_ID = "toolu_01rLGlkoMXGjtEkDnNfribxU"  # npm test, never answered
EDIT_ID = "toolu_016YytwMe4LbyoVFz8uZdZv8"  # the Edit written twice


def records(data: bytes) -> list[dict]:
    return [json.loads(x) for x in data.splitlines()]


def resumed_chain(data: bytes) -> list[dict]:
    """The records Claude Code walks on `--resume <file>`: from the newest non-sidechain
    leaf up the parentUuid links (no recovery pass)."""
    probe_lines = load_bytes(data, path="x.jsonl").state.file.lines
    g = build_graph(probe_lines)
    leaf = newest(g, [u for u in candidates(g) if not g.nodes[u].sidechain])
    return [g.obj(u) for u in walk(g, leaf).chain]


def findings(session, target=None) -> list[tuple]:
    return [
        (f.code, f.severity, f.message_index, f.tool_use_id, f.source.to_json())
        for f in analyze(session, target).findings
    ]


# ------------------------------------------------------------------ interrupted parallel call


def test_parallel_sample_reports_the_unanswered_call_at_its_line():
    s = load_session(str(PARALLEL))
    # Claude Code 2.1.197 leaves the unanswered call out when it resumes: a warning under
    # the client, an error for the raw history (another reader, the Anthropic API)
    assert findings(s) == [("orphan-tool-use", "warning", 1, TESTS_ID, {"line": 4})]
    (f,) = analyze(s).findings
    assert f.client_repair and f.client_repair.startswith("Claude Code 2.1.197 leaves")
    assert f.client_repair in f.detail
    assert findings(s, "anthropic") == [("orphan-tool-use", "error", 1, TESTS_ID, {"line": 4})]
    assert analyze(s, "anthropic").findings[0].client_repair is None
    # the type checker's result (line 7) hangs off its call (line 6), off the resumed chain:
    # it belongs to the turn all the same (Claude Code's recovery pass), it is no fork
    chain_lines = [r["uuid"] for r in resumed_chain(PARALLEL.read_bytes())]
    recs = records(PARALLEL.read_bytes())
    assert recs[6]["uuid"] not in chain_lines and recs[5]["uuid"] not in chain_lines
    turn = s.messages[2]
    assert [b.src["line"] for b in turn.blocks] == [7, 8, 10]
    assert not any(m.hidden for m in s.messages)


def test_parallel_sample_fix_writes_a_result_record_claude_code_resumes():
    data = PARALLEL.read_bytes()
    s = load_session(str(PARALLEL))
    fixed, applied = apply_all(s)
    assert [(f.code, f.action) for f in applied] == [("orphan-tool-use", "insert-result")]
    out = fixed.export_bytes()
    before, after = records(data), records(out)
    assert len(after) == len(before) + 1

    old_uuids = {r.get("uuid") for r in before}
    (new,) = [r for r in after if r.get("uuid") not in old_uuids]
    calls = {
        r["message"]["content"][0]["id"]: r
        for r in before
        if r.get("type") == "assistant" and r["message"]["content"][0]["type"] == "tool_use"
    }
    last_call = before[5]  # the third parallel call, the last line of the group
    # a user record in Claude Code's format: compact, parentUuid first, envelope copied
    assert list(new)[0] == "parentUuid" and new["parentUuid"] == last_call["uuid"]
    assert list(new) == list(before[6])  # same keys, same order as its neighbour
    assert {k: new[k] for k in ("sessionId", "version", "cwd", "gitBranch", "slug")} == {
        k: last_call[k] for k in ("sessionId", "version", "cwd", "gitBranch", "slug")
    }
    assert new["message"]["content"] == [
        {
            "tool_use_id": TESTS_ID,
            "type": "tool_result",
            "content": SYNTHETIC_RESULT_TEXT,
            "is_error": True,
        }
    ]
    assert new["toolUseResult"] == SYNTHETIC_RESULT_TEXT
    assert new["sourceToolAssistantUUID"] == calls[TESTS_ID]["uuid"]
    assert re.fullmatch(
        r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", new["uuid"]
    )
    # it opens the turn's user message: written with that message's time (its first
    # result record's, its child's), which the message keeps
    assert new["timestamp"] == before[6]["timestamp"] == "2026-03-11T09:14:11.870Z"
    assert (
        out.splitlines()[6] == json.dumps(new, ensure_ascii=False, separators=(",", ":")).encode()
    )

    # Claude Code's plain walk from the leaf now sees the whole turn: the calls, the new
    # result, then the two results in the order they were written
    chain = resumed_chain(out)
    uuids = [r["uuid"] for r in chain]
    at = uuids.index(new["uuid"])
    assert uuids[at - 3 : at] == [r["uuid"] for r in before[3:6]]  # the three calls
    after_new = [r["message"]["content"][0].get("tool_use_id") for r in chain[at + 1 : at + 3]]
    assert after_new == [
        before[6]["message"]["content"][0]["tool_use_id"],
        before[7]["message"]["content"][0]["tool_use_id"],
    ]
    # the prompt that followed is re-linked to the end of that run; no new leaf
    prompt = next(r for r in after if r.get("uuid") == before[9]["uuid"])
    assert prompt["parentUuid"] == chain[at + 2]["uuid"]
    assert len(candidates(build_graph(load_bytes(out, path="x").state.file.lines))) == 1

    # lines not touched keep their bytes; touched ones change only their parentUuid
    old_lines, new_lines = data.splitlines(), out.splitlines()
    assert new_lines[:6] == old_lines[:6] and new_lines[11:] == old_lines[10:]
    assert new_lines[9] == old_lines[8]  # the file-history-snapshot
    for k in (7, 8, 10):
        rec = json.loads(new_lines[k])
        orig = next(r for r in before if r.get("uuid") == rec["uuid"])
        assert {**rec, "parentUuid": None} == {**orig, "parentUuid": None}

    again = load_bytes(out, path=str(PARALLEL))
    assert analyze(again).findings == []
    assert again.state.recovered == 0
    assert apply_all(again)[1] == []  # fixing the fixed file changes nothing


def test_parallel_sample_fix_through_the_command_line(tmp_path):
    target = tmp_path / "session.jsonl"
    target.write_bytes(PARALLEL.read_bytes())
    out, err = io.StringIO(), io.StringIO()
    assert main(["fix", str(target), "--in-place"], stdout=out, stderr=err) == 0, err.getvalue()
    assert (tmp_path / "session.jsonl.bak").read_bytes() == PARALLEL.read_bytes()
    out = io.StringIO()
    assert main(["check", str(target)], stdout=out, stderr=io.StringIO()) == 0
    assert "no problems" in out.getvalue()


# ------------------------------------------------------------------ duplicate id after resume


def test_duplicate_sample_reports_the_repeated_tool_use_id():
    s = load_session(str(DUPLICATE))
    # Claude Code 2.1.197 leaves the repeated call out when it sends (a warning); the raw
    # history is refused by the Anthropic API ("tool_use ids must be unique")
    assert findings(s) == [("duplicate-tool-use-id", "warning", 9, EDIT_ID, {"line": 14})]
    assert findings(s, "anthropic") == [
        ("duplicate-tool-use-id", "error", 9, EDIT_ID, {"line": 14})
    ]
    # the summary points into another session file: not a fault, passed through
    assert records(DUPLICATE.read_bytes())[0]["type"] == "summary"


def test_duplicate_sample_fix_renames_the_later_call_and_its_result_only():
    data = DUPLICATE.read_bytes()
    fixed, applied = apply_all(load_session(str(DUPLICATE)))
    assert [(f.code, f.action) for f in applied] == [("duplicate-tool-use-id", "rename")]
    out = fixed.export_bytes()
    old_lines, new_lines = data.splitlines(), out.splitlines()
    changed = [k + 1 for k, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b]
    assert changed == [14, 15]
    call, res = json.loads(new_lines[13]), json.loads(new_lines[14])
    new_id = call["message"]["content"][0]["id"]
    assert new_id != EDIT_ID and re.fullmatch(r"[A-Za-z0-9_-]+", new_id)
    assert res["message"]["content"][0]["tool_use_id"] == new_id
    # nothing but the id changed in those records
    for k in (13, 14):
        a, b = json.loads(old_lines[k]), json.loads(new_lines[k])
        assert json.dumps(a).replace(EDIT_ID, new_id) == json.dumps(b)
    again = load_bytes(out, path=str(DUPLICATE))
    assert analyze(again).findings == []


def test_sample_timestamps_and_iso_format_match_claude_code():
    for path in (PARALLEL, DUPLICATE):
        for r in records(path.read_bytes()):
            if "timestamp" in r and "uuid" in r:
                assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", r["timestamp"])
    assert _iso(1773220446392.0) == "2026-03-11T09:14:06.392Z"


def test_samples_are_described_in_the_readme():
    text = (SAMPLES / "README.md").read_text(encoding="utf-8")
    section = text.split("## Claude Code samples", 1)[1].split("\n## ", 1)[0]
    for path in (PARALLEL, DUPLICATE):
        assert f"`{path.name}` — " in section
