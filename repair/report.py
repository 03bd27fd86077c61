"""The report of a repair: every edit, and every dropped block or message verbatim."""

from __future__ import annotations

from datetime import UTC, datetime

from .analysis import Analysis
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
) -> dict:
    edits = [e for fix in fixes for e in edit_entries(fix)]
    return {
        "file": file,
        "output": output,
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
        "before": before.summary(),
        "remaining": [f.to_json() for f in after.findings],
    }
