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

from repair.model import Session

from .lanes import STATES, LaneLayout
from .rows import MSG, USE, Row, RowTable, fmt_time, role_label, summary

SEV_MARK = {"error": "●", "warning": "▲", "info": "○"}
GUTTER = 6  # lanes drawn; a pairing in a further lane shows an overflow mark


@dataclass
class TimelineState:
    session: Session
    table: RowTable
    lanes: LaneLayout | None  # None until the analysis is ready
    version: int


class Timeline(ScrollView, can_focus=True):
    COMPONENT_CLASSES = {
        "timeline--cursor",
        "timeline--index",
        "timeline--time",
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
        *(f"lane--{s}" for s in STATES),
    }

    BINDINGS = [
        Binding("j,down", "cursor(1)", "Next row", show=False),
        Binding("k,up", "cursor(-1)", "Previous row", show=False),
        Binding("g,home", "top", "Top", show=False),
        Binding("G,end", "bottom", "Bottom", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
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
        self._cache: LRUCache[tuple, Strip] = LRUCache(2048)
        self._styles: dict[str, Style] = {}

    # model
    def set_state(self, state: TimelineState, keep_row: int | None = None) -> None:
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
        self.post_message(self.RowChanged(self.current_row))

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
        self._cache.clear()

    def _style(self, name: str) -> Style:
        st = self._styles.get(name)
        if st is None:
            if name == "timeline--cursor":
                # only the background and text style: the row keeps its own colours
                full = self.get_component_rich_style(name)
                st = Style(bgcolor=full.bgcolor, bold=full.bold, underline=full.underline)
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
        key = (ri, selected, width, self.state.version)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._cache[key] = self._render_row(ri, selected, width)
        fill = self.rich_style + self._style("timeline--cursor") if selected else self.rich_style
        return strip.crop_extend(0, width, fill).apply_offsets(0, pos)

    def _render_row(self, ri: int, selected: bool, width: int) -> Strip:
        state = self.state
        row = state.table.rows[ri]
        msg = state.session.messages[row.mi]
        base = self.rich_style
        cursor = self._style("timeline--cursor") if selected else None
        segs: list[Segment] = []

        def add(text: str, name: str | None = None) -> None:
            style = base + self._style(name) if name else base
            segs.append(Segment(text, style + cursor if cursor else style))

        if row.severity:
            add(SEV_MARK[row.severity], f"timeline--{row.severity}")
        else:
            add(" ")
        idx = f"{row.mi:>5}" if row.kind == MSG else "     "
        add(idx, "timeline--index")
        add(" ")
        if state.lanes is not None:
            for ch, lane_state in state.lanes.cells(ri, GUTTER):
                add(ch, f"lane--{lane_state}" if lane_state else None)
        else:
            add(" " * GUTTER)
        add(" ")
        wide = width >= 70
        if row.kind == MSG:
            if msg.malformed is not None:
                role_style = "timeline--malformed"
            elif msg.hidden:
                role_style = "timeline--hidden"
            elif msg.role in ("user", "assistant"):
                role_style = f"timeline--{msg.role}"
            else:
                role_style = "timeline--other"
            add(f"{role_label(msg):<10}", role_style)
            if wide:
                add(f"{fmt_time(msg):<9}", "timeline--time")
            used = 1 + 5 + 1 + GUTTER + 1 + 10 + (9 if wide else 0)
            add(
                summary(state.session, row, max(width - used, 0)),
                role_style if msg.hidden else None,
            )
        else:
            label = "→ call" if row.kind == USE else "← result"
            add(f"{label:<10}", "timeline--block")
            if wide:
                add(" " * 9)
            used = 1 + 5 + 1 + GUTTER + 1 + 10 + (9 if wide else 0)
            add(summary(state.session, row, max(width - used, 0)), "timeline--block")
        return Strip(segs)
