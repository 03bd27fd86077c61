"""opencode sessions: `opencode export` JSON `{info, messages: [{info, parts}]}`, or the
`session.json` + `messages.json` pair (the two halves of an export, as the share API stores
them) given as a folder or as the `messages.json` file.

A tool part carries its call and its result (`state.status` pending/running/completed/error).
Normal form: each opencode message is one message whose blocks are its parts (text -> text,
tool -> tool_use, reasoning and the bookkeeping parts -> blocks of their own type); after an
assistant message, a derived user message holds the tool_result blocks of its completed/errored
tool parts, as opencode sends them. A pending/running part has no result, so the engine reports
it (opencode itself sends "[Tool execution was interrupted]" for it).

Export edits the document in place of the loaded one: a synthetic result for a pending/running
part sets that part's state to `error` with histview's text and an end time (keeping `input`,
`metadata`, `time.start`); a dropped block drops its part; an id change sets `callID`. Messages
nobody touched are the same objects, and the document is written in its own JSON style.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..errors import ExportRefused, InputError
from ..jsonio import JsonStyle, detect_style, dumps, loads
from ..model import TEXT, TOOL_RESULT, TOOL_USE, Block, Message, Session
from . import register
from .base import Adapter, Probe

OPEN_STATES = frozenset({"pending", "running"})
ROLES = frozenset({"user", "assistant"})


@dataclass(frozen=True, slots=True)
class PartRef:
    msg: int  # index in the messages list
    part: int  # index in that message's parts
    result: bool = False  # the derived tool_result of a tool part


@dataclass(frozen=True, slots=True)
class Derived:
    """Origin of the user message that carries an assistant message's tool results."""

    msg: int


@dataclass
class OpencodeState:
    doc: Any  # the loaded document (dict export or list of messages)
    entries: list[Any]  # the messages list inside it
    base: str  # JSON pointer of the messages list ("" or "/messages")
    style: JsonStyle
    data: bytes  # the file as read, for an unedited export
    loaded: list[Message]
    original: dict[int, Block]  # bid -> block as loaded


def _messages_of(doc: Any) -> tuple[list[Any], str] | None:
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        info = doc.get("info")
        if isinstance(info, dict) and str(info.get("id", "")).startswith("ses_"):
            return doc["messages"], "/messages"
        if _looks_like_entries(doc["messages"]):
            return doc["messages"], "/messages"
        return None
    if isinstance(doc, list) and _looks_like_entries(doc):
        return doc, ""
    return None


def _looks_like_entries(items: list[Any]) -> bool:
    """A list of `{info, parts}` whose infos are opencode messages."""
    sample = [x for x in items[:20] if isinstance(x, dict)]
    if not sample:
        return False
    hits = 0
    for x in sample:
        info = x.get("info")
        if isinstance(info, dict) and isinstance(x.get("parts"), list) and "role" in info:
            if str(info.get("id", "")).startswith("msg_") or "sessionID" in info:
                hits += 1
    return hits * 2 > len(sample)


class OpencodeAdapter(Adapter):
    name = "opencode"
    default_target = "opencode"
    description = (
        "opencode export JSON {info, messages:[{info, parts}]} (or session.json + messages.json)"
    )

    def detect(self, probe: Probe) -> int:
        if probe.kind != "json":
            return 0
        found = _messages_of(probe.doc)
        if found is None:
            return 0
        return 100 if isinstance(probe.doc, dict) else 90

    def claim_folder(self, folder: str) -> str | None:
        path = os.path.join(folder, "messages.json")
        if os.path.isfile(path) and os.path.isfile(os.path.join(folder, "session.json")):
            return path
        return None

    # ---------------------------------------------------------------- load
    def load(self, probe: Probe) -> Session:
        found = _messages_of(probe.doc)
        if found is None:
            raise InputError(
                probe.given, "not an opencode export: no messages list of {info, parts}"
            )
        entries, base = found
        messages: list[Message] = []
        original: dict[int, Block] = {}
        for i, entry in enumerate(entries):
            built = _load_entry(i, entry, base)
            for m in built:
                for b in m.blocks:
                    original[b.bid] = b
            messages.extend(built)
        state = OpencodeState(
            doc=probe.doc,
            entries=entries,
            base=base,
            style=detect_style(probe.data),
            data=probe.data,
            loaded=list(messages),
            original=original,
        )
        return Session(
            path=probe.path,
            format=self.name,
            target=self.default_target,
            messages=messages,
            adapter=self,
            state=state,
            label=_label(probe),
        )

    def block_time(self, session: Session, block: Block) -> float | None:
        """A tool part's `state.time`: `start` for the call, `end` for its result (ms)."""
        state = session.state
        ref = block.origin
        if not isinstance(ref, PartRef) or not isinstance(state, OpencodeState):
            return None
        try:
            part = state.entries[ref.msg]["parts"][ref.part]
            t = part["state"]["time"]["end" if ref.result else "start"]
        except (IndexError, KeyError, TypeError):
            return None
        n = _num(t)
        return None if n is None else n / 1000

    # ---------------------------------------------------------------- dump
    def dump(self, session: Session) -> bytes:
        state: OpencodeState = session.state
        msgs = session.messages
        if len(msgs) == len(state.loaded) and all(
            a is b for a, b in zip(msgs, state.loaded, strict=True)
        ):
            return state.data
        synthetic = _synthetic_results(msgs)
        new_entries: list[Any] = []
        for m in msgs:
            origin = m.origin
            if isinstance(origin, int):
                new_entries.append(_entry(m, origin, state, synthetic))
                continue
            # a derived message, or a user message the engine created: results only
            for b in m.blocks:
                if b.type != TOOL_RESULT:
                    raise ExportRefused(
                        f"a {b.type} block next to tool results cannot be written in an opencode "
                        "export (tool results live inside the assistant's tool parts)"
                    )
        _check_results_kept(msgs, state)
        doc = state.doc
        if isinstance(doc, dict):
            doc = {**doc, "messages": new_entries}
        else:
            doc = new_entries
        return dumps(doc, state.style)


# -------------------------------------------------------------------- loading helpers


def _label(probe: Probe) -> str:
    doc = probe.doc
    info = doc.get("info") if isinstance(doc, dict) else None
    if info is None:
        side = os.path.join(os.path.dirname(probe.path), "session.json")
        try:
            with open(side, "rb") as fh:
                info = loads(fh.read())
        except (OSError, ValueError, RecursionError):
            info = None
    if isinstance(info, dict):
        title = info.get("title")
        return str(title) if isinstance(title, str) else str(info.get("id", ""))
    return ""


def _load_entry(i: int, entry: Any, base: str) -> list[Message]:
    path = f"{base}/{i}"
    if not isinstance(entry, dict):
        return [_malformed(i, entry, path, f"message is a {type(entry).__name__}, not an object")]
    info, parts = entry.get("info"), entry.get("parts")
    if not isinstance(info, dict):
        return [_malformed(i, entry, path, "message has no info object")]
    role = info.get("role")
    if role not in ROLES:
        return [_malformed(i, entry, path, f"message role is {role!r}, not user or assistant")]
    if not isinstance(parts, list):
        return [_malformed(i, entry, path, "message parts is not a list", role)]
    blocks: list[Block] = []
    results: list[Block] = []
    ends: list[float] = []
    for k, part in enumerate(parts):
        ppath = f"{path}/parts/{k}"
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            return [_malformed(i, entry, path, f"part {k} has no type", role)]
        ptype = part["type"]
        src = {"path": ppath}
        ref = PartRef(i, k)
        if ptype == "tool":
            state = part.get("state")
            call_id = part.get("callID")
            if not isinstance(call_id, str) or not isinstance(state, dict):
                return [_malformed(i, entry, path, f"tool part {k} has no callID or state", role)]
            name = part.get("tool") if isinstance(part.get("tool"), str) else "?"
            data = {"type": TOOL_USE, "id": call_id, "name": name, "input": state.get("input")}
            blocks.append(Block(TOOL_USE, data, tool_id=call_id, name=name, src=src, origin=ref))
            status = state.get("status")
            if status in ("completed", "error"):
                is_error = status == "error"
                content = state.get("error") if is_error else state.get("output")
                rdata: dict = {"type": TOOL_RESULT, "tool_use_id": call_id, "content": content}
                if is_error:
                    rdata["is_error"] = True
                results.append(
                    Block(
                        TOOL_RESULT,
                        rdata,
                        tool_id=call_id,
                        is_error=is_error,
                        src={"path": f"{ppath}/state"},
                        origin=PartRef(i, k, result=True),
                    )
                )
                end = _num(
                    (state.get("time") or {}).get("end")
                    if isinstance(state.get("time"), dict)
                    else None
                )
                if end is not None:
                    ends.append(end)
            elif status not in OPEN_STATES:
                return [
                    _malformed(i, entry, path, f"tool part {k} has unknown status {status!r}", role)
                ]
        elif ptype == "text" and isinstance(part.get("text"), str):
            if part.get("ignored"):
                blocks.append(Block("ignored-text", part, src=src, origin=ref))
            else:
                blocks.append(
                    Block(TEXT, {"type": TEXT, "text": part["text"]}, src=src, origin=ref)
                )
        elif ptype == "reasoning":
            text = part.get("text") if isinstance(part.get("text"), str) else ""
            blocks.append(
                Block("reasoning", {"type": "reasoning", "text": text}, src=src, origin=ref)
            )
        else:
            blocks.append(Block(ptype, part, src=src, origin=ref))

    meta: dict = {}
    created = _num(
        (info.get("time") or {}).get("created") if isinstance(info.get("time"), dict) else None
    )
    if created is not None:
        meta["timestamp"] = created / 1000
    hidden = _skipped_by_opencode(info, parts)
    msg = Message(
        role=role,
        blocks=tuple(blocks),
        raw=entry,
        meta=meta,
        hidden=hidden,
        src={"path": path},
        origin=i,
    )
    out = [msg]
    if results:
        rmeta: dict = {}
        if ends:
            rmeta["timestamp"] = max(ends) / 1000
        elif created is not None:
            rmeta["timestamp"] = created / 1000
        out.append(
            Message(
                role="user",
                blocks=tuple(results),
                raw=[parts[b.origin.part] for b in results],  # the tool parts holding them
                meta=rmeta,
                hidden=hidden,
                src=dict(results[0].src),
                origin=Derived(i),
            )
        )
    return out


def _skipped_by_opencode(info: dict, parts: list) -> bool:
    """opencode leaves these out of the model messages (`toModelMessages`)."""
    if not parts:
        return True
    err = info.get("error")
    if info.get("role") == "assistant" and err:
        aborted = isinstance(err, dict) and err.get("name") == "MessageAbortedError"
        substantive = any(p.get("type") not in ("step-start", "reasoning") for p in parts)
        return not (aborted and substantive)
    return False


def _malformed(i: int, entry: Any, path: str, reason: str, role: Any = None) -> Message:
    return Message(
        role=role if role in ROLES else None,
        blocks=(),
        raw=entry,
        malformed=reason,
        src={"path": path},
        origin=i,
    )


def _num(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


# -------------------------------------------------------------------- export helpers


def _synthetic_results(msgs: list[Message]) -> dict[tuple[int, int], Block]:
    """(message, part) of a pending/running tool part -> the synthetic result answering it:
    the latest earlier tool_use with that id."""
    last_use: dict[str, PartRef] = {}
    out: dict[tuple[int, int], Block] = {}
    for m in msgs:
        for b in m.blocks:
            if b.type == TOOL_USE and isinstance(b.origin, PartRef):
                last_use[b.tool_id or ""] = b.origin
            elif b.type == TOOL_RESULT and b.origin is None:
                ref = last_use.get(b.tool_id or "")
                if ref is None:
                    raise ExportRefused(
                        f"a tool result for {b.tool_id} has no tool part to go into in the export"
                    )
                out[(ref.msg, ref.part)] = b
    return out


def _check_results_kept(msgs: list[Message], state: OpencodeState) -> None:
    """A completed part's result cannot be removed without removing the call: refuse."""
    kept_results = {
        b.origin
        for m in msgs
        for b in m.blocks
        if isinstance(b.origin, PartRef) and b.origin.result
    }
    kept_uses = {
        b.origin
        for m in msgs
        for b in m.blocks
        if isinstance(b.origin, PartRef) and b.type == TOOL_USE
    }
    for b in state.original.values():
        ref = b.origin
        if ref.result and ref not in kept_results and PartRef(ref.msg, ref.part) in kept_uses:
            raise ExportRefused(
                f"the result of tool call {b.tool_id} cannot be removed in an opencode export "
                "without its call"
            )


def _entry(
    m: Message, i: int, state: OpencodeState, synthetic: dict[tuple[int, int], Block]
) -> Any:
    entry = state.entries[i]
    if m.malformed is not None:
        return entry
    parts = entry["parts"]
    new_parts: list[Any] = []
    changed = False
    for b in m.blocks:
        ref = b.origin
        if b.type == TOOL_RESULT:
            continue  # results are written by their tool parts
        if not isinstance(ref, PartRef):
            if b.type == TEXT:
                new_parts.append(_new_text_part(b, entry, new_parts))
                changed = True
                continue
            raise ExportRefused(f"a new {b.type} block cannot be written in an opencode export")
        part = state.entries[ref.msg]["parts"][ref.part]
        new = _part(b, part, state, synthetic.get((ref.msg, ref.part)))
        if ref.msg != i and isinstance(new, dict) and "messageID" in new:
            new = {**new, "messageID": (entry.get("info") or {}).get("id", new["messageID"])}
        changed = changed or new is not part or ref.msg != i
        new_parts.append(new)
    if not changed and len(new_parts) == len(parts):
        return entry
    return {**entry, "parts": new_parts}


def _part(b: Block, part: dict, state: OpencodeState, synth: Block | None) -> dict:
    if b.type == TOOL_USE:
        new = part
        if b.tool_id != part.get("callID"):
            new = {**new, "callID": b.tool_id}
        st = part.get("state")
        if synth is not None and isinstance(st, dict) and st.get("status") in OPEN_STATES:
            new = {**new, "state": _error_state(st, synth, state.entries[b.origin.msg])}
        return new
    if state.original.get(b.bid) is b:
        return part
    if b.type == TEXT and isinstance(b.data, dict) and isinstance(b.data.get("text"), str):
        return {**part, "text": b.data["text"]}
    return part


def _error_state(st: dict, synth: Block, entry: dict) -> dict:
    """The part's state once histview records that no result came: status error, the synthetic
    text as `error`, `time.end` = the last time the message recorded (deterministic)."""
    text = synth.data.get("content") if isinstance(synth.data, dict) else None
    if not isinstance(text, str):
        text = str(text)
    t = st.get("time") if isinstance(st.get("time"), dict) else {}
    start = _num(t.get("start"))
    end = _last_time(entry)
    if start is not None and (end is None or end < start):
        end = start
    new: dict = {"status": "error", "input": st.get("input", {}), "error": text}
    if "metadata" in st:
        new["metadata"] = st["metadata"]
    times: dict = {}
    start_v = t.get("start") if start is not None else end
    times["start"] = start_v if start_v is not None else 0
    times["end"] = _as_int(end) if end is not None else times["start"]
    new["time"] = times
    return new


def _last_time(entry: dict) -> float | None:
    best: float | None = None

    def see(v: Any) -> None:
        nonlocal best
        n = _num(v)
        if n is not None and (best is None or n > best):
            best = n

    info = entry.get("info") or {}
    if isinstance(info.get("time"), dict):
        see(info["time"].get("created"))
        see(info["time"].get("completed"))
    for p in entry.get("parts") or ():
        if not isinstance(p, dict):
            continue
        for holder in (p, p.get("state")):
            if isinstance(holder, dict) and isinstance(holder.get("time"), dict):
                see(holder["time"].get("start"))
                see(holder["time"].get("end"))
    return best


def _as_int(v: float) -> int | float:
    return int(v) if float(v).is_integer() else v


def _new_text_part(b: Block, entry: dict, siblings: list[Any]) -> dict:
    info = entry.get("info") or {}
    text = b.data if isinstance(b.data, str) else (b.data or {}).get("text", "")
    part: dict = {}
    prev = next((p for p in reversed(siblings) if isinstance(p, dict) and "id" in p), None)
    if prev is not None:
        part["id"] = f"{prev['id']}_histview"
    if "sessionID" in info:
        part["sessionID"] = info["sessionID"]
    if "id" in info:
        part["messageID"] = info["id"]
    part.update({"type": "text", "text": text, "synthetic": True})
    return part


register(OpencodeAdapter())
