"""Claude Code files judged as Claude Code 2.1.197 sends them (issue 8), against what the real
client sent for each sample, corpus file and broken file (tests/fixtures/clients/claude/,
recorded with tests/fixtures/clients/record.py):

- the messages histview builds are the client's (roles, block order, tool ids per message),
  where the client repairs nothing; with the client's own repairs emulated, for every file;
- histview reports an error-level finding exactly when the client's request breaks the
  Anthropic API's rules (judged by histview's own `anthropic` rules);
- with HISTVIEW_CLIENTS set, the real client is run again and must send the same.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from repair.analysis import analyze
from repair.formats import load_bytes, load_session
from repair.wire import request, request_body
from tests.formats.clients_cases import CASES, FIXTURES, RESUME, file_messages, shape, trim

CASE_FILES = dict(CASES["claude"]())
FIXTURE_DIR = FIXTURES / "claude"
RECORDED = sorted(p.stem for p in FIXTURE_DIR.glob("*.json"))


def fixture(case: str) -> dict:
    return json.loads((FIXTURE_DIR / f"{case}.json").read_text())


def session(case: str):
    path = CASE_FILES.get(case)
    if path is None or not path.is_file():
        pytest.skip(f"{case}: its session file is absent (../shared corpus not here)")
    return load_session(str(path))


def view(s) -> list[dict]:
    """histview's messages, as Anthropic messages (trimmed like the fixtures)."""
    msgs = [
        {
            "role": m.role,
            "content": [b.data if isinstance(b.data, dict) else b.data for b in m.blocks],
        }
        for m in s.messages
        if m.live
    ]
    return file_messages(trim({"messages": _strings(msgs)}))


def emulated(s) -> list[dict]:
    return file_messages(trim(request_body(s, "claude-code")))


def _strings(msgs: list[dict]) -> list[dict]:
    out = []
    for m in msgs:
        c = m["content"]
        if len(c) == 1 and isinstance(c[0], str):
            out.append({"role": m["role"], "content": c[0]})
        else:
            out.append(
                {
                    "role": m["role"],
                    "content": [
                        {"type": "text", "text": b} if isinstance(b, str) else b for b in c
                    ],
                }
            )
    return out


def request_is_refused(request: dict) -> list[str]:
    """The Anthropic API's rules on what the client sent: histview's own `anthropic` checks
    on the request (system-role messages, a separate API feature, left out)."""
    body = {"messages": [m for m in request["messages"] if m["role"] != "system"]}
    s = load_bytes(json.dumps(body).encode(), path="request.json", target="anthropic")
    return [f.code for f in analyze(s).errors]


def test_every_case_was_recorded():
    missing = [case for case in CASE_FILES if case not in RECORDED]
    assert not missing, f"record them: python tests/fixtures/clients/record.py claude {missing}"
    assert len(RECORDED) >= 24


@pytest.mark.parametrize("case", RECORDED)
def test_client_repairs_emulated_give_the_real_request(case):
    s = session(case)
    want = shape(file_messages(fixture(case)["request"]))
    assert shape(emulated(s)) == want


@pytest.mark.parametrize("case", RECORDED)
def test_view_is_the_request_where_the_client_repairs_nothing(case):
    s = session(case)
    # the client repairs something: a finding says so, or (a fault it sends as it is, such
    # as a result inside an assistant message) it still adds or leaves out a block nearby
    req = request(s, "claude-code")
    added = any(b.block is None for m in req.messages for b in m.blocks)
    repaired = [f for f in analyze(s).findings if f.client_repair] or req.left_out or added
    # roles, block order, tool ids (the client ends a text with a newline where it joins
    # two records' texts: the file's text is shown as it is)
    got = shape(view(s), text=False)
    want = shape(file_messages(fixture(case)["request"]), text=False)
    if repaired:
        # the difference is the client's own repairs: with them, the request itself
        assert shape(emulated(s), text=False) == want
    else:
        assert got == want


@pytest.mark.parametrize("case", RECORDED)
def test_error_exactly_when_the_request_is_refused(case):
    s = session(case)
    refused = request_is_refused(fixture(case)["request"])
    errors = [f.code for f in analyze(s).errors]
    assert bool(errors) == bool(refused), (errors, refused)
    if refused:
        assert set(errors) <= set(refused) | {"empty-content"}, (errors, refused)


def test_the_modern_file_is_sent_as_35_messages_and_parallel_calls_merge():
    s = session("corpus-ccl_modern_v2.1.114")
    sent = [m for m in s.messages if m.live]
    assert len(sent) == 35  # the client adds "No response requested." and the prompt: 37
    assert len(fixture("corpus-ccl_modern_v2.1.114")["request"]["messages"]) == 37
    # messages.5: six parallel Task calls written [use][result][use][result]...
    assert [b.type for b in sent[5].blocks].count("tool_use") == 6
    assert [b.type for b in sent[6].blocks] == ["tool_result"] * 6


@pytest.mark.parametrize(
    ("case", "code", "severity"),
    [
        ("broken-orphan-tool-use", "orphan-tool-use", "warning"),
        ("broken-pending-tool-use", "pending-tool-use", "warning"),
        ("broken-orphan-tool-result", "orphan-tool-result", "warning"),
        ("broken-orphan-tool-result-first", "orphan-tool-result", "warning"),
        ("broken-mismatched-tool-result-id", "mismatched-tool-result-id", "warning"),
        ("broken-duplicate-tool-result", "duplicate-tool-result", "warning"),
        ("broken-misplaced-tool-result", "misplaced-tool-result", "warning"),
        ("broken-duplicate-tool-use-id", "duplicate-tool-use-id", "warning"),
        ("broken-empty-user-text", "empty-content", "warning"),
        ("broken-whitespace-user-text", "empty-content", "warning"),
        ("broken-empty-user-string", "empty-content", "error"),
        ("broken-empty-assistant-text-merged", "empty-content", "error"),
        ("broken-tool-result-not-first", "tool-result-not-first", "error"),
        ("broken-consecutive-assistants", "consecutive-same-role", "info"),
    ],
)
def test_each_fault_has_the_clients_verdict(case, code, severity):
    s = session(case)
    (f,) = [f for f in analyze(s).findings if f.code == code]
    assert f.severity == severity
    if severity == "warning":
        # what the client sends instead, in the detail and in the JSON
        assert f.client_repair and f.client_repair.startswith("Claude Code 2.1.197 ")
        assert f.client_repair in f.detail and f.to_json()["client_repair"] == f.client_repair
        # the raw history is still refused by the API itself (a trailing call is only
        # pending: the next request brings its result)
        raw = {g.code: g.severity for g in analyze(s, "anthropic").findings}
        assert raw[code] == ("warning" if code == "pending-tool-use" else "error")
    else:
        assert f.client_repair is None and f.to_json()["client_repair"] is None


def test_an_id_less_call_is_left_out_and_a_result_in_the_assistant_message_is_refused():
    """Measured: Claude Code 2.1.197 leaves a call without an id and the result without one
    out of what it sends (warnings), but sends a tool_result written into the assistant's
    record where it is, next to the calls (refused: an error)."""
    s = session("broken-invalid-tool-id")
    found = [(f.code, f.severity) for f in analyze(s).findings]
    assert found == [("invalid-tool-id", "warning")] * 2
    assert all(f.client_repair.startswith("Claude Code 2.1.197 ") for f in analyze(s).findings)
    assert [f.severity for f in analyze(s, "anthropic").findings] == ["error", "error"]
    s = session("broken-wrong-role-block")
    (f,) = analyze(s).findings
    assert (f.code, f.severity, f.client_repair) == ("wrong-role-block", "error", None)
    # it is sent inside messages.1 (tool_use blocks after the others), and the call it
    # answers gets Claude Code's placeholder in messages.2
    assert f.message_index == 1
    sent = fixture("broken-wrong-role-block")["request"]["messages"]
    assert [b["type"] for b in sent[1]["content"]] == [
        "text",
        "tool_result",
        "tool_use",
        "tool_use",
    ]


@pytest.mark.parametrize(
    "case", ["broken-empty-assistant-text", "broken-whitespace-assistant-text", "broken-clean"]
)
def test_what_the_client_drops_in_normal_operation_is_no_finding(case):
    assert not analyze(session(case)).findings


@pytest.mark.skipif(
    not os.environ.get("HISTVIEW_CLIENTS"), reason="set HISTVIEW_CLIENTS to run the real client"
)
@pytest.mark.parametrize("case", RECORDED)
def test_the_real_client_still_sends_the_recorded_request(case, tmp_path):
    path = CASE_FILES.get(case)
    if path is None or not path.is_file() or not RESUME.is_file():
        pytest.skip("session file or ../shared/clients/resume absent")
    proc = subprocess.run(
        [str(RESUME), "claude", str(path), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        check=False,
    )
    req = tmp_path / "out" / "request.json"
    assert req.is_file(), proc.stdout + proc.stderr
    got = file_messages(trim(json.loads(req.read_text())))
    assert shape(got) == shape(file_messages(fixture(case)["request"]))
