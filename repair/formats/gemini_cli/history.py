"""Gemini CLI chat files, replayed the way Gemini CLI 0.61 loads them and turned into the
history it sends.

Loading (`loadConversationRecord`): lines are read in order; a `{"$rewindTo": ID}` line
removes ID and every message after it (all messages when ID is unknown); a line with a string
`id` is a message record: a new id is appended, a known id replaces the record in place (its
position stays); `{"$set": {...}}` merges metadata, and `$set.messages` replaces the whole
conversation; a header `{sessionId, projectHash, ...}` merges metadata and appends the
`messages` it carries. Other lines are ignored (a line that is not JSON too). The older
single-object `.json` chat is one such header holding every message.

Sending (`convertSessionToClientHistory`, then `GeminiChat`): `info`/`error`/`warning` records
and user records whose text is empty or starts with `/`, `?`, `<session_context>` or
`<hook_context>` are left out; a `gemini` record becomes a model turn (thoughts, content, one
`functionCall` per `toolCalls[]` entry; its content alone when the content already holds calls
or thoughts) followed by a user turn of the `toolCalls[].result` responses. Calls and
responses without an id are paired by name in the next turn (`ensureStableToolIds`). A run of
model turns holding an invalid part (an empty text part) is dropped (`extractCuratedHistory`),
thought parts are stripped, consecutive turns of one role are merged, `name__` prefixes are
cut from call ids and empty text parts are dropped (`stripToolCallIdPrefixes`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..base import type_name

MESSAGE_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
UNSENT_TYPES = frozenset({"info", "error", "warning"})
IGNORED_PREFIXES = ("/", "?", "<session_context>", "<hook_context>")


# A value never changed once made, but not frozen: a frozen dataclass's __init__ costs four
# times a plain one's, and a load makes one per block.
@dataclass(slots=True, unsafe_hash=True)
class Place:
    """Where one version of a record is written: a line (`line`, index into the file's
    lines; None for a `.json` document) and, for a record inside a messages array (`$set`,
    a header, the document), its index in that array."""

    line: int | None
    index: int | None = None

    @property
    def at_line(self) -> int:
        """`line`, for a record of a JSONL chat (a `.json` document has no lines)."""
        if self.line is None:
            raise ValueError("a record of a .json chat has no line")
        return self.line


@dataclass(slots=True, eq=False)
class Rec:
    """One message record as loaded. `key` is unique per record (ids repeat after a rewind)."""

    key: int
    id: str
    obj: dict[str, Any]  # the final version (the last place)
    anchor: Place  # where it entered the conversation: its position
    places: list[Place]  # the anchor and every later version, in file order
    removed: str | None = None  # why it is no longer in the conversation


@dataclass
class Replay:
    live: list[Rec]  # in conversation order
    removed: list[Rec]  # rewound, or dropped by a `$set.messages`, in file order
    meta: dict[str, Any]
    bad: list[tuple[int, str]]  # (line index, why) for lines that are not objects
    array_key: dict[int | None, tuple[str, ...]]  # line -> key path of its messages array


def replay_lines(
    objs: Iterable[tuple[int | None, Any]], unread: Callable[[int], bool] | None = None
) -> Replay:
    """Replay parsed lines `(line index, value)` in order, as they are read: one pass over
    the file. `unread`: whether the line at an index whose value is not an object is left
    out (blank, or not JSON: its value None as read), where `objs` holds every line."""
    order: dict[str, Rec] = {}
    removed: list[Rec] = []
    meta: dict[str, Any] = {}
    bad: list[tuple[int, str]] = []
    array_key: dict[int | None, tuple[str, ...]] = {}
    serial = 0

    def put(obj: dict[str, Any], place: Place) -> None:
        nonlocal serial
        rid = obj["id"]
        rec = order.get(rid)
        if rec is None:
            serial += 1
            order[rid] = Rec(serial, rid, obj, place, [place])
        else:
            rec.obj = obj
            rec.places.append(place)

    def drop(recs: list[Rec], why: str) -> None:
        for rec in recs:
            del order[rec.id]
            rec.removed = why
            removed.append(rec)

    for idx, obj in objs:
        if type(obj) is dict:
            rid = obj.get("id")
            if type(rid) is str and "$rewindTo" not in obj:  # the usual line: a record
                rec = order.get(rid)
                if rec is None:
                    serial += 1
                    place = Place(idx)
                    order[rid] = Rec(serial, rid, obj, place, [place])
                else:
                    rec.obj = obj
                    rec.places.append(Place(idx))
                continue
            if rid is None and len(obj) == 1:  # the other usual line: a `$set` of metadata
                values = obj.get("$set")
                if type(values) is dict and "messages" not in values:
                    meta.update(values)
                    continue
        elif not isinstance(obj, dict):
            if idx is None:  # a .json chat: its loader took the document for an object
                raise ValueError("the chat document is not an object")
            if unread is not None and unread(idx):
                continue
            bad.append((idx, f"the record is {_kind(obj)}, not an object"))
            continue
        if isinstance(obj.get("$rewindTo"), str):
            target = obj["$rewindTo"]
            recs = list(order.values())
            ids = list(order)
            cut = ids.index(target) if target in order else 0
            drop(recs[cut:], f"removed by the $rewindTo on {_where(idx)}")
        elif isinstance(obj.get("id"), str):
            put(obj, Place(idx))
        elif isinstance(obj.get("$set"), dict):
            msgs = obj["$set"].get("messages")
            if isinstance(msgs, list):
                before = list(order.values())
                order.clear()
                array_key[idx] = ("$set", "messages")
                for i, m in enumerate(msgs):
                    if isinstance(m, dict) and isinstance(m.get("id"), str):
                        put(m, Place(idx, i))
                gone = [r for r in before if r.id not in order]
                for r in gone:
                    r.removed = f"left out of the messages $set on {_where(idx)}"
                removed.extend(gone)
            meta.update(obj["$set"])
        elif isinstance(obj.get("sessionId"), str) and isinstance(obj.get("projectHash"), str):
            meta.update(obj)
            msgs = obj.get("messages")
            if isinstance(msgs, list):
                array_key[idx] = ("messages",)
                for i, m in enumerate(msgs):
                    if isinstance(m, dict) and isinstance(m.get("id"), str):
                        put(m, Place(idx, i))
    return Replay(list(order.values()), removed, meta, bad, array_key)


def _where(idx: int | None) -> str:
    return f"line {idx + 1}" if idx is not None else "the document"


def _kind(value: Any) -> str:
    return type_name(value)


# ---------------------------------------------------------------------------------------
# Turns: what convertSessionToClientHistory makes of the records


@dataclass(slots=True, unsafe_hash=True)
class PartRef:
    """Where a part of a turn comes from in its record: `content[k]` (k None: the content is
    one string or object), `thoughts[k]`, the call of `toolCalls[k]`, or its result
    (`toolCalls[k].result[j]`, j None when the result is one string or object)."""

    rec: int  # Rec.key
    field: str  # "content" | "thought" | "call" | "result"
    k: int | None = None
    j: int | None = None


@dataclass(slots=True)
class Turn:
    """A turn of the history. A turn of a record in the usual shape (adapter.py,
    `_usual_turns`: none without an id, none empty) has no `parts` but `facts`, what a
    check reads of it without its blocks; its `blocks` are made when its message's are.
    The long way's turns have their `blocks` once made (`_turn_blocks`)."""

    role: str  # "user" | "model"
    rec: Rec
    parts: list[tuple[Any, PartRef]]
    hidden: str | None = None  # why Gemini CLI does not send it
    blocks: list[Any] | None = None
    facts: Usual | None = None


@dataclass(slots=True)
class Usual:
    """A usual turn's blocks as a check reads them: the ids of its calls and of its
    results as sent (a usual turn holds either: the model turn its text and calls, a user
    turn only results), how many blocks it holds, and whether its text is blank."""

    calls: tuple[str, ...]
    answers: tuple[str, ...]
    n: int
    blank: bool = False


def part_text(value: Any) -> str:
    """`partListUnionToString` (verbose), which decides whether a user record is sent."""
    if not value:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(part_text(p) for p in value)
    if not isinstance(value, dict):
        return ""
    for key, label in (
        ("videoMetadata", "[Video Metadata]"),
        ("thought", None),
        ("codeExecutionResult", "[Code Execution Result]"),
        ("executableCode", "[Executable Code]"),
        ("fileData", "[File Data]"),
    ):
        if value.get(key) is not None:
            return label if label is not None else f"[Thought: {value[key]}]"
    if value.get("functionCall") is not None:
        return f"[Function Call: {_field(value['functionCall'], 'name')}]"
    if value.get("functionResponse") is not None:
        return f"[Function Response: {_field(value['functionResponse'], 'name')}]"
    if value.get("inlineData") is not None:
        return "[Media]"
    text = value.get("text")
    return text if isinstance(text, str) else ""


# the longest of IGNORED_PREFIXES: a text's start this long tells whether it opens with one
_LONGEST_PREFIX = max(map(len, IGNORED_PREFIXES))


def _text_head(content: Any) -> str:
    """`part_text(content).strip()`, or enough of its start to tell whether it is empty and
    whether it starts with one of IGNORED_PREFIXES (a record of many parts: its first)."""
    if not isinstance(content, list):
        return part_text(content).strip()
    head = ""
    for p in content:
        head += part_text(p)
        start = head.lstrip()
        if len(start) >= _LONGEST_PREFIX:
            return start
    return head.strip()


def _field(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else None


def ensure_parts(content: Any, rec: int, fld: str, k: int | None = None) -> list[Any]:
    """`ensurePartArray`: a list of parts (strings become text parts), with their refs."""
    if isinstance(content, list):
        out = []
        for i, p in enumerate(content):
            ref = PartRef(rec, fld, i if fld == "content" else k, None if fld == "content" else i)
            out.append(({"text": p} if isinstance(p, str) else p, ref))
        return out
    ref = PartRef(rec, fld, None if fld == "content" else k)
    if isinstance(content, str):
        return [({"text": content}, ref)]
    return [(content, ref)]


def record_problem(obj: dict[str, Any]) -> str | None:
    """Why a message record cannot be read (Gemini CLI would misread or crash on it)."""
    rtype = obj.get("type")
    if not isinstance(rtype, str):
        return "the record has no type"
    content = obj.get("content")
    if content is not None and not isinstance(content, (str, list, dict)):
        return f"content is {_kind(content)}"
    if isinstance(content, list):
        for i, p in enumerate(content):
            if not isinstance(p, (str, dict)):
                return f"content[{i}] is {_kind(p)}, not a part"
    if rtype == "gemini":
        calls = obj.get("toolCalls")
        if calls is not None and not isinstance(calls, list):
            return f"toolCalls is {_kind(calls)}, not a list"
        for i, tc in enumerate(calls or ()):
            if not isinstance(tc, dict):
                return f"toolCalls[{i}] is {_kind(tc)}, not an object"
            res = tc.get("result")
            if isinstance(res, list) and any(not isinstance(p, (str, dict)) for p in res):
                return f"toolCalls[{i}].result holds something that is not a part"
            if res is not None and not isinstance(res, (str, list, dict)):
                return f"toolCalls[{i}].result is {_kind(res)}, not parts or a string"
        thoughts = obj.get("thoughts")
        if thoughts is not None and not isinstance(thoughts, list):
            return f"thoughts is {_kind(thoughts)}, not a list"
    return None


def record_turns(rec: Rec) -> list[Turn] | str:
    """The turns Gemini CLI builds from one record; a string says why it sends nothing."""
    obj = rec.obj
    rtype = obj.get("type")
    if isinstance(rtype, str) and rtype in UNSENT_TYPES:
        return f"Gemini CLI does not send {rtype} records"
    if rtype == "user":
        content = obj.get("content")
        text = _text_head(content)
        if not text:
            return "Gemini CLI does not send an empty user record"
        if text.startswith(IGNORED_PREFIXES):
            return "Gemini CLI does not send this record (a command or its own context)"
        return [Turn("user", rec, ensure_parts(content, rec.key, "content"))]
    if rtype != "gemini":
        return f"Gemini CLI does not send {rtype!r} records"
    key = rec.key
    content = obj.get("content")
    parts = ensure_parts(content, key, "content") if content else []
    calls = obj.get("toolCalls") or ()
    model: list[Any] = []
    if _calls_or_thoughts(parts):
        model = parts
    else:
        for k, t in enumerate(obj.get("thoughts") or ()):
            if isinstance(t, dict):
                subject, desc = t.get("subject"), t.get("description")
                text = f"**{subject}** {desc}" if subject else f"{desc}"
                model.append(({"text": text, "thought": True}, PartRef(key, "thought", k)))
        model.extend(parts)
        for k, tc in enumerate(calls):
            call = {"id": tc.get("id"), "name": tc.get("name"), "args": tc.get("args")}
            model.append(({"functionCall": call}, PartRef(key, "call", k)))
    if not model:
        return "Gemini CLI sends nothing for a gemini record without content or calls"
    turns = [Turn("model", rec, model)]
    responses: list[Any] = []
    for k, tc in enumerate(calls):
        result = tc.get("result")
        if type(result) is list and result:  # the usual result: its parts
            responses.extend(ensure_parts(result, key, "result", k))
            continue
        if not _truthy(result):
            continue
        if isinstance(result, str):
            part = {
                "functionResponse": {
                    "id": tc.get("id"),
                    "name": tc.get("name"),
                    "response": {"output": result},
                }
            }
            responses.append((part, PartRef(key, "result", k)))
        elif isinstance(result, list):
            responses.extend(ensure_parts(result, key, "result", k))
        else:
            responses.append((result, PartRef(key, "result", k)))
    if responses:
        turns.append(Turn("user", rec, responses))
    return turns


def _calls_or_thoughts(parts: list[tuple[Any, PartRef]]) -> bool:
    """Whether a content part is a call or a thought (Gemini CLI then sends the content as
    it is, without the record's thoughts and toolCalls)."""
    for p, _ref in parts:
        if isinstance(p, dict):
            call, thought = p.get("functionCall"), p.get("thought")
            if (call is not None and _truthy(call)) or (thought is not None and _truthy(thought)):
                return True
    return False


def _truthy(value: Any) -> bool:
    """JavaScript truthiness for JSON values ([] and {} are true)."""
    if isinstance(value, (list, dict)):
        return True
    return bool(value)


def is_thought(part: Any) -> bool:
    return isinstance(part, dict) and _truthy(part.get("thought"))


def is_sent_part(part: Any) -> bool:
    """False for what `stripToolCallIdPrefixes` drops: an empty text part with nothing else."""
    if not isinstance(part, dict) or part.get("text") != "":
        return True  # the usual part: no list of its other keys
    return any(k not in ("text", "thought", "callIndex") for k in part)


def curated_out(turns: list[Turn]) -> None:
    """`extractCuratedHistory`: a run of consecutive model turns is dropped when one of them
    holds an empty part or an empty text part."""
    i = 0
    while i < len(turns):
        if turns[i].role != "model":
            i += 1
            continue
        j = i
        valid = True
        while j < len(turns) and turns[j].role == "model":
            valid = valid and _valid_model(turns[j])
            j += 1
        if not valid:
            for t in turns[i:j]:
                t.hidden = t.hidden or (
                    "Gemini CLI leaves out this model turn: it or a model turn next to it "
                    "holds an empty part"
                )
        i = j


def _valid_model(turn: Turn) -> bool:
    for part, _ref in turn.parts:
        if not isinstance(part, dict) or not part:
            return False
        if part.get("text") != "" or _truthy(part.get("thought")):
            continue  # the usual part: no list of its other keys
        if not any(k not in ("text", "thought", "callIndex") for k in part):
            return False
    return True


def stable_ids(turns: list[Turn]) -> dict[tuple[int, int], str]:
    """`ensureStableToolIds`: an id for each call/response part that has none, keyed by
    (turn index, part index). A call without id takes the first response without id of the
    same name in the next turn; what stays unpaired gets an id of its own. (Gemini CLI's ids
    hash the turn's place in the history; these hash the part's place in its record.)"""
    out: dict[tuple[int, int], str] = {}
    for i, turn in enumerate(turns):
        for pi, (part, ref) in enumerate(turn.parts):
            call = _field(part, "functionCall")
            if isinstance(call, dict) and not _has_id(call) and (i, pi) not in out:
                name = str(call.get("name"))
                new = f"synth_{name}_{_digest(turn.rec.id, ref.field, ref.k, ref.j)}"
                out[(i, pi)] = new
                nxt = turns[i + 1] if i + 1 < len(turns) else None
                if nxt is not None and nxt.role == "user":
                    for qi, (q, _r) in enumerate(nxt.parts):
                        resp = _field(q, "functionResponse")
                        if (
                            isinstance(resp, dict)
                            and not _has_id(resp)
                            and resp.get("name") == call.get("name")
                            and (i + 1, qi) not in out
                        ):
                            out[(i + 1, qi)] = new
                            break
            resp = _field(part, "functionResponse")
            if isinstance(resp, dict) and not _has_id(resp) and (i, pi) not in out:
                name = str(resp.get("name"))
                out[(i, pi)] = f"synth_orph_{name}_{_digest(turn.rec.id, ref.field, ref.k, ref.j)}"
    return out


def _has_id(obj: dict[str, Any]) -> bool:
    v = obj.get("id")
    return isinstance(v, str) and v != ""


def _digest(*parts: Any) -> str:
    """A stable id part from where the call is written (not where it is in the history, so
    an edit elsewhere does not change it)."""
    text = "|".join(str(p) for p in parts)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class SentIds(dict[tuple[str, str], str]):
    """`sent_id` of (raw id, name) pairs, each worked out once (Gemini CLI 0.61 writes a
    call's id again in its result and in the user record that answers it): `ids[raw, name]`."""

    def __missing__(self, key: tuple[str, str]) -> str:
        got = self[key] = sent_id(*key)
        return got

    def of(self, raw_id: str, name: Any) -> str:
        """`sent_id(raw_id, name)`, kept where the name is a string (another is not kept:
        it may not be hashable)."""
        return self[raw_id, name] if type(name) is str else sent_id(raw_id, name)


def sent_id(raw_id: str, name: Any) -> str:
    """The id Gemini CLI sends: `stripToolCallIdPrefixes` cuts a leading `name__`."""
    if "__" not in raw_id:
        return raw_id  # the usual id: no prefix to cut
    label = (name.strip() if isinstance(name, str) else "") or "generic_tool"
    n = len(label)
    return raw_id[n + 2 :] if raw_id.startswith(label) and raw_id.startswith("__", n) else raw_id
