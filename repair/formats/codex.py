"""Codex CLI rollouts (`~/.codex/sessions/**/rollout-*.jsonl`): one `{timestamp, type, payload}`
record per line; `response_item` payloads are Responses API items.

Normal form: consecutive model-side items (`reasoning`, assistant `message`, `function_call`,
`custom_tool_call`, `local_shell_call`, `web_search_call`) form one assistant message;
consecutive input-side items (user `message`, `function_call_output`,
`custom_tool_call_output`) form one user message, so the outputs written right after their
calls are the calls' home message. Calls become `tool_use` blocks and outputs `tool_result`
blocks keyed by `call_id`. `developer`/`system` messages are hidden rows. Every other line
(`session_meta`, `turn_context`, `event_msg`, `ghost_snapshot` items, ...) is not part of the
conversation and passes through.

The live messages are the history Codex 0.169 rebuilds when it resumes (measured with
the real client; docs/clients.md): a `compacted` line replaces everything before it
with its `replacement_history` (or, in the older form without one, with the earlier user
prompts and the summary as user messages), shown as messages that cannot be edited; a
`thread_rolled_back` event drops the last `num_turns` user turns. What it leaves out is shown
hidden. Lines it cannot read are skipped by Codex (malformed rows here).

Export rewrites only the lines whose blocks changed: a synthetic result becomes a
`function_call_output` line right after its call's line (as Codex itself inserts "aborted"
outputs), a dropped block drops its line (or its part of a message item), an id change rewrites
that line. Untouched lines keep their bytes.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..errors import ExportRefused
from ..jsonio import compact, exact_numbers, loads, numbers_as_read, strip_bom
from ..model import (
    LAZY,
    TEXT,
    TIMED_META,
    TOOL_RESULT,
    TOOL_USE,
    Block,
    LazyMessage,
    Message,
    Session,
    new_uid,
    result_text,
    text_is_blank,
)
from ..wire import _CONTENT
from .base import (
    Adapter,
    Export,
    JsonlLine,
    Probe,
    each_line_value,
    own_type,
    records_merged,
    shown,
    type_name,
)
from .probe import split_lines
from .registry import register
from .regroup import Rules, Runs, own, regrouped, results_with_text

if TYPE_CHECKING:
    from ..files import FileText
    from ..plan import Frozen

ENVELOPE_KEYS = frozenset({"timestamp", "type", "payload"})
RECORD_TYPES = frozenset(
    {"session_meta", "response_item", "compacted", "turn_context", "event_msg", "world_state"}
)
CALL_TYPES = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "local_shell_call": "function_call_output",
}
OUTPUT_TYPES = frozenset({"function_call_output", "custom_tool_call_output"})
MODEL_ITEM_TYPES = frozenset({"reasoning", "web_search_call"})
HIDDEN_ROLES = frozenset({"developer", "system"})


# A value never changed once made, but not frozen: a frozen dataclass's __init__ costs four
# times a plain one's, and a load makes one per block.
@dataclass(slots=True, unsafe_hash=True)
class ItemRef:
    """Where a block lives: the index of its line, and its content part for message items."""

    line: int  # index into state.lines (0-based)
    part: int | None = None


@dataclass(slots=True, unsafe_hash=True)
class CompactRef:
    """A block of the history a `compacted` line stands for (not editable)."""

    line: int  # the compacted line
    item: int  # index of the item in what the line stands for
    part: int | None = None


# User messages Codex writes itself as context: not a user turn (rollback, compaction).
CONTEXT_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<user_shell_command>",
    "<turn_aborted>",
)


@dataclass
class CodexState:
    lines: Sequence[JsonlLine]
    # each line's record as read (None: blank, not JSON, or JSON null); the lines do not
    # hold it (`lines[i].obj` would parse it again)
    objs: list[Any]
    newline: str
    trailing_newline: bool
    bom: bool
    original: dict[int, Block]  # bid -> the block as loaded
    line_blocks: dict[int, list[Block]]  # line index -> its blocks as loaded (message items)
    call_kind: dict[str, str]  # call_id -> item type of the call (for synthetic outputs)
    loaded: list[Message]  # the messages as loaded (an unedited session writes `data` back)
    held: bytes | FileText  # the bytes read, or the large file they are read from again
    compacted: dict[int, Block] = field(default_factory=dict)  # bid -> block of a compaction
    # line -> its items
    compacted_items: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    _message_lines: set[int] | None = field(default=None, repr=False)

    @property
    def message_lines(self) -> set[int]:
        """The lines placed by the messages as loaded (items and malformed records; a
        compacted line's items are written by that line): made when the writer first asks."""
        got = self._message_lines
        if got is None:
            compacted = self.compacted_items
            got = {i for m in self.loaded for i in m.origin if i not in compacted}
            self._message_lines = got
        return got

    @property
    def data(self) -> bytes:
        """The bytes read; a large file's are not held (`Probe.held`: files.FileText) but
        read again, checked, when asked for (an unedited export)."""
        held = self.held
        return held if isinstance(held, bytes) else held.read_all()


def parse_time(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except (ValueError, OverflowError, OSError):
        return None


class CodexAdapter(Adapter):
    name = "codex"
    default_target = "codex"
    unique_call_ids = True
    writes_merged_as_read = True  # an item line not written as read is in dropped_records

    # ---------------------------------------------------------------- detection
    def detect(self, probe: Probe) -> int:
        if probe.kind == "json":  # a rollout of one line (a session that never got going)
            doc = probe.doc
            if (
                isinstance(doc, dict)
                and set(doc) == ENVELOPE_KEYS
                and isinstance(doc.get("type"), str)
                and doc["type"] in RECORD_TYPES
            ):
                return 100 if doc.get("type") == "session_meta" else 80
            return 0
        seen = enveloped = 0
        first = None
        for line in _lines(probe):
            if line.blank or line.error is not None:
                continue
            obj = line.obj
            seen += 1
            if first is None:
                first = obj
            if (
                isinstance(obj, dict)
                and set(obj) == ENVELOPE_KEYS
                and isinstance(obj.get("type"), str)
                and obj["type"] in RECORD_TYPES
            ):
                enveloped += 1
            if seen >= 50:
                break
        if (
            isinstance(first, dict)
            and first.get("type") == "session_meta"
            and isinstance(first.get("payload"), dict)
            and ("originator" in first["payload"] or "cli_version" in first["payload"])
        ):
            # (whatever the lines after it: a fix that drops a short rollout's good lines
            # leaves its odd ones a larger share, and the file must read back as written)
            return 100
        if not seen or enveloped * 10 < seen * 9:
            return 0
        return 80

    # ---------------------------------------------------------------- load
    def load(self, probe: Probe) -> Session:
        lines, newline, trailing_newline = _split(probe)
        messages: list[Message] = []
        # each line's value, read once (None: blank or not JSON, or JSON null); the lines
        # are not made to hold it, a call each (the state does: `CodexState.objs`)
        objs = list(each_line_value(lines, keep=False))
        made = _Made(lines, objs, {}, {}, {})
        call_kind: dict[str, str] = {}
        dropped, legacy = _replay(lines, objs)
        compacted_items: dict[int, list[dict[str, Any]]] = {}
        made.compacted_items = compacted_items
        label = ""

        # Consecutive items of one kind form a message: model items; outputs; input messages.
        # Outputs and user messages stay apart so that a user message between a call and its
        # output is a misplaced result (home = the outputs right after the call).
        group = _Group()

        def close_group() -> None:
            nonlocal group
            if group.kind is not None:
                role = "assistant" if group.kind == "assistant" else "user"
                messages.append(group.message(role, made))
                group = _Group()

        def add(idx: int, at: int | None, itype: str, read: _Read) -> None:
            role, tid = read[0], read[1]
            if itype in CALL_TYPES:
                call_kind.setdefault(tid or "", itype)
            if role in HIDDEN_ROLES or idx in dropped:
                close_group()
                why = (
                    "not in the history Codex resumes (replaced by a compaction or rolled back)"
                    if idx in dropped
                    else None  # an instruction message: sent, not checked
                )
                one = _Group()
                one.add(idx, at, itype, read, objs[idx])
                messages.append(one.message(role, made, hidden=True, why=why))
                return
            kind = "outputs" if itype in OUTPUT_TYPES else role
            if kind != group.kind:
                close_group()
                group.kind = kind
            group.add(idx, at, itype, read, objs[idx])

        usual = USUAL_ITEMS
        for idx, rec in enumerate(objs):
            if usual and type(rec) is dict:
                rtype = rec.get("type")
                if rtype == "response_item":
                    # the usual item joins its message here, as `_read_item` and `add` read
                    # it, without a call each (USUAL_ITEMS)
                    it: Any = rec.get("payload")
                    itype = it.get("type") if type(it) is dict else None
                    kind = usual.get(itype) if type(itype) is str else None
                    cid: Any = None
                    if kind is not None:  # (`it` is an object: it has a type)
                        if dropped and idx in dropped:
                            kind = None
                        elif not kind:
                            kind = _text_item_role(it)
                        elif itype != "reasoning":
                            cid = it.get("call_id")
                            if not (type(cid) is str and cid):
                                kind = None
                    if kind:
                        if kind != group.kind:
                            close_group()
                            group.kind = kind
                        g = group
                        g.lines.append(idx)
                        g.raw.append(rec)
                        g.n += 1
                        g.entries += 1
                        if itype == "message":  # a content part: one run with the one before
                            g.runs += not g.tail
                            g.tail = True
                            continue
                        g.runs += 1
                        g.tail = False
                        if itype == "function_call":
                            call_kind.setdefault(cid, itype)
                            g.calls.append(cid)
                        elif itype == "function_call_output":
                            g.answers.append(cid)
                            g.results += 1
                        continue
                elif type(rtype) is str and rtype != "session_meta" and rtype != "compacted":
                    continue  # passes through untouched (as below)
            line = lines[idx]
            if type(rec) is not dict:  # the usual record is an object: one test
                if line.blank:
                    continue
                if line.error is not None:
                    close_group()
                    messages.append(
                        _malformed(idx, line, f"line {line.lineno} is not JSON: {line.error}", rec)
                    )
                    continue
                if not isinstance(rec, dict):
                    close_group()
                    messages.append(
                        _malformed(idx, line, f"the record is {type_name(rec)}, not an object", rec)
                    )
                    continue
            rtype = rec.get("type")
            if "type" in rec and not isinstance(rtype, str):
                close_group()
                messages.append(
                    _malformed(
                        idx, line, f"the record's type is {type_name(rtype)}, not a string", rec
                    )
                )
                continue
            if rtype == "session_meta" and isinstance(rec.get("payload"), dict) and not label:
                sid = rec["payload"].get("id")
                label = sid if isinstance(sid, str) else ""
            if rtype == "compacted":
                compacted_items[idx] = _compacted_items(rec, legacy.get(idx), objs)
                for at, citem in enumerate(compacted_items[idx]):
                    ctype = citem.get("type")
                    if not isinstance(ctype, str):
                        continue  # Codex would not send it either
                    read = _read_item(citem, ctype)
                    if read is None or isinstance(read, str):
                        continue
                    add(idx, at, ctype, read)
                continue
            if rtype != "response_item":
                continue  # passes through untouched
            item = rec.get("payload")
            itype = item.get("type") if isinstance(item, dict) else None
            if not isinstance(item, dict) or not isinstance(itype, str):
                close_group()
                messages.append(_malformed(idx, line, "response_item without a payload type", rec))
                continue
            read = _read_item(item, itype)
            if read is None:
                continue  # ghost_snapshot and other items the model never sees
            if isinstance(read, str):
                close_group()
                messages.append(_malformed(idx, line, read, rec))
                continue
            add(idx, None, itype, read)
        close_group()

        state = CodexState(
            lines=lines,
            objs=objs,
            newline=newline,
            trailing_newline=trailing_newline,
            bom=probe.bom,
            original=made.original,
            line_blocks=made.line_blocks,
            call_kind=call_kind,
            loaded=list(messages),
            held=probe.held(),  # after the pass over the lines: a large file is not kept
            compacted=made.compacted,
            compacted_items=compacted_items,
        )
        return self.session(probe.path, messages, state, label)

    def block_time(self, session: Session, block: Block) -> float | None:
        """The `timestamp` of the line holding the item (one line per call and output)."""
        state = session.state
        ref = block.origin
        if not isinstance(ref, ItemRef) or not isinstance(state, CodexState):
            return None
        if not 0 <= ref.line < len(state.objs) or not isinstance(state.objs[ref.line], dict):
            return None
        return parse_time(state.objs[ref.line].get("timestamp"))

    def merged(
        self, first: Message, second: Message, moved: Sequence[Block] | None = None
    ) -> Message:
        """Named by the lines of both: the writer writes the second's message items that
        hold no block (`content: []`) where they were, as Codex CLI 0.169 sends them
        (tests/fixtures/clients/codex/merged_empty_item.recorded.json)."""
        if moved is not None and not first.blocks:
            # a block moved into a message item of no content: the writer writes the
            # block's line alone and reports the empty item (`empty_items`)
            return first
        # a block of the history a compacted line stands for names no line of its own
        refs = () if moved is None else (b.origin for b in moved)
        taken = None if moved is None else {r.line for r in refs if isinstance(r, ItemRef)}
        return records_merged(first, second, taken)

    def kept_apart(self, first: Message, second: Message) -> str | None:
        if results_with_text(first, second, (TOOL_RESULT,)):
            return (
                "Codex writes a tool output as an item of its own, and the user's text as a "
                "message item after it: the rollout holds them as two messages"
            )
        return None

    def stamped(self, session: Session, made: Collection[int]) -> Session:
        """The messages around those a fix made, grouped as the written rollout reads back
        (`regroup`): outputs and the user's message items apart, items of one kind in a row
        one message, each stamped with its first line's time, each part of a message
        written apart named by its own lines (`_part`), a message joined of items of
        several named by the lines of each (`merged`: the writer so writes their items of
        no content too)."""
        if not isinstance(session.state, CodexState):
            return session
        state = session.state
        session, made = _turns_cut(session, made, state)
        rules = Rules(
            runs=_runs,
            joins=lambda kind, _blocks, then: kind == then,
            time=lambda blocks, before: self._written_time(session, blocks[0], before),
            part=lambda part, whole: _part(part, whole, state),
            merged=self.merged,
        )
        return regrouped(session, made, rules)

    def _written_time(self, session: Session, block: Block, before: Message | None) -> float | None:
        """The time of the line a block is written as: its own line's; a new output's, its
        call's line's where the call is in the message before it (the writer puts it after
        the call with the call's timestamp: `_synthetic_after_calls`)."""
        if block.origin is None and block.type == TOOL_RESULT and before is not None:
            for b in before.blocks:
                if b.type == TOOL_USE and b.tool_id == block.tool_id:
                    return self.block_time(session, b)
        return self.block_time(session, block)

    def frozen(self, session: Session) -> Frozen | None:
        """The messages holding history a compacted line stands for, and its blocks: Codex
        rebuilds that history from the line, which the writer writes as it was."""
        state = session.state
        if not isinstance(state, CodexState) or not state.compacted_items:
            return None
        from ..plan import Frozen

        compacted = state.compacted_items
        why: dict[int, str] = {}
        for m in session.messages:
            line = next((i for i in m.origin or () if i in compacted), None)
            if line is not None:
                why[m.uid] = compaction_kept(state.lines[line].lineno)
        return Frozen(frozenset(why), frozenset(state.compacted), why)

    # ---------------------------------------------------------------- write
    def write(self, session: Session) -> Export:
        """The bytes, and every line the written file leaves out or rewrites, whole as read
        (its own timestamp, the parts and keys histview does not show), for the report."""
        state: CodexState = session.state
        msgs = session.messages
        _check_compactions_kept(msgs, state)
        units = _units(msgs, state)
        out: list[bytes] = []
        lines = state.lines
        emitted_upto = 0  # lines before this index that are not items were written
        item_lines = state.message_lines
        written: dict[int, bool] = {}  # item line -> written as read
        for anchor, data in units:
            if anchor is not None:
                while emitted_upto < anchor:
                    if emitted_upto not in item_lines:
                        out.append(lines[emitted_upto].raw)
                    emitted_upto += 1
                emitted_upto = max(emitted_upto, anchor + 1)
                written[anchor] = written.get(anchor, True) and data == lines[anchor].raw
            out.append(data)
        while emitted_upto < len(lines):
            if emitted_upto not in item_lines:
                out.append(lines[emitted_upto].raw)
            emitted_upto += 1
        nl = state.newline.encode()
        body = nl.join(out)
        if state.trailing_newline and out:
            body += nl
        dropped = []
        for idx in sorted(item_lines):
            if written.get(idx) is True:
                continue
            line = lines[idx]
            dropped.append(
                {
                    "line": line.lineno,
                    "outcome": "deleted" if idx not in written else "rewritten",
                    "record": _record(state.objs[idx], line),
                }
            )
        return Export((b"\xef\xbb\xbf" if state.bom else b"") + body, dropped)


def _runs(m: Message) -> Runs:
    """A message's blocks as the loader groups the items written for them: a user message's
    outputs apart from its other blocks (message items), in block order; a message of no
    block is a group of its own."""
    if not m.blocks:
        return [(own(m), [])]
    if m.role != "user":
        return [(m.role, list(m.blocks))]
    runs: Runs = []
    for b in m.blocks:
        kind = "outputs" if b.type == TOOL_RESULT else "user"
        if runs and runs[-1][0] == kind:
            runs[-1][1].append(b)
        else:
            runs.append((kind, [b]))
    return [(("user", "outputs") if k == "outputs" else k, blocks) for k, blocks in runs]


def _turns_cut(
    session: Session, made: Collection[int], state: CodexState
) -> tuple[Session, Collection[int]]:
    """The session with each turn the writer cuts to write a new output right after one of
    its calls, not its last item (`_call_anchors`), held as the rollout reads it back: the
    turn's items up to the call, a message of the output, the turn's items after it; for
    the messages a fix made holding new outputs for the calls of the turn right before
    them. And the messages made, with those."""
    msgs = session.messages
    at = [j for j, m in enumerate(msgs) if j and m.uid in made]
    found = [(j, cuts) for j in at if (cuts := _cuts(msgs[j - 1], msgs[j], made))]
    if not found:
        return session, made
    got: list[Message] = []
    more: set[int] = set()
    pos = 0
    for j, cuts in found:
        got += msgs[pos : j - 1]
        turn, m = msgs[j - 1], msgs[j]
        start = len(got)
        piece: list[Block] = []
        moved: list[Block] = []
        for b in turn.blocks:
            piece.append(b)
            outputs = cuts.get(b.bid)
            if outputs is not None:
                got.append(_piece(turn, piece, not moved, state))
                got.append(Message("user", tuple(outputs)))
                moved += outputs
                piece = []
        if piece:
            got.append(_piece(turn, piece, False, state))
        rest = [b for b in m.blocks if all(b is not x for x in moved)]
        if rest:
            got.append(m.with_blocks(rest))
        more.update(x.uid for x in got[start:])
        pos = j + 1
    got += msgs[pos:]
    return session.copy_with(got), {*made, *more}


def _cuts(turn: Message, m: Message, made: Collection[int]) -> dict[int, list[Block]] | None:
    """The calls of assistant message `turn` (bids) that a new output of `m`, a user message
    a fix made right after it, is written right after, not after the turn's last item, and
    those outputs."""
    if m.uid not in made or not m.live or m.role != "user":
        return None
    if not turn.live or turn.role != "assistant":
        return None
    new: dict[str | None, list[Block]] = {}
    for b in m.blocks:
        if b.type == TOOL_RESULT and b.origin is None:
            new.setdefault(b.tool_id, []).append(b)
    if not new:
        return None
    items = [b for b in turn.blocks if isinstance(b.origin, ItemRef)]
    if not items:
        return None
    return {
        b.bid: new[b.tool_id]
        for b, anchor in _call_anchors(turn, new)
        if anchor == b.origin.line and b is not items[-1] and b.tool_id in new
    }


def _piece(turn: Message, blocks: list[Block], first: bool, state: CodexState) -> Message:
    """A piece of a turn cut by a new output (`_turns_cut`): the first keeps its uid."""
    m = (
        turn.with_blocks(blocks)
        if first
        else replace(turn, blocks=tuple(blocks), meta=dict(turn.meta), uid=new_uid())
    )
    return _part(m, turn, state)


def _part(part: Message, whole: Message, state: CodexState) -> Message:
    """A part of message `whole` written apart, named by the lines its blocks were read from
    (a part of new blocks only: none) and the lines of `whole`'s message items that hold no
    block (`content: []`) written with it: each goes with the part holding the message item
    block nearest before it (else the first one), so the writer writes it once."""
    mine = {id(b) for b in part.blocks}
    lines = {b.origin.line for b in part.blocks if isinstance(b.origin, (ItemRef, CompactRef))}
    items = [b for b in whole.blocks if isinstance(b.origin, ItemRef) and b.origin.part is not None]
    items = items or [b for b in whole.blocks if b.type != TOOL_RESULT]
    for i in whole.origin or ():
        if i not in state.line_blocks or state.line_blocks[i] or not items:
            continue
        near = [b for b in items if isinstance(b.origin, ItemRef) and b.origin.line < i]
        owner = max(near, key=lambda b: b.origin.line) if near else items[0]
        if id(owner) in mine:
            lines.add(i)
    origin = tuple(sorted(lines))
    first = next((b.origin.line for b in part.blocks if b.origin is not None), None)
    if first is None and origin:
        first = origin[0]
    lineno = None if first is None else state.lines[first].lineno
    return replace(
        part,
        origin=origin,
        src=None if lineno is None else {"line": lineno},
        raw=[state.objs[i] for i in origin] or None,
    )


# -------------------------------------------------------------------- loading helpers


def _lines(probe: Probe) -> Sequence[JsonlLine]:
    return _split(probe)[0]


def _split(probe: Probe) -> tuple[Sequence[JsonlLine], str, bool]:
    """The lines, line ending and final newline, also for a one-line file (probed as JSON)."""
    if probe.kind == "jsonl":
        return probe.lines, probe.newline, probe.trailing_newline
    body, _bom = strip_bom(probe.data)
    return split_lines(body)


def _replay(lines: Sequence[JsonlLine], objs: list[Any]) -> tuple[set[int], dict[int, list[int]]]:
    """What Codex's resume leaves out of the history: the item lines a compaction replaced
    or a rollback dropped; and, for each compaction without a replacement history, the user
    turns it keeps (line indices). The history's item lines since the last compaction or
    rollback are read when the next one asks for them (`_items`), not listed as they come:
    a rollout that has neither is one test per line (tests/formats/test_codex_replay.py
    holds it to the history listed line by line)."""
    dropped: set[int] = set()
    legacy: dict[int, list[int]] = {}
    held: list[int] = []  # the lines of the items Codex holds, up to line `since`
    since = 0
    for idx, rec in enumerate(objs):  # a line that is not JSON has no value (None)
        if type(rec) is not dict and not isinstance(rec, dict):  # (an object: a dict)
            continue
        rtype = rec.get("type")
        if rtype == "response_item":
            continue  # (read back by `_items`)
        if rtype == "compacted":
            history = held + _items(objs, since, idx)
            payload = rec.get("payload")
            if not (
                isinstance(payload, dict) and isinstance(payload.get("replacement_history"), list)
            ):
                legacy[idx] = [j for j in history if _is_user_turn(objs[j])]
            dropped.update(history)
            held, since = [idx], idx + 1
        elif rtype == "event_msg":
            payload = rec.get("payload")
            if not (isinstance(payload, dict) and payload.get("type") == "thread_rolled_back"):
                continue
            history = held + _items(objs, since, idx)
            n = payload.get("num_turns")
            turns = [k for k, j in enumerate(history) if _is_user_turn(objs[j])]
            if isinstance(n, int) and not isinstance(n, bool) and n > 0 and turns:
                cut = turns[0] if n >= len(turns) else turns[-n]
                dropped.update(history[cut:])
                history = history[:cut]
            held, since = history, idx + 1
    return dropped, legacy


def _items(objs: list[Any], start: int, stop: int) -> list[int]:
    """The lines from `start` to `stop` that hold a response item (a payload object)."""
    out = []
    for j in range(start, stop):
        rec = objs[j]
        if (
            isinstance(rec, dict)
            and rec.get("type") == "response_item"
            and isinstance(rec.get("payload"), dict)
        ):
            out.append(j)
    return out


def _is_user_turn(rec: Any) -> bool:
    """A user prompt (not context Codex writes itself): where a turn starts."""
    payload = rec.get("payload") if isinstance(rec, dict) else None
    if not isinstance(payload, dict) or payload.get("type") != "message":
        return False
    if payload.get("role") != "user":
        return False
    content = payload.get("content")
    first = content[0] if isinstance(content, list) and content else None
    text = first.get("text") if isinstance(first, dict) else None
    return isinstance(text, str) and not text.lstrip().startswith(CONTEXT_PREFIXES)


def _compacted_items(
    rec: dict[str, Any], legacy: list[int] | None, objs: list[Any]
) -> list[dict[str, Any]]:
    """The items a compacted line stands for when Codex resumes."""
    payload = rec.get("payload")
    if not isinstance(payload, dict):
        return []
    if isinstance(payload.get("replacement_history"), list):
        return [i for i in payload["replacement_history"] if isinstance(i, dict)]
    items = [objs[j]["payload"] for j in legacy or ()]
    summary = payload.get("message")
    if isinstance(summary, str):
        part = {"type": "input_text", "text": summary}
        items.append({"type": "message", "role": "user", "content": [part]})
    return items


# The items the loader's loop reads inline, and the kind of message each joins ("": a message
# item's role, where it holds one text part that is not blank: `_text_item_role`): what
# `_read_item` reads of each is one block, no blank text and one entry, a call's or an
# output's call_id (a string, not empty). tests/formats/test_codex_usual.py empties it to
# hold the inline way to the long one.
USUAL_ITEMS = {
    "function_call": "assistant",
    "function_call_output": "outputs",
    "reasoning": "assistant",
    "message": "",
}


def _text_item_role(item: dict[str, Any]) -> str | None:
    """The role of a message item of one text part whose text is not blank, a user's or an
    assistant's (`_read_item`: one block, plain, one entry, a content part first and last);
    None for any other."""
    role, content = item.get("role"), item.get("content")
    if role != "assistant" and role != "user" or type(content) is not list or len(content) != 1:
        return None
    part = content[0]
    if type(part) is not dict or part.get("type") not in TEXT_PARTS:
        return None
    text = part.get("text")
    return role if type(text) is str and text and not text.isspace() else None


# What `_read_item` reads of a response item without making its blocks: the role of the
# message it goes to, the call_id of a call or an output, how many blocks it makes, whether
# none of them is a blank text, how many Responses entries Codex sends it as (a run of
# content parts one, any other part or item one: `wire._responses_split`), and whether its
# first and its last block are content blocks (a run may go on from the item before when
# the message is sent as it is: `wire._responses_count`).
_Read = tuple[str, str | None, int, bool, int, bool, bool]
TEXT_PARTS = ("input_text", "output_text")


def _read_item(item: dict[str, Any], itype: str) -> _Read | str | None:
    """What `_item_blocks` makes of a response item, read without making it; a string says
    why it is malformed; None: it is not part of the conversation."""
    if itype in CALL_TYPES or itype in OUTPUT_TYPES:
        call_id = item.get("call_id")
        if not isinstance(call_id, str) or not call_id:
            return f"{itype} without a call_id"
        return "assistant" if itype in CALL_TYPES else "user", call_id, 1, True, 1, False, False
    if itype == "message":
        role = item.get("role")
        content = item.get("content")
        if not isinstance(role, str):
            return "message item without a role"
        if role not in ("user", "assistant") and role not in HIDDEN_ROLES:
            return f"message item with unknown role {shown(role)}"
        if not isinstance(content, list):  # Codex cannot read the line either: it skips it
            return f"message content is {type_name(content)}, not a list"
        plain, entries, in_run, head = True, 0, False, False
        for k, part in enumerate(content):
            ptype = part.get("type") if isinstance(part, dict) else None
            if not isinstance(ptype, str):
                return f"content part {k} has no type"
            if ptype in _CONTENT:  # (its block's type is a content type too)
                head = head or not k
                entries += not in_run
                in_run = True
                if ptype in TEXT_PARTS:  # a text block when its text is a string
                    text = part.get("text")
                    if isinstance(text, str) and (not text or text.isspace()):
                        plain = False
                elif ptype == TEXT and text_is_blank(part):  # a text block as it is
                    plain = False
            else:
                entries += 1
                in_run = False
        return role, None, len(content), plain, entries, head, in_run
    if itype in MODEL_ITEM_TYPES:
        return "assistant", None, 1, True, 1, False, False
    return None


def _item_blocks(
    idx: int, line: JsonlLine, item: dict[str, Any], itype: str, at: int | None = None
) -> list[Block]:
    """The blocks of one response item `_read_item` read as part of the conversation. `at`:
    the item's place in what a compacted line stands for."""
    src = {"line": line.lineno}
    if itype in CALL_TYPES:
        call_id = item["call_id"]
        if itype == "function_call":
            name = item.get("name")
            tool_input = _parse_arguments(item.get("arguments"))
        elif itype == "custom_tool_call":
            name = item.get("name")
            tool_input = item.get("input")
        else:
            name = "local_shell"
            tool_input = item.get("action")
        name = name if isinstance(name, str) else "?"
        data = {"type": TOOL_USE, "id": call_id, "name": name, "input": tool_input}
        return [Block(TOOL_USE, data, tool_id=call_id, name=name, src=src, origin=_ref(idx, at))]
    if itype in OUTPUT_TYPES:
        call_id = item["call_id"]
        data = {"type": TOOL_RESULT, "tool_use_id": call_id, "content": item.get("output")}
        return [Block(TOOL_RESULT, data, tool_id=call_id, src=src, origin=_ref(idx, at))]
    if itype == "message":
        blocks = []
        for k, part in enumerate(item["content"]):
            ptype = part["type"]
            if ptype in TEXT_PARTS and isinstance(part.get("text"), str):
                data = {"type": TEXT, "text": part["text"]}
                btype = TEXT
            else:
                data, btype = part, own_type(ptype, "codex")
            blocks.append(Block(btype, data, src=src, origin=_ref(idx, at, k)))
        return blocks
    return [Block(itype, item, src=src, origin=_ref(idx, at))]  # a model item


def _ref(idx: int, at: int | None, part: int | None = None) -> ItemRef | CompactRef:
    return ItemRef(idx, part) if at is None else CompactRef(idx, at, part)


def _parse_arguments(args: Any) -> Any:
    if isinstance(args, str):
        try:
            return loads(args)
        except (ValueError, RecursionError):
            return args
    return args


@dataclass(slots=True)
class _Made:
    """The lines the messages are read from, and the blocks made of them as loaded (what the
    writer and the emulation compare a block with to know it unchanged): made at load for a
    message holding history a compacted line stands for, when first read for the others."""

    lines: Sequence[JsonlLine]
    objs: list[Any]  # each line's record (`CodexState.objs`)
    original: dict[int, Block]  # bid -> a block of a line's item
    line_blocks: dict[int, list[Block]]  # line index -> the blocks of its message item
    compacted: dict[int, Block]  # bid -> a block of a compacted line's history
    compacted_items: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    # the load's `exact_numbers()`: a call's arguments are parsed as the lines were
    exact: bool = field(default_factory=exact_numbers)

    def blocks_of(self, sources: list[tuple[int, int | None]]) -> tuple[Block, ...]:
        """The blocks of the items at these (line, place in its compaction's history or
        None), each kept as loaded."""
        with numbers_as_read(self.exact):
            return self._blocks_of(sources)

    def _blocks_of(self, sources: list[tuple[int, int | None]]) -> tuple[Block, ...]:
        out: list[Block] = []
        for idx, at in sources:
            line = self.lines[idx]
            item = self.objs[idx]["payload"] if at is None else self.compacted_items[idx][at]
            itype = item["type"]
            blocks = _item_blocks(idx, line, item, itype, at)
            kept = self.original if at is None else self.compacted
            for b in blocks:
                kept[b.bid] = b
            if at is None and itype == "message":
                self.line_blocks[idx] = blocks
            out += blocks
        return tuple(out)


_new = object.__new__


class CodexMessage(LazyMessage):
    """A message of whole rollout items (its lines: `origin`), none of a compaction's
    history, whose blocks are made when first asked for (`LazyMessage`): the loader reads its
    tool ids, plain shape and block counts from the items (`_read_item`), and how many
    Responses entries Codex sends it as (`_sent`, for `clients.codex.light`). Equal to the
    message of the same items made at load (tests/formats/test_codex_lazy.py)."""

    __slots__ = ("_made", "_sent", "_runs", "timestamp", "_meta")
    _made: _Made
    # its time a field (read by the pairing and the time rules of every message), its
    # `meta` made from it when first asked for; nothing writes a time into the dict (an
    # edit makes a copy)
    timestamp: float | None
    _meta: Any
    meta = TIMED_META
    _runs: int  # `content_runs`
    # the entries it is sent as while its items are all function calls, their outputs,
    # messages and model items (-1: a custom or shell call, or its output, is among them;
    # or a copy), its blocks made or not (they are the items' as loaded)
    _sent: int

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # a copy (`dataclasses.replace`: an edit) holds blocks of its own: counted from them
        self._sent = -1
        super().__init__(*args, **kwargs)

    def _make_blocks(self) -> tuple[Block, ...]:
        return self._made.blocks_of([(i, None) for i in self._origin])

    def _make_src(self) -> dict[str, Any] | None:
        return {"line": self._made.lines[self._origin[0]].lineno}

    def content_runs(self) -> int | None:
        return None if self.made() else self._runs


class _Group:
    """The items of one message as the loader reads them: where they are (line, place in a
    compaction's history or None) and what a check reads of them without their blocks."""

    __slots__ = (
        *("kind", "ats", "lines", "raw", "calls", "answers", "n", "results", "plain"),
        *("entries", "runs", "tail", "odd", "empty"),
    )

    def __init__(self) -> None:
        self.kind: str | None = None  # "assistant", "user", "outputs" (a hidden one: None)
        # a compacted line's -> the places in the history it stands for of its items here
        self.ats: dict[int, list[int]] = {}
        self.lines: list[int] = []
        self.raw: list[Any] = []  # the record of each line
        self.calls: list[str | None] = []
        self.answers: list[str | None] = []
        self.n = self.results = self.entries = self.runs = 0
        self.tail = False  # the last block is a content block
        self.plain = True  # (`Message.tool_ids`' reading of the shape)
        self.odd = False  # a custom or shell call, or its output
        # the message items of no content (`content: []`) of a compaction's history
        self.empty: tuple[CompactRef, ...] = ()

    def add(self, idx: int, at: int | None, itype: str, read: _Read, rec: Any) -> None:
        """One more item, read from line `idx` (its record `rec`)."""
        _role, tid, n, plain, entries, head, tail = read
        if not self.lines or self.lines[-1] != idx:
            self.lines.append(idx)
            self.raw.append(rec)
        if at is not None:
            self.ats.setdefault(idx, []).append(at)
        if itype in CALL_TYPES:
            self.calls.append(tid)
            self.odd = self.odd or itype != "function_call"
        elif itype in OUTPUT_TYPES:
            self.answers.append(tid)
            self.results += 1
            self.odd = self.odd or itype != "function_call_output"
        elif n:
            self.plain = self.plain and plain
        elif at is not None:
            self.empty += (CompactRef(idx, at),)
        self.n += n
        self.entries += entries or 1  # (a message item of no content is sent as it is)
        self.runs += entries - (self.tail and head)
        if n:
            self.tail = tail

    def message(
        self,
        role: str,
        made: _Made,
        hidden: bool = False,
        why: str | None = None,
    ) -> Message:
        lines = self.lines
        origin = tuple(lines)
        raw = self.raw
        m: Message
        ats = self.ats
        if ats:  # (its items in order: a line's, or those of a compacted line's history)
            sources = [(i, at) for i in lines for at in ats.get(i, (None,))]
            blocks = made.blocks_of(sources)
            src = {"line": made.lines[lines[0]].lineno}
            m = Message(role, blocks, raw, hidden=hidden, src=src, origin=origin)
            if self.empty:  # (no line of their own: the message names them)
                m.meta[EMPTY_ITEMS] = self.empty
        else:
            # (`LazyMessage.unmade` spelt out, its time a field and its meta left to come,
            # `model.TIMED_META`: no call and no dict for each of 100k messages)
            lazy: CodexMessage = _new(CodexMessage)
            lazy.role = role
            lazy._blocks = LAZY
            lazy.raw = raw
            lazy.hidden = hidden
            lazy.malformed = None
            lazy._src = LAZY
            lazy._origin = origin
            lazy.uid = new_uid()
            lazy._tool_ids = (tuple(self.calls), tuple(self.answers))
            lazy._plain_shape = self.n > 0 and self.plain
            lazy._counts = (self.n, self.results)
            lazy._made = made
            lazy._sent = -1 if self.odd else self.entries
            lazy._runs = self.runs
            t = lazy.timestamp = parse_time(raw[0].get("timestamp"))
            if why:  # (the keys in the order the long way's meta holds them)
                lazy._meta = (
                    {"hidden_reason": why} if t is None else {"hidden_reason": why, "timestamp": t}
                )
            else:
                lazy._meta = LAZY
            return lazy
        if why:
            m.meta["hidden_reason"] = why
        t = parse_time(raw[0].get("timestamp"))
        if t is not None:
            m.meta["timestamp"] = t
        return m


def _malformed(idx: int, line: JsonlLine, reason: str, rec: Any) -> Message:
    """Line `idx`, whose record `rec` (None: not JSON) cannot be read as items."""
    return Message(
        role=None,
        blocks=(),
        raw=_record(rec, line),
        malformed=reason,
        src={"line": line.lineno},
        origin=(idx,),
    )


def payload_of(ref: ItemRef | CompactRef, state: CodexState) -> dict[str, Any]:
    """The Responses item a block was read from: its rollout line's payload, or the item of
    the history a compacted line stands for."""
    if isinstance(ref, CompactRef):
        return state.compacted_items[ref.line][ref.item]
    payload: dict[str, Any] = state.objs[ref.line]["payload"]  # an object (load checks)
    return payload


# `Message.meta` key: the message items of no content of a compaction's history that the
# loader grouped into the message (`CompactRef`s, part None)
EMPTY_ITEMS = "empty_items"


def empty_items(m: Message, state: CodexState) -> list[ItemRef | CompactRef]:
    """`m`'s message items that hold no block at all (`content: []`), in file order (a
    compacted line's in the order of its history): sent by Codex CLI 0.169 as they are
    (measured: tests/fixtures/clients/codex/empty_*.sent.json, compacted_empty_item.sent.json).
    A line's is written where it was, unless the message was nothing else and got blocks (a
    result put into the empty message is its output line alone; the report keeps the empty
    item); a compacted line's is written by that line, as it was, so is always sent. `m`'s
    blocks are made first (they fill `line_blocks`)."""
    blocks = m.blocks
    origin = m.origin or ()
    line_blocks = state.line_blocks
    lines = [i for i in origin if i in line_blocks and not line_blocks[i]]
    out: list[ItemRef | CompactRef] = (
        [] if blocks and len(lines) == len(origin) else [ItemRef(i) for i in lines]
    )
    compacted = m.meta.get(EMPTY_ITEMS)
    if compacted:  # (not in a part of the message written apart that names not its line)
        out += [r for r in compacted if r.line in origin]
        out.sort(key=place)
    return out


def place(ref: ItemRef | CompactRef) -> tuple[int, int]:
    """Where an item is read from, in file order: its line, and its place in the history a
    compacted line stands for."""
    return (ref.line, ref.item if type(ref) is CompactRef else -1)


def in_order(m: Message, state: CodexState) -> Iterator[Block | ItemRef | CompactRef]:
    """`m`'s blocks, and (where they are read from) its message items that hold no block
    (`empty_items`), each before the first block read from a later place (`place`): the
    order the writer writes a line's in and a compacted line holds its history's, and
    Codex sends them in."""
    empty = empty_items(m, state)
    if not empty:
        yield from m.blocks
        return
    k = 0
    for b in m.blocks:
        ref = b.origin
        if type(ref) is ItemRef or type(ref) is CompactRef:
            at = place(ref)
            while k < len(empty) and place(empty[k]) < at:
                yield empty[k]
                k += 1
        yield b
    yield from empty[k:]


# -------------------------------------------------------------------- export helpers


def _units(messages: list[Message], state: CodexState) -> list[tuple[int | None, bytes]]:
    """The item lines to write, in order: (anchor line index or None for new lines, bytes)."""
    lines = state.lines
    units: list[tuple[int | None, bytes]] = []
    # synthetic outputs go right after their call's turn (Codex's own repair writes them
    # after the call; a turn's later items stay with it so it reads back as one message)
    after_call = _synthetic_after_calls(messages, state)
    placed = {bid for entries in after_call.values() for bid, _data in entries}
    for m in messages:
        if m.malformed is not None:
            idx = m.origin[0]
            units.append((idx, lines[idx].raw))
            continue
        parts_of: dict[int, list[Block]] = {}  # message item line -> its blocks in this message
        for b in m.blocks:
            if isinstance(b.origin, ItemRef) and b.origin.part is not None:
                parts_of.setdefault(b.origin.line, []).append(b)
        new_texts: list[Block] = []
        for block in in_order(m, state):
            if isinstance(block, CompactRef):
                continue  # an item of no content of a compacted line: written by that line
            if isinstance(block, ItemRef):  # an item of no content: written where it was
                _flush_texts(units, new_texts, m, state.objs)
                units.append((block.line, lines[block.line].raw))
                units.extend((None, data) for _bid, data in after_call.pop(block.line, ()))
                continue
            ref = block.origin
            if isinstance(ref, CompactRef):
                continue  # written by its compacted line, as it was
            if not isinstance(ref, ItemRef):
                if block.bid in placed:
                    continue
                if block.type == TOOL_RESULT:
                    _flush_texts(units, new_texts, m, state.objs)
                    ts = _last_timestamp(units, state.objs)
                    units.append((None, _synthetic_line(block, state, ts)))
                    continue
                if block.type == TEXT:
                    new_texts.append(block)
                    continue
                raise ExportRefused(
                    f"a new {block.type} block cannot be written in a Codex rollout"
                )
            _flush_texts(units, new_texts, m, state.objs)
            if ref.part is None:
                units.append((ref.line, _item_bytes(block, state)))
                units.extend((None, data) for _bid, data in after_call.pop(ref.line, ()))
                continue
            mine = parts_of.pop(ref.line, None)
            if mine is not None:  # the item's line is written once, at its first part
                units.append((ref.line, _message_item_bytes(ref.line, mine, state)))
                units.extend((None, data) for _bid, data in after_call.pop(ref.line, ()))
        _flush_texts(units, new_texts, m, state.objs)
    return units


def _check_compactions_kept(messages: list[Message], state: CodexState) -> None:
    """The history a compacted line stands for is written back only as it was."""
    kept = {b.bid for m in messages for b in m.blocks if state.compacted.get(b.bid) is b}
    lost = [(b.src or {}).get("line") for bid, b in state.compacted.items() if bid not in kept]
    if not lost and any(EMPTY_ITEMS in m.meta for m in state.loaded):
        # its items of no content: a message of them alone has no block to be kept
        empty = {r for m in messages for r in m.meta.get(EMPTY_ITEMS, ())}
        was = (r for m in state.loaded for r in m.meta.get(EMPTY_ITEMS, ()))
        lost = [state.lines[r.line].lineno for r in was if r not in empty]
    if lost:
        raise ExportRefused(compaction_kept(lost[0]))


def compaction_kept(lineno: int | None) -> str:
    """Why no fix may change the history the compacted line `lineno` stands for."""
    return (
        f"the history the compaction on line {lineno} stands for cannot be edited (Codex "
        "rebuilds it from that line)"
    )


def _synthetic_after_calls(
    messages: list[Message], state: CodexState
) -> dict[int, list[tuple[int, bytes]]]:
    """line index -> the synthetic output lines (bid, bytes) to write right after it, for each
    synthetic result whose call comes earlier in the session: right after the call (as
    Codex puts its own) when only calls follow it in its turn and every call before it is
    answered so too, else after the turn's last item (a reasoning or message item after the
    call stays in the call's turn when read back, and so do the calls before it whose
    outputs come after the turn: the turn is not cut between them and their outputs)."""
    synthetic = {
        b.tool_id for m in messages for b in m.blocks if b.type == TOOL_RESULT and b.origin is None
    }
    last_call: dict[str, tuple[int, int]] = {}  # call id -> (call line, line to write after)
    out: dict[int, list[tuple[int, bytes]]] = {}
    for m in messages:
        for b, anchor in _call_anchors(m, synthetic):
            last_call[b.tool_id or ""] = (b.origin.line, anchor)
        for b in m.blocks:
            if b.type == TOOL_RESULT and b.origin is None:
                found = last_call.get(b.tool_id or "")
                if found is not None:
                    call_line, anchor = found
                    rec = state.objs[call_line]
                    data = _synthetic_line(b, state, rec.get("timestamp"))
                    out.setdefault(anchor, []).append((b.bid, data))
    return out


def _call_anchors(m: Message, synthetic: Collection[str | None]) -> Iterator[tuple[Block, int]]:
    """Each call item of message `m` and the line a synthetic output for it is written after
    (`_synthetic_after_calls`; `synthetic`: the ids of the calls that get one)."""
    items = [b for b in m.blocks if isinstance(b.origin, ItemRef)]
    cut = True  # the turn may be cut after the call: the calls before it are answered so
    for k, b in enumerate(items):
        if b.type == TOOL_USE and b.origin.part is None:
            cut = cut and all(x.type == TOOL_USE for x in items[k + 1 :])
            yield b, (b.origin.line if cut else items[-1].origin.line)
            cut = cut and b.tool_id in synthetic


def _synthetic_line(block: Block, state: CodexState, ts: Any) -> bytes:
    call_id = block.tool_id or ""
    out_type = CALL_TYPES.get(state.call_kind.get(call_id, "function_call"), "function_call_output")
    payload = {"type": out_type, "call_id": call_id, "output": result_text(block.data)}
    return compact({"timestamp": ts, "type": "response_item", "payload": payload})


def _last_timestamp(units: list[tuple[int | None, bytes]], objs: list[Any]) -> Any:
    for anchor, _data in reversed(units):
        if anchor is not None and isinstance(objs[anchor], dict):
            return objs[anchor].get("timestamp")
    return None


def _record(rec: Any, line: JsonlLine) -> Any:
    """A line's record `rec` (`CodexState.objs`) as a message's `raw` and the report give
    it: the line's text where it is not JSON."""
    return rec if rec is not None or line.error is None else line.raw.decode("utf-8", "replace")


def _item_bytes(block: Block, state: CodexState) -> bytes:
    """A whole-item line (call, output, reasoning): raw unless its id changed."""
    ref: ItemRef = block.origin
    line = state.lines[ref.line]
    if state.original.get(block.bid) is block:
        return line.raw
    payload = state.objs[ref.line]["payload"]
    if block.tool_id is not None and payload.get("call_id") != block.tool_id:
        rec = dict(state.objs[ref.line])
        rec["payload"] = {**payload, "call_id": block.tool_id}
        return compact(rec)
    return line.raw


def _message_item_bytes(idx: int, blocks: list[Block], state: CodexState) -> bytes:
    """A message item line holding `blocks` (some of its parts may have been dropped)."""
    line = state.lines[idx]
    loaded = state.line_blocks.get(idx, [])
    if len(blocks) == len(loaded) and all(a is b for a, b in zip(blocks, loaded, strict=True)):
        return line.raw
    payload = state.objs[idx]["payload"]
    content = payload.get("content")
    role = payload.get("role")
    parts = []
    for b in blocks:
        k = b.origin.part
        if state.original.get(b.bid) is b and isinstance(content, list):
            parts.append(content[k])
        else:
            parts.append(text_part(b, role))
    rec = dict(state.objs[idx])
    rec["payload"] = {**payload, "content": parts}
    return compact(rec)


def text_part(block: Block, role: str | None) -> dict[str, Any]:
    text = block.data if isinstance(block.data, str) else (block.data or {}).get("text", "")
    return {"type": "output_text" if role == "assistant" else "input_text", "text": text}


def _flush_texts(
    units: list[tuple[int | None, bytes]], texts: list[Block], m: Message, objs: list[Any]
) -> None:
    """New text blocks (a result turned into text, a placeholder) become one message item."""
    if not texts:
        return
    role = m.role if m.role in ("user", "assistant") else "user"
    payload = {"type": "message", "role": role, "content": [text_part(b, role) for b in texts]}
    ts = _last_timestamp(units, objs)
    if ts is None and isinstance(m.raw, list) and m.raw and isinstance(m.raw[0], dict):
        ts = m.raw[0].get("timestamp")
    units.append((None, compact({"timestamp": ts, "type": "response_item", "payload": payload})))
    texts.clear()


register(CodexAdapter())
