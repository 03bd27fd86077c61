"""Reading Roo's array of entries (or a request body's `messages`): the Anthropic list's
messages (`anthropic_list`), with Roo's keys read as each entry is made into a message
(`RooMeta`), and its time kept on the message, not in a dict of its own (`RooEntry`)."""

from __future__ import annotations

from typing import Any

from ...model import LAZY, TIMED_META, Message, new_uid
from ..anthropic_list import EntryMessage, _facts_of_list, message_from_entry
from .meta import ROO_FLAGS, RooMeta, timestamp_seconds


class RooEntry(EntryMessage):
    """A usual Roo entry (`EntryMessage`) whose time is a field (`timestamp`: read by the
    analysis of every message) and whose `meta` is made when first asked for, from it (a
    dict per message of a 100k file is not made for a check). An edit makes a plain copy
    (`dataclasses.replace` sets `meta`, and the time with it); nothing writes a time into
    the dict: Roo's loader sets the field (tests/formats/test_entry_messages.py)."""

    __slots__ = ("timestamp", "_meta")
    timestamp: float | None
    _meta: Any
    meta = TIMED_META


_new = object.__new__


def read_entries(
    entries: list[Any], prefix: str
) -> tuple[list[Message], tuple[set[str], set[str]]]:
    """Each entry's message (`anthropic_list.messages_from_entries`, Roo's keys read by
    `RooMeta.see`), and the condense and truncation tags in effect (`RooMeta.done`). A
    usual entry (a role, a list of typed blocks) is a `RooEntry`, its `ts` and its turn
    read here (`RooMeta.see` spelt out); the others go the long way."""
    reader = RooMeta()
    see, answer, keys = reader.see, reader.answer, reader.keys
    out: list[Message] = []
    append = out.append
    asking: Message | None = None  # (`reader.asking`, kept here between the long ways)
    n = -1
    for entry in entries:
        n += 1
        if type(entry) is dict:
            role = entry.get("role")
            content = entry.get("content")
            if (role == "user" or role == "assistant") and type(content) is list:
                facts = _facts_of_list(content)
                if facts is not None:
                    # (`LazyMessage.unmade` spelt out, its meta left to come: no call, no
                    # dict for each of 100k entries; the path made when asked for)
                    r: RooEntry = _new(RooEntry)
                    r.role = role
                    r._blocks = LAZY
                    r.raw = entry
                    r._meta = LAZY
                    r.hidden = False
                    r.malformed = None
                    r._src = LAZY
                    r._origin = LAZY
                    r.uid = new_uid()
                    ids = r._tool_ids = facts[0]
                    r._plain_shape = facts[1]
                    r._counts = None
                    r._path = f"{prefix}/{n}" if prefix else n
                    ts = entry.get("ts")
                    if type(ts) is int or type(ts) is float:  # (`timestamp_seconds`)
                        r.timestamp = ts / 1000.0
                    else:  # (none, or an int or float of a subclass, a bool: none)
                        r.timestamp = None if ts is None else timestamp_seconds(ts)
                    if role == "assistant":
                        asking = r
                    elif asking is not None:
                        # (the usual turn: its calls answered in their order)
                        got = asking._tool_ids
                        if got is None or got[0] != ids[1]:
                            answer(asking, r)
                        asking = None
                    if not ROO_FLAGS.isdisjoint(entry):
                        keys(r, entry)
                    append(r)
                    continue
        m = message_from_entry(entry, f"{prefix}/{n}")
        reader.asking = asking
        see(m, entry)
        asking = reader.asking
        append(m)
    return out, reader.done()
