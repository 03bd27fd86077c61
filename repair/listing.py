"""`histview messages`: the conversation as the provider receives it, as readable lines.

One entry per wire entry (`repair.wire`), numbered messages.N like the provider's errors: an
Anthropic or Bedrock message, a Gemini turn, a Chat Completions message (each tool result is
a `tool` message of its own), a Responses item. For a client target, the client's request:
what it adds is marked "+ ... (added by CLIENT)", what it leaves out "- ... (left out by
CLIENT: why)", what it changes "~ ... (CLIENT: how)". Messages that are not sent (hidden,
malformed, dropped by the client) are a count where they are. Findings under their message.
Every line is sanitised.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from . import targets, wire
from .jsonio import to_json
from .model import Block, Message, Session, block_text
from .place import Place, lines_words
from .sanitize import clean_line

if TYPE_CHECKING:
    from .analysis import Analysis


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _json(value: Any) -> str:
    """One line of JSON, numbers and text as read (jsonio); sanitised where it is shown."""
    return to_json(value).decode("utf-8")


# the widest `messages` names a message's lines in ("(lines 3, 5, 6 … 41 (12))" past it)
LINES_WIDTH = 40


def file_lines(blocks_or_message: Message | list[Block]) -> list[int]:
    """The JSONL lines a message (its own record and its blocks') or some blocks were read
    from, in file order; [] for a JSON document."""
    if isinstance(blocks_or_message, Message):
        m = blocks_or_message
        places = [Place.of(m.src), *(b.place() for b in m.blocks)]
    else:
        places = [b.place() for b in blocks_or_message]
    return sorted({p.line for p in places if p.line is not None})


def lines_of(blocks_or_message: Message | list[Block], width: int = LINES_WIDTH) -> str:
    """Where a message (or some blocks) is in the file: its lines (JSONL, `lines_words`) or
    its JSON place."""
    lines = file_lines(blocks_or_message)
    if lines:
        return lines_words(lines, width)
    if isinstance(blocks_or_message, Message):
        path = (blocks_or_message.src or {}).get("path")
    else:
        pointers = (b.place().pointer for b in blocks_or_message)
        path = next((p for p in pointers if p is not None), None)
    return Place(pointer=path).in_document() if isinstance(path, str) else ""


def block_line(k: int | None, b: Block | dict[str, Any] | str) -> str:
    """One block: [k] type id name and its input or text, on one line."""
    if not isinstance(b, Block):
        from .model import block_from_anthropic

        b = block_from_anthropic(b)
    bits = [f"[{k}] {b.type}" if k is not None else b.type]
    if b.tool_id:
        bits.append(b.tool_id)
    if b.name:
        bits.append(b.name)
    if b.is_error:
        bits.append("(error)")
    if b.type == "tool_use" and isinstance(b.data, dict):
        bits.append(_json(b.data.get("input"))[:300])
    else:
        text = block_text(b)
        if text or b.type == "text":
            bits.append(_json(text[:300]))  # one line, quoted: an empty text shows as ""
    return clean_line(" ".join(bits), 160)


def _empty_item(native: Any) -> bool:
    """A file's own item that holds no block (a Codex message item of `content: []`)."""
    return isinstance(native, dict) and native.get("content") == []


def _entry_role(item: Any) -> str:
    """How a wire entry names itself: its role, or a Responses item's type."""
    if isinstance(item, dict):
        if isinstance(item.get("role"), str) and item.get("type") in (None, "message"):
            role: str = item["role"]
            return role
        if isinstance(item.get("type"), str):
            kind: str = item["type"]
            return kind
    return "?"


def message_listing(session: Session, analysis: Analysis) -> list[str]:
    target = targets.get(analysis.target)
    shape = wire.wire_for(target.name)
    msgs = session.messages
    req = wire.request(session, target.name)
    entries = shape.render(req)
    number = req.numbers(len(msgs), shape)
    by_pos = analysis.by_message()
    left_out: dict[int, list[tuple[Block, str]]] = {}
    for pos, b, why in req.left_out:
        left_out.setdefault(pos, []).append((b, why))
    changed = {id(b): how for _, b, how in req.changed}
    who = req.sender
    to = wire.provider_of(target.name)
    head = f"{clean_line(session.path)}: {_plural(len(entries), 'message')} sent to {to}"
    if req.client:
        head += f" by {who}"
    head += f" (format {session.format}, target {target.name}"
    not_sent = sum(1 for k in number if k is None)
    if not_sent:
        head += f"; {_plural(not_sent, 'message')} of the file not sent"
    out = [head + ")"]

    def findings(positions: Iterable[int]) -> None:
        for pos in positions:
            for f in by_pos.get(pos, ()):
                block = f" content.{f.block_index}" if f.block_index is not None else ""
                if number[pos] is None:
                    block = f" ({f.place()})"
                out.append(f"  ! {f.severity} {f.code}{block}: {clean_line(f.detail)}")

    def gone(positions: Iterable[int]) -> None:
        for pos in positions:
            for b, why in left_out.get(pos, ()):
                out.append(f"    - {block_line(None, b)}  (left out by {who}: {why})")

    skipped: list[int] = []

    def flush_skipped() -> None:
        if not skipped:
            return
        reasons = dict.fromkeys(
            (f"malformed: {m.malformed}" if m.malformed else m.meta.get("hidden_reason"))
            or req.dropped.get(p)
            or (f"left out by {who}" if m.live else "hidden")
            for p, m in ((p, msgs[p]) for p in skipped)
        )
        where = "; ".join(w for w in (lines_of(msgs[p]) for p in skipped[:3]) if w)
        more = "; ..." if len(skipped) > 3 else ""
        out.append(
            f"   ({_plural(len(skipped), 'message')} not sent here: "
            f"{clean_line('; '.join(reasons), 120)}{f' [{where}{more}]' if where else ''})"
        )
        gone(skipped)
        findings(skipped)
        skipped.clear()

    # session messages not sent, shown where they are: before the first sent message that
    # comes after them in the file
    unsent = [p for p, k in enumerate(number) if k is None]
    u = 0
    shown: set[int] = set()  # positions whose findings are printed
    last_entry = {e.msg: n for n, e in enumerate(entries)}
    for n, e in enumerate(entries):
        sm = req.messages[e.msg]
        first = min(sm.positions) if sm.positions else None
        while first is not None and u < len(unsent) and unsent[u] < first:
            skipped.append(unsent[u])
            u += 1
        flush_skipped()
        blocks = [sm.blocks[i] for i in e.blocks]
        where = lines_of([b.block for b in blocks if b.block is not None])
        role = clean_line(_entry_role(e.item), 40)
        out.append(f"messages.{n} {role}" + (f"  ({where})" if where else ""))
        for j, i in enumerate(e.blocks):
            sb = sm.blocks[i]
            if sb.block is None and _empty_item(sb.native):  # sent as read, of no block
                out.append(f"    [{j}] {sb.type} (no content)")
            elif sb.block is None:
                out.append(f"  + {block_line(j, sb.data)}  (added by {who})")
            elif id(sb.block) in changed:
                out.append(f"  ~ {block_line(j, sb.block)}  ({who}: {changed[id(sb.block)]})")
            else:
                out.append("    " + block_line(j, sb.block))
        if last_entry[e.msg] == n:
            fresh = [p for p in sm.positions if p not in shown]
            shown.update(fresh)
            gone(fresh)
            findings(fresh)
    skipped.extend(unsent[u:])
    flush_skipped()
    if session.threads:
        out.append(
            f"({_plural(len(session.threads), 'more thread')} not shown: sidechains and "
            "subagents are sent in requests of their own)"
        )
    return out
