"""Reading the input once: a folder resolved to its session file, the bytes parsed as one
JSON document or as JSONL lines (a `Probe`)."""

from __future__ import annotations

import os
import re
from typing import Any

import orjson

from ..errors import InputError
from ..jsonio import exact_numbers, has_inexact_numbers, loads, loads_fast, strip_bom
from .base import MAX_DEPTH_HINT, Adapter, IndexedLine, JsonlLine, Probe, type_name
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


def probe_path(given: str) -> Probe:
    path = resolve_path(given)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
            st = os.fstat(fh.fileno())
    except OSError as exc:
        raise InputError(given, f"cannot read: {exc.strerror or exc}") from None
    probe = probe_bytes(data, path=path, given=given)
    probe.stat = st
    return probe


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
            f"not JSON: {_describe_json_error(whole_error)}",
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


def split_lines(
    body: bytes, parsed: dict[bytes, Any] | None = None
) -> tuple[list[JsonlLine], str, bool]:
    """The lines of a JSONL body, as places in it (no copy of the file): each is parsed when
    first asked for (`IndexedLine`), or is the value `parsed` holds for its bytes."""
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
    out: list[JsonlLine] = []
    find = body.find
    start, n, i = 0, len(body), 1
    while start < n:
        nl = find(b"\n", start)
        end = n if nl == -1 else nl
        stop = end - 1 if end > start and body[end - 1] == 13 else end  # a CR before the LF
        line = IndexedLine(i, body, start, stop, parse)
        if parsed:
            known = parsed.get(body[start:stop])
            if known is not None:
                line.obj = known
        out.append(line)
        i += 1
        if nl == -1:
            break
        start = nl + 1
    trailing = n == 0 or body.endswith(b"\n")
    return out, newline, trailing


def detect(probe: Probe) -> Adapter:
    best, best_score = None, 0
    for a in adapters():
        score = a.detect(probe)
        if score > best_score:
            best, best_score = a, score
    if best is None:
        raise InputError(
            probe.given,
            f"unknown format: {describe_shape(probe)}; histview reads "
            + ", ".join(adapter_names()),
        )
    return best


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
