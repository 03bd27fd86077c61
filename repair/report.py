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
    """The report as indented UTF-8 JSON. Text orjson cannot write (a lone surrogate, nesting
    deeper than 255) goes through the stdlib, with each lone surrogate written as its
    `\\uXXXX` escape so that the report reads back to exactly the text of the session.
    WriteFailed when even that cannot encode it (then nothing is written)."""
    try:
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS) + b"\n"
    except (TypeError, orjson.JSONEncodeError):
        pass
    try:
        text = json.dumps(doc, ensure_ascii=False, indent=2)
    except RecursionError:
        raise WriteFailed(
            "the report cannot be encoded: a dropped block nests deeper than the JSON encoder "
            "allows; drop less (--only/--strategy) or repair that record by hand"
        ) from None
    except (TypeError, ValueError) as exc:
        raise WriteFailed(f"the report cannot be encoded: {exc}") from None
    text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text.encode("utf-8") + b"\n"
