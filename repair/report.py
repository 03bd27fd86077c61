"""The report of a repair: every edit, and every dropped block or message verbatim."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from .analysis import Analysis
from .errors import WriteFailed
from .jsonio import to_json
from .plan import Fix


def edit_entries(fix: Fix) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for edit in fix.edits:
        entry: dict[str, Any] = {
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
    dropped_records: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
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


def encode_report(doc: dict[str, Any]) -> bytes:
    """The report as indented UTF-8 JSON, numbers and text exactly as the session held them
    (jsonio: literals orjson would change, lone surrogates as their `\\uXXXX` escapes, nesting
    deeper than orjson writes). WriteFailed when a value is not JSON at all (then nothing is
    written)."""
    try:
        return to_json(doc, indent=True) + b"\n"
    except (TypeError, ValueError, RecursionError) as exc:
        raise WriteFailed(f"the report cannot be encoded: {exc}") from None
