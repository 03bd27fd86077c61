"""Every thread is fixed (issue 7 point 7): Claude Code inline sidechains and subagent files
are repaired with the session, the dry run names each thread, `-o` writes the subagent
files into OUT's own subagents folder, `--in-place` replaces each with its own backup, and
`fix` reads back what it wrote with check's pass over every thread (docs/threads.md)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from repair.formats import load_session
from tests.claude_code_records import (
    STRAY,
    agent_records,
    assistant,
    jsonl,
    main_records,
    result,
    session_with_subagents,
    text,
    tool_use,
    user,
)
from tests.command import run


def files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


# ------------------------------------------------------------------ inline sidechains


def test_an_inline_sidechain_fault_is_fixed_and_the_dry_run_names_the_thread(tmp_path):
    f = tmp_path / "s.jsonl"
    f.write_bytes(jsonl(main_records(sidechain_fault=True)))
    # Claude Code leaves the stray result out when it sends the thread (a warning); the raw
    # history is refused by the Anthropic API
    code, out, _ = run("check", str(f))
    assert code == 0 and "thread sidechain at line 3: 0 errors, 1 warning" in out
    code, out, _ = run("check", str(f), "--target", "anthropic")
    assert code == 1 and "thread sidechain at line 3: 1 error" in out

    code, out, _ = run("fix", str(f))
    lines = out.splitlines()
    assert code == 0
    assert lines[0] == (
        f"{f}:6: orphan-tool-result -> drop: Drop the tool_result toolu_gone from message 2 "
        "(kept in the report). (thread sidechain at line 3)"
    )
    assert "# thread sidechain at line 3" in lines
    assert lines[-1] == (
        f"{f}: dry run, nothing written: 1 fix; after them 0 errors, 0 warnings, 0 info in "
        "the conversation and its thread. Write with -o OUT or --in-place."
    )
    assert files(tmp_path) == ["s.jsonl"]


def test_fixing_an_inline_sidechain_writes_it_in_the_session_file(tmp_path):
    f = tmp_path / "s.jsonl"
    f.write_bytes(jsonl(main_records(sidechain_fault=True)))
    out_path = tmp_path / "fixed.jsonl"
    code, out, _ = run("fix", str(f), "-o", str(out_path))
    assert code == 0
    assert out.splitlines()[-1].endswith(
        "now 0 errors, 0 warnings, 0 info in the conversation and its thread"
    )
    code, out, _ = run("check", str(out_path))
    assert code == 0 and "thread sidechain at line 3: no problems" in out
    written = [json.loads(x) for x in out_path.read_bytes().splitlines()]
    assert b"toolu_gone" not in out_path.read_bytes() and len(written) == 8
    report = json.loads((tmp_path / "fixed.report.json").read_text())
    (thread,) = report["threads"]
    assert thread["thread"] == "sidechain at line 3" and thread["output"] == str(out_path)
    assert [e["removed"] for e in thread["edits"] if "removed" in e] == [STRAY]
    assert report["fixes"] == [] and thread["remaining"] == []


# ------------------------------------------------------------------ subagent files


def test_check_finds_the_subagent_fault_and_fix_repairs_it(tmp_path):
    main = session_with_subagents(tmp_path)
    code, out, _ = run("check", str(main))
    assert code == 0 and "thread subagent agent-a1 (Explore: look): 0 errors, 1 warning" in out
    code, out, _ = run("check", str(main), "--target", "anthropic")
    assert code == 1 and "thread subagent agent-a1 (Explore: look): 1 error" in out
    code, out, _ = run("fix", str(main))
    assert code == 0
    sub = tmp_path / "sess" / "subagents" / "agent-a1.jsonl"
    assert out.splitlines()[0] == (
        f"{sub}:3: orphan-tool-result -> drop: Drop the tool_result toolu_gone from message 2 "
        "(kept in the report). (thread subagent agent-a1 (Explore: look))"
    )


def test_output_gets_its_own_subagents_folder_with_every_subagent_file(tmp_path):
    main = session_with_subagents(tmp_path)
    before = {p: (tmp_path / p).read_bytes() for p in files(tmp_path)}
    code, out, _ = run("fix", str(main), "-o", str(tmp_path / "out.jsonl"))
    assert code == 0
    assert files(tmp_path) == sorted(
        [
            *before,
            "out.jsonl",
            "out.report.json",
            "out/subagents/agent-a1.jsonl",
            "out/subagents/agent-a1.meta.json",
            "out/subagents/agent-b2.jsonl",
        ]
    )
    assert all((tmp_path / p).read_bytes() == data for p, data in before.items())  # input kept
    mirror = tmp_path / "out" / "subagents"
    assert (mirror / "agent-b2.jsonl").read_bytes() == before["sess/subagents/agent-b2.jsonl"]
    assert (mirror / "agent-a1.meta.json").read_bytes() == before[
        "sess/subagents/agent-a1.meta.json"
    ]
    assert b"toolu_gone" not in (mirror / "agent-a1.jsonl").read_bytes()
    assert f"wrote {mirror / 'agent-a1.jsonl'} (thread subagent agent-a1 (Explore: look))" in out
    # what check says of the output is what fix said: every thread clean
    code, out, _ = run("check", str(tmp_path / "out.jsonl"))
    assert code == 0 and out.count("no problems") == 4  # the session, its sidechain, 2 agents


def test_in_place_replaces_only_the_subagent_file_with_its_own_backup(tmp_path):
    main = session_with_subagents(tmp_path)
    sub = tmp_path / "sess" / "subagents" / "agent-a1.jsonl"
    main_bytes, sub_bytes = main.read_bytes(), sub.read_bytes()
    code, out, _ = run("fix", str(main), "--in-place")
    assert code == 0
    assert out.splitlines()[-1] == (
        f"{main}: unchanged itself; 1 fix in its subagent files, report "
        f"{tmp_path / 'sess.report.json'}; now 0 errors, 0 warnings, 0 info in the "
        "conversation and its 3 threads"
    )
    assert main.read_bytes() == main_bytes and not (tmp_path / "sess.jsonl.bak").exists()
    assert Path(f"{sub}.bak").read_bytes() == sub_bytes
    assert b"toolu_gone" not in sub.read_bytes()
    code, out, _ = run("fix", str(main), "--in-place")
    assert code == 0 and "nothing to fix; the file is unchanged" in out


def test_fix_never_claims_clean_while_a_thread_keeps_an_error(tmp_path):
    main = session_with_subagents(tmp_path, bad=False)
    (tmp_path / "sess" / "subagents" / "agent-zz.jsonl").write_bytes(b"\x00\x01binary")
    code, out, _ = run("fix", str(main), "-o", str(tmp_path / "out.jsonl"))
    assert code == 1
    assert "now 1 error, 0 warnings, 0 info in the conversation and its 4 threads" in out
    assert "malformed" in out and "(thread subagent agent-zz)" in out
    # the unreadable file is copied as it is: nothing lost, and check agrees with fix
    copy = tmp_path / "out" / "subagents" / "agent-zz.jsonl"
    assert copy.read_bytes() == b"\x00\x01binary"
    code, out, _ = run("check", str(tmp_path / "out.jsonl"))
    assert code == 1


def test_subagent_outputs_are_refused_before_anything_is_written(tmp_path):
    main = session_with_subagents(tmp_path)
    before = files(tmp_path)
    code, _, err = run("fix", str(main), "-o", str(tmp_path / "out.json"))
    assert code == 2 and "name the output" in err and str(tmp_path / "out.jsonl") in err
    (tmp_path / "out" / "subagents").mkdir(parents=True)
    (tmp_path / "out" / "subagents" / "agent-b2.jsonl").write_text("mine")
    code, _, err = run("fix", str(main), "-o", str(tmp_path / "out.jsonl"))
    assert code == 2 and "agent-b2.jsonl exists; refusing to overwrite it" in err
    assert files(tmp_path) == sorted([*before, "out/subagents/agent-b2.jsonl"])


def test_in_place_refuses_when_a_subagent_file_changed_since_it_was_read(monkeypatch, tmp_path):
    from repair.workbench import Workbench

    main = session_with_subagents(tmp_path)
    sub = tmp_path / "sess" / "subagents" / "agent-a1.jsonl"
    real = Workbench.apply_all

    def agent_appends_meanwhile(self, **kw):
        with open(sub, "ab") as fh:
            fh.write(b"\n")
        return real(self, **kw)

    monkeypatch.setattr(Workbench, "apply_all", agent_appends_meanwhile)
    before = {p: (tmp_path / p).read_bytes() for p in files(tmp_path)}
    code, _, err = run("fix", str(main), "--in-place")
    assert code == 2 and f"{sub} changed since it was read" in err
    before["sess/subagents/agent-a1.jsonl"] += b"\n"  # the agent's line, and nothing else
    assert {p: (tmp_path / p).read_bytes() for p in files(tmp_path)} == before


def test_json_lists_each_threads_edits_and_what_remains(tmp_path):
    main = session_with_subagents(tmp_path)
    code, out, _ = run("fix", str(main), "--json", "-o", str(tmp_path / "out.jsonl"))
    doc = json.loads(out)
    assert code == 0 and doc["edits"] == [] and doc["remaining"] == []
    by_label = {t["thread"]: t for t in doc["threads"]}
    a1 = by_label["subagent agent-a1 (Explore: look)"]
    assert a1["output"] == str(tmp_path / "out" / "subagents" / "agent-a1.jsonl")
    assert [e["action"] for e in a1["edits"]] == ["drop_block", "drop_message"]
    assert all(t["remaining"] == [] for t in doc["threads"])


def test_threads_are_judged_under_the_sessions_target(tmp_path):
    main = session_with_subagents(tmp_path)
    s = load_session(str(main), target="bedrock")
    assert {t.target for t in s.threads} == {"bedrock"}


def test_a_repaired_copy_in_the_same_folder_does_not_pick_up_the_original_agent_files(tmp_path):
    """2.0.x kept agent files beside the session; the copy's subagents folder wins."""
    main = tmp_path / "sess.jsonl"
    main.write_bytes(jsonl(main_records()))
    (tmp_path / "agent-a1.jsonl").write_bytes(jsonl(agent_records(fault=True)))
    code, out, _ = run("fix", str(main), "-o", str(tmp_path / "out.jsonl"))
    assert code == 0
    s = load_session(str(tmp_path / "out.jsonl"))
    assert [os.path.relpath(t.path, tmp_path) for t in s.threads[1:]] == [
        "out/subagents/agent-a1.jsonl"
    ]


def test_an_unreadable_subagent_file_is_reported_not_repaired(tmp_path):
    main = session_with_subagents(tmp_path, bad=False)
    (tmp_path / "sess" / "subagents" / "agent-zz.jsonl").write_bytes(b"\x00\x01binary")
    code, out, _ = run(
        "fix", str(main), "--strategy", "malformed=drop", "-o", str(tmp_path / "o.jsonl")
    )
    assert code == 1 and "malformed" in out
    assert (tmp_path / "o" / "subagents" / "agent-zz.jsonl").read_bytes() == b"\x00\x01binary"


# ------------------------------------------------------------------ threads sharing records


def overlapping_records() -> list[dict]:
    """A subagent transcript (every record a sidechain, as in the fuzz case crash-c5, trimmed)
    whose two branches walk up through the conversation's own records: line 4 is a result
    for a call that is gone, whose parent was lost, so the walk goes on with line 3 (stamped
    0.3 s before it) and that thread holds lines 1-3 too; line 7 (content unreadable)
    branches off the call toolu_P, which nothing answers, and that thread holds lines 1-6
    but the last."""
    side = {"isSidechain": True, "agentId": "a1"}
    return [
        user(1, None, "sub task", 1, **side),
        assistant(2, 1, "msg_A", tool_use("toolu_R", "pwd"), 2, **side),
        result(3, 2, "toolu_R", "/p", 3, **side),
        result(4, 99, "toolu_gone", "stray output", 3.3, **side),
        assistant(5, 3, "msg_B", tool_use("toolu_P", "make"), 5, **side),
        assistant(6, 5, "msg_B", tool_use("toolu_Q", "ls"), 6, **side),
        user(7, 5, ["not a block"], 7, **side),
        result(8, 6, "toolu_Q", "files", 8, **side),
        assistant(9, 8, "msg_C", text("done"), 9, **side),
    ]


def test_threads_leave_the_records_they_share_to_the_conversation_and_fix_converges(tmp_path):
    f = tmp_path / "sub.jsonl"
    f.write_bytes(jsonl(overlapping_records()))
    session = load_session(str(f))
    shared = {m.src["line"] for m in session.messages if m.live}
    assert len(session.threads) == 2
    assert all(shared & {m.src["line"] for m in t.messages} for t in session.threads)

    first, second = tmp_path / "fixed.jsonl", tmp_path / "fixed2.jsonl"
    code, out, _ = run("fix", str(f), "-o", str(first), "--strategy", "malformed=drop")
    assert code == 0
    # the unanswered call is answered once, by the conversation that owns it; each thread
    # still fixes its own records (the unreadable line, the stray result in a message it
    # shares with the conversation)
    assert out.count("Insert a synthetic error result for toolu_P") == 1
    assert "Drop the tool_result toolu_gone" in out and "Drop the malformed record at line 7" in out
    assert out.splitlines()[-1].endswith("now 0 errors, 0 warnings, 0 info")
    written = first.read_bytes()
    assert written.count(b'"tool_use_id":"toolu_P"') == 1
    assert load_session(str(first)).threads == []

    # a second fix changes nothing
    code, out, _ = run("fix", str(first), "-o", str(second))
    assert code == 0 and "(0 fixes," in out
    assert second.read_bytes() == written

    # nothing lost: what the fix removed is in the report
    report = (tmp_path / "fixed.report.json").read_text()
    assert "not a block" in report and "stray output" in report
