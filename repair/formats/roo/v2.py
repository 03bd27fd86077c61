"""Roo's v2 history envelope: `{"version": 2, "messages": RooMessage[]}` with AI-SDK parts.

Load: assistant `tool-call{toolCallId, toolName, input}` parts become `tool_use` blocks and
`tool-result{toolCallId, toolName, output}` parts `tool_result` blocks (the part is kept in
the block's `origin`). A run of consecutive `role: "tool"` records, with the user records
right after it, becomes ONE normal-form user message: Roo stores one turn's results as a
`tool` record then a `user` record (environment details), and the AI SDK sends such a run
as one user message, so the results sit in the tool_use's home message and the roles
alternate as the provider sees them. Users may still hold legacy Anthropic `tool_result`
blocks, assistants legacy `tool_use` blocks.

Dump: untouched messages give back their records verbatim; an edited group is split back
into its records (untouched parts verbatim, changed ones with the new id, new results in
AI-SDK shape in a tool record); a new result for a plain user record goes to a `tool`
record written before it, the way Roo itself stores results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...jsonio import text_of
from ...model import TOOL_RESULT, TOOL_USE, Block, Message
from ..anthropic_list import (
    block_from_dict,
    block_json,
    content_problem,
    is_reasoning_item,
    reasoning_message,
)
from ..base import shown, type_name

_TAG_KEYS = ("condenseParent", "truncationParent")


@dataclass(slots=True, frozen=True)
class PartOrigin:
    """Where a block came from: record index, the original part, the data built from it
    (`block.data is data` means the block is unchanged)."""

    record: int
    part: Any
    data: Any


@dataclass(slots=True, frozen=True)
class RecordsOrigin:
    """The records one Message was read from, and the blocks loaded from them."""

    kind: str  # "tool" (a group of tool records) | "user" | "assistant" | "other"
    indices: tuple[int, ...]
    records: tuple[Any, ...]
    blocks: tuple[Block, ...]


# --------------------------------------------------------------------------------------
# Loading


def output_to_content(output: Any) -> tuple[Any, bool]:
    """An AI-SDK tool output -> (Anthropic tool_result content, is_error)."""
    if isinstance(output, str):
        return output, output.lstrip().startswith("[ERROR]")
    if isinstance(output, dict):
        kind = output.get("type")
        value = output.get("value")
        if kind in ("text", "error-text") and isinstance(value, str):
            return value, kind == "error-text" or value.lstrip().startswith("[ERROR]")
        if kind in ("json", "error-json"):
            return text_of(value), kind == "error-json"
        if kind == "execution-denied":
            reason = output.get("reason")
            return (reason if isinstance(reason, str) else "Tool execution denied."), True
        if kind == "content" and isinstance(value, list):
            return [_content_item(v) for v in value], False
    if isinstance(output, list):
        return [_content_item(v) for v in output], False
    return text_of(output), False


def _content_item(item: Any) -> dict[str, Any]:
    if isinstance(item, dict):
        if item.get("type") == "text" and isinstance(item.get("text"), str):
            return {"type": "text", "text": item["text"]}
        if item.get("type") == "text" and isinstance(item.get("value"), str):
            return {"type": "text", "text": item["value"]}
        if item.get("type") == "media":
            return {
                "type": "image",
                "source": {
                    "type": "base64",
                    "media_type": item.get("mediaType"),
                    "data": item.get("data"),
                },
            }
    return {"type": "text", "text": text_of(item)}


def block_from_part(part: dict[str, Any], path: str, record: int) -> Block:
    ptype = part["type"]
    if ptype == "tool-call":
        data = {
            "type": TOOL_USE,
            "id": part.get("toolCallId"),
            "name": part.get("toolName"),
            "input": part.get("input", {}),
        }
    elif ptype == "tool-result":
        content, is_error = output_to_content(part.get("output"))
        data = {"type": TOOL_RESULT, "tool_use_id": part.get("toolCallId"), "content": content}
        if is_error:
            data["is_error"] = True
    else:
        data = part
    block = block_from_dict(data, path, origin=PartOrigin(record, part, data))
    if ptype == "tool-result" and isinstance(part.get("toolName"), str):
        block.name = part["toolName"]  # lets pairing check a positional remap by name
    return block


def _record_problem(rec: Any) -> str | None:
    if not isinstance(rec, dict):
        return f"entry is {type_name(rec)}, not a message object"
    role = rec.get("role")
    if role is None:
        return "no role"
    if role not in ("user", "assistant", "tool"):
        return f"role {shown(role)} is not user, assistant or tool"
    if "content" not in rec:
        return "no content"
    problem = content_problem(rec["content"])
    if problem is None and role == "tool" and not isinstance(rec["content"], list):
        return "tool message content is a string, not a list of tool-result parts"
    return problem


def _blocks(rec: dict[str, Any], index: int) -> list[Block]:
    path = f"/messages/{index}"
    content = rec["content"]
    if isinstance(content, str):
        origin = PartOrigin(index, content, content)
        return [Block(type="text", data=content, src={"path": f"{path}/content"}, origin=origin)]
    return [block_from_part(p, f"{path}/content/{k}", index) for k, p in enumerate(content)]


def _joins(rec: Any, role: str, tags: tuple[Any, ...]) -> bool:
    return (
        isinstance(rec, dict)
        and rec.get("role") == role
        and _record_problem(rec) is None
        and tuple(rec.get(k) for k in _TAG_KEYS) == tags
    )


def _group_end(records: list[Any], i: int) -> int:
    """End of the group starting with the tool record at `i`: the tool records after it,
    then the user records after those (Roo writes one turn's results as `tool` + `user`;
    the AI SDK sends such a run as one user message)."""
    tags = tuple(records[i].get(k) for k in _TAG_KEYS)
    j, n = i + 1, len(records)
    while j < n and _joins(records[j], "tool", tags):
        j += 1
    while j < n and _joins(records[j], "user", tags):
        j += 1
    return j


def load_v2(records: list[Any]) -> list[Message]:
    out: list[Message] = []
    i, n = 0, len(records)
    while i < n:
        rec = records[i]
        path = f"/messages/{i}"
        if is_reasoning_item(rec):
            m = reasoning_message(rec, path)
            m.origin = RecordsOrigin("other", (i,), (rec,), m.blocks)
            out.append(m)
            i += 1
            continue
        problem = _record_problem(rec)
        if problem is not None:
            role = rec.get("role") if isinstance(rec, dict) else None
            out.append(
                Message(
                    role=role if isinstance(role, str) else None,
                    blocks=(),
                    raw=rec,
                    malformed=problem,
                    src={"path": path},
                    origin=RecordsOrigin("other", (i,), (rec,), ()),
                )
            )
            i += 1
            continue
        if rec["role"] == "tool":
            j = _group_end(records, i)
            blocks: list[Block] = []
            for k in range(i, j):
                blocks.extend(_blocks(records[k], k))
            bt = tuple(blocks)
            out.append(
                Message(
                    role="user",
                    blocks=bt,
                    raw=rec,
                    src={"path": path},
                    origin=RecordsOrigin("tool", tuple(range(i, j)), tuple(records[i:j]), bt),
                )
            )
            i = j
            continue
        bt = tuple(_blocks(rec, i))
        out.append(
            Message(
                role=rec["role"],
                blocks=bt,
                raw=rec,
                src={"path": path},
                origin=RecordsOrigin(rec["role"], (i,), (rec,), bt),
            )
        )
        i += 1
    return out


def first_record(m: Message) -> Any:
    return m.origin.records[0] if isinstance(m.origin, RecordsOrigin) else None


# --------------------------------------------------------------------------------------
# Writing back


def _unchanged_block(b: Block) -> bool:
    return isinstance(b.origin, PartOrigin) and b.data is b.origin.data


def _is_legacy_result(b: Block) -> bool:
    return (
        isinstance(b.origin, PartOrigin)
        and isinstance(b.origin.part, dict)
        and b.origin.part.get("type") == TOOL_RESULT
    )


def plain_part(b: Block) -> Any:
    """A non-tool block (or a legacy Anthropic block) as a content item."""
    if _unchanged_block(b) and not isinstance(b.data, str):
        return b.origin.part
    return block_json(b)


def tool_result_part(b: Block, names: dict[str, str]) -> dict[str, Any]:
    """A tool_result block as an AI-SDK `tool-result` part."""
    origin = b.origin
    if (
        isinstance(origin, PartOrigin)
        and isinstance(origin.part, dict)
        and origin.part.get("type") == "tool-result"
    ):
        if b.data is origin.data:
            return origin.part
        part = dict(origin.part)
        part["toolCallId"] = b.data.get("tool_use_id")
        return part
    data = b.data
    call_id = data.get("tool_use_id")
    return {
        "type": "tool-result",
        "toolCallId": call_id,
        "toolName": names.get(call_id) or "unknown_tool",
        "output": _output_from(data.get("content"), data.get("is_error") is True),
    }


def _output_from(content: Any, is_error: bool) -> dict[str, Any]:
    if content is None or isinstance(content, str):
        return {"type": "error-text" if is_error else "text", "value": content or ""}
    items = content if isinstance(content, list) else [content]
    if is_error:
        text = "\n".join(
            i.get("text", "")
            for i in items
            if isinstance(i, dict) and isinstance(i.get("text"), str)
        )
        return {"type": "error-text", "value": text}
    value = []
    for i in items:
        if isinstance(i, dict) and i.get("type") == "image" and isinstance(i.get("source"), dict):
            src = i["source"]
            value.append(
                {"type": "media", "data": src.get("data"), "mediaType": src.get("media_type")}
            )
        elif isinstance(i, dict) and isinstance(i.get("text"), str):
            value.append({"type": "text", "text": i["text"]})
        else:
            value.append({"type": "text", "text": text_of(i)})
    return {"type": "content", "value": value}


def assistant_part(b: Block) -> Any:
    origin = b.origin
    if _unchanged_block(b):
        return origin.part
    if (
        b.type == TOOL_USE
        and isinstance(origin, PartOrigin)
        and isinstance(origin.part, dict)
        and origin.part.get("type") == "tool-call"
    ):
        part = dict(origin.part)
        part["toolCallId"] = b.data.get("id")
        return part
    return block_json(b)


def _with_ts(rec: dict[str, Any], ts: Any) -> dict[str, Any]:
    if ts is not None:
        rec["ts"] = ts
    return rec


def _content(parts: list[Any], blocks: list[Block]) -> Any:
    if len(blocks) == 1 and isinstance(blocks[0].data, str):
        return blocks[0].data
    return parts


def _user_records(
    m: Message, base: dict[str, Any] | None, ts: Any, names: dict[str, str]
) -> list[Any]:
    """A user message held in a user record (or new): results that are not legacy
    Anthropic blocks of that record go to a `tool` record before it (AI-SDK parts cannot
    sit in a user message), unless legacy results remain there, which must stay in the
    same message as their fellows."""
    results = [b for b in m.blocks if b.type == TOOL_RESULT]
    hoist = [b for b in results if not _is_legacy_result(b)]
    out: list[Any] = []
    rest = list(m.blocks)
    if hoist and len(hoist) == len(results):
        out.append(
            _with_ts({"role": "tool", "content": [tool_result_part(b, names) for b in hoist]}, ts)
        )
        rest = [b for b in m.blocks if b.type != TOOL_RESULT]
    if rest:
        content = _content([plain_part(b) for b in rest], rest)
        if base is None:
            out.append(_with_ts({"role": "user", "content": content}, ts))
        else:
            rec = dict(base)
            rec["content"] = content
            out.append(rec)
    return out


def _tool_group_records(m: Message, o: RecordsOrigin, ts: Any, names: dict[str, str]) -> list[Any]:
    """Split an edited group (tool records, then user records) back into its records.
    Blocks go back to the record they came from; a tool_result that has none goes to the
    current tool record (never an earlier one, so records keep their order), other new
    blocks to the last user record of the group (a new one if the group has none)."""
    kinds = [rec["role"] for rec in o.records]
    position = {idx: p for p, idx in enumerate(o.indices)}
    last_user = max((p for p, k in enumerate(kinds) if k == "user"), default=None)
    buckets: list[list[tuple[Block, Any]]] = [[] for _ in o.records]
    extra: list[tuple[Block, Any]] = []
    tool_pos = 0  # the group starts with a tool record
    for b in m.blocks:
        home = position.get(b.origin.record) if isinstance(b.origin, PartOrigin) else None
        if b.type == TOOL_RESULT and not (home is not None and kinds[home] == "user"):
            if home is not None and home > tool_pos:
                tool_pos = home
            buckets[tool_pos].append((b, tool_result_part(b, names)))
        elif home is not None:
            buckets[home].append((b, plain_part(b)))
        elif last_user is not None:
            buckets[last_user].append((b, plain_part(b)))
        else:
            extra.append((b, plain_part(b)))
    out: list[Any] = []
    for rec, bucket in zip(o.records, buckets, strict=True):
        if not bucket:
            continue
        parts = [p for _, p in bucket]
        orig = rec["content"]
        if len(parts) == len(orig) and all(a is b for a, b in zip(parts, orig, strict=True)):
            out.append(rec)
            continue
        blocks = [b for b, _ in bucket]
        if isinstance(orig, str) and len(blocks) == 1 and blocks[0].data == orig:
            out.append(rec)
            continue
        new = dict(rec)
        new["content"] = _content(parts, blocks)
        out.append(new)
    if extra:
        content = _content([p for _, p in extra], [b for b, _ in extra])
        out.append(_with_ts({"role": "user", "content": content}, ts))
    return out


def records_for(m: Message, ts: Any, names: dict[str, str]) -> list[Any]:
    """The v2 records to write for one message. `ts` is the time a new record gets."""
    o = m.origin
    if m.malformed is not None and isinstance(o, RecordsOrigin):
        return list(o.records)  # written back as read (a null entry too)
    if m.raw is None or not isinstance(o, RecordsOrigin):
        if m.role == "user":
            return _user_records(m, None, ts, names)
        return [_with_ts({"role": m.role, "content": [assistant_part(b) for b in m.blocks]}, ts)]
    if o.kind == "other" or m.blocks == o.blocks:
        return list(o.records)
    own_ts = o.records[0].get("ts", ts)
    if o.kind == "tool":
        return _tool_group_records(m, o, own_ts, names)
    if o.kind == "user":
        return _user_records(m, o.records[0], own_ts, names)
    rec = dict(o.records[0])
    rec["content"] = _content([assistant_part(b) for b in m.blocks], list(m.blocks))
    return [rec]


def dump_records(messages: list[Message]) -> list[Any]:
    names: dict[str, str] = {}
    for m in messages:
        for b in m.blocks:
            if b.type == TOOL_USE and b.tool_id and b.name:
                names.setdefault(b.tool_id, b.name)
    out: list[Any] = []
    last_ts = None
    for m in messages:
        for rec in records_for(m, last_ts, names):
            out.append(rec)
            if isinstance(rec, dict) and rec.get("ts") is not None:
                last_ts = rec["ts"]
    return out
