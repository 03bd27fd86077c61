"""The one line under the header: the session's worst problems in plain words, e.g.
"2 duplicate results (update_todo_list, new_task) · 2 results stamped before their call".

Pure data (no Textual): O(findings), computed with the analysis, off the UI thread on load.
"""

from __future__ import annotations

from collections import defaultdict

from repair import codes
from repair.analysis import Analysis
from repair.model import TOOL_USE, Finding, Session
from repair.sanitize import clean_line

MAX_NAMES = 3


def phrase(code: str, n: int) -> str:
    one, many = codes.get(code).counted or (code, code)
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
    pairing = analysis.pairing
    # (the pairing of the calls and results rules speak of: not the whole one built for it)
    for res in pairing.checked.results_by_message.get(mi, ()):
        if res.bi == bi:
            use = res.use or res.partner
            return use.block.name if use is not None else None
    before = pairing.prev_live.get(mi)
    if pairing.checked is not pairing and before is not None:
        # a lean pairing's usual pair (`pair`): its call is the one of its id in the live
        # message before it
        tid = blocks[bi].tool_id
        for b in session.messages[before].blocks if tid else ():
            if b.type == TOOL_USE and b.tool_id == tid:
                return b.name
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
                if len(names) > MAX_NAMES:
                    break  # (one more than shown: the line says there are more)
        text = phrase(code, len(fs))
        if names:
            shown = ", ".join(names[:MAX_NAMES])
            text += f" ({shown}{', …' if len(names) > MAX_NAMES else ''})"
        items.append((worst.rank, -len(fs), str(worst), text))
    items.sort(key=lambda t: (t[0], t[1]))
    return [(sev, text) for _o, _n, sev, text in items]


def clean_text(stored: int, sent: int) -> str:
    """A clean session's line, in the header's words: the messages of the file, and the
    number `histview check` counts where the target receives another one."""
    n = f"{stored} message{'s' if stored != 1 else ''}"
    if sent != stored:
        n += f" ({sent} sent)"
    return f"No problems found in {n}: every call answered in order."
