"""The Anthropic list writers' view of an edited session (`DocState.runs`: the stretches of
messages as loaded) is the message-by-message one, and Roo's writer, which encodes each
stretch of entries as read at once (`write_runs`), writes the document the whole encoding
writes, and knows what `check_numbers` asks (`DocState.exact`) as the scan knows it."""

from __future__ import annotations

import json
from contextlib import nullcontext
from typing import Any
from unittest import mock

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from repair.formats import anthropic_list
from repair.formats.anthropic_list import (
    _aligned_runs,
    _runs,
    copied,
    left_out,
    not_loaded,
    to_read_again,
    write_document,
    written_anew,
)
from repair.jsonio import numbers_as_parsed, reads_exactly
from repair.model import Message, Session
from tests.formats.build import compact, load, synthetic


def _entry(k: int, odd: str) -> Any:
    if odd == "malformed":
        return {"role": "user"}
    if odd == "reasoning":
        return {"type": "reasoning", "text": f"r{k}"}
    role = "user" if k % 2 == 0 else "assistant"
    entry: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": f"m{k} é"}]}
    if odd != "no ts":
        entry["ts"] = 1767720000000 + k * 1000
    if odd == "float":
        entry["cost"] = 1.0  # written `1.0`: orjson reads a float that writes back as `1.0`
    if odd == "exponent":
        entry["cost"] = 100.0  # written `1E2` (`_EXPONENT`): orjson writes `100.0`; read
        # with the number scan, a literal orjson cannot write (the whole document is)
    if odd == "slash":
        entry["content"][0]["text"] += " a/b"  # written `a\/b` (`_SLASHED`): orjson writes `/`
    return entry


_ODD = st.sampled_from(
    ["", "", "", "", "no ts", "malformed", "reasoning", "float", "slash", "exponent"]
)
_SLASHED = (b" a/b", b" a\\/b")
_EXPONENT = (b'"cost":100.0', b'"cost":1E2')
# (kind, place): replace a message by an edited copy, insert a new one before it, drop it
_EDIT = st.tuples(st.sampled_from(["edit", "insert", "drop"]), st.integers(0, 40))


def _edited(session: Session, edits: list[tuple[str, int]]) -> list[Message]:
    msgs = list(session.messages)
    for kind, at in edits:
        if not msgs:
            break
        p = at % len(msgs)
        m = msgs[p]
        if kind == "edit" and m.malformed is None and m.role is not None:
            msgs[p] = m.with_blocks([*m.blocks, synthetic(f"t{at}")])
        elif kind == "insert":
            msgs.insert(p, Message(role="user", blocks=(synthetic(f"n{at}"),)))
        elif kind == "drop":
            del msgs[p]
    return msgs


def _old_written_anew(session: Session) -> list[int]:
    loaded = {id(m) for m in session.state.loaded}
    return [p for p, m in enumerate(session.messages) if id(m) not in loaded and not copied(m)]


def _old_to_read_again(session: Session, fresh: list[int]) -> list[int]:
    where = {id(m): k for k, m in enumerate(session.state.loaded)}
    out = set(fresh)
    before = None
    for p, m in enumerate(session.messages):
        k = where.get(id(m))
        if p and (k is None or before is None or k != before + 1):
            out.add(p)
        before = k
    return sorted(out)


def _old_entries(session: Session) -> list[Any]:
    """The writer's entries as it built them before it wrote runs: every message in turn."""
    from repair.formats.roo.adapter import _entry, _is_time

    loaded = {id(m) for m in session.state.loaded}
    out: list[Any] = []
    last_ts = None
    for m in session.messages:
        if id(m) in loaded:
            out.append(m.raw)
            continue
        for prev in reversed(out):
            if isinstance(prev, dict) and _is_time(prev.get("ts")):
                last_ts = prev["ts"]
                break
        out.append(_entry(m, last_ts))
    return out


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(
    odds=st.lists(_ODD, max_size=60),
    edits=st.lists(_EDIT, max_size=8),
    spaced=st.booleans(),
    scanned=st.booleans(),
    at_once=st.sampled_from([1, 2, 5, 256]),
)
def test_runs_and_the_writer_are_the_long_ways(odds, edits, spaced, scanned, at_once):
    """Random Roo documents (entries without a time, unreadable, role-less, with a float,
    with a character escaped where orjson does not escape it), on one line or spaced, read
    with the number scan or without (as `fix` reads), after random edits, insertions and
    drops; the writer's runs compared with the bytes read `at_once` entries at a time."""
    doc = [_entry(k, odd) for k, odd in enumerate(odds)]
    data = json.dumps(doc, ensure_ascii=False).encode() if spaced else compact(doc)
    data = data.replace(*_SLASHED).replace(*_EXPONENT)
    with nullcontext() if scanned else numbers_as_parsed():
        session = load(data, "api_conversation_history.json", format="roo")
    after = session.copy_with(_edited(session, edits))
    loaded = after.state.loaded
    # the runs: every message as loaded, one after another in the order read
    where = {id(m): k for k, m in enumerate(loaded)}
    covered = {}
    for start, k, length in after.state.runs(after.messages):
        for i in range(length):
            assert after.messages[start + i] is loaded[k + i]
            covered[start + i] = k + i
    assert covered == {p: where[id(m)] for p, m in enumerate(after.messages) if id(m) in where}
    # where no message came or went, the one pass over both lists gives the same runs
    aligned = _aligned_runs(after.messages, loaded)
    if all(kind == "edit" for kind, _ in edits):
        assert aligned is not None
    assert aligned in (None, _runs(after.messages, loaded, where))
    assert not_loaded(after) == [p for p in range(len(after.messages)) if p not in covered]
    assert left_out(after) == sorted(set(range(len(loaded))) - set(covered.values()))
    fresh = written_anew(after)
    assert fresh == _old_written_anew(after)
    assert to_read_again(after, fresh) == _old_to_read_again(after, fresh)
    # the writer: the whole document as the long way writes it; what it found of the
    # numbers is what the scan finds
    state = after.state
    with mock.patch.object(anthropic_list, "_AT_ONCE", at_once):
        written = after.adapter.write(after)
    assert written.data == write_document(state, _old_entries(after))
    exact = reads_exactly(data, state.doc, state.style)
    assert state.exact in (None, exact)
    if spaced and doc:
        assert state.exact is None  # (written the long way)
    elif not scanned and not {"slash", "exponent"} & set(
        odds
    ):  # (numbers as orjson reads them: the runs
        assert exact and state.exact is True  # were encoded by it)
    # the writer's bytes of each entry it built are those it wrote (the read-back's)
    got = state.written(after.messages, written.body)
    if got is not None:
        built, made = got
        assert sorted(made) == sorted(built) == not_loaded(after)
        for p, piece in made.items():
            assert json.loads(bytes(piece)) == json.loads(orjson.dumps(built[p]))
