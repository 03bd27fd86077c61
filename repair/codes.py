"""Finding codes: each declared once, with everything the engine and the commands derive from it.

A `Code` holds its severity and rule id per target, the fix actions (default first), why the
`none` action changes nothing, and how findings group into one fix. Analysis, planning,
`explain`, `--help` and docs/codes.md read these declarations; the fix builders register per
(code, action) in `repair.plan`. Adding a code is one declaration here, one place in
`repair.analysis` that finds it, and one builder per action.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum, StrEnum

from . import targets


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        """0 for the worst: sorts error, warning, info."""
        return _RANK[self]


_RANK = {s: i for i, s in enumerate(Severity)}  # declared worst first

NONE = "none"  # the action that changes nothing
ANY = "*"  # the severity under every target not named


class Group(Enum):
    """Which findings of one code a single fix answers together."""

    MESSAGE = "message"  # all findings in the same message
    CALL_MESSAGE = "call-message"  # all results of calls made in the same assistant message
    CALL = "call"  # all results of the same tool_use


@dataclass(frozen=True, kw_only=True)
class Code:
    name: str
    summary: str  # what it means, one sentence (docs, --help)
    severity: Mapping[str, Severity]  # target -> severity; ANY for the rest
    rule: Mapping[str, str] = field(default_factory=dict)  # target -> the rule it breaks
    # Severity when the analysis marks the finding lenient: the target accepts this variant
    # (results split over consecutive user messages, which Anthropic merges).
    lenient: Mapping[str, Severity] = field(default_factory=dict)
    actions: tuple[str, ...] = (NONE,)  # default first
    actions_by_target: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    none_reason: str = "left as it is."
    group: Group | None = None  # None: one fix per finding
    pairing: bool = False  # a tool_use/tool_result pairing fault
    # client target -> what that client sends instead when it meets this fault, one sentence
    # (the finding is then a warning under that target: the request is not refused).
    client_repair: Mapping[str, str] = field(default_factory=dict)
    blocks_export: bool = False  # no file is written while a finding of this code remains
    about_time: bool = False  # evidence read from timestamps (the TUI marks the row's time)
    travel: bool = False  # a result stamped before its call (the TUI draws its lane apart)
    # the provider's 400 texts a finding of this code leads to (`histview explain`'s rule
    # ids, repair/explain.py RULES)
    explains: tuple[str, ...] = ()
    counted: tuple[str, str] | None = None  # how one and several are named in a summary

    def severity_for(
        self, target: str, *, lenient: bool = False, repaired: bool | None = None
    ) -> Severity:
        """`repaired`: the client target repairs this finding when it sends (None: as
        declared, for every finding of the code)."""
        base = self._severity(target, lenient)
        if target in self.client_repair if repaired is None else repaired:
            # the client sends something the provider accepts: at most a warning
            return base if base is Severity.INFO else Severity.WARNING
        return base

    def _severity(self, target: str, lenient: bool) -> Severity:
        for name in (target, targets.get(target).rules):
            if lenient and name in self.lenient:
                return self.lenient[name]
            if name in self.severity:
                return self.severity[name]
        return self.severity[ANY]

    def rule_for(self, target: str) -> str | None:
        return self.rule.get(target) or self.rule.get(targets.get(target).rules)

    def repair_by_client(self, target: str) -> str | None:
        """What the client target sends instead of this fault (None: it sends it as is)."""
        return self.client_repair.get(target)

    def actions_for(self, target: str) -> tuple[str, ...]:
        for name in (target, targets.get(target).rules if target in targets.BY_NAME else target):
            if name in self.actions_by_target:
                return self.actions_by_target[name]
        return self.actions


_E, _W, _I = Severity.ERROR, Severity.WARNING, Severity.INFO

# What each client sends in place of a fault, measured with the real clients
# (docs/clients.md). Each is a warning under that client target: the request is accepted.
_CODEX_ABORTED = (
    'Codex sends the output "aborted" for this call each time it resumes; fix it to record '
    "the interruption in the file."
)
_OPENCODE_INTERRUPTED = (
    'opencode sends the error result "[Tool execution was interrupted]" for this call each '
    "time it resumes; fix it to record the interruption in the file."
)

_DECLARED: tuple[Code, ...] = (
    Code(
        name="orphan-tool-use",
        explains=("A1", "A1-old", "B1", "O1", "R1", "G3", "G1", "CC"),
        counted=("call with no result", "calls with no result"),
        summary="a tool_use with no tool_result anywhere, and its message is not the last one",
        severity={ANY: _E},
        rule={
            "anthropic": "anthropic/tool-use-without-result",
            "bedrock": "bedrock/tool-results-in-next-message",
            "openai-chat": "openai/tool-calls-need-responses",
            "openai-responses": "openai-responses/function-call-needs-output",
            "gemini": "gemini/function-response-count",
        },
        actions=("insert-result", "drop-tool-use"),
        group=Group.MESSAGE,
        pairing=True,
        client_repair={
            "claude-code": (
                "Claude Code 2.1.197 leaves this unanswered call out of what it sends each time "
                "it resumes (the model never sees it was made); fix it to keep the call with a "
                "result."
            ),
            "codex": _CODEX_ABORTED,
            "opencode": _OPENCODE_INTERRUPTED,
        },
    ),
    Code(
        name="pending-tool-use",
        explains=("R1", "G3"),
        counted=("call still waiting at the end", "calls still waiting at the end"),
        summary="the last message is an assistant message whose tool_use blocks have no result",
        # Responses refuses a call without an output even at the end ("No tool output found
        # for function call"); Gemini: the next prompt follows the call turn without its
        # responses. The others accept a history that ends on a call.
        severity={"openai-responses": _E, "gemini": _E, ANY: _W},
        rule={
            "openai-responses": "openai-responses/function-call-needs-output",
            "gemini": "gemini/function-response-count",
        },
        # LiteLLM, Codex and the Vercel AI SDK all answer a dangling call before they send.
        actions=("insert-result", NONE),
        none_reason="left for the agent, which must answer the call before it sends anything else.",
        group=Group.MESSAGE,
        client_repair={
            "claude-code": (
                "Claude Code 2.1.197 leaves this unanswered call out of what it sends when it "
                "resumes; fix it to keep the call with a result."
            ),
            "codex": _CODEX_ABORTED,
            "opencode": _OPENCODE_INTERRUPTED,
        },
    ),
    Code(
        name="orphan-tool-result",
        explains=("A2", "B2", "O2", "O3", "R2", "G3", "G1", "CC"),
        counted=("result with no call", "results with no call"),
        summary="a tool_result whose id matches no earlier tool_use (and is not a mismatched id)",
        severity={ANY: _E},
        rule={
            "anthropic": "anthropic/unexpected-tool-result",
            "bedrock": "bedrock/tool-result-count",
            "openai-chat": "openai/tool-message-needs-call",
            "openai-responses": "openai-responses/output-needs-function-call",
            "gemini": "gemini/function-response-after-call",
        },
        actions=("drop", "to-text"),
        pairing=True,
        client_repair={
            "claude-code": (
                "Claude Code 2.1.197 leaves this result out of what it sends each time it "
                "resumes; fix it to drop it from the file or keep its text."
            ),
            "codex": 'Codex leaves this output out each time it resumes (it logs "Orphan '
            'function call output"); fix it to remove it from the file.',
        },
    ),
    Code(
        name="mismatched-tool-result-id",
        explains=("A1", "A1-old", "A2", "B1", "O1", "O3", "R1", "R2", "G3", "CC"),
        counted=("result under a wrong id", "results under a wrong id"),
        summary="in a call's home message, an unknown-id result paired by position with an "
        "unanswered call of that turn",
        severity={ANY: _E},
        rule={
            "anthropic": "anthropic/unexpected-tool-result",
            "bedrock": "bedrock/tool-results-in-next-message",
            "openai-chat": "openai/tool-calls-need-responses",
            "openai-responses": "openai-responses/output-needs-function-call",
            "gemini": "gemini/function-response-matches-call",
        },
        actions=("remap", "drop"),
        group=Group.MESSAGE,
        pairing=True,
        client_repair={
            "claude-code": (
                "Claude Code 2.1.197 leaves this result and the unanswered call out of what it "
                "sends each time it resumes; fix it to give the result its call's id."
            ),
        },
    ),
    Code(
        name="duplicate-tool-result",
        explains=("A2", "A4", "B2", "B3", "O2", "O4", "R4", "G3", "G1", "CC"),
        counted=("duplicate result", "duplicate results"),
        summary="a second (third, ...) tool_result for the same tool_use",
        severity={ANY: _E},
        rule={
            "anthropic": "anthropic/single-result-per-tool-use",
            "bedrock": "bedrock/duplicate-tool-result-ids",
            "openai-chat": "openai/duplicate-tool-call-id",
            "openai-responses": "openai-responses/duplicate-item",
            "gemini": "gemini/function-response-count",
        },
        actions=("keep-best",),
        group=Group.CALL,
        pairing=True,
        client_repair={
            "claude-code": (
                "Claude Code 2.1.197 sends one result for the call and leaves this one out each "
                "time it resumes; fix it to keep the right one in the file."
            ),
        },
    ),
    Code(
        name="misplaced-tool-result",
        explains=("A1", "A1-old", "A2", "B1", "B2", "O1", "O2", "O3", "R2", "G3", "G1", "CC"),
        counted=("result away from its call", "results away from their call"),
        summary="the only result of a tool_use is not in the tool_use's home message",
        severity={ANY: _E},
        lenient={"anthropic": _W},
        rule={
            "anthropic": "anthropic/tool-use-without-result",
            "bedrock": "bedrock/tool-results-in-next-message",
            "openai-chat": "openai/tool-calls-need-responses",
            "openai-responses": "openai-responses/function-call-needs-output",
            "gemini": "gemini/function-response-after-call",
        },
        actions=("move-home",),
        group=Group.CALL_MESSAGE,
        pairing=True,
        client_repair={
            "claude-code": (
                "Claude Code 2.1.197 sends '[Tool result missing due to internal error]' in place"
                " of this result each time it resumes and leaves the real one out; fix it to keep"
                " the real history."
            ),
        },
    ),
    Code(
        name="duplicate-tool-use-id",
        explains=("A5", "B3-use", "O4", "R4", "CC"),
        counted=("reused call id", "reused call ids"),
        summary="two tool_use blocks in the session share an id",
        severity={ANY: _E},
        rule={
            "anthropic": "anthropic/unique-tool-use-ids",
            "bedrock": "bedrock/duplicate-tool-use-ids",
            "openai-chat": "openai/duplicate-tool-call-id",
            "openai-responses": "openai-responses/duplicate-item",
            "gemini": "gemini/unique-function-call-ids",
        },
        actions=("rename",),
        group=Group.MESSAGE,
        pairing=True,
        client_repair={
            "claude-code": (
                "Claude Code 2.1.197 leaves this later call and its result out of what it sends "
                "each time it resumes; fix it to rename the call and keep both."
            ),
        },
    ),
    Code(
        name="invalid-tool-id",
        explains=("A6", "CC"),
        counted=("invalid tool id", "invalid tool ids"),
        summary="a tool_use or tool_result whose id is missing, not a string or empty, or "
        "one the provider rejects (Anthropic: ^[a-zA-Z0-9_-]+$)",
        severity={ANY: _E},
        rule={
            "anthropic": "anthropic/tool-id-format",
            "bedrock": "bedrock/tool-use-id-format",
            "openai-chat": "openai/tool-call-id-required",
            "openai-responses": "openai-responses/call-id-required",
        },
        # assign-id: a call takes its positional partner's id, else a new one (a sanitised
        # copy of a rejected id when it is free); a result takes its call's id, else a new
        # one (it is then an orphan result, handled by that code's fix).
        actions=("assign-id", "drop"),
        group=Group.MESSAGE,
        pairing=True,
        client_repair={
            "claude-code": (
                "Claude Code 2.1.197 leaves a call without an id (and the result that answers "
                "it) out of what it sends each time it resumes; fix it to give them an id and "
                "keep them."
            ),
            "opencode": (
                "opencode 1.18 sends this id with '_' in place of the characters Anthropic "
                "refuses each time it resumes; fix it to write the id it sends."
            ),
        },
    ),
    Code(
        name="wrong-role-block",
        explains=("CC",),
        counted=("block in the wrong role", "blocks in the wrong role"),
        summary="a tool_result inside an assistant message, or a tool_use inside a user message",
        severity={ANY: _E},
        rule={
            "anthropic": "anthropic/tool-blocks-by-role",
            "bedrock": "bedrock/tool-blocks-by-role",
            "openai-chat": "openai/message-shape",
            "openai-responses": "openai-responses/item-shape",
        },
        # move: results into the user message after their assistant message (created if
        # missing); calls to the end of the assistant message before their user message
        # (a new one right before it if there is none).
        actions=("move", "to-text"),
        group=Group.MESSAGE,
        pairing=True,
    ),
    Code(
        name="tool-result-not-first",
        explains=("A1", "A1-old", "B1", "CC"),
        counted=("message with text before its results", "messages with text before their results"),
        summary="a tool_result comes after a non-tool_result block in the same message",
        severity={"gemini": _W, ANY: _E},
        rule={
            "anthropic": "anthropic/tool-results-first",
            "bedrock": "anthropic/tool-results-first",
            "openai-chat": "openai/tool-calls-need-responses",
            "openai-responses": "openai-responses/function-call-needs-output",
            "gemini": "gemini/function-response-turn",
        },
        actions=("reorder",),
        pairing=True,
    ),
    Code(
        name="empty-content",
        explains=("A8", "A8b", "A9", "B5", "B6"),
        counted=("empty message or block", "empty messages or blocks"),
        summary="empty content, or an empty or whitespace-only text block (the final "
        "assistant message excepted)",
        severity={"openai-chat": _W, "openai-responses": _W, ANY: _E},
        rule={
            "anthropic": "anthropic/non-empty-content",
            "bedrock": "bedrock/non-empty-content",
            "openai-chat": "openai/non-empty-content",
            "openai-responses": "openai-responses/non-empty-content",
            "gemini": "gemini/non-empty-parts",
        },
        actions=("drop-empty", "fill"),
        group=Group.MESSAGE,
        client_repair={
            "claude-code": (
                "Claude Code 2.1.197 leaves empty text blocks of a user message out of what it "
                "sends (and sends '(no content)' when nothing is left); fix it to drop them from "
                "the file."
            ),
        },
    ),
    Code(
        name="out-of-order-timestamp",
        counted=("timestamp out of order", "timestamps out of order"),
        summary="a message is stamped earlier than the message before it",
        severity={ANY: _I},
        none_reason="evidence only; the API does not read timestamps.",
        about_time=True,
    ),
    Code(
        name="result-before-use",
        counted=("result stamped before its call", "results stamped before their call"),
        summary="a tool_result's message is stamped earlier than its tool_use's message",
        severity={ANY: _W},
        none_reason="evidence only; the API does not read timestamps.",
        about_time=True,
        travel=True,
    ),
    Code(
        name="consecutive-same-role",
        explains=("A9", "B1", "B3-use", "B5", "G2"),
        counted=("same-role pair in a row", "same-role pairs in a row"),
        summary="two user (or two assistant) messages in a row",
        severity={"bedrock": _E, ANY: _I},
        rule={"bedrock": "bedrock/alternating-roles"},
        actions=(NONE, "merge"),
        actions_by_target={"bedrock": ("merge", NONE)},
        none_reason="the provider merges consecutive messages of one role.",
        client_repair={
            "gemini-cli": "Gemini CLI 0.61 sends the two as one turn.",
        },
    ),
    Code(
        name="trailing-tool-results",
        counted=(
            "message of unanswered tool results at the end",
            "messages of unanswered tool results at the end",
        ),
        summary="the session ends on tool results the model has not answered, and the client "
        "target sends a reply of its own after them (reported under such a client only)",
        severity={ANY: _W},
        none_reason="the model's next reply answers the results; nothing in the file is wrong.",
        client_repair={
            "gemini-cli": (
                "Gemini CLI 0.61 sends the model turn '[The previous response was interrupted "
                "before it completed.]' after them each time it resumes, so the model reads "
                "that it was cut off."
            ),
        },
    ),
    Code(
        name="broken-chain",
        counted=("chain broken by a lost record", "chains broken by lost records"),
        summary="a Claude Code record's parentUuid names no record in the file (a record "
        "was lost): the conversation before the gap is cut off, or bridged only by Claude "
        "Code's own timestamp fallback",
        severity={ANY: _W},
        # relink: the record's parentUuid becomes the node Claude Code's fallback takes, or
        # else the node before it in the file (same sessionId, no sidechain, no agentId,
        # a tip), so that every reader resumes the whole conversation
        actions=("relink", NONE),
        none_reason="left as it is: what is before the gap stays out of the conversation "
        "where nothing bridges it.",
        client_repair={
            "claude-code": (
                "Claude Code 2.1.197 re-links the record to the one stamped closest before it "
                "(within 5 s) each time it resumes and sends the conversation before the gap; "
                "fix it to write that link (older versions and other tools resume only what "
                "follows the gap)."
            ),
        },
    ),
    Code(
        name="malformed",
        counted=("unreadable record", "unreadable records"),
        summary="a record histview cannot read as a message",
        severity={ANY: _E},
        rule={
            "anthropic": "anthropic/message-shape",
            "bedrock": "bedrock/message-shape",
            "openai-chat": "openai/message-shape",
            "openai-responses": "openai-responses/item-shape",
            "gemini": "gemini/content-shape",
        },
        actions=(NONE, "drop"),
        none_reason="export refuses while malformed records remain; choose 'drop' to remove it.",
        blocks_export=True,
        client_repair={
            "codex": "Codex skips this line when it resumes, so the model never sees it.",
        },
    ),
)

BY_NAME: dict[str, Code] = {c.name: c for c in _DECLARED}
CODES: tuple[str, ...] = tuple(BY_NAME)
# the codes of which no file is written while a finding remains
BLOCKS_EXPORT: frozenset[str] = frozenset(c for c in CODES if BY_NAME[c].blocks_export)
PAIRING: tuple[str, ...] = tuple(c.name for c in _DECLARED if c.pairing)


def get(name: str) -> Code:
    return BY_NAME[name]
