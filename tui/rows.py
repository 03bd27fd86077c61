"""The timeline's row table: one row per message, one per tool_use / tool_result block.

Built once per session state (O(n)); the widget only indexes into it. Summaries are made
lazily per visible row (`summary()`), so a 100k-message session costs nothing until drawn.
No Textual here: this is data.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import orjson

from repair.analysis import Analysis
from repair.codes import Severity
from repair.model import TOOL_RESULT, TOOL_USE, Block, Finding, Message, Session, block_text
from repair.sanitize import clean_line

MSG = "msg"
USE = "use"
RESULT = "result"


@dataclass(slots=True)
class Row:
    kind: str  # MSG | USE | RESULT
    mi: int  # message index
    bi: int | None  # block index (None for a message row)
    severity: Severity | None = None  # worst finding on this row
    findings: tuple[Finding, ...] = ()


@dataclass
class RowTable:
    rows: list[Row]
    message_row: list[int]  # message index -> its row index
    block_row: dict[tuple[int, int], int]  # (mi, bi) -> row index of a tool block
    finding_rows: list[int]  # row indices with findings, ascending

    def row_of(self, mi: int | None, bi: int | None = None) -> int | None:
        if mi is None or mi >= len(self.message_row):
            return None
        if bi is not None and (mi, bi) in self.block_row:
            return self.block_row[(mi, bi)]
        return self.message_row[mi]


def _is_tool_row(block: Block) -> bool:
    return (
        block.type == TOOL_USE
        or block.type == TOOL_RESULT
        or (block.tool_id is not None and block.type == "text")
    )


def build_rows(session: Session, analysis: Analysis | None = None) -> RowTable:
    rows: list[Row] = []
    message_row: list[int] = []
    block_row: dict[tuple[int, int], int] = {}
    for mi, msg in enumerate(session.messages):
        message_row.append(len(rows))
        rows.append(Row(MSG, mi, None))
        for bi, block in enumerate(msg.blocks):
            if _is_tool_row(block):
                block_row[(mi, bi)] = len(rows)
                rows.append(Row(USE if block.type == TOOL_USE else RESULT, mi, bi))
    table = RowTable(rows, message_row, block_row, [])
    return with_findings(table, analysis) if analysis is not None else table


def with_findings(table: RowTable, analysis: Analysis) -> RowTable:
    """The same rows with the analysis' findings marked: a new table (rows with findings are
    new Row objects), so a table already on screen is never mutated from a worker thread."""
    rows = list(table.rows)
    message_row, block_row = table.message_row, table.block_row
    marked: dict[int, Row] = {}
    for f in analysis.findings:
        ri = None
        if f.message_index is not None and f.message_index < len(message_row):
            if f.block_index is not None:
                ri = block_row.get((f.message_index, f.block_index))
            if ri is None:
                ri = message_row[f.message_index]
        if ri is None:
            continue
        row = marked.get(ri)
        if row is None:
            old = rows[ri]
            row = marked[ri] = rows[ri] = Row(old.kind, old.mi, old.bi)
        row.findings = (*row.findings, f)
        if row.severity is None or f.severity.rank < row.severity.rank:
            row.severity = f.severity
    finding_rows = sorted(marked)
    return RowTable(rows, message_row, block_row, finding_rows)


def fmt_time(msg: Message) -> str:
    t = msg.timestamp
    if t is None:
        return ""
    try:
        return datetime.fromtimestamp(t, UTC).strftime("%H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return "?"


def role_label(msg: Message) -> str:
    if msg.malformed is not None:
        return "malformed"
    return clean_line(str(msg.role or "?"), 9)


def _first_text(msg: Message) -> str:
    for b in msg.blocks:
        if b.type == "text" and not b.tool_id:
            text = block_text(b).strip()
            if text:
                return text
    return ""


def _inline_json(value, limit: int) -> str:
    try:
        text = orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        text = repr(value)
    return text[: limit * 4]


def summary(session: Session, row: Row, limit: int = 200) -> str:
    """One display line for the row, already sanitised and cut to `limit` characters."""
    msg = session.messages[row.mi]
    if row.kind == MSG:
        if msg.malformed is not None:
            return clean_line(f"malformed: {msg.malformed}", limit)
        kinds = [b.type for b in msg.blocks]
        text = _first_text(msg)
        tools = sum(1 for k in kinds if k in (TOOL_USE, TOOL_RESULT))
        extra = f" [+{tools} tool block{'s' if tools != 1 else ''}]" if tools and text else ""
        if not msg.blocks:
            text = "(empty content)"
        elif not text:
            others = [k for k in kinds if k not in (TOOL_USE, TOOL_RESULT)]
            text = (
                f"({', '.join(others)})"
                if others
                else f"({tools} tool block{'s' if tools != 1 else ''})"
            )
        prefix = "(hidden) " if msg.hidden else ""
        return clean_line(prefix + text + extra, limit)
    block = msg.blocks[row.bi]
    tid = block.tool_id or "?"
    if row.kind == USE:
        data = block.data if isinstance(block.data, dict) else {}
        args = _inline_json(data.get("input"), limit)
        return clean_line(f"{block.name or '?'} {tid} {args}", limit)
    text = block_text(block).strip() or "(empty)"
    err = "error " if block.is_error else ""
    return clean_line(f"{err}{tid} {text}", limit)
