"""`roo`: Roo Code / Kilo / Cline `tasks/<id>/api_conversation_history.json`.

The array form is Anthropic messages plus Roo keys (`ts` in epoch ms, condense/truncation
tags, Cline's `modelInfo`/`metrics`) and role-less legacy reasoning items (shown hidden).
Three tool dialects share it: XML calls in text (no tool blocks, nothing to pair), native
`tool_use` answered by a `[name for 'x'] Result:` text block (Cline; the text block gets the
tool_use id so it counts as the answer), and native `tool_use`/`tool_result`. The newest
Roo wraps AI-SDK messages in `{"version": 2, "messages": [...]}` (see v2.py).

Roo writes compact JSON with no trailing newline; a message histview adds gets the `ts` of
the message before it, so a repair does not move the timeline.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...model import Message, Session
from ..anthropic_list import (
    classify,
    encode_entry,
    left_out,
    make_state,
    not_loaded,
    read_back_entries,
    to_read_again,
    write_document,
    write_runs,
    written_anew,
)
from ..base import Adapter, Edited, Export, Probe
from ..registry import register
from .load import read_entries
from .meta import apply_roo_meta, roo_tags
from .v2 import dump_records, first_record, load_v2

if TYPE_CHECKING:
    from ...files import Spliced
    from ...records import RecordChange

HISTORY_FILE = "api_conversation_history.json"
LEGACY_HISTORY_FILE = "claude_messages.json"  # read by old Roo when the main file is missing


class RooAdapter(Adapter):
    name = "roo"
    default_target = "anthropic"

    def detect(self, probe: Probe) -> int:
        if probe.kind != "json":
            return 0
        shape = classify(probe)
        if shape.container == "v2":
            return 90
        if probe.doc == [] and os.path.basename(probe.path) in (HISTORY_FILE, LEGACY_HISTORY_FILE):
            return 90  # a task with no messages yet: Roo writes `[]`
        if shape.container != "list" or not shape.entries or not shape.plausible:
            return 0
        if (shape.foreign_tools or shape.keyed_blocks) and not shape.anthropic_blocks:
            return 0  # tool turns or blocks written in a way Roo's Anthropic list never has
        if shape.roo_markers:
            return 80
        # a plain list without Roo's markers: barely this format (--format roo reads it)
        return 5

    def claim_folder(self, folder: str) -> str | None:
        for name in (HISTORY_FILE, LEGACY_HISTORY_FILE):
            path = os.path.join(folder, name)
            if os.path.isfile(path):
                return path
        return None

    def load(self, probe: Probe) -> Session:
        shape = classify(probe)
        if shape.container == "v2":
            messages = load_v2(shape.entries)
            apply_roo_meta(messages, first_record)
        else:
            prefix = "" if shape.container == "list" else "/messages"
            # (one message per entry: the document's tags)
            messages, tags = read_entries(shape.entries, prefix)
        state = make_state(probe, shape.container, messages)
        if shape.container != "v2":
            state.tags = tags
        return self.session(probe.path, messages, state)

    def write(self, session: Session) -> Export:
        state = session.state
        if state.container == "v2":
            return Export(write_document(state, dump_records(session.messages)))
        built = _entries(session)
        msgs = session.messages
        body: bytes | Spliced | None = write_runs(state, msgs, built)
        if body is None:
            entries = [built[p] if p in built else m.raw for p, m in enumerate(msgs)]
            body = write_document(state, entries)
        return Export(body)

    def reads_numbers_exactly(self, session: Session) -> bool:
        # (the writer found out, where it wrote the runs of entries as read: `write_runs`)
        return session.state.exact is True or super().reads_numbers_exactly(session)

    def read_back_edited(
        self, session: Session, data: bytes | Spliced | None = None
    ) -> Edited | None:
        if session.state.container not in ("list", "body"):
            return None
        msgs = session.messages
        # the entries the writer built, where `data` is what it wrote of these messages
        got = session.state.written(msgs, data)
        if got is not None:
            fresh = {p: got[0][p] for p in written_anew(session)}
        else:
            fresh = {p: _entry_at(msgs, p) for p in written_anew(session)}
        # the condense and truncation tags in effect in the written document: others than
        # those read change what untouched messages read as (hidden or not)
        state = session.state
        changed = [fresh[p] if p in fresh else msgs[p].raw for p in not_loaded(session)]
        changed += (state.loaded[k].raw for k in left_out(session))
        if any(map(_marks, changed)):
            tags = roo_tags(fresh[p] if p in fresh else m.raw for p, m in enumerate(msgs))
        else:  # (no summary or marker written or left out: the tags read)
            tags = state.tags
        if tags != state.tags:
            return None

        def entry_at(messages: list[Message], k: int) -> object:
            return fresh[k] if k in fresh else messages[k].raw

        def reload(part: list[Message], entries: list[Any]) -> None:
            apply_roo_meta(part, tags=tags)

        positions = to_read_again(session, list(fresh))
        return read_back_entries(session, positions, entry_at, reload, data)

    def record_changes(
        self,
        before: Session,
        after: Session,
        bytes_of: Callable[[Session], bytes] | None = None,
    ) -> list[RecordChange]:
        if before.state.container == "v2":  # records are not one per message
            return super().record_changes(before, after, bytes_of)
        from ...records import entry_changes

        prefix = "" if before.state.container == "list" else "/messages"
        return entry_changes(before.messages, after.messages, _entry_at, prefix)


def _entry(m: Message, last_ts: Any) -> object:
    """A message's entry; one histview made takes the `ts` of the entry before it."""
    return encode_entry(m, {"ts": last_ts} if m.raw is None and last_ts is not None else None)


def _entries(session: Session) -> dict[int, Any]:
    """The entry of each message that is not as loaded (`_entry`, each after the one
    before; a message as loaded is its entry as read, without a look at its blocks), by
    position; the `ts` of the entries before a message histview made is looked for from it
    back, to where the last such look began (each entry is looked at once at most)."""
    msgs = session.messages
    out: dict[int, Any] = {}
    last_ts, seen = None, 0  # the last `ts` of the entries before msgs[seen]
    for k in not_loaded(session):
        for j in range(k - 1, seen - 1, -1):
            prev = out[j] if j in out else msgs[j].raw
            if isinstance(prev, dict) and _is_time(prev.get("ts")):
                last_ts = prev["ts"]
                break
        seen = k
        out[k] = _entry(msgs[k], last_ts)
    return out


def _entry_at(messages: list[Message], k: int) -> object:
    last_ts = None
    for j in range(k - 1, -1, -1):
        prev = _entry(messages[j], None) if messages[j].raw is not None else None
        if isinstance(prev, dict) and _is_time(prev.get("ts")):
            last_ts = prev["ts"]
            break
    return _entry(messages[k], last_ts)


def _marks(rec: Any) -> bool:
    """A summary or truncation marker's record (`roo_tags` reads its id)."""
    return isinstance(rec, dict) and (
        rec.get("isSummary") is True or rec.get("isTruncationMarker") is True
    )


def _is_time(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


register(RooAdapter())
