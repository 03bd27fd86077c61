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

from ..model import THINKING_TYPES, TOOL_RESULT, Session
from ..wire import Request, SentBlock, SentMessage

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
    # the closing turn looks at Gemini CLI's history, where the model turns it leaves out of
    # each request (curated out) still are
    history = [
        (pos, m) for pos, m in enumerate(session.messages) if m.live or m.meta.get("curated_out")
    ]
    end_pos, end = history[-1] if history else (None, None)
    if (
        end_pos is not None
        and end is not None
        and end.live
        and end.role == "user"
        and any(b.type == TOOL_RESULT for b in end.blocks)
    ):
        closing = SentBlock({"type": "text", "text": INTERRUPTED})
        req.messages.append(SentMessage("assistant", [closing], []))
        req.added_after[end_pos] = "a closing model turn after unanswered responses"
    return req
