"""histview against what Codex 0.169 and opencode 1.18 really send when they resume a file.

Each case in tests/fixtures/clients/ is a session file (a sample, a corpus file or a broken
file made for one behaviour) and the request its client sent for it, recorded with
../shared/clients/resume and trimmed (tests/client_requests.py). The tests hold that:
- the request histview says the client sends is the recorded one (roles, order, ids, texts);
- histview reports an error-level finding for the file exactly when the recorded request
  breaks the provider's rules (judged by histview's own provider rules on the request);
- with HISTVIEW_CLIENTS set, the real clients still send what was recorded.
"""

from __future__ import annotations

import json
import os

import pytest
from client_requests import (
    SCRIPT_CLIENT,
    case_name,
    cases,
    history_of,
    input_path,
    resume,
    sent_by_histview,
    shape,
)

from repair.analysis import analyze
from repair.formats import load_bytes, load_session

CASES = [
    pytest.param(client, fixture, id=f"{client}-{case_name(fixture)}")
    for client in SCRIPT_CLIENT
    for fixture in cases(client)
]
BASE = {"codex": "openai-responses", "opencode": "anthropic"}


def load_case(fixture):
    case = json.loads(fixture.read_text())
    path = input_path(case["input"])
    if not path.exists():
        pytest.skip(f"{case['input']} absent")
    return case, path


def test_every_client_has_its_cases():
    assert {client for client, *_ in (p.values for p in CASES)} == set(SCRIPT_CLIENT)
    assert all(len(cases(c)) >= 15 for c in SCRIPT_CLIENT)


@pytest.mark.parametrize(("client", "fixture"), CASES)
def test_histview_sends_what_the_client_sent(client, fixture):
    case, path = load_case(fixture)
    assert case["sent"], "record the case first: python tests/client_requests.py record"
    assert sent_by_histview(client, path) == case["sent"]


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
    """The codes of what the provider's rules refuse in a recorded request."""
    if client == "opencode":
        session = load_bytes(_as_anthropic(sent), path="request.json", format="anthropic")
    else:
        session = load_bytes(_as_rollout(sent), path="request.jsonl", format="codex")
    found = analyze(session, BASE[client]).findings
    return [f.code for f in found if f.severity == "error"]


@pytest.mark.parametrize(("client", "fixture"), CASES)
def test_error_exactly_when_the_clients_request_is_refused(client, fixture):
    case, path = load_case(fixture)
    session = load_session(str(path))
    assert session.target == client
    errors = [f.code for f in analyze(session).findings if f.severity == "error"]
    refused = provider_refuses(client, case["sent"])
    assert bool(errors) == bool(refused), (errors, refused)


def test_the_broken_cases_cover_both_verdicts():
    verdicts = {
        (client, bool(provider_refuses(client, json.loads(f.read_text())["sent"])))
        for client in SCRIPT_CLIENT
        for f in cases(client)
    }
    assert verdicts == {(c, v) for c in SCRIPT_CLIENT for v in (True, False)}


@pytest.mark.skipif(
    not os.environ.get("HISTVIEW_CLIENTS"), reason="set HISTVIEW_CLIENTS to run the real clients"
)
@pytest.mark.parametrize(("client", "fixture"), CASES)
def test_the_real_client_still_sends_the_recorded_request(client, fixture):
    case, path = load_case(fixture)
    assert shape(client, history_of(client, resume(client, path))) == case["sent"]
