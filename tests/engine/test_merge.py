"""A merge (`MergeMessages`) loses nothing: the merged message holds every block of both
messages, in order, and is named by every record both were read from (`origin`: their union
in file order, `raw`: those records as read), so the writers keep the records of the second
(a Codex message item of no content among them: Codex CLI 0.169 sends it, measured in
tests/fixtures/clients/codex/merged_empty_item.recorded.json)."""

from __future__ import annotations

import json
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from repair.edits import MergeMessages, MoveBlock, Patch, ReorderBlocks
from repair.formats import load_bytes
from repair.formats.base import records_merged
from repair.formats.claude_code.adapter import ClaudeCodeAdapter
from repair.formats.codex import CodexAdapter, ItemRef
from repair.model import Block, Message, block_from_anthropic
from repair.plan import apply_all, apply_fixes, make_plan
from tests.formats.test_format_codex import call, line, meta, output, say, user

_block = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.sampled_from(["", "a", "b"])),
    st.builds(
        lambda i: {"type": "tool_use", "id": i, "name": "ls", "input": {}},
        st.sampled_from(["t1", "t2"]),
    ),
    st.builds(
        lambda i: {"type": "tool_result", "tool_use_id": i, "content": "ok"},
        st.sampled_from(["t1", "t2"]),
    ),
)


@st.composite
def _messages(draw) -> list[Message]:
    """Messages read from records (line indexes, most often ascending, a record now and then
    shared with the message before), each record's object in `raw` (alone for one record,
    else a list in `origin`'s order)."""
    n = draw(st.integers(2, 6))
    out: list[Message] = []
    at = 0
    for _ in range(n):
        k = draw(st.integers(0, 3))
        records = list(range(at, at + k))
        if out and out[-1].origin and draw(st.booleans()):
            records.insert(0, out[-1].origin[-1])  # a record two messages are read from
        at += k + draw(st.integers(0, 2))
        origin = tuple(sorted(set(records)))
        objs = [{"record": i} for i in origin]
        content = draw(st.lists(_block, max_size=3))
        out.append(
            Message(
                role=draw(st.sampled_from(["user", "assistant"])),
                blocks=tuple(block_from_anthropic(c) for c in content),
                raw=(objs[0] if len(objs) == 1 else objs) if objs else None,
                origin=origin or None,
            )
        )
    return out


@given(_messages(), st.data())
@settings(max_examples=200, deadline=None)
def test_a_merge_keeps_every_block_and_every_record(msgs, data):
    k = data.draw(st.integers(0, len(msgs) - 2))
    first, second = msgs[k], msgs[k + 1]
    blocks: list[Block] = [*first.blocks, *second.blocks]
    patch = Patch(msgs, merged=records_merged, kept=True)
    edit = MergeMessages("merge_messages", first.uid, "merge", second_uid=second.uid)
    edit.apply(patch)
    if data.draw(st.booleans()):  # the reorder a merge of user messages is followed by
        ReorderBlocks("reorder_blocks", first.uid, "", use_order={"t2": 0, "t1": 1}).apply(patch)
    out = patch.rebuild()

    assert [m.uid for m in out] == [m.uid for m in msgs if m is not second]
    assert all(
        a is b for a, b in zip(out[:k] + out[k + 1 :], msgs[:k] + msgs[k + 2 :], strict=True)
    )
    merged = out[k]
    assert sorted(map(id, merged.blocks)) == sorted(map(id, blocks))  # every block, once
    records = tuple(sorted({*(first.origin or ()), *(second.origin or ())}))
    assert (merged.origin or ()) == records  # the union, in file order
    raws = merged.raw if isinstance(merged.raw, list) else [merged.raw]
    assert [r["record"] for r in raws if r is not None] == list(records)
    if second.origin:  # the merged message holds the second's records, written as read
        assert not edit.has_removed and edit.removed is None


@given(_messages(), st.data(), st.booleans())
@settings(max_examples=100, deadline=None)
def test_a_merge_whose_second_records_are_not_written_as_read_reports_them(msgs, data, named):
    """Where the file does not keep the second message's records as read (a JSON list
    writes the merged message as the first's entry: `Adapter.merged`'s default, not
    `writes_merged_as_read`), the report keeps the second as it was read."""
    k = data.draw(st.integers(0, len(msgs) - 2))
    first, second = msgs[k], msgs[k + 1]
    patch = Patch(msgs, merged=records_merged) if named else Patch(msgs, kept=True)
    edit = MergeMessages("merge_messages", first.uid, "merge", second_uid=second.uid)
    edit.apply(patch)
    merged = patch.rebuild()[k]
    if not named:
        assert (merged.origin, merged.raw) == (first.origin, first.raw)
    assert edit.has_removed
    if second.raw is not None:
        assert edit.removed == second.raw


@given(_messages(), st.data())
@settings(max_examples=200, deadline=None)
def test_a_move_keeps_every_block_once_and_names_the_blocks_record(msgs, data):
    """A block moved into another message (`MoveBlock`, as misplaced-tool-result's fix
    moves a result), read from a record of its message (a Claude Code block's `origin`):
    the receiving message, where it was read from records, is named by its own and that
    one, in file order, `raw` following; each block is in the session once."""
    msgs = [  # each block read from one of its message's records (none: made by histview)
        m.with_blocks(
            [replace(b, origin=data.draw(st.sampled_from(m.origin))) for b in m.blocks]
            if m.origin
            else m.blocks
        )
        for m in msgs
    ]
    holding = [k for k, m in enumerate(msgs) if m.blocks]
    if not holding:
        return
    k = data.draw(st.sampled_from(holding))
    to = data.draw(st.sampled_from([i for i in range(len(msgs)) if i != k]))
    source, dest = msgs[k], msgs[to]
    block = data.draw(st.sampled_from(source.blocks))
    patch = Patch(msgs, merged=ClaudeCodeAdapter().merged)
    MoveBlock("move_block", source.uid, "move", bid=block.bid, to_uid=dest.uid).apply(patch)
    out = patch.rebuild()

    assert [m.uid for m in out] == [m.uid for m in msgs]
    every = sorted(id(b) for m in msgs for b in m.blocks)
    assert sorted(id(b) for m in out for b in m.blocks) == every  # every block, once
    assert list(out[to].blocks) == [*dest.blocks, block]
    assert block not in out[k].blocks
    assert (out[k].origin, out[k].raw) == (source.origin, source.raw)
    records = set(dest.origin or ())
    if records and block.origin is not None:
        records.add(block.origin)
    assert (out[to].origin or ()) == tuple(sorted(records))  # the union, in file order
    raws = out[to].raw if isinstance(out[to].raw, list) else [out[to].raw]
    assert [r["record"] for r in raws if r is not None] == sorted(records)


def test_a_merge_into_a_message_named_otherwise_leaves_its_name_alone():
    """A JSON list names a message by its entry and its blocks as read (`origin`): the
    merged message is written as the first's entry, the second's reported removed."""
    a, b = (Message("user", (block_from_anthropic({"type": "text", "text": t}),)) for t in "ab")
    a.origin, b.origin = a.blocks, b.blocks
    assert records_merged(a, b) is a


# ---------------------------------------------------------------- a real format: Codex


def _empty(ts: str, role: str) -> str:
    return line(ts, "response_item", {"type": "message", "role": role, "content": []})


_ITEMS = {
    "user": lambda ts, k: [user(ts, f"ask {k}")],
    "say": lambda ts, k: [say(ts, f"answer {k}")],
    "empty user": lambda ts, k: [_empty(ts, "user")],
    "empty assistant": lambda ts, k: [_empty(ts, "assistant")],
    "call": lambda ts, k: [call(ts, f"c{k}"), output(ts, f"c{k}")],
}


@given(st.lists(st.sampled_from(sorted(_ITEMS)), min_size=3, max_size=10))
@settings(max_examples=60, deadline=None)
def test_a_codex_merge_writes_every_line_it_does_not_report(kinds):
    """Each merge a fix makes of a generated rollout (under Anthropic: an empty message
    dropped, the messages around it merged) names the lines of both; the written file
    holds every line of the original but those the report lists, and the report lists no
    line a merged message holds (a message item of no content among them)."""
    lines = [meta()]
    for k, kind in enumerate(kinds):
        lines += _ITEMS[kind](f"2025-11-20T10:00:{k:02}.000Z", k)
    data = ("\n".join(lines) + "\n").encode()
    session = load_bytes(data, "/tmp/rollout.jsonl")
    session.target = "anthropic"
    plan = make_plan(session)
    merges = [
        (f, e) for f in plan.fixes if f.actionable for e in f.edits if isinstance(e, MergeMessages)
    ]
    if not merges:
        return
    by_uid = {m.uid: m for m in session.messages}
    out, applied = apply_fixes(session, [f for f, _ in merges])
    kept: set[int] = set()
    for fix, e in merges:
        if fix not in applied:
            continue
        first, second = by_uid[e.message_uid], by_uid[e.second_uid]
        kept.update(first.origin, second.origin)
    written = CodexAdapter().export(out)
    reported = {r["line"] for r in written.dropped_records}
    assert not {i + 1 for i in kept} & reported
    for fix, e in merges:  # the report lists no line the merge kept as removed
        assert fix not in applied or not e.has_removed
    original = data.splitlines()
    now = set(written.data.splitlines())
    for lineno, raw in enumerate(original, 1):
        assert raw in now or lineno in reported
    for m in out.messages:  # each message names its records as read, in file order
        if m.origin and m.live:
            assert list(m.origin) == sorted(m.origin)
            assert [json.dumps(r) for r in m.raw] == [
                json.dumps(json.loads(original[i])) for i in m.origin
            ]


def _reasoning(ts: str) -> str:
    return line(ts, "response_item", {"type": "reasoning", "summary": [], "content": None})


# (no user item of no content: a result moved into one is written alone, the item reported)
_TURNS = {
    **{kind: items for kind, items in _ITEMS.items() if kind != "empty user"},
    "reasoning": lambda ts, k: [_reasoning(ts)],
    "early output": lambda ts, k: [output(ts, f"c{k}"), call(ts, f"c{k}")],
}


@given(st.lists(st.sampled_from(sorted(_TURNS)), min_size=3, max_size=10), st.booleans())
@settings(max_examples=80, deadline=None)
def test_a_codex_regrouped_message_names_the_lines_of_each_it_joins(kinds, anthropic):
    """After every fix of a generated rollout (an output written before its call moved
    after it, an empty message dropped), the messages the written file reads back as one
    (`regroup`: items of one kind in a row, e.g. the reasoning before an early output and
    the call after it) are named by the lines of each: every line a live message's blocks
    were read from is in its `origin`, in file order, `raw` those lines as read, and the
    written file holds every line of the original the report does not list."""
    lines = [meta()]
    for k, kind in enumerate(kinds):
        lines += _TURNS[kind](f"2025-11-20T10:00:{k:02}.000Z", k)
    data = ("\n".join(lines) + "\n").encode()
    session = load_bytes(data, "/tmp/rollout.jsonl")
    if anthropic:
        session.target = "anthropic"
    out, applied = apply_all(session)
    if not applied:
        return
    original = data.splitlines()
    for m in out.messages:
        if not m.live or m.origin is None:
            continue
        origin = list(m.origin)
        assert origin == sorted(set(origin))
        read = {b.origin.line for b in m.blocks if isinstance(b.origin, ItemRef)}
        assert read <= set(origin), (m.role, origin, sorted(read))
        raws = m.raw if isinstance(m.raw, list) else [m.raw]
        assert [json.dumps(r) for r in raws] == [
            json.dumps(json.loads(original[i])) for i in origin
        ]
    written = CodexAdapter().export(out)
    reported = {r["line"] for r in written.dropped_records}
    now = set(written.data.splitlines())
    for lineno, raw in enumerate(original, 1):
        assert raw in now or lineno in reported
