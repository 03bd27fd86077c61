"""The replay of a JSONL chat's lines takes a `$set` of metadata alone on its line (the
usual one: `lastUpdated`) without the long way's tests; the long way reads the same `$set`
with another key beside it, which it ignores."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

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
