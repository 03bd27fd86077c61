"""docs/codes.md, written from the declarations in `repair.codes` and `repair.targets`.

`python -m repair.codes_doc > docs/codes.md` rewrites it; a test fails while the file differs
from what this module writes, so the page cannot drift from the code.
"""

from __future__ import annotations

import sys

from . import codes, targets
from .codes import ANY, NONE, Code

PREAMBLE = """\
# Finding codes, targets, pairing and fixes

<!-- Written by `python -m repair.codes_doc > docs/codes.md` from repair/codes.py and
repair/targets.py; tests/engine/test_codes_doc.py fails while this file differs. Edit those. -->

What the engine relies on when it judges a session (`repair/pairing.py`,
`repair/analysis.py`) and repairs it (`repair/plan.py`, `repair/edits.py`). Codes are
stable: scripts depend on them; new codes may be added, none renamed.

## A finding (`check --json`, the report)

`code`; `severity` (`error`: the provider answers 400; `warning`: accepted, but a sign of
corruption, or a fault the client target repairs on its own each time it sends; `info`:
evidence only); `message_index` (the message as the provider numbers it, `messages.N`:
hidden and malformed records are not sent, so not counted; null for one that is not sent);
`block_index` (or null); `tool_use_id` (or null); `detail` (one sentence); `rule` (the
provider rule it breaks under the target, or null); `source`, where it was read
(`repair/place.py`): `{"line": N}`, the 1-based line of the record for JSONL formats,
and/or `{"path": "/3/content/1"}`, a JSON pointer into a JSON document; `client_repair`
(what the client target sends instead, or null). In `fix`'s `remaining` (the report, `--json`)
a finding whose chosen fix would change what the format keeps as it was (a Codex
compaction's history) also has `unfixed`: why no fix was made.

## Pairing

Only live messages take part (hidden and malformed ones are not sent). For each
`tool_result`, in message and block order, its `tool_use` is the one with the same id in
the immediately preceding assistant message if there is one, else the latest earlier one
with that id, else none. The first result paired with a call is its result; later ones are
duplicates. A call's **home** is the user message right after its assistant message. Only
ids that are non-empty strings pair by id; a block without a usable id still pairs by its
position in a turn's home message. A block in the wrong role's message pairs by id and
takes no place in a turn.

## Fixes

A fix is a list of primitive edits (insert, drop or move a block, set an id, insert, drop
or merge messages, reorder blocks; `repair/edits.py`) chosen by an action; the first
action listed is the default, `--strategy CODE=ACTION` picks another, `none` changes
nothing. The repaired history has the shape every provider accepts: each assistant message
with calls is followed by one user message whose first blocks are one result per call, in
call order. Every fix leaves `thinking` and `redacted_thinking` blocks alone, touches only
the messages it must, is deterministic, and changes nothing on a fixed session; every
dropped block or message is kept verbatim in the report; synthetic content starts with
`[histview]`. Of duplicate results the one kept is a real result over a known placeholder,
then a non-error over an error, then the one already home, then the earliest.
"""


def _targets() -> list[str]:
    out = ["## Targets", "", "| target | judges | sends to |", "|---|---|---|"]
    for name in targets.TARGETS:
        t = targets.get(name)
        out.append(f"| `{name}` | {t.provider} | {'`' + t.base + '`' if t.base else '—'} |")
    out += [
        "",
        "A client target judges what that client sends, by its provider's rules, except the "
        "faults it repairs on its own, which are warnings saying what it sends instead "
        "(measured with the real clients: [clients.md](clients.md)).",
    ]
    return out


def _per_target(values: dict[str, str]) -> str:
    """'error' when every target agrees, else 'target: value' for each group."""
    groups: dict[str, list[str]] = {}
    for name, value in values.items():
        groups.setdefault(value, []).append(f"`{name}`")
    if len(groups) == 1:
        return next(iter(groups))
    return "; ".join(f"{value} under {', '.join(names)}" for value, names in groups.items())


def _code(c: Code) -> list[str]:
    names = targets.TARGETS
    out = [f"### `{c.name}`", "", c.summary[:1].upper() + c.summary[1:] + ".", ""]
    out.append("- Severity: " + _per_target({t: str(c.severity_for(t)) for t in names}) + ".")
    lenient = {t: str(c.severity_for(t, lenient=True)) for t in names}
    if any(lenient[t] != str(c.severity_for(t)) for t in names):
        out.append("- When the target accepts the variant: " + _per_target(lenient) + ".")
    rules = {t: c.rule_for(t) for t in names if c.rule_for(t)}
    if rules:
        out.append("- Rule: " + _per_target({t: f"`{r}`" for t, r in rules.items()}) + ".")
    actions = {t: ", ".join(f"`{a}`" for a in c.actions_for(t)) for t in names}
    out.append("- Actions (default first): " + _per_target(actions) + ".")
    if NONE in c.actions or any(NONE in c.actions_for(t) for t in names):
        out.append(f"- `none`: {c.none_reason}")
    if c.group is not None:
        out.append(f"- One fix answers the findings of one {c.group.value.replace('-', ' ')}.")
    if c.blocks_export:
        out.append("- No file is written while one remains.")
    for client, says in c.client_repair.items():
        out.append(f"- Under `{client}`: {says}")
    return [*out, ""]


def render() -> str:
    assert ANY not in targets.TARGETS
    lines = [PREAMBLE, *_targets(), "", "## Codes", ""]
    for c in codes.BY_NAME.values():
        lines += _code(c)
    return "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
