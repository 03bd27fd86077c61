"""`histview list`: sessions found where Claude Code, Codex, Gemini CLI, Roo Code, Kilo Code and Cline
keep them, newest first, with their health; unreadable ones listed with their error."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from repair import discover
from tests.paths import CORPUS, DATA
from tui.cli import main

REAL = CORPUS

TOOL_USE = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}


def cc_records(orphan: bool) -> str:
    recs = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s",
         "timestamp": "2026-01-01T00:00:00.000Z",
         "message": {"role": "user", "content": "list the files"}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s",
         "timestamp": "2026-01-01T00:00:01.000Z",
         "message": {"id": "m1", "role": "assistant", "content": [TOOL_USE]}},
        {"type": "user", "uuid": "u2", "parentUuid": "a1", "sessionId": "s",
         "timestamp": "2026-01-01T00:00:02.000Z",
         "message": {"role": "user", "content": "continue" if orphan else [
             {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}]}},
    ]  # fmt: skip
    return "".join(json.dumps(r) + "\n" for r in recs)


def roo_task(text: str) -> str:
    return json.dumps(
        [
            {"role": "user", "content": [{"type": "text", "text": text}], "ts": 1},
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "ts": 2},
        ]
    )


def put(path: Path, text: str, mtime: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def home(tmp_path) -> Path:
    """A home folder with sessions of every tool, mtimes 1000..7000 (newest: the broken one)."""
    h = tmp_path / "home"
    projects = h / ".claude" / "projects" / "-home-me-app"
    put(projects / "0b5e.jsonl", cc_records(orphan=True), 7000)
    put(projects / "9a1f.jsonl", cc_records(orphan=False), 3000)
    put(projects / "agent-1234.jsonl", cc_records(orphan=True), 9000)  # a subagent thread
    put(projects / "notes.txt", "not a session", 9000)
    put(h / ".codex" / "sessions" / "2026" / "01" / "02" / "rollout-2026-01-02-x.jsonl",
        "this is not json\nnor this\n", 5000)  # fmt: skip
    storage = h / ".config" / "Code" / "User" / "globalStorage"
    put(storage / "rooveterinaryinc.roo-cline" / "tasks" / "t1" / "api_conversation_history.json",
        roo_task("roo task"), 6000)  # fmt: skip
    put(storage / "kilocode.kilo-code" / "tasks" / "t2" / "api_conversation_history.json",
        roo_task("kilo task"), 2000)  # fmt: skip
    put(storage / "saoudrizwan.claude-dev" / "tasks" / "t3" / "api_conversation_history.json",
        roo_task("cline task"), 1000)  # fmt: skip
    put(storage / "saoudrizwan.claude-dev" / "tasks" / "t3" / "ui_messages.json", "[]", 9000)
    return h


def test_finds_every_tool_newest_first_without_subagent_threads(home):
    found = discover.find_sessions(discover.Roots.from_env(home=str(home)))
    assert [(Path(f.path).name, f.tool) for f in found] == [
        ("0b5e.jsonl", "claude-code"),
        ("api_conversation_history.json", "roo"),
        ("rollout-2026-01-02-x.jsonl", "codex"),
        ("9a1f.jsonl", "claude-code"),
        ("api_conversation_history.json", "kilo"),
        ("api_conversation_history.json", "cline"),
    ]


def test_health_counts_and_unreadable_files(home):
    found = discover.find_sessions(discover.Roots.from_env(home=str(home)))
    rows = {(r.tool, Path(r.path).name): r for r in discover.check_all(found, workers=1)}
    broken = rows[("claude-code", "0b5e.jsonl")]
    # an unanswered call: Claude Code leaves it out when it resumes (a warning, not refused)
    assert (broken.format, broken.messages, broken.errors, broken.warnings, broken.error) == (
        "claude-code", 3, 0, 1, None,
    )  # fmt: skip
    assert broken.title == "list the files"
    healthy = rows[("claude-code", "9a1f.jsonl")]
    assert (healthy.errors, healthy.warnings, healthy.messages) == (0, 0, 3)
    roo = rows[("roo", "api_conversation_history.json")]
    assert (roo.format, roo.messages, roo.title) == ("roo", 2, "roo task")
    bad = rows[("codex", "rollout-2026-01-02-x.jsonl")]
    assert bad.format is None and "not JSON" in bad.error


def test_process_pool_gives_the_same_rows_as_in_process(home):
    found = discover.find_sessions(discover.Roots.from_env(home=str(home)))
    pooled = [r.to_json() for r in discover.check_all(found, workers=3)]
    local = [r.to_json() for r in discover.check_all(found, workers=1)]
    assert pooled == local and len(pooled) == 6


def test_list_command_text(capsys, home):
    assert main(["list", "--home", str(home)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["MODIFIED", "TOOL", "FORMAT", "MSGS", "ERR", "WARN", "FILE"]
    first = lines[1].split()
    assert first[2:8] == ["claude-code", "claude-code", "3", "0", "1",
                          "~/.claude/projects/-home-me-app/0b5e.jsonl"]  # fmt: skip
    codex = next(line for line in lines if "rollout-" in line)
    assert "unreadable: line 1 column 1: not JSON" in codex
    assert len(lines) == 7


def test_list_json_and_env_overrides(capsys, home, tmp_path, monkeypatch):
    monkeypatch.setenv("HISTVIEW_HOME", str(home))
    other = tmp_path / "elsewhere"
    put(other / "kilocode.kilo-code" / "tasks" / "t9" / "api_conversation_history.json",
        roo_task("moved storage"), 8000)  # fmt: skip
    monkeypatch.setenv("HISTVIEW_VSCODE_STORAGE", str(other))
    assert main(["list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["tool"] for r in rows] == ["kilo", "claude-code", "codex", "claude-code"]
    assert set(rows[0]) == {
        "file", "tool", "modified", "size", "format", "messages", "errors", "warnings", "infos",
        "title", "error",
    }  # fmt: skip
    assert rows[0]["title"] == "moved storage" and rows[0]["error"] is None
    assert rows[2]["error"] and rows[2]["format"] is None


def test_nothing_found_says_where_it_looked(capsys, tmp_path):
    assert main(["list", "--home", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("No sessions found. Looked in:")
    assert str(tmp_path / ".claude" / "projects") in out


@pytest.mark.skipif(not REAL.is_dir(), reason="real corpus absent")
def test_real_sessions_laid_out_as_on_disk_are_all_read(tmp_path):
    h = tmp_path / "home"
    (h / ".claude").mkdir(parents=True)
    (h / ".claude" / "projects").symlink_to(REAL / "claude_code")
    (h / ".codex").mkdir()
    (h / ".codex" / "sessions").symlink_to(REAL / "codex")
    tasks = tmp_path / "storage" / "rooveterinaryinc.roo-cline" / "tasks"
    tasks.mkdir(parents=True)
    for task in (REAL / "roo").iterdir():
        if (task / "api_conversation_history.json").exists():
            (tasks / task.name).symlink_to(task)
    roots = discover.Roots.from_env(home=str(h), vscode_storage=str(tmp_path / "storage"))
    rows = discover.check_all(discover.find_sessions(roots))
    tools = {r.tool for r in rows}
    assert tools == {"claude-code", "codex", "roo"}
    for r in rows:
        assert r.error is None, (r.path, r.error)
        assert r.messages > 0 and r.errors == 0
    assert not any(Path(r.path).name.startswith("agent-") for r in rows)


def test_gemini_cli_chats_are_listed_with_their_health(capsys, tmp_path):
    data = DATA / "gemini_cli"
    chats = tmp_path / ".gemini" / "tmp" / ("ab" * 32) / "chats"
    put(chats / "session-2026-11-23T11-44-6f55130f.jsonl",
        (data / "clean_seed.jsonl").read_text(), 5000)  # fmt: skip
    put(chats / "session-2025-09-01T10-00-1a2b3c4d.json",
        (data / "legacy_chat.json").read_text(), 4000)  # fmt: skip
    put(chats / "6f55130f" / "subagent-1.jsonl", (data / "clean_seed.jsonl").read_text(), 6000)
    put(chats.parent / "logs.json", "[]", 7000)
    assert main(["list", "--home", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in lines[1:]]
    assert [r[2:7] for r in rows] == [["gemini", "gemini-cli", "7", "3", "0"]] * 2
    assert rows[0][7].endswith("/chats/session-2026-11-23T11-44-6f55130f.jsonl")
    assert rows[1][7].endswith("/chats/session-2025-09-01T10-00-1a2b3c4d.json")
    found = discover.find_sessions(discover.Roots.from_env(home=str(tmp_path)))
    assert discover.check_all(found, workers=1)[0].title == (
        "read a.txt and b.txt and tell me what they say"
    )


def test_histview_own_report_and_backup_are_not_listed_as_sessions(capsys, tmp_path):
    """After `fix --in-place` in Gemini CLI's chats folder the report (session-*.report.json,
    matching Gemini CLI's `session-*.json`) and the backup stay out of the list, as Gemini
    CLI leaves them out; a `.fixed` output beside the session is a session and is listed."""
    chats = tmp_path / ".gemini" / "tmp" / ("ab" * 32) / "chats"
    session = put(chats / "session-2026-11-23T08-11-54d43868.jsonl",
                  (DATA / "gemini_cli" / "orphan_call.jsonl").read_text(), 5000)  # fmt: skip
    assert (
        main(
            [
                "fix",
                str(session),
                "-o",
                str(chats / "session-2026-11-23T08-11-54d43868.fixed.jsonl"),
            ]
        )
        == 0
    )
    assert main(["fix", str(session), "--in-place"]) == 0
    assert main(["fix", str(session), "--in-place"]) in (0, 1)
    names = sorted(p.name for p in chats.iterdir())
    assert "session-2026-11-23T08-11-54d43868.report.json" in names
    assert "session-2026-11-23T08-11-54d43868.report.1.json" in names
    assert "session-2026-11-23T08-11-54d43868.jsonl.bak" in names
    capsys.readouterr()
    assert main(["list", "--home", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "report" not in out and ".bak" not in out and "unreadable" not in out
    listed = sorted(Path(line.split()[-1]).name for line in out.splitlines()[1:])
    assert listed == [
        "session-2026-11-23T08-11-54d43868.fixed.jsonl",
        "session-2026-11-23T08-11-54d43868.jsonl",
    ]
    picked = sorted(Path(f.path).name for f in discover.find_in_folder(str(chats)))
    assert picked == listed
