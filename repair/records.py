"""The records a write changes: two versions of a written file compared record by record.

A record is what the format stores as one unit: a line of a JSONL file (a Claude Code
record, a Codex rollout item, a Gemini CLI line), an entry of a JSON document's message
list (`messages[4]`, a Roo message, an opencode message with its parts). Both sides are
the bytes the format's own writer produces, so what is shown is what is written.
Unchanged records are skipped by comparing whole values (C speed); the stretch between the
first and the last change is aligned greedily (a repair inserts or drops a few records
here and there), records that carry a uuid are paired by it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from .gcpause import gc_paused
from .place import Place

if TYPE_CHECKING:
    from .model import Message

WINDOW = 64  # how far ahead a record is looked for when the versions differ


@dataclass
class RecordChange:
    where: str  # "line 12", "messages[4]": in the file the later state writes
    old: Any  # the record before (parsed JSON; bytes when it is not JSON); None: new
    new: Any  # after; None: the record is no longer written
    note: str = ""  # "new", "removed", "was line 9"


def changed_records(a: bytes, b: bytes) -> list[RecordChange]:
    """The records that differ between two written versions of one file, in file order."""
    if a == b:
        return []
    with gc_paused():
        doc_a, doc_b = _document(a), _document(b)
        if doc_a is not _NOT_JSON and doc_b is not _NOT_JSON:
            return _doc_changes(doc_a, doc_b, "")
        return line_changes(a.split(b"\n"), b.split(b"\n"))


_NOT_JSON = object()


def _document(data: bytes) -> Any:
    body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return _NOT_JSON


def _record(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw


def _trim(a: Sequence[object], b: Sequence[object]) -> tuple[int, int, int]:
    """Common prefix length, and the ends of the differing stretch in a and in b."""
    n = min(len(a), len(b))
    lo = 0
    while lo < n and a[lo] == b[lo]:
        lo += 1
    ea, eb = len(a), len(b)
    while ea > lo and eb > lo and a[ea - 1] == b[eb - 1]:
        ea -= 1
        eb -= 1
    return lo, ea, eb


def align(a: Sequence[object], b: Sequence[object]) -> list[tuple[int | None, int | None]]:
    """The records of two mostly equal versions that differ: (i, j) changed in place,
    (i, None) no longer written, (None, j) new. Greedy: at a difference, the nearer of "b
    gained records before a[i]" and "a lost records before b[j]" (within WINDOW), else
    a change in place. Linear for a few scattered changes, with no key per record."""
    lo, ea, eb = _trim(a, b)
    out: list[tuple[int | None, int | None]] = []
    i, j = lo, lo
    while i < ea and j < eb:
        if a[i] == b[j]:
            i += 1
            j += 1
            continue
        ins = next((k for k in range(j + 1, min(eb, j + WINDOW)) if b[k] == a[i]), None)
        rem = next((k for k in range(i + 1, min(ea, i + WINDOW)) if a[k] == b[j]), None)
        if ins is not None and (rem is None or ins - j <= rem - i):
            out += [(None, k) for k in range(j, ins)]
            j = ins
        elif rem is not None:
            out += [(k, None) for k in range(i, rem)]
            i = rem
        else:
            out.append((i, j))
            i += 1
            j += 1
    out += [(k, None) for k in range(i, ea)]
    out += [(None, k) for k in range(j, eb)]
    return out


def line_changes(la: list[bytes], lb: list[bytes]) -> list[RecordChange]:
    """The lines (JSONL records) that differ between two versions of a file's lines."""
    items = [(i, j) for i, j in align(la, lb) if not _blank(la, i) or not _blank(lb, j)]
    olds = {i: _record(la[i]) for i, _ in items if i is not None}
    news = {j: _record(lb[j]) for _, j in items if j is not None}
    # a record that keeps its uuid is the same record, wherever the alignment put it
    old_by_id = {_ident(r): i for i, r in olds.items() if _ident(r) is not None}
    by_uuid: list[tuple[int, int]] = []
    for new_at, r in news.items():
        old_at = old_by_id.get(_ident(r)) if _ident(r) is not None else None
        if old_at is not None:
            by_uuid.append((old_at, new_at))
    used_old = {i for i, _ in by_uuid}
    used_new = {j for _, j in by_uuid}
    pairs: list[tuple[int | None, int | None]] = list(by_uuid)
    for i, j in items:
        i2 = None if i in used_old else i
        j2 = None if j in used_new else j
        if i2 is not None or j2 is not None:
            pairs.append((i2, j2))
    out: list[RecordChange] = []
    for pair in pairs:
        match pair:
            case (None, int() as j):
                out.append(RecordChange(f"line {j + 1}", None, news[j], "new"))
            case (int() as i, None):
                out.append(RecordChange(f"line {i + 1}", olds[i], None, "removed"))
            case (int() as i, int() as j) if la[i] != lb[j]:
                note = f"was line {i + 1}" if i != j else ""
                out.append(RecordChange(f"line {j + 1}", olds[i], news[j], note))
    out.sort(key=lambda c: int(c.where.split()[1]))
    return out


def _blank(lines: list[bytes], k: int | None) -> bool:
    return k is None or not lines[k].strip()


def _ident(rec: Any) -> Any:
    """What names a record across versions: its `uuid` (Claude Code), else nothing."""
    if type(rec) is dict:
        u = rec.get("uuid")
        if isinstance(u, str):
            return u
    return None


def _doc_changes(a: Any, b: Any, path: str) -> list[RecordChange]:
    """A list's entries are its records; a dict is looked into key by key."""
    if a == b:
        return []
    if type(a) is dict and type(b) is dict:
        out: list[RecordChange] = []
        for k in [*b, *(k for k in a if k not in b)]:
            va, vb = a.get(k, _NOT_JSON), b.get(k, _NOT_JSON)
            if va == vb:
                continue
            sub = f"{path}/{k}"
            if type(va) in (list, dict) and type(vb) is type(va):
                out += _doc_changes(va, vb, sub)
            else:
                old = None if va is _NOT_JSON else va
                new = None if vb is _NOT_JSON else vb
                out.append(RecordChange(_place(sub), old, new, _note(old, new)))
        return out
    if type(a) is list and type(b) is list:
        return _list_changes(a, b, path)
    return [RecordChange(_place(path) or "the document", a, b)]


def entry_changes(
    a: list[Message], b: list[Message], entry: Callable[[list[Message], int], Any], prefix: str = ""
) -> list[RecordChange]:
    """The entries of a JSON document that change when its messages go from `a` to `b`
    (one entry per message, in order): `entry(messages, k)` is what the writer writes for
    message k. Only the changed messages are encoded, so a preview of one fix on a large
    document costs no whole-document write or parse. Messages compare by identity (an
    edited message is a new object)."""
    out: list[RecordChange] = []
    for pair in align(a, b):
        match pair:
            case (None, int() as j):
                out.append(RecordChange(_place(f"{prefix}/{j}"), None, entry(b, j), "new"))
            case (int() as i, None):
                out.append(RecordChange(_place(f"{prefix}/{i}"), entry(a, i), None, "removed"))
            case (int() as i, int() as j):
                old, new = entry(a, i), entry(b, j)
                if old != new:
                    note = f"was {_place(f'{prefix}/{i}')}" if i != j else ""
                    out.append(RecordChange(_place(f"{prefix}/{j}"), old, new, note))
    return out


def _list_changes(a: list[Any], b: list[Any], path: str) -> list[RecordChange]:
    out: list[RecordChange] = []
    for pair in align(a, b):
        match pair:
            case (None, int() as j):
                out.append(RecordChange(_place(f"{path}/{j}"), None, b[j], "new"))
            case (int() as i, None):
                out.append(RecordChange(_place(f"{path}/{i}"), a[i], None, "removed"))
            case (int() as i, int() as j):
                note = f"was {_place(f'{path}/{i}')}" if i != j else ""
                out.append(RecordChange(_place(f"{path}/{j}"), a[i], b[j], note))
    return out


def _place(pointer: str) -> str:
    return Place(pointer=pointer).in_document() if pointer else ""


def _note(old: Any, new: Any) -> str:
    return "new" if old is None else "removed" if new is None else ""
