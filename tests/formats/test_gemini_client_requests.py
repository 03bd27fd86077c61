"""histview against what the real Gemini CLI 0.61 sends (requests recorded in
data/gemini_cli/requests.json by tests/formats/gemini_requests.py): the history histview reads from a
chat is the history Gemini CLI sends, histview reports an error exactly where that request
breaks the Gemini API's function-call rules, and the file `histview fix` writes is sent by
Gemini CLI with each response once. With HISTVIEW_CLIENTS set, the client is run again."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from repair.analysis import analyze
from repair.cli import main
from repair.formats import load_session
from tests.formats.gemini_requests import (
    CASES,
    REQUESTS,
    RESUME,
    history,
    made_up_ids,
    measure,
    view,
    violations,
)

RECORDED = json.loads(REQUESTS.read_text())


def fixed(path: Path, tmp_path: Path) -> Path:
    out = tmp_path / f"fixed{path.suffix}"
    code = main(["fix", str(path), "-o", str(out)], stdout=io.StringIO(), stderr=io.StringIO())
    assert code == 0
    return out


def test_every_case_was_recorded():
    assert set(RECORDED) == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_histview_reads_the_history_gemini_cli_sends(name):
    sent = history(RECORDED[name]["before"])
    assert made_up_ids(view(load_session(str(CASES[name])))) == made_up_ids(sent)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_request_breaks_the_rules_and_histview_says_so(name):
    broken = violations(RECORDED[name]["before"])
    errors = [f for f in analyze(load_session(str(CASES[name]))).findings if f.severity == "error"]
    assert broken and errors


def test_the_measured_doubling():
    """The clean chat Gemini CLI wrote is sent with 2 responses for 1 call and 4 for 2; once it
    has saved that back, 3 and 8."""
    assert violations(RECORDED["clean_seed"]["before"]) == [
        "contents[2]: 2 function responses for 1 calls",
        "contents[4]: 4 function responses for 2 calls",
    ]
    assert violations(RECORDED["doubled_after_resume"]["before"]) == [
        "contents[2]: 3 function responses for 1 calls",
        "contents[4]: 8 function responses for 2 calls",
    ]


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_fixed_chat_is_sent_with_each_response_once(name, tmp_path):
    after = RECORDED[name]["after"]
    assert violations(after) == []
    out = fixed(CASES[name], tmp_path)
    assert made_up_ids(view(load_session(str(out)))) == made_up_ids(history(after))


def test_trailing_call_is_answered_before_the_new_prompt():
    after = RECORDED["trailing_call"]["after"]
    answered = after[4]["parts"]
    assert [p["functionResponse"]["id"] for p in answered] == [
        p["functionCall"]["id"] for p in after[3]["parts"]
    ]
    # Gemini CLI closes a history ending in responses with its own model turn
    assert after[5]["parts"][0]["text"].startswith("[The previous response was interrupted")


@pytest.mark.skipif(
    not os.environ.get("HISTVIEW_CLIENTS") or not RESUME.exists(),
    reason="HISTVIEW_CLIENTS is not set (the real Gemini CLI is not run)",
)
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_real_gemini_cli_sends_what_was_recorded(name, tmp_path):
    got = measure(name, CASES[name], tmp_path)
    assert got == RECORDED[name]
    assert violations(got["after"]) == []
