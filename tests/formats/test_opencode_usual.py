"""The opencode loader reads an assistant message in the usual shape in one pass over its
parts (`opencode._usual_assistant`), not through `_read_parts` and a `_step` per step: the
messages, what the loader read of each without its blocks (tool ids, plain shape, block
counts, open calls, the pieces it makes them of), its blocks, the parts the writer drops
with it, the findings, what opencode sends and what a fix writes are those of the long way
(`USUAL` False), on random exports whose messages sit on both sides of the usual shape's
edges."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repair.clients import opencode as client
from repair.errors import ExportRefused
from repair.formats import opencode
from repair.model import Session
from repair.plan import apply_all
from tests.formats.build import load
from tests.formats.lazy_support import found, message_facts
from tests.formats.test_opencode_lazy import _messages, _reasoning, _tool

_TEXTS = st.sampled_from(["ok", "call it", " ", "\n", ""])
# parts of an assistant message: the usual ones, and (one in eight) one past an edge of the
# usual shape, which the long way reads (or refuses)
_USUAL_PART = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _TEXTS),
    st.builds(
        _tool,
        st.sampled_from(["c1", "c2", "c3", "functions.ls:1"]),
        st.sampled_from(["completed", "completed", "error", "pending", "running"]),
        st.sampled_from([None, 7, 30, 2_000_000, 7.5]),
        st.sampled_from(["plain", "plain", "interrupted", "compacted", "no time", "no name"]),
    ),
    st.builds(_reasoning, _TEXTS, st.sampled_from(["unsigned", "signed", "redacted", "odd"])),
    st.sampled_from(
        [
            {"type": "step-start"},
            {"type": "step-finish"},
            {"type": "patch"},
            {"type": "file", "mime": "image/png", "url": "data:x"},
        ]
    ),
)
_ODD_PART = st.sampled_from(
    [
        {"type": "text"},
        {"type": "text", "text": 3},
        {"type": "reasoning", "text": None},
        {"type": 7},
        {"text": "no type"},
        {"type": "tool", "callID": "c1", "state": {"status": "odd"}},
        {"type": "tool", "callID": "c1", "state": {"status": ["odd"]}},
        {"type": "tool", "callID": "c1", "state": {"status": "running", "time": None}},
        {"type": "tool", "callID": "c1", "state": {"status": "completed", "time": 1}},
        {"type": "tool", "callID": 5, "state": {"status": "completed"}},
        {"type": "tool", "callID": "c1", "state": []},
    ]
)
_part = st.integers(0, 7).flatmap(lambda n: _ODD_PART if n == 0 else _USUAL_PART)


@st.composite
def _assistant(draw, k: int) -> Any:
    info: dict[str, Any] = {"id": f"msg_{k:02d}", "role": "assistant"}
    when = draw(st.sampled_from([1000, 2000, 2000.5, None, "x"]))
    if when is not None:
        info["time"] = {"created": when}
    info["providerID"] = "anthropic"
    info["modelID"] = draw(st.sampled_from(["m1", "m1", "m2"]))
    err = draw(st.sampled_from([None, None, None, None, "aborted", "api", ""]))
    if err is not None:
        info["error"] = {"name": "MessageAbortedError"} if err == "aborted" else err or {}
    parts = draw(st.lists(_part, max_size=7))
    ids = draw(st.sampled_from(["in order"] * 6 + ["equal", "shuffled", "some missing"]))
    order = list(range(len(parts)))
    if ids == "shuffled":
        order = draw(st.permutations(order))
    for j, part in enumerate(parts):
        if ids == "equal":
            part["id"] = "prt_00"
        elif ids != "some missing" or j % 2:
            part["id"] = f"prt_{order[j]:02d}"
    if draw(st.integers(0, 20)) == 0:
        parts.append(draw(st.sampled_from([3, None, "part"])))
    return {"info": info, "parts": parts}


@st.composite
def _entries(draw) -> list[Any]:
    """Assistant messages around the usual shape, with the lazy test's messages between
    them (user messages, odd roles and entries)."""
    out: list[Any] = []
    for k in range(draw(st.integers(0, 8))):
        if draw(st.integers(0, 3)):
            out.append(draw(_assistant(k)))
        else:
            out += draw(_messages())[:1]
    return out


def _load_both(entries: list[Any]) -> tuple[Session, Session]:
    """The export read the usual way, and the long way (every message through
    `_load_entry`)."""
    usual = _load(entries)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(opencode, "USUAL", False)
        long = _load(entries)
    return usual, long


def _load(entries: list[Any]) -> Session:
    doc = {"info": {"id": "ses_x", "title": "t"}, "messages": entries}
    return load(json.dumps(doc, indent=2).encode() + b"\n", "s.json")


def _read(session: Session) -> list[Any]:
    """What the loader read of each message without its blocks (before any is made)."""
    out = []
    for m in session.messages:
        facts: tuple = ()
        if isinstance(m, opencode.PartsMessage):
            assert not m.made()
            pieces = [
                (p.role, p.entry, p.raw, p.path, p.timestamp, p.items, p.calls, p.answers)
                + (p.opens, p.blank, p.ghosts)
                for p in m._pieces
            ]
            facts = (m._tool_ids, m._plain_shape, m._counts, m.open_calls, pieces)
        out.append((type(m).__name__, message_facts(m), facts))
    return out


def _blocks(session: Session) -> list[Any]:
    return [
        [(b.type, b.data, b.tool_id, b.name, b.is_error, b.src, b.origin) for b in m.blocks]
        for m in session.messages
    ]


def _ghosts(session: Session) -> dict[int, Any]:
    """The parts the writer drops with each message, by its position."""
    where = {m.uid: pos for pos, m in enumerate(session.messages)}
    return {where[uid]: parts for uid, parts in session.state.ghosts.items()}


def _sent(session: Session) -> Any:
    req = client.light(session)
    changed = [(pos, b.src, how) for pos, b, how in req.changed]
    return req.counted, req.answered, changed


def _written(session: Session) -> Any:
    try:
        return session.export_bytes()
    except ExportRefused as e:  # the same refusal either way
        return str(e)


def _fixed(session: Session) -> Any:
    fixed, applied = apply_all(session)
    return [f.code for f in applied], _written(fixed)


@settings(max_examples=600, deadline=None, derandomize=True, database=None)
@given(entries=_entries(), target=st.sampled_from(["opencode", "anthropic"]))
def test_the_usual_assistant_message_is_read_as_the_long_way_reads_it(entries, target):
    usual, long = _load_both(entries)
    assert _read(usual) == _read(long)
    assert _ghosts(usual) == _ghosts(long)
    assert found(usual, target) == found(long, target)
    assert _sent(usual) == _sent(long)
    assert _blocks(usual) == _blocks(long)
    assert _written(usual) == _written(long)
    assert _fixed(usual) == _fixed(long)


def test_a_usual_export_is_read_in_one_pass(monkeypatch):
    """Every assistant message of steps of texts, reasoning and tool parts of each status
    is read the usual way (the property above compares something)."""
    parts = [
        {"type": "step-start"},
        _reasoning("hm", "signed"),
        {"type": "text", "text": "I list them"},
        _tool("c1", "completed", 30, "plain"),
        _tool("c2", "running", None, "plain"),
        {"type": "step-finish"},
        {"type": "step-start"},
        {"type": "text", "text": "done"},
        {"type": "patch"},
    ]
    for k, part in enumerate(parts):
        part["id"] = f"prt_{k:02d}"
    info = {"role": "assistant", "providerID": "anthropic", "modelID": "m1"}
    entries = [
        {"info": {"id": "msg_1", "role": "user"}, "parts": [{"type": "text", "text": "go"}]},
        {"info": {"id": "msg_2", **info, "time": {"created": 2000}}, "parts": parts},
        {"info": {"id": "msg_3", **info}, "parts": parts[6:]},
    ]
    usual, long = _load_both(entries)
    long_way = opencode._load_entry

    def user_only(i, entry, *args):
        assert entry["info"]["role"] == "user"
        return long_way(i, entry, *args)

    monkeypatch.setattr(opencode, "_load_entry", user_only)
    assert _read(_load(entries)) == _read(usual)
    assert [m.role for m in usual.messages] == ["user", "assistant", "user", "assistant"]
    assert [m.open_calls for m in usual.messages] == [(), ("c2",), (), ()]  # type: ignore[attr-defined]
    assert _read(usual) == _read(long)


_INFO = st.builds(
    lambda mid, when: {"id": mid, "time": {"created": when}},
    st.sampled_from(["msg_1", "msg_2", "msg_3"]),
    st.sampled_from([1, 2, 2.5]),
)
# an info without a time or an id, or with one that is not a number or a string
_ODD_INFO = st.sampled_from(
    [{"id": "msg_1"}, {"time": {"created": 1}}, {"id": 4, "time": {"created": 1}}]
    + [{"id": "msg_1", "time": {"created": "2"}}, {"id": "msg_1", "time": 5}, "not an info"]
)


@settings(max_examples=500, deadline=None, derandomize=True, database=None)
@given(
    infos=st.lists(st.integers(0, 9).flatmap(lambda n: _ODD_INFO if n == 0 else _INFO), max_size=6)
)
def test_messages_in_order_are_not_sorted_again(infos):
    """The send order (by created time, then id; file order where a message lacks either)
    is the file order without a sort when the file is in it already, and the sorted one
    otherwise."""
    entries = [{"info": info, "parts": []} for info in infos]
    keys = []
    for i, info in enumerate(infos):
        t = info.get("time") if isinstance(info, dict) else None
        when = t.get("created") if isinstance(t, dict) else None
        mid = info.get("id") if isinstance(info, dict) else None
        keys.append((when, mid, i))
    if all(isinstance(w, (int, float)) and isinstance(m, str) for w, m, _i in keys):
        want = [i for _w, _m, i in sorted(keys)]
    else:
        want = list(range(len(infos)))
    assert opencode._send_order(entries) == want
