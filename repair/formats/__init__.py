"""Reading any supported file: probe (JSON or JSONL), detect the format, load."""

from __future__ import annotations

import os

import orjson

from ..errors import InputError
from ..files import Source
from ..gcpause import gc_paused
from ..jsonio import has_inexact_numbers, loads, loads_fast, strip_bom
from ..model import Session
from ..targets import TARGETS
from .base import Adapter, JsonlLine, Probe, type_name

_ADAPTERS: list[Adapter] = []


def register(adapter: Adapter) -> Adapter:
    _ADAPTERS.append(adapter)
    return adapter


def adapters() -> list[Adapter]:
    _load_builtin()
    return list(_ADAPTERS)


def adapter_names() -> list[str]:
    return [a.name for a in adapters()]


def get_adapter(name: str) -> Adapter:
    for a in adapters():
        if a.name == name:
            return a
    raise KeyError(name)


_loaded = False


def _load_builtin() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    import importlib

    for mod in (
        "anthropic",
        "roo",
        "claude_code",
        "codex",
        "opencode",
        "openai_chat",
        "gemini_cli",
        "bedrock",
    ):
        try:
            importlib.import_module(f"{__name__}.{mod}")
        except ModuleNotFoundError as exc:  # an adapter module not written yet
            if exc.name != f"{__name__}.{mod}":
                raise


MAX_DEPTH_HINT = "nesting is deeper than the parser allows"


def _describe_json_error(exc: Exception) -> str:
    msg = str(exc)
    if "recursion" in msg.lower() or "depth" in msg.lower():
        return MAX_DEPTH_HINT
    return msg


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


def probe_bytes(data: bytes, path: str, given: str | None = None) -> Probe:
    given = given or path
    body, bom = strip_bom(data)
    if not body.strip():
        raise InputError(
            path, "the file is empty" if not body else "the file holds only whitespace"
        )
    head = body[:8192]
    if b"\x00" in head:
        at = head.index(b"\x00")
        raise InputError(path, "binary data, not a JSON or JSONL session", where=f"byte {at}")
    try:
        if _first_line_is_json(body):
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
    lines, newline, trailing = split_lines(body)
    first = next((ln for ln in lines if not ln.blank), None)
    if first is None or first.error is not None or len(lines) < 2:
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


def _first_line_is_json(body: bytes) -> bool:
    """A JSONL file: its first line is a whole JSON object and more content follows."""
    nl = body.find(b"\n")
    if nl == -1 or not body[nl:].strip():
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


def split_lines(body: bytes) -> tuple[list[JsonlLine], str, bool]:
    newline = "\r\n" if b"\r\n" in body[:65536] else "\n"
    parts = body.split(b"\n")
    trailing = parts[-1] == b""
    if trailing:
        parts.pop()
    out: list[JsonlLine] = []
    # One scan of the whole file; only when it finds a number orjson would change is each
    # line scanned (and that line parsed keeping its literals).
    parse = loads if has_inexact_numbers(body) else loads_fast
    for i, raw in enumerate(parts, 1):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        line = JsonlLine(lineno=i, raw=raw)
        if raw.strip():
            try:
                line.obj = parse(raw)
            except (ValueError, RecursionError) as exc:
                line.error = _describe_json_error(exc)
        out.append(line)
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


def load_session(
    given: str, format: str | None = None, target: str | None = None, *, written: bool = False
) -> Session:
    """Read, detect and load a session; raises InputError for anything unreadable.
    `written`: a file histview wrote in `format` (read back as that format even where
    detection would not pick it, e.g. a fix left one metadata record or a plain list)."""
    with gc_paused():
        return _load_session(given, format, target, written)


def _load_session(given: str, format: str | None, target: str | None, written: bool) -> Session:
    if target is not None and target not in TARGETS:
        raise InputError(given, f"unknown target {target!r}; known: {', '.join(TARGETS)}")
    probe = probe_path(given)
    if format:
        try:
            adapter = get_adapter(format)
        except KeyError:
            raise InputError(
                given, f"unknown format {format!r}; known: {', '.join(adapter_names())}"
            ) from None
        if not written and adapter.detect(probe) <= 0:
            raise InputError(given, f"does not look like {format}: {describe_shape(probe)}")
    else:
        adapter = detect(probe)
    _check_client_target(given, adapter, target)
    session = adapter.load(probe)
    session.target = target or adapter.default_target
    session.source = Source.of(probe.path, probe.data, probe.stat)
    for thread in session.threads:  # a session's threads are judged by the same rules
        thread.target = session.target
    return session


def _check_client_target(given: str, adapter: Adapter, target: str | None) -> None:
    """A client target judges the files of its own format only (it is named like it)."""
    from ..targets import get as get_target

    if target is not None and get_target(target).is_client and target != adapter.name:
        raise InputError(
            given,
            f"target {target} judges {target} files; this is {adapter.name} "
            f"(its default target is {adapter.default_target})",
        )


def load_bytes(
    data: bytes, path: str = "<memory>", format: str | None = None, target: str | None = None
) -> Session:
    with gc_paused():
        return _load_bytes(data, path, format, target)


def _load_bytes(data: bytes, path: str, format: str | None, target: str | None) -> Session:
    probe = probe_bytes(data, path=path)
    adapter = get_adapter(format) if format else detect(probe)
    _check_client_target(path, adapter, target)
    session = adapter.load(probe)
    session.target = target or adapter.default_target
    return session
