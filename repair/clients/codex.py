"""What Codex CLI 0.169 sends to OpenAI Responses when it resumes a rollout.

The codex loader already rebuilds the history Codex holds (compactions replaced by what they
stand for, rolled-back turns left out). Codex then sends each item as the rollout holds it
(the emulation keeps the file's own item as the `native` entry, an edited id applied), its
`developer` messages too (its `system` ones not), skips a line it cannot read, and repairs
two faults in `normalize_history` each time it builds a prompt (measured; docs/clients.md):

- a call (`function_call`, `custom_tool_call`, `local_shell_call`) with no output anywhere
  gets the output "aborted" right after it;
- an output whose call is missing is left out (it logs "Orphan function call output").

What Codex adds itself (its instructions, the environment context, the new prompt) is not
part of this.
"""

from __future__ import annotations

from typing import Any

from ..formats.codex import (
    CALL_TYPES,
    OUTPUT_TYPES,
    CodexState,
    CompactRef,
    ItemRef,
    payload_of,
    text_part,
)
from ..model import TOOL_RESULT, Block, Message, Session, result_text
from ..wire import WIRES, Request, SentBlock, SentMessage, is_sent

CLIENT = "Codex CLI 0.169"
RESPONSES = WIRES["openai-responses"]
ABORTED = "aborted"


def send(session: Session) -> Request:
    state: CodexState = session.state
    req = Request(CLIENT, [], client=True)
    flat: list[tuple[SentBlock, str, int | None]] = []  # (block, role, position)
    items: dict[
        tuple[type, int, int | None], dict[str, Any]
    ] = {}  # one object per message item: its parts render together
    for pos, m in enumerate(session.messages):
        if m.malformed is not None:
            req.dropped[pos] = "Codex skips a line it cannot read"
            continue
        if not is_sent(m, RESPONSES) or m.role == "system":
            continue  # not in the history Codex holds (a system item: not sent either)
        flat.extend((sb, m.role or "user", pos) for sb in _blocks(m, state, items))
    flat = _normalize(flat, req)
    for sb, role, at in flat:
        last = req.messages[-1] if req.messages else None
        positions = [at] if at is not None else []
        if last is not None and last.role == role and last.positions == positions:
            last.blocks.append(sb)
        else:
            req.messages.append(SentMessage(role, [sb], positions))
    return req


def _blocks(
    m: Message, state: CodexState, items: dict[tuple[type, int, int | None], dict[str, Any]]
) -> list[SentBlock]:
    """A message's blocks as Codex sends them: the file's own items and parts where the
    block is as loaded, rendered from the block where histview changed it."""
    out = []
    for b in m.blocks:
        ref = b.origin
        if not isinstance(ref, ItemRef | CompactRef):
            out.append(_new(b, m, state))
            continue
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
            out.append(SentBlock(b.data, b, native=part, item=item))
            continue
        if b.tool_id is not None and payload.get("call_id") != b.tool_id:
            payload = {**payload, "call_id": b.tool_id}
        out.append(SentBlock(b.data, b, native=payload))
    return out


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
    flat: list[tuple[SentBlock, str, int | None]], req: Request
) -> list[tuple[SentBlock, str, int | None]]:
    """`normalize_history`: an "aborted" output right after each call that has none anywhere,
    then every output whose call is missing left out."""
    kinds = [_kind(sb) for sb, _role, _pos in flat]  # once per block: four passes read it
    outputs: dict[str, set[Any]] = {t: set() for t in OUTPUT_TYPES}  # call_id as read
    for (sb, _role, _pos), kind in zip(flat, kinds, strict=True):
        if kind in OUTPUT_TYPES:
            outputs[kind].add(sb.native.get("call_id"))
    answered: list[tuple[SentBlock, str, int | None]] = []
    answered_kinds: list[str | None] = []
    for entry, kind in zip(flat, kinds, strict=True):
        answered.append(entry)
        answered_kinds.append(kind)
        sb = entry[0]
        out_type = CALL_TYPES.get(kind or "")
        call_id = sb.native.get("call_id") if out_type is not None else None
        if out_type is not None and isinstance(call_id, str) and call_id not in outputs[out_type]:
            native = {"type": out_type, "call_id": call_id, "output": ABORTED}
            data = {"type": TOOL_RESULT, "tool_use_id": call_id, "content": ABORTED}
            answered.append((SentBlock(data, native=native, name=sb.name), "user", None))
            answered_kinds.append(out_type)
            req.answered.add(call_id)
    calls: dict[str, set[Any]] = {t: set() for t in OUTPUT_TYPES}
    for (sb, _role, _pos), kind in zip(answered, answered_kinds, strict=True):
        out_type = CALL_TYPES.get(kind or "")
        if out_type is not None:
            calls[out_type].add(sb.native.get("call_id"))
    kept = []
    for (sb, role, pos), kind in zip(answered, answered_kinds, strict=True):
        if kind in OUTPUT_TYPES and sb.native.get("call_id") not in calls[kind]:
            if sb.block is not None and pos is not None:
                req.left_out.append((pos, sb.block, "an output whose call is missing"))
            continue
        kept.append((sb, role, pos))
    return kept
