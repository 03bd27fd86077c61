"""What Gemini CLI 0.61 sends to the Gemini API when it resumes a chat.

The gemini-cli loader already builds the turns Gemini CLI makes of the chat
(`convertSessionToClientHistory`: each result twice, calls without ids paired by name, a run
of model turns holding an empty text part left out, `name__` prefixes cut). On top of that,
measured with the real client (docs/clients.md, tests/data/gemini_cli/requests.json):

- thought parts are not sent, and consecutive turns of one role are sent as one turn;
- a history that ends on a user turn holding function responses (in its history, where the
  model turns it leaves out of each request still are) gets a model turn
  "[The previous response was interrupted before it completed.]"
  (`closeUnansweredToolResponseTurn`), so that the new prompt is a turn of its own.

Nothing else is repaired: doubled responses, a call without a response, a response without
a call and a trailing call are sent as they are (and refused). What Gemini CLI adds itself
(its session context, the new prompt) is not part of this.
"""

from __future__ import annotations

from ..model import THINKING_TYPES, TOOL_RESULT, Message, Session
from ..wire import WIRES, Counted, Request, SentBlock, SentMessage

CLIENT = "Gemini CLI 0.61"
INTERRUPTED = "[The previous response was interrupted before it completed.]"


def send(session: Session) -> Request:
    req = Request(CLIENT, [], client=True)
    for pos, m in enumerate(session.messages):
        if not m.live:
            continue
        blocks = [
            SentBlock(b.data, b, b.type, b.tool_id, b.name)
            for b in m.blocks
            if b.type not in THINKING_TYPES
        ]
        role = m.role or "user"
        last = req.messages[-1] if req.messages else None
        if last is not None and last.role == role:
            last.blocks.extend(blocks)
            last.positions.append(pos)
        else:
            req.messages.append(SentMessage(role, blocks, [pos]))
    closed = _closed_after(session)
    if closed is not None:
        closing = SentBlock({"type": "text", "text": INTERRUPTED})
        req.messages.append(SentMessage("assistant", [closing], []))
        req.added_after[closed] = CLOSING
    return req


def light(session: Session) -> Request:
    """`send`'s request counted, not built (`Request.counted`): a message is sent in the
    turn of the live message before it when their roles match; the closing turn is one
    more. Nothing is left out or changed."""
    return light_part(session, 0, len(session.messages))


def light_part(session: Session, start: int, stop: int) -> Request:
    """`light` of `messages[start:stop]` alone, numbered from its first turn, where Gemini
    CLI's sending starts afresh at `start` and at `stop` (`afresh`: the turns before and
    after the stretch are not merged with it); the closing turn where the stretch ends the
    session (its position may lie before it)."""
    req = Request(CLIENT, [], client=True)
    messages = session.messages
    numbers: list[int | None] = [None] * (stop - start)
    n = 0
    role = None
    for pos, m in enumerate(messages[start:stop]):
        if not m.live:
            continue
        mine = m.role or "user"
        if mine != role:
            n += 1
            role = mine
        numbers[pos] = n - 1
    closed = _closed_after(session) if stop == len(messages) else None
    if closed is not None:
        n += 1
        req.added_after[closed] = CLOSING
    req.counted = Counted(WIRES["gemini"].split, numbers, n)
    return req


def afresh(messages: list[Message], k: int) -> bool:
    """Whether Gemini CLI sends message k in a turn of its own: it is live, and the live
    message before it (if any) is of another role; or k is the end."""
    if k >= len(messages):
        return True
    m = messages[k]
    if not m.live:
        return False
    for j in range(k - 1, -1, -1):
        before = messages[j]
        if before.live:
            return (before.role or "user") != (m.role or "user")
    return True


CLOSING = "a closing model turn after unanswered responses"


def _closed_after(session: Session) -> int | None:
    """Where Gemini CLI closes the history with its model turn: after a last message of
    responses. The closing turn looks at Gemini CLI's history, where the model turns it
    leaves out of each request (curated out) still are."""
    for pos in range(len(session.messages) - 1, -1, -1):
        m = session.messages[pos]
        if m.live or m.meta.get("curated_out"):
            # (a message whose tool ids hold no answer holds no result: its blocks not made)
            if (
                m.live
                and m.role == "user"
                and m.tool_ids()[1]
                and any(b.type == TOOL_RESULT for b in m.blocks)
            ):
                return pos
            return None
    return None
