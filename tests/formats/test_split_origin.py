"""A Codex or OpenAI chat user message that a fix left holding tool results and text is held
as two messages, as the written file reads back (repair.formats.regroup): each part names
the records it was read from (its line or entry, its time, its raw record), not the user
text's (issue 10 point 5). Codex CLI 0.169 sends such a rollout as an output item and then
a user message item (`../shared/clients/resume codex`)."""

from __future__ import annotations

import json
import random

from hypothesis import given
from hypothesis import strategies as st

from repair.formats import load_bytes
from repair.workbench import Workbench
from tests.engine.test_memory_is_written import GENERATED, TARGETS, steps_agree
from tests.formats.test_format_codex import call, line, meta, output, rollout, say, user
from tests.formats.test_grouped_after_fix import bench, only
from tests.paths import SAMPLES


def late_output() -> bytes:
    """A call, the user's text, then the call's output (misplaced: moved home, before the
    text)."""
    return rollout(
        meta(),
        user("2025-11-20T10:00:01.000Z", "go"),
        call("2025-11-20T10:00:02.000Z", "c1"),
        user("2025-11-20T10:00:03.000Z", "hurry"),
        output("2025-11-20T10:00:04.000Z", "c1"),
        say("2025-11-20T10:00:05.000Z", "done"),
    )


def parts(wb: Workbench, text: str):
    """The message holding the result and the one holding `text` after it."""
    msgs = wb.session.messages
    k = next(
        i
        for i, m in enumerate(msgs)
        if m.blocks and m.blocks[-1].data in (text, {"type": "text", "text": text})
    )
    return msgs[k - 1], msgs[k]


def test_a_codex_output_moved_before_the_users_text_names_its_own_line_and_time():
    wb = Workbench(load_bytes(late_output(), "/tmp/r.jsonl"))
    assert wb.apply(only(wb, "misplaced-tool-result")) is not None
    result, text = parts(wb, "hurry")
    assert [b.type for b in result.blocks] == ["tool_result"]
    # line 5 holds the output, line 4 the user's text (it named line 4 for both)
    assert (result.src, text.src) == ({"line": 5}, {"line": 4})
    assert result.timestamp is not None and text.timestamp is not None
    assert result.timestamp - text.timestamp == 1.0
    assert result.raw[0]["payload"]["type"] == "function_call_output"
    assert text.raw[0]["payload"]["role"] == "user"
    assert json.loads(wb.session.export().data.splitlines()[3])["payload"]["call_id"] == "c1"


def test_a_new_codex_output_names_no_line_and_the_time_it_is_written_with():
    """The sample's unanswered call gets an output before the user's text: the output is a
    new line, written after the call with the call's time; the text keeps line 16."""
    wb = bench(SAMPLES / "codex_missing_output.jsonl")
    assert wb.apply(only(wb, "orphan-tool-use")) is not None
    result, text = parts(
        wb, "skip the slow tests, they hit the network. just fix test_parse_totals"
    )
    assert result.src is None and result.raw is None and text.src == {"line": 16}
    again = load_bytes(wb.session.export().data, "/tmp/r.jsonl")
    assert [m.timestamp for m in again.messages] == [m.timestamp for m in wb.session.messages]


def test_a_codex_turn_cut_by_a_new_output_is_held_cut():
    """Calls a, b, c, outputs for b and c after the turn: a's new output is written right
    after a (as Codex puts its own), which cuts the turn; the session holds it so, and the
    written file is what it was."""
    lines = [
        meta(),
        user("2025-11-20T10:00:01.000Z", "three things"),
        call("2025-11-20T10:00:02.000Z", "a"),
        call("2025-11-20T10:00:02.100Z", "b"),
        call("2025-11-20T10:00:02.200Z", "c"),
        output("2025-11-20T10:00:03.000Z", "b"),
        output("2025-11-20T10:00:03.100Z", "c"),
        say("2025-11-20T10:00:04.000Z", "done"),
    ]
    wb = Workbench(load_bytes(rollout(*lines), "/tmp/r.jsonl"))
    assert wb.apply(only(wb, "orphan-tool-use")) is not None
    held = [(m.role, [b.tool_id for b in m.blocks], m.src) for m in wb.session.messages]
    assert held[1:5] == [
        ("assistant", ["a"], {"line": 3}),
        ("user", ["a"], None),
        ("assistant", ["b", "c"], {"line": 4}),
        ("user", ["b", "c"], {"line": 6}),
    ]
    out = wb.session.export().data
    written = out.decode().splitlines()
    assert written[:3] == lines[:3] and written[4:] == lines[3:]
    assert json.loads(written[3])["payload"]["call_id"] == "a"
    again = load_bytes(out, "/tmp/r.jsonl")
    assert [[b.tool_id for b in m.blocks] for m in again.messages] == [h[1] for h in held]
    assert [m.timestamp for m in again.messages] == [m.timestamp for m in wb.session.messages]


def test_an_empty_codex_message_item_is_written_once_when_its_message_is_split():
    """The user's text and an empty message item (`content: []`) are one message; an output
    put before the text parts it: the empty item goes with the text, written once (both
    parts wrote it)."""
    empty = line(
        "2025-11-20T10:00:03.500Z",
        "response_item",
        {"type": "message", "role": "user", "content": []},
    )
    lines = [
        meta(),
        user("2025-11-20T10:00:01.000Z", "go"),
        call("2025-11-20T10:00:02.000Z", "c1"),
        user("2025-11-20T10:00:03.000Z", "hurry"),
        empty,
        say("2025-11-20T10:00:05.000Z", "done"),
    ]
    wb = Workbench(load_bytes(rollout(*lines), "/tmp/r.jsonl"))
    assert wb.apply(only(wb, "orphan-tool-use")) is not None
    result, text = parts(wb, "hurry")
    assert (result.src, text.src) == (None, {"line": 4})
    written = wb.session.export().data.decode().splitlines()
    assert written.count(empty) == 1
    assert written[4:] == lines[3:]


def test_openai_chat_results_moved_before_the_users_text_name_their_tool_messages():
    """The sample's two `tool` messages (entries 4 and 5) come after the user's text (entry
    3): moved home, they are written before it, and the results' message names them."""
    wb = bench(SAMPLES / "openai_chat_user_between_calls.json")
    assert wb.apply(only(wb, "misplaced-tool-result")) is not None
    msgs = wb.session.messages
    result, text = msgs[3], msgs[4]
    assert [b.type for b in result.blocks] == ["tool_result", "tool_result"]
    assert (result.src, text.src) == ({"path": "/messages/4"}, {"path": "/messages/3"})
    assert [e["role"] for e in result.raw] == ["tool", "tool"]
    assert text.raw["role"] == "user"


def test_a_new_openai_chat_result_before_the_users_text_names_no_entry():
    doc = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
            ],
        },
        {"role": "user", "content": "hurry"},
        {"role": "assistant", "content": "done"},
    ]
    wb = Workbench(load_bytes(json.dumps(doc).encode(), "/tmp/c.json"))
    assert wb.apply(only(wb, "orphan-tool-use")) is not None
    result, text = parts(wb, "hurry")
    assert (result.src, result.raw) == (None, None)
    assert (text.src, text.raw) == ({"path": "/2"}, doc[2])
    assert wb.session.export().dropped_records == []


# ------------------------------------------------------------------ generated sessions


def _record(data: bytes, src: dict | None, jsonl: bool):
    """The record a message's `src` names in a file's bytes (a Codex line, a chat entry)."""
    if src is None:
        return None
    if jsonl:
        return data.splitlines()[src["line"] - 1]
    node = json.loads(data)
    for key in src["path"].split("/")[1:]:
        node = node[int(key)] if isinstance(node, list) else node[key]
    return node


def _records(data: bytes, jsonl: bool) -> list:
    if jsonl:
        return data.splitlines()
    doc = json.loads(data)
    return doc["messages"] if isinstance(doc, dict) else doc


@GENERATED
@given(
    case=st.integers(0, 2**32 - 1),
    target=st.sampled_from(TARGETS),
    gen=st.sampled_from(("codex", "openai_chat")),
)
def test_each_message_names_the_record_the_written_file_reads_it_from(case, target, gen):
    """Generated sessions, random fixes: the written file read back holds the session's
    messages (a turn cut by a new output included); where a message's first record is written as read, the session names that
    record (the line or entry a part of a split message was read from), and a message of
    new records names none; a Codex message holds the time it is read back with."""
    import bench.gen

    rng = random.Random(case)
    data, _ = getattr(bench.gen, f"gen_{gen}")(rng.randrange(20, 120), rng.randrange(50))
    jsonl = gen == "codex"
    session = load_bytes(data, "/tmp/input.jsonl" if jsonl else "/tmp/input.json")
    if target is not None:
        session.target = target
    source = _records(data, jsonl)

    def names_its_records(wb: Workbench) -> None:
        out = wb.session.export().data
        again = load_bytes(out, "/tmp/output.jsonl" if jsonl else "/tmp/output.json")
        mine = [m for m in wb.session.messages if m.live]
        back = [m for m in again.messages if m.live]
        assert [(m.role, len(m.blocks)) for m in mine] == [(m.role, len(m.blocks)) for m in back]
        for m, b in zip(mine, back, strict=True):
            if all(x.origin is None for x in m.blocks):
                assert m.src is None, m.src  # made by a fix: no record to name
            written = _record(out, b.src, jsonl)
            if written not in source:
                continue  # a record made or rewritten by a fix
            assert _record(data, m.src, jsonl) == written, (m.src, b.src)
            if jsonl:
                assert m.timestamp == b.timestamp, m.src

    steps_agree(Workbench(session), rng, rng.randrange(1, 5), names_its_records)
