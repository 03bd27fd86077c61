"""What the tests of loaders whose blocks are made when read share: the same file's
messages made at load, to hold the lazy ones to, and what a check says of a session."""

from __future__ import annotations

from repair import analysis
from repair.model import Message, Session


def made_at_load(session: Session, lazy: type[Message]) -> Session:
    """`session` with each of its `lazy` messages made now: a plain `Message` of the same
    fields (its tool ids, shape and counts read from its blocks), the writer's loaded
    messages too."""
    made = [
        Message(m.role, m.blocks, m.raw, dict(m.meta), m.hidden, m.malformed, m.src, m.origin)
        if isinstance(m, lazy)
        else m
        for m in session.messages
    ]
    session.messages = made
    session.state.loaded = list(made)
    return session


def message_facts(m: Message) -> tuple:
    return (m.role, m.raw, m.hidden, m.malformed, m.src, m.meta, m.origin)


def found(session: Session, target: str) -> list:
    """The findings (with their positions, severities and client repairs), numbers and
    sent count of a check under `target`."""
    got = analysis.analyze(session, target)
    said = [(f.to_json(), f.position, f.severity, f.client_repair) for f in got.findings]
    return [*said, got.numbers, got.sent]
