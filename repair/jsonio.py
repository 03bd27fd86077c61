"""JSON reading and style-preserving writing shared by the adapters.

Writers differ (Roo: compact, no trailing newline; opencode: indent 2 + newline; Python
agents: `", "`/`": "`). `detect_style` records what a document looks like and `dumps` writes
it back the same way, so a load + export with no edit gives back the same bytes for files
written by those tools.
"""

from __future__ import annotations

import json
import math
import re
import secrets
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import orjson


@dataclass(frozen=True, slots=True)
class JsonStyle:
    indent: int | str | None = None  # None = single line
    item_sep: str = ","  # separator between items on a single line
    key_sep: str = ":"
    ensure_ascii: bool = False
    newline: str = "\n"
    trailing_newline: bool = False
    bom: bool = False


BOM = b"\xef\xbb\xbf"


def strip_bom(data: bytes) -> tuple[bytes, bool]:
    if data.startswith(BOM):
        return data[3:], True
    return data, False


class JsonNumber:
    """A number literal kept exactly as read, for the numbers orjson would not give back as
    written: integers beyond 64 bits, floats that overflow or underflow a double, and float
    literals a double would print differently (`1E2`, `1.50`, `0.000001`, too many digits).
    The loaders see it as "not a number"; every writer here emits `text` verbatim."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JsonNumber) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


# Whether a parse keeps every number literal exactly (`loads`). Off only inside
# `numbers_as_parsed()`: for a reader that writes no number of the session (`check`).
_EXACT: ContextVar[bool] = ContextVar("histview_exact_numbers", default=True)


def exact_numbers() -> bool:
    """True unless inside `numbers_as_parsed()`."""
    return _EXACT.get()


@contextmanager
def numbers_as_parsed() -> Iterator[None]:
    """Within: `loads` and the JSONL probe parse with orjson and do not scan the text for
    literals orjson would change (0.3 s of an 89 MB file, 1.5 s of an indented 177 MB one):
    a number is what orjson (like the clients' own `JSON.parse`) reads it as. The stdlib,
    keeping literals, still reads what orjson refuses (1e400, NaN, lone surrogates). For a
    caller that never writes a number of the session back: `check`."""
    token = _EXACT.set(False)
    try:
        yield
    finally:
        _EXACT.reset(token)


@contextmanager
def numbers_as_read(exact: bool) -> Iterator[None]:
    """Within: parse as a load with `exact_numbers() == exact` did, for the part of a
    session made when first asked for (a call's arguments parsed after the load), so a
    `check` that read without the scan does not scan then either, and a session read
    keeping every literal keeps them in what it makes later."""
    token = _EXACT.set(exact)
    try:
        yield
    finally:
        _EXACT.reset(token)


def loads(data: bytes | str) -> Any:
    """Parse one JSON value; numbers come back exactly (see `JsonNumber`). orjson when it can
    keep every number and string; the stdlib, keeping literals, for the rest (big or odd
    numbers, lone surrogates, NaN/Infinity). Inside `numbers_as_parsed()`: `loads_fast`."""
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return loads_exact(data)
    if not _EXACT.get():
        return obj
    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    if has_inexact_numbers(raw):
        return loads_exact(data)
    return obj


def loads_fast(data: bytes) -> Any:
    """`loads` for a caller that already knows (`has_inexact_numbers` on the whole file) that
    every number is one orjson keeps: the stdlib only when orjson refuses the text."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return loads_exact(data)


def loads_exact(data: bytes | str) -> Any:
    """The stdlib parser, with the literals orjson would change kept as `JsonNumber`.
    Raises ValueError (UnicodeDecodeError for bytes that are not UTF-8) or RecursionError."""
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    return json.loads(
        text, parse_int=_exact_int, parse_float=_exact_float, parse_constant=JsonNumber
    )


_I64_MIN, _U64_MAX = -(2**63), 2**64 - 1


def _exact_int(text: str) -> int | JsonNumber:
    if len(text) < 19 and text != "-0":
        return int(text)
    value = int(text)
    if _I64_MIN <= value <= _U64_MAX and text != "-0":
        return value
    return JsonNumber(text)


def _exact_float(text: str) -> float | JsonNumber:
    value = float(text)
    if math.isfinite(value) and repr(value) == text and orjson.dumps(value) == text.encode():
        return value
    return JsonNumber(text)


# A number token right after `:` `,` or `[` and ending where a JSON number ends (so the
# digits of "12:28.120Z" inside a string do not count).
_TOKEN_AFTER = {
    sep: re.compile(sep + rb"[ \t\r\n]*(-?\d[\d.eE+-]*)(?=[ \t\r\n,\]}]|\Z)")
    for sep in (rb":", rb",", rb"\[")
}
# The same tokens in one scan: faster on a short text (a record, a tool call's arguments),
# slower on a long one (no literal to search for first).
_TOKEN_AFTER_ANY = re.compile(rb"[:,\[][ \t\r\n]*(-?\d[\d.eE+-]*)(?=[ \t\r\n,\]}]|\Z)")
_SHORT = 4096
# Among those tokens, the ones a double may not give back as written: 19+ digits (beyond
# 64 bits), 17+ digits and dots, tiny decimals, trailing fraction zeros, exponents, -0.
_MAYBE_INEXACT = re.compile(
    rb"^(?:-0$|-?\d{19}|-?\d[\d.]{16}|-?0\.0000|-?\d+\.\d+0$|-?\d+(?:\.\d+)?[eE])", re.M
)


def has_inexact_numbers(data: bytes) -> bool:
    """True when the text holds a number literal orjson would not give back byte for byte.
    A linear scan with literal-led patterns (a few ms per MB); a token that only looks like
    one (inside a string) just costs an exact parse."""
    if len(data) < _SHORT:
        found = _TOKEN_AFTER_ANY.findall(data)
        if not found:
            return False
        tokens = b"\n".join(found)
    else:
        tokens = b"\n".join(t for rx in _TOKEN_AFTER.values() for t in rx.findall(data))
    for m in _MAYBE_INEXACT.finditer(tokens):
        end = tokens.find(b"\n", m.start())
        token = tokens[m.start() : end if end != -1 else len(tokens)].decode("ascii")
        try:
            kept = _exact_float(token) if any(c in token for c in ".eE") else _exact_int(token)
        except ValueError:
            continue  # not a JSON number (inside a string): nothing to keep
        if isinstance(kept, JsonNumber):
            return True
    return False


class InexactNumbers(Exception):
    """A session read without the number scan (`numbers_as_parsed`) would write a number
    literal other than as it was read: the caller reads the file again keeping every
    literal (`repair.cli.fixed`)."""


def reads_exactly(data: bytes, doc: Any = None, style: JsonStyle | None = None) -> bool:
    """True when orjson reads every number literal of `data` (a whole file) as written, so
    that what `numbers_as_parsed` gave writes back as an exact parse would: the document
    `doc` parsed from it writes back to the very bytes in `style` (0.1 s of an 89 MB file),
    else the scan finds no literal orjson would change (`has_inexact_numbers`, 0.3 s)."""
    if doc is not None and style is not None:
        try:
            if dumps(doc, style) == data:
                return True
        except (TypeError, ValueError, RecursionError):
            pass  # not a document this style writes: scan it
    return not has_inexact_numbers(strip_bom(data)[0])


def detect_style(data: bytes) -> JsonStyle:
    body, bom = strip_bom(data)
    newline = "\r\n" if b"\r\n" in body[:65536] else "\n"
    stripped = body.rstrip(b"\r\n")
    trailing = len(stripped) != len(body)
    first_nl = stripped.find(b"\n")
    indent: int | str | None = None
    item_sep, key_sep = ",", ":"
    if first_nl == -1:
        # single line: look at the separators actually used, outside string values
        head = _outside_strings(stripped[:65536])
        if b'": ' in head or b'", "' in head or b", " in head:
            key_sep = ": " if b'": ' in head else ":"
            item_sep = ", " if (b", " in head) else ","
    else:
        nxt = stripped[first_nl + 1 : first_nl + 200]
        ws = len(nxt) - len(nxt.lstrip(b" \t"))
        lead = nxt[:ws]
        if lead.startswith(b"\t"):
            indent = "\t"
        else:
            indent = ws or 2
        key_sep = ": "
    ascii_only = body[:262144].isascii()
    ensure_ascii = ascii_only and b"\\u" in body[:262144]
    return JsonStyle(
        indent=indent,
        item_sep=item_sep,
        key_sep=key_sep,
        ensure_ascii=ensure_ascii,
        newline=newline,
        trailing_newline=trailing,
        bom=bom,
    )


class StyleRead:
    """A document state's `style`: how its `data` (the JSON document read) is written,
    `detect_style` of it made when first asked for and kept in its `_style` (a `check`
    writes nothing, so it reads no style)."""

    def __get__(self, state: Any, owner: Any = None) -> JsonStyle:
        style: JsonStyle | None = state._style
        if style is None:
            style = state._style = detect_style(state.data)
        return style


_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)  # unrolled: no per-char alternation
_OPEN_STRING = re.compile(rb'(?<!")"(?!")')


def _outside_strings(head: bytes) -> bytes:
    """The JSON text with every string value emptied (and an unterminated one cut off),
    so text such as `a, b` inside a message does not pass for a separator."""
    head = _JSON_STRING.sub(b'""', head)
    cut = _OPEN_STRING.search(head)
    return head[: cut.start()] if cut else head


def dumps(obj: Any, style: JsonStyle) -> bytes:
    """A whole document in `style`. `JsonNumber`s are written verbatim and lone surrogates
    as `\\uXXXX` escapes, so what was read is what is written."""
    if style.indent is None:
        option = 0 if (style.item_sep, style.key_sep) == (",", ":") else None
        kw: dict[str, Any] = {"separators": (style.item_sep, style.key_sep)}
    else:
        option = orjson.OPT_INDENT_2 if style.indent == 2 else None
        kw = {"indent": style.indent}
    out = _encode(obj, None if style.ensure_ascii else option, style.ensure_ascii, kw)
    if style.newline == "\r\n":
        out = out.replace(b"\n", b"\r\n")
    if style.trailing_newline:
        out += style.newline.encode()
    if style.bom:
        out = BOM + out
    return out


def compact(obj: Any) -> bytes:
    """One JSONL record as Claude Code / Codex write it."""
    return _encode(obj, 0, False, {"separators": (",", ":")})


def to_json(obj: Any, indent: bool = False, *, newline: bool = False) -> bytes:
    """JSON histview writes itself (reports, `--json` output, previews): one line, or indented
    by 2; numbers and text of the session exactly as read. `newline`: ending in one, written
    with the rest (a report of hundreds of MB is not copied to add it)."""
    if indent:
        option = orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS
        return _encode(obj, option, False, {"indent": 2}, newline)
    return _encode(obj, orjson.OPT_NON_STR_KEYS, False, {"separators": (",", ":")}, newline)


def text_of(value: Any, indent: bool = False) -> str:
    """A value as JSON text inside a string (a tool output shown as text), spaced the way
    `json.dumps` spaces it (indented by 2 if asked); numbers and text exactly as read, a lone
    surrogate as its `\\uXXXX` escape."""
    return _encode(value, None, False, {"indent": 2} if indent else {}).decode("utf-8")


def _encode(
    obj: Any, option: int | None, ensure_ascii: bool, kw: dict[str, Any], newline: bool = False
) -> bytes:
    """orjson with `option` when given and it can write `obj`; else the stdlib with `kw`.
    Each `JsonNumber` is written as a placeholder string, replaced by its literal after.
    `newline`: a newline after it."""
    literals: list[str] = []
    mark = "@histview-number-" + secrets.token_hex(8) + "-"

    def placeholder(o: Any) -> str:
        if isinstance(o, JsonNumber):
            literals.append(o.text)
            return f"{mark}{len(literals) - 1}@"
        raise TypeError(f"a {type(o).__name__} is not a JSON value")

    out: bytes | None = None
    if option is not None:
        try:
            out = orjson.dumps(
                obj,
                default=placeholder,
                option=option | orjson.OPT_APPEND_NEWLINE if newline else option,
            )
        except (TypeError, orjson.JSONEncodeError):
            literals.clear()  # lone surrogates or nesting orjson does not write
    if out is None:
        try:
            text = json.dumps(obj, ensure_ascii=ensure_ascii, default=placeholder, **kw)
        except RecursionError:
            literals.clear()
            text = _deep(
                lambda: json.dumps(obj, ensure_ascii=ensure_ascii, default=placeholder, **kw)
            )
        if newline:
            text += "\n"
        # A lone surrogate cannot be UTF-8: write it as the JSON escape it was read from.
        out = text.encode("utf-8", "backslashreplace")
    if literals:
        pattern = re.compile(b'"' + re.escape(mark.encode()) + rb'(\d+)@"')
        out, n = pattern.subn(lambda m: literals[int(m.group(1))].encode(), out)
        if n != len(literals):  # cannot happen unless a string holds the random mark
            raise ValueError("a number literal could not be written back")
    return out


def _deep(fn: Callable[[], str]) -> str:
    """Run a stdlib encode with room for the deepest document the parsers accept."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 6000))
    try:
        return fn()
    finally:
        sys.setrecursionlimit(limit)
