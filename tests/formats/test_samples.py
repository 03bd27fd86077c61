"""The Roo Code / Anthropic sample sessions: each one reproduces a real breakage, and
histview must find exactly it (and nothing else), repair it by default, and leave every
untouched byte alone."""

from __future__ import annotations

import re

import orjson
import pytest

from repair.analysis import analyze
from repair.formats import load_bytes, load_session
from repair.model import SYNTHETIC_PREFIX, block_text
from repair.placeholders import is_placeholder
from repair.plan import NONE, Choices, actions_for, apply_all
from tests.paths import SAMPLES

TODO = "toolu_01152cTe8r0khCEr7n1AyOHF"  # update_todo_list, delegation sample
TASK = "toolu_01RuT11NCue1cr3McRTrKwtP"  # new_task, delegation sample
QUEUED = "toolu_01XPVmPSgdmAh0j6LDc2hFTH"
WATCH = "toolu_01sXGDkXDCKA9UYxJF3z9RVe"
BEDROCK_USE = "tooluse_ZM5jOGqqqj4YS4kJrJUFeD"
BEDROCK_WRONG = "tooluse_aLiIja3JwyhJ9HiQ-iK-MZ"
SPLIT_LATE = "toolu_01odyofGPVBmoWnAktv1ag07"
REJECTED = "toolu_01tvyJbflAMIELQaBMyvxcWq"
HOSTILE = "toolu_\x9b31m\u202eevil\u2028[link=https://x]\x00"
MARKUP_ID = "toolu_01[bold]X[/bold]\x1b[2J"


def _both(*findings, bedrock_errors: tuple[str, ...] = ()):
    """Findings that are the same under both targets except the codes bedrock makes errors
    (consecutive-same-role, a split result)."""
    anthropic = list(findings)
    bedrock = [
        (code, mi, bi, tid, "error" if code in bedrock_errors else sev)
        for code, mi, bi, tid, sev in findings
    ]
    return {"anthropic": anthropic, "bedrock": bedrock}


# (code, message_index, block_index, tool_use_id, severity) per target
EXPECTED: dict[str, tuple[str, dict[str, list[tuple]]]] = {
    "roo_subtask_delegation_duplicate.json": (
        "roo",
        _both(
            ("duplicate-tool-result", 7, 0, TODO, "error"),
            ("duplicate-tool-result", 7, 1, TASK, "error"),
            ("result-before-use", 7, 0, TODO, "warning"),
            ("result-before-use", 7, 1, TASK, "warning"),
            ("out-of-order-timestamp", 7, None, None, "info"),
            ("consecutive-same-role", 7, None, None, "info"),
            bedrock_errors=("consecutive-same-role",),
        ),
    ),
    "roo_deleted_queued_message_duplicate.json": (
        "roo",
        _both(
            ("duplicate-tool-result", 9, 0, QUEUED, "error"),
            ("consecutive-same-role", 9, None, None, "info"),
            bedrock_errors=("consecutive-same-role",),
        ),
    ),
    "roo_interrupted_then_continue.json": (
        "roo",
        _both(("orphan-tool-use", 7, 1, WATCH, "error")),
    ),
    "roo_bedrock_wrong_tool_use_id.json": (
        "roo",
        _both(("mismatched-tool-result-id", 8, 0, BEDROCK_WRONG, "error")),
    ),
    "anthropic_parallel_results_split.json": (
        "anthropic",
        _both(
            ("misplaced-tool-result", 3, 0, SPLIT_LATE, "warning"),
            ("consecutive-same-role", 3, None, None, "info"),
            bedrock_errors=("consecutive-same-role", "misplaced-tool-result"),
        ),
    ),
    "roo_text_before_tool_results.json": (
        "roo",
        _both(("tool-result-not-first", 6, 1, REJECTED, "error")),
    ),
    "roo_reused_tool_use_id.json": (
        "roo",
        _both(
            ("duplicate-tool-use-id", 5, 1, "functions_read_file_0", "error"),
            ("duplicate-tool-use-id", 11, 1, "functions_read_file_0", "error"),
            ("duplicate-tool-use-id", 11, 2, "functions_read_file_1", "error"),
        ),
    ),
    "roo_empty_content.json": (
        "roo",
        _both(
            ("empty-content", 1, 0, None, "error"),
            ("empty-content", 5, None, None, "error"),
            ("consecutive-same-role", 5, None, None, "info"),
            bedrock_errors=("consecutive-same-role",),
        ),
    ),
    "roo_clean_long_session.json": ("roo", _both()),
    "hostile_markup.json": (
        "roo",
        _both(
            ("invalid-tool-id", 1, 1, MARKUP_ID, "error"),
            ("invalid-tool-id", 2, 0, MARKUP_ID, "error"),
            ("invalid-tool-id", 3, 1, HOSTILE, "error"),
            ("orphan-tool-use", 3, 1, HOSTILE, "error"),
        ),
    ),
}

NAMES = sorted(EXPECTED)
TARGETS = ("anthropic", "bedrock")


def _path(name: str) -> str:
    return str(SAMPLES / name)


def _key(f: tuple) -> tuple:
    return tuple("" if v is None else str(v) for v in f)


def _found(session) -> list[tuple]:
    return sorted(
        (
            (f.code, f.message_index, f.block_index, f.tool_use_id, f.severity)
            for f in analyze(session).findings
        ),
        key=_key,
    )


def _errors(session) -> list[str]:
    return [
        f"{f.code} m{f.message_index} {f.tool_use_id}"
        for f in analyze(session).findings
        if f.severity == "error"
    ]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", NAMES)
def test_sample_has_exactly_its_findings(name, target):
    fmt, expected = EXPECTED[name]
    session = load_session(_path(name), target=target)
    assert session.format == fmt
    assert _found(session) == sorted(expected[target], key=_key)


@pytest.mark.parametrize("name", NAMES)
def test_sample_round_trips_byte_for_byte(name):
    data = (SAMPLES / name).read_bytes()
    assert load_session(_path(name)).export_bytes() == data


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", NAMES)
def test_default_fix_leaves_no_error_and_is_idempotent(name, target):
    fmt, expected = EXPECTED[name]
    session = load_session(_path(name), target=target)
    fixed, applied = apply_all(session)
    # something is changed exactly when a finding has a default fix (errors, split results)
    assert bool(applied) == any(
        actions_for(code, target)[0] != NONE for code, *_ in expected[target]
    )
    assert _errors(fixed) == []

    # what is written reloads as the same format and checks clean
    out = fixed.export_bytes()
    reloaded = load_bytes(out, path=name, format=fmt, target=target)
    assert _errors(reloaded) == []
    # fixing the written file again changes nothing
    again, applied_again = apply_all(reloaded)
    assert applied_again == []
    assert again.export_bytes() == out


def _fixed_doc(name: str, target: str = "anthropic"):
    fixed, _ = apply_all(load_session(_path(name), target=target))
    return fixed, orjson.loads(fixed.export_bytes())


def _results(message: dict) -> dict[str, dict]:
    return {b["tool_use_id"]: b for b in message["content"] if b.get("type") == "tool_result"}


def test_delegation_fix_keeps_the_real_results_in_one_message():
    original = orjson.loads((SAMPLES / "roo_subtask_delegation_duplicate.json").read_bytes())
    fixed, doc = _fixed_doc("roo_subtask_delegation_duplicate.json")
    assert len(doc) == len(original) - 1  # the re-injected message 7 is gone
    results = _results(doc[6])
    assert list(results) == [TODO, TASK]  # in tool_use order
    assert results[TODO]["content"] == "Todo list updated successfully."
    assert results[TASK]["content"].startswith(
        "Subtask 019bbc4c-02a9-75d3-b1e8-6c0a94f2e381 completed."
    )
    assert not any(is_placeholder(b) for b in fixed.messages[6].blocks)
    assert doc[6]["ts"] == original[6]["ts"]
    assert doc[:6] == original[:6]


def test_queued_duplicate_fix_drops_only_the_copy():
    original = orjson.loads((SAMPLES / "roo_deleted_queued_message_duplicate.json").read_bytes())
    _, doc = _fixed_doc("roo_deleted_queued_message_duplicate.json")
    assert doc[:9] == original[:9]
    assert [b["type"] for b in doc[9]["content"]] == ["text"]
    assert doc[9]["content"][0]["text"].startswith("<environment_details>")


def test_interrupted_call_gets_a_synthetic_error_result_before_continue():
    fixed, doc = _fixed_doc("roo_interrupted_then_continue.json")
    first, *rest = doc[8]["content"]
    assert first["tool_use_id"] == WATCH and first["is_error"] is True
    assert first["content"].startswith(SYNTHETIC_PREFIX)
    assert rest[0]["text"] == "<user_message>\ncontinue\n</user_message>"


def test_wrong_id_result_gets_its_calls_id_and_keeps_its_content():
    original = orjson.loads((SAMPLES / "roo_bedrock_wrong_tool_use_id.json").read_bytes())
    _, doc = _fixed_doc("roo_bedrock_wrong_tool_use_id.json", target="bedrock")
    result = doc[8]["content"][0]
    assert result["tool_use_id"] == BEDROCK_USE
    assert result["content"] == original[8]["content"][0]["content"]


@pytest.mark.parametrize("target", TARGETS)
def test_split_results_are_joined_in_call_order(target):
    original = orjson.loads((SAMPLES / "anthropic_parallel_results_split.json").read_bytes())
    _, doc = _fixed_doc("anthropic_parallel_results_split.json", target=target)
    messages = doc["messages"]
    calls = [b["id"] for b in messages[1]["content"] if b["type"] == "tool_use"]
    assert list(_results(messages[2])) == calls
    assert len(messages) == len(original["messages"]) - 1
    assert {k: v for k, v in doc.items() if k != "messages"} == {
        k: v for k, v in original.items() if k != "messages"
    }


def test_text_before_result_is_reordered_not_dropped():
    original = orjson.loads((SAMPLES / "roo_text_before_tool_results.json").read_bytes())
    _, doc = _fixed_doc("roo_text_before_tool_results.json")
    before, after = original[6]["content"], doc[6]["content"]
    assert after[0]["type"] == "tool_result"
    assert sorted(orjson.dumps(b) for b in after) == sorted(orjson.dumps(b) for b in before)


def test_reused_ids_are_renamed_with_their_results():
    _, doc = _fixed_doc("roo_reused_tool_use_id.json")
    uses = [b["id"] for m in doc for b in m["content"] if b["type"] == "tool_use"]
    assert len(uses) == len(set(uses))
    assert all(re.fullmatch(r"[A-Za-z0-9_-]+", u) for u in uses)
    for a, u in zip(doc, doc[1:], strict=False):
        if a["role"] == "assistant":
            calls = [b["id"] for b in a["content"] if b["type"] == "tool_use"]
            assert list(_results(u)) == calls


def test_clean_long_session_is_large_and_untouched_by_fix():
    session = load_session(_path("roo_clean_long_session.json"))
    assert len(session.messages) > 250
    assert sum(len(m.blocks) for m in session.messages) > 600
    fixed, applied = apply_all(session)
    assert applied == []
    assert fixed.export_bytes() == (SAMPLES / "roo_clean_long_session.json").read_bytes()


def test_hostile_ids_and_text_survive_the_fix_exactly():
    raw = (SAMPLES / "hostile_markup.json").read_bytes()
    original = orjson.loads(raw)
    fixed, _ = apply_all(
        load_session(_path("hostile_markup.json")), Choices(only={"orphan-tool-use"})
    )
    doc = orjson.loads(fixed.export_bytes())
    assert doc[4]["content"][0]["tool_use_id"] == HOSTILE
    assert doc[:4] == original[:4]
    assert doc[4]["content"][1:] == original[4]["content"]
    # the escapes stay escapes in the written JSON: no raw ESC or NUL byte reaches the file
    out = fixed.export_bytes()
    assert b"\x1b" not in out and b"\x00" not in out
    text = block_text(fixed.messages[1].blocks[0])
    assert "[@click=app.quit]" in text and "\x1b[2J" in text and "\u202e" in text


def test_hostile_ids_are_given_ids_the_provider_accepts_with_their_results():
    _, doc = _fixed_doc("hostile_markup.json")
    calls = [b for m in doc for b in m["content"] if b.get("type") == "tool_use"]
    answers = [b for m in doc for b in m["content"] if b.get("type") == "tool_result"]
    assert [c["id"] for c in calls] == [
        "toolu_01_bold_X__bold___2J",
        "toolu__31m_evil__link_https___x__",
    ]
    assert [a["tool_use_id"] for a in answers] == [c["id"] for c in calls]
    assert (
        answers[0]["content"]
        == orjson.loads((SAMPLES / "hostile_markup.json").read_bytes())[2]["content"][0]["content"]
    )


def test_every_sample_here_is_described_in_the_readme():
    readme = (SAMPLES / "README.md").read_text(encoding="utf-8")
    for name in NAMES:
        assert f"`{name}`" in readme, name
