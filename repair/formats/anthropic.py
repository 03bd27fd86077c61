"""`anthropic`: a JSON list of Messages API messages, or a request body `{model, messages}`.

Everything but `content` of an edited message is written back as it was: the other request
keys, unknown message keys, untouched messages byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..model import Session
from .anthropic_list import (
    classify,
    encode_entry,
    make_state,
    messages_from_entries,
    read_back_entries,
    record_changes,
    to_read_again,
    write_document,
    written_anew,
)
from .base import Adapter, Edited, Export, Probe
from .registry import register

if TYPE_CHECKING:
    from ..files import Spliced
    from ..records import RecordChange


class AnthropicAdapter(Adapter):
    name = "anthropic"
    default_target = "anthropic"

    def detect(self, probe: Probe) -> int:
        if probe.kind != "json":
            return 0
        shape = classify(probe)
        if shape.container not in ("list", "body") or not shape.entries or not shape.plausible:
            return 0
        if (shape.foreign_tools or shape.keyed_blocks) and not shape.anthropic_blocks:
            return 0  # tool turns or blocks written in a way Anthropic never writes them
        if shape.system_roles and not shape.anthropic_blocks:
            # system/developer messages in the list (Anthropic keeps `system` beside the
            # messages) and nothing only Anthropic has: barely this format
            return 10
        if shape.anthropic_blocks or shape.request_keys:
            return 60
        if shape.system_roles:
            return 15
        return 40

    def load(self, probe: Probe) -> Session:
        shape = classify(probe)
        prefix = "" if shape.container == "list" else "/messages"
        messages = messages_from_entries(shape.entries, prefix)
        return self.session(probe.path, messages, make_state(probe, shape.container, messages))

    def write(self, session: Session) -> Export:
        return Export(write_document(session.state, [encode_entry(m) for m in session.messages]))

    def record_changes(
        self,
        before: Session,
        after: Session,
        bytes_of: Callable[[Session], bytes] | None = None,
    ) -> list[RecordChange]:
        return record_changes(before, after)

    def read_back_edited(
        self, session: Session, data: bytes | Spliced | None = None
    ) -> Edited | None:
        if session.state.container not in ("list", "body"):
            return None
        positions = to_read_again(session, written_anew(session))
        return read_back_entries(session, positions, lambda messages, k: encode_entry(messages[k]))


register(AnthropicAdapter())
