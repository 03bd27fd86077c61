"""`histview messages`: the conversation as the provider receives it, as readable lines.

Numbered messages.N like the provider's errors. For a client target whose sending is emulated
(`repair.clients`), the client's request: what it adds is marked "+ ... (added by CLIENT)",
what it leaves out "- ... (left out by CLIENT: why)". Messages that are not sent (hidden,
malformed, dropped by the client) are a count where they are. Findings under their message.
Every line is sanitised.
"""

from __future__ import annotations

import orjson

from . import clients, targets, wire
from .model import Block, Message, Session, block_text
from .sanitize import clean_line


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _json(value) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return repr(value)


def lines_of(m: Message) -> str:
    """Where a message is in the file: its lines (JSONL) or its JSON place."""
    from .cli import pointer_place

    lines = sorted(
        {
            src["line"]
            for src in [m.src, *(b.src for b in m.blocks)]
            if isinstance(src, dict) and isinstance(src.get("line"), int)
        }
    )
    if lines:
        if len(lines) == 1:
            return f"line {lines[0]}"
        if len(lines) <= 4:
            return "lines " + ", ".join(map(str, lines))
        return f"lines {lines[0]}-{lines[-1]} ({len(lines)} records)"
    path = (m.src or {}).get("path")
    return pointer_place(path) if isinstance(path, str) and path.startswith("/") else ""


def block_line(k: int | None, b: Block | dict | str) -> str:
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


def message_listing(session: Session, analysis) -> list[str]:
    target = targets.get(analysis.target)
    msgs = session.messages
    send = clients.sender(target.name)
    req = send(msgs) if send is not None else None
    number = req.numbers(len(msgs)) if req is not None else wire.numbers(msgs, target.name)
    by_pos = analysis.by_message()
    left_out: dict[int, list[tuple[Block, str]]] = {}
    if req is not None:
        for pos, b, why in req.left_out:
            left_out.setdefault(pos, []).append((b, why))
    who = req.client if req is not None else target.provider
    n_sent = len(req.messages) if req is not None else len({k for k in number if k is not None})
    to = targets.get(target.rules).provider
    head = f"{clean_line(session.path)}: {_plural(n_sent, 'message')} sent to {to}"
    if req is not None:
        head += f" by {req.client}"
    head += f" (format {session.format}, target {target.name}"
    not_sent = sum(1 for k in number if k is None)
    if not_sent:
        head += f"; {_plural(not_sent, 'message')} of the file not sent"
    out = [head + ")"]

    def findings(positions) -> None:
        for pos in positions:
            for f in by_pos.get(pos, ()):
                block = f" content.{f.block_index}" if f.block_index is not None else ""
                if number[pos] is None:
                    block = f" ({f.place()})"
                out.append(f"  ! {f.severity} {f.code}{block}: {clean_line(f.detail)}")

    def gone(positions) -> None:
        for pos in positions:
            for b, why in left_out.get(pos, ()):
                out.append(f"    - {block_line(None, b)}  (left out by {who}: {why})")

    skipped: list[int] = []

    def flush_skipped() -> None:
        if not skipped:
            return
        reasons = dict.fromkeys(
            (f"malformed: {m.malformed}" if m.malformed else m.meta.get("hidden_reason"))
            or (f"left out by {who}" if m.live else "hidden")
            for m in (msgs[p] for p in skipped)
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

    printed: set[int] = set()
    for pos, m in enumerate(msgs):
        k = number[pos]
        if k is None:
            skipped.append(pos)
            continue
        flush_skipped()
        if req is None:
            where = lines_of(m)
            out.append(f"messages.{k} {m.role}" + (f"  ({where})" if where else ""))
            out.extend("    " + block_line(j, b) for j, b in enumerate(m.blocks))
            findings([pos])
            continue
        if k in printed:
            continue
        printed.add(k)
        sm = req.messages[k]
        lines = sorted(
            {
                b.block.src["line"]
                for b in sm.blocks
                if b.block is not None and isinstance((b.block.src or {}).get("line"), int)
            }
        )
        where = lines_of(Message(role=sm.role, blocks=tuple(b.block for b in sm.blocks if b.block)))
        out.append(f"messages.{k} {sm.role}" + (f"  ({where})" if lines else ""))
        for j, b in enumerate(sm.blocks):
            if b.block is None:
                out.append(f"  + {block_line(j, b.data)}  (added by {who})")
            else:
                out.append("    " + block_line(j, b.block))
        gone(sm.positions)
        findings(sm.positions)
    flush_skipped()
    if session.threads:
        out.append(
            f"({_plural(len(session.threads), 'more thread')} not shown: sidechains and "
            "subagents are sent in requests of their own)"
        )
    return out
