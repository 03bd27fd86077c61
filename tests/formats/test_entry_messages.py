"""A list entry's message whose blocks are made when asked for (`EntryMessage`, the Anthropic
and Roo loaders' usual path) is the message the long way makes (`message_from_entry`): the
same blocks, places, tool ids, and the same findings, whether its blocks were made before
the analysis or not (the shape rules skip a message the loader read as plain)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from repair import analysis
from repair.formats.anthropic_list import (
    EntryMessage,
    message_from_entry,
    messages_from_entries,
    untouched,
)
from repair.formats.roo.load import RooEntry, read_entries
from repair.formats.roo.meta import apply_roo_meta
from repair.model import Message, Session

_IDS = st.sampled_from(["t1", "t2", "t3", "", None, 7, "bad id"])
_TEXT = st.sampled_from(["", " ", "\n\t", "ok", "[read_file for 'a'] Result: x", None, 3])
_item = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _TEXT),
    st.builds(lambda: {"type": "text"}),
    st.builds(
        lambda i, n: {"type": "tool_use", "id": i, "name": n, "input": {}},
        _IDS,
        st.sampled_from(["read_file", "ls", None]),
    ),
    st.builds(
        lambda i, e: {"type": "tool_result", "tool_use_id": i, "content": "r", "is_error": e},
        _IDS,
        st.sampled_from([True, False, None]),
    ),
    st.builds(lambda: {"type": "thinking", "thinking": "hm"}),
    st.builds(lambda t: {"type": t}, st.sampled_from([None, 5, "image"])),
    st.sampled_from(["bare string", 4, None]),
)
_content = st.one_of(
    st.lists(_item, max_size=5),
    st.lists(_item, max_size=5),
    st.lists(_item, max_size=5),
    _TEXT,
)


@st.composite
def _entry(draw) -> Any:
    kind = draw(st.sampled_from(["message"] * 8 + ["reasoning", "no role", "odd"]))
    if kind == "reasoning":
        return {"type": "reasoning", "text": "thinking"}
    if kind == "odd":
        return draw(st.sampled_from([None, 3, "text", []]))
    entry: dict[str, Any] = {"content": draw(_content)}
    if kind == "message":
        entry["role"] = draw(st.sampled_from(["user", "assistant", "user", "assistant", "tool"]))
    stamp = draw(st.one_of(st.none(), st.integers(0, 5)))
    if stamp is not None:
        entry["ts"] = stamp * 1000
    # Roo's condense and truncation keys (a tag takes effect where its summary or marker is)
    for key, value in draw(
        st.lists(
            st.sampled_from(
                [
                    ("isSummary", True),
                    ("condenseId", "c1"),
                    ("condenseParent", "c1"),
                    ("condenseParent", "c2"),
                    ("isTruncationMarker", True),
                    ("truncationId", "t1"),
                    ("truncationParent", "t1"),
                ]
            ),
            max_size=2,
        )
    ):
        entry[key] = value
    return entry


def _block_facts(m: Message) -> list[tuple]:
    return [
        (b.type, id(b.data), b.tool_id, b.name, b.is_error, b.src, b.at, b.place())
        for b in m.blocks
    ]


def _facts(m: Message) -> tuple:
    return (
        m.role,
        id(m.raw),
        m.hidden,
        m.malformed,
        m.src,
        m.meta,
        m.timestamp,
        _block_facts(m),
    )


def _session(msgs: list[Message], target: str) -> Session:
    return Session("t.json", "roo", target, msgs, adapter=None)


def _found(msgs: list[Message], target: str) -> list[tuple]:
    got = analysis.analyze(_session(msgs, target), target)
    return [(f.to_json(), f.position, f.severity) for f in got.findings]


def _load(entries: list[Any], roo: bool, lazy: bool, prefix: str = "/messages") -> list[Message]:
    """The lazy way as the loaders read (Roo's keys read as each message is made:
    `read_entries`), the long way a message at a time, then Roo's keys (`apply_roo_meta`).
    `prefix`: where the list is in the document ("": it is the document)."""
    if lazy:
        if roo:
            return read_entries(entries, prefix)[0]
        return messages_from_entries(entries, prefix)
    msgs = [message_from_entry(e, f"{prefix}/{n}") for n, e in enumerate(entries)]
    if roo:
        apply_roo_meta(msgs)
    return msgs


@settings(max_examples=500, deadline=None, derandomize=True, database=None)
@given(
    entries=st.lists(_entry(), max_size=8),
    roo=st.booleans(),
    made_first=st.booleans(),
    target=st.sampled_from(["anthropic", "bedrock", "openai-chat"]),
    prefix=st.sampled_from(["/messages", ""]),
)
def test_entry_messages_are_the_long_ways(entries, roo, made_first, target, prefix):
    """Random entries (blank, missing and odd texts, odd ids and types, items that are no
    block, Cline text results, role-less and unreadable entries, Roo's condense and
    truncation keys), in a request body or as the document: findings as the long way finds
    them, then the same messages, blocks, places and tool ids."""
    lazy = _load(entries, roo, lazy=True, prefix=prefix)
    whole = _load(entries, roo, lazy=False, prefix=prefix)
    if made_first:
        for m in lazy:
            assert m.blocks is m.origin
    assert _found(lazy, target) == _found(whole, target)
    assert [_facts(m) for m in lazy] == [_facts(m) for m in whole]
    for m, w in zip(lazy, whole, strict=True):
        assert m.tool_ids() == w.tool_ids()
        assert m.blocks is m.origin and untouched(m) == untouched(w)


def test_blocks_are_made_once_and_only_when_asked():
    entries = [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "ls"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a"}]},
    ]
    msgs = messages_from_entries(entries, "")
    assert all(type(m) is EntryMessage for m in msgs)
    found = _found(msgs, "anthropic")
    assert found == []
    # a clean session's check made no block
    assert not any(m.made() for m in msgs)  # type: ignore[attr-defined]
    assert all(untouched(m) for m in msgs)
    first = msgs[1].blocks
    assert msgs[1].blocks is first and msgs[1].origin is first
    assert first[0].place().pointer == "/1/content/0"
    edited = msgs[1].with_blocks(())
    assert edited.origin is first and not untouched(edited) and untouched(msgs[1])


def test_an_entry_message_has_every_field_of_a_message():
    """The loader sets an entry message's slots itself (`LazyMessage.unmade`): a field added to
    `Message` must be set there too."""
    (m,) = messages_from_entries([{"role": "user", "content": [{"type": "text", "text": "a"}]}], "")
    assert type(m) is EntryMessage
    for f in fields(Message):
        getattr(m, f.name)  # AttributeError: a slot left unset
    assert (m.meta, m.hidden, m.malformed, m.src) == ({}, False, None, {"path": "/0"})
    assert m.tool_ids() == ((), ()) and m.plain_shape()


def test_a_roo_entry_has_every_field_of_a_message_and_its_time_once():
    """Roo's usual entry keeps its time as a field and makes `meta` from it when asked: every
    field is set, the time and the meta agree before and after an edit, a condense key
    read at load lands in the same dict."""
    entries = [
        {"role": "user", "content": [{"type": "text", "text": "a"}], "ts": 1500},
        {"role": "user", "content": [{"type": "text", "text": "b"}], "isSummary": True},
    ]
    (m, summary), _ = read_entries(entries, "")
    assert type(m) is RooEntry and type(summary) is RooEntry
    assert untouched(m) and not m.made()
    for f in fields(Message):
        getattr(m, f.name)  # AttributeError: a slot left unset
    assert m.timestamp == 1.5 and m.meta == {"timestamp": 1.5}
    assert summary.timestamp is None and summary.meta == {"is_summary": True}
    later = m.with_timestamp(2.0)
    assert later.timestamp == 2.0 and later.meta == {"timestamp": 2.0} and m.timestamp == 1.5
    edited = m.with_blocks(())
    assert edited.timestamp == 1.5 and edited.meta == {"timestamp": 1.5}
    assert untouched(m) and not untouched(edited)
