"""Primitive edits (docs/codes.md, Fixes: insert/drop/move block, set id, insert/drop/merge messages,
reorder blocks) and the patch they apply to.

A fix's edits run against a `Patch`: a view of the messages that records replacements,
drops and insertions by message uid. A round of fixes touching disjoint messages is then
written into a new message list in one linear pass (`Patch.rebuild`), so applying a whole
plan costs O(n + edits), not O(n * fixes); inside a message, block edits are recorded by
block id and laid out once, so a fix with k edits of an n-block message costs O(n + k).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .model import TOOL_RESULT, TOOL_USE, Block, Message


class _Work:
    """The blocks of one message while a round of edits runs: drops, id changes, appends
    and insertions before a block are recorded in O(1) and laid out once (`compact`) when
    an edit needs the whole order, so many edits of one big message stay linear."""

    __slots__ = ("msg", "blocks", "pos", "gone", "swap", "before", "changed")

    def __init__(self, msg: Message) -> None:
        self.msg = msg
        self.blocks: list[Block] = list(msg.blocks)
        self.pos: dict[int, int] | None = None  # bid -> index in blocks
        self.gone: set[int] = set()
        self.swap: dict[int, Block] = {}
        self.before: dict[int, list[Block]] = {}
        self.changed = False

    def compact(self) -> list[Block]:
        if self.gone or self.swap or self.before:
            out: list[Block] = []
            for b in self.blocks:
                if self.before:
                    out.extend(self.before.pop(b.bid, ()))
                if b.bid not in self.gone:
                    out.append(self.swap.get(b.bid, b))
            self.blocks = out
            self.gone, self.swap, self.before, self.pos = set(), {}, {}, None
        return self.blocks

    def find(self, bid: int) -> Block | None:
        if bid in self.gone:
            return None
        if bid in self.swap:
            return self.swap[bid]
        if self.pos is None or (bid not in self.pos and self.before):
            self.compact()
            self.pos = {b.bid: k for k, b in enumerate(self.blocks)}
        k = self.pos.get(bid)
        return None if k is None else self.blocks[k]

    def append(self, block: Block) -> None:
        self.blocks.append(block)
        if self.pos is not None:
            self.pos[block.bid] = len(self.blocks) - 1
        self.changed = True

    def replace_all(self, blocks: list[Block]) -> None:
        self.blocks = blocks
        self.gone, self.swap, self.before, self.pos = set(), {}, {}, None
        self.changed = True

    def message(self) -> Message:
        return self.msg.with_blocks(self.compact()) if self.changed else self.msg


# The uid -> position index of the message list patched last, and of the list a patch
# made from it without inserting or dropping a message (the same index): one step after
# another need not index the whole session each time.
_last_index: list[tuple[list[Message], dict[int, int]]] = []


def _index_of(messages: list[Message]) -> dict[int, int]:
    for listed, index in _last_index:
        if listed is messages:
            return index
    index = {m.uid: i for i, m in enumerate(messages)}
    _last_index[:] = [(messages, index)]
    return index


Merged = Callable[[Message, Message, Sequence[Block] | None], Message]


def _first(first: Message, _second: Message, _moved: Sequence[Block] | None = None) -> Message:
    return first


class Patch:
    """`merged`: what a message becomes when the next one is merged into it, or blocks of
    another are moved into it, its blocks aside (the format's `Adapter.merged`: named by
    the records of both, or by its own and those the moved blocks were read from). `kept`:
    the writer writes the records a merged message is named by as read
    (`Adapter.writes_merged_as_read`)."""

    def __init__(
        self,
        messages: list[Message],
        index: dict[int, int] | None = None,
        merged: Merged = _first,
        kept: bool = False,
    ) -> None:
        self.base = messages
        self.merged = merged
        self.kept = kept
        self.index = index if index is not None else _index_of(messages)
        self.work: dict[int, _Work] = {}
        self.dropped: set[int] = set()
        self.inserted_after: dict[int | None, list[int]] = {}
        self.created: dict[int, Message] = {}
        self.file_edits: list[Edit] = []  # edits of the file's records (the adapter's)

    def _work(self, uid: int) -> _Work:
        w = self.work.get(uid)
        if w is None:
            msg = self.created[uid] if uid in self.created else self.base[self.index[uid]]
            w = self.work[uid] = _Work(msg)
        return w

    # blocks of a message
    def find(self, uid: int, bid: int) -> Block | None:
        return self._work(uid).find(bid)

    def drop_block(self, uid: int, bid: int) -> Block | None:
        w = self._work(uid)
        block = w.find(bid)
        if block is not None:
            w.gone.add(bid)
            w.changed = True
        return block

    def replace_block(self, uid: int, block: Block) -> None:
        w = self._work(uid)
        if w.find(block.bid) is not None:
            w.swap[block.bid] = block
            w.changed = True

    def append_block(self, uid: int, block: Block) -> None:
        self._work(uid).append(block)

    def move_block(self, uid: int, bid: int, to_uid: int) -> None:
        """Block `bid` of message `uid` goes to the end of message `to_uid`, which takes
        the record it was read from."""
        source = self.message(uid)
        block = self.drop_block(uid, bid)
        if block is not None:
            w = self._work(to_uid)
            w.msg = self.merged(w.msg, source, (block,))
            w.append(block)

    def insert_before(self, uid: int, bid: int, block: Block) -> None:
        w = self._work(uid)
        if w.find(bid) is None:
            w.append(block)
        else:
            w.before.setdefault(bid, []).append(block)
            w.changed = True

    def blocks(self, uid: int) -> list[Block]:
        """The message's blocks now, in order (do not mutate; use `set_blocks`)."""
        return self._work(uid).compact()

    def set_blocks(self, uid: int, blocks: list[Block]) -> None:
        self._work(uid).replace_all(blocks)

    def message(self, uid: int) -> Message:
        return self._work(uid).message()

    def merge(self, uid: int, second: Message) -> bool:
        """Message `uid` takes `second`'s blocks after its own, and its records: whether the
        file keeps those as read (it is named by them now, `merged` giving another message,
        and the writer writes them as read: `kept`)."""
        w = self._work(uid)
        blocks = [*w.compact(), *second.blocks]
        named = self.merged(w.msg, second, None)
        kept = self.kept and named is not w.msg
        w.msg = named
        w.replace_all(blocks)
        return kept

    # messages
    def insert_after(self, anchor: int | None, msg: Message) -> None:
        self.inserted_after.setdefault(anchor, []).append(msg.uid)
        self.created[msg.uid] = msg

    def drop(self, uid: int) -> None:
        self.dropped.add(uid)

    def rebuild(self) -> list[Message]:
        if not self.dropped and not self.inserted_after:
            # messages changed in place: the list copied, the changed ones put in, and the
            # index kept for the new list (same uids at the same positions)
            now = list(self.base)
            for uid, changed in self.work.items():
                now[self.index[uid]] = changed.message()
            _last_index[:] = [(self.base, self.index), (now, self.index)]
            return now

        def made(uids: list[int]) -> list[Message]:
            return [self.message(u) for u in uids if u not in self.dropped]

        # messages came or went: the list copied with the changed ones put in, then each
        # position that loses its message or gains some after it spliced, last first (the
        # positions before it stay put)
        out = list(self.base)
        index = self.index
        at: set[int] = set()
        for uid, w in self.work.items():
            k = index.get(uid)
            if k is not None and self.base[k].uid == uid:
                out[k] = w.message()
        for uid in self.dropped:
            k = index.get(uid)
            if k is not None:
                at.add(k)
        for anchor in self.inserted_after:
            k = index.get(anchor) if anchor is not None else None
            if k is not None:
                at.add(k)
        for k in sorted(at, reverse=True):
            uid = self.base[k].uid
            extra = self.inserted_after.get(uid)
            here = [] if uid in self.dropped else [out[k]]
            out[k : k + 1] = here + made(extra) if extra else here
        first = self.inserted_after.get(None)
        if first:
            out[0:0] = made(first)
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


@dataclass(kw_only=True)
class InsertBlock(Edit):
    block: Block
    position: int | None = None  # None = append (unless before_bid)
    before_bid: int | None = None  # insert right before this block (appended if it is gone)

    def apply(self, patch: Patch) -> None:
        uid = self.message_uid
        if self.before_bid is not None:
            patch.insert_before(uid, self.before_bid, self.block)
        elif self.position is None:
            patch.append_block(uid, self.block)
        else:
            blocks = list(patch.blocks(uid))
            blocks.insert(min(self.position, len(blocks)), self.block)
            patch.set_blocks(uid, blocks)


@dataclass(kw_only=True)
class DropBlock(Edit):
    bid: int

    def apply(self, patch: Patch) -> None:
        block = patch.drop_block(self.message_uid, self.bid)
        if block is None:
            return
        self.removed, self.has_removed = block.data, True
        self.removed_bids = (block.bid,)


@dataclass(kw_only=True)
class MoveBlock(Edit):
    bid: int
    to_uid: int

    def apply(self, patch: Patch) -> None:
        patch.move_block(self.message_uid, self.bid, self.to_uid)


@dataclass(kw_only=True)
class SetId(Edit):
    bid: int
    new_id: str

    def apply(self, patch: Patch) -> None:
        block = patch.find(self.message_uid, self.bid)
        if block is not None:
            # an id that is not a string (a list, an object) goes to the report as read; a
            # string one is named in the fix's detail
            key = "id" if block.type == TOOL_USE else "tool_use_id"
            old = block.data.get(key) if isinstance(block.data, dict) else None
            if old is not None and not isinstance(old, str):
                self.removed, self.has_removed = {key: old}, True
            patch.replace_block(self.message_uid, with_tool_id(block, self.new_id))


@dataclass(kw_only=True)
class InsertMessage(Edit):
    after_uid: int | None  # None: first
    message: Message

    def apply(self, patch: Patch) -> None:
        patch.insert_after(self.after_uid, self.message)


@dataclass
class DropMessage(Edit):
    def apply(self, patch: Patch) -> None:
        msg = patch.message(self.message_uid)
        self.removed = msg.raw if msg.raw is not None else _plain(msg)
        self.has_removed = True
        self.removed_bids = tuple(b.bid for b in msg.blocks)
        patch.drop(self.message_uid)


@dataclass
class DropIfEmpty(Edit):
    """Drop the message if earlier edits of the same fix left it without blocks."""

    def apply(self, patch: Patch) -> None:
        if patch.blocks(self.message_uid):
            return
        msg = patch.message(self.message_uid)
        self.removed = msg.raw if msg.raw is not None else _plain(msg)
        self.has_removed = True
        patch.drop(self.message_uid)


@dataclass(kw_only=True)
class MergeMessages(Edit):
    second_uid: int

    def apply(self, patch: Patch) -> None:
        second = patch.message(self.second_uid)
        kept = patch.merge(self.message_uid, second)  # its records written as read
        self.removed = None if kept else second.raw if second.raw is not None else _plain(second)
        self.has_removed = not kept
        patch.drop(self.second_uid)


@dataclass(kw_only=True)
class ReorderBlocks(Edit):
    """Tool results first, in the order of `use_order` (tool id -> rank); other blocks keep
    their relative order after them."""

    use_order: dict[str, int]

    def apply(self, patch: Patch) -> None:
        blocks = patch.blocks(self.message_uid)
        new = canonical_order(blocks, self.use_order)
        if any(a is not b for a, b in zip(new, blocks, strict=True)):
            patch.set_blocks(self.message_uid, list(new))


@dataclass(kw_only=True)
class Relink(Edit):
    """Point one record of the file at another parent (a Claude Code record whose
    parentUuid names a record that was lost). It changes the file, not a message: the
    format's adapter applies it to what the session writes and loads the result again."""

    record: str  # the record's uuid
    line: int  # and its line (another record may hold the same uuid)
    parent: str  # its new parentUuid

    def apply(self, patch: Patch) -> None:
        patch.file_edits.append(self)


def canonical_order(
    blocks: tuple[Block, ...] | list[Block], use_order: dict[str, int]
) -> tuple[Block, ...]:
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
            out: dict[str, Any] = {}
            for k, v in data.items():
                out[k] = v
                if k == "type":
                    out[key] = new_id
            data = out
    return replace(block, data=data, tool_id=new_id)


def _plain(msg: Message) -> dict[str, Any]:
    return {"role": msg.role, "content": [b.data for b in msg.blocks]}
