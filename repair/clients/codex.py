"""What Codex CLI 0.169 sends to OpenAI Responses when it resumes a rollout.

The codex loader already rebuilds the history Codex holds (compactions replaced by what they
stand for, rolled-back turns left out). Codex then sends each item as the rollout holds it
(the emulation keeps the file's own item as the `native` entry, an edited id applied), its
`developer` messages too (its `system` ones not), skips a line it cannot read, and repairs
two faults in `normalize_history` each time it builds a prompt (measured; docs/clients.md):

- a call (`function_call`, `custom_tool_call`, `local_shell_call`) with no output anywhere
  gets the output "aborted" right after it;
- an output whose call is missing is left out (it logs "Orphan function call output").

A message item that holds no block (`content: []`, of any role) is sent as it is, where it
is in the file or in the history a compacted line stands for (measured:
tests/fixtures/clients/codex/empty_*.sent.json, compacted_empty_item.sent.json).

What Codex adds itself (its instructions, the environment context, the new prompt) is not
part of this.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain
from operator import itemgetter
from typing import Any

from ..formats.codex import (
    CALL_TYPES,
    OUTPUT_TYPES,
    CodexMessage,
    CodexState,
    CompactRef,
    ItemRef,
    in_order,
    payload_of,
    text_part,
)
from ..model import TOOL_RESULT, Block, Message, Session, ToolIds, result_text
from ..wire import _CONTENT, WIRES, Counted, Request, SentBlock, SentMessage, is_sent

CLIENT = "Codex CLI 0.169"
RESPONSES = WIRES["openai-responses"]
ABORTED = "aborted"


def send(session: Session) -> Request:
    state: CodexState = session.state
    req = Request(CLIENT, [], client=True)
    # (block, role, position, item type of a whole item as sent): one pass reads what
    # `normalize_history` asks of every item, the outputs and the calls by call_id as read
    flat: list[tuple[SentBlock, str, int | None, str | None]] = []
    outputs: dict[str, set[Any]] = {t: set() for t in OUTPUT_TYPES}
    calls: dict[str, set[Any]] = {t: set() for t in OUTPUT_TYPES}
    items: dict[
        tuple[type, int, int | None], dict[str, Any]
    ] = {}  # one object per message item: its parts render together
    objs, original = state.objs, state.original
    for pos, m, role in _history(session, req):
        for b in in_order(m, state):
            if isinstance(b, ItemRef | CompactRef):  # an item of no content: sent as it is
                payload = payload_of(b, state)
                flat.append((SentBlock(payload, type=EMPTY, native=payload), role, pos, None))
                continue
            ref = b.origin
            if type(ref) is ItemRef and ref.part is None and original.get(b.bid) is b:
                # the usual block: a whole item of the file, as loaded (sent as read)
                payload = objs[ref.line]["payload"]
                if b.tool_id is not None and payload.get("call_id") != b.tool_id:
                    payload = {**payload, "call_id": b.tool_id}
                sb = SentBlock(b.data, b, b.type, b.tool_id, b.name, payload)
                kind = payload.get("type")
                kind = kind if isinstance(kind, str) else None
            else:
                sb = _sent(b, m, state, items)
                kind = _kind(sb)
            if kind is not None:
                if kind in OUTPUT_TYPES:
                    outputs[kind].add(sb.native.get("call_id"))
                elif kind in CALL_TYPES:
                    calls[CALL_TYPES[kind]].add(sb.native.get("call_id"))
            flat.append((sb, role, pos, kind))
    _normalize(flat, outputs, calls, req)
    return req


EMPTY = "message"  # the type of a message item of no content as sent (not a content block)


def _history(
    session: Session, req: Request, start: int = 0, stop: int | None = None
) -> Iterator[tuple[int, Message, str]]:
    """The messages in the history Codex holds (of `messages[start:stop]`), each with its
    position and role; a line Codex cannot read is noted in `req` as dropped (a system item
    is not sent either)."""
    for pos, m in enumerate(session.messages[start:stop], start):
        if m.malformed is not None:
            req.dropped[pos] = "Codex skips a line it cannot read"
        elif (not m.hidden or is_sent(m, RESPONSES)) and m.role != "system":  # (live: sent)
            yield pos, m, m.role or "user"


# One block as `light` counts it: its type, what decides whether it shares an entry with
# the content blocks next to it (the message item it is a part of: `_sent`'s key, a new
# text's own object, None for a whole item), the item type it is sent as where it is a
# whole item, the call_id that item carries, the block (None: an output Codex adds).
_Counted = tuple[str, Any, str | None, Any, Block | None]
FC, FCO = "function_call", "function_call_output"


def light(session: Session) -> Request:
    """`send`'s request counted, not built (`Request.counted`): the same reading of each
    block (`_sent`'s: the item or part it is sent as), the same `normalize_history`, and each
    sent message's entries counted as the Responses wire splits them (a run of content parts
    of one message item is one entry, any other item one each). A message as loaded
    (`CodexMessage`, its blocks made since or not; not a copy an edit made) of function
    calls, their outputs, messages and model items is counted from what its loader read (its
    tool ids and entries), unless a call of it has no output or an output no call."""
    return light_part(session, 0, len(session.messages))


def light_part(session: Session, start: int, stop: int) -> Request:
    """`light` of `messages[start:stop]` alone, as if the session held only them: its
    numbers and entries counted from the stretch's first entry (`Counted.numbers[k]` is
    position start + k's), its positions the session's. Codex's sending starts afresh at
    every message (an entry never spans two), and what one message sends depends on the
    others only through call ids (which calls have an output, which outputs a call):
    where every call id of the stretch lies within it, this is the stretch of `light`'s
    request (repair.incremental splices it in)."""
    state: CodexState = session.state
    req = Request(CLIENT, [], client=True)
    # (position, role, the message read from its loader, else its blocks counted)
    flat: list[tuple[int, str, CodexMessage | None, Sequence[_Counted]]] = []
    outputs: dict[str, set[Any]] = {t: set() for t in OUTPUT_TYPES}
    calls: dict[str, set[Any]] = {t: set() for t in OUTPUT_TYPES}
    read: list[ToolIds] = []  # the tool ids of the messages counted from their loader
    for pos, m, role in _history(session, req, start, stop):
        if type(m) is CodexMessage and m._sent >= 0:
            read.append(m._tool_ids)  # type: ignore[arg-type]  # (set by the loader)
            flat.append((pos, role, m, ()))
        else:
            flat.append((pos, role, None, _counted(m, state, outputs, calls)))
    calls[FCO].update(chain.from_iterable(map(itemgetter(0), read)))
    outputs[FCO].update(chain.from_iterable(map(itemgetter(1), read)))
    req.counted = _normalized(flat, outputs, calls, req, session.messages[start:stop], start, state)
    return req


def _counted(
    m: Message, state: CodexState, outputs: dict[str, set[Any]], calls: dict[str, set[Any]]
) -> list[_Counted]:
    """Each block of a message as `light` counts it, its outputs and calls noted."""
    out: list[_Counted] = []
    objs, original = state.objs, state.original
    for b in in_order(m, state):
        if isinstance(b, ItemRef | CompactRef):  # an item of no content: an entry of its own
            out.append((EMPTY, None, EMPTY, None, None))
            continue
        ref = b.origin
        ikey: Any = None
        if type(ref) is ItemRef and ref.part is None and original.get(b.bid) is b:
            payload = objs[ref.line]["payload"]
            kind = payload.get("type")
            call_id = b.tool_id if b.tool_id is not None else payload.get("call_id")
        elif not isinstance(ref, ItemRef | CompactRef):
            call_id = None
            if b.type == TOOL_RESULT:
                call_kind = state.call_kind.get(b.tool_id or "", FC)
                kind = CALL_TYPES.get(call_kind, FCO)
                call_id = b.tool_id
            else:
                kind, ikey = None, object()  # a new text: an item of its own
        elif ref.part is not None:
            kind, call_id = None, None
            ikey = _item_key(ref)
        else:
            payload = payload_of(ref, state)
            kind = payload.get("type")
            call_id = b.tool_id if b.tool_id is not None else payload.get("call_id")
        if not isinstance(kind, str):
            kind = None
        elif kind in OUTPUT_TYPES:
            outputs[kind].add(call_id)
        elif kind in CALL_TYPES:
            calls[CALL_TYPES[kind]].add(call_id)
        out.append((b.type, ikey, kind, call_id, b))
    return out


def _item_key(ref: ItemRef | CompactRef) -> tuple[type, int, int | None]:
    """The message item a content part belongs to (`_sent`'s key)."""
    return (type(ref), ref.line, getattr(ref, "item", None))


def _normalized(
    flat: list[tuple[int, str, CodexMessage | None, Sequence[_Counted]]],
    outputs: dict[str, set[Any]],
    calls: dict[str, set[Any]],
    req: Request,
    messages: list[Message],
    start: int,
    state: CodexState,
) -> Counted:
    """`_normalize` of counted blocks, and the Responses entries of the messages it sends
    counted as they are made (`_responses_split`: a run of content parts of one message
    item is one entry, any other block one). A message read from its loader whose calls all
    have an output and outputs a call is sent as it is: its entries counted there, and a
    block's entry found from the message's first when asked for (`Counted.entry_of`).
    `messages`: those of the session from position `start` on (the numbers are theirs)."""
    numbers: list[int | None] = [None] * len(messages)
    blocks: dict[int, int] = {}
    starts: dict[int, int] = {}  # position -> its first entry, for a message sent as read
    n = 0  # entries so far
    role_now: str | None = None
    at_now: int | None = None
    opened = False  # a sent message is open (the next block of its role and position joins it)
    in_run = False  # its last block is a content part: the same item's next part joins it
    run_item: Any = None
    called, answered = calls[FCO], outputs[FCO]

    def put(c: _Counted, role: str, at: int | None) -> None:
        nonlocal n, role_now, at_now, opened, in_run, run_item
        if not (opened and role_now == role and at_now == at):
            opened, role_now, at_now, in_run = True, role, at, False
            if at is not None and numbers[at - start] is None:
                numbers[at - start] = n
        if c[0] in _CONTENT:
            if not (in_run and c[1] == run_item):  # (a key, a new text's own object)
                n += 1
            in_run, run_item = True, c[1]
        else:
            n += 1
            in_run = False
        if c[4] is not None:
            blocks.setdefault(id(c[4]), n - 1)

    all_answered, all_called = answered.issuperset, called.issuperset
    before: Any = None  # the calls of the message before, where it was read from its loader
    last = len(flat) - 1
    for k, (pos, role, read, counted) in enumerate(flat):
        if read is not None:
            asked, said = read._tool_ids  # type: ignore[misc]  # (set by the loader)
            # (the usual turn, found without the sets: its calls answered, in order, by the
            # message after it, read from its loader too; its outputs those of the calls of
            # the message before it)
            after = flat[k + 1][2] if asked and k < last else None
            if (
                not asked
                or (after is not None and after._tool_ids[1] == asked)  # type: ignore[index]
                or all_answered(asked)
            ) and (not said or said == before or all_called(said)):
                before = asked
                sent = read._sent
                if sent:
                    numbers[pos - start] = starts[pos] = n
                    n += sent
                    opened, role_now, at_now, in_run = True, role, pos, False
                continue
            counted = _counted(read, state, outputs, calls)  # a fault Codex repairs
        before = None
        for c in counted:
            kind = c[2]
            if kind is not None and kind in OUTPUT_TYPES and c[3] not in calls[kind]:
                if c[4] is not None:
                    req.left_out.append((pos, c[4], "an output whose call is missing"))
                continue
            put(c, role, pos)
            out_type = CALL_TYPES.get(kind) if kind is not None else None
            call_id = c[3]
            if (
                out_type is not None
                and isinstance(call_id, str)
                and call_id not in outputs[out_type]
            ):
                put((TOOL_RESULT, None, out_type, call_id, None), "user", None)
                req.answered.add(call_id)

    def entry_of(position: int, block: Block) -> int | None:
        first = starts.get(position)
        if first is None:
            return blocks.get(id(block))
        k = _offset(messages[position - start], block, state)
        return None if k is None else first + k

    return Counted(RESPONSES.split, numbers, n, blocks, entry_of)


def _offset(m: Message, block: Block, state: CodexState) -> int | None:
    """How many entries of a message sent as read come before the one carrying `block`."""
    n, in_run, run_item = -1, False, None
    for b in in_order(m, state):
        if isinstance(b, ItemRef | CompactRef):
            n += 1
            in_run = False
        elif b.type in _CONTENT:
            key = _item_key(b.origin)
            if not (in_run and key == run_item):
                n += 1
            in_run, run_item = True, key
        else:
            n += 1
            in_run = False
        if b is block:
            return n
    return None


def _sent(
    b: Block,
    m: Message,
    state: CodexState,
    items: dict[tuple[type, int, int | None], dict[str, Any]],
) -> SentBlock:
    """A block as Codex sends it: the file's own item or part where the block is as loaded,
    rendered from the block where histview changed it or made it."""
    ref = b.origin
    if not isinstance(ref, ItemRef | CompactRef):
        return _new(b, m, state)
    payload = payload_of(ref, state)
    kept = (state.original if isinstance(ref, ItemRef) else state.compacted).get(b.bid) is b
    if ref.part is not None:  # a content part of a message item
        content = payload.get("content")
        part = (
            content[ref.part]
            if kept and isinstance(content, list)
            else text_part(b, payload.get("role"))
        )
        key = (type(ref), ref.line, getattr(ref, "item", None))
        item = items.setdefault(key, {k: v for k, v in payload.items() if k != "content"})
        return SentBlock(b.data, b, native=part, item=item)
    if b.tool_id is not None and payload.get("call_id") != b.tool_id:
        payload = {**payload, "call_id": b.tool_id}
    return SentBlock(b.data, b, native=payload)


def _new(b: Block, m: Message, state: CodexState) -> SentBlock:
    """A block histview made (a synthetic output, a text): the item Codex would read."""
    if b.type == TOOL_RESULT:
        kind = state.call_kind.get(b.tool_id or "", "function_call")
        out_type = CALL_TYPES.get(kind, "function_call_output")
        native = {"type": out_type, "call_id": b.tool_id, "output": result_text(b.data)}
        return SentBlock(b.data, b, native=native)
    role = m.role if m.role in ("user", "assistant") else "user"
    return SentBlock(b.data, b, native=text_part(b, role), item={"type": "message", "role": role})


def _kind(sb: SentBlock) -> str | None:
    native = sb.native if isinstance(sb.native, dict) and sb.item is None else None
    t = native.get("type") if native is not None else None
    return t if isinstance(t, str) else None


def _normalize(
    flat: list[tuple[SentBlock, str, int | None, str | None]],
    outputs: dict[str, set[Any]],
    calls: dict[str, set[Any]],
    req: Request,
) -> None:
    """`normalize_history`, into `req.messages`: an "aborted" output right after each call
    that has none anywhere (`outputs`: the call_ids answered, by output type), then every
    output whose call is missing (`calls`: the call_ids called, by the type of output they
    take) left out. One sent message per run of a session message's blocks (the outputs
    Codex adds are messages of their own)."""
    messages = req.messages
    last: SentMessage | None = None
    last_at: int | None = None

    def put(sb: SentBlock, role: str, at: int | None) -> None:
        nonlocal last, last_at
        if last is not None and last.role == role and last_at == at:
            last.blocks.append(sb)
        else:
            last, last_at = SentMessage(role, [sb], [at] if at is not None else []), at
            messages.append(last)

    for sb, role, pos, kind in flat:
        if kind is None:
            put(sb, role, pos)
            continue
        if kind in OUTPUT_TYPES:
            if sb.native.get("call_id") not in calls[kind]:
                if sb.block is not None and pos is not None:
                    req.left_out.append((pos, sb.block, "an output whose call is missing"))
                continue
            put(sb, role, pos)
            continue
        put(sb, role, pos)
        out_type = CALL_TYPES.get(kind)
        call_id = sb.native.get("call_id") if out_type is not None else None
        if out_type is not None and isinstance(call_id, str) and call_id not in outputs[out_type]:
            native = {"type": out_type, "call_id": call_id, "output": ABORTED}
            data = {"type": TOOL_RESULT, "tool_use_id": call_id, "content": ABORTED}
            put(SentBlock(data, native=native, name=sb.name), "user", None)
            req.answered.add(call_id)
