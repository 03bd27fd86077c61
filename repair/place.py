"""Where something was read in the input: a JSONL line, a JSON pointer into the document, or
both (a pointer inside one line's record). Adapters record it as `{"line": N}` /
`{"path": "/3/content/1"}` on messages and blocks (`src`); a finding carries it as a `Place`,
and everything that shows a place (the CLI's `FILE:WHERE:`, `messages`, the TUI) asks the
`Place` instead of taking the pointer apart itself."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Place:
    line: int | None = None  # 1-based line of a JSONL file
    pointer: str | None = None  # RFC 6901 JSON pointer ("/messages/3/content/1")

    @classmethod
    def of(cls, src: Mapping[str, Any] | None) -> Place:
        """The place an adapter recorded (`{"line": N, "path": pointer}`, either or both)."""
        if not src:
            return NOWHERE
        line, pointer = src.get("line"), src.get("path")
        return cls(
            line if isinstance(line, int) and not isinstance(line, bool) else None,
            pointer if isinstance(pointer, str) else None,
        )

    @property
    def segments(self) -> tuple[str, ...]:
        """The pointer's reference tokens, unescaped ('~1' is '/', '~0' is '~')."""
        if self.pointer is None or not self.pointer.startswith("/"):
            return ()
        return tuple(p.replace("~1", "/").replace("~0", "~") for p in self.pointer.split("/")[1:])

    def in_document(self) -> str:
        """The pointer as a path into the document: '/7/content/0' -> 'messages[7].content[0]',
        '/messages/2/parts/2' -> 'messages[2].parts[2]'; '' without a pointer."""
        parts = self.segments
        out = "messages" if parts and parts[0].isdigit() else ""
        for p in parts:
            out += f"[{p}]" if p.isdigit() else (f".{p}" if out else p)
        return out

    def where(self) -> str:
        """WHERE of a `FILE:WHERE:` line: the line number, else the place in the document."""
        return str(self.line) if self.line is not None else self.in_document()

    def message_number(self) -> int | None:
        """The index in the file's message list the pointer names (None: no pointer)."""
        nums = [p for p in self.segments[:2] if p.isdigit()]
        return int(nums[0]) if nums else None

    def words(self) -> str:
        """'line 7', else the pointer; '' when nothing is known."""
        if self.line is not None:
            return f"line {self.line}"
        return self.pointer or ""

    def to_json(self) -> dict[str, Any]:
        """The finding's `source` in JSON output: `{"line": N}` and/or `{"path": pointer}`."""
        out: dict[str, Any] = {}
        if self.line is not None:
            out["line"] = self.line
        if self.pointer is not None:
            out["path"] = self.pointer
        return out


NOWHERE = Place()


def lines_words(lines: Sequence[int], width: int) -> str:
    """The lines a message (or some blocks) was read from, in file order, in at most `width`
    characters where it can: 'line 7', 'lines 3, 5, 6'. A list too long for `width` keeps
    its first lines, then '…', its last line and how many there are in all:
    'lines 3, 5, 6 … 41 (12)'. It is shortened between line numbers, never inside one, and
    the last line and the count always stay (where the message ends and how many records it
    holds), so the shortest form, 'lines 3 … 41 (12)', may be longer than `width`; a list no
    longer than that is named whole."""
    if len(lines) == 1:
        return f"line {lines[0]}"
    whole = "lines " + ", ".join(map(str, lines))
    if len(whole) <= width:
        return whole
    tail = f" … {lines[-1]} ({len(lines)})"
    words = f"lines {lines[0]}"
    for n in lines[1:-1]:
        more = f", {n}"
        if len(words) + len(more) + len(tail) > width:
            break
        words += more
    return min(whole, words + tail, key=len)  # (a short list is not made longer)
