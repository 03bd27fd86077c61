"""The one line under the header: the session's worst problems in plain words, e.g.
"2 duplicate results (update_todo_list, new_task) · 2 results stamped before their call".

Pure data (no Textual): O(findings), computed with the analysis, off the UI thread on load.
"""

from __future__ import annotations

from collections import defaultdict

from repair.analysis import Analysis
from repair.model import TOOL_USE, Finding, Session
from repair.sanitize import clean_line

# finding code -> (one, several). A code not listed here is shown by its name.
PHRASES: dict[str, tuple[str, str]] = {
    "orphan-tool-use": ("call with no result", "calls with no result"),
    "pending-tool-use": ("call still waiting at the end", "calls still waiting at the end"),
    "orphan-tool-result": ("result with no call", "results with no call"),
    "mismatched-tool-result-id": ("result under a wrong id", "results under a wrong id"),
    "duplicate-tool-result": ("duplicate result", "duplicate results"),
    "misplaced-tool-result": ("result away from its call", "results away from their call"),
    "duplicate-tool-use-id": ("reused call id", "reused call ids"),
    "tool-result-not-first": (
        "message with text before its results",
        "messages with text before their results",
    ),
    "empty-content": ("empty message or block", "empty messages or blocks"),
    "invalid-tool-id": ("invalid tool id", "invalid tool ids"),
    "wrong-role-block": ("block in the wrong role", "blocks in the wrong role"),
    "malformed": ("unreadable record", "unreadable records"),
    "broken-chain": ("chain broken by a lost record", "chains broken by lost records"),
    "result-before-use": ("result stamped before its call", "results stamped before their call"),
    "out-of-order-timestamp": ("timestamp out of order", "timestamps out of order"),
    "consecutive-same-role": ("same-role pair in a row", "same-role pairs in a row"),
    "trailing-tool-results": (
        "unanswered tool results at the end",
        "unanswered tool results at the end",
    ),
}
MAX_NAMES = 3


def phrase(code: str, n: int) -> str:
    one, many = PHRASES.get(code, (code, code))
    return f"{n} {one if n == 1 else many}"


def _tool_name(session: Session, analysis: Analysis, f: Finding) -> str | None:
    mi, bi = f.position, f.block_index
    if mi is None or bi is None or mi >= len(session.messages):
        return None
    blocks = session.messages[mi].blocks
    if bi >= len(blocks):
        return None
    if blocks[bi].type == TOOL_USE:
        return blocks[bi].name
    for res in analysis.pairing.results_by_message.get(mi, ()):
        if res.bi == bi:
            use = res.use or res.partner
            return use.block.name if use is not None else None
    return None


def problems(session: Session, analysis: Analysis) -> list[tuple[str, str]]:
    """(severity, text) per finding code, worst first, then the most frequent."""
    by_code: dict[str, list[Finding]] = defaultdict(list)
    for f in analysis.findings:
        by_code[f.code].append(f)
    items = []
    for code, fs in by_code.items():
        worst = min(fs, key=lambda f: f.severity.rank).severity
        names: list[str] = []
        for f in fs:
            name = _tool_name(session, analysis, f)
            if name and clean_line(name, 30) not in names:
                names.append(clean_line(name, 30))
        text = phrase(code, len(fs))
        if names:
            shown = ", ".join(names[:MAX_NAMES])
            text += f" ({shown}{', …' if len(names) > MAX_NAMES else ''})"
        items.append((worst.rank, -len(fs), str(worst), text))
    items.sort(key=lambda t: (t[0], t[1]))
    return [(sev, text) for _o, _n, sev, text in items]


def clean_text(session: Session) -> str:
    n = len(session.messages)
    return f"No problems found: {n} message{'s' if n != 1 else ''}, every call answered in order."
