"""A message read as plain (`Message.plain_shape`: from its blocks as its tool ids are read,
or from a list entry by the Anthropic/Roo loader) is one whose blocks the shape rules would
find nothing in: the rules skip their walk over it, so a plain message must never be one
where the walk finds `tool-result-not-first` or `empty-content`."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from repair import analysis
from repair.formats.anthropic_list import messages_from_entries
from repair.model import Message, Session, block_from_anthropic

_TEXTS = st.sampled_from(["", " ", "\n", "ok", None, 3])
_item = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _TEXTS),
    st.just({"type": "text"}),
    st.sampled_from(["", " ", "text"]),  # string content (one block)
    st.builds(
        lambda i: {"type": "tool_use", "id": i, "name": "ls", "input": {}},
        st.sampled_from(["t1", "t2", None]),
    ),
    st.builds(
        lambda i: {"type": "tool_result", "tool_use_id": i, "content": "r"},
        st.sampled_from(["t1", "t2", None]),
    ),
    st.just({"type": "image", "source": {}}),
)
_SHAPE = {"tool-result-not-first", "empty-content"}


def _walked(role: str, blocks: tuple, before: str | None, target: str) -> set[str]:
    """The shape findings on a fresh message with these blocks (not read as plain: the rules
    walk its blocks), alone, last, or after a message of `before`'s role."""
    msgs = [Message(role, blocks)]
    if before is not None:
        msgs.insert(0, Message(before, (block_from_anthropic({"type": "text", "text": "x"}),)))
    session = Session("t.json", "anthropic", target, msgs, adapter=None)
    got = analysis.analyze(session, target, whole=True)
    return {f.code for f in got.findings if f.position == len(msgs) - 1} & _SHAPE


@settings(max_examples=500, deadline=None, derandomize=True, database=None)
@given(
    role=st.sampled_from(["user", "assistant"]),
    items=st.lists(_item, max_size=4),
    text_answer=st.booleans(),
    before=st.sampled_from([None, "user", "assistant"]),
    target=st.sampled_from(["anthropic", "bedrock", "claude-code"]),
)
def test_a_message_read_as_plain_has_no_shape_finding(role, items, text_answer, before, target):
    blocks = tuple(block_from_anthropic(i) for i in items)
    if text_answer:  # Cline's text result: a text block given a tool id
        for b in blocks:
            if b.type == "text":
                b.tool_id = "t1"
                break
    m = Message(role, blocks)
    m.tool_ids()
    if m.plain_shape():
        assert not _walked(role, blocks, before, target)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    role=st.sampled_from(["user", "assistant"]),
    items=st.lists(_item.filter(lambda i: isinstance(i, dict)), max_size=4),
    before=st.sampled_from([None, "user", "assistant"]),
)
def test_a_list_entry_read_as_plain_has_no_shape_finding(role, items, before):
    (m,) = messages_from_entries([{"role": role, "content": items}], "")
    if m.plain_shape():
        assert not _walked(role, tuple(m.blocks), before, "anthropic")


def test_plain_is_read_with_the_tool_ids():
    ok = Message("user", (block_from_anthropic({"type": "tool_result", "tool_use_id": "a"}),))
    late = Message(
        "user",
        (
            block_from_anthropic({"type": "text", "text": "first"}),
            block_from_anthropic({"type": "tool_result", "tool_use_id": "a"}),
        ),
    )
    blank = Message("assistant", (block_from_anthropic({"type": "text", "text": " "}),))
    assert not ok.plain_shape()  # not known until its tool ids are read
    for m in (ok, late, blank):
        m.tool_ids()
    assert (ok.plain_shape(), late.plain_shape(), blank.plain_shape()) == (True, False, False)
