"""Provider targets: which findings each API rejects (error), tolerates (warning/info).

Codes and targets are fixed by SPEC §4/§5. `severity()` is the one place that decides.
"""

from __future__ import annotations

TARGETS = ("anthropic", "bedrock", "openai-chat", "openai-responses")

CODES = (
    "orphan-tool-use",
    "pending-tool-use",
    "orphan-tool-result",
    "mismatched-tool-result-id",
    "duplicate-tool-result",
    "misplaced-tool-result",
    "duplicate-tool-use-id",
    "tool-result-not-first",
    "empty-content",
    "out-of-order-timestamp",
    "result-before-use",
    "consecutive-same-role",
    "malformed",
)

_RULES: dict[str, dict[str, str]] = {
    "anthropic": {
        "orphan-tool-use": "anthropic/tool-use-without-result",
        "orphan-tool-result": "anthropic/unexpected-tool-result",
        "mismatched-tool-result-id": "anthropic/unexpected-tool-result",
        "duplicate-tool-result": "anthropic/single-result-per-tool-use",
        "misplaced-tool-result": "anthropic/tool-use-without-result",
        "duplicate-tool-use-id": "anthropic/unique-tool-use-ids",
        "tool-result-not-first": "anthropic/tool-results-first",
        "empty-content": "anthropic/non-empty-content",
        "malformed": "anthropic/message-shape",
    },
    "bedrock": {
        "orphan-tool-use": "bedrock/tool-results-in-next-message",
        "orphan-tool-result": "bedrock/tool-result-count",
        "mismatched-tool-result-id": "bedrock/tool-results-in-next-message",
        "duplicate-tool-result": "bedrock/duplicate-tool-result-ids",
        "misplaced-tool-result": "bedrock/tool-results-in-next-message",
        "duplicate-tool-use-id": "bedrock/duplicate-tool-use-ids",
        "tool-result-not-first": "anthropic/tool-results-first",
        "empty-content": "bedrock/non-empty-content",
        "consecutive-same-role": "bedrock/alternating-roles",
        "malformed": "bedrock/message-shape",
    },
    "openai-chat": {
        "orphan-tool-use": "openai/tool-calls-need-responses",
        "orphan-tool-result": "openai/tool-message-needs-call",
        "mismatched-tool-result-id": "openai/tool-calls-need-responses",
        "duplicate-tool-result": "openai/duplicate-tool-call-id",
        "misplaced-tool-result": "openai/tool-calls-need-responses",
        "duplicate-tool-use-id": "openai/duplicate-tool-call-id",
        "tool-result-not-first": "openai/tool-calls-need-responses",
        "empty-content": "openai/non-empty-content",
        "malformed": "openai/message-shape",
    },
    "openai-responses": {
        "orphan-tool-use": "openai-responses/function-call-needs-output",
        "orphan-tool-result": "openai-responses/output-needs-function-call",
        "mismatched-tool-result-id": "openai-responses/output-needs-function-call",
        "duplicate-tool-result": "openai-responses/duplicate-item",
        "misplaced-tool-result": "openai-responses/function-call-needs-output",
        "duplicate-tool-use-id": "openai-responses/duplicate-item",
        "tool-result-not-first": "openai-responses/function-call-needs-output",
        "empty-content": "openai-responses/non-empty-content",
        "malformed": "openai-responses/item-shape",
    },
}

_ALWAYS_ERROR = {
    "orphan-tool-use",
    "orphan-tool-result",
    "mismatched-tool-result-id",
    "duplicate-tool-result",
    "duplicate-tool-use-id",
    "malformed",
}


def severity(code: str, target: str, *, merged_split: bool = False) -> str:
    """Severity of `code` under `target`.

    `merged_split`: a misplaced result whose message directly follows the home message
    through user messages holding only results — Anthropic merges consecutive user turns,
    so the request is accepted (a symptom, not a 400).
    """
    if code in _ALWAYS_ERROR:
        return "error"
    if code == "misplaced-tool-result":
        if merged_split and target == "anthropic":
            return "warning"
        return "error"
    if code == "tool-result-not-first":
        return "error"
    if code == "empty-content":
        return "warning" if target in ("openai-chat", "openai-responses") else "error"
    if code == "consecutive-same-role":
        return "error" if target == "bedrock" else "info"
    if code in ("pending-tool-use", "result-before-use"):
        return "warning"
    return "info"  # out-of-order-timestamp and codes added later


def rule(code: str, target: str) -> str | None:
    return _RULES.get(target, {}).get(code)
