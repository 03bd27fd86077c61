"""The replay of a JSONL chat's lines takes a `$set` of metadata alone on its line (the
usual one: `lastUpdated`) without the long way's tests; the long way reads the same `$set`
with another key beside it, which it ignores."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from repair.formats import probe_bytes
from repair.formats.base import line_values
from repair.formats.gemini_cli import adapter
from repair.formats.gemini_cli.history import Replay, replay_lines

_ids = st.sampled_from(["a", "b", "c"])
_values = st.one_of(st.none(), st.integers(), st.text(max_size=3), _ids)
_records = st.fixed_dictionaries({"id": _ids, "type": st.sampled_from(["user", "gemini"])})
_sets = st.dictionaries(
    st.sampled_from(["lastUpdated", "summary", "messages", "id"]),
    st.one_of(_values, st.lists(_records, max_size=3), st.dictionaries(_ids, _values)),
    max_size=3,
)
_lines = st.one_of(
    _records,
    st.builds(lambda s: {"$set": s}, _sets),
    st.builds(lambda v: {"$set": v}, _values),
    st.builds(lambda t: {"$rewindTo": t}, _ids),
    _values,
)


def _seen(replay: Replay) -> Any:
    def rec(r: Any) -> Any:
        return (r.key, r.id, r.obj, r.anchor, r.places, r.removed)

    return (
        [rec(r) for r in replay.live],
        [rec(r) for r in replay.removed],
        replay.meta,
        replay.bad,
        replay.array_key,
    )


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(_lines, max_size=12))
def test_a_set_alone_on_its_line_replays_as_the_long_way(lines: list[Any]) -> None:
    # the long way: the same `$set` with a key the replay does not read
    long = [dict(x, _ignored=1) if type(x) is dict and "$set" in x else x for x in lines]
    assert _seen(replay_lines(enumerate(lines))) == _seen(replay_lines(enumerate(long)))


_texts = st.one_of(
    st.builds(lambda x: json.dumps(x).encode(), _lines),
    st.sampled_from([b"", b"  ", b"not json", b"{", b"null", b"[1]", b"5"]),
)


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(_texts, max_size=12))
def test_every_line_replayed_with_the_unread_left_out_is_the_lines_read(texts: list[bytes]) -> None:
    """The loader replays every line's value and leaves out, as the replay meets them, the
    blank lines and those that are not JSON (`unread`); the long way gives the replay only
    the lines read: the same records, metadata and lines said not to be records."""
    first = json.dumps({"sessionId": "s", "projectHash": "p"}).encode()
    lines = probe_bytes(b"\n".join([first, *texts]) + b"\n", path="chat.jsonl").lines
    values = line_values(lines)
    long = [
        (i, v)
        for i, v in enumerate(values)
        if type(v) is dict or (lines[i].error is None and not lines[i].blank)
    ]
    got = replay_lines(enumerate(values), adapter.unread(lines))
    assert _seen(got) == _seen(replay_lines(long))
