"""The one place untrusted session text is made safe to show on a terminal.

Control characters (C0 except newline and tab, DEL, C1), bidi controls, line/paragraph
separators, lone surrogates and the invisible characters Unicode calls default-ignorable
(zero-width space/joiner, U+FEFF, word joiner, soft hyphen, tag characters U+E0000-E0FFF,
U+206A-206F, Hangul fillers, variation selectors, ...) become visible stand-ins, so nothing in
a session can move the cursor, change colours, reorder text, or make two different ids look
the same. Two uses stay as they are because they only shape emoji: a zero-width joiner
between two emoji and a variation selector right after a symbol. Markup safety is the UI's
job (it never parses session text as markup); this module only deals in characters.
"""

from __future__ import annotations

import re
import unicodedata

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# Default_Ignorable_Code_Point (Unicode 15 DerivedCoreProperties), bidi controls included.
_IGNORABLE = (
    "\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2060-\u206f\u3164"
    "\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff"
)
_SURROGATES = "\ud800-\udfff"
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029" + _BIDI + _IGNORABLE + _SURROGATES + "]"
)
# The same characters as they may sit raw inside a JSON string histview prints: JSON
# escapes C0 itself; the rest would act on a terminal or a line splitter, or hide.
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029" + _BIDI + _IGNORABLE + _SURROGATES + "]")
_NAMES = {0x1B: "␛", 0x00: "␀", 0x0D: "␍", 0x07: "␇", 0x08: "␈", 0x0C: "␌", 0x0B: "␋"}
_ZWJ = 0x200D
_EMOJI_PARTS = frozenset({"So", "Sk"})  # pictographs and skin-tone modifiers


def _emoji_glue(text: str, at: int, code: int) -> bool:
    """A ZWJ between two emoji, or a variation selector right after a symbol."""
    before = text[at - 1] if at > 0 else ""
    if 0xFE0E <= code <= 0xFE0F:
        return bool(before) and unicodedata.category(before) in _EMOJI_PARTS
    if code == _ZWJ and at + 1 < len(text) and before:
        after = text[at + 1]
        glued = unicodedata.category(before) in _EMOJI_PARTS or before == "\ufe0f"
        return glued and unicodedata.category(after) in _EMOJI_PARTS
    return False


def _stand_in(match: re.Match[str]) -> str:
    ch: str = match.group()
    code = ord(ch)
    if code in _NAMES:
        return _NAMES[code]
    if code < 0x20:
        return chr(0x2400 + code)  # Control Pictures block
    if code == 0x7F:
        return "␡"
    if (code == _ZWJ or 0xFE0E <= code <= 0xFE0F) and _emoji_glue(
        match.string, match.start(), code
    ):
        return ch
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


def json_safe(text: str) -> str:
    """JSON text histview prints: the characters above written as `\\uXXXX` escapes (same
    value, nothing hidden or acting on the terminal)."""
    if text.isascii():
        return text
    return _JSON_UNSAFE.sub(_json_escape, text)


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code > 0xFFFF:  # a UTF-16 surrogate pair, as JSON spells characters beyond the BMP
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"
