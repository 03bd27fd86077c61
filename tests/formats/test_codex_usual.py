"""The Codex loader reads the usual item (a function call, its output, a reasoning item, a
message item of one text part that is not blank) inline (`codex.USUAL_ITEMS`), without
`_read_item` and `_Group.add`: the messages, what each one's loader read without its blocks
(tool ids, plain shape, block counts, the entries Codex sends it as), its blocks, the
state the writer and the emulation read, the findings, what Codex sends and what is
written are those of the long way, on random rollouts whose items sit on both sides of the
usual shape's edges."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repair import analysis, clients, wire
from repair.errors import ExportRefused
from repair.formats import codex, load_bytes
from repair.formats.codex import CodexMessage
from repair.model import Session
from repair.plan import apply_all
from tests.formats.codex_rollouts import META, response_item, rollout_line
from tests.formats.lazy_support import found, message_facts
from tests.paths import FIXTURES, SAMPLES


def _load(data: bytes) -> Session:
    return load_bytes(data, path="rollout.jsonl", format="codex")


def _both(lines: list[str]) -> tuple[Session, Session]:
    """The rollout read the usual way, and the long way (no item read inline)."""
    data = "\n".join([META, *lines]).encode() + b"\n"
    usual = _load(data)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(codex, "USUAL_ITEMS", {})
        long = _load(data)
    return usual, long


def _read(session: Session) -> list[Any]:
    """What the loader read of each message without its blocks (before any is made)."""
    out = []
    for m in session.messages:
        facts: tuple = ()
        if type(m) is CodexMessage:
            assert not m.made()
            facts = (m._tool_ids, m._plain_shape, m._counts, m._sent, m._runs)
        out.append((type(m).__name__, message_facts(m), facts))
    return out


def _state(session: Session) -> Any:
    """What the writer and the emulation read of the state, blocks by position (block ids
    differ between two loads)."""
    state = session.state
    where = {
        b.bid: (mi, bi) for mi, m in enumerate(session.messages) for bi, b in enumerate(m.blocks)
    }
    lines = {k: [where[b.bid] for b in v] for k, v in state.line_blocks.items()}
    return (
        state.call_kind,
        state.message_lines,
        sorted(where[bid] for bid in state.original),
        sorted(where[bid] for bid in state.compacted),
        lines,
        state.compacted_items,
    )


def _blocks(session: Session) -> list[Any]:
    return [
        [(b.type, b.data, b.tool_id, b.name, b.src, b.place(), b.origin) for b in m.blocks]
        for m in session.messages
    ]


def _sent(session: Session) -> Any:
    """What Codex sends, counted by the light twin: numbers, each block's entry, what it
    leaves out and answers."""
    req = clients.get("codex").light(session)  # type: ignore[union-attr]
    shape = wire.WIRES["openai-responses"]
    return [
        req.numbering(len(session.messages), shape),
        [[req.block_entry(shape, p, b) for b in m.blocks] for p, m in enumerate(session.messages)],
        [(p, session.messages[p].blocks.index(b), why) for p, b, why in req.left_out],
        sorted(req.answered),
    ]


@st.composite
def _usual_line(draw) -> str:
    """An item the inline way reads, mostly, or one just past its edges: a message item of
    one text part (blank, not a string, of another type, another role, two parts), a call or
    an output with an odd call_id."""
    ts = "2025-11-20T10:00:00.000Z"
    kind = draw(st.sampled_from(["function_call", "function_call_output", "reasoning", "message"]))
    odd = draw(st.booleans())
    item: dict[str, Any] = {"type": kind}
    if kind == "message":
        role = draw(st.sampled_from(["user", "assistant"]))
        part = {"type": "input_text" if role == "user" else "output_text", "text": "ok"}
        content: Any = [part]
        edge = draw(st.sampled_from(["role", "type", "text", "content"])) if odd else None
        if edge == "role":
            role = draw(st.sampled_from(["developer", "system", None, "tool"]))
        elif edge == "type":
            part["type"] = draw(st.sampled_from(["input_image", "text", "refusal", 3]))
        elif edge == "text":
            part["text"] = draw(st.sampled_from(["", " \n", None, 3]))
        elif edge == "content":
            content = draw(st.sampled_from([[part, part], [], "ok", [None], [{"text": "ok"}]]))
        item["role"], item["content"] = role, content
    elif kind != "reasoning":
        item["call_id"] = draw(st.sampled_from(["c1", "c2", "", None, 5] if odd else ["c1", "c2"]))
        item["arguments"] = "{}"
        item["output"] = "ok"
    return json.dumps({"timestamp": ts, "type": "response_item", "payload": item})


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(
    lines=st.lists(st.one_of(rollout_line(), _usual_line()), max_size=16),
    target=st.sampled_from(["codex", "openai-responses", "anthropic"]),
)
def test_usual_items_load_as_the_long_way_loads_them(lines, target):
    usual, long = _both(lines)
    assert _read(usual) == _read(long)
    assert _sent(usual) == _sent(long)
    assert found(usual, target) == found(long, target)
    assert _blocks(usual) == _blocks(long)
    assert _state(usual) == _state(long)
    assert usual.export().data == long.export().data


def test_a_usual_rollout_is_read_inline(monkeypatch):
    """The usual items do not go the long way (`_read_item`): the property above compares
    two ways."""
    lines = [
        response_item(
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
        ),
        response_item({"type": "reasoning", "summary": []}),
        response_item({"type": "function_call", "call_id": "a", "name": "ls", "arguments": "{}"}),
        response_item({"type": "function_call_output", "call_id": "a", "output": "x"}),
        response_item(
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": "be"}],
            }
        ),
    ]
    long_way: list[str] = []
    read = codex._read_item
    monkeypatch.setattr(codex, "_read_item", lambda i, t: long_way.append(t) or read(i, t))
    s = _load("\n".join([META, *lines]).encode())
    assert long_way == ["message"]  # the developer's
    assert [m.tool_ids() for m in s.messages] == [((), ()), (("a",), ()), ((), ("a",)), ((), ())]


def _rollouts() -> list[Path]:
    """The Codex rollouts of the fixtures and the samples."""
    files = sorted(FIXTURES.rglob("*.jsonl")) + sorted(SAMPLES.glob("codex_*.jsonl"))
    return [p for p in files if b'"response_item"' in p.read_bytes()]


def test_a_rollout_s_lines_are_parsed_once():
    """The loader keeps each line's record in the state (`CodexState.objs`), not on the
    line: a check, the Codex emulation, a fix and its export read the records from there, so
    no line is parsed again (as `lines[i].obj` would, and keep its record a second time)."""
    files = _rollouts()
    assert len(files) > 20
    for path in files:
        session = load_bytes(path.read_bytes(), path=str(path), format="codex")
        analysis.analyze(session)
        clients.get("codex").send(session)  # type: ignore[union-attr]
        fixed, _ = apply_all(session)
        try:
            fixed.export()
        except ExportRefused:
            pass
        again = [ln.lineno for ln in session.state.lines if ln.parsed and ln.error is None]
        assert again == [], path


def test_a_compacted_history_s_items_and_the_lines_after_it_are_read_in_order():
    """A message of items of a compacted line's history and of the lines after it holds
    their blocks in the order Codex sends them: the history's, then the lines'."""

    def text(role: str, kind: str, said: str) -> dict:
        return {"type": "message", "role": role, "content": [{"type": kind, "text": said}]}

    call = {"type": "function_call", "call_id": "a", "name": "ls", "arguments": "{}"}
    history = [text("user", "input_text", "go"), text("assistant", "output_text", "ok"), call]
    lines = [
        {
            "timestamp": "2025-11-20T10:00:00Z",
            "type": "compacted",
            "payload": {"message": "s", "replacement_history": history},
        },
        {
            "timestamp": "2025-11-20T10:00:01Z",
            "type": "response_item",
            "payload": {**call, "call_id": "b"},
        },
        {
            "timestamp": "2025-11-20T10:00:02Z",
            "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": "a", "output": "x"},
        },
    ]
    s = _load("\n".join([META, *map(json.dumps, lines)]).encode())
    got = [
        [
            (type(b.origin).__name__, b.origin.line, getattr(b.origin, "item", None), b.tool_id)
            for b in m.blocks
        ]
        for m in s.messages
    ]
    assert got == [
        [("CompactRef", 1, 0, None)],
        [("CompactRef", 1, 1, None), ("CompactRef", 1, 2, "a"), ("ItemRef", 2, None, "b")],
        [("ItemRef", 3, None, "a")],
    ]
