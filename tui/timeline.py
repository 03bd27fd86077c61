"""The timeline: one Line-API ScrollView over the precomputed row table.

Only visible rows are rendered; each rendered row is a Strip cached per (row, cursor,
width, version). Moving the cursor repaints the old and the new row only. Every colour
comes from COMPONENT_CLASSES (styled in histview.tcss). Session text reaches the screen only
as plain Segments of sanitised text: nothing in it is parsed as markup.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import var
from textual.scroll_view import ScrollView
from textual.strip import Strip

from repair.codes import Severity
from repair.model import Session
from repair.pairing import Pairing

from .lanes import (
    LANE_KINDS,
    OVERFLOW,
    OVERFLOW_GLYPH,
    OVERFLOW_TEXT,
    STATES,
    LaneLayout,
    legend_sample,
)
from .rows import (
    MSG,
    SEV_MARK,
    TRAVEL_GLYPH,
    USE,
    Row,
    RowTable,
    role_label,
    summary,
    time_cell,
)

BACKGROUNDS = {"timeline--cursor", "timeline--match", "timeline--lane-selected"}
GUTTER = 6  # lanes drawn at most; a pairing in a further lane shows an overflow mark
WIDE = 60  # from this timeline width on: clock times and full role names


@dataclass
class TimelineState:
    session: Session
    table: RowTable
    lanes: LaneLayout | None  # None until the analysis is ready
    version: int
    pairing: Pairing | None = None
    # each message's messages.N as the target receives it (None: not sent); the number
    # column shows it, so `messages.7` in an error text is row "7"
    numbers: list[int | None] | None = None
    _width: int = 0

    def number(self, mi: int) -> str:
        """What the number column shows for message `mi`: its messages.N, `·` when it is
        not sent, its position until the analysis numbers it."""
        if self.numbers is None:
            return str(mi)
        k = self.numbers[mi] if mi < len(self.numbers) else None
        return "·" if k is None else str(k)

    @property
    def index_width(self) -> int:
        if not self._width:
            if self.numbers is None:
                top = len(self.session.messages) - 1
            else:
                top = max((k for k in self.numbers if k is not None), default=0)
            self._width = len(str(max(top, 0)))
        return self._width


@dataclass(frozen=True)
class Columns:
    """Widths of the row's columns at one timeline width (left to right)."""

    marks: int
    index: int
    lanes: int
    time: int  # 0: the session has no times
    relative: bool  # the time column shows durations, not clock times
    label: int

    @property
    def text_start(self) -> int:
        lanes = self.lanes + 1 if self.lanes else 0
        time = self.time + 1 if self.time else 0
        return self.marks + self.index + 1 + lanes + time + self.label + 1


def columns(state: TimelineState, width: int) -> Columns:
    table = state.table
    lanes = min(GUTTER, state.lanes.used_lanes) if state.lanes is not None else 0
    wide = width >= WIDE
    time = 0
    if table.has_time:
        time = 9 if wide else 6  # HH:MM:SS or +1.9s, then the travel glyph
    return Columns(table.mark_width, state.index_width, lanes, time, not wide, 9 if wide else 4)


class Timeline(ScrollView, can_focus=True):
    COMPONENT_CLASSES = {
        "timeline--cursor",
        "timeline--index",
        "timeline--time",
        "timeline--travel",
        "timeline--user",
        "timeline--assistant",
        "timeline--other",
        "timeline--block",
        "timeline--hidden",
        "timeline--malformed",
        "timeline--error",
        "timeline--warning",
        "timeline--info",
        "timeline--match",
        "timeline--lane-selected",
        *(f"lane--{s}" for s in STATES),
    }

    BINDINGS = [
        Binding("j,down", "cursor(1)", "Next row", show=False, tooltip="next row", id="next_row"),
        Binding(
            "k,up", "cursor(-1)", "Previous row", show=False, tooltip="previous row", id="prev_row"
        ),
        Binding("g,home", "top", "Top", show=False, tooltip="first row", id="top"),
        Binding("G,end", "bottom", "Bottom", show=False, tooltip="last row", id="bottom"),
        Binding(
            "pagedown", "page(1)", "Page down", show=False, tooltip="page down", id="page_down"
        ),
        Binding("pageup", "page(-1)", "Page up", show=False, tooltip="page up", id="page_up"),
    ]

    cursor: var[int] = var(0, init=False)

    class RowChanged(Message):
        """The cursor moved to another row."""

        def __init__(self, row: Row | None) -> None:
            super().__init__()
            self.row = row

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.state: TimelineState | None = None
        self.view: list[int] = []  # visible rows (indices into table.rows)
        self.findings_only = False
        self.match = ""  # search text highlighted in the rows (lower case)
        self._cache: LRUCache[tuple, Strip] = LRUCache(2048)
        self._styles: dict[str, Style] = {}
        self._selected_lane: tuple[int, int, int] | None = None  # (lane, start, end)
        self.moved_at = 0.0  # when the cursor last moved (a message's clock)

    # model
    def set_state(self, state: TimelineState | None, keep_row: int | None = None) -> None:
        self.state = state
        self._cache.clear()
        self._rebuild_view(keep_row)

    def _rebuild_view(self, keep_row: int | None = None) -> None:
        table = self.state.table if self.state else None
        if table is None:
            self.view = []
        elif self.findings_only:
            self.view = table.finding_rows
        else:
            self.view = range(len(table.rows))  # type: ignore[assignment]
        self.virtual_size = Size(self.size.width, len(self.view))
        self._cache.clear()
        new = 0
        if keep_row is not None and self.view:
            new = self._view_index(keep_row)
        self.set_reactive(Timeline.cursor, min(new, max(len(self.view) - 1, 0)))
        self.refresh()
        self._cursor_changed()

    def _view_index(self, row: int) -> int:
        """View position of table row `row`, or of the nearest visible row at/after it."""
        if isinstance(self.view, range):
            return max(0, min(row, len(self.view) - 1))
        from bisect import bisect_left

        k = bisect_left(self.view, row)
        return min(k, len(self.view) - 1)

    def set_findings_only(self, on: bool) -> None:
        current = self.current_row_index
        self.findings_only = on
        self._rebuild_view(current)

    def set_match(self, text: str) -> None:
        """Highlight `text` in the rows (case-insensitive); '' clears."""
        if text.lower() != self.match:
            self.match = text.lower()
            self._cache.clear()
            self.refresh()

    @property
    def current_row_index(self) -> int | None:
        if not self.view or self.cursor >= len(self.view):
            return None
        return self.view[self.cursor]

    @property
    def current_row(self) -> Row | None:
        ri = self.current_row_index
        return None if ri is None or self.state is None else self.state.table.rows[ri]

    def go_to_row(self, row: int) -> None:
        if self.view:
            self.cursor = self._view_index(row)

    # cursor
    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh_line(old - self.scroll_offset.y)
        self.refresh_line(new - self.scroll_offset.y)
        self._cursor_changed()

    def _cursor_changed(self) -> None:
        self.scroll_to_cursor()
        self._select_lane()
        changed = self.RowChanged(self.current_row)
        self.moved_at = changed.time
        self.post_message(changed)

    def _select_lane(self) -> None:
        """Highlight the lane of the row under the cursor (repaints the visible rows only
        when it changes)."""
        sel = None
        ri = self.current_row_index
        if self.state is not None and self.state.lanes is not None and ri is not None:
            lanes = self.state.lanes
            iv = lanes.own_at(ri)
            if iv is not None and iv.lane < GUTTER:
                sel = (iv.lane, *lanes.rows_of(iv))
        if sel != self._selected_lane:
            self._selected_lane = sel
            self.refresh()

    def scroll_to_cursor(self) -> None:
        top = self.scroll_offset.y
        height = max(self.scrollable_content_region.height, 1)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)

    def action_cursor(self, delta: int) -> None:
        if self.view:
            self.cursor = max(0, min(len(self.view) - 1, self.cursor + delta))

    def action_top(self) -> None:
        self.cursor = 0

    def action_bottom(self) -> None:
        if self.view:
            self.cursor = len(self.view) - 1

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(self.scrollable_content_region.height - 1, 1))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        pos = offset.y + self.scroll_offset.y
        if 0 <= pos < len(self.view):
            self.cursor = pos
        self.focus()

    # rendering
    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._cache.clear()

    def on_resize(self, event: events.Resize) -> None:
        self.virtual_size = Size(self.size.width, len(self.view))
        # (the drawn rows are kept: a row's strip is cached per width, and the first layout
        # of a session's rows resizes the timeline to the width they were just drawn at)
        # a pane opened below (the plan) or a smaller terminal: the cursor's row stays shown
        self.call_after_refresh(self.scroll_to_cursor)

    def _style(self, name: str) -> Style:
        st = self._styles.get(name)
        if st is None:
            if name in BACKGROUNDS:
                # only the background (blended, so `$accent 35%` works) and the text style:
                # the row keeps its own colours
                full = self.get_component_rich_style(name)
                st = Style(
                    bgcolor=full.bgcolor,
                    bold=full.bold,
                    underline=full.underline,
                    reverse=full.reverse,
                )
            else:
                st = self.get_component_rich_style(name, partial=True)
            self._styles[name] = st
        return st

    def render_line(self, y: int) -> Strip:
        pos = y + self.scroll_offset.y
        width = self.scrollable_content_region.width
        if self.state is None or pos >= len(self.view):
            return Strip.blank(width, self.rich_style)
        ri = self.view[pos]
        selected = pos == self.cursor
        lane = self._selected_lane
        lane_key = lane if lane is not None and lane[1] <= ri <= lane[2] else None
        key = (ri, selected, width, self.state.version, lane_key)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._cache[key] = self._render_row(self.state, ri, selected, width, lane_key)
        fill = self.rich_style + self._style("timeline--cursor") if selected else self.rich_style
        return strip.crop_extend(0, width, fill).apply_offsets(0, pos)

    def _render_row(
        self,
        state: TimelineState,
        ri: int,
        selected: bool,
        width: int,
        lane: tuple[int, int, int] | None,
    ) -> Strip:
        row = state.table.rows[ri]
        msg = state.session.messages[row.mi]
        cols = columns(state, width)
        base = self.rich_style
        cursor = self._style("timeline--cursor") if selected else None
        segs: list[Segment] = []

        def add(text: str, *names: str | None) -> None:
            style = base
            for name in names:
                if name:
                    style = style + self._style(name)
            if cursor:
                style = style + cursor
                if "timeline--match" in names:  # a match stays visible on the cursor row
                    style = style + self._style("timeline--match")
            segs.append(Segment(text, style))

        # every severity of the row, worst first
        sevs = row.severities
        for sev in sevs:
            add(SEV_MARK[sev], f"timeline--{sev}")
        add(" " * (cols.marks - len(sevs)))
        # messages.N (the number errors use); a block row shows it too where its message row
        # is filtered out
        if row.kind == MSG:
            add(f"{state.number(row.mi):>{cols.index}}", "timeline--index")
        elif self.findings_only:
            add(f"{state.number(row.mi):>{cols.index}}", "timeline--hidden")
        else:
            add(" " * cols.index)
        add(" ")
        layout = state.lanes
        if cols.lanes and layout is not None:
            mine = layout.own_at(ri) if lane is not None else None
            own = mine is not None and (mine.lane, *layout.rows_of(mine)) == lane
            for c, (ch, lane_state) in enumerate(layout.cells(ri, cols.lanes)):
                on_lane = lane is not None and (c == lane[0] or (own and c > lane[0]))
                add(
                    ch,
                    f"lane--{lane_state}" if lane_state else None,
                    "timeline--lane-selected" if on_lane and lane_state else None,
                )
            add(" ")
        if cols.time:
            text = time_cell(state.session, row, state.pairing, cols.relative)
            travel = row.travel
            cell = f"{text:>{cols.time - 1}}"[: cols.time - 1]
            add(cell, "timeline--travel" if travel else "timeline--time")
            add(TRAVEL_GLYPH if travel else " ", "timeline--travel" if travel else None)
            add(" ")
        if row.kind == MSG:
            if msg.malformed is not None:
                role_style = "timeline--malformed"
            elif msg.hidden:
                role_style = "timeline--hidden"
            elif msg.role in ("user", "assistant"):
                role_style = f"timeline--{msg.role}"
            else:
                role_style = "timeline--other"
            label = role_label(msg, narrow=cols.label < 9)
            text_style = role_style if msg.hidden else None
        else:
            if cols.label >= 9:
                label = "→ call" if row.kind == USE else "← result"
            else:
                label = "  →" if row.kind == USE else "  ←"
            role_style = text_style = "timeline--block"
        add(f"{label:<{cols.label}}"[: cols.label], role_style)
        add(" ")
        room = max(width - cols.text_start, 0)
        self._add_text(add, summary(state.session, row, room, state.pairing), text_style)
        return Strip(segs)

    def _add_text(self, add, text: str, style: str | None) -> None:
        """The row's text, with the search text highlighted."""
        q = self.match
        if not q:
            add(text, style)
            return
        low = text.lower()
        i = 0
        while True:
            k = low.find(q, i)
            if k < 0:
                break
            if k > i:
                add(text[i:k], style)
            add(text[k : k + len(q)], style, "timeline--match")
            i = k + len(q)
        if i < len(text):
            add(text[i:], style)

    # the help legend, drawn with the styles the rows use
    def legend(self) -> list[tuple[str, str, Style]]:
        """(glyphs, meaning, style) for every mark the timeline draws."""
        out: list[tuple[str, str, Style]] = [
            (SEV_MARK[s], s, self._style(f"timeline--{s}")) for s in Severity
        ]
        out.append(
            (
                f"12:00:00{TRAVEL_GLYPH}",
                "stamped before the message above it, or before its call",
                self._style("timeline--travel"),
            )
        )
        for state, (_glyphs, meaning) in LANE_KINDS.items():
            out.append((legend_sample(state), meaning, self._style(f"lane--{state}")))
        out.append((OVERFLOW_GLYPH, OVERFLOW_TEXT, self._style(f"lane--{OVERFLOW}")))
        return out
