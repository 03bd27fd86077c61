"""Claude Code records built in tests: a session's JSONL lines (user, assistant, tool result
records linked by parentUuid), and a session with inline sidechains and subagent files."""

from __future__ import annotations

import json
from pathlib import Path

SID = "5f0c1d2e-0000-4000-8000-00000000abcd"


def env(**kw) -> dict:
    e = {
        "isSidechain": False,
        "userType": "external",
        "cwd": "/p",
        "sessionId": SID,
        "version": "2.1.42",
        "gitBranch": "main",
    }
    e.update(kw)
    return e


def U(n: int) -> str:
    return f"00000000-0000-4000-8000-{n:012d}"


def ts(sec: float) -> str:
    whole = int(sec)
    ms = int(round((sec - whole) * 1000))
    return f"2026-01-01T10:{whole // 60:02d}:{whole % 60:02d}.{ms:03d}Z"


def user(n: int, parent: int | None, content, t: float, **extra) -> dict:
    r = {"parentUuid": U(parent) if parent is not None else None, **env()}
    r.update(type="user", message={"role": "user", "content": content}, uuid=U(n), timestamp=ts(t))
    r.update(extra)
    return r


def result(n: int, parent: int, tool_id: str, text: str, t: float, **extra) -> dict:
    block = {"tool_use_id": tool_id, "type": "tool_result", "content": text, "is_error": False}
    return user(
        n,
        parent,
        [block],
        t,
        toolUseResult={"stdout": text},
        sourceToolAssistantUUID=U(parent),
        **extra,
    )


def assistant(n: int, parent: int | None, mid: str, block: dict, t: float, **extra) -> dict:
    r = {"parentUuid": U(parent) if parent is not None else None, **env()}
    r.update(
        message={
            "model": "claude-opus-4-6",
            "id": mid,
            "type": "message",
            "role": "assistant",
            "content": [block],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": 9},
        },
        requestId="req_" + mid[4:],
        type="assistant",
        uuid=U(n),
        timestamp=ts(t),
    )
    r.update(extra)
    return r


def text(s: str) -> dict:
    return {"type": "text", "text": s}


def tool_use(tid: str, cmd: str = "ls") -> dict:
    return {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": cmd}}


def jsonl(records) -> bytes:
    out = []
    for r in records:
        out.append(
            r if isinstance(r, str) else json.dumps(r, ensure_ascii=False, separators=(",", ":"))
        )
    return ("\n".join(out) + "\n").encode()


# ------------------------------------------------------------------ threads

STRAY = {"type": "tool_result", "tool_use_id": "toolu_gone", "content": "stray output"}


def main_records(sidechain_fault: bool = False) -> list[dict]:
    """A session whose Task call ran an inline sidechain (lines 4-7)."""
    side_result = result(7, 6, "toolu_S", "files", 7, isSidechain=True)
    if sidechain_fault:
        side_result["message"]["content"].append(STRAY)
    return [
        user(1, None, "make a task", 1),
        assistant(2, 1, "msg_A", tool_use("toolu_T", "task"), 2),
        user(4, None, "list files", 3, isSidechain=True),
        assistant(5, 4, "msg_S", text("listing"), 4, isSidechain=True),
        assistant(6, 5, "msg_S", tool_use("toolu_S"), 5, isSidechain=True),
        side_result,
        result(3, 2, "toolu_T", "task done", 8),
        assistant(8, 3, "msg_B", text("done"), 9),
    ]


def agent_records(fault: bool) -> list[dict]:
    res = result(13, 12, "toolu_X", "out", 13, isSidechain=True, agentId="a1")
    if fault:
        res["message"]["content"].append(STRAY)
    return [
        user(11, None, "sub task", 11, isSidechain=True, agentId="a1"),
        assistant(12, 11, "msg_X", tool_use("toolu_X"), 12, isSidechain=True, agentId="a1"),
        res,
        assistant(14, 13, "msg_Y", text("ok"), 14, isSidechain=True, agentId="a1"),
    ]


def session_with_subagents(tmp_path: Path, *, bad: bool = True) -> Path:
    main = tmp_path / "sess.jsonl"
    main.write_bytes(jsonl(main_records()))
    sub = tmp_path / "sess" / "subagents"
    sub.mkdir(parents=True)
    (sub / "agent-a1.jsonl").write_bytes(jsonl(agent_records(fault=bad)))
    (sub / "agent-a1.meta.json").write_text('{"agentType":"Explore","description":"look"}')
    (sub / "agent-b2.jsonl").write_bytes(jsonl(agent_records(fault=False)))
    return main
