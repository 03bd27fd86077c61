"""The timeline's row table: one row per message, one per tool_use / tool_result block.

Built once per session state (O(n)); the widget only indexes into it. Summaries, times and
names are made lazily per visible row, so a 100k-message session costs nothing until drawn.
The table is counted from the tool ids the loader read (`lazy_rows`): a message's rows,
and so its blocks, are made when one of them is first read (the rows on screen, a search);
a step's table is made from the one before (`update_rows`), its unmade rows left unmade.
No Textual here: this is data.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import repeat
from operator import add, attrgetter

from repair import codes
from repair.analysis import Analysis
from repair.codes import Severity
from repair.incremental import Shift
from repair.incremental import refound as step_refound
from repair.jsonio import to_json
from repair.model import TOOL_RESULT, TOOL_USE, Block, Finding, Message, Session, block_text
from repair.pairing import Pairing, Result, Use
from repair.sanitize import clean_line

MSG = "msg"
USE = "use"
RESULT = "result"

SEV_MARK = {"error": "●", "warning": "▲", "info": "○"}
# Findings about time (codes.Code.about_time): the row's time cell is drawn in the travel
# style with this glyph.
TRAVEL_GLYPH = "↶"


@dataclass(slots=True)
class Row:
    kind: str  # MSG | USE | RESULT
    mi: int  # message index
    bi: int | None  # block index (None for a message row)
    severity: Severity | None = None  # worst finding on this row
    findings: tuple[Finding, ...] = ()

    @property
    def severities(self) -> tuple[str, ...]:
        """Every severity of the row's findings, worst first."""
        present = {f.severity for f in self.findings}
        return tuple(s for s in Severity if s in present)

    @property
    def block(self) -> int:
        """The block index of a block row (a call or a result)."""
        if self.bi is None:
            raise ValueError("a message row has no block")
        return self.bi

    @property
    def travel(self) -> bool:
        """Stamped before its call, or earlier than the message before it."""
        return any(codes.get(f.code).about_time for f in self.findings)


# A row's key: its place in the session, (message, block) as one number that orders as the
# rows do and does not move when another message gains or loses rows (the lanes use it).
_KEY_SHIFT = 32
_BLOCK_MASK = (1 << _KEY_SHIFT) - 1


def row_key(mi: int, bi: int | None) -> int:
    return (mi << _KEY_SHIFT) + (0 if bi is None else bi + 1)


def key_message(key: int) -> int:
    return key >> _KEY_SHIFT


_bi = attrgetter("bi")


class LazyRows:
    """A session's rows, each message's made when one of them is first read: the row
    indices are counted from the tool ids its loader read (`Message.tool_ids` without the
    blocks); reading a row makes its message's rows from its blocks (tests/tui/
    test_rows_lazy.py holds them to `build_rows`'). A list's reads and `rows[ri] = row`."""

    __slots__ = ("_made", "_messages", "_message_row")

    def __init__(self, messages: list[Message], message_row: list[int], made: list[Row | None]):
        self._messages = messages
        self._message_row = message_row
        self._made = made  # None: its message's rows not made yet

    def __len__(self) -> int:
        return len(self._made)

    def __getitem__(self, ri: int) -> Row:
        row = self._made[ri]
        if row is None:
            if ri < 0:
                ri += len(self._made)
            self._make(bisect_left(self._message_row, ri + 1) - 1)
            row = self._made[ri]
            assert row is not None
        return row

    def __setitem__(self, ri: int, row: Row) -> None:
        self.__getitem__(ri)  # (its message's rows made first, not over it later)
        self._made[ri] = row

    def __iter__(self) -> Iterator[Row]:
        for ri in range(len(self._made)):
            yield self[ri]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyRows | list):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def copy(self) -> LazyRows:
        """Another table's rows: those made so far shared, the rest made apart."""
        return LazyRows(self._messages, self._message_row, list(self._made))

    def _make(self, mi: int) -> None:
        rows: list[Row] = []
        _add_rows(rows, mi, self._messages[mi])
        start = self._message_row[mi]
        end = self._message_row[mi + 1] if mi + 1 < len(self._message_row) else len(self._made)
        if len(rows) != end - start:
            raise ValueError(f"message {mi}: {len(rows)} rows, its tool ids counted {end - start}")
        self._made[start:end] = rows


Rows = list[Row] | LazyRows


class BlockRows:
    """(mi, bi) -> the row index of a tool block: found in the message's rows (a bisect),
    not stored, so that a step renumbering the rows after it costs nothing here."""

    __slots__ = ("message_row", "rows")

    def __init__(self, rows: Rows, message_row: list[int]) -> None:
        self.rows = rows
        self.message_row = message_row

    def get(self, key: tuple[int, int], default: int | None = None) -> int | None:
        mi, bi = key
        mr = self.message_row
        if not 0 <= mi < len(mr):
            return default
        lo = mr[mi] + 1
        hi = mr[mi + 1] if mi + 1 < len(mr) else len(self.rows)
        k = bisect_left(self.rows, bi, lo, hi, key=_bi)
        return k if k < hi and self.rows[k].bi == bi else default

    def __getitem__(self, key: tuple[int, int]) -> int:
        got = self.get(key)
        if got is None:
            raise KeyError(key)
        return got

    def __contains__(self, key: tuple[int, int]) -> bool:
        return self.get(key) is not None


@dataclass
class RowTable:
    rows: Rows
    message_row: list[int]  # message index -> its row index
    finding_rows: list[int]  # row indices with findings, ascending
    has_time: bool = False  # some message carries a timestamp
    mark_width: int = 1  # most severities on one row (the width of the mark column)

    @property
    def block_row(self) -> BlockRows:
        """(mi, bi) -> row index of a tool block."""
        return BlockRows(self.rows, self.message_row)

    def key(self, ri: int) -> int:
        row = self.rows[ri]
        return row_key(row.mi, row.bi)

    def row_of_key(self, key: int) -> int | None:
        mi, b = key >> _KEY_SHIFT, key & _BLOCK_MASK
        return self.row_of(mi) if b == 0 else self.block_row.get((mi, b - 1))

    def message_rows(self, mi: int) -> range:
        """The row indices of message `mi`: its message row and its block rows."""
        mr = self.message_row
        return range(mr[mi], mr[mi + 1] if mi + 1 < len(mr) else len(self.rows))

    def row_of(self, mi: int | None, bi: int | None = None) -> int | None:
        if mi is None or mi >= len(self.message_row):
            return None
        if bi is not None:
            got = self.block_row.get((mi, bi))
            if got is not None:
                return got
        return self.message_row[mi]

    def first_problem(self) -> int | None:
        """The first row with an error, else the first with a warning."""
        for sev in ("error", "warning"):
            for ri in self.finding_rows:
                if sev in self.rows[ri].severities:
                    return ri
        return None


def is_tool_row(block: Block) -> bool:
    """A call, a result, or a block an adapter gave a tool id (Cline's text answers): the
    blocks `Message.tool_ids` names, so that its ids count a message's rows."""
    return block.type == TOOL_USE or block.type == TOOL_RESULT or bool(block.tool_id)


def build_rows(session: Session, analysis: Analysis | None = None) -> RowTable:
    rows: list[Row] = []
    message_row: list[int] = []
    has_time = False
    for mi, msg in enumerate(session.messages):
        message_row.append(len(rows))
        if not has_time and msg.meta.get("timestamp") is not None:
            has_time = True
        _add_rows(rows, mi, msg)
    table = RowTable(rows, message_row, [], has_time)
    return with_findings(table, analysis) if analysis is not None else table


def lazy_rows(session: Session) -> RowTable:
    """`build_rows(session)`, its rows made when read (`LazyRows`): a message whose tool
    ids are known is counted from them, its blocks not made; any other has its rows made
    now."""
    message_row: list[int] = []
    made: list[Row | None] = []
    has_time = False
    for mi, msg in enumerate(session.messages):
        message_row.append(len(made))
        if not has_time and msg.meta.get("timestamp") is not None:
            has_time = True
        ids = msg._tool_ids  # (known without the blocks where the loader read them)
        if ids is None:
            _add_rows(made, mi, msg)
        else:
            made.append(None)
            made += [None] * (len(ids[0]) + len(ids[1]))
    return RowTable(LazyRows(session.messages, message_row, made), message_row, [], has_time)


def _add_rows(rows: list[Row] | list[Row | None], mi: int, msg: Message) -> None:
    rows.append(Row(MSG, mi, None))
    if not msg.holds_tool_blocks():  # (its blocks are not made for nothing)
        return
    for bi, block in enumerate(msg.blocks):
        if is_tool_row(block):
            rows.append(Row(USE if block.type == TOOL_USE else RESULT, mi, bi))


def update_rows(before: RowTable, session: Session, changed: Collection[int] | Shift) -> RowTable:
    """The rows of `session`, made from `before` (the rows without findings of a session
    with as many messages) by building again the rows of the messages at `changed`: the
    other rows are reused, the row indices after a changed message move by what it
    gained or lost. Where messages came or went (a `Shift`), the rows of the stretch are
    built, and those after it are copies at their new message positions. The rows of
    `before` not made yet (`LazyRows`) stay unmade, their messages' blocks too."""
    msgs = session.messages
    old_mr = before.message_row
    fits = len(old_mr) + changed.delta if isinstance(changed, Shift) else len(old_mr)
    if fits != len(msgs):
        return lazy_rows(session)
    old = before.rows
    old_made: Sequence[Row | None] = old._made if isinstance(old, LazyRows) else old
    if isinstance(changed, Shift):
        made, message_row = _shifted_rows(old_made, old_mr, msgs, changed)
    else:
        made, message_row = _changed_rows(old_made, old_mr, msgs, changed)
    has_time = any(m.meta.get("timestamp") is not None for m in msgs)
    return RowTable(LazyRows(msgs, message_row, made), message_row, [], has_time)


def _changed_rows(
    old_made: Sequence[Row | None], old_mr: list[int], msgs: list[Message], changed: Collection[int]
) -> tuple[list[Row | None], list[int]]:
    rows: list[Row | None] = []
    message_row: list[int] = []
    shift = 0
    start = 0  # the first message not copied yet
    for mi in sorted(changed):
        end = old_mr[mi]
        rows += old_made[old_mr[start] if start < len(old_mr) else len(old_made) : end]
        message_row += old_mr[start:mi] if not shift else [r + shift for r in old_mr[start:mi]]
        message_row.append(len(rows))
        _add_rows(rows, mi, msgs[mi])
        after = old_mr[mi + 1] if mi + 1 < len(old_mr) else len(old_made)
        shift = len(rows) - after
        start = mi + 1
    if start < len(old_mr):
        rows += old_made[old_mr[start] :]
        message_row += old_mr[start:] if not shift else [r + shift for r in old_mr[start:]]
    return rows, message_row


def _shifted_rows(
    old_made: Sequence[Row | None], old_mr: list[int], msgs: list[Message], shift: Shift
) -> tuple[list[Row | None], list[int]]:
    a = old_mr[shift.start] if shift.start < len(old_mr) else len(old_made)
    b = old_mr[shift.old_stop] if shift.old_stop < len(old_mr) else len(old_made)
    rows = list(old_made[:a])
    message_row = old_mr[: shift.start]
    for mi in range(shift.start, shift.stop):
        message_row.append(len(rows))
        _add_rows(rows, mi, msgs[mi])
    moved = len(rows) - b  # what the rows after the stretch moved by
    d = shift.delta
    rows += [r if r is None else Row(r.kind, r.mi + d, r.bi) for r in old_made[b:]]
    message_row += (
        [r + moved for r in old_mr[shift.old_stop :]] if moved else old_mr[shift.old_stop :]
    )
    return rows, message_row


def with_findings(table: RowTable, analysis: Analysis) -> RowTable:
    """The same rows with the analysis' findings marked: a new table (rows with findings are
    new Row objects), so a table already on screen is never mutated from a worker thread."""
    rows = table.rows.copy()
    marked = _mark(rows, table.message_row, analysis.findings)
    finding_rows = sorted(marked)
    width = max((len(r.severities) for r in marked.values()), default=1)
    return RowTable(rows, table.message_row, finding_rows, table.has_time, width)


def _mark(rows: Rows, message_row: list[int], findings: Iterable[Finding]) -> dict[int, Row]:
    """Mark `findings` on their rows (each marked row a new Row, in `rows`): the rows."""
    block_row = BlockRows(rows, message_row)
    marked: dict[int, Row] = {}
    for f in findings:
        ri = None
        if f.position is not None and f.position < len(message_row):
            if f.block_index is not None:
                ri = block_row.get((f.position, f.block_index))
            if ri is None:
                ri = message_row[f.position]
        if ri is None:
            continue
        row = marked.get(ri)
        if row is None:
            old = rows[ri]
            row = marked[ri] = rows[ri] = Row(old.kind, old.mi, old.bi)
        row.findings = (*row.findings, f)
        if row.severity is None or f.severity.rank < row.severity.rank:
            row.severity = f.severity
    return marked


def refound(
    before: RowTable,
    was: list[Finding],
    base: RowTable,
    analysis: Analysis,
    changed: Collection[int],
) -> RowTable | None:
    """`with_findings(base, analysis)`, made from `before` (`was` marked on the rows before
    a step that changed the messages at `changed`, as many as before; `base` its rows
    without findings): only the rows of the changed messages and of those where a finding
    came or went are made and marked again (the analysis after a step keeps the others as
    the same objects), the row indices after them moved. None where `base` does not fit."""
    msgs = base.rows._messages if isinstance(base.rows, LazyRows) else None
    old_mr = before.message_row
    if msgs is None or len(old_mr) != len(msgs) or len(base.message_row) != len(msgs):
        return None
    near = step_refound(was, analysis.findings).positions().union(changed)
    at = {mi for mi in near if mi is not None and mi < len(msgs)}
    if len(at) * 2 > len(analysis.findings):
        return None  # (most findings made again: as cheap marked whole)
    old = before.rows
    made, message_row = _changed_rows(
        old._made if isinstance(old, LazyRows) else old, old_mr, msgs, at
    )
    if message_row != base.message_row:
        return None
    rows = LazyRows(msgs, message_row, made)
    findings = analysis.findings
    redo: list[Finding] = []
    for mi in sorted(at):
        k = bisect_left(findings, mi, key=_at)
        while k < len(findings) and findings[k].position == mi:
            redo.append(findings[k])
            k += 1
    marked = _mark(rows, message_row, redo)
    # the rows with findings before: those of the messages marked again left out, the
    # others moved by what the messages before them gained or lost
    finding_rows: list[int] = []
    done = 0  # old finding rows taken up to here
    shift = 0
    old_rows = before.finding_rows
    width = before.mark_width
    for mi in sorted(at):
        start, end = old_mr[mi], old_mr[mi + 1] if mi + 1 < len(old_mr) else len(old)
        k = bisect_left(old_rows, start, lo=done)
        part = old_rows[done:k]
        finding_rows += part if not shift else list(map(add, part, repeat(shift, len(part))))
        done = bisect_left(old_rows, end, lo=k)
        if width > 1 and any(len(old[ri].severities) >= width for ri in old_rows[k:done]):
            width = 0  # (counted again below)
        shift = (message_row[mi + 1] if mi + 1 < len(message_row) else len(rows)) - end
    part = old_rows[done:]
    finding_rows += part if not shift else list(map(add, part, repeat(shift, len(part))))
    finding_rows = sorted([*finding_rows, *marked]) if marked else finding_rows
    if width == 0:
        width = max((len(rows[ri].severities) for ri in finding_rows), default=1)
    width = max([width, *(len(r.severities) for r in marked.values())])
    return RowTable(rows, message_row, finding_rows, base.has_time, width)


def _at(f: Finding) -> int:
    return f.position if f.position is not None else -1


# ---------------------------------------------------------------- time


def clock(t: float | None) -> str:
    """HH:MM:SS (UTC, as `check` prints), '' when there is no time."""
    if t is None:
        return ""
    try:
        return datetime.fromtimestamp(t, UTC).strftime("%H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return "?"


def fmt_time(msg: Message) -> str:
    return clock(msg.timestamp)


def delta(seconds: float) -> str:
    """A signed duration in at most 5 characters: +0.6s, -1.9s, +42s, +12m, +5h, +3d."""
    sign = "-" if seconds < 0 else "+"
    s = abs(seconds)
    if s < 9.95:
        return f"{sign}{s:.1f}s"
    if s < 99.5:
        return f"{sign}{s:.0f}s"
    if s < 3600:
        return f"{sign}{min(s / 60, 59):.0f}m"
    if s < 86400:
        return f"{sign}{min(s / 3600, 23):.0f}h"
    d = s / 86400
    return f"{sign}{d:.0f}d" if d < 99.5 else f"{sign}99d"


def block_time(session: Session, block: Block) -> float | None:
    adapter = session.adapter
    fn = getattr(adapter, "block_time", None)
    return fn(session, block) if fn is not None else None


def row_time(session: Session, row: Row) -> float | None:
    """The row's own time: a message's timestamp; a block's own time where the format
    stamps blocks; a result without one takes its message's time."""
    msg = session.messages[row.mi]
    if row.kind == MSG:
        return msg.timestamp
    own = block_time(session, msg.blocks[row.block])
    if own is not None or row.kind == USE:
        return own
    return msg.timestamp


def previous_time(session: Session, mi: int, look: int = 20) -> float | None:
    for k in range(mi - 1, max(mi - 1 - look, -1), -1):
        t = session.messages[k].timestamp
        if t is not None:
            return t
    return None


def result_at(pairing: Pairing | None, mi: int, bi: int) -> Result | None:
    if pairing is None:
        return None
    for res in pairing.results_by_message.get(mi, ()):
        if res.bi == bi:
            return res
    return None


def use_at(pairing: Pairing | None, mi: int, bi: int) -> Use | None:
    if pairing is None:
        return None
    for use in pairing.uses_by_message.get(mi, ()):
        if use.bi == bi:
            return use
    return None


def time_cell(session: Session, row: Row, pairing: Pairing | None, relative: bool) -> str:
    """What the time column shows: the clock, or (narrow) the time since the previous
    message (message rows), since the call (result rows), since its message (call rows)."""
    t = row_time(session, row)
    if t is None:
        return ""
    if not relative:
        return clock(t)
    msg = session.messages[row.mi]
    if row.kind == MSG:
        ref = previous_time(session, row.mi)
        return delta(t - ref) if ref is not None else "0s"
    if row.kind == USE:
        return delta(t - msg.timestamp) if msg.timestamp is not None else ""
    res = result_at(pairing, row.mi, row.block)
    use = None if res is None else res.use or res.partner
    if use is None:
        return ""
    ref = block_time(session, use.block)
    if ref is None:
        ref = session.messages[use.mi].timestamp
    return delta(t - ref) if ref is not None else ""


# ---------------------------------------------------------------- text


def short_id(tid: str | None, limit: int = 17) -> str:
    """A tool id fit to `limit` by cutting its middle (toolu_01XD…CtjfIZ): both ends stay,
    since ids differ at the end as often as at the start."""
    text = clean_line(tid or "?")
    if len(text) <= limit:
        return text
    limit = max(limit, 5)
    tail = min(6, (limit - 1) // 2)
    return text[: limit - 1 - tail] + "…" + text[len(text) - tail :]


ROLE_SHORT = {"assistant": "asst", "system": "sys", "developer": "dev", "malformed": "bad"}


def role_label(msg: Message, narrow: bool = False) -> str:
    label = "malformed" if msg.malformed is not None else clean_line(str(msg.role or "?"), 9)
    return ROLE_SHORT.get(label, label[:4]) if narrow else label


def _first_text(msg: Message) -> str:
    for b in msg.blocks:
        if b.type == "text" and not b.tool_id:
            text = block_text(b).strip()
            if text:
                return text
    return ""


def _inline_json(value, limit: int) -> str:
    return to_json(value).decode()[: limit * 4]


def tool_name(session: Session, row: Row, pairing: Pairing | None) -> str | None:
    """The tool's name: the call's own, or for a result its call's (when paired)."""
    block = session.messages[row.mi].blocks[row.block]
    if block.type == TOOL_USE:
        return block.name
    res = result_at(pairing, row.mi, row.block)
    if res is not None:
        use = res.use or res.partner
        if use is not None:
            return use.block.name
    return None


def summary(session: Session, row: Row, limit: int = 200, pairing: Pairing | None = None) -> str:
    """One display line for the row, already sanitised and cut to `limit` characters.
    A block row reads name, id, then arguments or text: the id is shortened in its middle
    and never cut from its end."""
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
    block = msg.blocks[row.block]
    name = tool_name(session, row, pairing)
    if row.kind == USE:
        data = block.data if isinstance(block.data, dict) else {}
        rest = _inline_json(data.get("input"), limit)
    else:
        rest = ("error " if block.is_error else "") + (block_text(block).strip() or "(empty)")
    head = clean_line(name, 40) + " " if name else ""
    room = limit - len(head)
    if room < 12 and head:  # too narrow for both: the name gives way, the id stays whole
        head = clean_line(head.rstrip(), max(limit - 13, 4)) + " "
        room = limit - len(head)
    tid = short_id(block.tool_id, 64 if room >= 60 else max(min(17, room - 1), 5))
    return clean_line(f"{head}{tid} {rest}", limit)


# ---------------------------------------------------------------- search


def row_matches(session: Session, row: Row, q: str, pairing: Pairing | None = None) -> bool:
    """Case-insensitive: `q` is in the row's tool id, its tool's name (a result's call's, as
    the row shows it) or its text."""
    msg = session.messages[row.mi]
    if row.kind == RESULT:
        name = tool_name(session, row, pairing)
        if name and q in name.lower():
            return True
    if row.bi is None:
        if msg.malformed and q in msg.malformed.lower():
            return True
        blocks = [b for b in msg.blocks if b.tool_id is None]
    else:
        blocks = [msg.blocks[row.bi]]
    for b in blocks:
        if b.tool_id and q in b.tool_id.lower():
            return True
        if b.name and q in b.name.lower():
            return True
        if q in block_text(b).lower():
            return True
    return False


def search_rows(
    session: Session,
    table: RowTable,
    query: str,
    cancelled: Callable[[], bool] | None = None,
    pairing: Pairing | None = None,
) -> list[int] | None:
    """Every row matching `query`, ascending (None when cancelled). Runs in a worker."""
    q = query.lower()
    out: list[int] = []
    for ri, row in enumerate(table.rows):
        if cancelled is not None and ri % 2048 == 0 and cancelled():
            return None
        if row_matches(session, row, q, pairing):
            out.append(ri)
    return out
