"""What the provider receives: a session's sent messages rendered in the provider's wire shape.

One function per wire shape, each taking the sent messages (`sent`) and returning the list
the provider reads under `Wire.key` (Anthropic `messages`, Responses `input`, Gemini
`contents`, Bedrock Converse `messages`). `WIRES` maps each provider target to its shape; a
client target renders in the shape of the provider it sends to (`Target.rules`). Adding a
shape is one function and one line in `WIRES`.

The messages are the session's view: for a client format, the messages the client builds
from the file (its merges applied), before the repairs the client makes on its own (those are
findings with `client_repair`). Messages numbered here are the provider's `messages.N`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import clients, targets
from .model import Block, Message, Session


def sent(messages: list[Message]) -> list[Message]:
    """The messages the provider receives, in order (hidden and malformed ones are not)."""
    return [m for m in messages if m.live]


def _anthropic_block(b: Block) -> Any:
    return {"type": "text", "text": b.data} if isinstance(b.data, str) else b.data


def anthropic_messages(messages: list[Message]) -> list[dict]:
    """Anthropic Messages API `messages`: `{role, content}`; string content stays a string."""
    out = []
    for m in messages:
        blocks = m.blocks
        if len(blocks) == 1 and isinstance(blocks[0].data, str):
            content: Any = blocks[0].data
        else:
            content = [_anthropic_block(b) for b in blocks]
        out.append({"role": m.role, "content": content})
    return out


def sent_numbers(messages: list[Message]) -> list[int | None]:
    """messages.N of each message where the provider receives one wire message per sent
    message (Anthropic, Bedrock Converse): sent messages counted, the others None."""
    out: list[int | None] = []
    n = 0
    for m in messages:
        if m.live:
            out.append(n)
            n += 1
        else:
            out.append(None)
    return out


def row_numbers(messages: list[Message]) -> list[int | None]:
    """The fallback for shapes not declared here: each message's row."""
    return list(range(len(messages)))


@dataclass(frozen=True)
class Wire:
    key: str  # the request body key the list travels under
    render: Callable[[list[Message]], list] | None  # None: numbered, not rendered yet
    name: str  # in words, for --help and errors
    # messages.N of each message (by position in Session.messages; None: not sent)
    numbers: Callable[[list[Message]], list[int | None]] = sent_numbers


WIRES: dict[str, Wire] = {
    "anthropic": Wire("messages", anthropic_messages, "Anthropic Messages API `messages`"),
    "bedrock": Wire("messages", None, "Bedrock Converse `messages`"),
}


def wire_for(target: str) -> Wire | None:
    """The wire shape a target's requests travel in (None: not declared yet)."""
    return WIRES.get(targets.get(target).rules)


def numbers(messages: list[Message], target: str) -> list[int | None]:
    """messages.N of each message as the target's provider numbers it: for a client target
    whose sending is emulated, in the request the client builds (`repair.clients`)."""
    send = clients.sender(target)
    if send is not None:
        return send(messages).numbers(len(messages))
    return provider_numbers(messages, target)


def provider_numbers(messages: list[Message], target: str) -> list[int | None]:
    """messages.N as the target's provider numbers the messages as they are."""
    wire = wire_for(target)
    return (wire.numbers if wire is not None else row_numbers)(messages)


def request_body(session: Session, target: str | None = None) -> dict:
    """`{key: [...]}`: the part of the request body that carries the conversation; for a
    client target whose sending is emulated, as that client sends it."""
    target = target or session.target
    send = clients.sender(target)
    if send is not None:
        return {"messages": [m.wire() for m in send(session.messages).messages]}
    wire = wire_for(target)
    if wire is None or wire.render is None:
        raise KeyError(target)
    return {wire.key: wire.render(sent(session.messages))}
