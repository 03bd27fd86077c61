"""What the provider receives: the request built from a session, in the provider's wire shape.

A `Request` is the conversation as it is sent, each sent message (`SentMessage`) linked to the
session messages and blocks it is made of. For a provider target it is the live messages as
they are (`plain`); for an agent-client target it is what that client builds when it resumes
the file, its own repairs included (`repair.clients`, one emulation per client).

A wire shape (`Wire`) turns the sent messages into the list the provider reads under its key:
Anthropic `messages`, Bedrock Converse `messages`, Chat Completions `messages`, Responses
`input`, Gemini `contents`. Each shape declares once how a sent message splits into entries
(Chat: one `tool` message per tool result, then the rest; Responses: one item per call,
output or reasoning, one message item per run of content) and how one entry is rendered;
`messages.N` (a finding's `message_index`, `explain`, `histview messages`) is the index of the
message's first entry. `WIRES` maps each provider target to its shape; a client target uses
its provider's (`Target.rules`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from . import targets
from .jsonio import to_json
from .model import TEXT, TOOL_RESULT, TOOL_USE, Block, Message, Session

# Roles sent as messages of their own in the Chat and Responses lists (histview shows them
# as hidden rows: they are not part of the checked conversation).
INSTRUCTION_ROLES = frozenset({"system", "developer"})


# ---------------------------------------------------------------- the request


@dataclass(slots=True)
class SentBlock:
    """One block as sent. `data` is Anthropic-shaped (a str for string content); `block` is
    the session's block it is (None: added by the client). `native` is the entry exactly as
    the client sends it, where the client sends the file's own item (a Codex rollout item);
    a part of a message item carries the part in `native` and the item in `item`."""

    data: Any
    block: Block | None = None
    type: str = ""  # the block's type ("text" for string content)
    tool_id: str | None = None  # tool_use.id / tool_result.tool_use_id
    name: str | None = None  # the tool's name, where known
    native: Any = None
    item: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.type:
            return
        if self.block is not None:
            self.type, self.tool_id = self.block.type, self.block.tool_id
            self.name = self.name or self.block.name
            return
        d = self.data
        if isinstance(d, str):
            self.type = "text"
        elif isinstance(d, dict):
            t = d.get("type")
            self.type = t if isinstance(t, str) else "unknown"
            v = d.get("id") if t == TOOL_USE else d.get("tool_use_id")
            self.tool_id = v if isinstance(v, str) else None
            n = d.get("name")
            self.name = self.name or (n if isinstance(n, str) else None)


@dataclass(slots=True)
class SentMessage:
    role: str
    blocks: list[SentBlock]
    positions: list[int]  # the session messages (indexes in Session.messages) it is made of

    @property
    def string_content(self) -> bool:
        return len(self.blocks) == 1 and isinstance(self.blocks[0].data, str)


@dataclass(slots=True)
class Counted:
    """What a light twin (`Client.light`) counts of its client's request, on one wire
    shape (`split`): messages.N of each session position, the entries in all, and, on a
    wire that splits a message into several entries, the entry of each sent block."""

    split: Callable[[SentMessage], list[list[int]]]
    numbers: list[int | None]
    total: int
    blocks: dict[int, int] | None = None  # id(block) -> its entry
    # or, where the session's blocks are made when read (a message never read has none to
    # key by): the entry of a block, from its message's position (`Request.block_entry`)
    entry_of: Callable[[int, Block], int | None] | None = None


@dataclass
class Request:
    """The conversation as sent. `sender` says who builds it, in words (a client as
    released, or the provider for the messages as they are); `client` is True when an agent
    client built it: then `left_out`, `dropped`, `changed` and the blocks it adds are its
    own repairs."""

    sender: str
    messages: list[SentMessage]
    client: bool = False
    # blocks of the session the client does not send: (position, block, why)
    left_out: list[tuple[int, Block, str]] = field(default_factory=list)
    # whole messages the client does not send (a line it cannot read): position -> why
    dropped: dict[int, str] = field(default_factory=dict)
    # messages after which the client sends one of its own (a closing turn): position -> why
    added_after: dict[int, str] = field(default_factory=dict)
    # blocks it sends changed (an id it rewrites): (position, block, how)
    changed: list[tuple[int, Block, str]] = field(default_factory=list)
    # tool_use ids the client answers with a placeholder result of its own
    answered: set[str] = field(default_factory=set)
    # a request counted, not built (`Client.light`, for the analysis): no `messages`, only
    # what the analysis reads of them
    counted: Counted | None = None
    # positions that moved since the sent messages were made (a step that inserts or drops
    # messages, repair.incremental): (index, by) runs, sorted: the messages from that index
    # to the next run's are at their positions + by (`moved.Spans`)
    moved: tuple[tuple[int, int], ...] = ()
    _touched: set[int] | None = None
    # `block_entry`'s map, for the wire it was made on
    _entries: tuple[Callable[[SentMessage], list[list[int]]], dict[int, int]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def repairs(self, block: Block | None, position: int | None = None) -> bool:
        """The client does not send this block (or message) as it is: it leaves it out,
        rewrites it, or (a call) answers it with a placeholder of its own."""
        if block is None:
            return position is not None and (
                position in self.dropped or position in self.added_after
            )
        if self._touched is None:
            self._touched = {id(b) for _, b, _ in (*self.left_out, *self.changed)}
        return id(block) in self._touched or (
            block.is_tool_use and block.tool_id is not None and block.tool_id in self.answered
        )

    def numbers(self, count: int, wire: Wire) -> list[int | None]:
        """messages.N of each session message (by position): the first wire entry of the
        first sent message it is part of; None for a message that is not sent at all."""
        return self.numbering(count, wire)[0]

    def numbering(self, count: int, wire: Wire) -> tuple[list[int | None], int]:
        """`numbers`, and how many wire entries the provider receives in all."""
        if self.counted is not None:
            c = self.counted
            if wire.split is not c.split or len(c.numbers) != count:
                raise ValueError("a counted request numbers its own session on its own wire")
            return list(c.numbers), c.total
        out: list[int | None] = [None] * count
        n = 0
        for sm, positions in zip(self.messages, self.positions(), strict=True):
            for p in positions:
                if out[p] is None:
                    out[p] = n
            n += len(wire.split(sm))
        return out, n

    def positions(self) -> Iterator[list[int]]:
        """Each sent message's positions in the session now (`moved`)."""
        if not self.moved:
            yield from (sm.positions for sm in self.messages)
            return
        runs = [(0, 0), *self.moved, (len(self.messages), 0)]
        for (i, by), (j, _) in zip(runs, runs[1:], strict=False):
            for sm in self.messages[i:j]:
                yield [p + by for p in sm.positions] if by else sm.positions

    def block_numbers(self, wire: Wire) -> dict[int, int]:
        """id(block) -> the wire entry that carries it (where a message splits into several)."""
        if self.counted is not None:
            c = self.counted
            if wire.split is not c.split or c.blocks is None:
                raise ValueError("a counted request numbers its blocks on its own split wire")
            return c.blocks
        out: dict[int, int] = {}
        n = 0
        for sm in self.messages:
            for group in wire.split(sm):
                for i in group:
                    b = sm.blocks[i].block
                    if b is not None:
                        out.setdefault(id(b), n)
                n += 1
        return out

    def block_entry(self, wire: Wire, position: int, block: Block) -> int | None:
        """The wire entry that carries `block` of the session message at `position` (None:
        it is not sent), where a message splits into several (`block_numbers`, made once)."""
        c = self.counted
        if c is not None and c.entry_of is not None:
            if wire.split is not c.split:
                raise ValueError("a counted request numbers its blocks on its own split wire")
            return c.entry_of(position, block)
        got = self._entries
        if got is None or got[0] is not wire.split:
            got = self._entries = (wire.split, self.block_numbers(wire))
        return got[1].get(id(block))

    def places(self, wire: Wire) -> list[tuple[int | None, Block | None]]:
        """For each wire entry (messages.N): the session message it comes from (its
        position; None for what the client adds) and the session block it opens, if any."""
        if self.counted is not None:
            raise ValueError("a counted request has no blocks")
        out: list[tuple[int | None, Block | None]] = []
        for sm, positions in zip(self.messages, self.positions(), strict=True):
            for group in wire.split(sm):
                block = next((sm.blocks[i].block for i in group if sm.blocks[i].block), None)
                pos = positions[0] if positions else None
                out.append((pos, block))
        return out


def is_sent(m: Message, wire: Wire | None = None) -> bool:
    """Whether a provider receives this session message as it is: live ones, and the
    instruction messages (system, developer: hidden rows, not checked, with no other reason
    to be hidden) in the shapes that carry them in the list."""
    if m.live:
        return True
    return (
        wire is not None
        and wire.instructions
        and m.malformed is None
        and m.role in INSTRUCTION_ROLES
        and not m.meta.get("hidden_reason")
    )


def sent_blocks(m: Message) -> list[SentBlock]:
    return [SentBlock(b.data, b) for b in m.blocks]


def plain(messages: list[Message], wire: Wire | None, sender: str) -> Request:
    """The request a provider target gets: the sent messages as they are, one each."""
    return Request(
        sender,
        [
            SentMessage(m.role or "user", sent_blocks(m), [pos])
            for pos, m in enumerate(messages)
            if is_sent(m, wire)
        ],
    )


# ---------------------------------------------------------------- wire shapes


@dataclass(frozen=True)
class Entry:
    item: Any  # the wire entry (a message, an item, a content)
    msg: int  # index of its SentMessage in the request
    blocks: tuple[int, ...]  # indexes of the SentMessage's blocks it carries


@dataclass(frozen=True)
class Wire:
    key: str  # the request body key the list travels under
    name: str  # in words, for --help and listings
    # a sent message's entries, each as the indexes of the blocks it carries
    split: Callable[[SentMessage], list[list[int]]]
    # one entry: (role, the blocks it carries) -> the wire entry
    entry: Callable[[str, list[SentBlock]], Any]
    instructions: bool = False  # system/developer messages travel in the list

    def render(self, req: Request) -> list[Entry]:
        out = []
        for k, sm in enumerate(req.messages):
            for group in self.split(sm):
                out.append(
                    Entry(self.entry(sm.role, [sm.blocks[i] for i in group]), k, tuple(group))
                )
        return out


def _whole(sm: SentMessage) -> list[list[int]]:
    return [list(range(len(sm.blocks)))]


def _dict(b: SentBlock) -> dict[str, Any]:
    return {"type": TEXT, "text": b.data} if isinstance(b.data, str) else b.data


def _text_of(value: Any) -> str:
    """A tool result's content (or a text block's text) as plain text."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(
            p.get("text", "") if isinstance(p, dict) else str(p)
            for p in value
            if not isinstance(p, dict) or isinstance(p.get("text"), str)
        )
    if value is None:
        return ""
    return _json_text(value)


def _json_text(value: Any) -> str:
    """A value as one line of JSON (a call's `arguments`, a result that is not text): its
    numbers and text exactly as read (jsonio), a lone surrogate as its escape."""
    return to_json(value).decode("utf-8")


# Anthropic Messages API: `{role, content}`; string content stays a string.
def _anthropic(role: str, blocks: list[SentBlock]) -> dict[str, Any]:
    if len(blocks) == 1 and isinstance(blocks[0].data, str):
        return {"role": role, "content": blocks[0].data}
    return {"role": role, "content": [_dict(b) for b in blocks]}


# Bedrock Converse: `{role, content: [{text} | {toolUse} | {toolResult} | ...]}`.
def _converse_block(b: SentBlock) -> dict[str, Any]:
    d = _dict(b)
    if b.type == TEXT:
        return {"text": d.get("text", "")}
    if b.type == TOOL_USE:
        return {"toolUse": {"toolUseId": b.tool_id, "name": b.name, "input": d.get("input")}}
    if b.type == TOOL_RESULT:
        content = d.get("content")
        if not isinstance(content, list) or not all(isinstance(p, dict) for p in content):
            content = [{"text": _text_of(content)}]
        else:
            content = [{"text": p.get("text")} if p.get("type") == TEXT else p for p in content]
        out: dict[str, Any] = {"toolUseId": b.tool_id, "content": content}
        if d.get("is_error"):
            out["status"] = "error"
        return {"toolResult": out}
    if b.type == "thinking":
        text = {"text": d.get("thinking", "")}
        if d.get("signature"):
            text["signature"] = d["signature"]
        return {"reasoningContent": {"reasoningText": text}}
    if b.type == "redacted_thinking":
        return {"reasoningContent": {"redactedContent": d.get("data")}}
    return d  # a Converse block histview keeps as it is (image, document, ...)


def _converse(role: str, blocks: list[SentBlock]) -> dict[str, Any]:
    return {"role": role, "content": [_converse_block(b) for b in blocks]}


# Gemini: `{role: user|model, parts: [{text} | {functionCall} | {functionResponse} | ...]}`.
def _gemini_part(b: SentBlock) -> Any:
    """A Gemini part: the client's own (`native`, any JSON as read) or one built here."""
    if b.native is not None:
        return b.native
    d = _dict(b)
    if b.type == TEXT:
        return {"text": d.get("text", "")}
    if b.type == TOOL_USE:
        call = {"name": b.name, "args": d.get("input")}
        return {"functionCall": {"id": b.tool_id, **call} if b.tool_id else call}
    if b.type == TOOL_RESULT:
        key = "error" if d.get("is_error") else "output"
        resp = {"name": b.name, "response": {key: _text_of(d.get("content"))}}
        return {"functionResponse": {"id": b.tool_id, **resp} if b.tool_id else resp}
    if b.type == "thinking":
        return {"text": d.get("thinking", ""), "thought": True}
    return d  # a Gemini part histview keeps as it is (inlineData, fileData, ...)


def _gemini(role: str, blocks: list[SentBlock]) -> dict[str, Any]:
    return {
        "role": "model" if role == "assistant" else "user",
        "parts": [_gemini_part(b) for b in blocks],
    }


# OpenAI Chat Completions: one `tool` message per tool result (they open a user message),
# then the user's other blocks; an assistant message carries its calls in `tool_calls`.
def _chat_split(sm: SentMessage) -> list[list[int]]:
    if sm.role != "user":
        return _whole(sm)
    results = [[i] for i, b in enumerate(sm.blocks) if b.type == TOOL_RESULT]
    rest = [i for i, b in enumerate(sm.blocks) if b.type != TOOL_RESULT]
    return results + [rest] if rest or not results else results


def _chat_part(b: SentBlock) -> dict[str, Any]:
    d = _dict(b)
    if b.type == TEXT:
        return {"type": "text", "text": d.get("text", "")}
    if b.type == "image":
        src = d.get("source")
        if not isinstance(src, dict):
            src = {}
        url = src.get("url") or f"data:{src.get('media_type')};base64,{src.get('data')}"
        return {"type": "image_url", "image_url": {"url": url}}
    return d


def _chat(role: str, blocks: list[SentBlock]) -> dict[str, Any]:
    if len(blocks) == 1 and blocks[0].type == TOOL_RESULT and role == "user":
        b = blocks[0]
        return {
            "role": "tool",
            "tool_call_id": b.tool_id,
            "content": _text_of(_dict(b).get("content")),
        }
    if len(blocks) == 1 and isinstance(blocks[0].data, str):
        return {"role": role, "content": blocks[0].data}
    if role == "assistant":
        texts = [_dict(b).get("text", "") for b in blocks if b.type == TEXT]
        # a text that is not a string is sent as it is (the provider refuses it; malformed)
        joined = "".join(texts) if all(isinstance(t, str) for t in texts) else texts
        out: dict[str, Any] = {"role": role, "content": joined if texts else None}
        calls = [
            {
                "id": b.tool_id,
                "type": "function",
                "function": {"name": b.name, "arguments": _json_text(_dict(b).get("input"))},
            }
            for b in blocks
            if b.type == TOOL_USE
        ]
        if calls:
            out["tool_calls"] = calls
        return out
    parts = [_chat_part(b) for b in blocks if b.type not in ("thinking", "redacted_thinking")]
    return {"role": role, "content": parts}


# OpenAI Responses `input`: one item per call, output and reasoning item; a run of content
# blocks is one message item (a Codex item keeps its own parts together).
_CONTENT = frozenset({TEXT, "image", "input_text", "output_text", "input_image", "refusal"})


def _responses_split(sm: SentMessage) -> list[list[int]]:
    out: list[list[int]] = []
    run: list[int] = []
    for i, b in enumerate(sm.blocks):
        if b.type in _CONTENT and (not run or sm.blocks[run[0]].item is b.item):
            run.append(i)
            continue
        if run:
            out.append(run)
            run = []
        if b.type in _CONTENT:
            run = [i]
        else:
            out.append([i])
    if run:
        out.append(run)
    return out or [[]]


def _responses_part(role: str, b: SentBlock) -> Any:  # `native`: any JSON as read
    if b.native is not None:
        return b.native
    d = _dict(b)
    if b.type == TEXT:
        kind = "output_text" if role == "assistant" else "input_text"
        return {"type": kind, "text": d.get("text", "")}
    return d


def _responses(role: str, blocks: list[SentBlock]) -> Any:  # `native`: any JSON as read
    first = blocks[0] if blocks else None
    if first is not None and first.type not in _CONTENT:
        if first.native is not None:
            return first.native
        d = _dict(first)
        if first.type == TOOL_USE:
            return {
                "type": "function_call",
                "call_id": first.tool_id,
                "name": first.name,
                "arguments": _json_text(d.get("input")),
            }
        if first.type == TOOL_RESULT:
            return {
                "type": "function_call_output",
                "call_id": first.tool_id,
                "output": _text_of(d.get("content")),
            }
        if first.type == "thinking":
            text = d.get("thinking", "")
            return {"type": "reasoning", "summary": [{"type": "summary_text", "text": text}]}
        return d  # a Responses item histview keeps as it is
    head = dict(first.item) if first is not None and first.item is not None else {}
    return {
        **head,
        "type": "message",
        "role": head.get("role", role),
        "content": [_responses_part(role, b) for b in blocks],
    }


WIRES: dict[str, Wire] = {
    "anthropic": Wire("messages", "Anthropic Messages API `messages`", _whole, _anthropic),
    "bedrock": Wire("messages", "Bedrock Converse `messages`", _whole, _converse),
    "openai-chat": Wire(
        "messages", "OpenAI Chat Completions `messages`", _chat_split, _chat, instructions=True
    ),
    "openai-responses": Wire(
        "input", "OpenAI Responses `input`", _responses_split, _responses, instructions=True
    ),
    "gemini": Wire("contents", "Gemini `contents`", _whole, _gemini),
}


def wire_for(target: str) -> Wire:
    """The wire shape a target's requests travel in (a client target: its provider's)."""
    return WIRES[targets.get(target).rules]


# ---------------------------------------------------------------- a session's request


def request(session: Session, target: str | None = None) -> Request:
    """What the target receives: for a client target whose sending is emulated, the request
    that client builds (`repair.clients`); else the sent messages as they are."""
    from . import clients

    target = target or session.target
    client = clients.get(target)
    if client is not None:
        return client.send(session)
    return plain(session.messages, wire_for(target), provider_of(target))


def provider_of(target: str) -> str:
    """Who answers the target's requests, in words."""
    return targets.get(targets.get(target).rules).provider


def entry_of(m: Message, number: int, block: Block, wire: Wire) -> int:
    """The wire entry that carries `block` of message `m` (numbered `number`) when the
    provider receives the message as it is."""
    if wire.split is _whole:
        return number
    sm = SentMessage(m.role or "user", sent_blocks(m), [])
    for g, group in enumerate(wire.split(sm)):
        if any(sm.blocks[i].block is block for i in group):
            return number + g
    return number


def provider_numbers(
    messages: list[Message], target: str, live: int | None = None
) -> tuple[list[int | None], int]:
    """messages.N of each message as the target's provider numbers the messages as they are,
    and how many entries it receives (linear: each sent message's entries are counted, not
    rendered). `live`: how many of them are live, where the caller counted them."""
    wire = wire_for(target)
    if live == len(messages) and wire.split is _whole:
        return list(range(live)), live  # each message sent whole, in order
    count = _COUNTS.get(wire.split)
    out: list[int | None] = []
    n = 0
    for m in messages:
        if (not m.hidden and m.malformed is None) or is_sent(m, wire):  # (live: sent)
            out.append(n)
            if wire.split is _whole:
                n += 1
            elif count is not None:
                n += count(m.role or "user", m)
            else:
                n += len(wire.split(SentMessage(m.role or "user", sent_blocks(m), [])))
        else:
            out.append(None)
    return out, n


def _chat_count(role: str, m: Message) -> int:
    """len(_chat_split(...)) of a message as it is, without building its SentBlocks (nor,
    where its loader knows them, its blocks: `Message.block_counts`)."""
    if role != "user":
        return 1
    blocks, results = m.block_counts()
    return results + 1 if results < blocks or not results else results


def _responses_count(role: str, m: Message) -> int:
    """len(_responses_split(...)) of a message as it is (no block comes from an item, so
    each run of content blocks is one message item)."""
    counted = m.content_runs()
    if counted is not None:
        return counted or 1
    n, in_run = 0, False
    for b in m.blocks:
        if b.type in _CONTENT:
            n += not in_run
            in_run = True
        else:
            n += 1
            in_run = False
    return n or 1


# How many entries a split makes of a message as it is, counted: numbering the whole
# session is linear and builds nothing.
_COUNTS: dict[Callable[[SentMessage], list[list[int]]], Callable[[str, Message], int]] = {
    _chat_split: _chat_count,
    _responses_split: _responses_count,
}


def numbers(session: Session, target: str | None = None) -> list[int | None]:
    """messages.N of each session message as the target numbers what it receives."""
    target = target or session.target
    return request(session, target).numbers(len(session.messages), wire_for(target))


def request_body(session: Session, target: str | None = None) -> dict[str, Any]:
    """`{key: [...]}`: the part of the request body that carries the conversation."""
    target = target or session.target
    wire = wire_for(target)
    return {wire.key: [e.item for e in wire.render(request(session, target))]}
