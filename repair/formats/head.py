"""The first screen of a large session before the whole file is read (the TUI's first rows).

A log viewer paints a big file at once because it reads what the screen shows. For a JSONL
session whose adapter can read a prefix (`Adapter.reads_head`: Claude Code) the head is the
file's first `HEAD_BYTES`, cut at a line end, loaded by the same adapter as a file of its own:
the messages it shows are the ones the whole file starts with (unless a later record changes
the resumed chain, which the whole load then shows). Nothing here is ever checked, fixed or
written; it is shown until the whole session replaces it.
"""

from __future__ import annotations

import os

from ..errors import InputError
from ..model import Session
from . import detect, get_adapter, probe_bytes, resolve_path

HEAD_BYTES = 1 << 20  # about 500 Claude Code records: several screens of rows
SMALL_FILE = 16 << 20  # below this the whole load is quick enough to be the first paint


def load_head(
    given: str,
    format: str | None = None,
    target: str | None = None,
    *,
    size: int = HEAD_BYTES,
    small: int = SMALL_FILE,
) -> Session | None:
    """The session the first `size` bytes of a JSONL file larger than `small` hold, or None
    (a small file, one JSON document, a format that cannot be read from its start, anything
    unreadable: the whole load decides and reports)."""
    try:
        path = resolve_path(given)
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_size <= max(size, small):
                return None
            head = fh.read(size)
        end = head.rfind(b"\n")
        if end <= 0:
            return None
        probe = probe_bytes(head[: end + 1], path=path, given=given)
        if probe.kind != "jsonl":
            return None
        adapter = get_adapter(format) if format else detect(probe)
        if not adapter.reads_head or adapter.detect(probe) <= 0:
            return None
        session = adapter.load_head(probe)
    except (InputError, OSError, KeyError, ValueError, RecursionError):
        return None
    session.target = target or adapter.default_target
    return session
