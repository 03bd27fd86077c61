"""The one place untrusted session text is made safe to show on a terminal.

Control characters (C0 except newline and tab, DEL, C1), bidi controls and line/paragraph
separators become visible stand-ins, so nothing in a session can move the cursor, change
colours or reorder text. Markup safety is the UI's job (it never parses session text as
markup); this module only deals in characters.
"""

from __future__ import annotations

import re

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029" + _BIDI + "]")
_NAMES = {0x1B: "␛", 0x00: "␀", 0x0D: "␍", 0x07: "␇", 0x08: "␈", 0x0C: "␌", 0x0B: "␋"}


def _stand_in(match: re.Match) -> str:
    ch = match.group()
    code = ord(ch)
    if code in _NAMES:
        return _NAMES[code]
    if code < 0x20:
        return chr(0x2400 + code)  # Control Pictures block
    if code == 0x7F:
        return "␡"
    return f"<U+{code:04X}>"


def clean(text: str) -> str:
    """Multi-line safe text: newlines and tabs kept, everything unsafe made visible."""
    if text.isascii() and text.isprintable():
        return text
    return _UNSAFE.sub(_stand_in, text)


def clean_line(text: str, limit: int | None = None) -> str:
    """One display line: newlines and tabs shown as ⏎ and spaces, then cut to `limit`."""
    if limit is not None and len(text) > limit * 4:
        text = text[: limit * 4]
    text = clean(text).replace("\r\n", "⏎").replace("\n", "⏎").replace("\t", "  ")
    if limit is not None and len(text) > limit:
        text = text[: max(0, limit - 1)] + "…"
    return text
