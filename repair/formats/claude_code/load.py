"""Claude Code records -> API messages (one view = one conversation of a file).

The resumed chain (chain.py) is turned into API messages the way Claude Code sends
them: consecutive assistant records sharing `message.id` form one assistant message;
consecutive user records (the per-call results of one turn, an interrupt note, the next
prompt) form one user message. `attachment`/`system` records on the chain are not
messages ("glue": they pass through and follow the record before them when the chain is
re-linked); so are the assistant records Claude Code drops when it resumes (whitespace-only
text, thinking-only records whose response has nothing else) and API-error records (shown
hidden). Records off the chain (an abandoned rewind branch, history before a compaction,
a part cut off by a missing parent) are shown as hidden messages at their file position;
lines that cannot be read become malformed messages.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from ...files import FileText
from ...model import (
    LAZY,
    THINKING_TYPES,
    TOOL_RESULT,
    TOOL_USE,
    Block,
    LazyMessage,
    Message,
    ToolIds,
    new_uid,
    text_is_blank,
)
from ..anthropic_list import _facts_of_list
from ..base import IndexedLine, JsonlLine, LineIndex
from .chain import (
    MESSAGE_TYPES,
    ONE_BLANK,
    ONE_EMPTY,
    ONE_ODD_TEXT,
    ONE_RESULT,
    ONE_THINKING,
    ONE_USE,
    Graph,
    Walk,
    build_graph,
    message_fault,
    one_item,
)


@dataclass
class CCFile:
    path: str
    held: bytes | FileText  # the bytes read, or the file they are read from (a large one)
    lines: Sequence[JsonlLine]
    newline: str
    trailing_newline: bool
    bom: bool
    graph: Graph
    single_doc: bool = False  # the whole file was one JSON record
    # Records an earlier write left out or emptied, as read (for the report), when the file
    # is what that write gave, loaded again (a re-link of the chain, gaps.py)
    carried: list[dict[str, Any]] = field(default_factory=list)
    # the read-back's records, for the builder (a loaded file's are its graph's lists)
    recs: dict[int, Rec] = field(default_factory=dict)

    @property
    def data(self) -> bytes:
        """The file's bytes as read (a large file's read again: FileChanged if they differ)."""
        held = self.held
        return held if isinstance(held, bytes) else held.read_all()


class Rec(NamedTuple):
    """A user/assistant record as the read-back gives it to the builder (`CCFile.recs`; a
    loaded file's are the graph's lists, `Records.of_graph`): its content items (`items`:
    the record's list of content blocks as parsed, or its string content as the one item),
    or the blocks it was given (`items` None)."""

    role: str
    blocks: tuple[Block, ...]
    bad: str | None  # why it is not a readable message (then no blocks)
    mid: str | None  # message.id of an assistant record (a string)
    api_error: bool  # isApiErrorMessage (an assistant record: or the <synthetic> model)
    ts: Any  # timestamp as written
    uuid: Any
    items: Any = None

    def content(self) -> Sequence[Any]:
        """Its content items (each a block's data: a dict, or a string content)."""
        items = self.items
        return items if items is not None else [b.data for b in self.blocks]


def read_record(obj: dict[str, Any], idx: int, lineno: int, role: str) -> Rec:
    """What the messages need of a user/assistant record, as `build_graph` reads it into
    the graph's lists: its content items, or the reason it is not a readable message."""
    msg: Any = obj.get("message")
    ts, uuid = obj.get("timestamp"), obj.get("uuid")
    api_error = obj.get("isApiErrorMessage") is True
    bad = message_fault(msg)
    if bad is not None:
        return Rec(role, (), bad, None, api_error, ts, uuid, ())
    content = msg["content"]  # (a string or a list of typed blocks: `message_fault`)
    mid = None
    if role == "assistant":
        mid = msg.get("id")
        if type(mid) is not str:
            mid = None
        api_error = api_error or msg.get("model") == "<synthetic>"
    return Rec(
        role, (), None, mid, api_error, ts, uuid, (content,) if type(content) is str else content
    )


@dataclass(slots=True)
class Records:
    """What the builder reads of each user/assistant record, by line index (lists, or the
    read-back's dicts): its role, content items (None: not a readable message, `bad` says
    why), whether it is an API-error record, its message.id as written (a string, or None),
    timestamp as written, uuid, whether a user record holds a tool_result, and for a
    record of one typed block `chain.one_item` of it (`one`, `one_id`; 0: another record,
    read from its items)."""

    role: Any
    items: Any
    bad: Mapping[int, str]
    api_error: Container[int]
    mid: Any
    ts: Any
    uuid: Any
    results: Any
    one: Any
    one_id: Any

    @classmethod
    def of_graph(cls, g: Graph) -> Records:
        mid: list[str | None] = g.mid
        if g.blank_mid:  # (rare: an id "" is an id, which the graph's `mid` holds as None)
            mid = list(mid)
            for i in g.blank_mid:
                mid[i] = ""
        one, one_id = g.one, g.one_id
        if len(one) != len(g.items):  # (a graph made otherwise: each record read whole)
            one, one_id = [0] * len(g.items), [None] * len(g.items)
        return cls(g.kind, g.items, g.bad, g.api_error, mid, g.ts, g.uuid, g.results, one, one_id)

    @classmethod
    def of_recs(cls, recs: Mapping[int, Rec]) -> Records:
        out = cls({}, {}, {}, set(), {}, {}, {}, {}, {}, {})
        for i, r in recs.items():
            items = None if r.bad is not None else r.content()
            out.role[i], out.items[i], out.mid[i], out.ts[i], out.uuid[i] = (
                r.role,
                items,
                r.mid,
                r.ts,
                r.uuid,
            )
            out.one[i], out.one_id[i] = (
                one_item(items[0]) if items is not None and len(items) == 1 else (0, None)
            )
            out.results[i] = r.role == "user" and any(
                type(x) is dict and x.get("type") == TOOL_RESULT for x in items or ()
            )
            if r.bad is not None:
                out.bad[i] = r.bad  # type: ignore[index]
            if r.api_error:
                out.api_error.add(i)  # type: ignore[attr-defined]
        return out


def records_of(file: CCFile) -> Records:
    """The records the builder reads: the read-back's (`CCFile.recs`), else the graph's."""
    return Records.of_recs(file.recs) if file.recs else Records.of_graph(file.graph)


def light_graph(lines: Sequence[JsonlLine], release: bool = False) -> Graph:
    """The graph and what the messages need of every user/assistant record, in one pass
    over the lines (`release`: no line keeps its parsed record after it, see `build_graph`)."""
    return build_graph(lines, release=release)


def peek(line: JsonlLine) -> Any:
    """A line's record for a look (a timestamp), not kept by a line that had forgotten it:
    the rows on screen ask for their records' times, and a long scroll through a large file
    would otherwise hold every record again."""
    if isinstance(line, IndexedLine) and line._state == 0:
        obj = line.obj
        line.release()
        return obj
    return line.obj


_LAZY: Any = object()
_new = object.__new__
# `src` of a block or message read from the line after `origin` (its line index): the place
# is derived when asked for, not stored (a dict per record and per message of a 1 GB file)
_DERIVED: Any = object()


class RecordBlock(Block):
    """A block read from a record: `src` is `{"line": origin + 1}` when asked for, unless
    given otherwise (a line numbered apart from its index, an edit)."""

    __slots__ = ("_src",)
    _src: Any

    @property
    def src(self) -> dict[str, Any] | None:
        src = self._src
        return {"line": self.origin + 1} if src is _DERIVED else src

    @src.setter
    def src(self, value: dict[str, Any] | None) -> None:
        self._src = value


class RecordMessage(LazyMessage):
    """A message built from records (`origin`: their line indexes), whose `Block`s are made
    from the records' content items when first asked for (`LazyMessage`: the builder sets
    the tool ids, plain shape and block counts a check reads, from the items); `raw` (its
    record, or its records in a list) is read from the file's lines when asked for, so the
    messages do not hold the records' envelopes (on a file whose lines were released, each
    ask parses them again); `src` is derived from its first record as a RecordBlock's is,
    and `meta` is made from the timestamp, uuid and hidden reason it keeps when asked for
    (not a dict per message of a 1 GB file)."""

    __slots__ = ("_held", "_lines", "_meta", "timestamp", "_uuid", "_why", "_parts", "_order")
    _held: Any
    _lines: Any
    _meta: Any
    # its time a field, not a property (read by the pairing and the time rules for every
    # message: `model.TIMED_META`'s reason); a `meta` set (an edit) sets it too
    timestamp: float | None
    _uuid: str | None
    _why: str | None
    _parts: list[Sequence[Any]]  # each record's content items, in `origin`'s order
    _order: int  # how its blocks are sent (`_sent_order`)

    def _make_blocks(self) -> tuple[Block, ...]:
        lines, origin = self._lines, self._origin
        if len(origin) == 1:
            return _blocks_of(self._parts[0], origin[0], lines[origin[0]].lineno)
        blocks: list[Block] = []
        for idx, items in zip(origin, self._parts, strict=True):
            blocks += _blocks_of(items, idx, lines[idx].lineno)
        return _in_order(blocks, self._order, _block_type)

    def _make_src(self) -> dict[str, Any] | None:
        return {"line": self._origin[0] + 1}

    @property
    def meta(self) -> dict[str, Any]:
        meta = self._meta
        if meta is _DERIVED:  # made anew each time (only Roo's loader writes to a meta)
            meta = {}
            if self.timestamp is not None:
                meta["timestamp"] = self.timestamp
            if self._uuid is not None:
                meta["uuid"] = self._uuid
            if self._why:
                meta["hidden_reason"] = self._why
        value: dict[str, Any] = meta
        return value

    @meta.setter
    def meta(self, value: dict[str, Any]) -> None:
        self._meta = value
        self.timestamp = value.get("timestamp")

    @property
    def raw(self) -> Any:
        held = self._held
        if held is not _LAZY:
            return held
        lines, recs = self._lines, self._origin
        return lines[recs[0]].obj if len(recs) == 1 else [lines[i].obj for i in recs]

    @raw.setter
    def raw(self, value: Any) -> None:
        self._held = value


@dataclass
class View:
    """One conversation of a file: its resumed chain and the messages built from it."""

    file: CCFile
    chain: list[str]  # node uuids in conversation order (after parallel-result recovery)
    messages: list[Message]  # as loaded
    sidechain: bool = False
    _rec_blocks: RecordBlocks | None = None
    # the chain's lines (`Graph.index` of each uuid), as the loader found them
    lines: list[int] | None = None
    _chain_at: dict[int, int] | None = None  # line -> its place in `chain`

    def msg_records(self, m: Message) -> tuple[int, ...]:
        """Line indexes of the records a loaded message was built from."""
        return m.origin if isinstance(m.origin, tuple) else ()

    @property
    def rec_blocks(self) -> RecordBlocks:
        """Each record of the conversation (live and on-chain malformed messages) -> its
        blocks as loaded. Built on first use: only writing needs it."""
        if self._rec_blocks is None:
            self._rec_blocks = RecordBlocks(self.messages)
        return self._rec_blocks

    def chain_lines(self) -> list[int]:
        """The line of each entry of `chain` (kept from the load, else made once)."""
        if self.lines is None:
            self.lines = list(map(self.file.graph.index.__getitem__, self.chain))
        return self.lines

    def chain_place(self, uuid: object) -> int:
        """A node's place in `chain` (after it when it is not on it); the map is made on the
        first question: only stamping a fixed message asks. A map of the chain's lines, not
        of its uuids: a node's uuid names its line (`Graph.index`), which is on the chain
        where the uuid is."""
        at = self.line_places()
        n = len(self.chain)
        if type(uuid) is not str:
            return n
        i = self.file.graph.index.get(uuid)
        return n if i is None else at.get(i, n)

    def line_places(self) -> dict[int, int]:
        """Each chain line -> its place in `chain` (its first: `list.index`), made once."""
        if self._chain_at is None:
            lines = self.chain_lines()
            # from the end, in C: a line's first place is the last one stored
            self._chain_at = dict(zip(reversed(lines), range(len(lines) - 1, -1, -1), strict=True))
        return self._chain_at


class RecordBlocks(Mapping[int, tuple[Block, ...]]):
    """`View.rec_blocks`: a message's blocks are made when one of its records is asked for
    (a writer asks for the records it rewrites or looks at, not for every message's)."""

    def __init__(self, messages: list[Message]) -> None:
        self._message: dict[int, Message] = {
            idx: m
            for m in messages
            if not m.hidden and isinstance(origin := m.origin, tuple)
            for idx in origin
        }
        self._made: dict[int, tuple[Block, ...]] = {}

    def __getitem__(self, idx: int) -> tuple[Block, ...]:
        got = self._made.get(idx)
        if got is None:
            m = self._message[idx]
            out: dict[int, list[Block]] = {i: [] for i in m.origin}
            for b in m.blocks:
                out[b.origin].append(b)
            for i, blocks in out.items():
                self._made[i] = tuple(blocks)
            got = self._made[idx]
        return got

    def __contains__(self, idx: object) -> bool:
        return idx in self._message

    def __iter__(self) -> Iterator[int]:
        return iter(self._message)

    def __len__(self) -> int:
        return len(self._message)


@dataclass
class CCState:
    file: CCFile
    view: View
    inline_thread: bool = False  # a sidechain conversation stored in its main session's file
    stop: str | None = None  # why the walk stopped early ("missing parent ...", "cycle")
    recovered: int = 0  # off-chain parallel lines put back by the recovery pass
    walk: Walk | None = None  # the parentUuid walk the chain came from (its gaps)


def _blocks_of(items: Sequence[Any], idx: int, lineno: int) -> tuple[Block, ...]:
    """The blocks of a record's content items (`read_record`). (Made here rather than with
    `block_from_anthropic`, same fields: this runs for every block a writer reads.)"""
    src = _DERIVED if lineno == idx + 1 else {"line": lineno}
    blocks = []
    for item in items:
        if type(item) is str:
            blocks.append(RecordBlock("text", item, None, None, False, src, idx))
            continue
        t = item["type"]
        if t == TOOL_USE:
            tid, name = item.get("id"), item.get("name")
            blocks.append(
                RecordBlock(
                    t,
                    item,
                    tid if type(tid) is str else None,
                    name if type(name) is str else None,
                    False,
                    src,
                    idx,
                )
            )
        elif t == TOOL_RESULT:
            tid = item.get("tool_use_id")
            blocks.append(
                RecordBlock(
                    t,
                    item,
                    tid if type(tid) is str else None,
                    None,
                    item.get("is_error") is True,
                    src,
                    idx,
                )
            )
        else:
            blocks.append(RecordBlock(t, item, None, None, False, src, idx))
    return tuple(blocks)


def _item_type(item: Any) -> str:
    """A content item's block type (a string content is a text block)."""
    t: str = "text" if type(item) is str else item["type"]
    return t


def _block_type(b: Block) -> str:
    return b.type


def _blank_text(item: Any) -> bool:
    """A text block whose text is whitespace only (not a string content)."""
    if type(item) is not dict or item["type"] != "text":
        return False
    txt = item.get("text")
    return type(txt) is str and not txt.strip()


def _resume_drop(items: Sequence[Any]) -> str | None:
    """Claude Code drops these assistant records when it resumes (docs/formats.md, Claude
    Code: what Claude Code leaves out when it resumes):
    whitespace-only text (the `"\\n\\n"` opening thinking turns) -> "blank"; thinking-only
    records -> "thinking" and empty-text records -> "empty" are dropped when their
    message.id has no other content. (2.1.197 keeps an empty text block when it merges the
    record into a message with content, and sends it: the API refuses it.)"""
    if len(items) == 1:  # the usual shape: one block per record
        return _drop_one(items[0])
    if not items:
        return None
    if all(_blank_text(i) for i in items):
        return "blank" if all(i["text"] for i in items) else "empty"
    if all(type(i) is dict and i["type"] in THINKING_TYPES for i in items):
        return "thinking"
    return None


def _drop_one(item: Any) -> str | None:
    """`_resume_drop` of a record of one item (the usual record: a call, a text, a thinking)."""
    return _DROP[one_item(item)[0]]


# `_drop_one` by `chain.one_item`'s kind of the record's one item
_DROP: tuple[str | None, ...] = tuple(
    {ONE_BLANK: "blank", ONE_EMPTY: "empty", ONE_THINKING: "thinking"}.get(k) for k in range(9)
)


@dataclass(slots=True, eq=False)
class _Acc:
    """A message being built from records (line indexes `recs`, in chain order; `parts`:
    each record's content items)."""

    role: str
    mid: str | None  # message.id of an assistant message
    recs: list[int]
    parts: list[Sequence[Any]]
    results: bool = False  # holds a tool_result block: an assistant merge walks past it


# How a message's blocks are sent (`_sent_order`): as read, tool_results first, tool_uses last
_AS_READ, _RESULTS_FIRST, _USES_LAST = 0, 1, 2


def _sent_order(acc: _Acc, items: Sequence[Any]) -> int:
    """How Claude Code sends the blocks of a message merged from several records: a user
    message puts its tool_results first; an assistant message without thinking puts its
    tool_use blocks after the others (measured: [text, use, result] is sent [text, result,
    use])."""
    if len(acc.recs) < 2:
        return _AS_READ
    if acc.role == "user":
        return _RESULTS_FIRST if acc.results else _AS_READ
    if acc.role == "assistant" and _use_before_other(items):
        return _USES_LAST
    return _AS_READ


def _in_order(seq: Sequence[Any], order: int, type_of: Callable[[Any], str]) -> tuple[Any, ...]:
    """Blocks (or their items, `type_of` reading their type) in the order they are sent."""
    if order == _RESULTS_FIRST:
        return tuple(
            [x for x in seq if type_of(x) == TOOL_RESULT]
            + [x for x in seq if type_of(x) != TOOL_RESULT]
        )
    if order == _USES_LAST:
        return tuple(
            [x for x in seq if type_of(x) != TOOL_USE] + [x for x in seq if type_of(x) == TOOL_USE]
        )
    return tuple(seq)


def _use_before_other(items: Iterable[Any]) -> bool:
    """A tool_use comes before another kind of block, and no thinking is interleaved (of
    content items: a string content is a text block)."""
    seen_use = False
    other_after = False
    for item in items:
        t = "text" if type(item) is str else item["type"]
        if t in THINKING_TYPES:
            return False
        if t == TOOL_USE:
            seen_use = True
        elif seen_use:
            other_after = True
    return other_after


_UNKNOWN: Any = (None, False)  # facts not read: `Message.tool_ids` reads the blocks when asked


def _merged(
    acc: _Acc, one: Any, one_id: Any, keys: Iterable[int] | None = None
) -> tuple[int, int, tuple[ToolIds | None, bool]]:
    """A sent message of several records: how many blocks it holds, the order they are sent
    in (`_sent_order`), and their `_facts`, in one pass over its blocks as `chain.one_item`
    reads them: the records' `one` and `one_id` where each record is one block (Claude
    Code's usual record), else each item read (`keys`: their places in `one`); the usual
    message; else read the long way. A reorder keeps each type's blocks in their order, so
    the tool ids are those read; only where the tool_results go decides whether one comes
    after a block of another type."""
    calls: list[str | None] = []
    answers: list[str | None] = []
    parts = acc.parts
    other = late_result = blank = thinking = use = use_then_other = False
    for r in acc.recs if keys is None else keys:
        kind = one[r]
        if kind == ONE_RESULT:
            answers.append(one_id[r])
            late_result = late_result or other
            use_then_other = use_then_other or use
            continue
        if not kind:
            if keys is None:  # a record of several blocks, or of another kind: item by item
                read = [one_item(x) for part in parts for x in part]
                kinds = [k for k, _ in read]
                return _merged(acc, kinds, [t for _, t in read], range(len(read)))
            items: Sequence[Any] = [x for part in parts for x in part]
            order = _sent_order(acc, items)
            if order != _AS_READ:
                items = _in_order(items, order, _item_type)
            return len(items), order, _facts(items)
        other = True
        if kind == ONE_USE:
            calls.append(one_id[r])
            use = True
            continue
        use_then_other = use_then_other or use
        if kind in _BLANK_KINDS:
            blank = True
        elif kind == ONE_THINKING:
            thinking = True
    count = sum(map(len, parts))
    if acc.role == "user":
        order = _RESULTS_FIRST if acc.results else _AS_READ
    else:
        order = _USES_LAST if use_then_other and not thinking else _AS_READ
    if order == _AS_READ:
        return (
            count,
            order,
            ((tuple(calls), tuple(answers)), bool(count) and not late_result and not blank),
        )
    if order == _USES_LAST and answers:  # (rare: where its results go after the move)
        items = _in_order([x for part in parts for x in part], order, _item_type)
        return count, order, _facts(items)
    return count, order, ((tuple(calls), tuple(answers)), not blank)  # results first


_BLANK_KINDS = frozenset({ONE_BLANK, ONE_EMPTY, ONE_ODD_TEXT})  # a text block, blank or odd
_PLAIN: Any = (((), ()), True)
_NOT_PLAIN: Any = (((), ()), False)


def _one_facts(kind: int, tid: str | None) -> tuple[ToolIds, bool]:
    """`_facts` of one block as `chain.one_item` reads it (`kind` not 0)."""
    if kind == ONE_USE:
        return ((tid,), ()), True
    if kind == ONE_RESULT:
        return ((), (tid,)), True
    return _NOT_PLAIN if kind in _BLANK_KINDS else _PLAIN  # type: ignore[no-any-return]


def _facts(items: Sequence[Any]) -> tuple[ToolIds | None, bool]:
    """What `Message.tool_ids` reads of blocks made of these items (in the order sent):
    their tool ids and plain shape (None, False: not known, read from the blocks when asked
    for: a string content merged with other records' blocks)."""
    if len(items) == 1 and type(items[0]) is str:
        return ((), ()), not text_is_blank(items[0])
    return _facts_of_list(items) or _UNKNOWN  # type: ignore[arg-type]  # (any sequence)


class _Builder:
    """Accumulates records into messages the way Claude Code 2.1.197 builds its request
    (`normalizeMessagesForAPI`): a user record joins the user message before it (API-error
    records in between are not sent and do not separate them); an assistant record joins the
    earlier assistant message with its `message.id`, walking back over tool-result messages
    and assistant messages of other ids, and stopping at any other user message; so a
    streamed parallel call `[use A][result A][use B][result B]` is `[A, B]` then
    `[result A, result B]`. A hidden builder (records not sent) only merges neighbours."""

    def __init__(
        self,
        file: CCFile,
        hidden: bool = False,
        reason: str | None = None,
        skip: frozenset[int] = frozenset(),
    ):
        self.file = file
        self.recs = records_of(file)
        self.hidden = hidden
        self.reason = reason
        self.skip = skip
        self.items: list[Message | _Acc] = []
        # thinking-only and empty-text records: dropped unless their id has other content
        self.thinking_only: list[tuple[int, str | None]] = []
        self.with_content: set[str] = set()
        self._floor = 0  # items before this index take no more records (flush)
        # for the live walk back in O(1) (an assistant record's home: walking back over
        # tool-result messages, API-error records and assistant messages of other ids to one
        # of its message.id): the newest assistant item per message.id, and the items the
        # walk cannot pass (a user message without results, a sent or malformed record),
        # oldest first
        self._by_mid: dict[str | None, int] = {}
        self._barriers: list[int] = []

    @property
    def out(self) -> list[Message]:
        msgs: list[Message] = []
        append = msgs.append
        lines, recs, hidden = self.file.lines, self.recs, self.hidden
        stamps, uuids = recs.ts, recs.uuid
        one, one_id = recs.one, recs.one_id
        why = self.reason if hidden else None
        # (a line's number is its place + 1: no line made to ask it)
        numbered = type(lines) is LineIndex and lines.numbers is None
        for item in self.items:
            if not isinstance(item, _Acc):
                append(item)  # (a message made as it was added)
                continue
            origin, parts = item.recs, item.parts
            idx = origin[0]
            # a hidden message is not paired: its tool ids are read from its blocks if asked
            if hidden:
                count, order, facts = 0, _AS_READ, _UNKNOWN
            elif len(parts) == 1:
                order = _AS_READ
                items = parts[0]
                kind = one[idx]
                count = len(items)
                facts = _one_facts(kind, one_id[idx]) if kind else _facts(items)
            else:
                count, order, facts = _merged(item, one, one_id)
            # (`LazyMessage.unmade` spelt out, with this class's own slots: no call and no
            # property setter for each of 100k messages; tests/formats/
            # test_claude_code_lazy.py compares them with the messages made at once)
            m: RecordMessage = _new(RecordMessage)
            m.role = item.role
            m._blocks = LAZY
            m._held = _LAZY
            m._meta = _DERIVED
            m.hidden = hidden
            m.malformed = None
            if numbered:
                m._src = LAZY
            else:
                lineno = lines[idx].lineno
                m._src = LAZY if lineno == idx + 1 else {"line": lineno}
            m._origin = tuple(origin)
            m.uid = new_uid()
            ids = m._tool_ids = facts[0]  # (None: not known, as `Message._tool_ids`)
            m._plain_shape = facts[1]
            # each tool_result is one answer, and only they are
            m._counts = None if ids is None else (count, len(ids[1]))
            m._lines = lines
            m.timestamp = _epoch(stamps[idx])
            uuid = uuids[idx]
            m._uuid = uuid if type(uuid) is str else None
            m._why = why
            m._parts = parts
            m._order = order
            append(m)
        return msgs

    def add(self, idx: int) -> None:
        self.add_all((idx,))

    def add_all(self, idxs: Iterable[int]) -> None:
        """`add` of each record in turn (a chain's records in one call: the usual record, one
        block joining the message before it or starting one, is read here, not in calls)."""
        recs, out, hidden, skip = self.recs, self.items, self.hidden, self.skip
        roles, items_of, api_error, mids, results, one = (
            recs.role,
            recs.items,
            recs.api_error,
            recs.mid,
            recs.results,
            recs.one,
        )
        by_mid, barriers = self._by_mid, self._barriers
        for idx in idxs:
            role = roles[idx]
            items = items_of[idx]
            if items is None:
                self.flush()
                self._single(idx, malformed=f"{role} record: {recs.bad[idx]}")
                self.flush()
                continue
            if not hidden and idx in api_error:
                self._single(
                    idx,
                    blocks=self._blocks(idx, items),
                    hidden="an API error record (Claude Code does not send it)",
                )
                continue
            home: _Acc | None
            if role == "assistant":
                mid = mids[idx]
                if hidden:  # records not sent: only neighbours of one message.id merge
                    last = out[-1] if len(out) > self._floor else None
                    home = (
                        last
                        if type(last) is _Acc
                        and last.role == role
                        and mid is not None
                        and last.mid == mid
                        else None
                    )
                else:
                    kind = one[idx]
                    drop = _DROP[kind] if kind else _resume_drop(items)
                    if drop == "blank" or idx in skip:
                        continue  # not sent: passes through like an attachment
                    if drop == "thinking" or drop == "empty":
                        self.thinking_only.append((idx, mid))
                    elif mid is not None:
                        self.with_content.add(mid)
                    # the newest assistant item of this id, unless a user message without
                    # results, a sent or malformed record or a flush comes after it
                    k = by_mid.get(mid)
                    if k is None or k < self._floor or (barriers and k < barriers[-1]):
                        home = None
                    else:
                        got = out[k]
                        home = got if type(got) is _Acc else None  # (by_mid: assistant items)
                if home is None:
                    out.append(_Acc(role, mid, [idx], [items]))
                    by_mid[mid] = len(out) - 1
                    continue  # (an assistant item holds no result: an assistant merge walks
                    # past user items only)
            else:
                last = out[-1] if len(out) > self._floor else None
                if type(last) is _Acc:  # `_user_home`, its usual first step
                    home = last if last.role == "user" else None
                else:
                    home = self._user_home()
                if home is None:
                    home = _Acc(role, None, [idx], [items])
                    out.append(home)
                    barriers.append(len(out) - 1)  # until it holds a result
                else:
                    home.recs.append(idx)
                    home.parts.append(items)
                    if home.results:
                        continue
                if results[idx]:
                    home.results = True
                    if barriers and out[barriers[-1]] is home:
                        # a user item takes records only while it is the newest (API-error
                        # records aside, which are no barrier), so it is the newest barrier
                        barriers.pop()
                continue
            home.recs.append(idx)
            home.parts.append(items)

    def _user_home(self) -> _Acc | None:
        items, hidden = self.items, self.hidden
        for k in range(len(items) - 1, self._floor - 1, -1):  # the items still taking records
            item = items[k]
            if isinstance(item, _Acc):
                return item if item.role == "user" else None
            if hidden or not item.hidden or item.malformed is not None:
                return None
        return None

    def orphan_thinking(self) -> frozenset[int]:
        return frozenset(i for i, mid in self.thinking_only if mid not in self.with_content)

    def _single(
        self,
        idx: int,
        blocks: Iterable[Block] = (),
        malformed: str | None = None,
        hidden: str | None = None,
    ) -> None:
        ln = self.file.lines[idx]
        obj = ln.obj
        role = obj.get("type") if type(obj) is dict else None
        m = Message(
            role=role if type(role) is str and role in MESSAGE_TYPES else None,
            blocks=tuple(blocks),
            # a line that is not JSON is its text: shown, and kept in the report if dropped
            raw=obj if ln.error is None else ln.raw.decode("utf-8", "replace"),
            meta=_meta(obj, hidden or (self.reason if self.hidden else None)),
            hidden=self.hidden or hidden is not None,
            malformed=malformed,
            src={"line": ln.lineno},
            origin=(idx,),
        )
        self.items.append(m)
        if not m.hidden or m.malformed is not None:
            self._barriers.append(len(self.items) - 1)

    def malformed_line(self, idx: int, reason: str) -> None:
        self.flush()
        self._single(idx, malformed=reason)
        self.flush()

    def flush(self) -> None:
        """The messages built so far take no more records."""
        self._floor = len(self.items)

    def _blocks(self, idx: int, items: Sequence[Any]) -> tuple[Block, ...]:
        return _blocks_of(items, idx, self.file.lines[idx].lineno)


def _meta(first: Any, hidden_reason: str | None) -> dict[str, Any]:
    if type(first) is not dict:
        return {}
    return _meta_of(first.get("timestamp"), first.get("uuid"), hidden_reason)


def _epoch(ts: Any) -> float | None:
    """A record's timestamp in epoch seconds (None: absent or not a date)."""
    if type(ts) is str:
        try:
            return datetime.fromisoformat(ts).timestamp()
        except (ValueError, OverflowError, OSError):
            pass
    return None


def _meta_of(ts: Any, u: Any, hidden_reason: str | None) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    t = _epoch(ts)
    if t is not None:
        meta["timestamp"] = t
    if type(u) is str:
        meta["uuid"] = u
    if hidden_reason:
        meta["hidden_reason"] = hidden_reason
    return meta


def build_view(
    file: CCFile,
    chain: list[str],
    hidden: list[tuple[int, str]],
    sidechain: bool = False,
    at: list[int] | None = None,
) -> View:
    """Messages of one conversation: the chain's messages, with the hidden/malformed lines
    (`hidden`: (line index, reason) in file order) placed by file position among them.
    `at`: the chain's lines, when known."""
    g = file.graph
    kind = g.kind
    if at is None:
        at = list(map(g.index.__getitem__, chain))
    idxs = [i for i in at if kind[i] in MESSAGE_TYPES] if g.glue else at
    live = _Builder(file)
    live.add_all(idxs)
    live.flush()
    orphans = live.orphan_thinking()
    if orphans:  # rare: build again without the thinking/empty records Claude Code drops
        live = _Builder(file, skip=orphans)
        live.add_all(idxs)
        live.flush()
    extra = _Builder(file, hidden=True)
    prev_reason = None
    for idx, reason in hidden:
        if reason.startswith("malformed:"):
            extra.malformed_line(idx, reason[len("malformed:") :].strip())
            prev_reason = None
            continue
        if reason != prev_reason:
            extra.flush()
            extra.reason = reason
            prev_reason = reason
        extra.add(idx)
    extra.flush()
    messages = _interleave(live.out, extra.out)
    view = View(file=file, chain=chain, messages=messages, sidechain=sidechain, lines=at)
    return view


def line_of(m: Message) -> int:
    """The file line a message of this loader starts on (each is given its `src` line)."""
    line: int = (m.src or {})["line"]
    return line


def _interleave(live: list[Message], extra: list[Message]) -> list[Message]:
    """Extras (hidden, malformed) go before the first live message that starts on a later
    line; the live order itself is never changed."""
    if not extra:
        return live
    out: list[Message] = []
    k = 0
    for m in live:
        line = line_of(m)
        while k < len(extra) and line_of(extra[k]) < line:
            out.append(extra[k])
            k += 1
        out.append(m)
    out.extend(extra[k:])
    return out
