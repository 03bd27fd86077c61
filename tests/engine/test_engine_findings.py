"""One test per finding code (docs/codes.md), with the edge cases of the definitions."""

from __future__ import annotations

from repair.analysis import analyze
from repair.model import Message
from tests.engine.engine_factory import M, R, S, T, U


def codes(session, target=None):
    return [
        (f.code, f.message_index, f.block_index, f.tool_use_id, f.severity)
        for f in analyze(session, target).findings
    ]


def only(session, code, target=None):
    return [f for f in analyze(session, target).findings if f.code == code]


def test_clean_turn_has_no_findings():
    s = S(
        ("user", "hi"),
        ("assistant", [T("reading"), U("a"), U("b")]),
        ("user", [R("a"), R("b")]),
        ("assistant", "done"),
    )
    assert codes(s) == []


def test_orphan_tool_use_points_at_the_call():
    s = S(
        ("user", "hi"), ("assistant", [U("a"), U("b")]), ("user", [R("a")]), ("assistant", "done")
    )
    assert codes(s) == [("orphan-tool-use", 1, 1, "b", "error")]
    f = only(s, "orphan-tool-use")[0]
    assert f.rule == "anthropic/tool-use-without-result"
    assert "b (Bash)" in f.detail and "message 2" in f.detail


def test_last_message_unanswered_call_is_pending_not_orphan():
    s = S(("user", "hi"), ("assistant", [T("let me look"), U("a")]))
    assert codes(s) == [("pending-tool-use", 1, 1, "a", "warning")]


def test_orphan_tool_result_when_no_use_exists_anywhere():
    s = S(
        ("user", "hi"), ("assistant", [U("a")]), ("user", [R("a"), R("zzz")]), ("assistant", "ok")
    )
    assert codes(s) == [("orphan-tool-result", 2, 1, "zzz", "error")]


def test_wrong_id_next_to_right_one_is_orphan_not_remap():
    # docs/codes.md, Pairing: the call already has its result, so the stray id has no positional partner.
    s = S(("user", "hi"), ("assistant", [U("a")]), ("user", [R("x"), R("a")]), ("assistant", "ok"))
    assert codes(s) == [("orphan-tool-result", 2, 0, "x", "error")]


def test_mismatched_id_pairs_by_position():
    s = S(
        ("user", "hi"),
        ("assistant", [U("a"), U("b")]),
        ("user", [R("a"), R("B-wrong")]),
        ("assistant", "ok"),
    )
    assert codes(s) == [("mismatched-tool-result-id", 2, 1, "B-wrong", "error")]
    assert "tool_use b" in only(s, "mismatched-tool-result-id")[0].detail


def test_mismatched_counts_differ_so_nothing_is_remapped():
    # two unknown results for one unanswered call: which one is it? Neither is remapped.
    s = S(("user", "hi"), ("assistant", [U("a")]), ("user", [R("x"), R("y")]), ("assistant", "ok"))
    assert codes(s) == [
        ("orphan-tool-use", 1, 0, "a", "error"),
        ("orphan-tool-result", 2, 0, "x", "error"),
        ("orphan-tool-result", 2, 1, "y", "error"),
    ]


def test_mismatched_more_calls_than_results_is_not_remapped():
    s = S(
        ("user", "hi"),
        ("assistant", [U("a"), U("b")]),
        ("user", [R("x")]),
        ("assistant", "ok"),
    )
    assert codes(s) == [
        ("orphan-tool-use", 1, 0, "a", "error"),
        ("orphan-tool-use", 1, 1, "b", "error"),
        ("orphan-tool-result", 2, 0, "x", "error"),
    ]


def test_mismatched_pairs_only_when_the_result_names_the_same_tool():
    def result(i: str, name: str):
        m = M("user", [R(i)])
        m.blocks[0].name = name  # a result that carries its tool's name (OpenAI, AI SDK)
        return m

    same = S(
        ("user", "hi"), ("assistant", [U("a", "Read")]), result("x", "Read"), ("assistant", "k")
    )
    assert codes(same) == [("mismatched-tool-result-id", 2, 0, "x", "error")]
    other = S(
        ("user", "hi"), ("assistant", [U("a", "Read")]), result("x", "Bash"), ("assistant", "k")
    )
    assert codes(other) == [
        ("orphan-tool-use", 1, 0, "a", "error"),
        ("orphan-tool-result", 2, 0, "x", "error"),
    ]


def test_duplicate_result_in_a_later_message():
    s = S(
        ("user", "hi"),
        ("assistant", [U("a")]),
        ("user", [R("a")]),
        ("assistant", "ok"),
        ("user", [R("a", "again")]),
        ("assistant", "fine"),
    )
    assert codes(s) == [("duplicate-tool-result", 4, 0, "a", "error")]
    assert "the first is in message 2," in only(s, "duplicate-tool-result")[0].detail


def test_duplicate_result_in_same_message():
    s = S(("user", "hi"), ("assistant", [U("a")]), ("user", [R("a"), R("a")]), ("assistant", "ok"))
    assert codes(s) == [("duplicate-tool-result", 2, 1, "a", "error")]
    # Naming the message it is in as "the first" would send the reader to look elsewhere.
    assert "the call is answered twice in message 2," in only(s, "duplicate-tool-result")[0].detail


def test_reused_tool_use_id_does_not_make_duplicate_results():
    s = S(
        ("user", "hi"),
        ("assistant", [U("a")]),
        ("user", [R("a")]),
        ("assistant", [U("a")]),
        ("user", [R("a")]),
        ("assistant", "done"),
    )
    assert codes(s) == [("duplicate-tool-use-id", 3, 0, "a", "error")]


def test_misplaced_split_results_warn_for_anthropic_error_for_bedrock():
    s = S(
        ("user", "hi"),
        ("assistant", [U("a"), U("b")]),
        ("user", [R("a")]),
        ("user", [R("b")]),
        ("assistant", "ok"),
    )
    assert ("misplaced-tool-result", 3, 0, "b", "warning") in codes(s, "anthropic")
    assert ("misplaced-tool-result", 3, 0, "b", "error") in codes(s, "bedrock")
    assert ("consecutive-same-role", 3, None, None, "error") in codes(s, "bedrock")
    assert ("consecutive-same-role", 3, None, None, "info") in codes(s, "anthropic")


def test_split_after_text_is_an_error_even_for_anthropic():
    # merged, the text would come before the second result
    s = S(
        ("user", "hi"),
        ("assistant", [U("a"), U("b")]),
        ("user", [R("a"), T("note")]),
        ("user", [R("b")]),
        ("assistant", "ok"),
    )
    assert ("misplaced-tool-result", 3, 0, "b", "error") in codes(s, "anthropic")


def test_result_delivered_late_after_another_turn():
    s = S(
        ("user", "hi"),
        ("assistant", [U("a")]),
        ("user", "continue"),
        ("assistant", "ok"),
        ("user", [R("a")]),
        ("assistant", "fine"),
    )
    assert codes(s) == [("misplaced-tool-result", 4, 0, "a", "error")]


def test_result_before_its_use_is_misplaced():
    s = S(("user", [R("a")]), ("assistant", [U("a")]), ("user", "next"), ("assistant", "ok"))
    found = codes(s)
    assert ("misplaced-tool-result", 0, 0, "a", "error") in found
    assert "before the call" in only(s, "misplaced-tool-result")[0].detail


def test_tool_result_not_first():
    s = S(
        ("user", "hi"), ("assistant", [U("a")]), ("user", [T("note"), R("a")]), ("assistant", "ok")
    )
    assert codes(s) == [("tool-result-not-first", 2, 1, "a", "error")]


def test_empty_content_message_and_blank_text_block():
    s = S(("user", "hi"), ("assistant", []), ("user", [T("   ")]), ("assistant", "ok"))
    found = codes(s)
    assert ("empty-content", 1, None, None, "error") in found
    assert ("empty-content", 2, 0, None, "error") in found


def test_final_assistant_may_be_empty():
    s = S(("user", "hi"), ("assistant", []))
    assert codes(s) == []


def test_empty_string_content_is_empty():
    s = S(("user", "hi"), ("assistant", "ok"), ("user", ""), ("assistant", "fine"))
    assert ("empty-content", 2, 0, None, "error") in codes(s)


def test_out_of_order_timestamp_is_info_and_result_before_use_warning():
    s = S(
        M("user", "hi", ts=100.0),
        M("assistant", [U("a")], ts=105.0),
        M("user", [R("a")], ts=104.5),
        M("assistant", "ok", ts=106.0),
    )
    found = codes(s)
    assert ("out-of-order-timestamp", 2, None, None, "info") in found
    assert ("result-before-use", 2, 0, "a", "warning") in found
    detail = only(s, "result-before-use")[0].detail
    assert "500 ms" in detail


def test_consecutive_same_role_assistant():
    s = S(("user", "hi"), ("assistant", "a"), ("assistant", "b"))
    assert codes(s) == [("consecutive-same-role", 2, None, None, "info")]
    assert codes(s, "bedrock") == [("consecutive-same-role", 2, None, None, "error")]


def test_malformed_is_reported_and_the_rest_still_checked():
    bad = Message(role="user", blocks=(), malformed="content is a number", src={"path": "/2"})
    s = S(
        ("user", "hi"),
        ("assistant", [U("a")]),
        bad,
        ("user", [R("a")]),
        ("assistant", [U("b")]),
        ("user", "x"),
        ("assistant", "ok"),
    )
    found = codes(s)
    # the malformed record is not sent: it has no number in the request, only its place
    assert ("malformed", None, None, None, "error") in found
    (bad_f,) = only(s, "malformed")
    assert bad_f.position == 2 and bad_f.source.to_json() == {"path": "/2"}
    # the malformed record is not part of the live conversation: a's result is still home
    assert not any(c[0] == "misplaced-tool-result" for c in found)
    # messages.N counts what is sent: b's message is the 4th sent (row 4 of the file)
    assert ("orphan-tool-use", 3, 0, "b", "error") in found
    assert only(s, "orphan-tool-use")[0].position == 4


def test_hidden_messages_are_not_checked():
    hidden = M("assistant", [U("old")])
    hidden.hidden = True
    s = S(("user", "hi"), hidden, ("assistant", "ok"), ("user", "x"), ("assistant", "y"))
    found = codes(s)
    assert not any(c[0] == "orphan-tool-use" for c in found)


def test_text_answer_counts_as_result():
    s = S(
        ("user", "hi"),
        ("assistant", [U("a", "read_file")]),
        ("user", [T("[read_file for 'x'] Result: ..."), T("env")]),
        ("assistant", "ok"),
    )
    s.messages[2].blocks[0].tool_id = "a"
    assert codes(s) == []


def test_openai_target_ignores_user_after_tool_messages_and_softens_empty():
    s = S(
        ("user", "hi"),
        ("assistant", [U("a")]),
        ("user", [R("a")]),
        ("user", "thanks"),
        ("assistant", "ok"),
        target="openai-chat",
    )
    assert codes(s) == []


def test_finding_source_is_block_source():
    s = S(("user", "hi"), ("assistant", [U("a")]), ("user", [R("zz")]), ("assistant", "ok"))
    s.messages[2].blocks[0].src = {"line": 7}
    f = only(s, "mismatched-tool-result-id")[0]
    assert f.source.to_json() == {"line": 7}
    assert f.to_json()["source"] == {"line": 7}
    assert set(f.to_json()) == {
        "code",
        "severity",
        "message_index",
        "block_index",
        "tool_use_id",
        "detail",
        "rule",
        "source",
        "client_repair",
    }
    assert f.to_json()["client_repair"] is None
