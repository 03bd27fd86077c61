"""OpenAI Chat Completions conversations: a JSON list of messages, a request body
`{model, messages, tools, ...}`, or JSONL whose lines are `{messages, ...}` records (fine-tuning
data, request logs). In JSONL each record is its own conversation: the first record is the
session, every further record a thread of its own (checked separately).

Normal form: assistant `tool_calls[]` become `tool_use` blocks (after a text block for
non-empty `content`); a run of consecutive `role: "tool"` messages becomes ONE user message of
`tool_result` blocks (each block's origin is its tool message); `system`/`developer` messages
are hidden rows (not checked). So a user message between the calls and the tool messages is a
misplaced result, as OpenAI rejects it.

Export writes each user-side message as its tool messages (one per `tool_result`, in order)
followed by one user message for its other blocks; messages nobody touched are written as
they were, and the document keeps its JSON style (JSONL: untouched lines keep their bytes).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

from ..errors import ExportRefused, InputError
from ..jsonio import JsonStyle, compact, detect_style, dumps, exact_numbers, loads, numbers_as_read
from ..model import (
    LAZY,
    TEXT,
    TIMED_META,
    TOOL_RESULT,
    TOOL_USE,
    Block,
    LazyMessage,
    Message,
    Session,
    ToolIds,
    new_uid,
)
from .base import (
    Adapter,
    Export,
    JsonlLine,
    Probe,
    detect_sample,
    own_type,
    same_messages,
    shown,
    type_name,
)
from .registry import register
from .regroup import Rules, Runs, own, regrouped, results_with_text

HIDDEN_ROLES = frozenset({"system", "developer"})
ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking"})
# Tool calls and results written as content parts: OpenAI Chat has none (its calls are an
# assistant's `tool_calls`, its results `tool` messages).
TOOL_PARTS = frozenset({"tool-call", "tool-result"})
STRONG = 70  # tool_calls / tool messages with tool_call_id, no Anthropic blocks
HYBRID = 30  # both dialects in one list (LiteLLM-style): Anthropic's adapter scores higher
WEAK = 20  # system/developer entries only (Anthropic keeps `system` outside the list)
PLAIN = 1  # user/assistant text only: valid OpenAI Chat, but Anthropic's reading comes first


# The origins are not frozen dataclasses (a frozen one costs twice as much to make, and one
# is made per message and per call); nothing changes or compares them.
@dataclass(slots=True, eq=False)
class At:
    """Where a block came from: message index in its list, and the tool call index."""

    msg: int
    call: int | None = None


@dataclass(frozen=True, slots=True)
class BadLine:
    """Origin of a JSONL line that is not a `{messages}` record."""

    line: int


@dataclass(slots=True, eq=False)
class ToolRun:
    """Origin of the user message made of consecutive tool messages."""

    msgs: tuple[int, ...]


@dataclass
class Conversation:
    """One messages list, as loaded."""

    entries: list[Any]
    base: str  # JSON pointer prefix of the list ("" or "/messages")
    lineno: int | None  # JSONL line of the record
    items: str = field(init=False)  # base + "/": a block's `at` in a JSON document
    loaded: list[Message] = field(default_factory=list)  # as `_load_conversation` read them
    _message_at: dict[int, Message] | None = field(default=None, init=False, repr=False)
    # the load's `exact_numbers()`: a call's arguments parsed later are parsed as at load
    exact: bool = field(default_factory=exact_numbers, init=False, repr=False)

    def __post_init__(self) -> None:
        self.items = f"{self.base}/"

    @property
    def message_at(self) -> dict[int, Message]:
        """Entry index -> the message read from that entry alone (not a run of tool
        messages), made when first asked for (the writer) from the messages loaded."""
        got = self._message_at
        if got is None:
            got = self._message_at = {}
            for m in self.loaded:
                if type(m) is ChatMessage:
                    if m._end is None:
                        got[m._i] = m
                elif isinstance(m.origin, At):
                    got[m.origin.msg] = m
        return got


@dataclass
class ChatFile:
    """The file as read, shared by the conversations of a JSONL file."""

    kind: str  # "json" | "jsonl"
    data: bytes
    doc: Any = None
    style: JsonStyle | None = None  # a JSON document's: read when first written (`write`)
    lines: Sequence[JsonlLine] = field(default_factory=list)
    newline: str = "\n"
    trailing_newline: bool = True
    bom: bool = False
    convs: list[Conversation] = field(default_factory=list)  # in file order
    conv_of_line: dict[int, int] = field(default_factory=dict)  # line index -> index in convs
    bad_lines: dict[int, Message] = field(default_factory=dict)  # line index -> malformed row


@dataclass
class ChatState:
    """`Session.state`: the file and which of its conversations this session is."""

    file: ChatFile
    conv: Conversation


# -------------------------------------------------------------------- detection


def _score_list(entries: Any) -> int:
    if not isinstance(entries, list) or not entries:
        return 0
    entries = detect_sample(entries)
    dicts = [e for e in entries if isinstance(e, dict)]
    if len(dicts) * 2 < len(entries) or sum("role" in e for e in dicts) * 2 < len(dicts):
        return 0
    strong = weak = anthropic = False
    for e in dicts:
        role = e.get("role")
        if role == "assistant" and (isinstance(e.get("tool_calls"), list) or "function_call" in e):
            strong = True
        elif role in ("tool", "function"):
            strong = True
        elif isinstance(role, str) and role in HIDDEN_ROLES:
            weak = True
        content = e.get("content")
        types = _part_types(content)
        if not TOOL_PARTS.isdisjoint(types):
            return 0  # calls or results as content parts: not how OpenAI Chat writes them
        if not ANTHROPIC_BLOCKS.isdisjoint(types):
            anthropic = True
    if strong:
        return HYBRID if anthropic else STRONG
    if anthropic:
        return 0
    # `--format openai-chat` (and fix reading back what it wrote) works on a plain list too
    return WEAK if weak else PLAIN


def _part_types(content: Any) -> set[str]:
    if not isinstance(content, list):
        return set()
    return {p["type"] for p in content if isinstance(p, dict) and isinstance(p.get("type"), str)}


def _conversation_list(doc: Any) -> tuple[list[Any], str] | None:
    if isinstance(doc, list):
        return doc, ""
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        return doc["messages"], "/messages"
    return None


class OpenAIChatAdapter(Adapter):
    name = "openai-chat"
    default_target = "openai-chat"

    def detect(self, probe: Probe) -> int:
        if probe.kind == "json":
            found = _conversation_list(probe.doc)
            return _score_list(found[0]) if found else 0
        records = [ln.obj for ln in probe.lines[:50] if ln.error is None and not ln.blank]
        if not records or not all(
            isinstance(r, dict) and isinstance(r.get("messages"), list) for r in records
        ):
            return 0
        best = max(_score_list(r["messages"]) for r in records)
        if best > PLAIN:
            return best
        # plain user/assistant fine-tuning records: nobody else reads JSONL of {messages}
        return WEAK if any(r["messages"] for r in records) else 0

    # ---------------------------------------------------------------- load
    def load(self, probe: Probe) -> Session:
        if probe.kind == "json":
            found = _conversation_list(probe.doc)
            if found is None:
                raise InputError(probe.given, "not an OpenAI chat document: no messages list")
            file = ChatFile(kind="json", data=probe.data, doc=probe.doc)
            return self._session(probe, file, Conversation(found[0], found[1], None))
        file = ChatFile(
            kind="jsonl",
            data=probe.data,
            lines=probe.lines,
            newline=probe.newline,
            trailing_newline=probe.trailing_newline,
            bom=probe.bom,
        )
        sessions: list[Session] = []
        pending_bad: list[Message] = []
        for idx, line in enumerate(probe.lines):
            if line.blank:
                continue
            rec = line.obj
            if (
                line.error is None
                and isinstance(rec, dict)
                and isinstance(rec.get("messages"), list)
            ):
                file.conv_of_line[idx] = len(sessions)
                s = self._session(
                    probe, file, Conversation(rec["messages"], "/messages", line.lineno)
                )
                s.label = f"line {line.lineno}"
                sessions.append(s)
                continue
            why = (
                f"line {line.lineno} is not JSON: {line.error}"
                if line.error is not None
                else "the record has no messages list"
            )
            bad = Message(
                role=None,
                blocks=(),
                raw=rec if line.error is None else line.raw.decode("utf-8", "replace"),
                malformed=why,
                src={"line": line.lineno},
                origin=BadLine(idx),
            )
            file.bad_lines[idx] = bad
            # shown (and reported) in the conversation it follows
            (sessions[-1].messages if sessions else pending_bad).append(bad)
        if not sessions:
            raise InputError(probe.given, "no line holds a {messages: [...]} record")
        main = sessions[0]
        main.messages[:0] = pending_bad
        main.threads = sessions[1:]
        return main

    def _session(self, probe: Probe, file: ChatFile, conv: Conversation) -> Session:
        messages = _load_conversation(conv)
        file.convs.append(conv)
        return self.session(probe.path, messages, ChatState(file, conv))

    def kept_apart(self, first: Message, second: Message) -> str | None:
        if results_with_text(first, second, RESULT_TYPES):
            return (
                "OpenAI chat writes tool results as `tool` messages of their own, and the "
                "user's text as a user message after them: the file holds them as two messages"
            )
        return None

    def stamped(self, session: Session, made: Collection[int]) -> Session:
        """The messages around those a fix made, grouped as the written conversation reads
        back (`regroup`): a user message's results are its `tool` messages, before its
        other blocks' user message, and `tool` messages in a row are one message."""
        state = session.state
        if not isinstance(state, ChatState):
            return session
        conv = state.conv
        rules = replace(_RULES, part=lambda part, _whole: _results_part(part, conv))
        return regrouped(session, made, rules)

    # ---------------------------------------------------------------- write
    def original_bytes(self, session: Session) -> bytes | None:
        """A JSONL file's conversations are written together (each unchanged line as read)."""
        state: ChatState = session.state
        if state.file.kind == "jsonl" or not same_messages(session.messages, state.conv.loaded):
            return None
        return state.file.data

    def write(self, session: Session) -> Export:
        """The bytes, and the empty user messages the written file leaves out (one that got
        a result is written as its tool message alone), whole as read, for the report."""
        state: ChatState = session.state
        file = state.file
        dropped: list[dict[str, Any]] = []
        if file.kind == "jsonl":
            return Export(_dump_jsonl(session, file, dropped), dropped)
        conv = state.conv
        new_list = _write_conversation(session.messages, conv, dropped)
        doc = file.doc
        doc = new_list if isinstance(doc, list) else {**doc, "messages": new_list}
        if file.style is None:  # a JSON document's, read from its bytes when first written
            file.style = detect_style(file.data)
        return Export(dumps(doc, file.style), dropped)


# -------------------------------------------------------------------- loading


class ChatMessage(LazyMessage):
    """An entry read the usual way, or a run of usual tool messages (`_end`: the entry
    after it), whose blocks are made when first asked for (`LazyMessage`): the loader
    reads its tool ids, plain shape and block counts from the entries; its origin (`At`,
    `ToolRun`) is made when first asked for too, and its `meta` (a chat entry has no time:
    `timestamp` is None, `model.TIMED_META`). Equal to what `_load_entry` makes of the
    same entries once made (tests/formats/test_chat_lazy.py)."""

    __slots__ = ("_conv", "_i", "_end", "timestamp", "_meta")
    _conv: Conversation
    _i: int
    _end: int | None
    timestamp: float | None
    _meta: Any
    meta = TIMED_META

    def _make_blocks(self) -> tuple[Block, ...]:
        conv, i, end = self._conv, self._i, self._end
        entries = conv.entries
        with numbers_as_read(conv.exact):
            if end is None:
                made = _load_entry(conv, i, entries[i], self.origin)
                assert isinstance(made, Message)
                return made.blocks
            return tuple(_run_block(conv, j, entries[j]) for j in range(i, end))

    def _make_src(self) -> dict[str, Any] | None:
        return _src(self._conv, self._i)

    @property
    def origin(self) -> Any:
        origin = self._origin
        if origin is LAZY:
            i, end = self._i, self._end
            origin = At(i) if end is None else ToolRun(tuple(range(i, end)))
            self._origin = origin
        return origin

    @origin.setter
    def origin(self, value: Any) -> None:
        self._origin = value

    def entries(self) -> list[Any]:
        """The entries it was read from, as they are written while it is untouched."""
        raw = self.raw
        return [raw] if self._end is None else list(raw)


_new = object.__new__


def _chat_message(
    conv: Conversation,
    role: str,
    i: int,
    end: int | None,
    raw: Any,
    ids: ToolIds,
    plain: bool,
    counts: tuple[int, int],
) -> ChatMessage:
    # (`LazyMessage.unmade` spelt out, its origin and meta left to come: no call of its
    # own, no `At` and no dict for each of 100k entries)
    m: ChatMessage = _new(ChatMessage)
    m.role = role
    m._blocks = LAZY
    m.raw = raw
    m._meta = LAZY
    m.timestamp = None
    m.hidden = role in HIDDEN_ROLES
    m.malformed = None
    m._src = LAZY
    m._origin = LAZY
    m.uid = new_uid()
    m._tool_ids = ids
    m._plain_shape = plain
    m._counts = counts
    m._conv, m._i, m._end = conv, i, end
    return m


def _usual(role: Any, entry: dict[str, Any]) -> tuple[tuple[str, ...], int, bool] | None:
    """For an entry `_load_entry` reads without a question, its call ids, how many blocks
    it makes and whether they are plain (`Message.plain_shape`): a user, system or
    developer message whose content is a string or null, or an assistant's whose calls
    all are objects with a string id (None: another entry, read the long way)."""
    content = entry.get("content")
    if content is not None and type(content) is not str:
        return None
    ids: Any = ()
    if role == "assistant":
        if "function_call" in entry:
            return None
        calls = entry.get("tool_calls")
        if calls is not None:
            if type(calls) is not list:
                return None
            ids = []
            for call in calls:
                if type(call) is not dict:
                    return None
                cid = call.get("id")
                if type(cid) is not str:
                    return None
                ids.append(cid)
            ids = tuple(ids)
        if content is None or (not content and "tool_calls" in entry):
            n = len(ids)
            return ids, n, n > 0
    elif role != "user" and not (type(role) is str and role in HIDDEN_ROLES):
        return None
    elif content is None:
        return ids, 0, False
    # (`text_is_blank` of a string spelt out)
    return ids, 1 + len(ids), bool(content) and not content.isspace()


def _load_conversation(conv: Conversation) -> list[Message]:
    """The messages of a conversation: the usual entries and runs of tool messages as
    `ChatMessage`s (blocks made when read), anything else the long way (`_load_entry`),
    which says what is wrong."""
    out: list[Message] = []
    append = out.append
    entries = conv.entries
    start = -1  # the first entry of the run of tool messages read (-1: none)
    run_ids: list[str] = []
    usual = True  # each tool message of the run the usual one (no legacy function message)
    for i, entry in enumerate(entries):
        if type(entry) is dict:
            role = entry.get("role")
            if role == "tool":
                cid = entry.get("tool_call_id")
                if isinstance(cid, str):
                    if start < 0:
                        start = i
                    run_ids.append(cid)
                    continue
            else:
                got = _usual(role, entry)
                if got is not None:
                    if start >= 0:
                        append(_run(conv, start, i, run_ids, usual))
                        start, usual, run_ids = -1, True, []
                    ids, n, plain = got
                    # (`_usual` read a role that is a string)
                    m = _chat_message(
                        conv, cast(str, role), i, None, entry, (ids, ()), plain, (n, 0)
                    )
                    append(m)
                    continue
        built = _load_entry(conv, i, entry)
        if isinstance(built, Block):  # a legacy function message in the run
            if start < 0:
                start = i
            usual = False
            continue
        if start >= 0:
            append(_run(conv, start, i, run_ids, usual))
            start, usual, run_ids = -1, True, []
        append(built)
    if start >= 0:
        append(_run(conv, start, len(entries), run_ids, usual))
    conv.loaded = out[:]  # (the session's list changes; `message_at` reads these)
    return out


def _run(conv: Conversation, start: int, end: int, ids: list[str], usual: bool) -> Message:
    """The user message of the run of tool messages from `start` to `end`; `ids`: their
    `tool_call_id`s where `usual` (each a tool message with a string one)."""
    entries = conv.entries
    raw = entries[start:end]
    if usual:
        n = end - start
        return _chat_message(conv, "user", start, end, raw, ((), tuple(ids)), True, (n, n))
    blocks = tuple(_run_block(conv, j, entries[j]) for j in range(start, end))
    origin = ToolRun(tuple(range(start, end)))
    return Message("user", blocks, raw, src=_src(conv, start), origin=origin)


def _run_block(conv: Conversation, i: int, entry: Any) -> Block:
    """The block of a tool (or legacy function) message of a run."""
    made = _load_entry(conv, i, entry)
    assert isinstance(made, Block)
    return made


def _src(conv: Conversation, i: int, tail: str = "") -> dict[str, Any]:
    path = f"{conv.base}/{i}{tail}"
    if conv.lineno is not None:
        return {"line": conv.lineno, "path": path}
    return {"path": path}


def _block_place(
    conv: Conversation, i: int, items: str, k: int
) -> tuple[dict[str, Any] | None, tuple[str, int] | None]:
    """A block's `src` and `at`: in a JSON document its pointer in two (`items` is the tail
    of its list after message i, the index k), made when asked for; in a JSONL record its
    line and pointer."""
    if conv.lineno is None:
        return None, (f"{conv.items}{i}{items}", k)
    return _src(conv, i, f"{items}{k}"), None


def _malformed(conv: Conversation, i: int, entry: Any, reason: str, role: Any = None) -> Message:
    return Message(
        role=role if role in ("user", "assistant") else None,
        blocks=(),
        raw=entry,
        malformed=reason,
        src=_src(conv, i),
        origin=At(i),
    )


def _load_entry(conv: Conversation, i: int, entry: Any, here: At | None = None) -> Message | Block:
    if (
        type(entry) is dict
        and entry.get("role") == "tool"
        and isinstance(entry.get("tool_call_id"), str)
    ):
        # the usual tool message, built without the checks below (the same block)
        call_id = entry["tool_call_id"]
        data = {"type": TOOL_RESULT, "tool_use_id": call_id, "content": entry.get("content")}
        name = entry.get("name")
        name = name if isinstance(name, str) else None
        if conv.lineno is None:  # its place: the list's pointer and i (Block.at)
            return Block(TOOL_RESULT, data, call_id, name, False, None, At(i), (conv.items, i))
        return Block(TOOL_RESULT, data, call_id, name, False, _src(conv, i), At(i))

    def malformed(reason: str, role: Any = None) -> Message:
        return _malformed(conv, i, entry, reason, role)

    if not isinstance(entry, dict):
        return malformed(f"message is {type_name(entry)}, not an object")
    role = entry.get("role")
    content = entry.get("content")
    if role == "tool":
        call_id = entry.get("tool_call_id")
        if not isinstance(call_id, str):
            return malformed("tool message without a tool_call_id")
        data = {"type": TOOL_RESULT, "tool_use_id": call_id, "content": content}
        name = entry.get("name") if isinstance(entry.get("name"), str) else None
        return Block(TOOL_RESULT, data, tool_id=call_id, name=name, src=_src(conv, i), origin=At(i))
    if role == "function":
        return Block("function_result", entry, src=_src(conv, i), origin=At(i))
    if not isinstance(role, str):
        return malformed(
            "message without a role" if role is None else f"role is {type_name(role)}, not a string"
        )
    if role not in ("user", "assistant") and role not in HIDDEN_ROLES:
        return malformed(f"unknown role {shown(role)}")
    if here is None:
        here = At(i)  # the origin of the message and of its blocks
    blocks = _content_blocks(
        conv, i, here, content, skip_empty=role == "assistant" and "tool_calls" in entry
    )
    if isinstance(blocks, str):
        return malformed(blocks, role)
    if role == "assistant":
        calls = entry.get("tool_calls")
        if calls is not None:
            if not isinstance(calls, list):
                return malformed("tool_calls is not a list", role)
            for k, call in enumerate(calls):
                if not isinstance(call, dict) or not isinstance(call.get("id"), str):
                    return malformed(f"tool_calls[{k}] has no id", role)
                fn = call.get("function")
                if not isinstance(fn, dict):
                    fn = {}
                name = fn.get("name") if isinstance(fn.get("name"), str) else "?"
                data = {
                    "type": TOOL_USE,
                    "id": call["id"],
                    "name": name,
                    "input": _arguments(fn.get("arguments")),
                }
                src, at = _block_place(conv, i, "/tool_calls/", k)
                blocks.append(Block(TOOL_USE, data, call["id"], name, False, src, At(i, k), at))
        if isinstance(entry.get("function_call"), dict):
            blocks.append(
                Block(
                    "function_call",
                    entry["function_call"],
                    src=_src(conv, i, "/function_call"),
                    origin=here,
                )
            )
    return Message(
        role=role,
        blocks=tuple(blocks),
        raw=entry,
        hidden=role in HIDDEN_ROLES,
        src=_src(conv, i),
        origin=here,
    )


def _content_blocks(
    conv: Conversation, i: int, here: At, content: Any, skip_empty: bool
) -> list[Block] | str:
    """The blocks of a message's content, or why the content cannot be read."""
    if content is None:
        return []
    if isinstance(content, str):
        if skip_empty and not content:
            return []  # "" next to tool_calls is how many clients write "no text"
        return [Block(TEXT, content, src=_src(conv, i, "/content"), origin=here)]
    if not isinstance(content, list):
        return f"content is {type_name(content)}"
    out = []
    for k, part in enumerate(content):
        src, at = _block_place(conv, i, "/content/", k)
        if isinstance(part, dict) and part.get("type") == "text":
            out.append(Block(TEXT, part, src=src, origin=here, at=at))
        elif isinstance(part, dict) and isinstance(part.get("type"), str):
            kind = own_type(part["type"], "openai")
            out.append(Block(kind, part, src=src, origin=here, at=at))
        else:
            return f"content[{k}] is not a content part with a type"
    return out


def _arguments(args: Any) -> Any:
    if isinstance(args, str):
        try:
            return loads(args)
        except (ValueError, RecursionError):
            return args
    return args


# -------------------------------------------------------------------- writing


def _write_conversation(
    messages: list[Message], conv: Conversation, dropped: list[dict[str, Any]]
) -> list[Any]:
    out: list[Any] = []
    for m in messages:
        if type(m) is ChatMessage and not m.made():
            out.extend(m.entries())  # untouched: its blocks were never asked for
            continue
        if isinstance(m.origin, BadLine):
            continue  # written in its place by the JSONL writer
        if m.malformed is not None or m.hidden:
            out.append(conv.entries[m.origin.msg])
        elif m.role == "assistant":
            out.append(_assistant(m, conv))
        else:
            _user(m, conv, out, dropped)
    return out


def _assistant(m: Message, conv: Conversation) -> Any:
    i = m.origin.msg if isinstance(m.origin, At) else None
    entry = conv.entries[i] if i is not None else {"role": "assistant", "content": None}
    loaded = _loaded_blocks(conv, i)
    if len(m.blocks) == len(loaded) and all(a is b for a, b in zip(m.blocks, loaded, strict=True)):
        return entry
    calls = []
    texts: list[Block] = []
    for b in m.blocks:
        if b.type == TOOL_USE:
            calls.append(_call(b, conv))
        elif b.type == TEXT:
            texts.append(b)
        elif not isinstance(b.origin, At):
            raise ExportRefused(f"a new {b.type} block cannot be written in an OpenAI chat message")
    new = dict(entry)
    old_texts = [b for b in loaded if b.type == TEXT]
    if len(texts) != len(old_texts) or any(
        a is not b for a, b in zip(texts, old_texts, strict=False)
    ):
        new["content"] = _content(texts) if texts else (None if calls else "")
    if calls:
        new["tool_calls"] = calls
    else:
        new.pop("tool_calls", None)
    return new


def _loaded_blocks(conv: Conversation, i: int | None) -> tuple[Block, ...]:
    """The blocks entry i was read as (none for an entry of a run of tool messages)."""
    loaded = conv.message_at.get(i) if i is not None else None
    return loaded.blocks if loaded is not None else ()


def _call(b: Block, conv: Conversation) -> Any:
    ref = b.origin
    if not isinstance(ref, At) or ref.call is None:
        raise ExportRefused("a new tool_use block cannot be written in an OpenAI chat message")
    call = conv.entries[ref.msg]["tool_calls"][ref.call]
    if b.tool_id != call.get("id"):
        return {**call, "id": b.tool_id}
    return call


def _user(m: Message, conv: Conversation, out: list[Any], dropped: list[dict[str, Any]]) -> None:
    """Tool messages for the results (in order), then one user message for the rest. A user
    message that was empty and got results is its tool messages alone (written back empty,
    it was a new finding; the report keeps it)."""
    rest: list[Block] = []
    for b in m.blocks:
        if b.type == TOOL_RESULT:
            out.append(_tool_message(b, conv))
        elif b.type == "function_result" and isinstance(b.origin, At):
            out.append(conv.entries[b.origin.msg])
        else:
            rest.append(b)
    i = m.origin.msg if isinstance(m.origin, At) else None
    if i is not None:
        loaded = _loaded_blocks(conv, i)
        if not rest and not loaded and len(m.blocks) > len(rest):
            where = {"line": conv.lineno} if conv.lineno is not None else {}
            path = f"{conv.base}/{i}"
            dropped.append({**where, "path": path, "outcome": "deleted", "record": conv.entries[i]})
            return
        if len(rest) == len(loaded) and all(a is b for a, b in zip(rest, loaded, strict=True)):
            out.append(conv.entries[i])
            return
    if not rest:
        return
    entry = conv.entries[i] if i is not None else {"role": "user"}
    out.append({**entry, "role": "user", "content": _content(rest)})


# The blocks a user message writes as `tool` (or legacy `function`) messages (`_user`).
RESULT_TYPES = frozenset({TOOL_RESULT, "function_result"})
_RESULTS = ("user", "results")


def _runs(m: Message) -> Runs:
    """A message's blocks as the loader groups the entries written for them (`_user`): a
    user message's results (a run of tool messages, joining the runs next to it), then its
    other blocks (its own user message); any other message is its own."""
    if m.role != "user":
        return [(own(m), list(m.blocks))]
    results = [b for b in m.blocks if b.type in RESULT_TYPES]
    rest = [b for b in m.blocks if b.type not in RESULT_TYPES]
    runs: Runs = [(_RESULTS, results)] if results else []
    if rest or not results:
        runs.append((own(m), rest))
    return runs


_RULES = Rules(runs=_runs, joins=lambda kind, _blocks, then: kind == then == _RESULTS)


def _results_part(m: Message, conv: Conversation) -> Message:
    """A part of a user message written apart: its results are the `tool` messages they were
    read from (none for new ones), its other blocks the user message's own entry."""
    if any(b.type not in RESULT_TYPES for b in m.blocks):
        return m
    at = [b.origin.msg for b in m.blocks if isinstance(b.origin, At)]
    return replace(
        m,
        origin=ToolRun(tuple(at)),
        src=_src(conv, at[0]) if at else None,
        raw=[conv.entries[i] for i in at] or None,
    )


def _tool_message(b: Block, conv: Conversation) -> Any:
    ref = b.origin
    if isinstance(ref, At):
        entry = conv.entries[ref.msg]
        if b.tool_id != entry.get("tool_call_id"):
            return {**entry, "tool_call_id": b.tool_id}
        return entry
    content = b.data.get("content") if isinstance(b.data, dict) else b.data
    if isinstance(content, list):
        content = "\n".join(
            p.get("text", "")
            for p in content
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return {
        "role": "tool",
        "tool_call_id": b.tool_id,
        "content": content if content is not None else "",
    }


def _content(blocks: list[Block]) -> Any:
    if len(blocks) == 1 and isinstance(blocks[0].data, str):
        return blocks[0].data
    parts = []
    for b in blocks:
        if isinstance(b.data, str):
            parts.append({"type": "text", "text": b.data})
        else:
            parts.append(b.data)
    return parts


def _dump_jsonl(session: Session, file: ChatFile, dropped: list[dict[str, Any]]) -> bytes:
    sessions = [session, *session.threads]
    by_conv = {id(s.state.conv): s for s in sessions if isinstance(s.state, ChatState)}
    present = {id(m) for s in sessions for m in s.messages if isinstance(m.origin, BadLine)}
    out: list[bytes] = []
    for idx, line in enumerate(file.lines):
        bad = file.bad_lines.get(idx)
        if bad is not None:
            if id(bad) in present:
                out.append(line.raw)
            continue  # the user dropped it
        n = file.conv_of_line.get(idx)
        s = by_conv.get(id(file.convs[n])) if n is not None else None
        if s is None:
            out.append(line.raw)
            continue
        conv = s.state.conv
        mine = [m for m in s.messages if not isinstance(m.origin, BadLine)]
        loaded = [m for m in conv.loaded if not isinstance(m.origin, BadLine)]
        if same_messages(mine, loaded):
            out.append(line.raw)
            continue
        rec = {**line.obj, "messages": _write_conversation(mine, conv, dropped)}
        style = detect_style(line.raw)
        out.append(
            compact(rec) if (style.item_sep, style.key_sep) == (",", ":") else dumps(rec, style)
        )
    nl = file.newline.encode()
    body = nl.join(out)
    if file.trailing_newline and out:
        body += nl
    return (b"\xef\xbb\xbf" if file.bom else b"") + body


register(OpenAIChatAdapter())
