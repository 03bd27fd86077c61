"""The session files histview's client verdicts are measured on, per client, and how a
recorded request is trimmed and read (tests/fixtures/clients/, test_client_*.py)."""

from __future__ import annotations

from pathlib import Path

from tests.paths import CLIENT_FIXTURES as FIXTURES
from tests.paths import CORPUS, SAMPLES, SHARED

RESUME = SHARED / "clients" / "resume"
VERSIONS = {"claude": "Claude Code 2.1.197"}

# Text the client adds to every request on its own: the new prompt, sentinels, reminders.
CLIENT_TEXT = ("No response requested.", "Continue from where you left off.")
NEW_PROMPT = "continue"  # what ../shared/clients/resume sends


def claude_cases() -> list[tuple[str, Path]]:
    """(case, file): the samples, the real corpus (main files the client resumes; subagent
    files are not sessions of their own) and the broken files made for each fault."""
    out = [(f"sample-{p.stem}", p) for p in sorted(SAMPLES.glob("claude_code_*"))]
    corpus = CORPUS / "claude_code"
    for p in sorted(corpus.glob("*/*.jsonl")) if corpus.is_dir() else []:
        if not p.name.startswith("agent-"):
            out.append((f"corpus-{p.parent.name}", p))
    for p in sorted((FIXTURES / "claude" / "broken").glob("*.jsonl")):
        out.append((f"broken-{p.stem}", p))
    return out


CASES = {"claude": claude_cases}


def _trim_block(b: dict) -> dict:
    t = b.get("type")
    out: dict = {"type": t}
    if t == "text":
        out["text"] = b.get("text", "")[:60]
    elif t == "tool_use":
        out.update(id=b.get("id"), name=b.get("name"), input={})
    elif t == "tool_result":
        out["tool_use_id"] = b.get("tool_use_id")
        content = b.get("content")
        if isinstance(content, str) and len(content) <= 60:
            out["content"] = content
        if b.get("is_error"):
            out["is_error"] = True
    elif t in ("thinking", "redacted_thinking"):
        out[t if t == "thinking" else "data"] = ""
    return out


def trim(request: dict) -> dict:
    """The request's messages with only what the fixtures compare (see record.py)."""
    msgs = []
    for m in request["messages"]:
        c = m["content"]
        content = c[:60] if isinstance(c, str) else [_trim_block(b) for b in c]
        msgs.append({"role": m["role"], "content": content})
    return {"messages": msgs}


def file_messages(request: dict) -> list[dict]:
    """The request without what the client adds on its own: system-role messages, system
    reminders, its sentinels and the new prompt (user messages left next to each other by
    that merge, as the client merges them)."""
    msgs = [m for m in request["messages"] if m["role"] != "system"]
    out: list[dict] = []
    for k, m in enumerate(msgs):
        c = m["content"]
        blocks = [{"type": "text", "text": c}] if isinstance(c, str) else list(c)
        kept = []
        for b in blocks:
            if b["type"] == "text":
                text = b["text"]
                if text.startswith("<system-reminder>") or text in CLIENT_TEXT:
                    continue
                if k == len(msgs) - 1 and text == NEW_PROMPT:
                    continue
            kept.append(b)
        if not kept:
            continue
        if out and out[-1]["role"] == m["role"] == "user":
            out[-1]["content"] += kept
        else:
            out.append({"role": m["role"], "content": kept})
    return out


def shape(messages: list[dict], text: bool = True) -> list[tuple]:
    """Roles, block types, tool ids, is_error and (`text`) the start of each text, per
    message."""
    out = []
    for m in messages:
        c = m["content"]
        blocks = [{"type": "text", "text": c}] if isinstance(c, str) else c
        out.append(
            (
                m["role"],
                tuple(
                    (
                        b["type"],
                        b.get("id")
                        or b.get("tool_use_id")
                        or (b.get("text", "")[:40] if text else ""),
                        bool(b.get("is_error")),
                    )
                    for b in blocks
                ),
            )
        )
    return out
