"""`broken-chain` (issue 10 point 7): a Claude Code record whose parentUuid names a record
that is not in the file. Measured with Claude Code 2.1.197 (docs/clients.md "Gaps in the
chain"): it bridges a gap to the record stamped within 5 s before, else it resumes only what
follows. Checked on a real corpus file with one record removed, and on the recorded broken
files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repair.analysis import analyze
from repair.formats import load_bytes, load_session
from repair.plan import Choices
from repair.workbench import Workbench
from tests.paths import CLIENT_FIXTURES, CORPUS, FIXTURES
from tui.cli import main

REAL = (
    CORPUS
    / "claude_code"
    / "ccl_thinking_hooks_v2.1.42"
    / "03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"
)
BROKEN = CLIENT_FIXTURES / "claude" / "broken"
REQUESTS = CLIENT_FIXTURES / "claude"

needs_corpus = pytest.mark.skipif(not REAL.is_file(), reason="../shared corpus absent")


def without_line(n: int, tmp_path: Path) -> Path:
    """The real file with its line `n` (1-based) lost."""
    lines = REAL.read_bytes().split(b"\n")
    del lines[n - 1]
    out = tmp_path / f"lost_{n}.jsonl"
    out.write_bytes(b"\n".join(lines))
    return out


def uuid_of(path: Path, n: int) -> str:
    return json.loads(path.read_bytes().split(b"\n")[n - 1])["uuid"]


def live(session) -> int:
    return sum(1 for m in session.messages if m.live)


def sent_by_claude_code(case: str) -> int:
    """Messages of the recorded request that come from the file (the client adds the
    first context reminder into the first message, and the new prompt)."""
    msgs = json.loads((REQUESTS / f"{case}.json").read_text())["request"]["messages"]
    return len(msgs) - 1


@needs_corpus
def test_a_record_lost_mid_turn_cuts_the_chain_and_the_fix_relinks_it(tmp_path, capsys):
    # line 47 is a thinking record; the next record (line 48, 10 s later) names it
    path = without_line(47, tmp_path)
    missing = uuid_of(REAL, 47)
    s = load_session(str(path))
    (f,) = analyze(s).findings
    assert (f.code, f.severity) == ("broken-chain", "warning")
    assert missing in f.detail and f.client_repair is None
    # the messages the link brings back (the branch abandoned by a rewind stays out)
    assert "the 9 messages before the gap (lines 3-45) are cut off and not sent" in f.detail
    assert live(s) == 4  # Claude Code 2.1.197 sent these 4 (measured)
    # the fix points the record at the one before it in the file, and nothing else changes
    out = tmp_path / "fixed.jsonl"
    assert main(["fix", str(path), "-o", str(out)]) == 0
    capsys.readouterr()
    before, after = path.read_bytes().split(b"\n"), out.read_bytes().split(b"\n")
    changed = [k for k, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert changed == [46]  # line 47 of the damaged file
    rec = json.loads(after[46])
    assert rec["parentUuid"] == uuid_of(path, 46) and rec["uuid"] == uuid_of(REAL, 48)
    again = load_session(str(out))
    assert analyze(again).findings == [] and live(again) == 13  # as Claude Code resumed it


@needs_corpus
def test_a_gap_claude_code_bridges_is_a_warning_that_says_so_and_the_fix_writes_the_link(
    tmp_path, capsys
):
    # line 46 is a whitespace-only record stamped 2.9 s after the prompt before it
    path = without_line(46, tmp_path)
    s = load_session(str(path))
    (f,) = analyze(s).findings
    assert f.code == "broken-chain" and f.severity == "warning"
    assert f.client_repair.startswith("Claude Code 2.1.197 re-links the record")
    assert "goes on with line 45, stamped 2.9 s before it" in f.detail
    assert live(s) == 13  # all of it, as Claude Code 2.1.197 sent it (measured)
    raw = analyze(s, "anthropic")
    (g,) = raw.findings
    assert g.code == "broken-chain" and g.severity == "warning" and g.client_repair is None
    wb = Workbench(s)
    (fix,) = wb.plan.actionable
    assert fix.action == "relink"
    pv = wb.preview(fix)
    (rec,) = pv.records  # the one line whose parentUuid is written
    assert rec.new["parentUuid"] == uuid_of(path, 45) != rec.old["parentUuid"]
    wb.apply(fix)
    assert wb.analysis.findings == [] and live(wb.session) == 13
    assert wb.read_back().counts() == {"error": 0, "warning": 0, "info": 0}


@needs_corpus
@pytest.mark.parametrize("lost", [45, 52])
def test_a_lost_prompt_is_ambiguous_and_left_as_it_is(tmp_path, lost):
    path = without_line(lost, tmp_path)
    wb = Workbench(load_session(str(path)))
    (fix,) = wb.plan.fixes
    assert fix.code == "broken-chain" and fix.action == "relink" and not fix.edits
    assert "the gap is ambiguous: the lost record was a prompt" in fix.detail
    assert wb.plan.actionable == []


@pytest.mark.parametrize(
    ("case", "bridged"), [("broken-chain-bridged", True), ("broken-chain-cut", False)]
)
def test_the_view_is_what_claude_code_sent(case, bridged):
    s = load_session(str(BROKEN / f"{case}.jsonl"))
    assert live(s) == sent_by_claude_code(f"broken-{case}")
    (f,) = analyze(s).findings
    assert f.code == "broken-chain" and bool(f.client_repair) == bridged
    fixed = Workbench(s)
    fixed.apply_all()
    assert fixed.analysis.findings == []
    assert live(fixed.session) == 6  # the whole conversation, the lost record aside


def test_the_relink_is_undone_exactly(tmp_path):
    data = (BROKEN / "broken-chain-cut.jsonl").read_bytes()
    s = load_bytes(data, path=str(tmp_path / "s.jsonl"))
    wb = Workbench(s)
    res = wb.apply(wb.plan.actionable[0])
    assert res.changed == {None: None}  # messages came back: every row is rebuilt
    assert live(wb.session) == 6
    wb.undo()
    assert wb.session is s and live(wb.session) == 4


def test_a_gap_in_an_inline_sidechain_is_shown_and_left_as_it_is():
    """An inline sidechain is written with its main conversation: its gap is a finding of
    the thread, whose fix changes nothing (the main conversation is untouched)."""
    from tests.claude_code_records import U, assistant, jsonl, result, text, tool_use, user

    recs = [
        user(1, None, "make a task", 1),
        assistant(2, 1, "msg_A", tool_use("toolu_T", "task"), 2),
        user(4, None, "list files", 3, isSidechain=True),
        assistant(5, 4, "msg_S", text("listing"), 4, isSidechain=True),
        assistant(6, 99, "msg_S2", text("after a lost record"), 40, isSidechain=True),
        result(3, 2, "toolu_T", "task done", 41),
        assistant(8, 3, "msg_B", text("done"), 42),
    ]
    s = load_bytes(jsonl(recs), path="/tmp/s.jsonl")
    assert analyze(s).findings == []
    wb = Workbench(s)
    # the record after the gap starts a sidechain thread of its own
    (k,) = [k for k in range(len(s.threads)) if wb.analysis_of(k).findings]
    (f,) = wb.analysis_of(k).findings
    assert f.code == "broken-chain" and U(99) in f.detail
    (fix,) = wb.plan_of(k).fixes
    assert not fix.edits and "inline sidechain is left as it is" in fix.detail


def _fix_twice(path: Path, tmp_path: Path, *extra: str) -> tuple[bytes, dict]:
    """`fix -o` then a second fix of its output: the output, the report; the second fix
    must change nothing."""
    out, again = tmp_path / "out.jsonl", tmp_path / "again.jsonl"
    assert main(["fix", str(path), "-o", str(out), *extra]) == 0
    assert main(["fix", str(out), "-o", str(again)]) == 0
    assert again.read_bytes() == out.read_bytes()
    return out.read_bytes(), json.loads((tmp_path / "out.report.json").read_text())


def test_records_dropped_with_a_relink_stay_in_the_report_under_their_own_lines(tmp_path, capsys):
    """The relink writes the file and loads it again: what that write left out (the
    malformed record, the record its orphan result emptied) stays in the report, and every
    line keeps the number it has in the user's file (found by the fuzzer)."""
    lines = (BROKEN / "orphan-tool-result.jsonl").read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b'"uuid":', b'"uuidx":')  # line 3 loses its uuid
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines))
    dropped_uuid = json.loads(lines[3])["uuid"]  # line 4: the result of line 3's call
    written, report = _fix_twice(path, tmp_path, "--strategy", "malformed=drop")
    out = capsys.readouterr().out
    assert "broken-chain -> relink: Re-link line 4 to line 2" in out
    assert [(r["line"], r["outcome"]) for r in report["dropped_records"]] == [
        (3, "deleted"),
        (4, "deleted"),
        (7, "deleted"),
    ]
    assert [r["record"] for r in report["dropped_records"]] == [
        json.loads(lines[k]) for k in (2, 3, 6)
    ]
    assert dropped_uuid.encode() not in written


def test_after_a_relink_each_message_names_its_line_in_the_users_file(tmp_path):
    """The relink loads the written file again, numbering its lines as in the user's file:
    each message then names the line its record is on there, not its line in the write
    (which left two records out)."""
    lines = (BROKEN / "orphan-tool-result.jsonl").read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b'"uuid":', b'"uuidx":')  # line 3 loses its uuid
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines))
    records = {k + 1: json.loads(ln) for k, ln in enumerate(lines) if ln.strip()}
    line_of = {r["uuid"]: k for k, r in records.items() if "uuid" in r}
    wb = Workbench(load_session(str(path)), Choices())
    wb.apply_all()
    named = [
        (m.src["line"], line_of[m.raw["uuid"]])
        for m in wb.session.messages
        if isinstance(m.raw, dict) and m.raw.get("uuid") in line_of
    ]
    assert len(named) >= 6 and any(line > 4 for line, _ in named)
    assert all(line == was for line, was in named), named


def test_a_sidechain_fix_is_written_with_a_relink_of_the_main_chain(tmp_path, capsys):
    """A subagent-like file (every record a sidechain) whose chain crosses a gap, and a
    branch off the gap that only holds an orphan result: the relink of the chain and the
    drop of the orphan in the branch's thread are both written (the drop was lost when
    the relink loaded the file again; found by the fuzzer)."""
    from tests.claude_code_records import assistant, jsonl, result, text, tool_use, user

    side = {"isSidechain": True}
    recs = [
        user(1, None, "list files", 1, **side),
        assistant(2, 1, "msg_A", tool_use("toolu_A"), 2, **side),
        result(3, 2, "toolu_A", "a b c", 3, **side),
        assistant(4, 99, "msg_B", text("after a lost record"), 4, **side),
        result(5, 99, "toolu_GONE", "stale", 4.5, **side),
        user(6, 4, "thanks", 5, **side),
    ]
    path = tmp_path / "agent.jsonl"
    path.write_bytes(jsonl(recs))
    s = load_session(str(path))
    assert len(s.threads) == 1
    written, report = _fix_twice(path, tmp_path)
    out = capsys.readouterr().out
    assert "broken-chain -> relink" in out and "orphan-tool-result -> drop" in out
    assert b"toolu_GONE" not in written
    assert [(r["line"], r["record"]["uuid"]) for r in report["dropped_records"]] == [
        (5, recs[4]["uuid"])
    ]
    again = load_session(str(tmp_path / "out.jsonl"))
    assert analyze(again).findings == [] and again.threads == []


def test_a_relink_changes_only_its_record_when_another_holds_the_same_uuid(tmp_path, capsys):
    """Two records with one uuid, the second after a gap: the relink points that record at
    its new parent and leaves the other as it was (both were re-linked, and the first one's
    parentUuid was lost; found by the fuzzer)."""
    lines = (BROKEN / "consecutive-assistants.jsonl").read_bytes().split(b"\n")
    recs = [json.loads(ln) for ln in lines if ln.strip()]
    recs[9]["uuid"] = recs[8]["uuid"]
    del recs[7]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    written, report = _fix_twice(path, tmp_path)
    assert "broken-chain -> relink: Re-link line 9 to line 7" in capsys.readouterr().out
    out = [json.loads(ln) for ln in written.splitlines()]
    same = [r for r in out if r["uuid"] == recs[7]["uuid"]]
    assert [r["parentUuid"] for r in same] == [recs[7]["parentUuid"], recs[6]["uuid"]]


def test_a_gap_whose_record_a_fix_empties_moves_to_the_record_after_it(tmp_path, capsys):
    """bench/fuzz.py (seed 11): the gap's record (line 5, an orphan result) names a
    malformed record (line 6, whose parent is the prompt on line 3), and the record before
    it in the file (line 4) is its child: ambiguous. Once the orphan is dropped the write
    deletes line 5 and line 4 takes its parentUuid; the prompt before it is then a tip and
    the fix re-links line 4 to it in the same run (a second fix used to). Claude Code
    2.1.197 resumes the written file with the prompt and the answer (measured), the way
    the file read with line 5 dropped by hand resumes after its own re-link."""
    case = FIXTURES / "fuzz" / "claude_code_subagent_relink_after_a_drop.jsonl"
    path = tmp_path / "s.jsonl"
    path.write_bytes(case.read_bytes())
    wb = Workbench(load_session(str(path)), Choices(by_code={"malformed": "drop"}))
    (gap,) = [f for f in wb.plan.fixes if f.code == "broken-chain"]
    assert "line 4 descends from it" in gap.detail and not gap.edits
    wb.apply_all()
    assert [f.code for f in wb.applied] == ["orphan-tool-result", "malformed", "broken-chain"]
    assert "Re-link line 4 to line 3" in wb.applied[-1].detail
    out = tmp_path / "fixed.jsonl"
    assert main(["fix", str(path), "-o", str(out), "--strategy", "malformed=drop"]) == 0
    capsys.readouterr()
    lines = [json.loads(ln) for ln in out.read_bytes().splitlines()]
    assert [r.get("uuid") for r in lines[2:]] == [uuid_of(path, 3), uuid_of(path, 4)]
    assert lines[3]["parentUuid"] == uuid_of(path, 3)
    again = load_session(str(out))
    assert analyze(again).findings == [] and live(again) == 2
