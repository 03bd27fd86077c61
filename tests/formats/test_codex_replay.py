"""The Codex loader's replay (`codex._replay`: what a resume leaves out of the history, and
what a compaction without a replacement history keeps) reads the history's item lines only
when a compaction or a rollback asks for them: it finds what the replay that lists every
item line as it comes finds (`_listed`, the loader's replay before it was cut), on random
rollouts of items, events, rollbacks of every turn count and compactions of every shape."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from repair.formats import codex
from repair.formats.codex import _is_user_turn
from tests.formats.codex_rollouts import rollout_line


def _listed(objs: list[Any]) -> tuple[set[int], dict[int, list[int]]]:
    """The replay with the history listed line by line (the long way)."""
    history: list[int] = []
    dropped: set[int] = set()
    legacy: dict[int, list[int]] = {}
    for idx, rec in enumerate(objs):
        if not isinstance(rec, dict):
            continue
        rtype, payload = rec.get("type"), rec.get("payload")
        if rtype == "response_item" and isinstance(payload, dict):
            history.append(idx)
        elif rtype == "compacted":
            if not (
                isinstance(payload, dict) and isinstance(payload.get("replacement_history"), list)
            ):
                legacy[idx] = [j for j in history if _is_user_turn(objs[j])]
            dropped.update(history)
            history = [idx]
        elif (
            rtype == "event_msg"
            and isinstance(payload, dict)
            and payload.get("type") == "thread_rolled_back"
        ):
            n = payload.get("num_turns")
            turns = [k for k, j in enumerate(history) if _is_user_turn(objs[j])]
            if isinstance(n, int) and not isinstance(n, bool) and n > 0 and turns:
                cut = turns[0] if n >= len(turns) else turns[-n]
                dropped.update(history[cut:])
                history = history[:cut]
    return dropped, legacy


def _value(line: str) -> Any:
    """A line's record as the loader holds it (None: not JSON)."""
    try:
        return json.loads(line)
    except ValueError:
        return None


_ODD = st.sampled_from(
    [
        {"type": "event_msg", "payload": {"type": "thread_rolled_back", "num_turns": 0}},
        {"type": "event_msg", "payload": {"type": "thread_rolled_back", "num_turns": True}},
        {"type": "event_msg", "payload": {"type": "thread_rolled_back", "num_turns": 9}},
        {"type": "event_msg", "payload": {"type": "thread_rolled_back"}},
        {"type": "event_msg", "payload": "thread_rolled_back"},
        {"type": "compacted", "payload": None},
        {"type": "compacted", "payload": {"replacement_history": "no"}},
        {"type": "response_item", "payload": "not an item"},
        {"type": "response_item"},
        {"type": "user", "payload": {"type": "message", "role": "user"}},
        [1, 2],
        None,
    ]
)
_USER = st.sampled_from(["go", "<environment_context>x", "  next"]).map(
    lambda text: {
        "type": "response_item",
        "payload": {"type": "message", "role": "user", "content": [{"text": text}]},
    }
)


@settings(max_examples=600, deadline=None, derandomize=True, database=None)
@given(
    st.lists(
        st.one_of(rollout_line().map(_value), _ODD, _USER),
        max_size=30,
    )
)
def test_the_replay_finds_what_the_history_listed_line_by_line_finds(objs: list[Any]) -> None:
    assert codex._replay([], objs) == _listed(objs)


def test_a_rollback_after_a_compaction_drops_the_turns_after_it_only() -> None:
    """The history after a compaction is the compacted line and the items after it: a
    rollback of more turns than it holds drops from its first user turn."""
    user = {"type": "response_item", "payload": {"type": "message", "role": "user"}}
    user["payload"]["content"] = [{"type": "input_text", "text": "go"}]
    say = {"type": "response_item", "payload": {"type": "reasoning"}}
    back = {"type": "event_msg", "payload": {"type": "thread_rolled_back", "num_turns": 5}}
    objs = [user, say, {"type": "compacted", "payload": {"message": "s"}}, say, user, say, back]
    assert codex._replay([], objs) == ({0, 1, 4, 5}, {2: [0]})
