"""What opencode 1.18 sends to Anthropic when it resumes a session.

The opencode loader already builds the messages opencode's conversion makes (send order,
steps, merges, dropped parts, reasoning by model). On top of that, measured
(docs/clients.md):

- a tool part still `pending` or `running` is sent with an error result "[Tool execution was
  interrupted]", in its step's results (call order), each time the session resumes;
- tool ids lose the characters Anthropic refuses (`functions.todowrite:1` is sent as
  `functions_todowrite_1`), in the call and its result;
- a file part is sent as an image or document block by URL.

Two tool parts with one `callID` are sent as they are (refused). What opencode adds itself
(the new prompt, its system prompt) is not part of this.
"""

from __future__ import annotations

import re

from ..formats.opencode import INTERRUPTED, OPEN_STATES, OpencodeState, PartRef, PartsMessage
from ..model import TOOL_RESULT, TOOL_USE, Block, Message, Session
from ..wire import WIRES, Counted, Request, SentBlock, SentMessage

CLIENT = "opencode 1.18"
_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")


def sanitize_id(tool_id: str) -> str:
    """opencode's id rewrite for Claude models: characters outside [a-zA-Z0-9_-] become _."""
    if _usual(tool_id):
        return tool_id  # the usual id: nothing to rewrite (no regex pass)
    return _ID_CHARS.sub("_", tool_id)


def _usual(text: str) -> bool:
    """Not empty, and only characters of [a-zA-Z0-9_-] (ids joined: each id is)."""
    return text.isascii() and text.replace("_", "a").replace("-", "a").isalnum()


def send(session: Session) -> Request:
    state: OpencodeState = session.state
    req = Request(CLIENT, [], client=True)
    owed: list[SentBlock] = []  # interrupted results for the last assistant message's open calls
    order: list[str] = []  # its call ids as sent, in order
    for pos, m in enumerate(session.messages):
        if not m.live:
            continue
        blocks = [_sent_block(b, pos, req) for b in m.blocks]
        if owed and m.role == "user":
            blocks = _with_answers(owed, order, blocks)
        elif owed:
            req.messages.append(SentMessage("user", _with_answers(owed, order, []), []))
        owed = []
        req.messages.append(SentMessage(m.role or "user", blocks, [pos]))
        if m.role == "assistant":
            order = [sb.tool_id or "" for sb in blocks if sb.type == TOOL_USE]
            if not order:
                continue
            for b, sb in zip(m.blocks, blocks, strict=True):
                if b.type == TOOL_USE and _is_open(b, state):
                    owed.append(_interrupted(sb))
                    if b.tool_id is not None:
                        req.answered.add(b.tool_id)
    if owed:
        req.messages.append(SentMessage("user", _with_answers(owed, order, []), []))
    return req


def light(session: Session) -> Request:
    """`send`'s request counted, not built (`Request.counted`): one sent message per live
    message, and one more of interrupted results where an assistant message with an open
    call is not followed by a user message; the ids it rewrites and the calls it answers,
    as `send` notes them. Read from each message's tool ids and open calls, which a message
    the loader read has without its blocks (`PartsMessage`)."""
    state: OpencodeState = session.state
    req = Request(CLIENT, [], client=True)
    numbers: list[int | None] = [None] * len(session.messages)
    n = 0
    owed = False  # the last assistant message has open calls: their results come next
    ids: list[str | None] = []  # every live message's tool ids, tested at once below
    tool_ids = Message.tool_ids
    for pos, m in enumerate(session.messages):
        if m.hidden or m.malformed is not None:  # (`Message.live`, not a property call each)
            continue
        got = m._tool_ids  # (`Message.tool_ids`: made once)
        calls, answers = tool_ids(m) if got is None else got
        ids += calls
        ids += answers
        role = m.role
        if owed and role != "user":
            n += 1  # the interrupted results, a user message of their own
        owed = False
        numbers[pos] = n
        n += 1
        if calls and role == "assistant":
            for tid in _open_calls(m, state):
                owed = True
                if tid is not None:
                    req.answered.add(tid)
    if owed:
        n += 1
    if not _usual("".join(filter(None, ids))):  # one is sent otherwise: which, in order
        _rewritten(session.messages, req)
    req.counted = Counted(WIRES["anthropic"].split, numbers, n)
    return req


def _rewritten(messages: list[Message], req: Request) -> None:
    """Each tool block `send` sends with another id, in `req.changed`, in block order."""
    for pos, m in enumerate(messages):
        if not m.live:
            continue
        calls, answers = m.tool_ids()
        for tid in (*calls, *answers):
            if tid and sanitize_id(tid) != tid:
                for b in m.blocks:
                    if b.type == TOOL_USE or b.type == TOOL_RESULT:
                        _sent_id(b, pos, req)
                break


def _open_calls(m: Message, state: OpencodeState) -> tuple[str | None, ...]:
    """The ids of a message's tool_use blocks whose part is pending or running."""
    if isinstance(m, PartsMessage) and not m.made():
        return m.open_calls  # as the loader read them
    return tuple(b.tool_id for b in m.blocks if b.type == TOOL_USE and _is_open(b, state))


def _interrupted(call: SentBlock) -> SentBlock:
    data = {
        "type": TOOL_RESULT,
        "tool_use_id": call.tool_id,
        "content": INTERRUPTED,
        "is_error": True,
    }
    return SentBlock(data, name=call.name)


def _with_answers(
    owed: list[SentBlock], order: list[str], blocks: list[SentBlock]
) -> list[SentBlock]:
    """The step's results in call order (opencode sends one per tool part), then the rest."""
    rank = {tid: k for k, tid in reversed(list(enumerate(order)))}
    results = [b for b in blocks if b.type == TOOL_RESULT]
    rest = [b for b in blocks if b.type != TOOL_RESULT]
    answered = sorted([*results, *owed], key=lambda b: rank.get(b.tool_id or "", len(rank)))
    return [*answered, *rest]


def _is_open(block: Block, state: OpencodeState) -> bool:
    ref = block.origin
    if not isinstance(ref, PartRef):
        return False
    part = state.entries[ref.msg]["parts"][ref.part]
    return part["state"].get("status") in OPEN_STATES


def _sent_block(b: Block, pos: int, req: Request) -> SentBlock:
    data = b.data if isinstance(b.data, dict) else {"type": "text", "text": b.data}
    btype = b.type
    if btype == TOOL_USE or btype == TOOL_RESULT:
        tid = _sent_id(b, pos, req)
        if btype == TOOL_USE:
            out = {"type": TOOL_USE, "id": tid, "name": b.name, "input": data.get("input")}
        else:
            out = {"type": TOOL_RESULT, "tool_use_id": tid, "content": data.get("content")}
            if b.is_error:
                out["is_error"] = True
        return SentBlock(out, b, btype, tid, b.name)
    if b.type == "file":
        mime = str(data.get("mime", ""))
        kind = "image" if mime.startswith("image/") else "document"
        source = {"type": "url", "url": data.get("url"), "media_type": mime}
        return SentBlock({"type": kind, "source": source}, b, type=kind)
    return SentBlock(dict(data), b)


def _sent_id(b: Block, pos: int, req: Request) -> str:
    """A tool block's id as sent (noted in `req.changed` when rewritten)."""
    raw = b.tool_id or ""
    tid = sanitize_id(raw)
    if tid != raw:
        req.changed.append((pos, b, f"its id is sent as {tid}"))
    return tid
