"""The report of a repair: every edit, and every dropped block or message verbatim."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from .analysis import Analysis
from .errors import WriteFailed
from .jsonio import to_json
from .model import Session
from .plan import Choices, Fix, make_plan


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


def unfixed(session: Session, analysis: Analysis, choices: Choices | None) -> dict[int, str]:
    """Per finding of `analysis` (by id) whose fix, as chosen, changes what no fix may
    change (the format's `Adapter.frozen`: a Codex compaction's history): why it was left."""
    if session.adapter is None or session.adapter.frozen(session) is None:
        return {}
    plan = make_plan(session, analysis, choices)
    return {id(f): fix.frozen for fix in plan.fixes if fix.frozen is not None for f in fix.findings}


def remaining(
    analysis: Analysis, session: Session | None = None, choices: Choices | None = None
) -> list[dict[str, Any]]:
    """What `analysis` finds, as `fix` reports it (`remaining`): each finding's JSON, with
    `unfixed` (why) where its fix may not be made (`unfixed`); `session`: the one analysed."""
    why = unfixed(session, analysis, choices) if session is not None else {}
    out = []
    for f in analysis.findings:
        entry = f.to_json()
        if id(f) in why:
            entry["unfixed"] = why[id(f)]
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
    after_session: Session | None = None,
    choices: Choices | None = None,
) -> dict[str, Any]:
    """`after`: what remains (of `after_session`, under the user's `choices`: a finding
    whose fix may not be made says why)."""
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
        "remaining": remaining(after, after_session, choices),
    }


def encode_report(doc: dict[str, Any]) -> bytes:
    """The report as indented UTF-8 JSON, numbers and text exactly as the session held them
    (jsonio: literals orjson would change, lone surrogates as their `\\uXXXX` escapes, nesting
    deeper than orjson writes). WriteFailed when a value is not JSON at all (then nothing is
    written)."""
    try:
        return to_json(doc, indent=True, newline=True)
    except (TypeError, ValueError, RecursionError) as exc:
        raise WriteFailed(f"the report cannot be encoded: {exc}") from None
