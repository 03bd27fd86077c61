"""Before/after view of the messages a fix touches, as a unified diff of their JSON."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from .jsonio import to_json
from .model import Message, Session
from .sanitize import clean


@dataclass
class Preview:
    before: list[tuple[int, Message]]  # (message index, message) in the old session
    after: list[tuple[int, Message]]  # in the new session
    diff: list[str]  # unified diff lines, sanitised for display


MAX_FIELD = 2000  # characters of one string shown in a preview


def message_json(msg: Message) -> dict:
    return {"role": msg.role, "content": [_short(b.data) for b in msg.blocks]}


MAX_DEPTH = 48  # levels of nesting shown; a deeper value is summarised


def _short(value, depth: int = 0):
    if isinstance(value, str):
        return (
            value
            if len(value) <= MAX_FIELD
            else value[:MAX_FIELD] + f"… (+{len(value) - MAX_FIELD} chars)"
        )
    if isinstance(value, (dict, list)) and depth >= MAX_DEPTH:
        return f"… (nested deeper than {MAX_DEPTH} levels)"
    if isinstance(value, dict):
        return {k: _short(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_short(v, depth + 1) for v in value]
    return value


def touched(
    before: Session, after: Session
) -> tuple[list[tuple[int, Message]], list[tuple[int, Message]]]:
    """Messages of `before` that are gone or changed, and messages of `after` that are new or
    changed (identity tells: untouched messages are the same objects)."""
    after_ids = {id(m) for m in after.messages}
    before_ids = {id(m) for m in before.messages}
    old = [(i, m) for i, m in enumerate(before.messages) if id(m) not in after_ids]
    new = [(i, m) for i, m in enumerate(after.messages) if id(m) not in before_ids]
    return old, new


def render(messages: list[tuple[int, Message]]) -> list[str]:
    lines: list[str] = []
    for i, m in messages:
        body = to_json(message_json(m), indent=True).decode()
        lines.append(f"// message {i}")
        lines.extend(body.splitlines())
    return lines


def preview(before: Session, after: Session) -> Preview:
    old, new = touched(before, after)
    a, b = render(old), render(new)
    diff = [clean(line) for line in difflib.unified_diff(a, b, "before", "after", lineterm="", n=3)]
    return Preview(old, new, diff)
