"""What the messages need of each Claude Code record is read by the graph's pass into its lists
(chain.Graph `items`, `bad`, `api_error`, `blank_mid`, with `kind`, `mid`, `ts`, `uuid`,
`results`), not kept as one object per record: the lists hold what `read_record` reads of
each record, and the messages built from them are those built from `read_record`'s records
(blocks, order, tool ids, shape, counts, hidden and malformed messages, meta), on random
transcripts with odd messages: no message, a content that is no string or list of blocks,
an item without a type, an empty or missing message.id, API errors, a <synthetic> model.
The graph's `prompts` hold each user record's promptId as the writer read it from the record
(a result record it creates takes the last one before it)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repair.formats import load_bytes
from repair.formats.claude_code import load
from repair.formats.claude_code.chain import MESSAGE_TYPES, build_graph
from repair.formats.claude_code.load import Records, read_record
from repair.formats.probe import probe_bytes
from repair.model import Message
from tests.claude_code_records import assistant, jsonl, text, tool_use, user

_ID = st.sampled_from(["t1", "t2"])
_ITEM = st.one_of(
    st.builds(text, st.sampled_from(["", " ", "ok"])),
    st.builds(tool_use, _ID),
    st.builds(lambda i: {"type": "tool_result", "tool_use_id": i, "content": "r"}, _ID),
    st.just({"type": "thinking", "thinking": "hm", "signature": "s"}),
)
_ODD_ITEM = st.sampled_from(["a string", {"text": "no type"}, {"type": 3}, 7])
_CONTENT = st.one_of(
    st.lists(_ITEM, max_size=3),
    st.lists(_ITEM, max_size=2).flatmap(
        lambda items: _ODD_ITEM.map(lambda odd: [*items, odd, *items])
    ),
    st.sampled_from(["go on", "", None, 5, {"type": "text"}]),
)


@st.composite
def _transcript(draw: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n in range(1, draw(st.integers(1, 9)) + 1):
        parent = n - 1 if n > 1 else None
        if n > 2 and draw(st.integers(0, 6)) == 0:
            parent = draw(st.integers(1, n - 2))
        content = draw(_CONTENT)
        if draw(st.booleans()):
            r = user(n, parent, content, n)
        else:
            r = assistant(n, parent, draw(st.sampled_from(["m1", "m2", ""])), text("x"), n)
            r["message"]["content"] = content
            if draw(st.integers(0, 5)) == 0:
                del r["message"]["id"]
            if draw(st.integers(0, 5)) == 0:
                r["message"]["model"] = "<synthetic>"
        if draw(st.integers(0, 6)) == 0:
            r["isApiErrorMessage"] = draw(st.sampled_from([True, "true"]))
        if draw(st.integers(0, 9)) == 0:
            r["message"] = draw(st.sampled_from([None, "hi", [1]]))
        if draw(st.integers(0, 9)) == 0:
            del r["timestamp"]
        if draw(st.integers(0, 3)) == 0:
            r["promptId"] = draw(st.sampled_from(["p1", "", 7, None]))
        out.append(r)
    return out


def _read_each(objs: list[dict[str, Any]]) -> dict[int, Any]:
    return {i: read_record(o, i, i + 1, o["type"]) for i, o in enumerate(objs)}


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(objs=_transcript())
def test_the_graphs_lists_hold_what_read_record_reads(objs):
    lines = probe_bytes(jsonl(objs), path="t.jsonl", jsonl=True).lines
    g = build_graph(lines)
    got = Records.of_graph(g)
    want = Records.of_recs(_read_each(objs))
    for i, o in enumerate(objs):
        assert o["type"] in MESSAGE_TYPES
        pid = o.get("promptId") if o["type"] == "user" else None
        assert g.prompts is not None
        assert g.prompts.get(i) == (pid if isinstance(pid, str) else None)
        assert got.role[i] == want.role[i]
        assert got.items[i] == want.items[i]
        assert got.bad.get(i) == want.bad.get(i)
        if want.items[i] is None:  # (what else the builder reads of a readable record)
            continue
        assert (i in got.api_error) == (i in want.api_error)
        assert got.mid[i] == (want.mid[i] if o["type"] == "assistant" else None)
        assert got.ts[i] == (want.ts[i] or "")
        assert got.uuid[i] == want.uuid[i]
        assert got.results[i] == want.results[i]


def _summary(m: Message) -> tuple[Any, ...]:
    blocks = [(b.type, b.data, b.tool_id, b.name, b.is_error, b.src, b.origin) for b in m.blocks]
    ids = m._tool_ids
    return (m.role, m.hidden, m.malformed, m.meta, m.src, m.origin, m.raw, ids, m.plain_shape(),
            m.block_counts(), blocks)  # fmt: skip


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(objs=_transcript())
def test_messages_of_the_graphs_lists_are_those_of_read_record(objs):
    data = jsonl(objs)
    from_lists = load_bytes(data, path="t.jsonl")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(load, "records_of", lambda f: Records.of_recs(_read_each(objs)))
        from_recs = load_bytes(data, path="t.jsonl")
    assert [_summary(m) for m in from_lists.messages] == [_summary(m) for m in from_recs.messages]
    for a, b in zip(from_lists.threads, from_recs.threads, strict=True):
        assert [_summary(m) for m in a.messages] == [_summary(m) for m in b.messages]
