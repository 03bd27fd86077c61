"""What an agent client sends: the request it builds from a session's messages, emulated.

A client target (`repair.targets`, `base` set) may declare here how its client turns the
messages histview built from the file (the client's merges already applied by the format's
loader) into the request: which blocks it leaves out, which it adds (placeholder results),
which messages it drops or merges. `send(session, target)` returns that request as
`ClientRequest`; `histview messages` shows it and numbers the messages by it, so messages.N
is the number the provider's errors use. One module per client, one line in `SENDS`.
Measured against the real clients (docs/clients.md, tests/fixtures/clients/).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..model import Block, Message


@dataclass(slots=True)
class SentBlock:
    data: Any  # the block as sent (Anthropic shape), or a str for string content
    block: Block | None = None  # the session's block it is; None: added by the client
    type: str = ""  # the block's type ("text" for string content)
    tool_id: str | None = None  # tool_use.id / tool_result.tool_use_id

    def __post_init__(self) -> None:
        if self.type:
            return
        if self.block is not None:
            self.type, self.tool_id = self.block.type, self.block.tool_id
            return
        d = self.data
        if isinstance(d, str):
            self.type = "text"
        elif isinstance(d, dict):
            t = d.get("type")
            self.type = t if isinstance(t, str) else "unknown"
            v = d.get("id") if t == "tool_use" else d.get("tool_use_id")
            self.tool_id = v if isinstance(v, str) else None


@dataclass(slots=True)
class SentMessage:
    role: str
    blocks: list[SentBlock]
    positions: list[int]  # the session messages (indexes in Session.messages) it is made of

    @property
    def string_content(self) -> bool:
        return len(self.blocks) == 1 and isinstance(self.blocks[0].data, str)

    def wire(self) -> dict:
        if self.string_content:
            return {"role": self.role, "content": self.blocks[0].data}
        content = [
            {"type": "text", "text": b.data} if isinstance(b.data, str) else b.data
            for b in self.blocks
        ]
        return {"role": self.role, "content": content}


@dataclass
class ClientRequest:
    client: str  # the client, in words ("Claude Code 2.1.197")
    messages: list[SentMessage]
    # blocks of the session the client does not send: (position, block, why)
    left_out: list[tuple[int, Block, str]] = field(default_factory=list)
    # tool_use ids the client answers with a placeholder result of its own
    answered: set[str] = field(default_factory=set)
    _gone: set[int] | None = None

    def repairs(self, block: Block | None) -> bool:
        """The client does not send this block as it is: it leaves it out, or (a call)
        answers it with a placeholder of its own."""
        if block is None:
            return False
        if self._gone is None:
            self._gone = {id(b) for _, b, _ in self.left_out}
        return id(block) in self._gone or (
            block.is_tool_use and block.tool_id is not None and block.tool_id in self.answered
        )

    def numbers(self, count: int) -> list[int | None]:
        """messages.N of each session message (by position): the request message its first
        sent block lands in; None for a message the client does not send at all."""
        out: list[int | None] = [None] * count
        for n, sm in enumerate(self.messages):
            for p in sm.positions:
                if out[p] is None:
                    out[p] = n
        return out


def _load() -> dict[str, Callable[[list[Message]], ClientRequest]]:
    from . import claude_code

    return {"claude-code": claude_code.send}


SENDS: dict[str, Callable[[list[Message]], ClientRequest]] | None = None


def sender(target: str) -> Callable[[list[Message]], ClientRequest] | None:
    """The emulation of what a client target sends (None: not declared)."""
    global SENDS
    if SENDS is None:
        SENDS = _load()
    return SENDS.get(target)
