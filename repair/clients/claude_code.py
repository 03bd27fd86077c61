"""What Claude Code 2.1.197 sends on resume, from the messages the claude-code loader built.

The loader already applies what Claude Code does in normal operation (the parentUuid walk,
parallel-result recovery, `message.id` merges across tool results, user merges with results
first, dropping blank/thinking-only/API-error records). On top of that Claude Code repairs
pairing faults and empty text on its own, each time it resumes, in three steps read from its
bundled source and checked against its real requests (docs/clients.md):

1. on resume (`filterUnresolvedToolUses`): an assistant record whose tool_use blocks all have
   no tool_result anywhere is dropped; user messages left next to each other merge;
2. before each request (`ensureToolResultPairing`): tool_results in a user message that does
   not follow an assistant message are dropped (a first message left empty says "[Orphaned
   tool result removed due to conversation resume]"); a tool_use id seen before is dropped
   (an assistant message left empty says "[Tool use interrupted]"); each assistant message
   is checked against the next message only: a call without a result there gets
   "[Tool result missing due to internal error]" (is_error) put first, a result that
   answers no call of that message and a second result for one are dropped, a user message
   left empty becomes "(no content)";
3. when a user message is put on the wire: its empty and whitespace-only text blocks are
   left out ("(no content)" when nothing is left). String content is sent as it is.

What Claude Code adds itself at the end (the "Continue from where you left off." note, the
"No response requested." sentinel, the new prompt, system reminders) is not part of this.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import chain
from typing import Any

from ..gcpause import gc_paused
from ..model import TOOL_RESULT, TOOL_USE, Block, Message, Session
from ..pairing import repeated_ids
from ..wire import WIRES, Counted, Request, SentBlock, SentMessage

CLIENT = "Claude Code 2.1.197"
MISSING = "[Tool result missing due to internal error]"
ORPHANED_FIRST = "[Orphaned tool result removed due to conversation resume]"
USE_INTERRUPTED = "[Tool use interrupted]"
USE_REMOVED = "[Tool use removed]"
NO_CONTENT = "(no content)"

THINKING = ("thinking", "redacted_thinking")


def _added(text: str) -> SentBlock:
    return SentBlock({"type": "text", "text": text})


def send(session: Session) -> Request:
    with gc_paused():  # one object per block of a large session: no cycles to collect
        return _send(session.messages)


def send_part(messages: list[Message], start: int, stop: int) -> Request:
    """What Claude Code sends for `messages[start:stop]` as if the session held only them
    (positions stay the session's): repair.incremental splices it into the request of the
    state before a step, between two messages where the sending starts afresh."""
    with gc_paused():
        return _send(messages, start, stop)


def _send(messages: list[Message], start: int = 0, stop: int | None = None) -> Request:
    req = Request(CLIENT, [], client=True)
    msgs = [
        SentMessage(m.role or "user", _user_joined(m), [pos])
        if m.role == "user"
        else SentMessage(m.role or "user", _sent(m), [pos])
        for pos, m in enumerate(messages[start:stop], start)
        if m.live
    ]
    msgs = _drop_unresolved_calls(msgs, req)
    msgs = _pair_results(msgs, req)
    req.messages = [_user_wire(m, req) if m.role == "user" else m for m in msgs]
    return req


def _sent(m: Message) -> list[SentBlock]:
    """Its blocks as sent (each SentBlock given the block's type, id and name: none left
    for `SentBlock.__post_init__` to read)."""
    return [SentBlock(b.data, b, b.type, b.tool_id, b.name) for b in m.blocks]


def _user_joined(m: Message) -> list[SentBlock]:
    """A user message merged from several records: where one record ends with text and the
    next starts with text, Claude Code ends the first text with a newline."""
    out = _sent(m)
    if _nothing_to_join(m):
        return out
    recs: list[object] = []
    for b in m.blocks:
        if b.origin not in recs:
            recs.append(b.origin)
    if len(recs) < 2:
        return out
    order = {r: k for k, r in enumerate(recs)}
    by_rec: dict[object, list[SentBlock]] = {}
    for b, sb in zip(m.blocks, out, strict=True):
        by_rec.setdefault(b.origin, []).append(sb)
    acc: list[SentBlock] = []
    for r in sorted(by_rec, key=order.__getitem__):
        acc = _merged_users(acc, by_rec[r])
    return out


def _nothing_to_join(m: Message) -> bool:
    """No text to join and no string content to make a block of: merging its records one by
    one changes nothing (the usual merge, of parallel results)."""
    return not any(b.type == "text" or isinstance(b.data, str) for b in m.blocks)


def _merged_users(first: list[SentBlock], then: list[SentBlock]) -> list[SentBlock]:
    """Claude Code's merge of two user messages: a text ending the first and a text opening
    the second are joined by a newline at the end of the first; tool_results go first."""
    for sb in (*first, *then):
        if isinstance(sb.data, str):  # merged content is a list
            sb.data = {"type": "text", "text": sb.data}
    if first and then and first[-1].type == "text" and then[0].type == "text":
        d = first[-1].data
        text = d.get("text", "") if isinstance(d, dict) else None
        if isinstance(text, str):  # a text that is not a string is sent as it is (refused)
            first[-1].data = {**d, "text": text + "\n"}
    both = first + then
    return [b for b in both if b.type == TOOL_RESULT] + [b for b in both if b.type != TOOL_RESULT]


def _drop_unresolved_calls(msgs: list[SentMessage], req: Request) -> list[SentMessage]:
    resolved = {b.tool_id for m in msgs for b in m.blocks if b.type == TOOL_RESULT}
    out: list[SentMessage] = []
    for m in msgs:
        if m.role == "assistant" and not _all_resolved(m, resolved):
            gone = _dropped_on_resume(m.blocks, resolved, m.positions[0], req, _own_sent)
            if gone:
                m = SentMessage(m.role, [b for b in m.blocks if id(b) not in gone], m.positions)
                if not m.blocks:
                    continue
        if out and m.role == "user" and out[-1].role == "user":
            prev = out[-1]
            blocks = _merged_users(prev.blocks, m.blocks)
            out[-1] = SentMessage("user", blocks, prev.positions + m.positions)
            continue
        out.append(m)
    return out


def _dropped_on_resume(
    blocks: Sequence[Any],
    resolved: set[str | None],
    position: int,
    req: Request,
    own: Callable[[Any], Block | None],
) -> set[int]:
    """The blocks (their ids) of the records of an assistant message whose calls all have
    no result anywhere: Claude Code drops those records on resume; each noted as left out
    (`own`: the session's block a sent block is, None for one the client added)."""
    by_record: dict[object, list[Any]] = {}
    for b in blocks:
        block = own(b)
        by_record.setdefault(block.origin if block is not None else None, []).append(b)
    gone: set[int] = set()
    for group in by_record.values():
        uses = [b.tool_id for b in group if b.type == TOOL_USE]
        if uses and all(u not in resolved for u in uses):
            for b in group:
                gone.add(id(b))
                block = own(b)
                if block is not None:
                    req.left_out.append(
                        (position, block, "dropped on resume: a call with no result anywhere")
                    )
    return gone


def _all_resolved(m: SentMessage, resolved: set[str | None]) -> bool:
    """Every call of the message has a result somewhere: it loses none on resume."""
    return all(b.tool_id in resolved for b in m.blocks if b.type == TOOL_USE)


# An assistant message that keeps every block is sent as the same SentMessage (False: a new
# one, as the long way made it; tests/engine/test_claude_code_sending_fast.py)
_KEEP_WHOLE = True


def _between_thinking(blocks: list[SentBlock], k: int) -> bool:
    return (
        k > 0
        and k + 1 < len(blocks)
        and blocks[k - 1].type in THINKING
        and blocks[k + 1].type in THINKING
    )


def _pair_results(msgs: list[SentMessage], req: Request) -> list[SentMessage]:
    out: list[SentMessage] = []
    seen_uses: set[str | None] = set()
    i = 0
    while i < len(msgs):
        m = msgs[i]
        if m.role != "assistant":
            array = not m.string_content
            if m.role == "user" and array and (not out or out[-1].role != "assistant"):
                kept = [b for b in m.blocks if b.type != TOOL_RESULT]
                if len(kept) != len(m.blocks):
                    for b in m.blocks:
                        if b.type == TOOL_RESULT and b.block is not None:
                            req.left_out.append(
                                (m.positions[0], b.block, "a result not right after a call")
                            )
                    if kept:
                        out.append(SentMessage("user", kept, m.positions))
                    elif not out:
                        out.append(SentMessage("user", [_added(ORPHANED_FIRST)], m.positions))
                    i += 1
                    continue
            out.append(m)
            i += 1
            continue
        # an assistant message
        calls: list[str | None] = []
        blocks: list[SentBlock] = []
        same = True  # every block kept as it is (the message is sent as it came)
        for k, b in enumerate(m.blocks):
            if b.type == TOOL_USE:
                tid = b.tool_id
                if tid in seen_uses:
                    same = False
                    if b.block is not None:
                        req.left_out.append(
                            (m.positions[0], b.block, "a tool_use id already used earlier")
                        )
                    if _between_thinking(m.blocks, k):
                        blocks.append(_added(USE_REMOVED))
                    continue
                seen_uses.add(tid)
                calls.append(tid)
            blocks.append(b)
        if not blocks:
            blocks = [_added(USE_INTERRUPTED)]
            same = False
        out.append(m if same and _KEEP_WHOLE else SentMessage("assistant", blocks, m.positions))
        nxt = msgs[i + 1] if i + 1 < len(msgs) else None
        found: list[str | None] = []
        dup = False
        if nxt is not None and nxt.role == "user" and not nxt.string_content:
            for b in nxt.blocks:
                if b.type == TOOL_RESULT:
                    tid = b.tool_id
                    dup = dup or tid in found
                    if tid not in found:
                        found.append(tid)
        missing = [c for c in calls if c not in found]
        stray = {r for r in found if r not in calls}
        if not missing and not stray and not dup:
            i += 1
            continue
        placeholders = [
            SentBlock({"type": TOOL_RESULT, "tool_use_id": c, "content": MISSING, "is_error": True})
            for c in missing
        ]
        req.answered.update(c for c in missing if c is not None)
        if nxt is not None and nxt.role == "user":
            content = list(nxt.blocks)
            if stray or dup:
                content = _answers_kept(content, stray, nxt.positions[0], req, _own_sent)
            content = placeholders + content
            if content:
                out.append(SentMessage("user", content, nxt.positions))
            else:
                out.append(SentMessage("user", [SentBlock(NO_CONTENT)], nxt.positions))
            i += 2
            continue
        if placeholders:
            out.append(SentMessage("user", placeholders, []))
        i += 1
    return out


def _answers_kept(
    content: list[Any],
    stray: set[str | None],
    position: int,
    req: Request,
    own: Callable[[Any], Block | None],
) -> list[Any]:
    """The user message's blocks without the results for no call of the message before
    (`stray`) and the second result for one call, each noted as left out (`own`: the
    session's block a sent block is, None for one the client added)."""
    kept = []
    taken: set[str | None] = set()
    for b in content:
        if b.type == TOOL_RESULT:
            tid = b.tool_id
            if tid in stray or tid in taken:
                block = own(b)
                if block is not None:
                    why = (
                        "a second result for one call"
                        if tid in taken
                        else "a result for no call of the message before"
                    )
                    req.left_out.append((position, block, why))
                continue
            taken.add(tid)
        kept.append(b)
    return kept


def _own_sent(b: SentBlock) -> Block | None:
    return b.block


def _own_light(b: Any) -> Block | None:
    return None if type(b) is _Added else b


def _user_wire(m: SentMessage, req: Request) -> SentMessage:
    if m.string_content:
        return m
    kept = []
    for b in m.blocks:
        if b.type != "text":
            kept.append(b)
            continue
        d = b.data
        text = d if isinstance(d, str) else d.get("text") if isinstance(d, dict) else None
        if not (isinstance(text, str) and text.strip()):
            if b.block is not None:
                req.left_out.append((m.positions[0], b.block, "an empty text block"))
            continue
        kept.append(b)
    if len(kept) == len(m.blocks):
        return m
    return SentMessage("user", kept or [_added(NO_CONTENT)], m.positions)


# ---------------------------------------------------------------- counted, not built


class _Added:
    """A block Claude Code adds itself, as `light` counts it: a text of its own or a
    placeholder result (never blank, never reported as left out)."""

    __slots__ = ("type", "tool_id")

    def __init__(self, btype: str, tool_id: str | None = None) -> None:
        self.type, self.tool_id = btype, tool_id


# A message as `light` follows it: (role, its blocks (the session's, or `_Added`; a session
# message sent as it is: the message, whose blocks are read only where a step needs them),
# positions, its calls' ids, its results' ids, how many blocks)
_Light = tuple[Any, ...]


def light(session: Session) -> Request:
    """`send`'s request counted, not built (`Request.counted`): the same three steps over
    the session's own blocks, without a `SentBlock` or `SentMessage` each: what the
    analysis reads (each message's number, the entries in all, what Claude Code leaves out
    and the calls it answers) is the same (tests/engine/test_light_sending.py). A message
    is read by its tool ids, shape and block counts (`Message.tool_ids`, `plain_shape`,
    `block_counts`) where no step changes it, so blocks a loader makes when read are made
    only where one does."""
    with gc_paused():
        return _light(session.messages)


def _blocks(x: Any) -> Any:
    return x.blocks if isinstance(x, Message) else x


def _entry(role: str, blocks: list[Any], positions: tuple[int, ...]) -> _Light:
    """A message `light` follows, of these blocks."""
    calls = [b.tool_id for b in blocks if b.type == TOOL_USE]
    return (role, blocks, positions, calls, _result_ids(blocks), len(blocks))


def _result_ids(blocks: Sequence[Any]) -> list[str | None]:
    return [b.tool_id for b in blocks if b.type == TOOL_RESULT]


def _light(messages: list[Message]) -> Request:
    req = Request(CLIENT, [], client=True)
    # blocks of string content a merge made a text block of (`_merged_users`): a message
    # of one such block is no longer sent as a string
    made_text: set[int] = set()
    msgs: list[_Light] = []
    answered: list[Sequence[str | None]] = []  # each entry's results' ids (non-empty)
    asked: list[int] = []  # the entries of assistant messages with calls, not usual turns
    joined: list[int] = []  # the entries of user messages right after a user message
    every_call: list[str | None] = []
    append = msgs.append
    before = None  # the role of the entry before
    for pos, m in enumerate(messages):
        if m.hidden or m.malformed is not None:  # (`Message.live`)
            continue
        got = m._tool_ids  # (`Message.tool_ids`: made once)
        calls, answers = m.tool_ids() if got is None else got
        count, n_results = m.block_counts()
        # its results' ids: its answers, unless a block of another type answers a call
        results = answers if len(answers) == n_results else _result_ids(m.blocks)
        if results:
            answered.append(results)
        role = m.role
        if role == "assistant":
            if calls:
                asked.append(len(msgs))
                every_call += calls
        elif (
            role == "user"
            and len(results) != count  # (results alone: nothing to join)
            and not _nothing_to_join(m)
            and _of_records(m.blocks)
        ):
            made_text.update(id(b) for b in m.blocks if isinstance(b.data, str))  # `_user_joined`
        role = role or "user"
        if role == "user":
            if before == "user":
                joined.append(len(msgs))
            elif before == "assistant" and results and _answers_all(msgs[-1][3], results):
                asked.pop()  # the usual turn: the message after the calls answers them all
        before = role
        append((role, m, (pos,), calls, results, count))
    # (`_drop_unresolved_calls`: of the set of every result's id, it reads whether it holds
    # the calls of the entries it looks at: the entries of `asked` and `joined`, and the one
    # after each in `_light_drop_unresolved`; so the set is made of those calls only)
    if asked or joined:
        looked = {c for k in (*asked, *joined) for e in msgs[k : k + 2] for c in e[3]}
        resolved = looked.intersection(chain.from_iterable(answered))
        dropping = [k for k in asked if not resolved.issuperset(msgs[k][3])]
        if dropping or joined:
            msgs = _light_drop_unresolved(msgs, req, made_text, resolved, sorted(dropping + joined))
    msgs = _light_pair_results(msgs, req, made_text, repeated_ids(every_call)[0])
    numbers: list[int | None] = [None] * len(messages)
    for n, e in enumerate(msgs):
        for p in e[2]:
            if numbers[p] is None:
                numbers[p] = n
        x = e[1]
        if e[0] != "user" or (isinstance(x, Message) and x.plain_shape()):
            continue  # (a plain message holds no blank text)
        blocks = _blocks(x)
        if not _light_string(blocks, made_text):
            _light_user_wire(blocks, e[2], req)
    req.counted = Counted(WIRES["anthropic"].split, numbers, len(msgs))
    return req


def _of_records(blocks: tuple[Block, ...]) -> bool:
    """Its blocks come from more than one record (`_user_joined`'s `recs`)."""
    first = blocks[0].origin if blocks else None
    return any(b.origin is not first and b.origin != first for b in blocks)


def _light_string(blocks: list[Any], made_text: set[int]) -> bool:
    """`SentMessage.string_content`."""
    if len(blocks) != 1:
        return False
    b = blocks[0]
    return type(b) is not _Added and isinstance(b.data, str) and id(b) not in made_text


def _light_merged(first: list[Any], then: list[Any], made_text: set[int]) -> list[Any]:
    """`_merged_users`, counted: string content made text, tool_results first (the
    newline it adds to a text never makes a blank text sendable, nor the reverse)."""
    both = [*first, *then]
    made_text.update(id(b) for b in both if type(b) is not _Added and isinstance(b.data, str))
    return [b for b in both if b.type == TOOL_RESULT] + [b for b in both if b.type != TOOL_RESULT]


def _light_drop_unresolved(
    msgs: list[_Light],
    req: Request,
    made_text: set[int],
    resolved: set[str | None],
    spots: list[int],
) -> list[_Light]:
    """`_drop_unresolved_calls`, counted (`resolved`: the ids of every result). Only the
    entries at `spots` (an assistant message with a call that has no result anywhere, a
    user message right after a user message) and the entry after each can change: the
    others are kept as they are, in runs."""
    out: list[_Light] = []
    start = 0
    for k in spots:
        if k > start:
            out += msgs[start:k]
            start = k
        for m in msgs[start : k + 2]:  # (the spot read as the entry after one: the rest)
            _light_drop_step(m, out, req, made_text, resolved)
        start = k + 2
    out += msgs[start:]
    return out


def _light_drop_step(
    m: _Light, out: list[_Light], req: Request, made_text: set[int], resolved: set[str | None]
) -> None:
    """`_light_drop_unresolved` of one entry: put into `out`, changed, or left out."""
    role, positions, calls = m[0], m[2], m[3]
    if calls and role == "assistant" and not resolved.issuperset(calls):
        blocks = _blocks(m[1])
        gone = _dropped_on_resume(blocks, resolved, positions[0], req, _own_light)
        if gone:
            blocks = [b for b in blocks if id(b) not in gone]
            if not blocks:
                return
            m = _entry(role, blocks, positions)
    if out and role == "user" and out[-1][0] == "user":
        prev = out[-1]
        merged = _light_merged(_blocks(prev[1]), _blocks(m[1]), made_text)
        out[-1] = _entry("user", merged, prev[2] + positions)
        return
    out.append(m)


def _answers_all(calls: Sequence[str | None], results: Sequence[str | None]) -> bool:
    """There are calls, and each is answered by one of these results (in the usual turn:
    each once, in order)."""
    return results == calls or bool(calls) and set(results).issuperset(calls)


def _answers_each(calls: Sequence[str | None], found: Sequence[str | None]) -> bool:
    """The results of the message after a call message answer each of its calls once and
    nothing else: `_pair_results` sends both as they are."""
    if found == calls:
        return True
    answers = set(found)
    return len(answers) == len(found) and answers == set(calls)


def _pairing_spots(msgs: list[_Light], repeated: set[str | None]) -> list[int]:
    """The entries `_light_pair_results` may change (it keeps the others as they are): an
    assistant message without blocks, with a call whose id is `repeated` (in the calls of
    the session's assistant messages), or whose calls the next message does not answer each
    once; a user message holding results that does not follow an assistant message."""
    spots: list[int] = []
    n = len(msgs)
    before = None
    for i, m in enumerate(msgs):
        role = m[0]
        if role == "assistant":
            calls = m[3]
            if not m[5] or (repeated and not repeated.isdisjoint(calls)):
                spots.append(i)
            else:
                nxt = msgs[i + 1] if i + 1 < n else None
                found = nxt[4] if nxt is not None and nxt[0] == "user" else ()
                if found != calls and not _answers_each(calls, found):
                    spots.append(i)
        elif role == "user" and m[4] and before != "assistant":
            spots.append(i)
        before = role
    return spots


def _light_pair_results(
    msgs: list[_Light], req: Request, made_text: set[int], repeated: set[str | None]
) -> list[_Light]:
    """`_pair_results`, counted. (A string content is no tool_result: a user message's
    results are read without asking whether it is sent as a string.) Only the entries
    `_pairing_spots` finds are read one by one: the others are kept as they are, in runs.
    The calls seen so far are those of the entries read (a call whose id is not `repeated`
    is in no other entry: none asks whether it was seen)."""
    out: list[_Light] = []
    seen_uses: set[str | None] = set()
    start = 0
    for k in _pairing_spots(msgs, repeated):
        if k < start:
            continue  # (the user message a call message before took)
        out += msgs[start:k]
        start = _light_pair_step(msgs, k, out, seen_uses, req)
    out += msgs[start:]
    return out


def _light_pair_step(
    msgs: list[_Light], i: int, out: list[_Light], seen_uses: set[str | None], req: Request
) -> int:
    """`_light_pair_results` of the entry at `i` (and of the user message after it, where
    a call message takes it): put into `out`; returns the index of the next entry."""
    m = msgs[i]
    role, positions = m[0], m[2]
    if role != "assistant":
        if role == "user" and m[4] and (not out or out[-1][0] != "assistant"):
            blocks = _blocks(m[1])
            kept = [b for b in blocks if b.type != TOOL_RESULT]
            for b in blocks:
                if b.type == TOOL_RESULT and type(b) is not _Added:
                    req.left_out.append((positions[0], b, "a result not right after a call"))
            if kept:
                out.append(_entry("user", kept, positions))
            elif not out:
                out.append(_entry("user", [_Added("text")], positions))
            return i + 1
        out.append(m)
        return i + 1
    calls = m[3]
    if (
        not m[5]
        or not seen_uses.isdisjoint(calls)
        or (len(calls) > 1 and len(set(calls)) < len(calls))
    ):
        blocks = _blocks(m[1])
        calls = []
        sent: list[Any] = []
        for k, b in enumerate(blocks):
            if b.type == TOOL_USE:
                tid = b.tool_id
                if tid in seen_uses:
                    if type(b) is not _Added:
                        req.left_out.append((positions[0], b, "a tool_use id already used earlier"))
                    if _between_thinking(blocks, k):
                        sent.append(_Added("text"))
                    continue
                seen_uses.add(tid)
                calls.append(tid)
            sent.append(b)
        m = _entry("assistant", sent or [_Added("text")], positions)
    else:  # every block sent as it is
        seen_uses.update(calls)
    out.append(m)
    nxt = msgs[i + 1] if i + 1 < len(msgs) else None
    found = nxt[4] if nxt is not None and nxt[0] == "user" else ()
    if found == calls:  # (each call answered once, in order)
        return i + 1
    dup = False
    if len(set(found)) < len(found):
        dup = True
        found = list(dict.fromkeys(found))
    missing = [c for c in calls if c not in found]
    stray = {r for r in found if r not in calls}
    if not missing and not stray and not dup:
        return i + 1
    placeholders: list[Any] = [_Added(TOOL_RESULT, c) for c in missing]
    req.answered.update(c for c in missing if c is not None)
    if nxt is not None and nxt[0] == "user":
        content = list(_blocks(nxt[1]))
        if stray or dup:
            content = _answers_kept(content, stray, nxt[2][0], req, _own_light)
        content = placeholders + content
        out.append(_entry("user", content or [_Added("text")], nxt[2]))
        return i + 2
    if placeholders:
        out.append(_entry("user", placeholders, ()))
    return i + 1


def _light_user_wire(blocks: list[Any], positions: list[int], req: Request) -> None:
    """`_user_wire`, counted: its empty text blocks left out (the message is sent all the
    same, "(no content)" when nothing is left)."""
    for b in blocks:
        if b.type != "text" or type(b) is _Added:
            continue
        d = b.data
        text = d if isinstance(d, str) else d.get("text") if isinstance(d, dict) else None
        if not (isinstance(text, str) and text.strip()):
            req.left_out.append((positions[0], b, "an empty text block"))
