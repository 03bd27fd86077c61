"""What an agent client sends: the request it builds from a session, emulated.

This is the one place that knows what a client does to a file's history when it sends it.
A client target (`repair.targets`, `base` set) declares here how its client turns the
messages histview built from the file (the client's own merges already applied by the
format's loader, so that the view is the client's) into the request: which blocks it leaves
out, which it adds (placeholder results, a closing turn), which ids it rewrites, which
messages it drops or merges. The emulation returns a `repair.wire.Request`, which the wire
shapes render (`histview messages --json`), number (messages.N) and which the analysis
reads: a finding is a warning with `client_repair` only where the request shows the client
really repairs it. One module per client, one line in `CLIENTS`. Measured against the real
clients (docs/clients.md, tests/fixtures/clients/, tests/data/gemini_cli/).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .. import targets
from ..model import Message, Session
from ..wire import Request


@dataclass(frozen=True)
class Client:
    target: str  # the client target's name (repair.targets)
    send: Callable[[Session], Request]
    # the request differs from the sent messages only where a finding's code declares a
    # repair by this client: without such a finding the analysis need not emulate it
    only_repairs: bool = True
    # what it sends for messages[start:stop] alone, where its sending starts afresh at an
    # assistant message it keeps (repair.incremental); None: only the whole is emulated
    send_part: Callable[[list[Message], int, int], Request] | None = None
    # what the analysis reads of `send`'s request (its numbering and repairs), counted
    # without building it (`Request.counted`); held to `send` by
    # tests/engine/test_light_sending.py. None: the analysis builds the request (as a whole
    # analysis does for a client with `send_part`: the next step's increment re-sends a
    # part of the request it holds)
    light: Callable[[Session], Request] | None = None
    # `light` of messages[start:stop] alone, where its sending starts afresh at both ends
    # and reads the others only through tool ids (repair.incremental splices it into the
    # counted request before a step, where every tool id of the stretch lies in it). None:
    # a step on a counted request is analysed whole
    light_part: Callable[[Session, int, int], Request] | None = None
    # whether its sending starts afresh at message k (no entry spans k-1 and k); None: at
    # every message
    afresh: Callable[[list[Message], int], bool] | None = None
    # its messages.N read from the messages' roles and whether they are sent, not their
    # blocks: a fix that drops or reorders blocks of messages, and drops none, leaves every
    # number as it is (repair.plan: a round's waiting fixes applied in the same round)
    numbers_by_message: bool = False


def _load() -> dict[str, Client]:
    from . import claude_code, codex, gemini_cli, opencode

    return {
        c.target: c
        for c in (
            Client(
                "claude-code",
                claude_code.send,
                send_part=claude_code.send_part,
                light=claude_code.light,
            ),
            # (it sends each rollout item as an entry of its own, where a message is several)
            Client(
                "codex",
                codex.send,
                only_repairs=False,
                light=codex.light,
                light_part=codex.light_part,
            ),
            Client("opencode", opencode.send, light=opencode.light),
            Client(
                "gemini-cli",
                gemini_cli.send,
                only_repairs=False,
                light=gemini_cli.light,
                light_part=gemini_cli.light_part,
                afresh=gemini_cli.afresh,
                numbers_by_message=True,
            ),
        )
    }


CLIENTS: dict[str, Client] | None = None


def get(target: str) -> Client | None:
    """The emulation of what a client target sends (None: a provider target)."""
    global CLIENTS
    if CLIENTS is None:
        declared = targets.BY_NAME.get(target)
        if declared is None or not declared.is_client:
            return None  # (a check under a provider target imports no client)
        CLIENTS = _load()
    return CLIENTS.get(target)
