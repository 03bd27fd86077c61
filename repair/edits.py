"""Primitive edits (SPEC §1: insert/drop/move block, set id, insert/drop/merge messages,
reorder blocks) and the patch they apply to.

A fix's edits run against a `Patch`: a view of the messages that records replacements,
drops and insertions by message uid. A round of fixes touching disjoint messages is then
written into a new message list in one linear pass (`Patch.rebuild`), so applying a whole
plan costs O(n + edits), not O(n * fixes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .model import TOOL_RESULT, TOOL_USE, Block, Message


class Patch:
    def __init__(self, messages: list[Message], index: dict[int, int] | None = None) -> None:
        self.base = messages
        self.index = index if index is not None else {m.uid: i for i, m in enumerate(messages)}
        self.replaced: dict[int, Message] = {}
        self.dropped: set[int] = set()
        self.inserted_after: dict[int | None, list[Message]] = {}
        self.created: dict[int, Message] = {}

    def get(self, uid: int) -> Message:
        if uid in self.replaced:
            return self.replaced[uid]
        if uid in self.created:
            return self.created[uid]
        return self.base[self.index[uid]]

    def put(self, msg: Message) -> None:
        if msg.uid in self.created:
            self.created[msg.uid] = msg
            lst = self.inserted_after[self._anchor_of(msg.uid)]
            for k, m in enumerate(lst):
                if m.uid == msg.uid:
                    lst[k] = msg
        else:
            self.replaced[msg.uid] = msg

    def _anchor_of(self, uid: int) -> int | None:
        for anchor, lst in self.inserted_after.items():
            if any(m.uid == uid for m in lst):
                return anchor
        raise KeyError(uid)

    def insert_after(self, anchor: int | None, msg: Message) -> None:
        self.inserted_after.setdefault(anchor, []).append(msg)
        self.created[msg.uid] = msg

    def drop(self, uid: int) -> None:
        if uid in self.created:
            anchor = self._anchor_of(uid)
            self.inserted_after[anchor] = [m for m in self.inserted_after[anchor] if m.uid != uid]
            del self.created[uid]
        else:
            self.dropped.add(uid)

    def rebuild(self) -> list[Message]:
        out: list[Message] = list(self.inserted_after.get(None, ()))
        for m in self.base:
            if m.uid not in self.dropped:
                out.append(self.replaced.get(m.uid, m))
            extra = self.inserted_after.get(m.uid)
            if extra:
                out.extend(extra)
        return out


@dataclass
class Edit:
    """One primitive change. `removed` keeps dropped content verbatim for the report."""

    action: str
    message_uid: int
    detail: str
    removed: Any = None
    has_removed: bool = False
    removed_bids: tuple[int, ...] = ()  # blocks that left the session with this edit

    def apply(self, patch: Patch) -> None:  # pragma: no cover - interface
        raise NotImplementedError


def _without(blocks: tuple[Block, ...], bid: int) -> tuple[Block, ...]:
    return tuple(b for b in blocks if b.bid != bid)


def _find(blocks: tuple[Block, ...], bid: int) -> Block | None:
    return next((b for b in blocks if b.bid == bid), None)


@dataclass
class InsertBlock(Edit):
    block: Block | None = None
    position: int | None = None  # None = append

    def apply(self, patch: Patch) -> None:
        msg = patch.get(self.message_uid)
        blocks = list(msg.blocks)
        pos = len(blocks) if self.position is None else min(self.position, len(blocks))
        blocks.insert(pos, self.block)
        patch.put(msg.with_blocks(blocks))


@dataclass
class DropBlock(Edit):
    bid: int = 0

    def apply(self, patch: Patch) -> None:
        msg = patch.get(self.message_uid)
        block = _find(msg.blocks, self.bid)
        if block is None:
            return
        self.removed, self.has_removed = block.data, True
        self.removed_bids = (block.bid,)
        patch.put(msg.with_blocks(_without(msg.blocks, self.bid)))


@dataclass
class MoveBlock(Edit):
    bid: int = 0
    to_uid: int = 0

    def apply(self, patch: Patch) -> None:
        src = patch.get(self.message_uid)
        block = _find(src.blocks, self.bid)
        if block is None:
            return
        patch.put(src.with_blocks(_without(src.blocks, self.bid)))
        dst = patch.get(self.to_uid)
        patch.put(dst.with_blocks((*dst.blocks, block)))


@dataclass
class SetId(Edit):
    bid: int = 0
    new_id: str = ""

    def apply(self, patch: Patch) -> None:
        msg = patch.get(self.message_uid)
        blocks = list(msg.blocks)
        for k, b in enumerate(blocks):
            if b.bid == self.bid:
                blocks[k] = with_tool_id(b, self.new_id)
        patch.put(msg.with_blocks(blocks))


@dataclass
class InsertMessage(Edit):
    after_uid: int | None = None
    message: Message | None = None

    def apply(self, patch: Patch) -> None:
        patch.insert_after(self.after_uid, self.message)


@dataclass
class DropMessage(Edit):
    def apply(self, patch: Patch) -> None:
        msg = patch.get(self.message_uid)
        self.removed = msg.raw if msg.raw is not None else _plain(msg)
        self.has_removed = True
        self.removed_bids = tuple(b.bid for b in msg.blocks)
        patch.drop(self.message_uid)


@dataclass
class DropIfEmpty(Edit):
    """Drop the message if earlier edits of the same fix left it without blocks."""

    def apply(self, patch: Patch) -> None:
        msg = patch.get(self.message_uid)
        if msg.blocks:
            return
        self.removed = msg.raw if msg.raw is not None else _plain(msg)
        self.has_removed = True
        patch.drop(self.message_uid)


@dataclass
class MergeMessages(Edit):
    second_uid: int = 0

    def apply(self, patch: Patch) -> None:
        first = patch.get(self.message_uid)
        second = patch.get(self.second_uid)
        self.removed = second.raw if second.raw is not None else _plain(second)
        self.has_removed = True
        patch.put(first.with_blocks((*first.blocks, *second.blocks)))
        patch.drop(self.second_uid)


@dataclass
class ReorderBlocks(Edit):
    """Tool results first, in the order of `use_order` (tool id -> rank); other blocks keep
    their relative order after them."""

    use_order: dict[str, int] = field(default_factory=dict)

    def apply(self, patch: Patch) -> None:
        msg = patch.get(self.message_uid)
        new = canonical_order(msg.blocks, self.use_order)
        if any(a is not b for a, b in zip(new, msg.blocks, strict=True)):
            patch.put(msg.with_blocks(new))


def canonical_order(blocks: tuple[Block, ...], use_order: dict[str, int]) -> tuple[Block, ...]:
    big = len(use_order) + 1

    def rank(item: tuple[int, Block]) -> tuple[int, int, int]:
        k, b = item
        if b.type == TOOL_RESULT:
            return (0, use_order.get(b.tool_id or "", big), k)
        return (1, 0, k)

    return tuple(b for _, b in sorted(enumerate(blocks), key=rank))


def with_tool_id(block: Block, new_id: str) -> Block:
    data = block.data
    if isinstance(data, dict) and block.type in (TOOL_USE, TOOL_RESULT):
        key = "id" if block.type == TOOL_USE else "tool_use_id"
        if key in data or "type" not in data:
            data = {**data, key: new_id}
        else:  # a missing id goes right after "type", where writers put it
            out: dict = {}
            for k, v in data.items():
                out[k] = v
                if k == "type":
                    out[key] = new_id
            data = out
    return Block(
        type=block.type,
        data=data,
        tool_id=new_id,
        name=block.name,
        is_error=block.is_error,
        src=block.src,
        origin=block.origin,
        bid=block.bid,
    )


def _plain(msg: Message) -> dict:
    return {"role": msg.role, "content": [b.data for b in msg.blocks]}
