"""The graph's pass reads a Claude Code record of one content block (the usual record) as the
message builder needs it (`chain.one_item`: the block's kind and tool id, into the graph's
`one` and `one_id`), so the builder does not read the block again: the messages built from
those lists are the messages built reading every record's blocks (the lists left empty):
the same tool ids, plain shape, block counts, send order and blocks, and the same records
dropped as Claude Code drops them on resume (a blank or empty text, a thinking alone in its
message.id), on random transcripts of one-block records among records of several blocks,
string contents, and blocks whose text or tool id is not a string."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repair.formats import load_bytes
from repair.formats.anthropic_list import _facts_of_list
from repair.formats.claude_code import load
from repair.formats.claude_code.chain import build_graph, one_item
from repair.formats.claude_code.load import Records
from repair.formats.probe import probe_bytes
from repair.model import THINKING_TYPES, Message
from tests.claude_code_records import assistant, jsonl, text, tool_use, user

_ID = st.sampled_from(["t1", "t2", 7, None])
_ITEM = st.one_of(
    st.builds(text, st.sampled_from(["", " ", " \n", "ok", "\u3000"])),
    st.just({"type": "text", "text": 5}),
    st.just({"type": "text"}),
    st.builds(lambda i: {**tool_use("t1"), "id": i}, _ID),
    st.builds(lambda i: {"type": "tool_result", "tool_use_id": i, "content": "r"}, _ID),
    st.just({"type": "thinking", "thinking": "hm", "signature": "s"}),
    st.just({"type": "redacted_thinking", "data": "x"}),
    st.just({"type": "image", "source": {}}),
)
_CONTENT = st.one_of(
    st.lists(_ITEM, min_size=1, max_size=1),
    st.lists(_ITEM, min_size=1, max_size=1),
    st.lists(_ITEM, max_size=3),
    st.sampled_from(["go on", " "]),
)


@st.composite
def _transcript(draw: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n in range(1, draw(st.integers(1, 12)) + 1):
        parent = n - 1 if n > 1 else None
        content = draw(_CONTENT)
        if draw(st.integers(0, 2)) == 0:
            r = user(n, parent, content, n)
        else:
            r = assistant(n, parent, draw(st.sampled_from(["m1", "m2"])), text("x"), n)
            r["message"]["content"] = content
        out.append(r)
    return out


def _summary(m: Message) -> tuple[Any, ...]:
    blocks = [(b.type, b.data, b.tool_id, b.name, b.is_error, b.src, b.origin) for b in m.blocks]
    return (m.role, m.hidden, m.malformed, m.meta, m.src, m.origin, m._tool_ids, m.plain_shape(),
            m.block_counts(), blocks)  # fmt: skip


def _read_whole(f: Any) -> Records:
    """The records as the builder reads them without the graph's `one`: every block read."""
    recs = Records.of_graph(f.graph)
    recs.one = [0] * len(recs.one)
    return recs


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(objs=_transcript())
def test_messages_of_one_block_records_read_from_the_lists_are_those_of_their_blocks(objs):
    data = jsonl(objs)
    g = build_graph(probe_bytes(data, path="t.jsonl", jsonl=True).lines)
    assert [(g.one[i], g.one_id[i]) for i in range(len(objs))] == [
        one_item(c[0]) if isinstance(c, list) and len(c) == 1 else (0, None)
        for c in (o["message"]["content"] for o in objs)
    ]
    from_lists = load_bytes(data, path="t.jsonl")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(load, "records_of", _read_whole)
        whole = load_bytes(data, path="t.jsonl")
    # (the counts and facts are read before any block is made: `_summary` makes them after)
    assert [(m._tool_ids, m.plain_shape(), m.block_counts()) for m in from_lists.messages] == [
        (m._tool_ids, m.plain_shape(), m.block_counts()) for m in whole.messages
    ]
    assert [_summary(m) for m in from_lists.messages] == [_summary(m) for m in whole.messages]
    for m in from_lists.messages:  # and the facts are those of the blocks
        if m.live and m._tool_ids is not None:
            plain = Message(m.role, m.blocks)
            assert (m._tool_ids, m.plain_shape()) == (plain.tool_ids(), plain.plain_shape())
            assert m.block_counts() == plain.block_counts()


def _dropped(item: dict[str, Any]) -> str | None:
    """What Claude Code drops of an assistant record of this one block when it resumes
    (docs/formats.md): a text of whitespace, an empty text, a thinking (the last two when
    their message.id has nothing else)."""
    t = item["type"]
    if t == "text":
        txt = item.get("text")
        return ("blank" if txt else "empty") if type(txt) is str and not txt.strip() else None
    return "thinking" if t in THINKING_TYPES else None


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(item=_ITEM)
def test_one_block_is_read_as_its_facts_and_its_drop(item):
    kind, tid = one_item(item)
    assert kind
    assert load._DROP[kind] == _dropped(item)
    assert load._one_facts(kind, tid) == _facts_of_list([item])
