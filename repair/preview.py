"""The one diff renderer: what a change writes, for the TUI's repair pane and `fix`'s dry run.

A preview has two parts:

- `description`: what happens to the blocks, in words, from the messages the change
  touched ("move result toolu_02C from message 5 into message 4, after toolu_02B;
  message 5 is dropped");
- `diff`: the records the format's writer writes differently (`Adapter.record_changes`):
  for JSONL formats each line that is new, rewritten or re-linked (a Claude Code record with
  its new `parentUuid`, a Codex `function_call_output` line), for JSON documents each entry
  of the document that changes; each record pretty-printed and diffed, every line
  sanitised for display.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .jsonio import to_json
from .model import TOOL_RESULT, TOOL_USE, Block, Message, Session, block_text
from .records import RecordChange
from .sanitize import clean, clean_line

MAX_FIELD = 2000  # characters of one string shown in a preview
MAX_DIFF_LINES = 4000  # a diff stops here; the description still names every change
MAX_RECORD_LINES = 400  # lines of one record shown (a record is pretty-printed)
MAX_DESCRIPTION = 200  # sentences of a description shown
MAX_DEPTH = 48  # levels of nesting shown; a deeper value is summarised


@dataclass
class Preview:
    description: list[str]  # sentences, sanitised
    diff: list[str]  # unified diff lines of the records written, sanitised
    more: int = 0  # diff lines left out (over the limit)
    records: list[RecordChange] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The preview as text: the description, then the diff."""
        out = [f"# {d}" for d in self.description[:MAX_DESCRIPTION]]
        if len(self.description) > MAX_DESCRIPTION:
            out.append(f"# … and {len(self.description) - MAX_DESCRIPTION} more messages change")
        out += self.diff
        if self.more:
            out.append(
                f"... {self.more} more diff lines not shown; write with -o OUT and compare "
                "the files to see everything"
            )
        return out


def message_json(msg: Message) -> dict[str, Any]:
    return {"role": msg.role, "content": [_short(b.data) for b in msg.blocks]}


def _short(value: Any, depth: int = 0) -> Any:
    if isinstance(value, str):
        if len(value) <= MAX_FIELD:
            return value
        return value[:MAX_FIELD] + f"… (+{len(value) - MAX_FIELD} chars)"
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


def preview(
    before: Session,
    after: Session,
    numbers: list[int | None] | None = None,
    *,
    bytes_of: Callable[[Session], bytes] | None = None,
    limit: int = MAX_DIFF_LINES,
) -> Preview:
    """What going from `before` to `after` writes. `numbers`: the provider's messages.N of
    `before`'s messages (how the description names them); `bytes_of`: what a state writes,
    kept by the caller (formats that diff whole files use it)."""
    description = describe(before, after, numbers)
    records = before.adapter.record_changes(before, after, bytes_of)
    diff = render_records(records)
    more = 0
    if len(diff) > limit:
        more = len(diff) - limit
        diff = diff[:limit]
    return Preview(description, diff, more, records)


# ---------------------------------------------------------------- the records


def _pretty(value: Any) -> list[str]:
    if isinstance(value, bytes):
        return [value.decode("utf-8", "replace")]
    try:
        text = to_json(_short(value), indent=True)
    except (TypeError, ValueError):
        return [repr(value)]
    lines = text.decode().split("\n")
    if len(lines) > MAX_RECORD_LINES:
        lines = lines[:MAX_RECORD_LINES] + [f"… (+{len(lines) - MAX_RECORD_LINES} lines)"]
    return lines


def render_records(changes: list[RecordChange]) -> list[str]:
    """Each changed record as a unified diff of its pretty-printed JSON: a new record all
    `+`, a removed one all `-`, a changed one its changed lines with 3 lines around."""
    out: list[str] = []
    for ch in changes:
        note = f" ({ch.note})" if ch.note else ""
        if ch.old is None:
            out.append(f"@@ {ch.where}{note} @@")
            out += ["+" + x for x in _pretty(ch.new)]
        elif ch.new is None:
            out.append(f"@@ {ch.where}{note} @@")
            out += ["-" + x for x in _pretty(ch.old)]
        else:
            body = list(difflib.unified_diff(_pretty(ch.old), _pretty(ch.new), lineterm="", n=3))
            first = True
            for line in body[2:]:
                if line.startswith("@@"):
                    line = f"@@ {ch.where}{note} @@" if first else f"@@ {ch.where} … @@"
                    first = False
                out.append(line)
    return [clean(line) for line in out]


# ---------------------------------------------------------------- the description


def _desc(b: Block) -> str:
    if b.type == TOOL_RESULT:
        return f"result {b.tool_id or '(no id)'}"
    if b.type == TOOL_USE:
        return f"call {b.tool_id or '(no id)'}" + (f" ({b.name})" if b.name else "")
    if b.type == "text":
        text = " ".join(block_text(b).split())
        return f'text "{text[:30]}…"' if len(text) > 30 else f'text "{text}"'
    return f"a {b.type} block"


def describe(before: Session, after: Session, numbers: list[int | None] | None = None) -> list[str]:
    """One sentence per message the change touches, in file order."""
    old, new = touched(before, after)
    if (
        old
        and len(old) == len(before.messages)
        and not {m.uid for _, m in old} & {m.uid for _, m in new}
    ):
        # the adapter loaded the file again (a record re-linked): no message is the same
        sent_before = sum(1 for m in before.messages if m.live)
        sent_after = sum(1 for m in after.messages if m.live)
        return [
            f"The conversation is read again from the records as written: {sent_before} "
            f"messages sent before, {sent_after} after."
        ]
    before_at = {m.uid: i for i, m in enumerate(before.messages)} if old or new else {}

    def name(i: int) -> str:
        k = numbers[i] if numbers is not None and i < len(numbers) else i
        return f"message {k}" if k is not None else f"row {i} (not sent)"

    new_names: dict[int, str] = {}
    for j, m in new:
        if m.uid in before_at:
            new_names[m.uid] = name(before_at[m.uid])
        else:
            k = j - 1
            while k >= 0 and after.messages[k].uid not in before_at:
                k -= 1
            where = f"after {name(before_at[after.messages[k].uid])}" if k >= 0 else "first"
            new_names[m.uid] = f"a new {m.role or ''} message ({where})".replace("  ", " ")

    new_loc: dict[int, tuple[Message, int]] = {}
    for _, m in new:
        for k, b in enumerate(m.blocks):
            new_loc[b.bid] = (m, k)
    old_bids = {b.bid for _, m in old for b in m.blocks}

    def placed(m: Message, k: int) -> str:
        if k == 0:
            return ", at its start" if len(m.blocks) > 1 else ""
        return f", after {_desc(m.blocks[k - 1])}"

    out: list[str] = []
    new_uids = {m.uid for _, m in new}
    for i, m in old:
        said: list[str] = []
        kept: list[int] = []
        for b in m.blocks:
            loc = new_loc.get(b.bid)
            if loc is None:
                said.append(f"drop {_desc(b)} from {name(i)}")
                continue
            m2, k = loc
            nb = m2.blocks[k]
            if m2.uid != m.uid:
                said.append(
                    f"move {_desc(b)} from {name(i)} into {new_names[m2.uid]}{placed(m2, k)}"
                )
            else:
                kept.append(b.bid)
                if nb is not b and nb.tool_id != b.tool_id:
                    said.append(f"{_desc(b)} in {name(i)} takes the id {nb.tool_id}")
                elif nb is not b and nb.data != b.data:
                    said.append(f"rewrite {_desc(b)} in {name(i)}")
        if m.uid in new_uids:
            m2 = next(x for _, x in new if x.uid == m.uid)
            order = [b.bid for b in m2.blocks if b.bid in set(kept)]
            if order != kept:
                firsts = ", ".join(_desc(b) for b in m2.blocks[:3])
                more = ", …" if len(m2.blocks) > 3 else ""
                said.append(f"reorder the blocks of {name(i)}: {firsts}{more}")
        elif not m.blocks:
            said.append(f"drop the empty {name(i)}")
        else:
            said.append(f"{name(i)} is dropped")
        if said:
            out.append(_sentence(said))
    for _, m in new:
        added = [(k, b) for k, b in enumerate(m.blocks) if b.bid not in old_bids]
        if m.uid not in before_at:
            moved_in = len(m.blocks) - len(added)
            what = ", ".join(_desc(b) for _, b in added[:4]) + (", …" if len(added) > 4 else "")
            text = f"insert {new_names[m.uid]}"
            if what:
                text += f" with {what}"
            if moved_in and not what:
                text += " for the blocks moved into it"
            out.append(_sentence([text]))
            continue
        for k, b in added:
            out.append(_sentence([f"add {_desc(b)} to {new_names[m.uid]}{placed(m, k)}"]))
    return [clean_line(s, 400) for s in out]


def _sentence(parts: list[str]) -> str:
    text = "; ".join(parts)
    return text[:1].upper() + text[1:] + ("" if text.endswith("…") else ".")
