"""What the detail pane shows: the selected message's blocks, folded, and its findings.

Everything is built as Content from sanitised plain text (never markup), and capped, so a
multi-megabyte message never becomes a multi-megabyte widget.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content

from repair.jsonio import to_json
from repair.listing import LINES_WIDTH, file_lines
from repair.model import TOOL_RESULT, TOOL_USE, Finding, Message, Session, block_text
from repair.pairing import Pairing
from repair.place import Place, lines_words
from repair.preview import message_json
from repair.sanitize import clean, clean_line

from .rows import SEV_MARK, Row, fmt_time, result_at, role_label, use_at

MAX_LINES = 24  # lines shown per block before folding
MAX_CHARS = 4000  # characters shown per block before folding
RAW_MAX = 200_000  # characters of raw JSON shown
SEV_STYLE = {"error": "bold $text-error", "warning": "bold $text-warning", "info": "$text-primary"}


def fold(text: str, max_lines: int = MAX_LINES, max_chars: int = MAX_CHARS) -> tuple[str, str]:
    """(shown text, fold note) — the note says how much was left out."""
    total = len(text)
    cut = text[:max_chars]
    lines = cut.split("\n")
    shown = "\n".join(lines[:max_lines])
    hidden_chars = total - len(shown)
    if hidden_chars <= 0:
        return text, ""
    hidden_lines = text.count("\n") - shown.count("\n")
    if hidden_chars >= 2048:
        size = f"{hidden_chars / 1024:.1f} KB"
    else:
        size = f"{hidden_chars} chars"
    return shown, f"… folded: +{hidden_lines} lines, +{size}"


def _json(value) -> str:
    return to_json(value, indent=True).decode()


def finding_line(f: Finding) -> Content:
    where = f" block {f.block_index}" if f.block_index is not None else ""
    return Content.assemble(
        (f"{SEV_MARK[f.severity]} {f.severity} ", SEV_STYLE[f.severity]),
        (f.code, "bold"),
        (where, "dim"),
        "\n  ",
        clean(f.detail),
    )


def _named(mi: int, numbers: Sequence[int | None] | None) -> str:
    """A message as the timeline's number column and the findings name it: its messages.N,
    or its row of the file where that is not known or it is not sent."""
    k = numbers[mi] if numbers is not None and mi < len(numbers) else mi
    return f"message {k}" if k is not None else f"row {mi} (not sent)"


def _links(
    pairing: Pairing | None,
    mi: int,
    bi: int,
    block_type: str,
    numbers: Sequence[int | None] | None = None,
) -> str:
    """Where the other end is: a call names its result(s), a result its call."""
    if pairing is None:
        return ""
    if block_type == TOOL_USE:
        use = use_at(pairing, mi, bi)
        if use is None:
            return ""
        if not use.results:
            if use.partner is not None:
                p = use.partner
                return f"answered under a wrong id by {_named(p.mi, numbers)} block {p.bi}"
            return "no result anywhere"
        first, *more = use.results
        text = f"result in {_named(first.mi, numbers)} block {first.bi}"
        if more:
            extra = ", ".join(f"{_named(r.mi, numbers)} block {r.bi}" for r in more[:3])
            text += f"; {len(more)} more: {extra}{', …' if len(more) > 3 else ''}"
        return text
    res = result_at(pairing, mi, bi)
    if res is None:
        return ""
    use = res.use or res.partner
    if use is None:
        return "answers no call"
    how = "call" if res.use is not None else "likely call (wrong id)"
    return f"{how}: {_named(use.mi, numbers)} block {use.bi}, {use.name}"


def message_detail(
    session: Session,
    row: Row,
    findings: list[Finding],
    pairing: Pairing | None = None,
    numbers: Sequence[int | None] | None = None,
    width: int = LINES_WIDTH,
) -> Content:
    """`numbers`: each message's messages.N as the target receives it (findings name messages
    by it; None: not sent), None when not known yet. `width`: the pane's row, which the
    message's lines are named in (`lines_words`), as `histview messages` names them."""
    msg: Message = session.messages[row.mi]
    sent_as: int | None | str = (
        numbers[row.mi] if numbers is not None and row.mi < len(numbers) else "?"
    )
    parts: list[Content | str | tuple[str, str]] = []
    # named as the timeline's number column and the findings name it: messages.N
    if isinstance(sent_as, int):
        head = f"messages.{sent_as} · {role_label(msg)}"
    elif sent_as is None:
        head = f"not sent · {role_label(msg)}"
    else:
        head = f"message {row.mi} · {role_label(msg)}"
    t = fmt_time(msg)
    if t:
        head += f" · {t} UTC"
    if msg.hidden:
        head += " · hidden (not sent)"
    parts.append((head, "bold"))
    pointer = Place.of(msg.src).pointer
    lines = file_lines(msg)
    where = named = lines_words(lines, width) if lines else ""
    if not lines and pointer is not None:
        where = clean_line(f"at {pointer}", 60)
    if not msg.hidden and sent_as is None and msg.malformed is None:
        where += " · left out when sent"
    if sent_as != "?" and sent_as != row.mi:
        where += f" · row {row.mi} of the file"
    if where:
        # a list of lines the header's row cannot hold starts a row of its own, not cut
        # between two of its numbers where the row wraps
        own_row = len(lines) > 1 and len(head) + 2 + len(named) > width
        parts.append((("\n" if own_row else "  ") + where.removeprefix(" · "), "dim"))
    parts.append("\n")
    if msg.malformed is not None:
        parts.append(("malformed: ", "bold $text-error"))
        parts.append(clean(msg.malformed) + "\n")
    if findings:
        # the row's own findings first: the one the cursor is on is read without scrolling
        own = {id(f) for f in row.findings}
        findings = sorted(findings, key=lambda f: id(f) not in own)
        parts.append(("\nFindings\n", "bold underline"))
        for f in findings:
            parts.append(finding_line(f))
            parts.append("\n")
    for bi, block in enumerate(msg.blocks):
        selected = row.bi == bi
        marker = "▶ " if selected else ""
        parts.append("\n")
        link = ""
        if block.type == TOOL_USE:
            title = f"{marker}[{bi}] tool_use {block.name or '?'}  id {block.tool_id or '?'}"
            body = _json(block.data.get("input") if isinstance(block.data, dict) else None)
            link = _links(pairing, row.mi, bi, TOOL_USE, numbers)
        elif block.type == TOOL_RESULT:
            err = "  is_error" if block.is_error else ""
            title = f"{marker}[{bi}] tool_result for {block.tool_id or '?'}{err}"
            link = _links(pairing, row.mi, bi, TOOL_RESULT, numbers)
            body = block_text(block)
            if (
                not body
                and isinstance(block.data, dict)
                and block.data.get("content") not in (None, "")
            ):
                body = _json(block.data.get("content"))
        else:
            answer = f"  answers {block.tool_id}" if block.tool_id else ""
            if block.tool_id:
                link = _links(pairing, row.mi, bi, TOOL_RESULT, numbers)
            title = f"{marker}[{bi}] {block.type}{answer}"
            body = block_text(block)
            if not body and isinstance(block.data, dict):
                body = _json({k: v for k, v in block.data.items() if k != "type"})
        parts.append((clean_line(title, 200) + "\n", "bold reverse" if selected else "bold"))
        if link:
            parts.append(("→ " + clean_line(link, 200) + "\n", "italic $text-accent"))
        shown, note = fold(body)
        parts.append(clean(shown.expandtabs(4)) + "\n")
        if note:
            parts.append((note + "\n", "italic dim"))
    if not msg.blocks:
        parts.append(("\n(no content blocks)\n", "italic dim"))
    return Content.assemble(*parts)


def raw_json(msg: Message) -> Content:
    raw = msg.raw if msg.raw is not None else message_json(msg)
    text = _json(raw)
    note = ""
    if len(text) > RAW_MAX:
        note = f"\n… raw JSON cut: {(len(text) - RAW_MAX) / 1024:.0f} KB more"
        text = text[:RAW_MAX]
    return Content.assemble(("raw JSON (J to close)\n", "bold"), clean(text), (note, "italic dim"))
