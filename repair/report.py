"""The report of a repair: every edit, and every dropped block or message verbatim."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import orjson

from .analysis import Analysis
from .errors import WriteFailed
from .plan import Fix


def edit_entries(fix: Fix) -> list[dict]:
    out = []
    for edit in fix.edits:
        entry = {
            "fix": fix.action,
            "finding": fix.code,
            "message_index": fix.message_index,
            "tool_use_id": fix.tool_use_id,
            "action": edit.action,
            "detail": edit.detail,
        }
        if edit.has_removed:
            entry["removed"] = edit.removed
        out.append(entry)
    return out


def build_report(
    *,
    file: str,
    output: str | None,
    format: str,
    target: str,
    fixes: list[Fix],
    before: Analysis,
    after: Analysis,
    backup: str | None = None,
    dropped_records: list[dict] | None = None,
) -> dict:
    edits = [e for fix in fixes for e in edit_entries(fix)]
    return {
        "file": file,
        "output": output,
        "backup": backup,
        "format": format,
        "target": target,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "fixes": [
            {
                "fix": f.action,
                "finding": f.code,
                "message_index": f.message_index,
                "tool_use_id": f.tool_use_id,
                "detail": f.detail,
            }
            for f in fixes
        ],
        "edits": edits,
        # source records the written file leaves out or empties, whole as read
        "dropped_records": dropped_records or [],
        "before": before.summary(),
        "remaining": [f.to_json() for f in after.findings],
    }


_SURROGATE = re.compile("[\ud800-\udfff]")


def encode_report(doc: dict) -> bytes:
    """The report as indented UTF-8 JSON. What orjson cannot write (a lone surrogate,
    nesting deeper than 255) goes through `_dumps_deep`, which has no depth limit and writes
    each lone surrogate as its `\\uXXXX` escape, so the report reads back to exactly the
    session's text. WriteFailed when a value is not JSON at all (then nothing is written)."""
    try:
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
    except (TypeError, orjson.JSONEncodeError):
        pass
    try:
        text = _dumps_deep(doc)
    except (TypeError, ValueError) as exc:
        raise WriteFailed(f"the report cannot be encoded: {exc}") from None
    return text.encode("utf-8") + b"\n"


def _scalar(v) -> str:
    if isinstance(v, str):
        return _SURROGATE.sub(
            lambda m: f"\\u{ord(m.group()):04x}", json.dumps(v, ensure_ascii=False)
        )
    if v is None or isinstance(v, (bool, int, float)):
        return json.dumps(v, allow_nan=False)
    raise TypeError(f"a {type(v).__name__} is not a JSON value")


def _dumps_deep(obj) -> str:
    """json.dumps(obj, indent=2, ensure_ascii=False) without recursion."""
    out: list[str] = []
    todo: list = [(obj, 0)]  # (value, level) to write, or a str to copy
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        v, level = item
        if isinstance(v, dict) and v:
            pad = "\n" + "  " * (level + 1)
            todo.append("\n" + "  " * level + "}")
            for k, (key, val) in reversed(list(enumerate(v.items()))):
                todo.append((val, level + 1))
                todo.append(("," if k else "") + pad + _scalar(str(key)) + ": ")
            todo.append("{")
        elif isinstance(v, (list, tuple)) and v:
            pad = "\n" + "  " * (level + 1)
            todo.append("\n" + "  " * level + "]")
            for k in range(len(v) - 1, -1, -1):
                todo.append((v[k], level + 1))
                todo.append(("," if k else "") + pad)
            todo.append("[")
        elif isinstance(v, dict):
            out.append("{}")
        elif isinstance(v, (list, tuple)):
            out.append("[]")
        else:
            out.append(_scalar(v))
    return "".join(out)
