"""`anthropic`: a JSON list of Messages API messages, or a request body `{model, messages}`.

Everything but `content` of an edited message is written back as it was: the other request
keys, unknown message keys, untouched messages byte for byte.
"""

from __future__ import annotations

from ..model import Session
from .anthropic_list import (
    classify,
    encode_entry,
    make_state,
    messages_from_entries,
    release,
    unchanged,
    write_document,
)
from .base import Adapter, Probe
from .registry import register


class AnthropicAdapter(Adapter):
    name = "anthropic"
    default_target = "anthropic"
    description = "Anthropic Messages API: a list of {role, content} or a request body"

    def detect(self, probe: Probe) -> int:
        if probe.kind != "json":
            return 0
        shape = classify(probe.doc)
        if shape.container not in ("list", "body") or not shape.entries or not shape.plausible:
            return 0
        if shape.openai_strong and not shape.anthropic_blocks:
            return 0  # an OpenAI Chat document: the openai-chat adapter reads it
        if shape.converse_blocks and not shape.anthropic_blocks:
            return 0  # Bedrock Converse blocks: the bedrock adapter reads it
        if shape.openai_weak and not shape.anthropic_blocks:
            # system/developer messages in the list and nothing only Anthropic has: OpenAI
            # Chat (Anthropic keeps `system` beside the messages), even in a request body
            return 10
        if shape.anthropic_blocks or shape.request_keys:
            return 60
        if shape.openai_weak:
            return 15
        return 40

    def load(self, probe: Probe) -> Session:
        shape = classify(probe.doc)
        release()
        prefix = "" if shape.container == "list" else "/messages"
        messages = messages_from_entries(shape.entries, prefix)
        return Session(
            path=probe.path,
            format=self.name,
            target=self.default_target,
            messages=messages,
            adapter=self,
            state=make_state(probe, shape.container, messages),
        )

    def dump(self, session: Session) -> bytes:
        state = session.state
        if unchanged(session):
            return state.data
        return write_document(state, [encode_entry(m) for m in session.messages])


register(AnthropicAdapter())
