"""Anthropic message lists, shared by the `anthropic` and `roo` adapters.

Both formats are a JSON list of `{role, content, ...}` (the anthropic adapter also reads a
request body `{model, messages, ...}`); Roo adds keys (`ts`, condense tags) and role-less
reasoning items. This module classifies such documents for detection, reads entries into
`Message`s (keeping the entry as `raw` and the loaded blocks as `origin`), and writes a
session back: untouched entries verbatim, edited ones with `content` rebuilt from the
blocks' data.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import compress, count
from operator import is_, is_not, itemgetter
from typing import TYPE_CHECKING, Any

import orjson

from ..files import Part, Spliced
from ..jsonio import JsonStyle, StyleRead, dumps, loads
from ..model import (
    TEXT,
    TOOL_RESULT,
    TOOL_USE,
    Block,
    LazyMessage,
    Message,
    Session,
    ToolIds,
    block_from_anthropic,
)
from ..place import Place
from .base import Edited, Probe, detect_sample, shown, type_name

if TYPE_CHECKING:
    from ..records import RecordChange

ROLES = ("user", "assistant")
# Block types only the Anthropic wire format has (OpenAI Chat has none of them).
ANTHROPIC_BLOCK_TYPES = frozenset(
    {TOOL_USE, TOOL_RESULT, "thinking", "redacted_thinking", "server_tool_use", "document"}
)
# Keys a Roo/Kilo/Cline history entry may carry and a plain Anthropic message never does.
ROO_ENTRY_KEYS = frozenset(
    {
        "ts",
        "isSummary",
        "condenseId",
        "condenseParent",
        "isTruncationMarker",
        "truncationId",
        "truncationParent",
        "modelInfo",
        "metrics",
        "reasoning_details",
        "reasoning_content",
    }
)
ROO_TEXT_PREFIXES = ("<task>", "<environment_details>", "<user_message>")
# Bedrock Converse content blocks: one of these keys and nothing else (no `type`).
CONVERSE_KEYS = frozenset(
    {
        "text",
        "image",
        "document",
        "video",
        "audio",
        "toolUse",
        "toolResult",
        "guardContent",
        "cachePoint",
        "reasoningContent",
        "citationsContent",
        "searchResult",
    }
)
# How many leading entries to look at for text markers (they sit in the first turns).
_TEXT_MARKER_SCAN = 20


# --------------------------------------------------------------------------------------
# Detection


@dataclass(slots=True)
class Shape:
    """What a JSON document holds, as far as the Anthropic-shaped list adapters care: their
    own evidence, and what their format has no place for."""

    container: str  # "list" | "body" (request body) | "v2" (Roo envelope) | "" (not ours)
    entries: list[Any] = field(default_factory=list)  # the message list (empty: not ours)
    plausible: bool = False  # mostly message-like entries
    anthropic_blocks: bool = False  # tool_use/tool_result/thinking... seen
    # a tool role, tool_calls or function_call: tool turns Anthropic writes as blocks instead
    foreign_tools: bool = False
    system_roles: bool = False  # system/developer role entries (Anthropic keeps system apart)
    roo_markers: bool = False
    request_keys: bool = False  # model/max_tokens/system/tools at the top of a body
    # content items of one key and no `type` ({"text": ...}, {"toolUse": ...}): not how an
    # Anthropic block is written
    keyed_blocks: bool = False


def classify(probe: Probe) -> Shape:
    """One linear pass over the document, once per probe: every list adapter asks."""
    return probe.derived(_shape)


def _shape(probe: Probe) -> Shape:
    return _classify(probe.doc)


def _classify(doc: Any) -> Shape:
    if isinstance(doc, list):
        shape = Shape("list", doc)
    elif isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        entries = doc["messages"]
        if doc.get("version") == 2 and "model" not in doc:
            shape = Shape("v2", entries)
        else:
            shape = Shape("body", entries)
            shape.request_keys = any(
                k in doc for k in ("model", "max_tokens", "system", "tools", "tool_choice")
            )
    else:
        return Shape("")
    if not shape.entries:
        return shape
    entries = detect_sample(shape.entries)
    good = 0
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            continue
        role = entry.get("role")
        if role is None:
            if entry.get("type") == "reasoning":
                good += 1
                shape.roo_markers = True
            continue
        good += 1
        if role in ("tool", "function") or "tool_calls" in entry or "function_call" in entry:
            shape.foreign_tools = True
        elif role in ("system", "developer"):
            shape.system_roles = True
        if not shape.roo_markers and not ROO_ENTRY_KEYS.isdisjoint(entry):
            shape.roo_markers = True
        content = entry.get("content")
        if isinstance(content, list):
            for item in content:
                if isinstance(item, dict):
                    t = item.get("type")
                    if isinstance(t, str) and t in ANTHROPIC_BLOCK_TYPES:
                        shape.anthropic_blocks = True
                    elif t is None and converse_key(item) is not None:
                        shape.keyed_blocks = True
                    elif (
                        not shape.roo_markers
                        and i < _TEXT_MARKER_SCAN
                        and t == "text"
                        and _roo_text(item.get("text"))
                    ):
                        shape.roo_markers = True
        elif i < _TEXT_MARKER_SCAN and not shape.roo_markers and _roo_text(content):
            shape.roo_markers = True
    shape.plausible = good * 2 >= len(entries)
    return shape


def converse_key(item: Any) -> str | None:
    """The block type of a Bedrock Converse content block, None when `item` is not one."""
    if isinstance(item, dict) and len(item) == 1 and "type" not in item:
        key: str = next(iter(item))
        if key in CONVERSE_KEYS:
            return key
    return None


def _roo_text(text: Any) -> bool:
    return isinstance(text, str) and text.lstrip().startswith(ROO_TEXT_PREFIXES)


# --------------------------------------------------------------------------------------
# Loading


def block_from_dict(item: dict[str, Any], path: str, origin: Any = None) -> Block:
    """A Block for an Anthropic-shaped content item located at JSON pointer `path`."""
    return block_from_anthropic(item, {"path": path}, origin)


def content_problem(content: Any) -> str | None:
    """Why `content` is not a string or a list of typed blocks (None when it is)."""
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return f"content is {type_name(content)}"
    for k, item in enumerate(content):
        if not isinstance(item, dict):
            return f"content[{k}] is {type_name(item)}, not a block"
        if not isinstance(item.get("type"), str):
            return f"content[{k}] has no type"
    return None


def blocks_from_content(content: str | list[Any], path: str) -> tuple[Block, ...]:
    if isinstance(content, str):
        return (Block(type="text", data=content, src={"path": f"{path}/content"}),)
    items = f"{path}/content/"
    blocks = tuple(block_from_anthropic(item) for item in content)
    for k, block in enumerate(blocks):
        block.at = (items, k)
    return blocks


def entry_problem(entry: Any) -> str | None:
    """Why a list entry cannot be read as a message; None when it can."""
    if not isinstance(entry, dict):
        return f"entry is {type_name(entry)}, not a message object"
    role = entry.get("role")
    if role is None:
        return "no role"
    if role not in ROLES:
        return f"role {shown(role)} is not user or assistant"
    if "content" not in entry:
        return "no content"
    return content_problem(entry["content"])


def is_reasoning_item(entry: Any) -> bool:
    """Roo's legacy standalone reasoning item: `type: "reasoning"` and no role."""
    return isinstance(entry, dict) and "role" not in entry and entry.get("type") == "reasoning"


def reasoning_message(entry: dict[str, Any], path: str) -> Message:
    """A role-less reasoning item: shown, never sent as a message of its own."""
    block = Block(type="reasoning", data=entry, src={"path": path})
    blocks = (block,)
    return Message(
        role=None,
        blocks=blocks,
        raw=entry,
        hidden=True,
        src={"path": path},
        origin=blocks,
        meta={"hidden_reason": "standalone reasoning item"},
    )


def message_from_entry(entry: Any, path: str) -> Message:
    """One list entry -> Message (malformed when it cannot be read). `origin` holds the
    loaded blocks, so `dump` can tell an untouched message from an edited one."""
    if is_reasoning_item(entry):
        return reasoning_message(entry, path)
    problem = entry_problem(entry)
    if problem is not None:
        role = entry.get("role") if isinstance(entry, dict) else None
        return Message(
            role=role if isinstance(role, str) else None,
            blocks=(),
            raw=entry,
            malformed=problem,
            src={"path": path},
            origin=(),
        )
    blocks = blocks_from_content(entry["content"], path)
    return Message(role=entry["role"], blocks=blocks, raw=entry, src={"path": path}, origin=blocks)


class EntryMessage(LazyMessage):
    """A well-formed list entry whose content is a list of typed blocks (`LazyMessage`):
    the loader reads what a check needs from the content as it checks it, the tool ids
    (`tool_ids`) and whether the shape rules need to look (`plain_shape`).

    Equal to `message_from_entry` of the same entry once made (tests/formats/
    test_entry_messages.py)."""

    __slots__ = ("_path",)
    # its JSON pointer; an int n: entry n of a list that is the document (`/n`, the string
    # made when asked for: a loader need not make one for each of 100k entries)
    _path: str | int

    def _pointer(self) -> str:
        path = self._path
        return path if type(path) is str else f"/{path}"

    def _make_blocks(self) -> tuple[Block, ...]:
        return _blocks_of_list(self.raw["content"], self._pointer())

    def _make_src(self) -> dict[str, Any] | None:
        return {"path": self._pointer()}


def messages_from_entries(entries: list[Any], prefix: str) -> list[Message]:
    """`message_from_entry` for each entry, in one pass over a well-formed entry and its
    content (the checks folded into reading its tool ids and shape: `EntryMessage`);
    anything unusual goes the long way, which says what is wrong (Roo's reader:
    roo/load.py)."""
    out: list[Message] = []
    append = out.append
    unmade = EntryMessage.unmade
    for n, entry in enumerate(entries):
        path = f"{prefix}/{n}"
        m: Message | None = None
        if type(entry) is dict:
            role = entry.get("role")
            if role == "user" or role == "assistant":
                content = entry.get("content")
                if isinstance(content, list):
                    facts = _facts_of_list(content)
                    if facts is not None:
                        made: EntryMessage = unmade(role, entry, facts, False)
                        made._path = path
                        m = made
                elif isinstance(content, str):
                    blocks = (Block(TEXT, content, src={"path": f"{path}/content"}),)
                    m = Message(role, blocks, entry, src={"path": path}, origin=blocks)
        if m is None:
            m = message_from_entry(entry, path)
        append(m)
    return out


def _facts_of_list(content: list[Any]) -> tuple[ToolIds, bool] | None:
    """What `_blocks_of_list` would make of a list whose items are all typed blocks (None
    otherwise), as the analysis reads it: the blocks' `tool_ids` and `plain_shape` (text
    blocks have no tool id yet: Cline's text results get one after, which only makes fewer
    blocks stand before a result)."""
    # (lists, not tuples grown by `+=`: a message of 100k blocks is read in linear time)
    calls: list[str | None] = []
    answers: list[str | None] = []
    plain = bool(content)
    other = False  # a block that is not a tool_result came before
    for item in content:
        if type(item) is not dict:
            return None
        btype = item.get("type")
        if btype == TOOL_RESULT:
            tid = item.get("tool_use_id")
            answers.append(tid if isinstance(tid, str) else None)
            if other:
                plain = False
            continue
        if btype == TOOL_USE:
            tid = item.get("id")
            calls.append(tid if isinstance(tid, str) else None)
        elif btype == TEXT:
            text = item.get("text")
            if type(text) is not str or not text or text.isspace():
                plain = False
        elif not isinstance(btype, str):
            return None
        other = True
    return (tuple(calls), tuple(answers)), plain


def _blocks_of_list(content: list[Any], path: str) -> tuple[Block, ...]:
    """`blocks_from_content` of a list whose items are all typed blocks (`_facts_of_list`
    said so)."""
    blocks: list[Block] = []
    append = blocks.append
    items = f"{path}/content/"  # the blocks' places: this and their index (Block.at)
    for k, item in enumerate(content):
        btype = item["type"]
        at = (items, k)
        if btype == TOOL_USE:
            tid, name = item.get("id"), item.get("name")
            append(
                Block(
                    TOOL_USE,
                    item,
                    tid if isinstance(tid, str) else None,
                    name if isinstance(name, str) else None,
                    False,
                    None,
                    None,
                    at,
                )
            )
        elif btype == TOOL_RESULT:
            tid = item.get("tool_use_id")
            append(
                Block(
                    TOOL_RESULT,
                    item,
                    tid if isinstance(tid, str) else None,
                    None,
                    item.get("is_error") is True,
                    None,
                    None,
                    at,
                )
            )
        else:
            append(Block(btype, item, None, None, False, None, None, at))
    return tuple(blocks)


# --------------------------------------------------------------------------------------
# Writing back


@dataclass(slots=True)
class DocState:
    """What `dump` needs besides the messages: the original bytes and document."""

    data: bytes
    doc: Any
    container: str  # "list" | "body" | "v2"
    loaded: tuple[Message, ...]
    tags: Any = None  # Roo: the condense and truncation tags in effect (roo.meta.roo_tags)
    # the document read writes back to the very bytes read (`jsonio.reads_exactly`), where
    # a writer found out as it wrote (None: not known)
    exact: bool | None = None
    # `runs` of the message list asked last: (the list, its runs)
    _runs: tuple[list[Message], list[tuple[int, int, int]]] | None = None
    _where: dict[int, int] | None = None  # id of a message as loaded -> its index
    # what `write_runs` wrote last: (the message list, the entries it built by position,
    # the bytes it wrote for each of those, the length of all it wrote)
    _written: tuple[list[Message], dict[int, Any], dict[int, memoryview], int] | None = None
    _style: JsonStyle | None = None  # `style`, read when first asked for (a check writes none)

    style = StyleRead()

    def runs(self, messages: list[Message]) -> list[tuple[int, int, int]]:
        """The stretches of `messages` that are stretches of the messages as loaded (the
        same objects in the same order), longest first found from the start: (position,
        index in `loaded`, length), in order; every other message was made or edited
        (tests/formats/test_entry_runs.py). An edit replaces, inserts or drops messages,
        never reorders them: a step costs what it changed, not the length of the list."""
        got = self._runs
        if got is None or got[0] is not messages:
            runs = _aligned_runs(messages, self.loaded)
            if runs is None:
                where = self._where
                if where is None:
                    where = self._where = {id(m): k for k, m in enumerate(self.loaded)}
                runs = _runs(messages, self.loaded, where)
            got = self._runs = (messages, runs)
        return got[1]

    def written(
        self, messages: list[Message], data: bytes | Spliced | None
    ) -> tuple[dict[int, Any], dict[int, memoryview]] | None:
        """Where `data` is what `write_runs` wrote of `messages`: the entries it built (by
        position: every message not as loaded) and the bytes it wrote for each; None
        otherwise."""
        got = self._written
        if got is None or got[0] is not messages or data is None or len(data) != got[3]:
            return None
        return got[1], got[2]


def _runs(
    messages: list[Message], loaded: tuple[Message, ...], where: dict[int, int]
) -> list[tuple[int, int, int]]:
    out: list[tuple[int, int, int]] = []
    n, p = len(messages), 0
    while p < n:
        k = where.get(id(messages[p]))
        if k is None:
            p += 1
            continue
        length = _same_from(messages, p, loaded, k)
        out.append((p, k, length))
        p += length
    return out


def _aligned_runs(
    messages: list[Message], loaded: tuple[Message, ...]
) -> list[tuple[int, int, int]] | None:
    """`_runs` where no message came or went: each message that is not the one loaded at
    its place is an edited copy of it (the same uid: an edit keeps it, and no other
    message as loaded has it), so the runs are the stretches between those, found in one
    pass in C (no index of the messages as loaded); None where that does not hold."""
    if len(messages) != len(loaded):
        return None
    out: list[tuple[int, int, int]] = []
    p = 0
    for d in compress(count(), map(is_not, messages, loaded)):
        if messages[d].uid != loaded[d].uid:
            return None
        if d > p:
            out.append((p, p, d - p))
        p = d + 1
    if p < len(messages):
        out.append((p, p, len(messages) - p))
    return out


def _same_from(a: list[Message], i: int, b: tuple[Message, ...], j: int) -> int:
    """How many of a[i:] are b[j:] (the same objects), compared a stretch at a time (each
    twice as long as the one before), the last one in halves."""
    limit = min(len(a) - i, len(b) - j)
    got, size = 0, 16
    while got < limit:
        size = min(size, limit - got)
        if all(map(is_, a[i + got : i + got + size], b[j + got : j + got + size])):
            got += size
            size *= 2
            continue
        if size == 1:
            break
        size //= 2
    return got


def make_state(probe: Probe, container: str, messages: list[Message]) -> DocState:
    return DocState(
        data=probe.data,
        doc=probe.doc,
        container=container,
        loaded=tuple(messages),
    )


def untouched(msg: Message) -> bool:
    """An entry whose blocks are the loaded ones (same objects, same order)."""
    if isinstance(msg, EntryMessage) and not msg.made():
        return True
    return msg.raw is not None and isinstance(msg.origin, tuple) and msg.blocks == msg.origin


def block_json(block: Block) -> Any:
    """The content item to write for a block (string content becomes a text block)."""
    if isinstance(block.data, str):
        return {"type": "text", "text": block.data}
    return block.data


def encode_content(msg: Message) -> str | list[Any]:
    blocks = msg.blocks
    if len(blocks) == 1 and isinstance(blocks[0].data, str):
        return blocks[0].data
    return [block_json(b) for b in blocks]


def encode_entry(msg: Message, new_extra: dict[str, Any] | None = None) -> Any:
    """The list entry for a message: the raw entry when untouched (and for hidden or
    malformed records), a copy with `content` replaced when edited, a fresh
    `{role, content}` (plus `new_extra`) for a message histview created."""
    if msg.malformed is not None:  # written back as read (a null entry too)
        return msg.raw
    if msg.raw is None:
        entry = {"role": msg.role, "content": encode_content(msg)}
        if new_extra:
            entry.update(new_extra)
        return entry
    if untouched(msg) or not isinstance(msg.raw, dict):
        return msg.raw
    if msg.role is None:  # a role-less reasoning item: nothing to rebuild
        return msg.raw
    entry = dict(msg.raw)
    entry["content"] = encode_content(msg)
    return entry


def copied(msg: Message) -> bool:
    """The message's entry is written as it was read (`encode_entry` gives back `raw`)."""
    if msg.raw is None:
        return False
    return (
        msg.malformed is not None
        or msg.role is None
        or not isinstance(msg.raw, dict)
        or untouched(msg)
    )


def written_anew(session: Session) -> list[int]:
    """The positions whose entry the writer builds (a new or rebuilt message); every other
    entry is written as it was read."""
    msgs = session.messages
    return [p for p in not_loaded(session) if not copied(msgs[p])]


def not_loaded(session: Session) -> list[int]:
    """The positions of the messages that are not the messages as loaded."""
    out: list[int] = []
    p = 0
    for start, _, length in session.state.runs(session.messages):
        out += range(p, start)
        p = start + length
    out += range(p, len(session.messages))
    return out


def left_out(session: Session) -> list[int]:
    """The indices (in the messages as loaded) of those the session no longer holds:
    dropped, or replaced by an edit."""
    out: list[int] = []
    k = 0
    for _, start, length in sorted(session.state.runs(session.messages), key=itemgetter(1)):
        out += range(k, start)
        k = max(k, start + length)
    out += range(k, len(session.state.loaded))
    return out


def to_read_again(session: Session, fresh: list[int]) -> list[int]:
    """The positions written anew (`fresh`) and those that follow a message that was not
    their neighbour in the file read (one was dropped or put between): what a message
    reads as may depend on the one before it."""
    out = set(not_loaded(session))
    # (runs are as long as they go: the first message of each follows another than in the
    # file read, or none)
    out.update(start for start, _, _ in session.state.runs(session.messages))
    out.discard(0)
    out.update(fresh)
    return sorted(out)


def read_back_entries(
    session: Session,
    positions: list[int],
    entry_at: Callable[[list[Message], int], Any],
    reload: Callable[[list[Message], list[Any]], None] | None = None,
    data: bytes | Spliced | None = None,
) -> Edited | None:
    """The entries a list or request body writes anew and those after a seam (`positions`:
    `to_read_again`), each read again from the bytes written (where `data` is what
    `write_runs` wrote: `DocState.written`) or else encoded as the writer encodes it and read
    again, with the messages around them that read differently when a neighbour changes (a
    Cline text result answers the call of the assistant message before it).
    `entry_at(messages, k)` is the writer's entry for message k; `reload(messages,
    entries)` finishes messages read from those entries (Roo's keys). Untouched entries
    are the very values that were read: they load as they did. None when an entry does
    not read back (the whole file is read back then, and refused)."""
    state = session.state
    if not isinstance(state, DocState) or state.container not in ("list", "body"):
        return None
    msgs = session.messages
    got = state.written(msgs, data)
    made = got[1] if got is not None else None
    prefix = "" if state.container == "list" else "/messages"
    # ranges [lo, hi]: a fresh message with the role-bearing messages either side of it
    ranges: list[list[int]] = []
    for p in positions:
        lo, hi = _neighbour(msgs, p, -1), _neighbour(msgs, p, 1)
        if ranges and lo <= ranges[-1][1] + 1:
            ranges[-1][1] = max(ranges[-1][1], hi)
        else:
            ranges.append([lo, hi])
    fresh_set = set(positions)
    style = dataclasses.replace(state.style, trailing_newline=False, bom=False)
    out: dict[int, Message] = {}
    for lo, hi in ranges:
        part: list[Message] = []
        entries: list[Any] = []
        for p in range(lo, hi + 1):
            piece = made.get(p) if made is not None else None
            try:
                if piece is not None:  # (as written: every entry written anew)
                    again = loads(bytes(piece))
                elif made is not None:  # an entry as read, in a run written as read
                    again = entry_at(msgs, p)
                else:
                    again = loads(dumps(entry_at(msgs, p), style))
            except (ValueError, RecursionError):
                return None
            entries.append(again)
            part.append(message_from_entry(again, f"{prefix}/{p}"))
        if reload is not None:
            reload(part, entries)
        for p, m in zip(range(lo, hi + 1), part, strict=True):
            # the first of a range only gives its neighbour context (unless written anew):
            # what it reads as depends on the message before it, outside the range
            if p != lo or p in fresh_set:
                out[p] = m
    n = len(prefix) + 1

    def moved(place: Place, position: int) -> Place:
        path = place.pointer
        if path is None or not path.startswith(prefix + "/"):
            return place
        rest = path[n:]
        cut = rest.find("/")
        pointer = f"{prefix}/{position}" + (rest[cut:] if cut >= 0 else "")
        return dataclasses.replace(place, pointer=pointer)

    return Edited(out, moved)


def _neighbour(msgs: list[Message], p: int, step: int) -> int:
    """The nearest message with a role from p on in `step`'s direction (Roo's role-less
    reasoning items sit between turns), else the last one looked at."""
    q = p + step
    while 0 <= q < len(msgs):
        if msgs[q].role is not None or msgs[q].malformed is not None:
            return q
        q += step
    return max(0, min(q, len(msgs) - 1))


def write_document(state: DocState, entries: list[Any]) -> bytes:
    if state.container == "list":
        doc: Any = entries
    else:
        doc = dict(state.doc)
        doc["messages"] = entries
    return dumps(doc, state.style)


def write_runs(state: DocState, messages: list[Message], built: dict[int, Any]) -> Spliced | None:
    """`write_document` of a list whose messages as loaded are written as their entries
    were read (`DocState.runs`) and the others as `built` (position -> entry), where orjson
    writes the document on one line with its own separators: each run's entries are
    encoded a few at a time, as slices of the list read (the very bytes a whole encoding
    gives them), and compared in place with the bytes read: a run is written as the bytes
    read where they are its encoding (`_run_parts`), and nothing is joined (a `Spliced` of
    the bytes read). None: write the whole document. The encodings, with those of the
    entries read that are not written, also tell whether the document read writes back to
    the bytes read (`DocState.exact`: what `check_numbers` asks, at no second encoding of
    the whole)."""
    style = state.style
    if state.container != "list" or (
        style.indent,
        style.item_sep,
        style.key_sep,
        style.ensure_ascii,
    ) != (None, ",", ":", False):
        return None  # (orjson's own way: no indent, no spaces, no escapes)
    runs = state.runs(messages)
    head, tail = dumps([], state.style).split(b"[]")
    head, tail = head + b"[", b"]" + tail
    made: dict[int, memoryview] = {}  # the encoding of each entry built
    parts: list[Part] = []
    try:
        by_run, exact = _run_parts(state.data, state.doc, [(k, n) for _, k, n in runs], head, tail)
        p = 0
        for (start, _, length), run in zip(runs, by_run, strict=True):
            parts += (_made(made, q, built[q]) for q in range(p, start))
            parts += run
            p = start + length
        parts += (_made(made, q, built[q]) for q in range(p, len(messages)))
    except _Unwritable:
        return None
    if exact and state.exact is None:
        state.exact = True
    out = Spliced(state.data, parts, b",", head, tail)
    state._written = (messages, built, made, len(out))
    return out


class _Unwritable(Exception):
    """orjson cannot write an entry (the whole document is then written the long way)."""


def _made(made: dict[int, memoryview], q: int, entry: Any) -> memoryview:
    piece = _items([entry])
    if piece is None:
        raise _Unwritable
    made[q] = piece
    return piece


# Entries encoded at once where a run is compared with the bytes read: each encoding is
# dropped once compared, and its memory used again (an encoding of the whole 89 MB takes
# fresh pages from the kernel, and a join of it more: 0.1 s of system time).
_AT_ONCE = 256


def _run_parts(
    data: bytes, entries: list[Any], runs: list[tuple[int, int]], head: bytes, tail: bytes
) -> tuple[list[list[Part]], bool]:
    """What writes each run of the entries read (`runs`: index read, count) on one line:
    the stretch (start, stop) of `data` that holds its encoding, else the encodings (a few
    entries each, to be joined by commas), from where they differ; and whether the
    entries read, written on one line between `head` and `tail`, are `data` (the runs, and
    the entries between them, compared in place in the order read)."""
    at: int | None = len(head) if data.startswith(head) else None  # None: out of step
    out: dict[int, list[Part]] = {}
    k = 0
    for n, (start, length) in sorted(enumerate(runs), key=lambda r: r[1][0]):
        if start < k:
            at = None  # (an entry written twice)
        if start > k:  # entries read and not written: only compared
            at = _compared(data, entries, k, start, at, len(head), None)
        parts: list[Part] = []
        out[n] = parts
        at = _compared(data, entries, start, start + length, at, len(head), parts)
        k = max(k, start + length)
    if k < len(entries):
        at = _compared(data, entries, k, len(entries), at, len(head), None)
    exact = at is not None and data[at:] == tail
    return [out[n] for n in range(len(runs))], exact


def _compared(
    data: bytes,
    entries: list[Any],
    lo: int,
    hi: int,
    at: int | None,
    origin: int,
    parts: list[Part] | None,
) -> int | None:
    """Entries lo..hi-1 encoded a few at a time and compared with `data` from `at` on (the
    end of the entry before them; `origin`: the list's start, with no comma before the
    first): where they end in `data`, or None, out of step (they differ, or were already).
    `parts` (to write them): the stretch of `data` they match, then the encodings from
    where they differ; _Unwritable where orjson cannot write them."""
    begin = at if at == origin else None if at is None else at + 1
    for a in range(lo, hi, _AT_ONCE):
        if at is None and parts is None:
            return None
        piece = _items(entries[a : min(a + _AT_ONCE, hi)])
        if piece is None and parts is not None:
            raise _Unwritable
        if at is not None:
            start = at if at == origin else at + 1
            if (
                piece is not None
                and (start == at or data[at:start] == b",")
                and data.startswith(piece, start)
            ):
                at = start + len(piece)
                continue
            if parts is not None and a > lo:
                parts.append((begin, at))  # type: ignore[arg-type]
            at = None
        if parts is not None:
            parts.append(piece)  # type: ignore[arg-type]
    if parts is not None and at is not None and hi > lo:
        parts.append((begin, at))  # type: ignore[arg-type]
    return at


def _items(entries: list[Any]) -> memoryview | None:
    """The entries as a list on one line writes them, without the brackets (a view);
    None where orjson cannot write them."""
    try:
        return memoryview(orjson.dumps(entries))[1:-1]
    except (TypeError, orjson.JSONEncodeError):
        return None


def record_changes(before: Session, after: Session) -> list[RecordChange]:
    """The entries `after` writes differently from `before` (one entry per message)."""
    from ..records import entry_changes

    prefix = "" if before.state.container == "list" else "/messages"
    return entry_changes(before.messages, after.messages, _entry_at, prefix)


def _entry_at(messages: list[Message], k: int) -> Any:
    return encode_entry(messages[k])
