"""JSON reading and style-preserving writing shared by the adapters.

Writers differ (Roo: compact, no trailing newline; opencode: indent 2 + newline; Python
agents: `", "`/`": "`). `detect_style` records what a document looks like and `dumps` writes
it back the same way, so a load + export with no edit gives back the same bytes for files
written by those tools.
"""

from __future__ import annotations

import json
import re
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


def loads(data: bytes | str) -> Any:
    """orjson first; the stdlib for what orjson refuses (big ints, lone surrogates)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        if isinstance(data, bytes):
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                raise
        else:
            text = data
        return json.loads(text)


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
    ascii_only = all(b < 0x80 for b in body[:262144])
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


_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)
_OPEN_STRING = re.compile(rb'(?<!")"(?!")')


def _outside_strings(head: bytes) -> bytes:
    """The JSON text with every string value emptied (and an unterminated one cut off),
    so text such as `a, b` inside a message does not pass for a separator."""
    head = _JSON_STRING.sub(b'""', head)
    cut = _OPEN_STRING.search(head)
    return head[: cut.start()] if cut else head


def dumps(obj: Any, style: JsonStyle) -> bytes:
    if (
        style.indent is None
        and style.item_sep == ","
        and style.key_sep == ":"
        and not style.ensure_ascii
    ):
        out = _orjson_or_json(
            obj, 0, lambda: json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
        )
    elif style.indent == 2 and not style.ensure_ascii:
        out = _orjson_or_json(
            obj, orjson.OPT_INDENT_2, lambda: json.dumps(obj, ensure_ascii=False, indent=2)
        )
    elif style.indent is None:
        out = _utf8(
            json.dumps(
                obj, ensure_ascii=style.ensure_ascii, separators=(style.item_sep, style.key_sep)
            )
        )
    else:
        out = _utf8(json.dumps(obj, ensure_ascii=style.ensure_ascii, indent=style.indent))
    if style.newline == "\r\n":
        out = out.replace(b"\n", b"\r\n")
    if style.trailing_newline:
        out += style.newline.encode()
    if style.bom:
        out = BOM + out
    return out


def _orjson_or_json(obj: Any, option: int, fallback) -> bytes:
    try:
        return orjson.dumps(obj, option=option)
    except (TypeError, orjson.JSONEncodeError):
        return _utf8(fallback())


_SURROGATE = re.compile("[\ud800-\udfff]")


def _utf8(text: str) -> bytes:
    """JSON text as UTF-8. A lone surrogate (read from a `\\udXXX` escape; orjson refuses
    it) is written back as that escape, as JavaScript's JSON.stringify writes it: raw, it
    would make the file invalid UTF-8."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")


def compact(obj: Any) -> bytes:
    """One JSONL record as Claude Code / Codex write it."""
    return _orjson_or_json(
        obj, 0, lambda: json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    )
