"""Texts agents write in place of a real tool result. A real result beats one of these."""

from __future__ import annotations

import re

from .model import SYNTHETIC_PREFIX, Block, block_text

PLACEHOLDERS = (
    "tool execution was interrupted before completion",
    "tool execution was interrupted before a result was produced",
    "[tool execution was interrupted]",
    "[tool use interrupted]",
    "[tool result missing due to internal error]",
    "task was interrupted before this tool call could be completed",
    "no result available for this tool call",
    "[migration] tool result missing",
    "tool execution aborted",
    "interrupted by user",
    "delegating to subtask",
    "[orphaned tool result removed",
)


_ANY = re.compile("|".join(map(re.escape, PLACEHOLDERS)))  # (one search, not one per text)


def is_placeholder(block: Block) -> bool:
    text = block_text(block).strip()
    if text.startswith(SYNTHETIC_PREFIX):
        return True
    low = text.lower()
    if low in ("aborted", ""):
        return True
    return len(low) < 300 and _ANY.search(low) is not None
