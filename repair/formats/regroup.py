"""The messages a fix made, grouped as the written file reads them back.

Codex, OpenAI chat and opencode files do not keep a message as one record: their loaders
group records (Codex items, chat entries, opencode parts) into messages. After a fix the
file groups the records it writes the same way, so the session is regrouped where a fix
made, edited or dropped a message (`Adapter.stamped`): a user message holding tool results
and text is a message of the results and a message of the text when the format writes
results as records of their own (Codex output items, chat `tool` messages), and messages of
one kind that came to be in a row are one (named by the records of each, where the format
names a merged message so: `Rules.merged`). What the session's analysis finds is then what
`check` finds in the written file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..model import TOOL_RESULT, TOOL_USE, Block, Message, Session, new_uid

# A message's blocks cut into the runs the file writes apart: (kind, blocks) in the order
# written. Runs of one kind in a row are read back as one message when `Rules.joins` says.
# A kind is the role of the message it makes, or a tuple whose first item is.
Runs = list[tuple[Hashable, list[Block]]]


@dataclass(frozen=True)
class Rules:
    runs: Callable[[Message], Runs]
    # whether a run of this kind after a group of that kind (its blocks so far) joins it
    joins: Callable[[Hashable, list[Block], Hashable], bool]
    # a group's blocks in the order the file reads them back
    ordered: Callable[[str, list[Block]], list[Block]] = lambda _role, blocks: blocks
    # a message that is not live sits between groups without parting them (opencode)
    through_hidden: bool = False
    # whether the file keeps a block of a message after that live message (None: every
    # block; the span's first message keeps them all)
    keeps: Callable[[Block, Message], bool] | None = None
    # the time a group of these blocks is read back with, after that message (None: keep
    # its first message's)
    time: Callable[[list[Block], Message | None], float | None] = lambda _b, _m: None
    # a part of a message the file writes apart (`part`: the message of that part's group,
    # `whole`: the message as it was) named by the records its blocks were read from: its
    # origin, src and raw (None: each part keeps the whole message's)
    part: Callable[[Message, Message], Message] | None = None
    # a group joined of runs of several messages named by the records of each, as a merge
    # names them (the format's `Adapter.merged`; None: by its first message's)
    merged: Callable[[Message, Message, Sequence[Block] | None], Message] | None = None


def regrouped(session: Session, made: Collection[int], rules: Rules) -> Session:
    """`session` with the live messages around those `made` (uids) grouped as `rules` say
    the written file groups them; messages whose group is unchanged stay the same objects."""
    msgs = session.messages
    if not made:
        return session
    near: set[int] = set()
    for i, m in enumerate(msgs):
        if m.uid in made and m.live:
            near.update(_neighbours(msgs, i, rules.through_hidden))
    if not near:
        return session
    out: list[Message] = []
    pos = 0
    changed = False
    for start, end in _spans(msgs, sorted(near), rules.through_hidden):
        out += msgs[pos:start]
        span = msgs[start:end]
        got = _regroup(span, rules, made)
        changed = (
            changed
            or len(got) != len(span)
            or any(a is not b for a, b in zip(got, span, strict=False))
        )
        out += got
        pos = end
    if not changed:
        return session
    out += msgs[pos:]
    return session.copy_with(out)


def _neighbours(msgs: list[Message], i: int, through_hidden: bool) -> list[int]:
    """Message i and the live messages next to it that it may be grouped with."""
    got = [i]
    for step in (-1, 1):
        k = i + step
        while 0 <= k < len(msgs) and through_hidden and not msgs[k].live:
            k += step
        if 0 <= k < len(msgs) and msgs[k].live:
            got.append(k)
    return got


def _spans(msgs: list[Message], at: list[int], through_hidden: bool) -> list[tuple[int, int]]:
    """The stretches [start, end) of the list holding the positions `at` (sorted), each a
    run of messages that may group together (live neighbours; hidden ones between them
    where they do not part groups)."""
    spans: list[tuple[int, int]] = []
    for k in at:
        if spans:
            start, end = spans[-1]
            if k < end:
                continue
            between = msgs[end:k]
            if k == end or (through_hidden and not any(m.live for m in between)):
                spans[-1] = (start, k + 1)
                continue
        spans.append((k, k + 1))
    return spans


def _regroup(span: list[Message], rules: Rules, made: Collection[int]) -> list[Message]:
    """The messages of a span as the file groups them: each group at the place of its
    first run, the messages that are not live in place between them."""
    out: list[Any] = []  # a message, or the index of a group in `groups`
    groups: list[tuple[Hashable, list[Block], list[Message]]] = []
    keeps = rules.keeps
    prev: Message | None = None
    for m in span:
        if not m.live:
            out.append(m)
            continue
        if keeps is not None and prev is not None:
            after = prev
            kept = [b for b in m.blocks if keeps(b, after)]
            if len(kept) < len(m.blocks):
                m = m.with_blocks(kept)
        prev = m
        for kind, blocks in rules.runs(m):
            if groups and rules.joins(groups[-1][0], groups[-1][1], kind):
                group = groups[-1]
                group[1].extend(blocks)
                if group[2][-1] is not m:
                    group[2].append(m)
                continue
            out.append(len(groups))
            groups.append((kind, list(blocks), [m]))
    used: set[int] = set()
    got: list[Message] = []
    parts = Counter(m.uid for _kind, _blocks, sources in groups for m in sources)
    for kind, blocks, sources in groups:
        before = got[-1] if got else None
        got.append(_message(kind, blocks, sources, before, rules, used, made, parts))
    return [got[x] if isinstance(x, int) else x for x in out]


def _message(
    kind: Hashable,
    blocks: list[Block],
    sources: list[Message],
    before: Message | None,
    rules: Rules,
    used: set[int],
    made: Collection[int],
    parts: Counter[int],
) -> Message:
    """The message of a group (`sources`: the messages its runs came from): the first
    source itself where the group is its blocks, else the first source with these blocks
    (or, for the second part of a message written apart, a copy of it under a uid of its
    own), a part of a message written apart (`parts`: the groups each source's runs went
    to) named by its own records (`Rules.part`), a group of several sources by the records
    of each (`_joined`); stamped with the time the file reads it back with where a fix made
    it."""
    role = str(kind[0] if isinstance(kind, tuple) else kind)
    blocks = rules.ordered(role, blocks)
    first = sources[0]
    m = first
    if not (
        len(sources) == 1
        and first.uid not in used
        and first.role == role
        and len(blocks) == len(first.blocks)
        and all(a is b for a, b in zip(blocks, first.blocks, strict=True))
    ):
        if first.uid not in used:
            m = first.with_blocks(blocks)
        else:  # the second part of a message the file writes apart
            m = replace(first, blocks=tuple(blocks), meta=dict(first.meta), uid=new_uid())
        if m.role != role:
            m = replace(m, role=role)
        if parts[first.uid] > 1 and rules.part is not None:
            m = rules.part(m, first)
        m = _joined(m, blocks, sources[1:], rules, parts)
    elif first.uid not in made:
        used.add(first.uid)
        return first  # as loaded, or as an earlier fix left it
    used.add(first.uid)
    t = rules.time(blocks, before) if blocks else None
    if t is not None and t != m.timestamp:
        m = m.with_timestamp(t)
    return m


def _joined(
    m: Message, blocks: list[Block], later: list[Message], rules: Rules, parts: Counter[int]
) -> Message:
    """`m`, a group's message, named also by the records of the `later` messages whose runs
    joined it (`Rules.merged`): each one's own, or where the file writes it apart, those of
    its part in this group (`Rules.part`; without it, the records its blocks here were read
    from)."""
    merged = rules.merged
    if merged is None:
        return m
    for s in later:
        if parts[s.uid] > 1:
            ids = {id(b) for b in s.blocks}
            here = [b for b in blocks if id(b) in ids]
            if rules.part is None:
                m = merged(m, s, here)
                continue
            s = rules.part(s.with_blocks(here), s)
        m = merged(m, s, None)
    return m


# -------------------------------------------------------------------- shared rules


def results_with_text(first: Message, second: Message, result_types: Collection[str]) -> bool:
    """Whether merging user message `second` into `first` would put tool results and other
    blocks in one message (a file that writes results as records of their own cannot)."""
    blocks = (*first.blocks, *second.blocks)
    return first.role == "user" and len({b.type in result_types for b in blocks}) > 1


def own(m: Message) -> Hashable:
    """The kind of a run that joins no other: the message's own."""
    return (m.role, m.uid)


def uses_after_results_first(role: str, blocks: list[Block]) -> list[Block]:
    """A user message's results first; an assistant message's tool calls after its other
    blocks (opencode, as the Anthropic provider groups a merged message)."""
    if role == "user":
        return [b for b in blocks if b.type == TOOL_RESULT] + [
            b for b in blocks if b.type != TOOL_RESULT
        ]
    return [b for b in blocks if b.type != TOOL_USE] + [b for b in blocks if b.type == TOOL_USE]
