"""What the real agent clients send, recorded: the cases, the shape a request is compared in,
and the recorder that resumes a file with the real client (../shared/clients/resume).

A case is a session file and the request its client sent when it resumed it, trimmed to its
shape (roles, block or item types, tool ids, error flags, the first characters of each text)
and without what the client adds itself (its instructions and developer messages, the
environment context, the new prompt). Fixtures live in tests/fixtures/clients/<client>/:
`<case>.sent.json` holds `{"input", "what", "sent"}`; `input` is a path from the repository
root, or `shared:` + a path under ../shared (the corpus, skipped when absent). The broken
files made for a case sit next to it.

    python -m tests.formats.client_requests record [CASE ...]     # resume with the real clients
    python -m tests.formats.client_requests check [CASE ...]      # compare histview with them

(`record` needs the clients: HISTVIEW_CLIENTS names their folder, default
~/.cache/histview-clients.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.paths import CLIENT_FIXTURES as FIXTURES
from tests.paths import REPO, SHARED

RESUME = SHARED / "clients" / "resume"
SCRIPT_CLIENT = {"codex": "codex", "opencode": "opencode"}  # histview target -> resume name
TEXT_CHARS = 48  # characters of each text kept in a shape
PROMPT = "continue"  # the prompt the resume script sends
BASE = {"codex": "openai-responses", "opencode": "anthropic"}  # who the client sends to


def clients_dir() -> Path:
    return Path(os.environ.get("HISTVIEW_CLIENTS") or Path.home() / ".cache/histview-clients")


def cases(client: str) -> list[Path]:
    return sorted((FIXTURES / client).glob("*.sent.json"))


def case_name(path: Path) -> str:
    return path.name.removesuffix(".sent.json")


def input_path(spec: str) -> Path:
    return SHARED / spec.removeprefix("shared:") if spec.startswith("shared:") else REPO / spec


def _text(value: object) -> str:
    if isinstance(value, str):
        return value[:TEXT_CHARS]
    if isinstance(value, list):  # content parts
        return "\n".join(
            p.get("text", "")
            for p in value
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        )[:TEXT_CHARS]
    return json.dumps(value)[:TEXT_CHARS]


# ---------------------------------------------------------------- shapes


def anthropic_shape(messages: list[dict]) -> list[dict]:
    """Anthropic messages, trimmed: role, and per block its type, id, error flag, text."""
    out = []
    for m in messages:
        content = m["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        blocks = []
        for b in content:
            t = b.get("type")
            s: dict = {"type": t}
            if t == "tool_use":
                s["id"] = b.get("id")
            elif t == "tool_result":
                s["tool_use_id"] = b.get("tool_use_id")
                if b.get("is_error"):
                    s["is_error"] = True
                s["text"] = _text(b.get("content"))
            elif t == "text":
                s["text"] = _text(b.get("text"))
            blocks.append(s)
        out.append({"role": m["role"], "content": blocks})
    return out


def responses_shape(items: list[dict]) -> list[dict]:
    """Responses input items, trimmed: type, role, call id, the first text or output."""
    out = []
    for it in items:
        t = it.get("type")
        s: dict = {"type": t}
        if t == "message":
            s["role"] = it.get("role")
            s["text"] = _text(it.get("content"))
        elif "call_id" in it:
            s["call_id"] = it.get("call_id")
            if "output" in it:
                s["output"] = _text(it.get("output"))
        out.append(s)
    return out


def shape(client: str, sent: list[dict]) -> list[dict]:
    return anthropic_shape(sent) if client == "opencode" else responses_shape(sent)


def history_of(client: str, body: dict) -> list[dict]:
    """The part of a recorded request that comes from the session file: without what the
    client adds (Codex: developer messages, the environment context and the prompt at the
    end; opencode: the prompt)."""
    if client == "opencode":
        messages = [dict(m) for m in body["messages"]]
        last = messages[-1] if messages else None
        if last and last["role"] == "user" and isinstance(last["content"], list):
            content = list(last["content"])
            if content and content[-1].get("type") == "text" and content[-1].get("text") == PROMPT:
                content.pop()
            if content:
                last["content"] = content
            else:
                messages.pop()
        return messages
    items = [
        i
        for i in body["input"]
        if not (i.get("type") == "message" and i.get("role") == "developer")
    ]
    if items and _text(items[-1].get("content")) == PROMPT:
        items.pop()
    while (
        items
        and items[-1].get("type") == "message"
        and items[-1].get("role") == "user"
        and _text(items[-1].get("content")).startswith("<environment_context>")
        and "id" in items[-1]
    ):
        items.pop()
    return items


# ---------------------------------------------------------------- the real clients


def resume(client: str, path: Path) -> dict:
    """Resume `path` with the real client; the request body it sent."""
    with tempfile.TemporaryDirectory() as out:
        run = subprocess.run(
            [str(RESUME), SCRIPT_CLIENT[client], str(path), out],
            capture_output=True,
            text=True,
            timeout=300,
        )
        req = Path(out) / "request.json"
        if not req.exists():
            raise RuntimeError(f"{client} sent nothing for {path}: {run.stdout}{run.stderr}")
        return json.loads(req.read_text())


def sent_by_histview(client: str, path: Path) -> list[dict]:
    """What histview says the client sends (repair.clients, rendered by repair.wire), without
    what the recorded side leaves out (the history's developer messages)."""
    from repair.formats import load_session
    from repair.wire import request_body

    session = load_session(str(path))
    body = request_body(session, client)
    if client == "opencode":
        return shape(client, body["messages"])
    return shape(client, [i for i in body["input"] if i.get("role") != "developer"])


def _as_anthropic(sent: list[dict]) -> bytes:
    """The recorded messages as a request (the prompt appended, as the client sends it)."""
    messages = []
    for m in sent:
        content = []
        for b in m["content"]:
            t = b["type"]
            if t == "tool_use":
                content.append({"type": t, "id": b["id"], "name": "tool", "input": {}})
            elif t == "tool_result":
                r = {"type": t, "tool_use_id": b["tool_use_id"], "content": b["text"]}
                content.append({**r, "is_error": True} if b.get("is_error") else r)
            elif t == "text":
                content.append({"type": t, "text": b["text"]})
            elif t == "thinking":
                content.append({"type": t, "thinking": "…", "signature": "s"})
            else:
                content.append({"type": t})
        messages.append({"role": m["role"], "content": content})
    prompt = {"type": "text", "text": "continue"}
    if messages and messages[-1]["role"] == "user":
        messages[-1]["content"].append(prompt)
    else:
        messages.append({"role": "user", "content": [prompt]})
    return json.dumps({"model": "claude", "messages": messages}).encode()


def _as_rollout(sent: list[dict]) -> bytes:
    """The recorded items as rollout lines (the prompt appended)."""
    lines = []
    for it in [*sent, {"type": "message", "role": "user", "text": "continue"}]:
        t = it["type"]
        if t == "message":
            kind = "output_text" if it["role"] == "assistant" else "input_text"
            item = {"type": t, "role": it["role"], "content": [{"type": kind, "text": it["text"]}]}
        elif t in ("function_call_output", "custom_tool_call_output"):
            item = {"type": t, "call_id": it["call_id"], "output": it["output"]}
        elif t == "function_call":
            item = {"type": t, "name": "shell", "arguments": "{}", "call_id": it["call_id"]}
        elif t == "custom_tool_call":
            item = {"type": t, "name": "tool", "input": "", "call_id": it["call_id"]}
        elif t == "local_shell_call":
            item = {"type": t, "call_id": it["call_id"], "action": {}}
        else:
            item = {"type": t, "summary": []}
        rec = {"timestamp": "2026-01-01T00:00:00.000Z", "type": "response_item", "payload": item}
        lines.append(json.dumps(rec))
    return ("\n".join(lines) + "\n").encode()


def provider_refuses(client: str, sent: list[dict]) -> list[str]:
    """The codes of what the provider's rules refuse in a recorded request (its shape)."""
    from repair.analysis import analyze
    from repair.formats import load_bytes

    if client == "opencode":
        session = load_bytes(_as_anthropic(sent), path="request.json", format="anthropic")
    else:
        session = load_bytes(_as_rollout(sent), path="request.jsonl", format="codex")
    found = analyze(session, BASE[client]).findings
    return [f.code for f in found if f.severity == "error"]


def main(argv: list[str]) -> int:
    cmd, names = argv[0], set(argv[1:])
    bad = 0
    for client in SCRIPT_CLIENT:
        for fixture in cases(client):
            if names and case_name(fixture) not in names:
                continue
            case = json.loads(fixture.read_text())
            path = input_path(case["input"])
            if cmd == "record":
                case["sent"] = shape(client, history_of(client, resume(client, path)))
                fixture.write_text(json.dumps(case, indent=1, ensure_ascii=False) + "\n")
                print(f"{client} {case_name(fixture)}: {len(case['sent'])} recorded")
            else:
                same = sent_by_histview(client, path) == case["sent"]
                bad += not same
                print(f"{client} {case_name(fixture)}: {'same' if same else 'DIFFERENT'}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:] or ["check"]))
