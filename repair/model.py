"""The conversation model every format adapter produces and every pass consumes.

Normal form: a session is a list of `Message`s in API order, each a tuple of `Block`s in
Anthropic shape (`block.data` is an Anthropic content block dict, or a plain `str` for string
content). Adapters convert their own records into this shape on load and back on export;
untouched messages/blocks keep their identity so the adapter can write the original bytes.

Objects are treated as immutable: an edit builds new `Message`/`Block` objects (keeping
`uid`/`bid`) instead of mutating, so snapshots for undo are cheap list copies.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Hashable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .place import NOWHERE, Place

if TYPE_CHECKING:
    from .codes import Severity
    from .files import Source
    from .formats.base import Adapter, Export

TOOL_USE = "tool_use"
TOOL_RESULT = "tool_result"
TEXT = "text"
THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})

# Prefix of every piece of content histview writes itself.
SYNTHETIC_PREFIX = "[histview]"
SYNTHETIC_RESULT_TEXT = (
    "[histview] No result was recorded for this tool call; the session was interrupted."
)

# A message's (calls, answers) tool ids (`Message.tool_ids`).
ToolIds = tuple[tuple[str | None, ...], tuple[str | None, ...]]

_block_ids = itertools.count(1)
_message_ids = itertools.count(1)


# The counters' own `__next__` (a C call) is the default factory: a Python function around
# it cost a frame per block, and a large session builds hundreds of thousands of blocks.
new_bid = _block_ids.__next__
new_uid = _message_ids.__next__


def reserve_bids(n: int) -> int:
    """The first of `n` new consecutive bids, for blocks a loader will make later (the
    counter advanced in C: no call per bid)."""
    first = new_bid()
    if n > 1:
        next(itertools.islice(_block_ids, n - 2, None))
    return first


@dataclass(slots=True, eq=False)
class Block:
    """One content item of a message.

    `data` is the Anthropic-shaped block (dict) or a `str` when the message content was a
    plain string. `tool_id` is `tool_use.id` or `tool_result.tool_use_id`. `src` is where the
    block lives in the input file (`{"line": N}` or `{"path": "/3/content/1"}`), None for
    blocks histview created; a JSON document's adapter may record `at` instead, the pointer
    cut in two (`("/3/content/", 1)`: the first part shared by a message's blocks), made into
    a place only when asked for (`place`). `origin` is adapter-private (e.g. the source
    record).
    """

    type: str
    data: Any
    tool_id: str | None = None
    name: str | None = None
    is_error: bool = False
    src: dict[str, Any] | None = None
    origin: Any = None
    at: tuple[str, int] | None = None
    bid: int = field(default_factory=new_bid)

    def place(self) -> Place:
        """Where the block was read (NOWHERE: histview made it)."""
        if self.src:
            return Place.of(self.src)
        if self.at is not None:
            return Place(pointer=f"{self.at[0]}{self.at[1]}")
        return NOWHERE

    @property
    def is_tool_use(self) -> bool:
        return self.type == TOOL_USE

    @property
    def is_tool_result(self) -> bool:
        return self.type == TOOL_RESULT


@dataclass(slots=True, eq=False)
class Message:
    """One API message (or a record shown in its place: hidden or malformed).

    `raw` is the adapter's original record for this message (dict for JSON formats); `meta`
    holds adapter facts the passes read: `timestamp` (float, epoch seconds) when the format
    has one. `hidden` messages are shown but not sent (Roo condense/truncation, Claude Code
    abandoned branches); `malformed` holds the reason a record could not be read as a
    message. Neither is checked as part of the live conversation.
    """

    role: str | None
    blocks: tuple[Block, ...]
    raw: Any = None
    meta: dict[str, Any] = field(default_factory=dict)
    hidden: bool = False
    malformed: str | None = None
    src: dict[str, Any] | None = None
    origin: Any = None
    uid: int = field(default_factory=new_uid)
    _tool_ids: ToolIds | None = field(default=None, init=False, repr=False)
    # True where its tool ids were read (or a loader read the parsed content) and the shape
    # rules find nothing in its blocks (`plain_shape`); an edit makes a new message
    _plain_shape: bool = field(default=False, init=False, repr=False)

    @property
    def live(self) -> bool:
        return not self.hidden and self.malformed is None

    @property
    def timestamp(self) -> float | None:
        return self.meta.get("timestamp")

    def with_blocks(self, blocks: tuple[Block, ...] | list[Block]) -> Message:
        """Same message (same uid, raw, meta), other blocks."""
        return replace(self, blocks=tuple(blocks))

    def with_timestamp(self, t: float | None) -> Message:
        """Same message, stamped `t` (None: without a time)."""
        meta = {k: v for k, v in self.meta.items() if k != "timestamp"}
        if t is not None:
            meta["timestamp"] = t
        return replace(self, meta=meta)

    def tool_ids(self) -> ToolIds:
        """The tool ids of its tool_use blocks, and of the blocks that answer a call (its
        tool_result blocks and any other block an adapter gave a tool id, Cline's text
        results), each in block order. Made when first asked for and kept: blocks are not
        changed once loaded, and an edit makes a new message."""
        got = self._tool_ids
        if got is None:
            # (a loop, not two comprehensions: most messages hold a block or two); the same
            # loop finds whether the shape rules need to look at the blocks (`plain_shape`)
            # (lists, not tuples grown by `+=`: a message of 100k blocks is read in linear time)
            calls: list[str | None] = []
            answers: list[str | None] = []
            blocks = self.blocks
            plain = bool(blocks)
            other = False  # a block before, neither a tool_result nor a text answer
            for b in blocks:
                btype = b.type
                if btype == TOOL_RESULT:
                    answers.append(b.tool_id)
                    if other:
                        plain = False
                    continue
                if btype == TOOL_USE:
                    calls.append(b.tool_id)
                    other = True
                    continue
                if b.tool_id:
                    answers.append(b.tool_id)
                    if btype != TEXT:
                        other = True
                else:
                    other = True
                if btype == TEXT and plain and text_is_blank(b.data):
                    plain = False
            got = self._tool_ids = (tuple(calls), tuple(answers))
            self._plain_shape = plain
        return got

    def calls(self) -> list[tuple[str | None, str | None]]:
        """(tool id, name) of each of its tool_use blocks, in order: what a finding says of
        a call (a loader may read them from its records, its blocks not made)."""
        return [(b.tool_id, b.name) for b in self.blocks if b.type == TOOL_USE]

    def answers(self, skip: int = 0) -> list[tuple[int, str | None, int, Place]] | None:
        """(block index, tool id, bid, place) of each block that answers a call, the first
        `skip` left out, where a loader reads them from its records, its blocks not made
        (the bids they will have); None: read them from the blocks."""
        return None

    def plain_shape(self) -> bool:
        """Known to hold blocks, none of them a blank text block, and no tool_result after
        a block of another type (a text answer aside): the shape rules need not look at its
        blocks (False: not known, they look). Read with its tool ids (`tool_ids`), or by a
        loader from the parsed content (tests/engine/test_plain_shape.py)."""
        return self._plain_shape

    def holds_tool_blocks(self) -> bool:
        """False when its tool ids are known and there are none: no tool_use, no
        tool_result, no block an adapter gave a tool id (a listing need not make its
        blocks to find its tool rows); True otherwise."""
        got = self._tool_ids
        return got is None or bool(got[0] or got[1])

    def forget_tool_ids(self) -> None:
        """For a loader that gives a block of this message a tool id once it is built."""
        self._tool_ids = None

    def block_counts(self) -> tuple[int, int]:
        """How many blocks it holds, and how many of them are tool_result blocks (what a
        wire that sends each result as an entry of its own counts)."""
        blocks = self.blocks
        return len(blocks), sum(1 for b in blocks if b.type == TOOL_RESULT)

    def content_runs(self) -> int | None:
        """How many entries the Responses wire makes of it as it is (a run of content blocks
        one, any other block one: `wire._responses_count`), where its loader counted them
        without its blocks; None: they are counted from its blocks."""
        return None


# A `LazyMessage`'s blocks, origin or src not made yet
LAZY: Any = object()
_making = threading.Lock()


class LazyMessage(Message):
    """A message read from a parsed record whose `Block`s are made when first asked for
    (`blocks`), and with them its `origin` and `src` where the loader left those to come
    (`LAZY`). The loader sets what a check reads without the blocks: the tool ids and the
    plain shape (`_tool_ids`, `_plain_shape`); the pairing, a finding, a listing, a writer
    make the blocks of the messages they read. A subclass says how its blocks and src are
    made (`_make_blocks`, `_make_src`); its origin, when left to come, is its blocks.

    `dataclasses.replace` (an edit) makes one through `Message.__init__`, which sets the
    blocks, origin and src through the setters: the copy is made, never lazy."""

    __slots__ = ("_blocks", "_origin", "_src", "_counts")
    _blocks: Any
    _origin: Any
    _src: Any
    _counts: tuple[int, int] | None  # `block_counts` as the loader read them (None: not read)

    def _make_blocks(self) -> tuple[Block, ...]:
        raise NotImplementedError

    def _make_src(self) -> dict[str, Any] | None:
        raise NotImplementedError

    @property
    def blocks(self) -> tuple[Block, ...]:
        got: tuple[Block, ...] = self._blocks
        if got is LAZY:
            with _making:  # once, whichever thread asks first (a TUI worker, the UI)
                got = self._blocks
                if got is LAZY:
                    got = self._blocks = self._make_blocks()
        return got

    @blocks.setter
    def blocks(self, value: tuple[Block, ...]) -> None:
        self._blocks = value

    @property
    def origin(self) -> Any:
        origin = self._origin
        return self.blocks if origin is LAZY else origin

    @origin.setter
    def origin(self, value: Any) -> None:
        self._origin = value

    @property
    def src(self) -> dict[str, Any] | None:
        src: dict[str, Any] | None = self._src
        return self._make_src() if src is LAZY else src

    @src.setter
    def src(self, value: dict[str, Any] | None) -> None:
        self._src = value

    def made(self) -> bool:
        """Whether its blocks were made (a message never asked for is untouched)."""
        return self._blocks is not LAZY

    def block_counts(self) -> tuple[int, int]:
        if self._blocks is LAZY:
            counts = self._counts
            if counts is not None:
                return counts
        return Message.block_counts(self)

    @classmethod
    def unmade(
        cls, role: str, raw: Any, facts: tuple[ToolIds, bool], hidden: bool, origin: Any = LAZY
    ) -> Any:
        """One with its blocks and src to come, every field of `Message` set in place (the
        dataclass's `__init__` through the properties' setters took twice as long;
        `dataclasses.replace` still makes one through it). The caller sets the slots of
        its subclass, and its `_counts` where the loader read them (tests/formats/
        test_entry_messages.py, test_chat_lazy.py)."""
        m = _new(cls)
        m.role = role
        m._blocks = LAZY
        m.raw = raw
        m.meta = {}
        m.hidden = hidden
        m.malformed = None
        m._src = LAZY
        m._origin = origin
        m.uid = new_uid()
        m._tool_ids, m._plain_shape = facts
        m._counts = None
        return m


_new = object.__new__


def _made_meta(m: Any) -> dict[str, Any]:
    meta: dict[str, Any] = m._meta
    if meta is LAZY:
        t = m.timestamp
        meta = m._meta = {} if t is None else {"timestamp": t}
    return meta


def _set_meta(m: Any, value: dict[str, Any]) -> None:
    m._meta = value
    m.timestamp = value.get("timestamp")


# The `meta` of a `LazyMessage` subclass whose time is a slot of its own (`timestamp`,
# read by the pairing and the time rules of every message: a slot, not a property reading a
# dict) and whose dict (`_meta`, LAZY) is made when first asked for, from the time. An edit
# (`dataclasses.replace`) sets `meta`, and the time with it; nothing may write a time into
# the dict in place (a loader sets the slot).
TIMED_META = property(_made_meta, _set_meta)


@dataclass(slots=True)
class Finding:
    """One problem. Field names and codes are its JSON shape (docs/codes.md, A finding).

    `message_index` numbers the message as the provider does (`messages.N`: sent messages
    only, hidden and malformed ones skipped; None for a message that is not sent);
    `position` is its index in `Session.messages`, where the planner and the TUI find it.
    `client_repair` says what the client target sends instead of this fault (None: the
    client sends it as it is, or the target is a provider).
    """

    code: str
    severity: Severity
    message_index: int | None
    block_index: int | None
    tool_use_id: str | None
    detail: str
    rule: str | None
    source: Place  # where it was read (JSON: `{"line"}` and/or `{"path"}`)
    # Not serialised: stable identity of what the finding is about, used to remember
    # skip/alternative choices across re-analysis (message uid, block bid, code).
    key: tuple[Hashable, ...] = ()
    position: int | None = None
    # Under a client target: what the client sends in place of this fault (then a warning).
    client_repair: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message_index": self.message_index,
            "block_index": self.block_index,
            "tool_use_id": self.tool_use_id,
            "detail": self.detail,
            "rule": self.rule,
            "source": self.source.to_json(),
            "client_repair": self.client_repair,
        }

    def place(self) -> str:
        """Where it is, in words: the file line, the JSON pointer, else the message number."""
        said = self.source.words()
        if said:
            return said
        if self.message_index is not None:
            return f"message {self.message_index}"
        return f"row {self.position}"


@dataclass
class Session:
    """A loaded conversation plus what is needed to write it back."""

    path: str
    format: str
    target: str
    messages: list[Message]
    adapter: Adapter
    state: Any = None  # adapter-private document state (original doc, style, records...)
    load_findings: list[Finding] = field(default_factory=list)
    # Extra threads (Claude Code sidechains / subagent files): shown, checked separately.
    threads: list[Session] = field(default_factory=list)
    label: str = ""
    # The input as read (repair.files.Source: its bytes and stat), so that an in-place
    # write backs up exactly those bytes and refuses if the file moved since.
    source: Source | None = None
    # False: read without the scan that keeps odd number literals (`load_session`'s
    # exact_numbers): numbers are what orjson reads; what is written from it is read back so.
    numbers_exact: bool = True

    def copy_with(self, messages: list[Message]) -> Session:
        return replace(self, messages=messages)

    def export_bytes(self) -> bytes:
        return self.adapter.dump(self)

    def export(self) -> Export:
        """The bytes to write and the records they leave out."""
        return self.adapter.export(self)


def source_of(block: Block | None, message: Message) -> Place:
    """Where a finding about `block` (None: about the message) was read: the block's place,
    else the message's."""
    if block is not None and (block.src or block.at is not None):
        return block.place()
    return Place.of(message.src)


def text_is_blank(data: Any) -> bool:
    """A text block's data as the shape rules see it: no text, an empty one or whitespace
    only (a text that is not a string is blank; data neither a dict nor a string is not)."""
    if isinstance(data, dict):
        text = data.get("text")
    elif isinstance(data, str):
        text = data
    else:
        return False
    return not isinstance(text, str) or not text or text.isspace()


def block_from_anthropic(data: Any, src: dict[str, Any] | None = None, origin: Any = None) -> Block:
    """A Block from an Anthropic content item (dict) or string content."""
    if isinstance(data, str):
        return Block(type=TEXT, data=data, src=src, origin=origin)
    btype = data.get("type")
    if btype == TOOL_USE:
        tid = data.get("id")
        return Block(
            type=TOOL_USE,
            data=data,
            tool_id=tid if isinstance(tid, str) else None,
            name=data.get("name") if isinstance(data.get("name"), str) else None,
            src=src,
            origin=origin,
        )
    if btype == TOOL_RESULT:
        tid = data.get("tool_use_id")
        return Block(
            type=TOOL_RESULT,
            data=data,
            tool_id=tid if isinstance(tid, str) else None,
            is_error=data.get("is_error") is True,
            src=src,
            origin=origin,
        )
    return Block(
        type=btype if isinstance(btype, str) else "unknown", data=data, src=src, origin=origin
    )


def block_text(block: Block) -> str:
    """The readable text of a block (text, tool_result content, thinking), '' otherwise."""
    data = block.data
    if isinstance(data, str):
        return data
    if not isinstance(data, dict):
        return ""
    if block.type == TOOL_RESULT:
        return content_text(data.get("content"))
    for key in ("text", "thinking"):
        val = data.get(key)
        if isinstance(val, str):
            return val
    return ""


def result_text(data: Any) -> str:
    """A tool result's content as one text, as the formats that store results as a string
    write it (Codex `output`, Gemini CLI `response`): text parts joined by newlines, any
    other value as its str()."""
    content = data.get("content") if isinstance(data, dict) else data
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            p.get("text", "")
            for p in content
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return "" if content is None else str(content)


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for item in content:
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                parts.append(item["text"])
            elif isinstance(item, str):
                parts.append(item)
        return "\n".join(parts)
    return ""
