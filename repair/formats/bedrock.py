"""`bedrock`: Bedrock Converse messages, as a JSON list or a request body `{modelId, messages,
system, toolConfig, inferenceConfig, ...}` (what LangChain, litellm, the AWS SDKs and home-made
agents keep).

A Converse content block is an object with exactly one key and no `type`: `{"text"}`,
`{"toolUse": {toolUseId, name, input}}`, `{"toolResult": {toolUseId, content: [{text} | {json}
| {image} | {document}], status}}`, `{"image"}`, `{"document"}`, `{"reasoningContent"}`,
`{"cachePoint"}`, ... Normal form: toolUse -> tool_use, toolResult -> tool_result
(`is_error` for `status: "error"`; its content items as `{"type": KEY, KEY: value}`, text and
json as text), reasoningContent -> thinking (redactedContent -> redacted_thinking), text -> text, any
other block keeps its key as the block type.

Export rebuilds only the messages that changed, block by block: untouched blocks are the
objects read, an id change rewrites `toolUseId`, histview's synthetic result is
`{"toolResult": {"toolUseId", "content": [{"text": "[histview] ..."}], "status": "error"}}`.
The document keeps its other keys and its JSON style.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ExportRefused
from ..jsonio import text_of
from ..model import TEXT, TOOL_RESULT, TOOL_USE, Block, Message, Session
from .anthropic_list import (
    CONVERSE_KEYS,
    converse_key,
    make_state,
    write_document,
)
from .base import Adapter, Export, Probe, detect_sample, shown, type_name
from .registry import register

# Keys only a Converse request body has (an Anthropic body says `model`, not `modelId`).
BODY_KEYS = frozenset(
    {
        "modelId",
        "toolConfig",
        "inferenceConfig",
        "additionalModelRequestFields",
        "guardrailConfig",
        "promptVariables",
        "additionalModelResponseFieldPaths",
        "performanceConfig",
    }
)
ROLES = ("user", "assistant")


@dataclass(slots=True, eq=False)  # (not frozen: one per block, and frozen costs twice)
class At:
    """Where a block was read: message index and content index."""

    msg: int
    item: int


def _entries(doc: Any) -> tuple[list[Any], str, str] | None:
    """(messages, container, JSON pointer prefix) of a Converse document."""
    if isinstance(doc, list):
        return doc, "list", ""
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        return doc["messages"], "body", "/messages"
    return None


class BedrockAdapter(Adapter):
    name = "bedrock"
    default_target = "bedrock"

    def detect(self, probe: Probe) -> int:
        if probe.kind != "json":
            return 0
        found = _entries(probe.doc)
        if found is None:
            return 0
        entries, container, _ = found
        body_keys = container == "body" and not BODY_KEYS.isdisjoint(probe.doc)
        if not entries:
            return 70 if body_keys else 0
        entries = detect_sample(entries)
        dicts = [e for e in entries if isinstance(e, dict)]
        if len(dicts) * 2 < len(entries) or sum("role" in e for e in dicts) * 2 < len(dicts):
            return 0
        converse = other = 0
        tools = False
        for e in dicts:
            content = e.get("content")
            if not isinstance(content, list):
                if content is not None:
                    other += 1
                continue
            for item in content:
                key = converse_key(item)
                if key is None:
                    other += 1
                else:
                    converse += 1
                    tools = tools or key in ("toolUse", "toolResult", "reasoningContent")
        if not converse or other > converse:
            return 70 if body_keys and not other else 0
        return 85 if tools or body_keys else 65

    def load(self, probe: Probe) -> Session:
        found = _entries(probe.doc)
        assert found is not None
        entries, container, prefix = found
        messages = [_message(i, e, f"{prefix}/{i}") for i, e in enumerate(entries)]
        state = make_state(probe, container, messages)
        return self.session(probe.path, messages, state)

    def write(self, session: Session) -> Export:
        return Export(write_document(session.state, [_entry(m) for m in session.messages]))


# -------------------------------------------------------------------- loading


def _problem(entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return f"entry is {type_name(entry)}, not a message object"
    role = entry.get("role")
    if role is None:
        return "no role"
    if role not in ROLES:
        return f"role {shown(role)} is not user or assistant"
    content = entry.get("content")
    if not isinstance(content, list):
        return "no content" if "content" not in entry else f"content is {type_name(content)}"
    for k, item in enumerate(content):
        key = converse_key(item)
        if key is None:
            if isinstance(item, dict) and isinstance(item.get("type"), str):
                return f"content[{k}] is an Anthropic block ({item['type']}), not a Converse block"
            return f"content[{k}] is not a Converse block (one key such as text or toolUse)"
        value = item[key]
        if key == "text" and not isinstance(value, str):
            return f"content[{k}].text is {type_name(value)}"
        if key in ("toolUse", "toolResult", "reasoningContent") and not isinstance(value, dict):
            return f"content[{k}].{key} is {type_name(value)}, not an object"
    return None


def _message(i: int, entry: Any, path: str) -> Message:
    problem = _problem(entry)
    if problem is not None:
        role = entry.get("role") if isinstance(entry, dict) else None
        return Message(
            role=role if role in ROLES else None,
            blocks=(),
            raw=entry,
            malformed=problem,
            src={"path": path},
            origin=(),
        )
    blocks = tuple(
        _block(item, {"path": f"{path}/content/{k}"}, At(i, k))
        for k, item in enumerate(entry["content"])
    )
    return Message(role=entry["role"], blocks=blocks, raw=entry, src={"path": path}, origin=blocks)


def _block(item: dict[str, Any], src: dict[str, Any], at: At) -> Block:
    key = converse_key(item)
    if key is None:  # the loader checked every block
        raise ValueError("not a Converse content block")
    value = item[key]
    if key == "text":
        return Block(TEXT, {"type": TEXT, "text": value}, src=src, origin=(at, item))
    if key == "toolUse":
        tid, name = value.get("toolUseId"), value.get("name")
        data = {"type": TOOL_USE, "id": tid, "name": name, "input": value.get("input")}
        return Block(
            TOOL_USE,
            data,
            tool_id=tid if isinstance(tid, str) else None,
            name=name if isinstance(name, str) else None,
            src=src,
            origin=(at, item),
        )
    if key == "toolResult":
        tid = value.get("toolUseId")
        is_error = value.get("status") == "error"
        data = {
            "type": TOOL_RESULT,
            "tool_use_id": tid,
            "content": _result_content(value.get("content")),
            "is_error": is_error,
        }
        return Block(
            TOOL_RESULT,
            data,
            tool_id=tid if isinstance(tid, str) else None,
            is_error=is_error,
            src=src,
            origin=(at, item),
        )
    if key == "reasoningContent":
        if "redactedContent" in value:
            return Block("redacted_thinking", item, src=src, origin=(at, item))
        rt = value.get("reasoningText")
        text = rt.get("text") if isinstance(rt, dict) else None
        data = {"type": "thinking", "thinking": text if isinstance(text, str) else ""}
        return Block("thinking", data, src=src, origin=(at, item))
    return Block(key, item, src=src, origin=(at, item))


def _result_content(content: Any) -> Any:
    """toolResult content items as typed items: {"text"} -> text, {"json"} -> its JSON as
    text, {KEY: v} -> {type: KEY, KEY: v}."""
    if not isinstance(content, list):
        return content
    out = []
    for c in content:
        if isinstance(c, dict) and len(c) == 1 and "type" not in c:
            key = next(iter(c))
            if key == "text":
                out.append({"type": TEXT, "text": c[key]})
            elif key == "json":  # shown and searched as text; the item is written as read
                text = text_of(c[key], indent=True)
                out.append({"type": TEXT, "text": text})
            else:
                out.append({"type": key, key: c[key]})
        else:
            out.append(c)
    return out


# -------------------------------------------------------------------- writing


def _entry(m: Message) -> Any:
    if m.malformed is not None or m.hidden:
        return m.raw
    if m.raw is not None and isinstance(m.origin, tuple) and m.blocks == m.origin:
        return m.raw
    content = [_item(b) for b in m.blocks]
    if m.raw is None:
        return {"role": m.role, "content": content}
    return {**m.raw, "content": content}


def _item(b: Block) -> dict[str, Any]:
    origin = b.origin
    if isinstance(origin, tuple) and len(origin) == 2 and isinstance(origin[0], At):
        item: dict[str, Any] = origin[1]
        key = converse_key(item)
        if key in ("toolUse", "toolResult") and item[key].get("toolUseId") != b.tool_id:
            return {key: {**item[key], "toolUseId": b.tool_id}}
        if key == "text" and isinstance(b.data, dict) and b.data.get("text") != item["text"]:
            return {"text": b.data.get("text")}
        return item
    data = b.data
    if b.type == TOOL_RESULT and isinstance(data, dict):
        content = data.get("content")
        items = [{"text": content}] if isinstance(content, str) else _converse_items(content)
        return {
            "toolResult": {
                "toolUseId": b.tool_id,
                "content": items,
                "status": "error" if b.is_error else "success",
            }
        }
    if b.type == TEXT:
        return {"text": data if isinstance(data, str) else (data or {}).get("text", "")}
    kind = data.get("type") if isinstance(data, dict) else None
    if isinstance(kind, str) and kind in CONVERSE_KEYS and kind in data:
        return {data["type"]: data[data["type"]]}
    raise ExportRefused(f"a new {b.type} block cannot be written as a Converse block")


def _converse_items(content: Any) -> list[Any]:
    out = []
    for c in content if isinstance(content, list) else ():
        if isinstance(c, dict) and c.get("type") == TEXT:
            out.append({"text": c.get("text", "")})
        elif isinstance(c, dict) and isinstance(c.get("type"), str) and c["type"] in c:
            out.append({c["type"]: c[c["type"]]})
    return out


register(BedrockAdapter())
