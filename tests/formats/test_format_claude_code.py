"""The `claude-code` adapter: the conversation Claude Code would resume (leaf, parentUuid
walk, parallel results put back, forks, compaction, sidechain threads), line numbers,
byte-identical export, and the records a fix writes (new result records, re-linked chain,
deleted records) checked by loading the written bytes again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repair.analysis import analyze
from repair.errors import InputError
from repair.formats import detect, get_adapter, load_bytes, load_session, probe_bytes
from repair.formats.claude_code.write import _Writer
from repair.model import SYNTHETIC_RESULT_TEXT, Message
from repair.wire import request_body
from tests.claude_code_records import (
    SID,
    U,
    assistant,
    env,
    jsonl,
    result,
    text,
    tool_use,
    ts,
    user,
)
from tests.formats.build import synthetic
from tests.paths import CORPUS, SAMPLES

REAL = CORPUS / "claude_code"

MODERN = "ccl_modern_v2.1.114/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
FORK = "ccl_thinking_hooks_v2.1.42/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"
INLINE = "cclogviewer_inline_sidechain_v1.0.61/example.jsonl"
SUMMARIES = "ccl_summaries_v1.0.51/326189cf-5676-4237-8cde-1ce80aae4a9f.jsonl"
SUBAGENTS = "ccl_subagents_v2.1.17/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl"
SUBAGENT_FILE = (
    "ccl_subagents_v2.1.17/29ccd257-68b1-427f-ae5f-6524b7cb6f20/subagents/agent-a2271d1.jsonl"
)
WARMUP = "ccl_agent_warmup_v2.0.37/agent-0c78cdae.jsonl"


def corpus_files() -> list[Path]:
    if not REAL.is_dir():
        return []
    return sorted(REAL.rglob("*.jsonl"))


def real(rel: str) -> Path:
    p = REAL / rel
    if not p.is_file():
        pytest.skip("real Claude Code corpus absent")
    return p


def every_corpus_file():
    files = corpus_files()
    if not files:
        pytest.skip("real Claude Code corpus absent")
    return files


def sample_files() -> list[Path]:
    return sorted(SAMPLES.glob("claude_code_*.jsonl"))


def load(records, path: str = "/tmp/s.jsonl"):
    return load_bytes(jsonl(records), path=path, format="claude-code")


def live(session) -> list[Message]:
    return [m for m in session.messages if m.live]


def shape(session) -> list[tuple]:
    return [
        (m.role, tuple((b.type, b.tool_id) if b.tool_id else b.type for b in m.blocks))
        for m in live(session)
    ]


def lines_of(data: bytes) -> list[dict]:
    return [json.loads(x) for x in data.splitlines() if x.strip()]


def parallel_session() -> list[dict]:
    """A prompt, one assistant response with three parallel calls (A, B, C), where C's
    result was written first off the chain, B's is on the chain, A never got one."""
    return [
        {
            "type": "file-history-snapshot",
            "messageId": U(1),
            "snapshot": {},
            "isSnapshotUpdate": False,
        },
        user(1, None, "check everything", 1),
        assistant(2, 1, "msg_P", text("Running all three."), 2),
        assistant(3, 2, "msg_P", tool_use("toolu_A", "npm test"), 3),
        assistant(4, 3, "msg_P", tool_use("toolu_B", "npm run lint"), 4),
        assistant(5, 4, "msg_P", tool_use("toolu_C", "tsc"), 5),
        result(6, 5, "toolu_C", "tsc ok", 6),
        result(7, 4, "toolu_B", "lint ok", 7),
        user(8, 7, "the tests hung; go on", 60),
        assistant(9, 8, "msg_Q", text("OK."), 61),
    ]


# ------------------------------------------------------------------ detection


def test_detects_every_real_file_and_sample():
    for p in every_corpus_file() + sample_files():
        probe = probe_bytes(p.read_bytes(), path=str(p))
        assert detect(probe).name == "claude-code", p


def test_codex_rollout_and_chat_jsonl_are_not_claimed():
    adapter = get_adapter("claude-code")
    codex = (
        b'{"timestamp":"2025-11-20T10:00:00.000Z","type":"session_meta","payload":{"id":"x","originator":"codex_cli_rs"}}\n'
        b'{"timestamp":"2025-11-20T10:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[]}}\n'
    )
    assert adapter.detect(probe_bytes(codex, path="r.jsonl")) == 0
    chat = b'{"messages":[{"role":"user","content":"hi"}]}\n{"messages":[{"role":"user","content":"yo"}]}\n'
    assert adapter.detect(probe_bytes(chat, path="c.jsonl")) == 0


def test_other_real_formats_are_not_claimed():
    others = (
        [p for p in REAL.parent.rglob("*.json*") if "claude_code" not in p.parts]
        if REAL.is_dir()
        else []
    )
    if not others:
        pytest.skip("real corpus absent")
    adapter = get_adapter("claude-code")
    for p in others:
        assert adapter.detect(probe_bytes(p.read_bytes(), path=str(p))) == 0, p


def test_summary_only_file_is_claude_code_with_no_messages():
    data = jsonl(
        [
            {"type": "summary", "summary": "Old work", "leafUuid": U(99)},
            {"type": "summary", "summary": "Other", "leafUuid": U(98)},
        ]
    )
    s = load_bytes(data, path="x.jsonl")
    assert s.format == "claude-code"
    assert s.messages == []
    assert analyze(s).findings == []
    assert s.export_bytes() == data


# ------------------------------------------------------------------ the real corpus


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_real_file_loads_with_sane_messages_and_round_trips(path: Path):
    s = load_session(str(path))
    data = path.read_bytes()
    assert s.export_bytes() == data
    lines = data.split(b"\n")
    msgs = live(s)
    assert msgs, "a real session has a conversation"
    assert all(m.role in ("user", "assistant") for m in msgs)
    # merged messages never put two assistant responses (message.id) into one message
    for m in msgs:
        if m.role == "assistant":
            ids = {json.loads(lines[b.src["line"] - 1])["message"]["id"] for b in m.blocks}
            assert len(ids) == 1
    # every block names the line of the record holding it
    for m in s.messages:
        assert m.src and m.src["line"] >= 1
        for b in m.blocks:
            rec = json.loads(lines[b.src["line"] - 1])
            content = rec["message"]["content"]
            assert b.data == content or b.data in content
    # timestamps are the first record's
    for m in msgs:
        rec = json.loads(lines[m.src["line"] - 1])
        assert m.meta["timestamp"] == pytest.approx(
            __import__("datetime").datetime.fromisoformat(rec["timestamp"]).timestamp()
        )


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_real_file_has_no_error_finding(path: Path):
    s = load_session(str(path))
    for sess in [s, *s.threads]:
        a = analyze(sess, s.target)
        assert not a.errors, [(f.code, f.source.to_json(), f.detail) for f in a.errors]
        for f in a.findings:
            assert f.source.line, f


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_real_file_rewritten_with_no_edit_is_byte_identical(path: Path):
    """The writer's own path (sequence, glue, parents, placement) reproduces the file when
    nothing changed: the chain it lays out is the one the loader found."""
    s = load_session(str(path))
    w = _Writer(s.state.file)
    w.plan_view(s.state.view, list(s.messages))
    assert not w.relink and not w.rewrite and not w.deleted and not w.new_records
    assert w.render() == path.read_bytes()


def test_modern_file_resumes_from_the_last_line_with_parallel_results_recovered():
    s = load_session(str(real(MODERN)))
    msgs = live(s)
    # Claude Code 2.1.197 sends this file as 35 messages (then its own "No response
    # requested." and the new prompt): tests/fixtures/clients/claude holds the request
    assert len(msgs) == 35
    assert s.state.recovered == 10  # 10 off-chain lines put back, as Claude Code 2.1.88 does
    assert msgs[-1].blocks[-1].src == {"line": 180}  # the newest leaf: the /exit stdout line
    assert not any(m.hidden for m in s.messages)  # parallel "forks" are not forks
    # a streamed parallel call, written [use][result][use][result]..., is one assistant
    # message and one user message: lines 45-56 (54-56 streamed after the first three)
    turn = next(i for i, m in enumerate(msgs) if m.src == {"line": 44})
    assert [b.src["line"] for b in msgs[turn].blocks] == [44, 45, 48, 51, 54, 55, 56]
    assert [b.src["line"] for b in msgs[turn + 1].blocks] == [46, 49, 52, 57, 61, 63]
    # and the three-call turn of lines 133-137, results on lines 140, 142, 144
    turn = next(i for i, m in enumerate(msgs) if m.src == {"line": 133})
    assert [b.type for b in msgs[turn].blocks].count("tool_use") == 3
    assert sorted(b.src["line"] for b in msgs[turn + 1].blocks) == [140, 142, 144]
    # attachments, system, last-prompt, permission-mode records are not messages
    assert all(m.role in ("user", "assistant") for m in s.messages)


def test_modern_file_finds_its_subagent_thread():
    s = load_session(str(real(MODERN)))
    (thread,) = s.threads
    assert "alice comparison" in thread.label
    assert thread.path.endswith("agent-a36efb2a1231c41e2.jsonl")
    # 16 records' worth of turns, two of them parallel calls: 12 messages as sent
    assert len(live(thread)) == 12
    assert thread.export_bytes() == Path(thread.path).read_bytes()


def test_rewind_fork_keeps_the_abandoned_branch_hidden():
    s = load_session(str(real(FORK)))
    hidden = [m for m in s.messages if m.hidden]
    assert [m.src["line"] for m in hidden] == [18, 19, 25, 26, 32, 33]
    assert all("abandoned branch" in m.meta["hidden_reason"] for m in hidden)
    first_live_after = [m for m in live(s) if m.src["line"] > 16][0]
    assert first_live_after.src == {"line": 38}  # "I actually don't like much this idea"
    assert "actually don't like" in first_live_after.blocks[0].data
    # hidden messages sit where the branch is, not checked
    idx = [i for i, m in enumerate(s.messages) if m.hidden]
    assert idx == list(range(idx[0], idx[0] + 6))
    assert not any(f.message_index in idx for f in analyze(s).findings)


def test_whitespace_only_text_records_claude_code_drops_are_not_blocks():
    s = load_session(str(real(FORK)))
    lines = set()
    for m in s.messages:
        lines.update(b.src["line"] for b in m.blocks)
    assert 4 not in lines and 39 not in lines  # the "\n\n" openers of thinking turns
    first = live(s)[1]
    assert [b.type for b in first.blocks] == ["thinking", "text", "tool_use"]


def test_inline_sidechain_is_its_own_thread_and_interrupt_note_merges():
    s = load_session(str(real(INLINE)))
    assert all(not m.hidden for m in s.messages)
    (thread,) = s.threads
    assert thread.messages[0].src == {"line": 13}
    assert [m.src["line"] for m in live(thread)] == [13, 14, 16, 17]
    main_lines = {b.src["line"] for m in s.messages for b in m.blocks}
    assert not main_lines & {13, 14, 15, 16, 17}
    # tool result (8), "[Request interrupted by user]" (9) and the next prompt (10): one message
    merged = next(m for m in live(s) if m.src == {"line": 8})
    assert [b.src["line"] for b in merged.blocks] == [8, 9, 10]


def test_summaries_pointing_into_other_files_are_no_fault():
    s = load_session(str(real(SUMMARIES)))
    assert len(live(s)) == 30
    assert analyze(s).findings == []
    assert s.messages[0].src == {"line": 5}


def test_subagent_folder_and_project_agent_file():
    s = load_session(str(real(SUBAGENTS)))
    assert [t.label for t in s.threads] == ["subagent agent-a2271d1"]
    sub = s.threads[0]
    assert len(live(sub)) == 20
    # in the subagent file every fan-out's results come right after its calls
    for a, u in zip(live(sub)[1::2], live(sub)[2::2], strict=False):
        uses = [b.tool_id for b in a.blocks if b.type == "tool_use"]
        results = [b.tool_id for b in u.blocks if b.type == "tool_result"]
        assert sorted(uses) == sorted(results)
    warm = load_session(str(real(WARMUP)))
    assert shape(warm) == [("user", ("text",)), ("assistant", ("text",))]
    assert warm.state.view.sidechain


def test_given_a_session_folder_the_jsonl_beside_it_is_read():
    folder = real(SUBAGENTS).with_suffix("")
    s = load_session(str(folder))
    assert s.path == str(real(SUBAGENTS))


# ------------------------------------------------------------------ the loader, synthetic


def test_leaf_is_newest_non_sidechain_candidate_and_ties_go_to_the_first():
    recs = [
        user(1, None, "a", 1),
        assistant(2, 1, "msg_1", text("b"), 2),
        user(3, 2, "branch one", 5),
        user(4, 2, "branch two", 5),  # same timestamp: the first in the file wins
        user(5, None, "side", 9, isSidechain=True),
    ]
    s = load(recs)
    assert [m.src["line"] for m in live(s)] == [1, 2, 3]
    assert [m.src["line"] for m in s.messages if m.hidden] == [4]


def test_progress_records_are_bridged():
    recs = [
        user(1, None, "a", 1),
        assistant(2, 1, "msg_1", tool_use("toolu_1"), 2),
        {
            "parentUuid": U(2),
            **env(),
            "type": "progress",
            "data": {"type": "hook_progress"},
            "uuid": U(3),
            "timestamp": ts(3),
        },
        {
            "parentUuid": U(3),
            **env(),
            "type": "progress",
            "data": {"type": "hook_progress"},
            "uuid": U(4),
            "timestamp": ts(3),
        },
        result(5, 4, "toolu_1", "ok", 4),
        assistant(6, 5, "msg_2", text("done"), 5),
    ]
    s = load(recs)
    assert shape(s) == [
        ("user", ("text",)),
        ("assistant", (("tool_use", "toolu_1"),)),
        ("user", (("tool_result", "toolu_1"),)),
        ("assistant", ("text",)),
    ]
    assert analyze(s).findings == []


def test_duplicate_uuid_keeps_the_last_content_at_the_first_place():
    recs = [
        user(1, None, "a", 1),
        assistant(2, 1, "msg_1", text("first version"), 2),
        user(3, 2, "next", 3),
        assistant(2, 1, "msg_1", text("second version"), 2),
    ]
    s = load(recs)
    assert [m.blocks[0].data for m in live(s)][1] == {"type": "text", "text": "second version"}
    assert live(s)[1].src == {"line": 4}


def test_missing_parent_cuts_the_chain_and_the_rest_is_hidden():
    """No record is stamped within 5 s before the one whose parent is missing: Claude Code
    2.1.197 resumes from it (measured)."""
    recs = [
        user(1, None, "old start", 1),
        assistant(2, 1, "msg_1", text("old answer"), 2),
        user(3, 77, "after the gap", 30),
        assistant(4, 3, "msg_2", text("new answer"), 31),
    ]
    s = load(recs)
    assert [m.src["line"] for m in live(s)] == [3, 4]
    assert [m.meta["hidden_reason"] for m in s.messages if m.hidden] == [
        "not connected to the resumed conversation"
    ] * 2
    assert "naming no record" in s.state.stop


def test_a_gap_of_at_most_5_s_is_bridged_like_claude_code_does():
    """Claude Code 2.1.197 goes on with the record stamped closest before (within 5 s) when
    a parentUuid names no record (its timestamp fallback, read from its source and measured
    on a real file with a record removed)."""
    recs = [
        user(1, None, "start", 1),
        assistant(2, 1, "msg_1", text("answer"), 2),
        user(3, 77, "after the gap", 6.5),
        assistant(4, 3, "msg_2", text("new answer"), 7),
    ]
    s = load(recs)
    # line 2 is stamped 4.5 s before line 3: the walk goes on with it
    assert [m.src["line"] for m in live(s)] == [1, 2, 3, 4]
    assert s.state.stop is None and [b.to for b in s.state.walk.bridges] == [U(2)]


def test_compaction_boundary_hides_history_before_it():
    boundary = {
        "parentUuid": None,
        "logicalParentUuid": U(2),
        **env(),
        "type": "system",
        "subtype": "compact_boundary",
        "content": "Conversation compacted",
        "isMeta": False,
        "timestamp": ts(10),
        "uuid": U(3),
        "level": "info",
        "compactMetadata": {"trigger": "manual", "preTokens": 120000},
    }
    recs = [
        user(1, None, "old prompt", 1),
        assistant(2, 1, "msg_1", tool_use("toolu_old"), 2),  # no result: history, not checked
        boundary,
        user(
            4,
            3,
            "This session is being continued from a previous conversation...",
            11,
            isCompactSummary=True,
            isVisibleInTranscriptOnly=True,
        ),
        assistant(5, 4, "msg_2", text("Continuing."), 12),
    ]
    s = load(recs)
    assert [m.src["line"] for m in live(s)] == [4, 5]
    hidden = [m for m in s.messages if m.hidden]
    assert [m.src["line"] for m in hidden] == [1, 2]
    assert all("compaction" in m.meta["hidden_reason"] for m in hidden)
    assert not analyze(s).errors


def test_preserved_segment_is_relinked_and_older_nodes_pruned():
    seg = {"headUuid": U(3), "anchorUuid": U(11), "tailUuid": U(4)}
    boundary = {
        "parentUuid": None,
        **env(),
        "type": "system",
        "subtype": "compact_boundary",
        "content": "Conversation compacted",
        "timestamp": ts(10),
        "uuid": U(10),
        "compactMetadata": {"trigger": "auto", "preTokens": 9, "preservedSegment": seg},
    }
    recs = [
        user(1, None, "pruned prompt", 1),
        assistant(2, 1, "msg_1", text("pruned answer"), 2),
        user(3, 2, "kept prompt", 3),
        assistant(4, 3, "msg_2", text("kept answer"), 4),
        boundary,
        user(11, 10, "summary", 11, isCompactSummary=True),
        user(12, 11, "go on", 12),
        assistant(13, 12, "msg_3", text("sure"), 13),
    ]
    s = load(recs)
    # head (line 3) hangs on the anchor (summary), the anchor's other child on the tail
    order = [b.src["line"] for m in live(s) for b in m.blocks]
    assert order == [6, 3, 4, 7, 8]
    assert [m.src["line"] for m in s.messages if m.hidden] == [1, 2]


def test_unreadable_line_is_a_malformed_message_at_its_line():
    good = [user(1, None, "a", 1), assistant(2, 1, "msg_1", text("b"), 2)]
    data = jsonl(good[:1]) + b'{"parentUuid": broken\n' + jsonl(good[1:])
    s = load_bytes(data, path="x.jsonl")
    bad = [m for m in s.messages if m.malformed]
    assert len(bad) == 1 and bad[0].src == {"line": 2}
    f = [f for f in analyze(s).findings if f.code == "malformed"]
    assert f and f[0].source.to_json() == {"line": 2}
    assert s.export_bytes() == data


def test_first_line_not_json_is_an_input_error():
    data = b"not json at all\n" + jsonl([user(1, None, "a", 1)])
    with pytest.raises(InputError):
        load_bytes(data, path="x.jsonl")


def test_record_with_wrongly_typed_content_is_malformed_and_the_rest_checked():
    recs = [
        user(1, None, "a", 1),
        assistant(2, 1, "msg_1", tool_use("toolu_1"), 2),
        user(3, 2, 42, 3),
        assistant(4, 3, "msg_2", text("b"), 4),
    ]
    s = load(recs)
    bad = [m for m in s.messages if m.malformed]
    assert len(bad) == 1 and bad[0].src == {"line": 3} and "content" in bad[0].malformed
    codes = {f.code for f in analyze(s).findings}
    assert "malformed" in codes and "orphan-tool-use" in codes


def test_api_error_records_are_hidden():
    recs = [
        user(1, None, "a", 1),
        assistant(2, 1, "msg_e", text("API Error: 529 overloaded"), 2, isApiErrorMessage=True),
        user(3, 2, "retry", 3),
        assistant(4, 3, "msg_2", text("b"), 4),
    ]
    s = load(recs)
    # not sent, and no barrier: the prompt and its retry are one user message, as sent
    assert [m.hidden for m in s.messages] == [False, True, False]
    assert [b.data for b in s.messages[0].blocks] == ["a", "retry"]
    assert s.export_bytes() == jsonl(recs)


def test_single_record_file_loads_and_round_trips():
    data = jsonl([user(1, None, "only prompt", 1)])
    s = load_bytes(data, path="one.jsonl")
    assert s.format == "claude-code" and shape(s) == [("user", ("text",))]
    assert s.export_bytes() == data


def test_parallel_results_are_one_turn_and_the_missing_one_is_reported():
    s = load(parallel_session())
    assert shape(s) == [
        ("user", ("text",)),
        (
            "assistant",
            ("text", ("tool_use", "toolu_A"), ("tool_use", "toolu_B"), ("tool_use", "toolu_C")),
        ),
        ("user", (("tool_result", "toolu_C"), ("tool_result", "toolu_B"), "text")),
        ("assistant", ("text",)),
    ]
    assert not any(m.hidden for m in s.messages)
    (f,) = [f for f in analyze(s, "anthropic").findings if f.severity == "error"]
    assert (f.code, f.tool_use_id, f.source.to_json()) == (
        "orphan-tool-use",
        "toolu_A",
        {"line": 4},
    )


# ------------------------------------------------------------------ writing edits


def edit(session, i: int, blocks) -> list[Message]:
    msgs = list(session.messages)
    msgs[i] = msgs[i].with_blocks(blocks)
    return msgs


def export(session, messages) -> bytes:
    return session.copy_with(messages).export_bytes()


def test_synthetic_result_for_a_single_call_goes_right_after_it_and_relinks_the_child():
    recs = [
        user(1, None, "a", 1),
        assistant(2, 1, "msg_1", tool_use("toolu_1"), 2),
        user(3, 2, "I stopped it, go on", 30),
        assistant(4, 3, "msg_2", text("ok"), 31),
    ]
    s = load(recs)
    home = live(s)[2]
    out = export(s, edit(s, 2, (synthetic("toolu_1"), *home.blocks)))
    before = jsonl(recs).splitlines()
    after = out.splitlines()
    assert len(after) == 5
    assert after[:2] == before[:2] and after[4] == before[3]
    new = json.loads(after[2])
    assert list(new)[0] == "parentUuid" and new["parentUuid"] == U(2)
    # it opens the user message "I stopped it, go on": written with that message's time
    # (between its parent and its child), so the message keeps the time it had
    assert new["timestamp"] == ts(30)
    assert new["sourceToolAssistantUUID"] == U(2)
    assert new["toolUseResult"] == SYNTHETIC_RESULT_TEXT
    assert new["message"]["content"][0]["tool_use_id"] == "toolu_1"
    assert json.loads(after[3])["parentUuid"] == new["uuid"]  # the old child re-linked
    assert after[3] == before[2].replace(U(2).encode(), new["uuid"].encode(), 1)
    again = load_bytes(out, path="s.jsonl")
    assert shape(again)[2] == ("user", (("tool_result", "toolu_1"), "text"))
    assert not analyze(again).errors


def test_synthetic_result_copies_key_order_and_envelope_from_neighbours():
    recs = [
        user(1, None, "a", 1),
        assistant(2, 1, "msg_1", tool_use("toolu_1"), 2, slug="odd-slug"),
        result(3, 2, "toolu_1", "fine", 3),
        assistant(4, 3, "msg_2", tool_use("toolu_2"), 4, slug="odd-slug"),
        user(5, 4, "next", 9),
    ]
    s = load(recs)
    out = export(s, edit(s, 4, (synthetic("toolu_2"), *live(s)[4].blocks)))
    new = lines_of(out)[4]
    template = recs[2]
    assert [k for k in new if k != "slug"] == list(template)
    assert new["slug"] == "odd-slug"  # the tool_use record's envelope
    assert list(new["message"]["content"][0]) == ["tool_use_id", "type", "content", "is_error"]
    assert len(new["uuid"]) == 36 and new["uuid"][14] == "4"


def test_parallel_interrupted_turn_is_laid_out_as_one_sequence():
    s = load(parallel_session())
    home = live(s)[2]
    res_c, res_b, prompt = home.blocks
    out = export(s, edit(s, 2, (synthetic("toolu_A"), res_b, res_c, prompt)))
    recs = lines_of(out)
    by_uuid = {r.get("uuid"): r for r in recs}
    new = next(
        r for r in recs if r.get("type") == "user" and r["uuid"] not in {U(i) for i in range(20)}
    )
    # chain: C(5) -> synthetic A -> result C(6) -> result B(7) -> prompt(8): the new result
    # after the response's last line, the others in the order they were written (Claude
    # Code merges them into one user message, results first, whatever their order)
    assert new["parentUuid"] == U(5)
    assert by_uuid[U(6)]["parentUuid"] == new["uuid"]
    assert by_uuid[U(7)]["parentUuid"] == U(6)
    assert by_uuid[U(8)]["parentUuid"] == U(7)
    assert new["sourceToolAssistantUUID"] == U(3)
    # parents are written before their children
    order = [r.get("uuid") for r in recs]
    for r in recs:
        if r.get("uuid") and r.get("parentUuid") in order:
            assert order.index(r["parentUuid"]) < order.index(r["uuid"])
    again = load_bytes(out, path="s.jsonl")
    assert again.state.recovered == 0  # no longer relies on Claude Code's recovery pass
    assert not analyze(again).errors


def test_dropping_a_record_relinks_its_children_and_keeps_other_lines():
    recs = [
        user(1, None, "a", 1),
        assistant(2, 1, "msg_1", tool_use("toolu_1"), 2),
        result(3, 2, "toolu_1", "ok", 3),
        result(4, 3, "toolu_ghost", "stray", 4),
        user(5, 4, "next", 5),
        assistant(6, 5, "msg_2", text("fine"), 6),
    ]
    s = load(recs)
    home = live(s)[2]
    out = export(s, edit(s, 2, tuple(b for b in home.blocks if b.tool_id != "toolu_ghost")))
    before, after = jsonl(recs).splitlines(), out.splitlines()
    assert len(after) == 5
    assert after[:3] == before[:3] and after[4] == before[5]
    assert json.loads(after[3])["parentUuid"] == U(3)
    assert after[3] == before[4].replace(U(4).encode(), U(3).encode(), 1)


def test_dropping_an_off_chain_childs_parent_relinks_it_too():
    recs = [
        user(1, None, "a", 1),
        assistant(2, 1, "msg_1", tool_use("toolu_1"), 2),
        result(3, 2, "toolu_1", "ok", 3),
        result(4, 3, "toolu_ghost", "stray", 4),
        {
            "parentUuid": U(4),
            **env(),
            "attachment": {"type": "hook_success"},
            "type": "attachment",
            "uuid": U(7),
            "timestamp": ts(4.5),
        },
        user(5, 4, "next", 5),
    ]
    s = load(recs)
    home = live(s)[2]
    out = export(s, edit(s, 2, tuple(b for b in home.blocks if b.tool_id != "toolu_ghost")))
    by_uuid = {r["uuid"]: r for r in lines_of(out)}
    assert U(4) not in by_uuid
    assert by_uuid[U(7)]["parentUuid"] == U(3)


def test_id_change_rewrites_only_that_record():
    data = (SAMPLES / "claude_code_duplicate_id_after_resume.jsonl").read_bytes()
    s = load_bytes(data, path="d.jsonl")
    msgs = list(s.messages)
    i = next(k for k, m in enumerate(msgs) if m.src == {"line": 14})
    from repair.edits import with_tool_id

    msgs[i] = msgs[i].with_blocks([with_tool_id(msgs[i].blocks[0], "toolu_renamed")])
    out = export(s, msgs)
    before, after = data.splitlines(), out.splitlines()
    changed = [k + 1 for k, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert changed == [14]
    assert json.loads(after[13])["message"]["content"][0]["id"] == "toolu_renamed"


def test_block_dropped_from_a_multi_block_record_rewrites_only_that_record():
    both = [
        {"tool_use_id": "toolu_1", "type": "tool_result", "content": "one"},
        {"tool_use_id": "toolu_x", "type": "tool_result", "content": "stray"},
    ]
    recs = [
        user(1, None, "a", 1),
        assistant(2, 1, "msg_1", tool_use("toolu_1"), 2),
        user(3, 2, both, 3),
        assistant(4, 3, "msg_2", text("b"), 4),
    ]
    s = load(recs)
    home = live(s)[2]
    out = export(s, edit(s, 2, home.blocks[:1]))
    before, after = jsonl(recs).splitlines(), out.splitlines()
    assert [a == b for a, b in zip(before, after, strict=True)] == [True, True, False, True]
    assert json.loads(after[2])["message"]["content"] == both[:1]


def test_result_turned_into_text_stays_in_its_record():
    recs = [
        user(1, None, "a", 1),
        assistant(2, 1, "msg_1", text("hi"), 2),
        result(3, 2, "toolu_nowhere", "data", 3),
        assistant(4, 3, "msg_2", text("b"), 4),
    ]
    s = load(recs)
    from repair.plan import result_as_text

    blocks = result_as_text(live(s)[2].blocks[0])
    out = export(s, edit(s, 2, blocks))
    after = out.splitlines()
    assert len(after) == 4
    rec = json.loads(after[2])
    assert rec["uuid"] == U(3) and rec["message"]["content"][0]["type"] == "text"


def test_new_user_message_after_the_last_assistant_becomes_the_tip():
    recs = [
        user(1, None, "a", 1),
        assistant(2, 1, "msg_1", tool_use("toolu_1"), 2),
        {"type": "last-prompt", "lastPrompt": "a", "sessionId": SID},
    ]
    s = load(recs)
    msgs = list(s.messages) + [Message(role="user", blocks=(synthetic("toolu_1"),))]
    out = export(s, msgs)
    after = out.splitlines()
    assert len(after) == 4 and json.loads(after[3])["type"] == "last-prompt"
    new = json.loads(after[2])
    assert new["parentUuid"] == U(2)
    again = load_bytes(out, path="s.jsonl")
    assert live(again)[-1].blocks[0].tool_id == "toolu_1"
    assert not analyze(again).findings


def test_dropped_unreadable_line_is_removed():
    good = [user(1, None, "a", 1), assistant(2, 1, "msg_1", text("b"), 2)]
    data = jsonl(good[:1]) + b"{oops\n" + jsonl(good[1:])
    s = load_bytes(data, path="x.jsonl")
    msgs = [m for m in s.messages if not m.malformed]
    assert export(s, msgs) == jsonl(good)


def test_inline_sidechain_edits_are_written_with_the_main_session():
    recs = [
        user(1, None, "main", 1),
        assistant(2, 1, "msg_1", text("main answer"), 2),
        user(3, None, "side task", 3, isSidechain=True),
        assistant(4, 3, "msg_s", tool_use("toolu_s"), 4, isSidechain=True),
        user(5, 4, "side follow-up", 5, isSidechain=True),
    ]
    s = load(recs)
    (t,) = s.threads
    assert [f.code for f in analyze(t, "anthropic").errors] == ["orphan-tool-use"]
    tmsgs = list(t.messages)
    tmsgs[2] = tmsgs[2].with_blocks((synthetic("toolu_s"), *tmsgs[2].blocks))
    s.threads[0] = t.copy_with(tmsgs)
    out = s.export_bytes()
    new = [r for r in lines_of(out) if r["uuid"] not in {U(i) for i in range(9)}]
    assert len(new) == 1 and new[0]["isSidechain"] is True and new[0]["parentUuid"] == U(4)
    again = load_bytes(out, path="s.jsonl")
    assert not analyze(again.threads[0]).errors


def test_a_write_that_would_not_resume_is_refused(monkeypatch):
    from repair.errors import ExportRefused
    from repair.formats.claude_code import write as claude_write
    from repair.readback import read_back

    s = load(parallel_session())
    home = live(s)[2]
    # a writer that makes a re-linked record a root cuts the chain there: Claude Code would
    # resume only what follows (a parent that names no record is bridged by Claude Code's
    # timestamp fallback when a record is stamped within 5 s before: not a root)
    swap = claude_write._swap_parent
    monkeypatch.setattr(claude_write, "_swap_parent", lambda raw, obj, parent: swap(raw, obj, None))
    res_c, res_b, prompt = home.blocks
    repaired = s.copy_with(edit(s, 2, (synthetic("toolu_A"), res_b, res_c, prompt)))
    # every export reads its bytes back before writing them (repair.readback)
    with pytest.raises(ExportRefused, match="would not resume"):
        read_back(repaired, repaired.export().data, {})
    monkeypatch.undo()
    assert read_back(repaired, repaired.export().data, {}).errors == 0


def test_same_fix_writes_the_same_bytes():
    s = load(parallel_session())
    home = live(s)[2]
    a = export(s, edit(s, 2, (synthetic("toolu_A"), *home.blocks)))
    s2 = load(parallel_session())
    b = export(s2, edit(s2, 2, (synthetic("toolu_A"), *live(s2)[2].blocks)))
    assert a == b


# ------------------------------------------------------------------ through the engine


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_real_file_fix_then_check_leaves_no_error(path: Path):
    from repair.plan import apply_all

    s = load_session(str(path))
    fixed, _ = apply_all(s)
    out = fixed.export_bytes()
    assert out == path.read_bytes()  # a healthy session needs no edit
    assert not analyze(load_bytes(out, path=str(path))).errors


class _Gen:
    """Random Claude Code sessions written the way the CLI writes them (one record per
    block, results in completion order hanging off their call, the cursor moving on), with
    the faults seen in the wild: lost, duplicated, late, stray results; reused ids; empty
    prompts; text before results; hook progress; a rewind branch; a sidechain; a bad line."""

    def __init__(self, seed: int):
        import random

        self.r = random.Random(seed)
        self.seed = seed
        self.n = 0
        self.t = 1.0
        self.recs: list = []

    def _id(self) -> int:
        self.n += 1
        return self.n

    def _t(self) -> float:
        self.t += self.r.randint(1, 3000) / 1000
        return self.t

    def user(self, parent, content, **kw) -> int:
        n = self._id()
        self.recs.append(user(n, parent, content, self._t(), **kw))
        return n

    def res(self, parent, tid, body="ok") -> int:
        n = self._id()
        self.recs.append(result(n, parent, tid, body, self._t()))
        return n

    def asst(self, parent, mid, block) -> int:
        n = self._id()
        self.recs.append(assistant(n, parent, mid, block, self._t()))
        return n

    def build(self) -> bytes:
        r = self.r
        self.recs.append(
            {
                "type": "file-history-snapshot",
                "messageId": U(1),
                "snapshot": {},
                "isSnapshotUpdate": False,
            }
        )
        cur = self.user(None, "start")
        late: list[str] = []
        ids: list[str] = []
        for turn in range(r.randint(1, 5)):
            mid = f"msg_{self.seed}_{turn}"
            last = self.asst(cur, mid, text(r.choice(["hi", "\n\n"]))) if r.random() < 0.7 else cur
            calls = []
            for _ in range(r.randint(0 if last != cur else 1, 3)):
                tid = r.choice(ids) if ids and r.random() < 0.1 else f"toolu_{self.seed}_{self.n}"
                ids.append(tid)
                last = self.asst(last, mid, tool_use(tid))
                calls.append((last, tid))
            r.shuffle(calls)
            cursor = last
            for line, tid in calls:
                x = r.random()
                if x < 0.15:
                    continue
                if x < 0.22:
                    late.append(tid)
                    continue
                parent = line
                if r.random() < 0.2:
                    parent = self._id()
                    self.recs.append(
                        {
                            "parentUuid": U(line),
                            **env(),
                            "type": "progress",
                            "data": {},
                            "uuid": U(parent),
                            "timestamp": ts(self._t()),
                        }
                    )
                cursor = self.res(parent, tid)
                if r.random() < 0.15:
                    cursor = self.res(cursor, tid, "again")
            if r.random() < 0.15:
                cursor = self.res(cursor, f"toolu_ghost_{turn}", "stray")
            if late and r.random() < 0.5:
                cursor = self.res(cursor, late.pop(), "late")
            if r.random() < 0.1:
                cursor = self.user(cursor, "")
            if calls and r.random() < 0.1:
                cursor = self.user(
                    cursor,
                    [
                        text("note"),
                        {"tool_use_id": calls[0][1], "type": "tool_result", "content": "x"},
                    ],
                )
            cur = self.user(
                cursor, r.choice(["next", "[Request interrupted by user for tool use]"])
            )
        if r.random() < 0.5:
            self.asst(cur, "msg_end", text("bye"))
        if r.random() < 0.2:
            self.t, t0 = 1.5, self.t
            b = self.user(1, "abandoned prompt")
            self.asst(b, "msg_ab", tool_use("toolu_ab"))
            self.t = t0
        if r.random() < 0.3:
            sc = self.user(None, "side task", isSidechain=True)
            a = self._id()
            self.recs.append(
                assistant(
                    a, sc, "msg_sc", tool_use(f"toolu_sc_{self.seed}"), self._t(), isSidechain=True
                )
            )
        if r.random() < 0.15:
            self.recs.insert(r.randint(1, len(self.recs)), "{broken line")
        return jsonl(self.recs)


STRATEGIES = [
    {"malformed": "drop"},
    {
        "orphan-tool-use": "drop-tool-use",
        "orphan-tool-result": "to-text",
        "empty-content": "fill",
        "mismatched-tool-result-id": "drop",
        "pending-tool-use": "insert-result",
        "malformed": "drop",
    },
]


@pytest.mark.parametrize("seed", range(80))
def test_random_broken_session_fix_resumes_clean_and_is_idempotent(seed: int):
    from repair.plan import Choices, apply_all

    data = _Gen(seed).build()
    for target in ("anthropic", "bedrock"):
        for strategy in STRATEGIES:
            choices = Choices(by_code=strategy)
            s = load_bytes(data, path=f"/tmp/r{seed}.jsonl", target=target)
            fixed, _ = apply_all(s, choices)
            fixed.threads = [apply_all(t, choices)[0] for t in s.threads]
            out = fixed.export_bytes()  # the writer reloads it and refuses a mismatch
            again = load_bytes(out, path="r.jsonl", target=target)
            errors = analyze(again).errors + [
                e for t in again.threads for e in analyze(t, target).errors
            ]
            assert not errors, [(e.code, e.message_index) for e in errors]
            refixed, more = apply_all(again, choices)
            assert not more or refixed.export_bytes() == out
            # only conversation records are ever rewritten; the rest passes through
            kept = set(data.splitlines())
            for line in out.splitlines():
                if line not in kept:
                    assert isinstance(json.loads(line).get("uuid"), str)
            meta = [x for x in kept if x.startswith(b'{"type":"file-history')]
            assert meta and all(x in out.splitlines() for x in meta)


def test_fix_on_a_real_2_1_114_file_writes_its_key_order_and_envelope():
    """Cut the result of the call on line 20 out of the real file (its next call re-pointed
    to it, as if the result was never written): the fix writes the missing record in
    2.1.114's own key order, with promptId and entrypoint, after the response's last line."""
    from repair.plan import apply_all

    path = real(MODERN)
    lines = path.read_bytes().splitlines()
    call, next_call = json.loads(lines[19]), json.loads(lines[22])
    relinked = lines[22].replace(next_call["parentUuid"].encode(), call["uuid"].encode(), 1)
    cut = [*lines[:20], relinked, *lines[23:]]
    s = load_bytes(b"\n".join(cut) + b"\n", path=str(path))
    assert [(f.code, f.source.to_json()) for f in analyze(s).findings] == [
        ("orphan-tool-use", {"line": 20})
    ]
    out = apply_all(s)[0].export_bytes()
    (new,) = [json.loads(x) for x in out.splitlines() if x not in set(cut)][:1]
    template = json.loads(lines[20])  # a tool-result record of the same version
    assert list(new) == list(template)
    assert new["promptId"] == template["promptId"] and new["entrypoint"] == "cli"
    # after the response's last line: the call is one of six streamed with one message.id
    # (lines 20-35), which Claude Code sends as one assistant message
    response = [
        json.loads(x)
        for x in cut
        if b'"type":"assistant"' in x and call["message"]["id"].encode() in x
    ]
    assert len(response) == 8 and new["parentUuid"] == response[-1]["uuid"]
    # nothing else moves: the response's records stay interleaved with their results as
    # written (Claude Code merges them); only the record that followed is re-linked
    changed = [json.loads(x) for x in out.splitlines() if x not in set(cut)]
    assert [r["uuid"] for r in changed] == [new["uuid"], changed[1]["uuid"]]
    assert changed[1]["parentUuid"] == new["uuid"]
    assert new["sourceToolAssistantUUID"] == call["uuid"]
    assert not analyze(load_bytes(out, path=str(path))).findings


def test_subagent_files_are_threads_and_an_unreadable_one_is_reported(tmp_path):
    main = tmp_path / "sess.jsonl"
    main.write_bytes(jsonl([user(1, None, "a", 1), assistant(2, 1, "msg_1", text("b"), 2)]))
    sub = tmp_path / "sess" / "subagents"
    sub.mkdir(parents=True)
    (sub / "agent-ok.jsonl").write_bytes(
        jsonl(
            [
                user(5, None, "task", 3, isSidechain=True, agentId="ok"),
                assistant(6, 5, "msg_s", text("done"), 4, isSidechain=True, agentId="ok"),
            ]
        )
    )
    (sub / "agent-ok.meta.json").write_text('{"agentType":"Explore","description":"look around"}')
    (sub / "agent-bad.jsonl").write_bytes(b"\x00\x01binary")
    # a 2.0.x project-level agent file of this session, and one of another session
    (tmp_path / "agent-0c78cdae.jsonl").write_bytes(
        jsonl(
            [
                user(7, None, "Warmup", 5, isSidechain=True),
                assistant(8, 7, "msg_w", text("hi"), 6, isSidechain=True),
            ]
        )
    )
    other = user(9, None, "x", 5, isSidechain=True)
    other["sessionId"] = "another-session"
    (tmp_path / "agent-11111111.jsonl").write_bytes(jsonl([other]))
    s = load_session(str(main))
    labels = [t.label for t in s.threads]
    assert labels == [
        "subagent agent-bad",
        "subagent agent-ok (Explore: look around)",
        "subagent agent-0c78cdae",
    ]
    bad = s.threads[0]
    assert bad.messages[0].malformed.startswith("cannot read the subagent file")
    assert [f.code for f in analyze(bad).findings] == ["malformed"]
    assert shape(s.threads[1]) == [("user", ("text",)), ("assistant", ("text",))]


def test_thinking_only_record_without_the_rest_of_its_response_is_not_sent():
    think = {"type": "thinking", "thinking": "hmm", "signature": "sig"}
    recs = [
        user(1, None, "a", 1),
        assistant(2, 1, "msg_lost", think, 2),  # the rest of this response was never written
        user(3, 2, "hello?", 3),
        assistant(4, 3, "msg_ok", think, 4),
        assistant(5, 4, "msg_ok", text("here"), 5),
    ]
    s = load(recs)
    assert shape(s) == [("user", ("text", "text")), ("assistant", ("thinking", "text"))]
    assert s.export_bytes() == jsonl(recs)


def test_trailing_hook_records_do_not_hide_the_last_message_and_a_tip_result_wins():
    stop = {
        "parentUuid": U(2),
        **env(),
        "type": "system",
        "subtype": "stop_hook_summary",
        "timestamp": ts(9),
        "uuid": U(3),
        "level": "suggestion",
    }
    recs = [user(1, None, "a", 1), assistant(2, 1, "msg_1", tool_use("toolu_1"), 2), stop]
    s = load(recs)
    assert [f.code for f in analyze(s).findings] == ["pending-tool-use"]
    out = export(s, [*s.messages, Message(role="user", blocks=(synthetic("toolu_1"),))])
    again = load_bytes(out, path="s.jsonl")
    assert shape(again)[-1] == ("user", (("tool_result", "toolu_1"),))
    assert jsonl([stop]).strip() in out  # the hook record is kept as it was


def test_merged_user_records_whose_text_is_not_a_string_are_sent_as_they_are():
    """Claude Code ends a user record's text with a newline when the next user record joins
    it; a text that is an object is not joined (the emulation crashed: TypeError; found by
    the fuzzer): it is blank to Claude Code, which leaves it out, and the file is checked."""
    recs = [
        user(1, None, [{"type": "text", "text": {}}], 1),
        user(2, 1, [text("and then")], 2),
        assistant(3, 2, "msg_01", text("ok"), 3),
    ]
    s = load(recs)
    assert request_body(s)["messages"][0] == {
        "role": "user",
        "content": [{"type": "text", "text": "and then"}],
    }
    assert [(f.code, f.severity) for f in analyze(s).findings] == [("empty-content", "warning")]


def test_a_record_without_its_session_id_is_still_read_as_claude_code(tmp_path, capsys):
    """A fix that drops every other record can leave one record without `sessionId` (one
    line: a JSON document): it reads back as Claude Code, so a second fix changes nothing
    (found by the fuzzer on a real 2.0.37 agent file)."""
    from repair.cli import main

    first = user(1, None, "Warmup", 1)
    del first["sessionId"]
    broken = user(2, 1, "x", 2)
    del broken["message"]
    path = tmp_path / "agent.jsonl"
    path.write_bytes(jsonl([first, broken]))
    out, again = tmp_path / "out.jsonl", tmp_path / "again.jsonl"
    assert main(["fix", str(path), "-o", str(out), "--strategy", "malformed=drop"]) == 0
    assert out.read_bytes().count(b"\n") == 1
    assert load_session(str(out)).format == "claude-code"
    assert main(["fix", str(out), "-o", str(again)]) == 0
    assert again.read_bytes() == out.read_bytes()
    capsys.readouterr()
