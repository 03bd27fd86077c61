"""Claude Code records -> API messages (one view = one conversation of a file).

The resumed chain (claude_chain) is turned into API messages the way Claude Code sends
them: consecutive assistant records sharing `message.id` form one assistant message;
consecutive user records (the per-call results of one turn, an interrupt note, the next
prompt) form one user message. `attachment`/`system` records on the chain are not
messages ("glue": they pass through and follow the record before them when the chain is
re-linked). Records off the chain (an abandoned rewind branch, history before a compaction,
a part cut off by a missing parent) are shown as hidden messages at their file position;
lines that cannot be read become malformed messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..model import THINKING_TYPES, Block, Message, block_from_anthropic
from .base import JsonlLine
from .claude_chain import MESSAGE_TYPES, Graph, ts_ms


@dataclass
class CCFile:
    path: str
    data: bytes
    lines: list[JsonlLine]
    newline: str
    trailing_newline: bool
    bom: bool
    graph: Graph
    single_doc: bool = False  # the whole file was one JSON record


@dataclass
class View:
    """One conversation of a file: its resumed chain and the messages built from it."""

    file: CCFile
    chain: list[str]  # node uuids in conversation order (after parallel-result recovery)
    messages: list[Message]  # as loaded
    rec_blocks: dict[int, tuple[Block, ...]] = field(default_factory=dict)  # chain records
    msg_records: dict[int, tuple[int, ...]] = field(default_factory=dict)  # uid -> lines
    sidechain: bool = False


@dataclass
class CCState:
    file: CCFile
    view: View
    inline_thread: bool = False  # a sidechain conversation stored in its main session's file
    stop: str | None = None  # why the walk stopped early ("missing parent ...", "cycle")
    recovered: int = 0  # off-chain parallel lines put back by the recovery pass


def record_blocks(obj: Any, idx: int, lineno: int) -> tuple[tuple[Block, ...], str | None]:
    """The blocks of a user/assistant record, or the reason it is not a readable message."""
    msg = obj.get("message")
    if type(msg) is not dict:
        return (), "the record has no `message` object"
    content = msg.get("content")
    src = {"line": lineno}
    if isinstance(content, str):
        return (Block(type="text", data=content, src=src, origin=idx),), None
    if type(content) is not list:
        kind = "missing" if content is None else f"a {type(content).__name__}"
        return (), f"message.content is {kind}, not a string or a list of blocks"
    blocks = []
    for k, item in enumerate(content):
        if type(item) is not dict or not isinstance(item.get("type"), str):
            return (), f"message.content[{k}] is not a content block (no `type`)"
        blocks.append(block_from_anthropic(item, src={"line": lineno}, origin=idx))
    return tuple(blocks), None


def is_api_error(obj: dict) -> bool:
    if obj.get("isApiErrorMessage") is True:
        return True
    msg = obj.get("message")
    return type(msg) is dict and msg.get("model") == "<synthetic>"


class _Builder:
    """Accumulates records into messages (merging rules above)."""

    def __init__(self, file: CCFile, hidden: bool = False, reason: str | None = None):
        self.file = file
        self.hidden = hidden
        self.reason = reason
        self.out: list[Message] = []
        self.rec_blocks: dict[int, tuple[Block, ...]] = {}
        self.msg_records: dict[int, tuple[int, ...]] = {}
        self._role: str | None = None
        self._mid: str | None = None
        self._recs: list[int] = []
        self._blocks: list[Block] = []

    def add(self, idx: int) -> None:
        ln = self.file.lines[idx]
        obj = ln.obj
        role = obj.get("type")
        blocks, bad = record_blocks(obj, idx, ln.lineno)
        if bad is not None:
            self.flush()
            self._single(idx, malformed=f"{role} record: {bad}")
            return
        if not self.hidden and is_api_error(obj):
            self.flush()
            self._single(
                idx, blocks=blocks, hidden="an API error record (Claude Code does not send it)"
            )
            return
        mid = None
        if role == "assistant":
            msg = obj["message"]
            mid = msg.get("id") if isinstance(msg.get("id"), str) else None
            same = self._role == "assistant" and mid is not None and mid == self._mid
        else:
            same = self._role == "user"
        if not same:
            self.flush()
            self._role, self._mid = role, mid
        self._recs.append(idx)
        self._blocks.extend(blocks)
        self.rec_blocks[idx] = blocks

    def _single(self, idx: int, blocks=(), malformed=None, hidden=None) -> None:
        ln = self.file.lines[idx]
        obj = ln.obj
        role = obj.get("type") if type(obj) is dict else None
        m = Message(
            role=role if role in MESSAGE_TYPES else None,
            blocks=tuple(blocks),
            raw=obj,
            meta=_meta([obj], hidden or (self.reason if self.hidden else None)),
            hidden=self.hidden or hidden is not None,
            malformed=malformed,
            src={"line": ln.lineno},
            origin=(idx,),
        )
        self.msg_records[m.uid] = (idx,)
        self.rec_blocks[idx] = tuple(blocks)
        self.out.append(m)

    def malformed_line(self, idx: int, reason: str) -> None:
        self.flush()
        self._single(idx, malformed=reason)

    def flush(self) -> None:
        if not self._recs:
            return
        lines = self.file.lines
        objs = [lines[i].obj for i in self._recs]
        m = Message(
            role=self._role,
            blocks=tuple(self._blocks),
            raw=objs[0] if len(objs) == 1 else objs,
            meta=_meta(objs, self.reason if self.hidden else None),
            hidden=self.hidden,
            src={"line": lines[self._recs[0]].lineno},
            origin=tuple(self._recs),
        )
        self.msg_records[m.uid] = tuple(self._recs)
        self.out.append(m)
        self._role = self._mid = None
        self._recs, self._blocks = [], []


def _meta(objs: list, hidden_reason: str | None) -> dict:
    first = objs[0] if objs and type(objs[0]) is dict else {}
    meta: dict = {}
    ts = first.get("timestamp")
    if isinstance(ts, str):
        ms = ts_ms(ts)
        if ms is not None:
            meta["timestamp"] = ms / 1000.0
    if isinstance(first.get("uuid"), str):
        meta["uuid"] = first["uuid"]
    if hidden_reason:
        meta["hidden_reason"] = hidden_reason
    return meta


def build_view(
    file: CCFile,
    chain: list[str],
    hidden: list[tuple[int, str]],
    sidechain: bool = False,
) -> View:
    """Messages of one conversation: the chain's messages, with the hidden/malformed lines
    (`hidden`: (line index, reason) in file order) placed by file position among them."""
    g = file.graph
    dropped = dropped_on_resume(file, chain)
    live = _Builder(file)
    for u in chain:
        node = g.nodes[u]
        if node.type in MESSAGE_TYPES and node.idx not in dropped:
            live.add(node.idx)
    live.flush()
    extra = _Builder(file, hidden=True)
    prev_reason = None
    for idx, reason in hidden:
        if reason.startswith("malformed:"):
            extra.malformed_line(idx, reason[len("malformed:") :].strip())
            prev_reason = None
            continue
        if reason != prev_reason:
            extra.flush()
            extra.reason = reason
            prev_reason = reason
        extra.add(idx)
    extra.flush()
    messages = _interleave(live.out, extra.out)
    view = View(file=file, chain=chain, messages=messages, sidechain=sidechain)
    view.rec_blocks = live.rec_blocks
    view.msg_records = live.msg_records
    for uid, recs in extra.msg_records.items():
        view.msg_records[uid] = recs
    return view


def dropped_on_resume(file: CCFile, chain: list[str]) -> set[int]:
    """Assistant records Claude Code drops when it resumes (notes §6.3), so they are never
    sent: whitespace-only text records (the `"\\n\\n"` that opens thinking turns) and
    thinking-only records whose `message.id` has no other content on the chain."""
    g = file.graph
    lines = file.lines
    with_content: set[str] = set()
    thinking_only: list[tuple[int, str | None]] = []
    out: set[int] = set()
    for u in chain:
        node = g.nodes[u]
        if node.type != "assistant":
            continue
        msg = lines[node.idx].obj.get("message")
        content = msg.get("content") if type(msg) is dict else None
        if type(content) is not list or not content:
            continue
        if not all(type(b) is dict for b in content):
            continue
        mid = msg.get("id") if isinstance(msg.get("id"), str) else None
        if all(
            b.get("type") == "text" and isinstance(b.get("text"), str) and not b["text"].strip()
            for b in content
        ):
            out.add(node.idx)
        elif all(b.get("type") in THINKING_TYPES for b in content):
            thinking_only.append((node.idx, mid))
        elif mid is not None:
            with_content.add(mid)
    out.update(idx for idx, mid in thinking_only if mid not in with_content)
    return out


def _interleave(live: list[Message], extra: list[Message]) -> list[Message]:
    """Extras (hidden, malformed) go before the first live message that starts on a later
    line; the live order itself is never changed."""
    if not extra:
        return live
    out: list[Message] = []
    k = 0
    for m in live:
        line = m.src["line"]
        while k < len(extra) and extra[k].src["line"] < line:
            out.append(extra[k])
            k += 1
        out.append(m)
    out.extend(extra[k:])
    return out
