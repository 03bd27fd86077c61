"""`histview explain`: a provider's 400 error text -> the rule it enforces, the finding
codes that cause it, and (given the session) the message and block it points at.

The texts are the ones users paste into issues (each rule below quotes its provider's text;
the rules' ids are in docs/codes.md), matched loosely: backticks, JSON escaping, line breaks and case do not matter, and the text may be
buried in a whole error body or a stack trace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import wire
from .analysis import Analysis, analyze
from .codes import BY_NAME
from .model import Finding, Message, Session, block_text
from .sanitize import clean_line


@dataclass(frozen=True)
class Rule:
    id: str  # the research notes' rule id (A1, B1, O1, R1, ...)
    provider: str
    target: str  # the target whose rules histview applies when FILE is given
    pattern: str  # regex over the normalised text (no backticks, single spaces)
    says: str  # the rule in plain words
    index_names: str = ""  # what messages.N points at: "assistant" | "user" | "message"
    note: str = ""

    @property
    def codes(self) -> tuple[str, ...]:
        """The finding codes that make a request break this rule (declared on each Code:
        `explains`)."""
        return tuple(c.name for c in BY_NAME.values() if self.id in c.explains)

    @property
    def n_is(self) -> str:
        """What messages.N is, in words."""
        return _N_IS.get(self.id, _N_IS.get(self.index_names, ""))


_N_IS = {
    "assistant": "the assistant message with the tool calls",
    "user": "the user message that should hold the results",
    "message": "the message the provider refused",
    "A2": "the user message holding the unexpected result",
    "A4": "the user message holding the second result",
    "A5": "the assistant message with the repeated id",
    "A6": "the message holding the block with the bad id",
    "B2": "the user message with too many results",
    "B3": "the user message with the repeated result ids",
    "O4": "the later message with the repeated id",
}


# IDs: letters, digits, _ - . : (Vertex, Bedrock, OpenAI and home-made agents' ids).
_ID = r"[\w.:-]+"
_IDS = rf"{_ID}(?:\s*,\s*(?!but\b){_ID})*"
_N = r"messages\.(?P<n>\d+)"
_NM = rf"{_N}\.content\.(?P<m>\d+)"

RULES: tuple[Rule, ...] = (
    Rule(
        "A1",
        "Anthropic",
        "anthropic",
        rf"(?:{_N}: )?tool_use ids were found without tool_result blocks immediately after:? "
        rf"(?P<ids>{_IDS})",
        "every tool_use in an assistant message must be answered by a tool_result at the start "
        "of the very next message, which must be a user message.",
        "assistant",
        "The same text is returned when a text block comes before the results in the next "
        "message (tool-result-not-first, rule A3), and when a turn's results are split over "
        "several user messages that were not merged (misplaced-tool-result).",
    ),
    Rule(
        "A1-old",
        "Anthropic (wording used until early 2025)",
        "anthropic",
        rf"(?:{_N}: )?did not find (?P<count>\d+) tool_result block\(?s?\)? at the beginning of "
        r"this message",
        "a message that follows tool_use blocks must begin with one tool_result per tool_use.",
        "user",
        "The message may also hold text before its results (tool-result-not-first, rule A3), "
        "or the results may be split over several user messages (misplaced-tool-result).",
    ),
    Rule(
        "A2",
        "Anthropic",
        "anthropic",
        rf"(?:{_NM}: )?unexpected tool_use_id found in tool_result blocks:? (?P<ids>{_IDS})",
        "every tool_result must answer a tool_use of the immediately preceding assistant message.",
        "user",
    ),
    Rule(
        "A4",
        "Anthropic",
        "anthropic",
        rf"(?:{_NM}: )?each tool_use must have a single result\.? found multiple tool_result "
        rf"blocks with id:? (?P<ids>{_ID})",
        "each tool_use may have only one tool_result in the whole request.",
        "user",
    ),
    Rule(
        "A5",
        "Anthropic",
        "anthropic",
        rf"(?:{_N}(?:\.content\.(?P<m>\d+))?: )?tool_use ids must be unique",
        "tool_use ids must be unique across the whole request, not just within one message.",
        "assistant",
    ),
    Rule(
        "A6",
        "Anthropic",
        "anthropic",
        rf"{_NM}\.tool_(?:use\.id|result\.tool_use_id):? (?:string should match pattern|"
        r"field required)",
        "every tool_use needs an id and every tool_result a tool_use_id, matching "
        "^[a-zA-Z0-9_-]+$.",
        "message",
    ),
    Rule(
        "A8",
        "Anthropic",
        "anthropic",
        rf"(?:{_N}: )?all messages must have non-empty content except for the optional final "
        r"assistant message",
        "no message may be empty, except an optional final assistant message.",
        "message",
    ),
    Rule(
        "A8b",
        "Anthropic",
        "anthropic",
        r"messages(?:\.(?P<n>\d+))?(?:\.content\.(?P<m>\d+))?: text content blocks must "
        r"(?:be non-empty|contain non-whitespace text)",
        "text blocks must be non-empty and contain non-whitespace text.",
        "message",
    ),
    Rule(
        "A9",
        "Anthropic (older API versions and proxies)",
        "bedrock",
        r"roles must alternate between \"?user\"? and \"?assistant\"?",
        "user and assistant messages must alternate (today's Anthropic API merges consecutive "
        "messages of one role; older versions and some proxies refuse them).",
        "message",
        "An empty message dropped by a proxy also leaves two messages of one role in a row.",
    ),
    Rule(
        "B1",
        "Bedrock Converse",
        "bedrock",
        rf"expected toolresult blocks at {_N}\.content for the following ids:? (?P<ids>{_IDS})"
        rf"(?:,? but found:? (?P<found>{_IDS}))?",
        "all results of an assistant turn must be in the one next user message, first, one per "
        "toolUse; Converse does not merge consecutive user messages.",
        "user",
        'With "but found: ID", the message holds a result under another id '
        "(mismatched-tool-result-id) or the results are in another order or message.",
    ),
    Rule(
        "B2",
        "Bedrock Converse",
        "bedrock",
        rf"the number of toolresult blocks at {_N}\.content exceeds the number of tooluse "
        r"blocks of previous turn",
        "a user message may not carry more toolResult blocks than the previous turn has "
        "toolUse blocks.",
        "user",
    ),
    Rule(
        "B3",
        "Bedrock Converse",
        "bedrock",
        rf"the toolresult blocks at {_N}\.content contain duplicate ids:? (?P<ids>{_IDS})",
        "the toolResult blocks of a message may not repeat an id.",
        "user",
    ),
    Rule(
        "B3-use",
        "Bedrock Converse",
        "bedrock",
        rf"the tooluse blocks at {_N}\.content contain duplicate ids:? (?P<ids>{_IDS})",
        "the toolUse blocks of a message may not repeat an id.",
        "assistant",
        "Merging two assistant messages (as a proxy does for Bedrock) can bring duplicates "
        "together.",
    ),
    Rule(
        "B5",
        "Bedrock Converse",
        "bedrock",
        r"a conversation must alternate between user and assistant roles",
        "user and assistant messages must strictly alternate.",
        "message",
    ),
    Rule(
        "B6",
        "Bedrock Converse",
        "bedrock",
        rf"the content field in the message object at {_N} is empty",
        "no message may be empty.",
        "message",
    ),
    Rule(
        "O1",
        "OpenAI Chat Completions",
        "openai-chat",
        r"an assistant message with 'tool_calls' must be followed by tool messages responding "
        rf"to each 'tool_call_id'\.?(?: \(insufficient tool messages following tool_calls "
        rf"message\))?(?: the following tool_call_ids did not have response messages:? "
        rf"(?P<ids>{_IDS}))?",
        "every tool_calls entry needs a tool message right after the assistant message, with "
        "nothing (not even a user message) in between.",
        "",
    ),
    Rule(
        "O2",
        "OpenAI Chat Completions",
        "openai-chat",
        r"messages with role 'tool' must be a response to a prece+ding message with "
        r"'tool_calls'",
        "a tool message must follow an assistant message with tool_calls (or another tool "
        "message answering it).",
        "",
    ),
    Rule(
        "O3",
        "OpenAI Chat Completions",
        "openai-chat",
        r"'tool_call_id' of '(?P<ids>[^']+)' not found in 'tool_calls' of previous message",
        "a tool message's tool_call_id must be one of the previous assistant message's calls.",
        "",
    ),
    Rule(
        "O4",
        "OpenAI Chat Completions",
        "openai-chat",
        r"duplicate value for 'tool_call_id' of '(?P<ids>[^']+)'(?:,? in messages\[(?P<n0>\d+)\] "
        r"and messages\[(?P<n>\d+)\])?",
        "one tool message per tool_call_id, and call ids unique in the request.",
        "message",
    ),
    Rule(
        "R1",
        "OpenAI Responses",
        "openai-responses",
        rf"no tool output found for function call (?P<ids>{_ID})",
        "every function_call item needs its function_call_output in the input.",
        "",
    ),
    Rule(
        "R2",
        "OpenAI Responses",
        "openai-responses",
        rf"no tool call found for function call output with call_id (?P<ids>{_ID})",
        "every function_call_output needs an earlier function_call with the same call_id.",
        "",
    ),
    Rule(
        "R4",
        "OpenAI Responses",
        "openai-responses",
        rf"duplicate item found with id (?P<ids>{_ID})",
        "no two input items may share an id.",
        "",
    ),
    Rule(
        "R3",
        "OpenAI Responses",
        "openai-responses",
        r"item '(?P<ids>[^']+)' of type 'reasoning' was provided without its required "
        r"following item",
        "a reasoning item must be followed by the item it produced (a message or function_call).",
        "",
        "histview does not check reasoning items yet; look for a reasoning item left at the end "
        "of a turn (an aborted call whose function_call was dropped).",
    ),
    Rule(
        "R3b",
        "OpenAI Responses",
        "openai-responses",
        r"item '(?P<ids>[^']+)' of type '\w+' was provided without its required 'reasoning' item",
        "an item produced with reasoning must be sent with its reasoning item.",
        "",
        "histview does not check reasoning items yet.",
    ),
    Rule(
        "G3",
        "Gemini API",
        "gemini",
        r"(?:please ensure that )?the number of function response parts is equal to the number "
        r"of function call parts of the function call turn",
        "the user turn after a function-call turn must hold exactly one functionResponse per "
        "functionCall: none missing, none twice, none for another call.",
        "",
        "The error names no turn. Gemini CLI 0.61 sends every response of a resumed chat twice "
        "(duplicate-tool-result on every tool turn); `histview fix FILE` writes the chat so that "
        "it sends each once.",
    ),
    Rule(
        "G1",
        "Gemini API",
        "gemini",
        r"(?:please ensure that )?function response turn comes immediately after a function "
        r"call turn",
        "a turn of functionResponse parts must come right after the model turn whose calls it "
        "answers.",
        "",
        "The error names no turn: every response without its call right before it is a candidate.",
    ),
    Rule(
        "G2",
        "Gemini API",
        "gemini",
        r"(?:please ensure that )?function call turn comes immediately after a user turn or "
        r"after a function response turn",
        "a model turn with function calls must follow a user turn or a function-response turn "
        "(the history may not start with a call, nor hold two model turns in a row).",
        "",
        "Often the history was cut at the start (context trimming) or a model turn was lost.",
    ),
    Rule(
        "CC",
        "Claude Code",
        "anthropic",
        r"400 due to tool use concurrency issues",
        "Claude Code's own summary of a 400 about tool_use/tool_result pairing (rules A1, A2, A4, "
        "A5): the saved session breaks the pairing rules.",
        "",
        "Claude Code repairs the request in memory but not the file, so the error comes back "
        "after every resume; `histview fix FILE --in-place` repairs the file.",
    ),
)

_COMPILED = tuple((r, re.compile(r.pattern, re.IGNORECASE)) for r in RULES)


@dataclass
class Match:
    rule: Rule
    text: str  # the part of the input that matched
    n: int | None = None  # messages.N (the culprit message, as sent)
    m: int | None = None  # content.M
    ids: list[str] = field(default_factory=list)
    found: list[str] = field(default_factory=list)  # B1b: the ids Bedrock found instead
    count: int | None = None  # A1-old: how many results were missing
    other_n: int | None = None  # O4: the first of the two messages


def normalise(text: str) -> str:
    """Undo the wrappings error texts arrive in (JSON escaping, backticks, line breaks)."""
    t = text.replace("\\n", " ").replace("\\r", " ").replace("\\t", " ")
    t = re.sub(r"\\+([\"'`])", r"\1", t)
    t = t.replace("`", "")
    return re.sub(r"\s+", " ", t)


def _ids(value: str | None) -> list[str]:
    if not value:
        return []
    out = []
    for part in value.split(","):
        part = part.strip().rstrip(".")
        if part and part not in out:
            out.append(part)
    return out


def match(text: str) -> list[Match]:
    """Every known error in `text`, in the order they appear (one per place)."""
    t = normalise(text)
    hits: list[tuple[int, Match]] = []
    taken: list[tuple[int, int]] = []
    for rule, rx in _COMPILED:
        for mo in rx.finditer(t):
            span = mo.span()
            if any(a < span[1] and span[0] < b for a, b in taken):
                continue  # a more specific rule (listed earlier) already read this text
            g = mo.groupdict()
            hits.append(
                (
                    span[0],
                    Match(
                        rule=rule,
                        text=mo.group(0),
                        n=int(g["n"]) if g.get("n") else None,
                        m=int(g["m"]) if g.get("m") else None,
                        ids=_ids(g.get("ids")),
                        found=_ids(g.get("found")),
                        count=int(g["count"]) if g.get("count") else None,
                        other_n=int(g["n0"]) if g.get("n0") else None,
                    ),
                )
            )
            taken.append(span)
    hits.sort(key=lambda h: h[0])
    return [m for _, m in hits]


def describe(m: Match) -> list[str]:
    """What the error means, in a few lines (no session needed)."""
    r = m.rule
    lines = [f"{r.provider} error (rule {r.id}): {r.says}"]
    named = []
    if m.n is not None:
        what = f" ({r.n_is})" if r.n_is else ""
        place = f"messages.{m.n}" + (f".content.{m.m}" if m.m is not None else "")
        if m.other_n is not None:
            place = f"messages[{m.other_n}] and messages[{m.n}]"
        named.append(place + what)
    if m.ids:
        named.append(("id " if len(m.ids) == 1 else "ids ") + ", ".join(m.ids))
    if m.found:
        named.append("found instead: " + ", ".join(m.found))
    if m.count is not None:
        named.append(f"{m.count} result(s) missing")
    if named:
        lines.append("  The error names: " + clean_line("; ".join(named)))
    if r.codes:
        lines.append("  Findings that cause it: " + ", ".join(r.codes))
    if r.note:
        lines.append("  Note: " + r.note)
    return lines


@dataclass
class Culprit:
    target: str
    message_index: int | None = None  # index in session.messages
    block_index: int | None = None
    findings: list[Finding] = field(default_factory=list)  # the ones that explain the error
    others: list[Finding] = field(default_factory=list)  # other findings at that place
    skipped_before: int = 0  # hidden/malformed messages before it (not sent)
    out_of_range: bool = False
    client_added: bool = False  # messages.N is a message the client target adds itself
    live_count: int = 0
    missing_ids: list[str] = field(default_factory=list)  # named ids the file does not hold


def locate(session: Session, m: Match, target: str | None = None) -> Culprit:
    """Map the error onto the session: messages.N counts live (sent) messages only."""
    analysis: Analysis = analyze(session, target or session.target)
    # messages.N as the target numbers what it receives (for a client target, the request
    # the client builds): the first message that number covers
    shape = wire.wire_for(analysis.target)
    places = wire.request(session, analysis.target).places(shape)
    c = Culprit(target=analysis.target, live_count=len(places))
    anchors: set[int] = set()
    if m.n is not None:
        pos, opens = places[m.n] if m.n < len(places) else (None, None)
        if pos is not None:
            mi = pos
            c.message_index = mi
            c.skipped_before = sum(1 for k in analysis.numbers[:mi] if k is None)
            anchors.add(mi)
            msg = session.messages[mi]
            if m.m is not None and m.m < len(msg.blocks):
                c.block_index = m.m
            elif shape.split is not wire.WIRES["anthropic"].split and opens is not None:
                # an entry of its own inside the message (a Chat `tool` message, a Responses
                # item): the block it carries
                c.block_index = next(
                    (k for k, b in enumerate(msg.blocks) if b is opens), c.block_index
                )
            if m.rule.index_names == "assistant":
                nxt = analysis.pairing.next_live.get(mi)
                if nxt is not None:
                    anchors.add(nxt)
            elif m.rule.index_names == "user":
                prev = analysis.pairing.prev_live.get(mi)
                if prev is not None:
                    anchors.add(prev)
        elif m.n < len(places):
            c.client_added = True
        else:
            c.out_of_range = True
    ids = set(m.ids) | set(m.found)
    if ids:
        present = {u.tool_id for u in analysis.pairing.uses} | {
            r.tool_id for r in analysis.pairing.results
        }
        c.missing_ids = [i for i in m.ids + m.found if i not in present]
    codes = set(m.rule.codes)

    def near(f: Finding) -> bool:
        return f.position in anchors or (f.tool_use_id is not None and f.tool_use_id in ids)

    if anchors or ids:
        c.findings = [f for f in analysis.findings if f.code in codes and near(f)]
        c.others = [
            f for f in analysis.findings if f.code not in codes and f.severity != "info" and near(f)
        ]
    else:  # nothing to anchor on: every finding of the rule's codes
        c.findings = [f for f in analysis.findings if f.code in codes]
    if c.block_index is not None:  # the named block's findings first
        c.findings.sort(
            key=lambda f: f.position != c.message_index or f.block_index != c.block_index
        )
    return c


def _message_summary(msg: Message) -> str:
    kinds = []
    for b in msg.blocks[:6]:
        label = b.type
        if b.tool_id:
            label += f" {b.tool_id}"
        kinds.append(label)
    if len(msg.blocks) > 6:
        kinds.append(f"+{len(msg.blocks) - 6} more")
    n = len(msg.blocks)
    return f"{msg.role or '?'} message, {n} block{'s' if n != 1 else ''}: " + ", ".join(kinds)


def _block_summary(msg: Message, bi: int) -> str:
    b = msg.blocks[bi]
    parts = [b.type]
    if b.tool_id:
        parts.append(b.tool_id)
    if b.name:
        parts.append(f"({b.name})")
    text = block_text(b)
    if text:
        parts.append(repr_short(text))
    return " ".join(parts)


def repr_short(text: str, limit: int = 70) -> str:
    return "“" + clean_line(text, limit) + "”"


def describe_culprit(session: Session, m: Match, c: Culprit) -> list[str | Finding]:
    """Lines about the culprit and the findings behind it; Finding objects stand for finding
    lines the caller renders. What to run next is the caller's to say (`others` follow)."""
    name = clean_line(session.path)
    out: list[str | Finding] = [
        f"In {name} ({session.format}, target {c.target}, {c.live_count} messages sent):"
    ]
    if c.out_of_range:
        out.append(
            f"  messages.{m.n} does not exist: the file sends {c.live_count} messages "
            "(0 to {}). The file may have changed since the request, or the agent added "
            "messages (a system prompt, a new user turn) that are not saved.".format(
                c.live_count - 1
            )
        )
    if c.client_added:
        out.append(f"  messages.{m.n} is not in the file: {c.target} adds it itself when it sends.")
    if c.message_index is not None:
        msg = session.messages[c.message_index]
        shift = ""
        if c.skipped_before:
            shift = (
                f" ({c.skipped_before} hidden or malformed record(s) before it are not sent, "
                "so the file's index is higher)"
            )
        out.append(
            f"  messages.{m.n} is messages[{c.message_index}] in the file{shift}: "
            + clean_line(_message_summary(msg), 160)
        )
        if c.block_index is not None:
            out.append(f"  content.{m.m} is " + clean_line(_block_summary(msg, c.block_index), 160))
            held = msg.blocks[c.block_index].tool_id
            if m.ids and held not in m.ids:
                out.append(
                    f"  That block does not carry {clean_line(', '.join(m.ids))}: the file differs "
                    "from what was sent (changed since, or the agent rebuilt the history); the "
                    "findings below are matched by id."
                )
        elif m.m is not None:
            out.append(f"  content.{m.m} does not exist in that message.")
    for i in c.missing_ids:
        out.append(
            f"  {clean_line(i)} does not occur in this file: the error may come from another "
            "session, or the file changed since."
        )
    if c.findings:
        out.append("  The findings behind it:")
        out.extend(c.findings[:50])
        if len(c.findings) > 50:
            out.append(f"  ... and {len(c.findings) - 50} more")
    elif m.rule.codes:
        out.append(
            "  histview finds no "
            + " / ".join(m.rule.codes)
            + " there. The file may have changed since the request, or the agent transformed "
            "the history before sending it."
        )
    return out


def describe_others(c: Culprit) -> list[str | Finding]:
    """The findings near the culprit that are not behind the error."""
    if not c.others:
        return []
    return ["  Other problems at the same place:", *c.others[:20]]
