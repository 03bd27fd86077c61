"""Reading the input once: a folder resolved to its session file, the bytes parsed as one
JSON document or as JSONL lines (a `Probe`)."""

from __future__ import annotations

import os
import re
import stat as stat_mode
from array import array
from typing import Any

import orjson

from ..errors import InputError
from ..files import FileText
from ..jsonio import exact_numbers, has_inexact_numbers, loads, loads_fast, strip_bom
from .base import (
    MAX_DEPTH_HINT,
    Adapter,
    FileProbe,
    LineIndex,
    Probe,
    type_name,
)
from .base import describe_json_error as _describe_json_error
from .registry import adapter_names, adapters


def resolve_path(given: str) -> str:
    if not os.path.exists(given):
        raise InputError(given, "no such file or folder")
    if os.path.isdir(given):
        for a in adapters():
            found = a.claim_folder(given)
            if found:
                return found
        raise InputError(
            given,
            "is a folder with no session file histview knows "
            "(expected e.g. a Roo/Cline task folder with api_conversation_history.json)",
        )
    return given


# A JSONL file this large is not held in memory: its lines are places in the file, read from
# it again when asked for (files.FileText, docs/performance.md: a 1 GB session in 3 GB).
UNHELD_BYTES = 32 << 20
_HEAD = 1 << 20  # where the first line must end for a file to be probed without its bytes


def probe_path(given: str, checked: bool = True, later: bool = False) -> Probe:
    """`checked` False: nothing is written from what is read (`check`), so a large file's
    first read makes no CRCs to check a write and later reads against (`FileText`); `later`:
    a large file left alone before it was opened gets them from `FileText.seal` after."""
    path = resolve_path(given)
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            if stat_mode.S_ISREG(st.st_mode) and st.st_size >= UNHELD_BYTES:
                unheld = _probe_unheld(path, given, checked, later)
                if unheld is not None:
                    return unheld
            data = fh.read()
            st = os.fstat(fh.fileno())
    except OSError as exc:
        raise InputError(given, f"cannot read: {exc.strerror or exc}") from None
    probe = probe_bytes(data, path=path, given=given)
    probe.stat = st
    return probe


def _probe_unheld(path: str, given: str, checked: bool = True, later: bool = False) -> Probe | None:
    """A large file whose first line is a JSON object, probed as JSONL without keeping its
    bytes (FileProbe); None for any other file (read whole, as any file: `probe_bytes`
    decides and reports)."""
    text, st = FileText.open(path, checked, later)
    head, bom = strip_bom(text.head(_HEAD + 3))
    nl = head.find(b"\n")
    if b"\x00" in head[:8192] or nl == -1 or not _holds_text(head, nl):
        return None
    if not _first_line_is_json(head):
        return None
    lines, trailing = index_lines(text, 3 if bom else 0)
    if len(lines) < 2:
        return None
    probe = FileProbe(
        path=path,
        given=given,
        data=b"",
        kind="jsonl",
        lines=lines,
        newline="\r\n" if b"\r\n" in head[:65536] else "\n",
        trailing_newline=trailing,
        bom=bom,
        stat=st,
    )
    probe.text = text
    return probe


def index_lines(text: FileText, start: int) -> tuple[LineIndex, bool]:
    """The lines of a file not held, from byte `start` (after a BOM), and whether it ends
    with a newline: `split_lines`' lines and parse, read block by block (`FileText.blocks`,
    which records what later reads check), the number scan made on each block's lines."""
    starts, ends = array("q"), array("q")
    begin, stop_at = starts.append, ends.append
    scan = exact_numbers()  # no scan where numbers need not be exact (`check`)
    exact = False  # a number orjson would change was seen: every line keeps its literals
    carry = b""  # the text since the last newline of the blocks scanned so far
    prev = 0  # the last byte of the block before (a CR ending a line at a block's start)
    for off, block in text.blocks():
        find = block.find
        k = max(start - off, 0)
        while True:
            nl = find(b"\n", k)
            if nl == -1:
                break
            end = off + nl
            before = block[nl - 1] if nl else prev
            begin(start)
            stop_at(end - 1 if end > start and before == 13 else end)
            start = end + 1
            k = nl + 1
        if scan and not exact:
            exact, carry = _scan_block(block, carry)
        prev = block[-1]
    n = text.size
    if start < n:
        begin(start)
        stop_at(n - 1 if prev == 13 else n)
    exact = exact or bool(carry and has_inexact_numbers(carry))
    return LineIndex(text, starts, ends, loads if exact else loads_fast), prev == 10


def _scan_block(block: bytes, carry: bytes) -> tuple[bool, bytes]:
    """`has_inexact_numbers` over a block's whole lines (the scan never cuts a number): the
    text before its first newline joined to `carry`; returns the text after its last."""
    first = block.find(b"\n")
    if first == -1:
        return False, carry + block
    last = block.rfind(b"\n")
    found = has_inexact_numbers(carry + block[:first]) or (
        last > first and has_inexact_numbers(block[first:last])
    )
    return found, block[last + 1 :]


def probe_bytes(
    data: bytes,
    path: str,
    given: str | None = None,
    parsed: dict[bytes, Any] | None = None,
    *,
    jsonl: bool = False,
) -> Probe:
    """`parsed`: JSONL lines parsed already, by their bytes (a written file's lines copied
    from the file read are not parsed again). `jsonl`: the bytes are lines a JSONL writer
    wrote, read as lines even when the first is not JSON (a record kept as read)."""
    given = given or path
    body, bom = strip_bom(data)
    if not _holds_text(body):
        raise InputError(
            path, "the file is empty" if not body else "the file holds only whitespace"
        )
    head = body[:8192]
    if b"\x00" in head:
        at = head.index(b"\x00")
        raise InputError(path, "binary data, not a JSON or JSONL session", where=f"byte {at}")
    try:
        if jsonl or _first_line_is_json(body):
            raise ValueError("JSONL")  # several documents: skip the whole-file parse
        doc = loads(body)
        return Probe(
            path=path,
            given=given,
            data=data,
            kind="json",
            doc=doc,
            bom=bom,
            trailing_newline=body.endswith(b"\n"),
        )
    except ValueError as exc:
        whole_error = exc
    except RecursionError:
        raise InputError(path, MAX_DEPTH_HINT) from None
    # Not one JSON document: JSONL if the first non-blank line is a JSON value.
    lines, newline, trailing = split_lines(body, parsed)
    first = next((ln for ln in lines if not ln.blank), None)
    if first is None or (not jsonl and (first.error is not None or len(lines) < 2)):
        if isinstance(whole_error, UnicodeDecodeError):
            raise InputError(
                path,
                f"not UTF-8 text (binary?): {whole_error.reason}",
                where=f"byte {whole_error.start}",
            ) from None
        raise InputError(
            path,
            f"not JSON: {_describe_json_error(whole_error, whole_file=True)}",
            where=_json_error_place(whole_error),
        ) from None
    return Probe(
        path=path,
        given=given,
        data=data,
        kind="jsonl",
        lines=lines,
        newline=newline,
        trailing_newline=trailing,
        bom=bom,
    )


# A byte `bytes.strip` keeps: found in place, where `strip` would copy a 200 MB body (twice).
_TEXT = re.compile(rb"[^ \t\n\r\x0b\x0c]")


def _holds_text(body: bytes, start: int = 0) -> bool:
    """Something other than whitespace at or after `start`."""
    return _TEXT.search(body, start) is not None


def _first_line_is_json(body: bytes) -> bool:
    """A JSONL file: its first line is a whole JSON object and more content follows."""
    nl = body.find(b"\n")
    if nl == -1 or not _holds_text(body, nl):
        return False
    first = body[:nl].strip()
    if not first.startswith(b"{"):
        return False
    try:
        orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    return True


def _json_error_place(exc: Exception) -> str | None:
    lineno = getattr(exc, "lineno", None)
    colno = getattr(exc, "colno", None)
    if lineno:
        return f"line {lineno}" + (f" column {colno}" if colno else "")
    return None


def split_lines(body: bytes, parsed: dict[bytes, Any] | None = None) -> tuple[LineIndex, str, bool]:
    """The lines of a JSONL body, as places in it (no copy of the file, no object per line:
    `LineIndex`): each is parsed when first asked for, or is the value `parsed` holds for
    its bytes."""
    newline = "\r\n" if b"\r\n" in body[:65536] else "\n"
    # One scan of the whole file; only when it finds a number orjson would change is each
    # line scanned (and that line parsed keeping its literals). With lines parsed already,
    # each other line is scanned on its own. No scan where numbers need not be exact.
    if not exact_numbers():
        parse = loads_fast
    elif parsed is None:
        parse = loads if has_inexact_numbers(body) else loads_fast
    else:
        parse = loads
    starts, ends = array("q"), array("q")
    begin, stop_at = starts.append, ends.append
    find = body.find
    start, n = 0, len(body)
    while start < n:
        nl = find(b"\n", start)
        end = n if nl == -1 else nl
        begin(start)
        stop_at(end - 1 if end > start and body[end - 1] == 13 else end)  # a CR before the LF
        if nl == -1:
            break
        start = nl + 1
    out = LineIndex(body, starts, ends, parse)
    if parsed:
        for i, (s, e) in enumerate(zip(starts, ends, strict=True)):
            known = parsed.get(body[s:e])
            if known is not None:
                out.line(i).obj = known
    trailing = n == 0 or body.endswith(b"\n")
    return out, newline, trailing


def detect(probe: Probe) -> Adapter:
    best, best_score = None, 0
    for a in adapters():
        score = a.detect(probe)
        if score > best_score:
            best, best_score = a, score
    if best is None:
        hint = ""
        if probe.path:
            found = session_beside(probe.path)
            if found:
                hint = f"; the session beside it is {os.path.basename(found)}"
        raise InputError(
            probe.given,
            f"unknown format: {describe_shape(probe)}; histview reads "
            + ", ".join(adapter_names())
            + hint,
        )
    return best


def session_beside(path: str) -> str | None:
    """The session file a format keeps next to `path` (a task's metadata, a share's
    session.json, a subagent's .meta.json), where `path` is not it."""
    for a in adapters():
        found = a.session_beside(path)
        if found and not _same_file(found, path):
            return found
    return None


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def describe_shape(probe: Probe) -> str:
    if probe.kind == "jsonl":
        first = next((ln.obj for ln in probe.lines if ln.obj is not None), None)
        if isinstance(first, dict):
            keys = ", ".join(list(first)[:6])
            return f"JSONL whose first record has keys {keys}"
        return f"JSONL whose first record is {type_name(first)}"
    doc = probe.doc
    if isinstance(doc, dict):
        return (
            "a JSON object with keys " + ", ".join(list(doc)[:8]) if doc else "an empty JSON object"
        )
    if isinstance(doc, list):
        if not doc:
            return "an empty JSON list"
        return f"a JSON list whose first item is {type_name(doc[0])}"
    return f"a JSON value that is {type_name(doc)}"
