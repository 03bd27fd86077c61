"""invalid-tool-id and wrong-role-block (docs/codes.md): where they are found, what the fixes do,
and that fixing converges and is idempotent."""

from __future__ import annotations

import pytest

from repair.analysis import analyze
from repair.model import SYNTHETIC_PREFIX, SYNTHETIC_RESULT_TEXT, block_text
from repair.plan import Choices, apply_all, make_plan
from repair.report import edit_entries
from tests.engine.engine_factory import R, S, T, U, shape


def codes(session, target=None):
    return [
        (f.code, f.message_index, f.block_index, f.tool_use_id, f.severity)
        for f in analyze(session, target).findings
    ]


def errors(session):
    return [(f.code, f.message_index) for f in analyze(session).findings if f.severity == "error"]


def fixed(session, **choices):
    out, applied = apply_all(session, Choices(**choices))
    assert errors(out) == [], errors(out)
    again, more = apply_all(out, Choices(**choices))
    assert more == [] and again.messages == out.messages  # idempotent
    return out, applied


def use_without(key: str, value=None, *, drop: bool = False) -> dict:
    d = U("x")
    if drop:
        del d[key]
    else:
        d[key] = value
    return d


def result_without(value=None, *, drop: bool = False) -> dict:
    d = R("x")
    if drop:
        del d["tool_use_id"]
    else:
        d["tool_use_id"] = value
    return d


# ------------------------------------------------------------------ invalid-tool-id: findings


@pytest.mark.parametrize(
    ("use", "words"),
    [
        (use_without("id", drop=True), "has no id"),
        (use_without("id", None), "has id null"),
        (use_without("id", 5), "has a number as id, not a string"),
        (use_without("id", ["a"]), "has a list as id"),
        (use_without("id", ""), "has an empty id"),
    ],
)
def test_a_call_without_a_usable_id_is_invalid_for_every_target(use, words):
    s = S(("user", "hi"), ("assistant", [T("run"), use]), ("user", "go on"), ("assistant", "ok"))
    for target in ("anthropic", "bedrock", "openai-chat", "openai-responses"):
        found = analyze(s, target).findings
        # Responses numbers items: the text "run" is input[1], the call input[2]
        n = 2 if target == "openai-responses" else 1
        assert [(f.code, f.message_index, f.block_index, f.severity) for f in found] == [
            ("invalid-tool-id", n, 1, "error")
        ], target
        assert words in found[0].detail
        assert found[0].rule is not None


@pytest.mark.parametrize(
    ("result", "words"),
    [
        (result_without(drop=True), "has no tool_use_id"),
        (result_without(""), "has an empty tool_use_id"),
        (result_without(7), "has a number as tool_use_id"),
    ],
)
def test_a_result_without_a_usable_id_is_invalid_and_not_also_an_orphan(result, words):
    s = S(("user", "hi"), ("assistant", [U("a")]), ("user", [R("a"), result]), ("assistant", "ok"))
    assert [c[:3] for c in codes(s)] == [("invalid-tool-id", 2, 1)]
    assert words in analyze(s).findings[0].detail


def test_ids_outside_the_anthropic_pattern_are_invalid_under_anthropic_only():
    s = S(
        ("user", "hi"),
        ("assistant", [U("functions.read:0")]),
        ("user", [R("functions.read:0")]),
        ("assistant", "ok"),
    )
    assert codes(s, "anthropic") == [
        ("invalid-tool-id", 1, 0, "functions.read:0", "error"),
        ("invalid-tool-id", 2, 0, "functions.read:0", "error"),
    ]
    # Bedrock's reference allows . and : (up to 64 characters); OpenAI names no pattern
    assert codes(s, "bedrock") == []
    assert codes(s, "openai-chat") == []


def test_bedrock_refuses_an_id_longer_than_64_characters():
    long_id = "t" * 65
    s = S(("user", "hi"), ("assistant", [U(long_id)]), ("user", [R(long_id)]), ("assistant", "ok"))
    assert [c[0] for c in codes(s, "bedrock")] == ["invalid-tool-id", "invalid-tool-id"]
    assert "65 characters" in analyze(s, "bedrock").findings[0].detail
    assert codes(s, "anthropic") == []


def test_invalid_ids_never_pair_with_each_other():
    s = S(
        ("user", "hi"),
        ("assistant", [use_without("id", drop=True), use_without("id", drop=True)]),
        ("user", [result_without(drop=True)]),
        ("assistant", "ok"),
    )
    p = analyze(s).pairing
    assert all(u.results == [] for u in p.uses)
    assert all(r.use is None for r in p.results)
    assert p.uses[0].dup_of is None and p.uses[1].dup_of is None
    # by position the first id-less call and the id-less result still belong together
    assert p.uses[0].partner is p.results[0]
    assert [c[0] for c in codes(s)] == ["invalid-tool-id"] * 3  # no duplicate id, no orphan


# ------------------------------------------------------------------ invalid-tool-id: fixes


def test_several_id_less_calls_get_fresh_ids_and_answers_in_two_rounds():
    calls = [use_without("id", drop=True) for _ in range(5)]
    s = S(("user", "hi"), ("assistant", calls), ("user", "go on"), ("assistant", "ok"))
    out, applied = fixed(s)
    ids = [b.tool_id for b in out.messages[1].blocks]
    assert len(set(ids)) == 5 and all(i.startswith("toolu_hv") for i in ids)
    answers = [b for b in out.messages[2].blocks if b.type == "tool_result"]
    assert [b.tool_id for b in answers] == ids  # one synthetic result each, in call order
    assert all(block_text(b) == SYNTHETIC_RESULT_TEXT for b in answers)
    assert [f.code for f in applied] == ["invalid-tool-id", "orphan-tool-use"]


def test_an_id_less_call_takes_its_positional_results_id():
    s = S(
        ("user", "hi"),
        ("assistant", [U("a"), use_without("id", drop=True)]),
        ("user", [R("a"), R("toolu_real", "the output")]),
        ("assistant", "ok"),
    )
    assert ("mismatched-tool-result-id", 2) not in errors(s)
    out, applied = fixed(s)
    assert shape(out)[1:3] == [
        ("assistant", [("tool_use", "a"), ("tool_use", "toolu_real")]),
        ("user", [("tool_result", "a"), ("tool_result", "toolu_real")]),
    ]
    assert len(applied) == 1


def test_an_empty_result_id_takes_its_positional_calls_id():
    s = S(
        ("user", "hi"),
        ("assistant", [U("a"), U("b")]),
        ("user", [R("a"), result_without("")]),
        ("assistant", "ok"),
    )
    out, _ = fixed(s)
    assert shape(out)[2] == ("user", [("tool_result", "a"), ("tool_result", "b")])


def test_id_less_call_and_empty_result_get_one_new_id_together():
    s = S(
        ("user", "hi"),
        ("assistant", [use_without("id", drop=True)]),
        ("user", [result_without("", drop=False)]),
        ("assistant", "ok"),
    )
    out, _ = fixed(s)
    (use,) = out.messages[1].blocks
    (res,) = out.messages[2].blocks
    assert use.tool_id == res.tool_id and use.tool_id.startswith("toolu_hv")
    assert block_text(res) == "ok"  # the real result is kept
    assert list(use.data)[:2] == ["type", "id"]  # the new key sits where writers put it


def test_a_result_with_no_id_and_no_call_ends_in_the_report():
    s = S(("user", "hi"), ("assistant", "sure"), ("user", [result_without(drop=True), T("q")]))
    out, applied = fixed(s)
    assert shape(out)[2] == ("user", [("text", "q")])
    removed = [e["removed"] for f in applied for e in edit_entries(f) if "removed" in e]
    assert removed and removed[0]["content"] == "ok"


def test_rejected_characters_are_replaced_in_the_call_and_every_result():
    s = S(
        ("user", "hi"),
        ("assistant", [U("functions.read:0")]),
        ("user", [R("functions.read:0")]),
        ("assistant", "ok"),
    )
    out, _ = fixed(s)
    assert shape(out)[1:3] == [
        ("assistant", [("tool_use", "functions_read_0")]),
        ("user", [("tool_result", "functions_read_0")]),
    ]


def test_a_sanitised_id_that_is_taken_gets_a_suffix():
    s = S(
        ("user", "hi"),
        ("assistant", [U("a.b"), U("a_b")]),
        ("user", [R("a.b"), R("a_b")]),
        ("assistant", "ok"),
    )
    out, _ = fixed(s)
    assert shape(out)[1] == ("assistant", [("tool_use", "a_b_hv2"), ("tool_use", "a_b")])
    assert shape(out)[2] == ("user", [("tool_result", "a_b_hv2"), ("tool_result", "a_b")])


def test_drop_removes_the_invalid_blocks_and_keeps_them_in_the_report():
    s = S(
        ("user", "hi"),
        ("assistant", [T("run"), use_without("id", drop=True)]),
        ("user", "go on"),
        ("assistant", "ok"),
    )
    out, applied = fixed(s, by_code={"invalid-tool-id": "drop"})
    assert shape(out)[1] == ("assistant", [("text", "run")])
    assert [e["removed"]["name"] for f in applied for e in edit_entries(f) if "removed" in e] == [
        "Bash"
    ]


def test_the_plan_for_many_id_less_calls_is_one_fix_per_message():
    calls = [use_without("id", drop=True) for _ in range(40)]
    s = S(("user", "hi"), ("assistant", calls), ("user", "go on"), ("assistant", "ok"))
    plan = make_plan(s)
    assert [f.code for f in plan.actionable] == ["invalid-tool-id"]
    assert sum(e.action == "set_id" for e in plan.actionable[0].edits) == 40


# ------------------------------------------------------------------ wrong-role-block


def test_a_result_in_an_assistant_message_and_a_call_in_a_user_message_are_found():
    s = S(
        ("user", "hi"),
        ("assistant", [T("run"), U("a"), R("a")]),
        ("user", [T("and"), U("b"), R("b")]),
        ("assistant", "ok"),
    )
    found = codes(s)
    assert ("wrong-role-block", 1, 2, "a", "error") in found
    assert ("wrong-role-block", 2, 1, "b", "error") in found
    # the blocks paired with a misplaced one are judged after the move, not before
    assert not any(c[0] in ("orphan-tool-use", "orphan-tool-result") for c in found)
    # a result in an assistant message is not also "not first"
    assert ("tool-result-not-first", 1) not in [(c[0], c[1]) for c in found]


def test_move_puts_results_after_the_call_and_calls_before_their_results():
    s = S(
        ("user", "hi"),
        ("assistant", [T("run"), U("a"), R("a", "out a")]),
        ("user", [T("and"), U("b"), R("b", "out b")]),
        ("assistant", "ok"),
    )
    out, applied = fixed(s)
    assert shape(out) == [
        ("user", [("text", "hi")]),
        ("assistant", [("text", "run"), ("tool_use", "a"), ("tool_use", "b")]),
        ("user", [("tool_result", "a"), ("tool_result", "b"), ("text", "and")]),
        ("assistant", [("text", "ok")]),
    ]
    assert [block_text(b) for b in out.messages[2].blocks[:2]] == ["out a", "out b"]
    assert {f.code for f in applied} == {"wrong-role-block"}


def test_move_creates_the_message_that_is_missing():
    s = S(
        ("user", "hi"),
        ("assistant", [U("a"), R("a", "out a")]),
        ("assistant", "next"),
        ("user", [U("b")]),
    )
    out, _ = fixed(s, by_code={"pending-tool-use": "insert-result"})
    roles = [m.role for m in out.messages]
    assert roles[:3] == ["user", "assistant", "user"]
    assert shape(out)[2] == ("user", [("tool_result", "a")])
    # the lone call of a user message becomes the tail of the assistant message before it
    assert ("tool_use", "b") in shape(out)[3][1]


def test_a_call_in_the_first_message_gets_an_assistant_message_of_its_own():
    s = S(("user", [U("a"), R("a", "out")]), ("assistant", "ok"))
    out, _ = fixed(s)
    assert shape(out) == [
        ("assistant", [("tool_use", "a")]),
        ("user", [("tool_result", "a")]),
        ("assistant", [("text", "ok")]),
    ]


def test_to_text_keeps_the_content_and_turns_the_calls_results_to_text_too():
    s = S(
        ("user", "hi"),
        ("assistant", [T("run"), U("a"), R("a", "out a")]),
        ("user", [R("a"), T("and"), U("b"), R("b", "out b")]),
        ("assistant", "ok"),
    )
    out, applied = fixed(s, by_code={"wrong-role-block": "to-text"})
    texts = [block_text(b) for m in out.messages for b in m.blocks if b.type == "text"]
    assert any(t.startswith(SYNTHETIC_PREFIX) and "out a" in t for t in texts)
    assert any('"command": "ls"' in t and "(b)" in t for t in texts)
    assert any(t.startswith(SYNTHETIC_PREFIX) and "out b" in t for t in texts)
    # nothing answers "a" twice and no result is given another call's id
    assert shape(out)[2][1][0] == ("tool_result", "a")
    assert sum(1 for m in out.messages for b in m.blocks if b.tool_id == "b") == 0


# ------------------------------------------------------------------ a Claude Code file


def test_claude_code_file_with_id_less_calls_and_wrong_role_blocks_resumes_as_repaired():
    """Measured with Claude Code 2.1.197 (`clients/resume claude`): on the input it drops the
    id-less calls, sends "(no content)" for the empty-id result, and sends the assistant
    message as [text, tool_result X, tool_use X] (refused by the API). On the written file it
    sends exactly the repaired conversation below (then the new prompt)."""
    from repair.formats import load_bytes
    from tests.claude_code_records import assistant, jsonl, result, text, tool_use, user

    noid = {"type": "tool_use", "name": "Bash", "input": {"command": "ls"}}
    records = [
        user(1, None, "go", 1),
        assistant(2, 1, "msg_A", text("run"), 2),
        assistant(3, 2, "msg_A", noid, 3),
        assistant(4, 3, "msg_A", dict(noid, input={"command": "pwd"}), 4),
        result(5, 4, "", "ls out", 5),
        assistant(6, 5, "msg_B", text("then"), 6),
        assistant(7, 6, "msg_B", tool_use("toolu_X"), 7),
        assistant(
            8, 7, "msg_B", {"type": "tool_result", "tool_use_id": "toolu_X", "content": "x"}, 8
        ),
        user(9, 8, [text("more"), tool_use("toolu_Y")], 9),
        result(10, 9, "toolu_Y", "y out", 10),
        assistant(11, 10, "msg_C", text("done"), 11),
    ]
    session = load_bytes(jsonl(records), path="/tmp/s.jsonl", format="claude-code")
    # the user records 9 and 10 are one message, results first, as Claude Code merges them:
    # no tool-result-not-first
    # Claude Code 2.1.197 leaves the id-less calls (and the result answering them) out when
    # it sends: a warning under the default claude-code target, an error in the raw history
    assert {f.code for f in analyze(session).errors} == {"wrong-role-block"}
    assert {f.code for f in analyze(session, "anthropic").errors} == {
        "invalid-tool-id",
        "wrong-role-block",
    }
    out, _ = apply_all(session)
    again = load_bytes(out.export_bytes(), path="/tmp/s.jsonl", format="claude-code")
    assert analyze(again).findings == []
    sent_by_claude_code = [
        ("assistant", ["text", "tool_use toolu_hv2", "tool_use toolu_hv3"]),
        ("user", ["tool_result toolu_hv2", "tool_result toolu_hv3"]),
        ("assistant", ["text", "tool_use toolu_X", "tool_use toolu_Y"]),
        ("user", ["tool_result toolu_X", "tool_result toolu_Y", "text"]),
        ("assistant", ["text"]),
    ]
    live = [m for m in again.messages if m.live]
    assert [
        (m.role, [f"{b.type} {b.tool_id}" if b.tool_id else b.type for b in m.blocks])
        for m in live[1:]
    ] == sent_by_claude_code


def test_what_an_edit_removed_is_of_its_last_application():
    """A fix kept across states (`repair.replan`, a preview then the apply) reports what it
    removed where it was applied last: a drop of a block gone since removes nothing."""
    from repair.plan import apply_fixes

    s = S(("assistant", U("t1")), ("user", [R("t1", "first"), R("t1", "again")]))
    (fix,) = [f for f in make_plan(s).fixes if f.code == "duplicate-tool-result"]
    after, applied = apply_fixes(s, [fix])
    assert applied == [fix] and any(e.has_removed for e in fix.edits)
    again, _ = apply_fixes(after, [fix])  # the dropped block is not there any more
    assert shape(again) == shape(after)
    assert not any(e.has_removed for e in fix.edits)
    assert all(e.removed is None and e.removed_bids == () for e in fix.edits)
