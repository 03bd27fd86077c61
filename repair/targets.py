"""Targets: whoever reads the history next, and whose rules decide severities (docs/codes.md).

A provider target judges the raw history by the provider's own rules. A client target is an
agent client as released, judging the files of its own format (a client target is named
like the format): what it sends is judged by its provider's rules, and what it repairs on
its own is a warning. Each target is declared once here; what a finding code means under a
target is declared with the code (`repair.codes`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Target:
    name: str
    provider: str  # who answers the request, in words
    # Tool results travel as messages of their own (OpenAI `tool` messages, Responses
    # `function_call_output` items), so consecutive result messages are not a role repeat.
    # A client target has its base's (`separate_results`).
    results_apart: bool = False
    # A client target (an agent client as released) sends the history to `base`, a provider
    # target, after its own repairs: a code the client repairs is a warning
    # (`Code.client_repair`), any other code is judged as under `base`.
    base: str | None = None
    # What a tool id must be beyond a non-empty string (invalid-tool-id): a pattern the whole
    # id matches and a maximum length; None where the provider documents no limit.
    id_pattern: str | None = None
    id_max_length: int | None = None

    @property
    def is_client(self) -> bool:
        return self.base is not None

    @property
    def rules(self) -> str:
        """The provider target whose rules apply."""
        return self.base or self.name

    @property
    def separate_results(self) -> bool:
        return self.results_apart if self.base is None else get(self.base).results_apart


_DECLARED: tuple[Target, ...] = (
    # Anthropic: `tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'` (rule A6).
    Target(name="anthropic", provider="Anthropic API (1P, Vertex)", id_pattern=r"[a-zA-Z0-9_-]+"),
    # Bedrock Converse API reference, ToolUseBlock/ToolResultBlock toolUseId: length 1 to 64,
    # pattern `[a-zA-Z0-9_.:-]+` (older pages: `[a-zA-Z0-9_-]+`; the looser one is checked).
    Target(
        name="bedrock",
        provider="Amazon Bedrock Converse",
        id_pattern=r"[a-zA-Z0-9_.:-]+",
        id_max_length=64,
    ),
    Target(name="openai-chat", provider="OpenAI Chat Completions", results_apart=True),
    Target(name="openai-responses", provider="OpenAI Responses", results_apart=True),
    # A function-call turn is followed at once by one user turn holding one functionResponse
    # per functionCall (docs/formats.md, Gemini CLI).
    Target(name="gemini", provider="Google Gemini API"),
    # Agent clients as released: the request each builds from its own files is what the
    # provider sees (repair.clients emulates it; docs/clients.md has what was measured).
    Target(name="claude-code", provider="Claude Code 2.1.197 (Anthropic API)", base="anthropic"),
    Target(name="codex", provider="Codex CLI 0.169 (OpenAI Responses)", base="openai-responses"),
    Target(name="opencode", provider="opencode 1.18 (Anthropic API)", base="anthropic"),
    Target(name="gemini-cli", provider="Gemini CLI 0.61 (Google Gemini API)", base="gemini"),
)

BY_NAME: dict[str, Target] = {t.name: t for t in _DECLARED}
TARGETS: tuple[str, ...] = tuple(BY_NAME)


def get(name: str) -> Target:
    return BY_NAME[name]
