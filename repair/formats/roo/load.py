"""Reading Roo's array of entries (or a request body's `messages`): the Anthropic list's
messages (`anthropic_list`), with Roo's keys read as each entry is made into a message
(`RooMeta`), and its time kept on the message, not in a dict of its own (`RooEntry`)."""

from __future__ import annotations

from typing import Any

from ...model import LAZY, Message
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

    @property
    def meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = self._meta
        if meta is LAZY:
            t = self.timestamp
            meta = self._meta = {} if t is None else {"timestamp": t}
        return meta

    @meta.setter
    def meta(self, value: dict[str, Any]) -> None:
        self._meta = value
        self.timestamp = value.get("timestamp")


_unmade = RooEntry.unmade


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
    for n, entry in enumerate(entries):
        if type(entry) is dict:
            role = entry.get("role")
            content = entry.get("content")
            if (role == "user" or role == "assistant") and type(content) is list:
                facts = _facts_of_list(content)
                if facts is not None:
                    r: RooEntry = _unmade(role, entry, facts, False)
                    r._path = f"{prefix}/{n}"
                    r._meta = LAZY
                    ts = entry.get("ts")
                    if type(ts) is int or type(ts) is float:  # (`timestamp_seconds`)
                        r.timestamp = ts / 1000.0
                    elif ts is not None:  # (an int or float of a subclass, a bool: none)
                        r.timestamp = timestamp_seconds(ts)
                    if role == "assistant":
                        reader.asking = r
                    else:
                        asking = reader.asking
                        if asking is not None:
                            # (the usual turn: its calls answered in their order)
                            got = asking._tool_ids
                            if got is None or got[0] != r._tool_ids[1]:  # type: ignore[index]
                                answer(asking, r)
                            reader.asking = None
                    if not ROO_FLAGS.isdisjoint(entry):
                        keys(r, entry)
                    append(r)
                    continue
        m = message_from_entry(entry, f"{prefix}/{n}")
        see(m, entry)
        append(m)
    return out, reader.done()
