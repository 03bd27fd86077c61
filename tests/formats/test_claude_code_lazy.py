"""A Claude Code message's blocks are made from its records when asked for (`RecordMessage`):
the same blocks, in the order Claude Code sends them, as the records read one by one make
(`block_from_anthropic` of each content item, a merged message's tool_results first or its
tool_uses last); the tool ids, plain shape and block counts the loader sets are those of
the blocks; the findings and what the client target counts are the same whether the blocks
were made before the analysis or not, and the same as for plain messages of those blocks."""

from __future__ import annotations

import random
from dataclasses import fields, replace
from datetime import datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from repair import analysis, clients
from repair.formats import load_bytes
from repair.formats.claude_code.load import RecordMessage
from repair.model import THINKING_TYPES, TOOL_RESULT, TOOL_USE, Block, Message, Session
from repair.model import block_from_anthropic as from_item
from tests.claude_code_records import U, assistant, jsonl, text, tool_use, ts, user
from tests.engine.test_light_sending import _facts as counted_facts

_ID = st.sampled_from(["t1", "t2", "t3"])
_ITEM = st.one_of(
    st.builds(text, st.sampled_from(["", " \n", "ok"])),
    st.builds(tool_use, _ID),
    st.builds(lambda i: {"type": "tool_result", "tool_use_id": i, "content": "r"}, _ID),
    st.just({"type": "thinking", "thinking": "hm", "signature": "s"}),
    st.just({"type": "redacted_thinking", "data": "x"}),
    st.just({"type": "image", "source": {}}),
)


@st.composite
def _records(draw) -> list[dict]:
    """A chain of records (now and then one off it: an abandoned branch), user records of a
    string or of blocks, assistant records sharing a message.id (merged across results),
    API errors, a record whose content is no list of blocks."""
    out: list[dict] = []
    for n in range(1, draw(st.integers(1, 10)) + 1):
        parent = n - 1 if n > 1 else None
        if n > 2 and draw(st.integers(0, 9)) == 0:
            parent = draw(st.integers(1, n - 2))
        kind = draw(st.sampled_from(["prompt", "user", "assistant", "assistant", "odd"]))
        items = draw(st.lists(_ITEM, min_size=0, max_size=3))
        if kind == "prompt":
            r = user(n, parent, draw(st.sampled_from(["", " ", "go on"])), n)
        elif kind == "user":
            r = user(n, parent, items, n)
        else:
            r = assistant(n, parent, draw(st.sampled_from(["msg_a", "msg_b"])), text("x"), n)
            r["message"]["content"] = items
            if kind == "odd":
                r["message"]["content"] = [*items, "not a block"]
            elif draw(st.integers(0, 9)) == 0:
                r["isApiErrorMessage"] = True
        out.append(r)
    return out


def _sent_order(m: Message, blocks: list[Block]) -> list[Block]:
    """Claude Code's order of a merged message's blocks (docs/formats.md)."""
    if m.hidden or len(m.origin) < 2:
        return blocks
    if m.role == "user" and any(b.type == TOOL_RESULT for b in blocks):
        return [b for b in blocks if b.type == TOOL_RESULT] + [
            b for b in blocks if b.type != TOOL_RESULT
        ]
    types = [b.type for b in blocks]
    if m.role == "assistant" and not THINKING_TYPES.intersection(types) and TOOL_USE in types:
        first = types.index(TOOL_USE)
        if any(t != TOOL_USE for t in types[first:]):
            return [b for b in blocks if b.type != TOOL_USE] + [
                b for b in blocks if b.type == TOOL_USE
            ]
    return blocks


def _one_by_one(session: Session, m: Message) -> list[tuple]:
    """The blocks of its records, each item made into a block as it was read."""
    lines = session.state.file.lines
    blocks = []
    for idx in m.origin:
        content = lines[idx].obj["message"]["content"]
        for item in [content] if isinstance(content, str) else content:
            blocks.append(from_item(item, {"line": idx + 1}, idx))
    return _shape(_sent_order(m, blocks))


def _shape(blocks: Any) -> list[tuple]:
    return [
        (b.type, b.data if isinstance(b.data, str) else id(b.data), b.tool_id, b.name)
        + (b.is_error, b.src, b.origin)
        for b in blocks
    ]


def _findings(session: Session) -> list:
    got = analysis.analyze(session)
    return [(f.to_json(), f.position, f.key) for f in got.findings] + [got.numbers, got.sent]


def _plain(m: Message) -> Message:
    """The same message, its blocks made and held (no loader's facts)."""
    return Message(m.role, m.blocks, None, m.meta, m.hidden, m.malformed, m.src, m.origin, m.uid)


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(records=_records(), made_first=st.booleans())
def test_blocks_made_when_read_are_the_records_blocks(records, made_first):
    session = load_bytes(jsonl(records), "/tmp/s.jsonl")
    lazy = [m for m in session.messages if isinstance(m, RecordMessage)]
    assert not any(m.made() for m in lazy)
    facts = [(m._tool_ids, m._plain_shape, m.block_counts()) for m in lazy]
    if made_first:
        for m in lazy:
            assert m.blocks is m.blocks
    found = _findings(session)
    counted = counted_facts(clients.get("claude-code").light(session), session)
    for m, (ids, plain, counts) in zip(lazy, facts, strict=True):
        assert _shape(m.blocks) == _one_by_one(session, m)
        whole = _plain(m)
        if ids is None:  # not known (a hidden message, a string merged with blocks): read
            assert not plain and (not m.live or len(m.origin) > 1)  # from its blocks
        else:
            assert ids == whole.tool_ids() and plain == whole.plain_shape()
        assert counts == m.block_counts() == whole.block_counts()
        assert m.src == {"line": m.origin[0] + 1}
    plain = Session(session.path, session.format, session.target, [], session.adapter)
    plain.messages = [_plain(m) for m in session.messages]
    plain.state = session.state
    assert found == _findings(session) == _findings(plain)
    assert counted == counted_facts(clients.get("claude-code").send(session), session)


def test_a_clean_check_makes_the_blocks_of_no_message():
    """A session of parallel calls (merged messages, results written off the chain) without
    a fault: its check makes no block."""
    rng = random.Random(5)
    records, n, parent = [user(1, None, "go", 1)], 1, 1
    for turn in range(6):
        k = rng.randint(1, 3)
        uses = [n + 1 + j for j in range(k)]
        for j, u in enumerate(uses):
            records.append(
                assistant(
                    u, uses[j - 1] if j else parent, f"msg_{turn}", tool_use(f"t{turn}{j}"), u
                )
            )
        n = uses[-1]
        for j, u in enumerate(uses):
            n += 1
            records.append(
                user(
                    n, u, [{"type": "tool_result", "tool_use_id": f"t{turn}{j}", "content": "r"}], n
                )
            )
        parent = n
    n += 1
    records.append(assistant(n, parent, "msg_end", text("done"), n))
    session = load_bytes(jsonl(records), "/tmp/s.jsonl")
    assert analysis.analyze(session).findings == []
    assert all(type(m) is RecordMessage and not m.made() for m in session.messages)
    merged = [m for m in session.messages if len(m.origin) > 1]
    assert merged and all(m.role == "assistant" or m.blocks[0].type == TOOL_RESULT for m in merged)
    assert session.messages[1].raw[0]["uuid"] == U(2) and ts(2) in str(session.messages[1].raw)


def test_a_record_message_has_every_slot_set():
    """The builder sets a message's slots itself (`LazyMessage.unmade` spelt out in
    `_Builder.out`): a field added to `Message`, `LazyMessage` or `RecordMessage` must be
    set there too; the meta, time, uuid and src come from the first record."""
    records = [
        user(1, None, "go", 1),
        assistant(2, 1, "msg_1", tool_use("t1"), 2),
        user(3, 2, [{"type": "tool_result", "tool_use_id": "t1", "content": "r"}], 3),
    ]
    session = load_bytes(jsonl(records), "/tmp/s.jsonl")
    assert [type(m) for m in session.messages] == [RecordMessage] * 3
    first = session.messages[1]
    assert first.src == {"line": 2} and first.meta == {"timestamp": first.timestamp, "uuid": U(2)}
    assert first.tool_ids() == (("t1",), ()) and first.block_counts() == (1, 0)
    assert not first.made() and first.raw["uuid"] == U(2)
    for m in session.messages:
        for cls in type(m).__mro__:
            for name in getattr(cls, "__slots__", ()):
                getattr(m, name)  # AttributeError: a slot left unset
        for f in fields(Message):
            getattr(m, f.name)


def test_a_record_messages_time_is_its_records_and_an_edits():
    """A message's time is a field the builder sets from its first record (read by the
    pairing and the time rules of every message), not a property reading its meta: it is
    the record's time as `datetime` reads it, and an edit that sets the meta (a new time, no
    time, other blocks) sets the time the meta holds."""
    records = [
        user(1, None, "go", 1),
        assistant(2, 1, "msg_1", tool_use("t1"), 2.25),
        user(3, 2, [{"type": "tool_result", "tool_use_id": "t1", "content": "r"}], 3),
    ]
    records[2]["timestamp"] = "not a time"
    session = load_bytes(jsonl(records), "/tmp/s.jsonl")
    first, second, third = session.messages
    assert first.timestamp == datetime.fromisoformat(ts(1)).timestamp()
    assert second.timestamp == datetime.fromisoformat(ts(2.25)).timestamp()
    assert third.timestamp is None and "timestamp" not in third.meta
    assert second.with_timestamp(7.5).timestamp == 7.5
    assert second.with_timestamp(None).timestamp is None
    assert second.with_blocks(second.blocks).timestamp == second.timestamp
    assert replace(second, meta={"uuid": U(2)}).timestamp is None
    moved = replace(third, meta={"timestamp": 9.0})
    assert moved.timestamp == 9.0 and moved.meta["timestamp"] == 9.0


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(records=_records(), order=st.randoms(use_true_random=False))
def test_a_records_blocks_asked_one_by_one_are_those_of_every_message_made(records, order):
    """`View.rec_blocks` makes a message's blocks when one of its records is asked for: in
    any order of asking, each record of a shown message gives the blocks its message holds
    from it, as grouping every message's blocks at once does; a hidden message's records
    are not in it, and nothing is made before a record is asked for."""
    session = load_bytes(jsonl(records), "/tmp/s.jsonl")
    view = session.state.view
    rec_blocks = view.rec_blocks
    assert not any(m.made() for m in view.messages if isinstance(m, RecordMessage))
    eager: dict[int, list[Block]] = {}
    for m in view.messages:
        if not m.hidden:
            for idx in m.origin:
                eager[idx] = []
            for b in m.blocks:
                eager[b.origin].append(b)
    hidden = {idx for m in view.messages if m.hidden for idx in m.origin}
    assert set(rec_blocks) == set(eager) and len(rec_blocks) == len(eager)
    assert not any(idx in rec_blocks for idx in hidden - set(eager))
    asked = list(eager)
    order.shuffle(asked)
    for idx in asked:
        assert rec_blocks[idx] == tuple(eager[idx])
        assert all(a is b for a, b in zip(rec_blocks[idx], eager[idx], strict=True))
    assert rec_blocks.get(max(eager, default=0) + 10_000, ()) == ()
