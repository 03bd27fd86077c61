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

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..errors import ExportRefused
from ..jsonio import compact, loads, strip_bom
from ..model import TEXT, TOOL_RESULT, TOOL_USE, Block, Message, Session, result_text
from .base import Adapter, Export, JsonlLine, Probe, own_type, shown, type_name
from .probe import split_lines
from .registry import register

if TYPE_CHECKING:
    from ..files import FileText

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
    lines: list[JsonlLine]
    newline: str
    trailing_newline: bool
    bom: bool
    original: dict[int, Block]  # bid -> the block as loaded
    line_blocks: dict[int, list[Block]]  # line index -> its blocks as loaded (message items)
    call_kind: dict[str, str]  # call_id -> item type of the call (for synthetic outputs)
    message_lines: set[int]  # lines placed by the messages (items and malformed records)
    loaded: list[Message]  # the messages as loaded (an unedited session writes `data` back)
    held: bytes | FileText  # the bytes read, or the large file they are read from again
    compacted: dict[int, Block] = field(default_factory=dict)  # bid -> block of a compaction
    # line -> its items
    compacted_items: dict[int, list[dict[str, Any]]] = field(default_factory=dict)

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
        if not seen or enveloped * 10 < seen * 9:
            return 0
        if (
            isinstance(first, dict)
            and first.get("type") == "session_meta"
            and isinstance(first.get("payload"), dict)
            and ("originator" in first["payload"] or "cli_version" in first["payload"])
        ):
            return 100
        return 80

    # ---------------------------------------------------------------- load
    def load(self, probe: Probe) -> Session:
        lines, newline, trailing_newline = _split(probe)
        messages: list[Message] = []
        original: dict[int, Block] = {}
        compacted: dict[int, Block] = {}
        line_blocks: dict[int, list[Block]] = {}
        call_kind: dict[str, str] = {}
        # each line's value, read once (None: blank or not JSON, or JSON null)
        objs = [line.obj for line in lines]
        dropped, legacy = _replay(lines, objs)
        compacted_items: dict[int, list[dict[str, Any]]] = {}
        label = ""

        # Consecutive items of one kind form a message: model items; outputs; input messages.
        # Outputs and user messages stay apart so that a user message between a call and its
        # output is a misplaced result (home = the outputs right after the call).
        group_kind: str | None = None
        group_blocks: list[Block] = []
        group_lines: list[int] = []

        def close_group() -> None:
            nonlocal group_kind, group_blocks, group_lines
            if group_kind is not None:
                role = "assistant" if group_kind == "assistant" else "user"
                messages.append(_message(role, group_blocks, group_lines, lines, objs))
            group_kind, group_blocks, group_lines = None, [], []

        def add(idx: int, item: dict[str, Any], itype: str, role: str, blocks: list[Block]) -> None:
            nonlocal group_kind
            if itype in CALL_TYPES:
                call_kind.setdefault(blocks[0].tool_id or "", itype)
            if role in HIDDEN_ROLES or idx in dropped:
                close_group()
                why = (
                    "not in the history Codex resumes (replaced by a compaction or rolled back)"
                    if idx in dropped
                    else None  # an instruction message: sent, not checked
                )
                messages.append(_message(role, blocks, [idx], lines, objs, hidden=True, why=why))
                return
            kind = "outputs" if itype in OUTPUT_TYPES else role
            if kind != group_kind:
                close_group()
                group_kind = kind
            group_blocks.extend(blocks)
            if not group_lines or group_lines[-1] != idx:
                group_lines.append(idx)

        for idx, rec in enumerate(objs):
            line = lines[idx]
            if type(rec) is not dict:  # the usual record is an object: one test
                if line.blank:
                    continue
                if line.error is not None:
                    close_group()
                    messages.append(
                        _malformed(idx, line, f"line {line.lineno} is not JSON: {line.error}")
                    )
                    continue
                if not isinstance(rec, dict):
                    close_group()
                    messages.append(
                        _malformed(idx, line, f"the record is {type_name(rec)}, not an object")
                    )
                    continue
            rtype = rec.get("type")
            if "type" in rec and not isinstance(rtype, str):
                close_group()
                messages.append(
                    _malformed(idx, line, f"the record's type is {type_name(rtype)}, not a string")
                )
                continue
            if rtype == "session_meta" and isinstance(rec.get("payload"), dict) and not label:
                sid = rec["payload"].get("id")
                label = sid if isinstance(sid, str) else ""
            if rtype == "compacted":
                compacted_items[idx] = _compacted_items(rec, legacy.get(idx), lines)
                for at, citem in enumerate(compacted_items[idx]):
                    ctype = citem.get("type")
                    built = _item_blocks(idx, line, citem, ctype, at=at)
                    if built is None or isinstance(built, str) or not isinstance(ctype, str):
                        continue  # Codex would not send it either
                    role, blocks = built
                    for b in blocks:
                        compacted[b.bid] = b
                    add(idx, citem, ctype, role, blocks)
                continue
            if rtype != "response_item":
                continue  # passes through untouched
            item = rec.get("payload")
            itype = item.get("type") if isinstance(item, dict) else None
            if not isinstance(item, dict) or not isinstance(itype, str):
                close_group()
                messages.append(_malformed(idx, line, "response_item without a payload type"))
                continue
            built = _item_blocks(idx, line, item, itype)
            if built is None:
                continue  # ghost_snapshot and other items the model never sees
            if isinstance(built, str):
                close_group()
                messages.append(_malformed(idx, line, built))
                continue
            role, blocks = built
            for b in blocks:
                original[b.bid] = b
            if itype == "message":
                line_blocks[idx] = blocks
            add(idx, item, itype, role, blocks)
        close_group()

        state = CodexState(
            lines=lines,
            newline=newline,
            trailing_newline=trailing_newline,
            bom=probe.bom,
            original=original,
            line_blocks=line_blocks,
            call_kind=call_kind,
            message_lines={
                i for m in messages for i in m.origin if i not in compacted_items
            },  # a compacted line's items are written by that line
            loaded=list(messages),
            held=probe.held(),  # after the pass over the lines: a large file is not kept
            compacted=compacted,
            compacted_items=compacted_items,
        )
        return self.session(probe.path, messages, state, label)

    def block_time(self, session: Session, block: Block) -> float | None:
        """The `timestamp` of the line holding the item (one line per call and output)."""
        state = session.state
        ref = block.origin
        if not isinstance(ref, ItemRef) or not isinstance(state, CodexState):
            return None
        if not 0 <= ref.line < len(state.lines) or not isinstance(state.lines[ref.line].obj, dict):
            return None
        return parse_time(state.lines[ref.line].obj.get("timestamp"))

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
                    "record": line.obj
                    if line.error is None
                    else line.raw.decode("utf-8", "replace"),
                }
            )
        return Export((b"\xef\xbb\xbf" if state.bom else b"") + body, dropped)


# -------------------------------------------------------------------- loading helpers


def _lines(probe: Probe) -> list[JsonlLine]:
    return _split(probe)[0]


def _split(probe: Probe) -> tuple[list[JsonlLine], str, bool]:
    """The lines, line ending and final newline, also for a one-line file (probed as JSON)."""
    if probe.kind == "jsonl":
        return probe.lines, probe.newline, probe.trailing_newline
    body, _bom = strip_bom(probe.data)
    return split_lines(body)


def _replay(lines: list[JsonlLine], objs: list[Any]) -> tuple[set[int], dict[int, list[int]]]:
    """What Codex's resume leaves out of the history: the item lines a compaction replaced
    or a rollback dropped; and, for each compaction without a replacement history, the user
    turns it keeps (line indices)."""
    history: list[int] = []  # lines of the items Codex holds, in order
    dropped: set[int] = set()
    legacy: dict[int, list[int]] = {}
    for idx, rec in enumerate(objs):  # a line that is not JSON has no value (None)
        if not isinstance(rec, dict):
            continue
        rtype, payload = rec.get("type"), rec.get("payload")
        if rtype == "response_item" and isinstance(payload, dict):
            history.append(idx)
        elif rtype == "compacted":
            if not (
                isinstance(payload, dict) and isinstance(payload.get("replacement_history"), list)
            ):
                legacy[idx] = [j for j in history if _is_user_turn(objs[j])]
            dropped.update(history)
            history = [idx]
        elif (
            rtype == "event_msg"
            and isinstance(payload, dict)
            and payload.get("type") == "thread_rolled_back"
        ):
            n = payload.get("num_turns")
            turns = [k for k, j in enumerate(history) if _is_user_turn(objs[j])]
            if isinstance(n, int) and not isinstance(n, bool) and n > 0 and turns:
                cut = turns[0] if n >= len(turns) else turns[-n]
                dropped.update(history[cut:])
                history = history[:cut]
    return dropped, legacy


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
    rec: dict[str, Any], legacy: list[int] | None, lines: list[JsonlLine]
) -> list[dict[str, Any]]:
    """The items a compacted line stands for when Codex resumes."""
    payload = rec.get("payload")
    if not isinstance(payload, dict):
        return []
    if isinstance(payload.get("replacement_history"), list):
        return [i for i in payload["replacement_history"] if isinstance(i, dict)]
    items = [lines[j].obj["payload"] for j in legacy or ()]
    summary = payload.get("message")
    if isinstance(summary, str):
        part = {"type": "input_text", "text": summary}
        items.append({"type": "message", "role": "user", "content": [part]})
    return items


def _item_blocks(
    idx: int, line: JsonlLine, item: dict[str, Any], itype: Any, at: int | None = None
) -> tuple[str, list[Block]] | str | None:
    """(role, blocks) for one response item; a string says why it is malformed; None = not
    part of the conversation. `at`: the item's place in what a compacted line stands for."""
    if not isinstance(itype, str):
        return "response_item without a payload type"
    src = {"line": line.lineno}

    if itype in CALL_TYPES:
        call_id = item.get("call_id")
        if not isinstance(call_id, str) or not call_id:
            return f"{itype} without a call_id"
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
        block = Block(TOOL_USE, data, tool_id=call_id, name=name, src=src, origin=_ref(idx, at))
        return "assistant", [block]
    if itype in OUTPUT_TYPES:
        call_id = item.get("call_id")
        if not isinstance(call_id, str) or not call_id:
            return f"{itype} without a call_id"
        data = {"type": TOOL_RESULT, "tool_use_id": call_id, "content": item.get("output")}
        return "user", [Block(TOOL_RESULT, data, tool_id=call_id, src=src, origin=_ref(idx, at))]
    if itype == "message":
        role = item.get("role")
        content = item.get("content")
        if not isinstance(role, str):
            return "message item without a role"
        if role not in ("user", "assistant") and role not in HIDDEN_ROLES:
            return f"message item with unknown role {shown(role)}"
        if not isinstance(content, list):  # Codex cannot read the line either: it skips it
            return f"message content is {type_name(content)}, not a list"
        blocks = []
        for k, part in enumerate(content):
            if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                return f"content part {k} has no type"
            ptype = part["type"]
            if ptype in ("input_text", "output_text") and isinstance(part.get("text"), str):
                data = {"type": TEXT, "text": part["text"]}
                btype = TEXT
            else:
                data, btype = part, own_type(ptype, "codex")
            blocks.append(Block(btype, data, src=src, origin=_ref(idx, at, k)))
        return role, blocks
    if itype in MODEL_ITEM_TYPES:
        return "assistant", [Block(itype, item, src=src, origin=_ref(idx, at))]
    return None


def _ref(idx: int, at: int | None, part: int | None = None) -> ItemRef | CompactRef:
    return ItemRef(idx, part) if at is None else CompactRef(idx, at, part)


def _parse_arguments(args: Any) -> Any:
    if isinstance(args, str):
        try:
            return loads(args)
        except (ValueError, RecursionError):
            return args
    return args


def _message(
    role: str,
    blocks: list[Block],
    line_idx: list[int],
    lines: list[JsonlLine],
    objs: list[Any],
    hidden: bool = False,
    why: str | None = None,
) -> Message:
    first = lines[line_idx[0]]
    rec = objs[line_idx[0]]
    meta: dict[str, Any] = {"hidden_reason": why} if why else {}
    t = parse_time(rec.get("timestamp"))
    if t is not None:
        meta["timestamp"] = t
    return Message(
        role=role,
        blocks=tuple(blocks),
        raw=[objs[i] for i in line_idx],
        meta=meta,
        hidden=hidden,
        src={"line": first.lineno},
        origin=tuple(line_idx),
    )


def _malformed(idx: int, line: JsonlLine, reason: str) -> Message:
    return Message(
        role=None,
        blocks=(),
        raw=line.obj if line.error is None else line.raw.decode("utf-8", "replace"),
        malformed=reason,
        src={"line": line.lineno},
        origin=(idx,),
    )


def payload_of(ref: ItemRef | CompactRef, state: CodexState) -> dict[str, Any]:
    """The Responses item a block was read from: its rollout line's payload, or the item of
    the history a compacted line stands for."""
    if isinstance(ref, CompactRef):
        return state.compacted_items[ref.line][ref.item]
    payload: dict[str, Any] = state.lines[ref.line].obj["payload"]  # an object (load checks)
    return payload


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
        # message items that hold no block at all (`content: []`): written where they were,
        # unless the message was nothing else and got blocks (a result put into the empty
        # message is its output line alone; the report keeps the empty item)
        blockless = [
            i for i in m.origin or () if i in state.line_blocks and not state.line_blocks[i]
        ]
        if m.blocks and len(blockless) == len(m.origin or ()):
            blockless = []
        new_texts: list[Block] = []
        for block in m.blocks:
            ref = block.origin
            if isinstance(ref, CompactRef):
                continue  # written by its compacted line, as it was
            if isinstance(ref, ItemRef):
                while blockless and blockless[0] < ref.line:
                    i = blockless.pop(0)
                    units.append((i, lines[i].raw))
                    units.extend((None, data) for _bid, data in after_call.pop(i, ()))
            if not isinstance(ref, ItemRef):
                if block.bid in placed:
                    continue
                if block.type == TOOL_RESULT:
                    _flush_texts(units, new_texts, m, lines)
                    ts = _last_timestamp(units, lines)
                    units.append((None, _synthetic_line(block, state, ts)))
                    continue
                if block.type == TEXT:
                    new_texts.append(block)
                    continue
                raise ExportRefused(
                    f"a new {block.type} block cannot be written in a Codex rollout"
                )
            _flush_texts(units, new_texts, m, lines)
            if ref.part is None:
                units.append((ref.line, _item_bytes(block, state)))
                units.extend((None, data) for _bid, data in after_call.pop(ref.line, ()))
                continue
            mine = parts_of.pop(ref.line, None)
            if mine is not None:  # the item's line is written once, at its first part
                units.append((ref.line, _message_item_bytes(ref.line, mine, state)))
                units.extend((None, data) for _bid, data in after_call.pop(ref.line, ()))
        _flush_texts(units, new_texts, m, lines)
        for i in blockless:
            units.append((i, lines[i].raw))
            units.extend((None, data) for _bid, data in after_call.pop(i, ()))
    return units


def _check_compactions_kept(messages: list[Message], state: CodexState) -> None:
    """The history a compacted line stands for is written back only as it was."""
    kept = {b.bid for m in messages for b in m.blocks if state.compacted.get(b.bid) is b}
    for bid, b in state.compacted.items():
        if bid not in kept:
            raise ExportRefused(
                f"the history the compaction on line {(b.src or {}).get('line')} stands for cannot be "
                "edited (Codex rebuilds it from that line)"
            )


def _synthetic_after_calls(
    messages: list[Message], state: CodexState
) -> dict[int, list[tuple[int, bytes]]]:
    """line index -> the synthetic output lines (bid, bytes) to write right after it, for each
    synthetic result whose call comes earlier in the session: right after the call when only
    calls follow it in its turn, else after the turn's last item (a reasoning or message item
    after the call stays in the call's turn when read back)."""
    last_call: dict[str, tuple[int, int]] = {}  # call id -> (call line, line to write after)
    out: dict[int, list[tuple[int, bytes]]] = {}
    for m in messages:
        items = [b for b in m.blocks if isinstance(b.origin, ItemRef)]
        for k, b in enumerate(items):
            if b.type == TOOL_USE and b.origin.part is None:
                only_calls = all(x.type == TOOL_USE for x in items[k + 1 :])
                anchor = b.origin.line if only_calls else items[-1].origin.line
                last_call[b.tool_id or ""] = (b.origin.line, anchor)
        for b in m.blocks:
            if b.type == TOOL_RESULT and b.origin is None:
                found = last_call.get(b.tool_id or "")
                if found is not None:
                    call_line, anchor = found
                    rec = state.lines[call_line].obj
                    data = _synthetic_line(b, state, rec.get("timestamp"))
                    out.setdefault(anchor, []).append((b.bid, data))
    return out


def _synthetic_line(block: Block, state: CodexState, ts: Any) -> bytes:
    call_id = block.tool_id or ""
    out_type = CALL_TYPES.get(state.call_kind.get(call_id, "function_call"), "function_call_output")
    payload = {"type": out_type, "call_id": call_id, "output": result_text(block.data)}
    return compact({"timestamp": ts, "type": "response_item", "payload": payload})


def _last_timestamp(units: list[tuple[int | None, bytes]], lines: list[JsonlLine]) -> Any:
    for anchor, _data in reversed(units):
        if anchor is not None and isinstance(lines[anchor].obj, dict):
            return lines[anchor].obj.get("timestamp")
    return None


def _item_bytes(block: Block, state: CodexState) -> bytes:
    """A whole-item line (call, output, reasoning): raw unless its id changed."""
    ref: ItemRef = block.origin
    line = state.lines[ref.line]
    if state.original.get(block.bid) is block:
        return line.raw
    payload = line.obj["payload"]
    if block.tool_id is not None and payload.get("call_id") != block.tool_id:
        rec = dict(line.obj)
        rec["payload"] = {**payload, "call_id": block.tool_id}
        return compact(rec)
    return line.raw


def _message_item_bytes(idx: int, blocks: list[Block], state: CodexState) -> bytes:
    """A message item line holding `blocks` (some of its parts may have been dropped)."""
    line = state.lines[idx]
    loaded = state.line_blocks.get(idx, [])
    if len(blocks) == len(loaded) and all(a is b for a, b in zip(blocks, loaded, strict=True)):
        return line.raw
    payload = line.obj["payload"]
    content = payload.get("content")
    role = payload.get("role")
    parts = []
    for b in blocks:
        k = b.origin.part
        if state.original.get(b.bid) is b and isinstance(content, list):
            parts.append(content[k])
        else:
            parts.append(text_part(b, role))
    rec = dict(line.obj)
    rec["payload"] = {**payload, "content": parts}
    return compact(rec)


def text_part(block: Block, role: str | None) -> dict[str, Any]:
    text = block.data if isinstance(block.data, str) else (block.data or {}).get("text", "")
    return {"type": "output_text" if role == "assistant" else "input_text", "text": text}


def _flush_texts(
    units: list[tuple[int | None, bytes]], texts: list[Block], m: Message, lines: list[JsonlLine]
) -> None:
    """New text blocks (a result turned into text, a placeholder) become one message item."""
    if not texts:
        return
    role = m.role if m.role in ("user", "assistant") else "user"
    payload = {"type": "message", "role": role, "content": [text_part(b, role) for b in texts]}
    ts = _last_timestamp(units, lines)
    if ts is None and isinstance(m.raw, list) and m.raw and isinstance(m.raw[0], dict):
        ts = m.raw[0].get("timestamp")
    units.append((None, compact({"timestamp": ts, "type": "response_item", "payload": payload})))
    texts.clear()


register(CodexAdapter())
