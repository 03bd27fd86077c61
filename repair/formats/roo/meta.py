"""Roo Code / Kilo / Cline facts shared by the array and the v2 envelope readers: `ts`,
non-destructive condense/truncation tags, and Cline's text tool results.

Condense (docs/formats.md, Roo: condense and truncation markers): condensed messages carry `condenseParent=<id>` and a summary
message `isSummary: true, condenseId: <id>` replaces them; sliding-window truncation tags
`truncationParent=<id>` with a marker `isTruncationMarker: true, truncationId: <id>`. A tag
takes effect only while its summary/marker exists; a tag pointing at a missing id is
ignored by Roo (the message is sent), so the message stays live here too and the tag is
noted in `meta["orphan_tag"]`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ...model import TOOL_RESULT, TOOL_USE, Message

# "[read_file for 'x'] Result:" / "[attempt_completion] Result:" at the start of a text block.
_RESULT_HEAD = re.compile(r"\[([^\s\[\]]+)(?:\]| for )")
_RESULT_MARK = "] Result:"
# The keys of a record that `RooMeta.keys` reads (a record without any needs no look).
ROO_FLAGS = frozenset({"isSummary", "isTruncationMarker", "condenseParent", "truncationParent"})


def timestamp_seconds(ts: Any) -> float | None:
    if isinstance(ts, bool) or not isinstance(ts, (int, float)):
        return None
    return ts / 1000.0


def roo_tags(records: Iterable[Any]) -> tuple[set[str], set[str]]:
    """The condense ids of the summaries and the truncation ids of the markers the records
    hold: the tags that take effect."""
    summaries: set[str] = set()
    markers: set[str] = set()
    for rec in records:
        if not isinstance(rec, dict):
            continue
        if rec.get("isSummary") is True and isinstance(rec.get("condenseId"), str):
            summaries.add(rec["condenseId"])
        if rec.get("isTruncationMarker") is True and isinstance(rec.get("truncationId"), str):
            markers.add(rec["truncationId"])
    return summaries, markers


def apply_roo_meta(
    messages: Sequence[Message],
    record_of: Callable[[Message], Any] | None = None,
    tags: tuple[set[str], set[str]] | None = None,
) -> tuple[set[str], set[str]]:
    """Set `meta` (timestamp, summary/marker flags) and `hidden` from the Roo keys of each
    message's record (`record_of`; None: its `raw`), and pair Cline's text results
    (`_pair`): `RooMeta` over freshly built messages. `tags`: those of the whole document
    (`roo_tags`) when `messages` are only some of its messages. Returns the tags it applied
    (without `tags`: `roo_tags` of the messages' records)."""
    reader = RooMeta()
    see = reader.see
    for m in messages:
        see(m, m.raw if record_of is None else record_of(m))
    return reader.done(tags)


class RooMeta:
    """`apply_roo_meta` a message at a time, in order (`see`; a loader calls it as it makes
    each message, its record at hand), then the tags (`done`: a tag takes effect only when
    its summary or marker exists)."""

    __slots__ = ("summaries", "markers", "tagged", "asking")

    def __init__(self) -> None:
        self.summaries: set[str] = set()
        self.markers: set[str] = set()
        self.tagged: list[tuple[Message, dict[str, Any]]] = []
        self.asking: Message | None = None  # the assistant message a user message would answer

    def see(self, m: Message, rec: Any) -> None:
        # Cline's text results
        if m.malformed is None:
            role = m.role
            if role == "assistant":
                self.asking = m
            elif role == "user":
                asking = self.asking
                if asking is not None:
                    self.answer(asking, m)
                    self.asking = None
            elif role is not None:
                self.asking = None
            # (a role-less reasoning item sits between turns: the turn goes on)
        else:
            self.asking = None
        if not isinstance(rec, dict):
            return
        ts = rec.get("ts")
        if type(ts) is int or type(ts) is float:  # (`timestamp_seconds`, spelt out)
            m.meta["timestamp"] = ts / 1000.0
        elif timestamp_seconds(ts) is not None:  # (an int or float of a subclass)
            m.meta["timestamp"] = timestamp_seconds(ts)
        if not ROO_FLAGS.isdisjoint(rec):
            self.keys(m, rec)

    @staticmethod
    def answer(asking: Message, m: Message) -> None:
        """User message `m` right after the assistant message `asking`: where its tool ids
        do not answer every call, Cline's text results may (`_pair`). (The usual case
        first: no call, or every call answered by a tool_result block, often in the order
        of the calls.)"""
        got = asking._tool_ids
        calls = (asking.tool_ids() if got is None else got)[0]
        if calls:
            got = m._tool_ids
            answers = (m.tool_ids() if got is None else got)[1]
            if calls != answers and not set(calls).issubset(answers):
                _pair(asking, m)

    def keys(self, m: Message, rec: dict[str, Any]) -> None:
        """The condense and truncation keys of its record (`ROO_FLAGS`), but `ts`."""
        if rec.get("isSummary") is True:
            m.meta["is_summary"] = True
            if isinstance(rec.get("condenseId"), str):
                self.summaries.add(rec["condenseId"])
        if rec.get("isTruncationMarker") is True:
            m.meta["is_truncation_marker"] = True
            if isinstance(rec.get("truncationId"), str):
                self.markers.add(rec["truncationId"])
        if "condenseParent" in rec or "truncationParent" in rec:
            self.tagged.append((m, rec))

    def done(self, tags: tuple[set[str], set[str]] | None = None) -> tuple[set[str], set[str]]:
        """The tags applied; `tags`: the whole document's (else those seen)."""
        summaries, markers = (self.summaries, self.markers) if tags is None else tags
        for m, rec in self.tagged:
            _apply_tag(m, rec, "condenseParent", summaries, "condensed into summary")
            _apply_tag(m, rec, "truncationParent", markers, "hidden by sliding-window truncation")
        return summaries, markers


def _apply_tag(m: Message, rec: dict[str, Any], key: str, targets: set[str], reason: str) -> None:
    tag = rec.get(key)
    if tag is None:
        return
    if isinstance(tag, str) and tag in targets:
        if m.malformed is None:
            m.hidden = True
            m.meta.setdefault("hidden_reason", f"{reason} {tag}")
    else:
        m.meta["orphan_tag"] = f"{key}={tag}"


def result_text_tool(text: Any) -> str | None:
    """The tool name of a Cline/Roo text tool result (`[name for 'x'] Result:` or
    `[name] Result:` at the start), else None."""
    if not isinstance(text, str) or not text.startswith("["):
        return None
    head = _RESULT_HEAD.match(text)
    if head is None or _RESULT_MARK not in text:
        return None
    return head.group(1)


def _pair(assistant: Message, user: Message) -> None:
    """Cline's native tool_use answered by text: the n-th unanswered tool_use of an
    assistant message is answered by the n-th `[name ...] Result:` text block of the user
    message right after it (role-less reasoning items aside) when the names match; that
    text Block gets the tool_use's id."""
    texts = []
    for b in user.blocks:
        if b.type == "text":
            text = b.data.get("text") if isinstance(b.data, dict) else b.data
            name = result_text_tool(text)
            if name is not None:
                texts.append((b, name))
    if not texts:  # the usual case: results are tool_result blocks
        return
    answered = {b.tool_id for b in user.blocks if b.type == TOOL_RESULT}
    uses = [
        b
        for b in assistant.blocks
        if b.type == TOOL_USE and b.tool_id and b.tool_id not in answered
    ]
    for use, (text_block, name) in zip(uses, texts, strict=False):
        if name == use.name:
            text_block.tool_id = use.tool_id
            text_block.name = use.name
            user.forget_tool_ids()
