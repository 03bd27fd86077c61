"""Gemini CLI chats: `~/.gemini/tmp/<project>/chats/session-*.jsonl` (0.61: an event log of
records, `$set` updates and `$rewindTo` lines) and the older single-object `session-*.json`.

Normal form: the history Gemini CLI sends when it resumes the chat (see history.py): each
sent turn's parts become blocks (`functionCall` -> tool_use, `functionResponse` -> tool_result,
ids as sent, without the `name__` prefix; thoughts -> thinking blocks, not sent), consecutive
turns of one role form one message. Records Gemini CLI does not send (info/error records, its
own context, rewound records) are hidden rows. Every block's `src` is the line of the record
holding it (`{"path": ...}` in a `.json` chat).

Gemini CLI 0.61 stores each tool result twice (in `toolCalls[].result` and in the user record
it sends) and sends both on resume; on resume it also copies a response back into the
`toolCalls[].result` of the call with the same id. So a repaired turn is written in the one
shape Gemini CLI sends once and keeps that way: the turn's responses in one user record
holding only `functionResponse` parts, with the ids Gemini CLI sends (no `name__` prefix, so
the copy-back does not match), and no `result` left in the turn's `toolCalls[]` (the same
responses, kept in the report when a copy is dropped). Records of untouched turns keep their
bytes; a rewritten record keeps its keys and their order, and lines are compact as Gemini CLI
writes them.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ...errors import ExportRefused
from ...gcpause import gc_paused
from ...jsonio import JsonStyle, compact, detect_style, dumps, strip_bom, text_of
from ...model import (
    LAZY,
    TEXT,
    TIMED_META,
    TOOL_RESULT,
    TOOL_USE,
    Block,
    LazyMessage,
    Message,
    Session,
    new_bid,
    new_uid,
    reserve_bids,
    result_text,
)
from ...place import Place as FilePlace  # (a finding's; `Place` is a record's)
from ..base import (
    Adapter,
    Export,
    JsonlLine,
    Probe,
    each_line_value,
    own_type,
    records_merged,
)
from ..probe import split_lines
from ..registry import register

if TYPE_CHECKING:
    from ...files import FileText
from .history import (
    MESSAGE_TYPES,
    PartRef,
    Place,
    Rec,
    Replay,
    SentIds,
    Turn,
    Usual,
    curated_out,
    is_sent_part,
    is_thought,
    record_problem,
    record_turns,
    replay_lines,
    sent_id,
    stable_ids,
)


# A value never changed once made, but not frozen: a frozen dataclass's __init__ costs four
# times a plain one's, and a load makes one per block.
@dataclass(slots=True, unsafe_hash=True)
class Recs:
    """Message origin: the records whose turns form it."""

    keys: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class BadLine:
    line: int  # index into the lines


@dataclass
class GeminiState:
    held: bytes | FileText  # the bytes read, or the large file they are read from again
    kind: str  # "jsonl" | "json"
    replay: Replay
    lines: Sequence[JsonlLine] = field(default_factory=list)
    newline: str = "\n"
    trailing_newline: bool = True
    bom: bool = False
    doc: Any = None
    style: JsonStyle | None = None  # a .json chat's
    loaded: list[Message] = field(default_factory=list)
    # noted as each block is made (a message's blocks are made when first asked for):
    part_of: dict[int, Any] = field(default_factory=dict)  # bid -> the part it was read from
    # bid -> the id as written, for a block whose part carried its own id (the tool id
    # at load is the loaded block's, `original`)
    raw_id: dict[int, str] = field(default_factory=dict)
    skipped: dict[int, set[int]] = field(default_factory=dict)  # rec key -> unsent content[k]
    session_id: str = ""
    ids: set[str] = field(default_factory=set)  # while writing: ids taken, new ones included
    _made: _Loaded | None = None
    _keys: tuple[dict[int, Rec], dict[int, int]] | None = None

    @property
    def recs(self) -> dict[int, Rec]:
        """key -> record (live and removed)."""
        return self._by_key()[0]

    @property
    def pos(self) -> dict[int, int]:
        """key -> position in the conversation."""
        return self._by_key()[1]

    def _by_key(self) -> tuple[dict[int, Rec], dict[int, int]]:
        got = self._keys
        if got is None:
            replay = self.replay
            recs = {rec.key: rec for rec in replay.live}
            pos = {key: n for n, key in enumerate(recs)}
            recs.update((rec.key, rec) for rec in replay.removed)
            got = self._keys = (recs, pos)
        return got

    @property
    def original(self) -> dict[int, Block]:
        """bid -> block as loaded (every loaded message's blocks: made when first asked
        for, by a writer)."""
        return self._loaded().original

    @property
    def rec_bids(self) -> dict[int, list[int]]:
        """rec key -> the bids of its blocks, in message order."""
        return self._loaded().rec_bids

    @property
    def rec_msgs(self) -> dict[int, set[int]]:
        """rec key -> the uids of the loaded messages made of it."""
        return self._loaded().rec_msgs

    def _loaded(self) -> _Loaded:
        got = self._made
        if got is None:
            got = self._made = _Loaded.of(self.loaded)
        return got

    @property
    def data(self) -> bytes:
        """The bytes read; a large file's are not held (`Probe.held`: files.FileText) but
        read again, checked, when asked for (an unedited export)."""
        held = self.held
        return held if isinstance(held, bytes) else held.read_all()


@dataclass
class _Loaded:
    """What a writer compares the messages with: the loaded messages' blocks and records."""

    original: dict[int, Block]
    rec_bids: dict[int, list[int]]
    rec_msgs: dict[int, set[int]]

    @classmethod
    def of(cls, loaded: list[Message]) -> _Loaded:
        original: dict[int, Block] = {}
        rec_bids: dict[int, list[int]] = {}
        rec_msgs: dict[int, set[int]] = {}
        for m in loaded:
            if isinstance(m.origin, Recs):
                for k in m.origin.keys:
                    rec_msgs.setdefault(k, set()).add(m.uid)
            for b in m.blocks:
                original[b.bid] = b
                if isinstance(b.origin, PartRef):
                    rec_bids.setdefault(b.origin.rec, []).append(b.bid)
        return cls(original, rec_bids, rec_msgs)


def parse_time(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    return _time_of(value)


# (the last one kept: a turn answered by its own record's results is a user message of
# that record's time, read just after its model message's)
@lru_cache(maxsize=1)
def _time_of(text: str) -> float | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


# -------------------------------------------------------------------- detection


def _is_header(obj: Any) -> bool:
    return (
        isinstance(obj, dict)
        and isinstance(obj.get("sessionId"), str)
        and isinstance(obj.get("projectHash"), str)
    )


def _is_message_record(obj: Any) -> bool:
    return (
        isinstance(obj, dict)
        and isinstance(obj.get("id"), str)
        and isinstance(obj.get("type"), str)
        and obj["type"] in MESSAGE_TYPES
        and ("content" in obj or "toolCalls" in obj)
        and "message" not in obj
        and "uuid" not in obj
    )


def _gemini_like(obj: Any) -> bool:
    return (
        _is_header(obj)
        or _is_message_record(obj)
        or (isinstance(obj, dict) and isinstance(obj.get("$set"), dict))
        or (isinstance(obj, dict) and isinstance(obj.get("$rewindTo"), str))
    )


def _is_document(doc: Any) -> bool:
    """The single-object chat: a header that holds the messages."""
    return isinstance(doc, dict) and isinstance(doc.get("messages"), list) and _is_header(doc)


class GeminiCliAdapter(Adapter):
    name = "gemini-cli"
    default_target = "gemini-cli"  # the client as released judges what it sends

    def detect(self, probe: Probe) -> int:
        if probe.kind == "json":
            doc = probe.doc
            if _is_document(doc):
                msgs = [m for m in doc["messages"][:20] if isinstance(m, dict)]
                if not msgs or any(_is_message_record(m) for m in msgs):
                    return 95
                return 0
            if _is_header(doc) or _is_message_record(doc):  # a chat of one line
                return 90
            return 0
        seen = like = 0
        first = None
        messages = False
        for line in probe.lines:
            if line.blank or line.error is not None:
                continue
            seen += 1
            obj = line.obj
            if first is None:
                first = obj
            if _gemini_like(obj):
                like += 1
                messages = messages or _is_message_record(obj) or _is_header(obj)
            if seen >= 50:
                break
        if not seen or not messages:
            return 0
        if _is_header(first) and like * 2 >= seen:
            return 100
        return 80 if like * 10 >= seen * 9 else 0

    # ---------------------------------------------------------------- load
    def load(self, probe: Probe) -> Session:
        if probe.kind == "json" and _is_document(probe.doc):
            state = GeminiState(
                held=probe.data,
                kind="json",
                replay=replay_lines([(None, probe.doc)]),
                doc=probe.doc,
                style=detect_style(probe.data),
                bom=probe.bom,
            )
        else:
            if probe.kind == "jsonl":
                lines, newline, trailing = probe.lines, probe.newline, probe.trailing_newline
            else:  # a chat of one line
                lines, newline, trailing = split_lines(strip_bom(probe.data)[0])
            # each line's value read once and replayed as read; the usual one (an object)
            # with no other test
            replay = replay_lines(enumerate(each_line_value(lines)), unread(lines))
            state = GeminiState(
                held=probe.held(),  # after the pass over the lines: a large file is not kept
                kind="jsonl",
                replay=replay,
                lines=lines,
                newline=newline,
                trailing_newline=trailing,
                bom=probe.bom,
            )
        replay = state.replay
        state.session_id = str(replay.meta.get("sessionId") or "")
        messages = _build(state, replay)
        state.loaded = list(messages)
        return self.session(probe.path, messages, state, state.session_id)

    def merged(
        self, first: Message, second: Message, moved: Sequence[Block] | None = None
    ) -> Message:
        """Named by the records of both (`origin`, `raw`), in file order (a move: as was)."""
        a, b = first.origin, second.origin
        if moved is not None or not (isinstance(a, Recs) and isinstance(b, Recs)):
            return first
        both = records_merged(replace(first, origin=a.keys), replace(second, origin=b.keys))
        raw = both.raw if isinstance(both.raw, list) else [both.raw]  # (a list, as loaded)
        return replace(both, origin=Recs(both.origin), raw=raw)

    def stamped(self, session: Session, made: Collection[int]) -> Session:
        return stamped(session, made)

    # ---------------------------------------------------------------- write
    def write(self, session: Session) -> Export:
        """The bytes, and every record (line, or item of the messages list) the written file
        deletes or rewrites, whole as read: a rewritten record may lose a stored copy of a
        response, a `name__` id prefix or a part histview does not show."""
        state: GeminiState = session.state
        msgs = session.messages
        with gc_paused():
            plan = _render(msgs, state)
            if state.kind == "json":
                return _write_document(plan, state)
            return _write_lines(plan, msgs, state)


def unread(lines: Sequence[JsonlLine]) -> Callable[[int], bool]:
    """Whether the line at an index is left out of the replay: blank, or not JSON."""
    return lambda i: lines[i].error is not None or lines[i].blank


# -------------------------------------------------------------------- building messages


def _src(state: GeminiState, rec: Rec, ref: PartRef | None = None) -> dict[str, Any]:
    home = rec.places[-1]
    if state.kind == "jsonl" and home.index is None:
        return {"line": home.at_line + 1}
    path = "/" + "/".join(state.replay.array_key[home.line]) + f"/{home.index}"
    if ref is not None:
        if ref.field == "content":
            path += "/content" + (f"/{ref.k}" if ref.k is not None else "")
        elif ref.field == "thought":
            path += f"/thoughts/{ref.k}"
        elif ref.field == "call":
            path += f"/toolCalls/{ref.k}"
        else:
            path += f"/toolCalls/{ref.k}/result" + (f"/{ref.j}" if ref.j is not None else "")
    if state.kind == "jsonl":  # a record inside a messages array: the line, then the place in it
        return {"line": home.at_line + 1, "path": path}
    return {"path": path}


def _build(state: GeminiState, replay: Replay) -> list[Message]:
    # turns of the live records, and the rows of records that are not sent (shown in
    # place, not part of the request): for each live record, its row or where its turns end
    turns: list[Turn] = []
    rows: list[int | Message] = []
    lines = state.kind == "jsonl"
    cut = SentIds()
    odd = False  # turns of the long way: the ids they lack and their curation to work out
    for rec in replay.live:
        if lines and rec.places[-1].index is None:
            usual = _usual_turns(rec, cut)
            if usual is not None:
                turns += usual
                rows.append(len(turns))
                continue
        problem = record_problem(rec.obj)
        if problem is not None:
            rows.append(_malformed_record(state, rec, problem))
            continue
        built = record_turns(rec)
        if isinstance(built, str):
            rows.append(_hidden_record(state, rec, built))
            continue
        turns += built
        rows.append(len(turns))
        odd = odd or bool(built)
    # (a usual turn holds no part without an id and no empty part: neither pass changes
    # a history of usual turns alone)
    ids = stable_ids(turns) if odd else {}
    if odd:
        curated_out(turns)

    messages: list[Message] = []
    group: list[Turn] = []
    pending_aside: list[Message] = []

    def close() -> None:
        if group:
            messages.append(_message(state, group))
            group.clear()
        if pending_aside:
            messages.extend(pending_aside)
            pending_aside.clear()

    start = 0
    for row in rows:
        if not isinstance(row, int):
            pending_aside.append(row)
            if not group:
                close()
            continue
        for ti in range(start, row):
            t = turns[ti]
            if t.facts is None and t.blocks is None:
                blocks = t.blocks = _turn_blocks(state, t, ti, ids)
                sent = [b for b in blocks if b.type != "thinking"]
                if t.hidden is None and not sent and blocks:
                    t.hidden = "only thoughts, which Gemini CLI strips before sending"
            if t.hidden is not None:
                pending_aside.append(_hidden_turn(state, t, _blocks_of(state, t)))
                if not group:
                    close()
                continue
            if group and group[-1].role != t.role:
                close()
            group.append(t)
        start = row
    close()
    return _with_removed(state, messages, replay)


def _turn_blocks(
    state: GeminiState, t: Turn, ti: int, ids: dict[tuple[int, int], str]
) -> list[Block]:
    rec = t.rec
    out: list[Block] = []
    home = rec.places[-1]
    # a record on a line of its own: its blocks share one `{"line"}` (read only, as every src)
    line_src = {"line": home.at_line + 1} if state.kind == "jsonl" and home.index is None else None
    part_of = state.part_of
    for pi, (part, ref) in enumerate(t.parts):
        if isinstance(part, dict) and part.get("text") == "" and not is_sent_part(part):
            if ref.field == "content" and ref.k is not None:
                state.skipped.setdefault(rec.key, set()).add(ref.k)
            continue
        src = line_src if line_src is not None else _src(state, rec, ref)
        block = _part_block(part, ref, src, state, ids.get((ti, pi), "") if ids else "")
        part_of[block.bid] = part
        out.append(block)
    return out


def _usual_turns(rec: Rec, cut: SentIds) -> list[Turn] | None:
    """The turns of a record on a line of its own in the usual shape, read in one pass over
    it: a gemini record whose content is a string (not empty, or with calls), without
    thoughts, each call with an id and its result none, a string or function responses
    with ids; a user record of function responses with ids. Their blocks are made as
    `record_turns` and `_turn_blocks` make them (`_usual_blocks`), without the parts between
    and without a pass of `stable_ids` or `curated_out` over them: a usual turn holds no
    empty part and no call or response without an id. None: another record (the long way;
    tests/formats/test_gemini_usual.py holds the two equal). `cut`: the ids as sent, kept
    for the load."""
    obj = rec.obj
    rtype = obj.get("type")
    if rtype == "user":
        content = obj.get("content")
        if type(content) is not list or not content:
            return None
        answers = _usual_answers(content, [], cut)
        if answers is None:
            return None
        return [Turn("user", rec, [], None, None, Usual((), tuple(answers), len(answers)))]
    thoughts = obj.get("thoughts")
    if rtype != "gemini" or not (thoughts is None or (type(thoughts) is list and not thoughts)):
        return None
    content = obj.get("content")
    if not (content is None or type(content) is str):
        return None
    calls = obj.get("toolCalls")
    if calls is None:
        if not content:
            return None
        calls = ()
    elif type(calls) is not list or not (calls or content):
        return None
    ids: list[str] = []
    got: list[str] | None = []
    for tc in calls:
        if type(tc) is not dict:
            return None
        tid = tc.get("id")
        if type(tid) is not str or not tid:
            return None
        if "__" in tid:
            tid = cut.of(tid, tc.get("name"))
        ids.append(tid)
        result = tc.get("result")
        if type(result) is list:
            got = _usual_answers(result, got, cut)
            if got is None:
                return None
        elif type(result) is str:
            if result:
                got.append(tid)  # type: ignore[union-attr]
        elif result is not None:
            return None
    n = len(ids) + (1 if content else 0)
    blank = content.isspace() if content else False  # (`text_is_blank` of its text block)
    turns = [Turn("model", rec, [], None, None, Usual(tuple(ids), (), n, blank))]
    if got:
        turns.append(Turn("user", rec, [], None, None, Usual((), tuple(got), len(got))))
    return turns


def _usual_answers(parts: list[Any], out: list[str] | None, cut: SentIds) -> list[str] | None:
    """`out` with the ids as sent of function response parts with ids, and nothing else
    (the usual results, and the usual user record); None: another part among them."""
    if out is None:
        return None
    for p in parts:
        if type(p) is not dict:
            return None
        resp = p.get("functionResponse")
        if type(resp) is not dict:
            return None
        # (the usual part holds its response alone: no other key to look at)
        if len(p) > 1 and (p.get("thought") is not None or type(p.get("functionCall")) is dict):
            return None
        tid = resp.get("id")
        if type(tid) is not str or not tid:
            return None
        if "__" in tid:
            tid = cut.of(tid, resp.get("name"))
        out.append(tid)
    return out


def _blocks_of(state: GeminiState, t: Turn) -> list[Block]:
    """A turn's blocks: the long way's as made, a usual turn's made now."""
    if t.blocks is not None:
        return t.blocks
    return _usual_blocks(state, t)


def _usual_blocks(
    state: GeminiState, t: Turn, next_bid: Callable[[], int] = new_bid
) -> list[Block]:
    """The blocks of a usual turn (`_usual_turns`), each with the id its facts read, and
    its bid from `next_bid` (a `GeminiMessage`'s bids may be reserved before)."""
    rec, facts = t.rec, t.facts
    assert facts is not None
    obj = rec.obj
    key = rec.key
    src = {"line": rec.places[-1].at_line + 1}
    if obj["type"] == "user":
        return _response_blocks(state, obj["content"], key, None, src, facts.answers, next_bid)
    part_of, raw_id = state.part_of, state.raw_id
    calls = obj.get("toolCalls") or ()
    out: list[Block] = []
    if t.role == "model":
        content = obj.get("content")
        if content:
            b = Block(
                TEXT,
                {"type": TEXT, "text": content},
                None,
                None,
                False,
                src,
                PartRef(key, "content"),
                None,
                next_bid(),
            )
            part_of[b.bid] = {"text": content}
            out.append(b)
        for k, (tc, tid) in enumerate(zip(calls, facts.calls, strict=True)):
            call = {"id": tc["id"], "name": tc.get("name"), "args": tc.get("args")}
            bid = next_bid()
            raw_id[bid] = call["id"]
            out.append(_use(call, tid, src, PartRef(key, "call", k), bid))
            part_of[bid] = {"functionCall": call}
        return out
    ids = facts.answers
    at = 0  # the ids of the results before
    for k, tc in enumerate(calls):
        result = tc.get("result")
        if type(result) is list:
            if result:
                got = ids[at : at + len(result)]
                out += _response_blocks(state, result, key, k, src, got, next_bid)
                at += len(result)
        elif result:  # a string
            resp = {"id": tc["id"], "name": tc.get("name"), "response": {"output": result}}
            bid = next_bid()
            raw_id[bid] = resp["id"]
            out.append(_answer(resp, ids[at], src, PartRef(key, "result", k), bid))
            at += 1
            part_of[bid] = {"functionResponse": resp}
    return out


def _response_blocks(
    state: GeminiState,
    parts: list[Any],
    key: int,
    k: int | None,
    src: Any,
    ids: Sequence[str],
    next_bid: Callable[[], int],
) -> list[Block]:
    """The tool_result blocks of usual function response parts (`_usual_answers`), with
    the ids as sent, `ids`: of a user record's content (k None) or of
    `toolCalls[k].result`."""
    part_of, raw_id = state.part_of, state.raw_id
    out = []
    field, place = ("content", None) if k is None else ("result", k)
    for i, (p, tid) in enumerate(zip(parts, ids, strict=True)):
        resp = p["functionResponse"]
        bid = next_bid()
        raw_id[bid] = resp["id"]
        ref = PartRef(key, field, i, None) if k is None else PartRef(key, field, place, i)
        out.append(_answer(resp, tid, src, ref, bid))
        part_of[bid] = p
    return out


def _tool_id(bid: int, inner: dict[str, Any], state: GeminiState, made_up: str) -> str:
    """The id as Gemini CLI sends it (or the one it would make up), noted for the writer."""
    raw = inner.get("id")
    if isinstance(raw, str) and raw:
        state.raw_id[bid] = raw
        return raw if "__" not in raw else sent_id(raw, inner.get("name"))
    return made_up


def _part_block(
    part: Any, ref: PartRef, src: dict[str, Any], state: GeminiState, made_up: str
) -> Block:
    if not isinstance(part, dict):
        return Block("unknown", part, src=src, origin=ref)
    thought = part.get("thought")
    if thought is not None and is_thought(part):
        text = part.get("text")
        return Block(
            "thinking",
            {"type": "thinking", "thinking": text if isinstance(text, str) else ""},
            src=src,
            origin=ref,
        )
    call = part.get("functionCall")
    if isinstance(call, dict):
        return _call_block(state, call, src, ref, made_up)
    resp = part.get("functionResponse")
    if isinstance(resp, dict):
        return _result_block(state, resp, src, ref, made_up)
    if isinstance(part.get("text"), str):
        return Block(TEXT, {"type": TEXT, "text": part["text"]}, src=src, origin=ref)
    kind = next(iter(part), "unknown") if part else "unknown"
    return Block(own_type(kind, "gemini"), part, src=src, origin=ref)


def _call_block(
    state: GeminiState, call: dict[str, Any], src: Any, ref: PartRef, made_up: str
) -> Block:
    """The tool_use block of a `functionCall`."""
    bid = new_bid()
    return _use(call, _tool_id(bid, call, state, made_up), src, ref, bid)


def _use(call: dict[str, Any], tid: str, src: Any, ref: PartRef, bid: int) -> Block:
    name = call.get("name")
    if not isinstance(name, str):
        name = "?"
    data = {"type": TOOL_USE, "id": tid, "name": name, "input": call.get("args")}
    return Block(TOOL_USE, data, tid, name, False, src, ref, None, bid)


def _result_block(
    state: GeminiState, resp: dict[str, Any], src: Any, ref: PartRef, made_up: str
) -> Block:
    """The tool_result block of a `functionResponse`."""
    bid = new_bid()
    return _answer(resp, _tool_id(bid, resp, state, made_up), src, ref, bid)


def _answer(resp: dict[str, Any], tid: str, src: Any, ref: PartRef, bid: int) -> Block:
    response = resp.get("response")
    if type(response) is dict:
        is_error = "error" in response
        text = response.get("output")  # the usual response (`_response_text`'s first)
        if type(text) is not str:
            text = _response_text(response)
    else:
        is_error = isinstance(response, dict) and "error" in response
        text = _response_text(response)
    name = resp.get("name")
    if not isinstance(name, str):
        name = None
    data = {"type": TOOL_RESULT, "tool_use_id": tid, "content": text, "is_error": is_error}
    return Block(TOOL_RESULT, data, tid, name, is_error, src, ref, None, bid)


def _response_text(response: Any) -> str:
    if isinstance(response, dict):
        for key in ("output", "error", "content"):
            text = response.get(key)
            if isinstance(text, str):
                return text
    if isinstance(response, str):
        return response
    try:
        return text_of(response)
    except (TypeError, ValueError, RecursionError):
        return str(response)


def _meta(rec: Rec) -> dict[str, Any]:
    t = parse_time(rec.obj.get("timestamp"))
    return {"timestamp": t} if t is not None else {}


_new = object.__new__


class GeminiMessage(LazyMessage):
    """The message of consecutive usual turns of one role (`_usual_turns`), whose blocks
    are made when first asked for (`LazyMessage`): the loader reads its tool ids, plain
    shape and block counts from the records. Equal to the message of the same turns made at
    load (tests/formats/test_gemini_lazy.py)."""

    __slots__ = ("_state", "_turns", "_bid0", "timestamp", "_meta")
    _state: GeminiState
    _turns: tuple[Turn, ...]
    _bid0: int  # the first of its blocks' bids, where `answers` reserved them (0: not)
    # its time a field (read by the analysis of every message), its `meta` made from it
    # when first asked for; nothing writes a time into the dict (an edit makes a copy)
    timestamp: float | None
    _meta: Any
    meta = TIMED_META

    def _make_blocks(self) -> tuple[Block, ...]:
        state = self._state
        b0 = self._bid0
        next_bid = iter(range(b0, b0 + self.block_counts()[0])).__next__ if b0 else new_bid
        out: list[Block] = []
        for t in self._turns:
            out += _usual_blocks(state, t, next_bid)
        return tuple(out)

    def answers(self, skip: int = 0) -> list[tuple[int, str | None, int, FilePlace]] | None:
        """Its results from its records, as `_usual_blocks` makes them (each result block
        of a user turn, on its record's line), its blocks not made; their bids reserved
        now: a chat that Gemini CLI 0.61 answered twice has each second copy found
        (`analysis._copies`). The first `skip` left out (a turn of them: no place made)."""
        if self.made():
            return None
        b0 = self._bid0
        if not b0:
            b0 = self._bid0 = reserve_bids(self.block_counts()[0])
        out: list[tuple[int, str | None, int, FilePlace]] = []
        bi = 0
        for t in self._turns:
            f = t.facts
            assert f is not None
            if t.role == "user":  # (a model turn's blocks are a text and calls)
                ids = f.answers
                if skip >= len(ids):
                    skip -= len(ids)
                    bi += len(ids)
                    continue
                place = FilePlace(t.rec.places[-1].at_line + 1)
                for tid in ids:
                    if skip:
                        skip -= 1
                    else:
                        out.append((bi, tid, b0 + bi, place))
                    bi += 1
            else:
                bi += f.n
        return out

    def _make_src(self) -> dict[str, Any] | None:
        return {"line": self._turns[0].rec.places[-1].at_line + 1}

    @property
    def origin(self) -> Any:
        """Its records (`Recs`), named when first asked for."""
        origin = self._origin
        if origin is LAZY:
            origin = self._origin = Recs(tuple(rec.key for rec in _records(self._turns)))
        return origin

    @origin.setter
    def origin(self, value: Any) -> None:
        self._origin = value

    def calls(self) -> list[tuple[str | None, str | None]]:
        """Its calls from its records, as `_usual_blocks` makes them (a model turn's
        `toolCalls`: the id as sent, the name or "?"), its blocks not made: a chat that
        Gemini CLI 0.61 answered twice names each call in a finding (`analysis._copies`)."""
        if self.made():
            return super().calls()
        out: list[tuple[str | None, str | None]] = []
        for t in self._turns:
            if t.role != "model":
                continue  # (a user turn's blocks are results)
            assert t.facts is not None
            for tc, tid in zip(t.rec.obj.get("toolCalls") or (), t.facts.calls, strict=True):
                name = tc.get("name")
                out.append((tid, name if isinstance(name, str) else "?"))
        return out


def _message(state: GeminiState, group: list[Turn]) -> Message:
    first = group[0]
    role = "assistant" if first.role == "model" else "user"
    if len(group) == 1:
        raw = [first.rec.obj]
        if first.facts is not None:
            return _unmade(state, group, role, raw)
    elif len(group) == 2 and first.rec is not group[1].rec:
        # the usual user message: a record's responses and the next record's
        raw = [first.rec.obj, group[1].rec.obj]
        if first.facts is not None and group[1].facts is not None:
            return _unmade(state, group, role, raw)
    else:
        raw = [rec.obj for rec in _records(group)]
        if all(t.facts is not None for t in group):
            return _unmade(state, group, role, raw)
    if len(group) == 1:
        blocks = tuple(_blocks_of(state, first))
    else:
        every: list[Block] = []
        for t in group:
            every += _blocks_of(state, t)
        blocks = tuple(every)
    origin = Recs(tuple(rec.key for rec in _records(group)))
    return Message(role, blocks, raw, _meta(first.rec), False, None, _src(state, first.rec), origin)


def _records(group: Sequence[Turn]) -> list[Rec]:
    """The records of a message's turns, each once, in order (a dict: a group of many
    records stays linear)."""
    return list({t.rec.key: t.rec for t in group}.values())


def _unmade(state: GeminiState, group: list[Turn], role: str, raw: list[Any]) -> GeminiMessage:
    """The message of usual turns, its blocks to come; its facts read as `Message.tool_ids`
    reads them from the blocks (a usual turn holds either results or none)."""
    if len(group) == 1:  # the usual message: one turn
        f = group[0].facts
        assert f is not None
        calls, answers, n = f.calls, f.answers, f.n
        results = n if answers else 0
        plain = n > 0 and not f.blank
    else:
        every_call: list[str] = []  # (lists, not tuples grown by `+=`: linear in turns)
        every_answer: list[str] = []
        n = results = 0
        plain = True
        other = False  # a block before that is not a result
        for t in group:
            f = t.facts
            assert f is not None
            if f.answers:
                if other:
                    plain = False
                every_answer += f.answers
                results += f.n
            elif f.n:
                every_call += f.calls
                other = True
                if f.blank:
                    plain = False
            n += f.n
        calls, answers = tuple(every_call), tuple(every_answer)
        plain = plain and n > 0
    # (`LazyMessage.unmade` spelt out, its meta left to come, `model.TIMED_META`: no call
    # and no dict for each of 100k messages)
    m: GeminiMessage = _new(GeminiMessage)
    m.role = role
    m._blocks = LAZY
    m.raw = raw
    m._meta = LAZY
    m.hidden = False
    m.malformed = None
    m._src = LAZY
    m._origin = LAZY  # (`GeminiMessage.origin`)
    m.uid = new_uid()
    m._tool_ids = (calls, answers)
    m._plain_shape = plain
    m._counts = (n, results)
    m._state = state
    m._turns = tuple(group)
    m._bid0 = 0
    m.timestamp = parse_time(group[0].rec.obj.get("timestamp"))
    return m


def _hidden_turn(state: GeminiState, t: Turn, blocks: list[Block]) -> Message:
    msg = Message(
        role="assistant" if t.role == "model" else "user",
        blocks=tuple(blocks),
        raw=t.rec.obj,
        # still in Gemini CLI's history, left out of each request (`extractCuratedHistory`)
        meta={**_meta(t.rec), "hidden_reason": t.hidden, "curated_out": True},
        hidden=True,
        src=_src(state, t.rec),
        origin=Recs((t.rec.key,)),
    )
    return msg


def _display_blocks(state: GeminiState, rec: Rec) -> list[Block]:
    """Blocks of a record that is not sent (shown only): its text."""
    content = rec.obj.get("content")
    out = []
    parts = content if isinstance(content, list) else [content]
    for k, p in enumerate(parts):
        text = p if isinstance(p, str) else (p.get("text") if isinstance(p, dict) else None)
        if isinstance(text, str) and text:
            ref = PartRef(rec.key, "content", k if isinstance(content, list) else None)
            b = Block(TEXT, {"type": TEXT, "text": text}, src=_src(state, rec, ref), origin=ref)
            state.part_of[b.bid] = p
            out.append(b)
    return out


def _hidden_record(state: GeminiState, rec: Rec, why: str) -> Message:
    rtype = rec.obj.get("type")
    msg = Message(
        role="user" if rtype == "user" else ("assistant" if rtype == "gemini" else None),
        blocks=tuple(_display_blocks(state, rec)),
        raw=rec.obj,
        meta={**_meta(rec), "hidden_reason": why},
        hidden=True,
        src=_src(state, rec),
        origin=Recs((rec.key,)),
    )
    return msg


def _malformed_record(state: GeminiState, rec: Rec, why: str) -> Message:
    rtype = rec.obj.get("type")
    msg = Message(
        role="user" if rtype == "user" else ("assistant" if rtype == "gemini" else None),
        blocks=(),
        raw=rec.obj,
        malformed=why,
        src=_src(state, rec),
        origin=Recs((rec.key,)),
    )
    return msg


def _with_removed(state: GeminiState, messages: list[Message], replay: Replay) -> list[Message]:
    """Rewound records and lines that are not records, shown where they are in the file."""
    extra: list[tuple[int, Message]] = []
    for rec in replay.removed:
        msg = _hidden_record(state, rec, rec.removed or "not in the conversation")
        extra.append((_line_of(rec.anchor), msg))
    for idx, why in replay.bad:
        extra.append((idx, _bad_line(state, idx, why)))
    if state.kind == "jsonl":
        for idx, line in enumerate(state.lines):
            if line.error is not None:
                extra.append((idx, _bad_line(state, idx, f"not JSON: {line.error}")))
    if not extra:
        return messages
    extra.sort(key=lambda e: e[0])
    out: list[Message] = []
    k = 0
    for m in messages:
        at = _message_line(state, m)
        while k < len(extra) and at is not None and extra[k][0] < at:
            out.append(extra[k][1])
            k += 1
        out.append(m)
    out.extend(e[1] for e in extra[k:])
    return out


def _line_of(place: Place) -> int:
    return place.line if place.line is not None else -1


def _message_line(state: GeminiState, m: Message) -> int | None:
    if isinstance(m.origin, Recs) and m.origin.keys:
        return _line_of(state.recs[m.origin.keys[0]].anchor)
    return None


def _bad_line(state: GeminiState, idx: int, why: str) -> Message:
    line = state.lines[idx]
    return Message(
        role=None,
        blocks=(),
        raw=line.obj if line.error is None else line.raw.decode("utf-8", "replace"),
        malformed=f"line {line.lineno}: {why}",
        src={"line": line.lineno},
        origin=BadLine(idx),
    )


# -------------------------------------------------------------------- rendering edits


@dataclass
class Plan:
    """What to write: records rewritten (key -> new object) or deleted (None), new records
    (after record key, object), bad lines kept."""

    rewrite: dict[int, dict[str, Any] | None] = field(default_factory=dict)
    insert: list[tuple[int | None, dict[str, Any]]] = field(default_factory=list)
    bad_kept: set[int] = field(default_factory=set)


def _render(msgs: list[Message], state: GeminiState) -> Plan:
    state.ids = {r.id for r in state.recs.values()}  # new record ids are picked against these
    loaded = {m.uid: m for m in state.loaded}
    present: dict[int, tuple[Message, Block]] = {}
    cur_rec_msgs: dict[int, set[int]] = {}
    for m in msgs:
        for b in m.blocks:
            present[b.bid] = (m, b)
            if isinstance(b.origin, PartRef):
                cur_rec_msgs.setdefault(b.origin.rec, set()).add(m.uid)
        if isinstance(m.origin, Recs):
            for k in m.origin.keys:
                cur_rec_msgs.setdefault(k, set()).add(m.uid)
    by_uid = {m.uid: m for m in msgs}
    dirty = {m.uid for m in msgs if loaded.get(m.uid) is not m}
    dirty |= set(loaded) - by_uid.keys()

    # a record shared by a dirty message makes every message holding it dirty; so does a
    # call turn whose calls have no id in the file (their ids are then written on both sides)
    pair: dict[int, int] = {}
    live_msgs = [m for m in msgs if m.live]
    for call_msg, next_msg in zip(live_msgs, live_msgs[1:], strict=False):
        if call_msg.role == "assistant" and any(
            x.type == TOOL_USE and x.bid not in state.raw_id for x in call_msg.blocks
        ):
            pair[call_msg.uid], pair[next_msg.uid] = next_msg.uid, call_msg.uid
    dirty_recs: set[int] = set()
    todo = list(dirty)
    while todo:
        uid = todo.pop()
        if uid in pair and pair[uid] not in dirty:
            dirty.add(pair[uid])
            todo.append(pair[uid])
        keys: set[int] = set()
        now = by_uid.get(uid) or loaded.get(uid)
        if now is not None and isinstance(now.origin, Recs):
            keys.update(now.origin.keys)
        old = loaded.get(uid)
        if old is not None and isinstance(old.origin, Recs):
            keys.update(old.origin.keys)
        if now is not None:
            keys.update(b.origin.rec for b in now.blocks if isinstance(b.origin, PartRef))
        for k in keys - dirty_recs:
            dirty_recs.add(k)
            for other in state.rec_msgs.get(k, set()) | cur_rec_msgs.get(k, set()):
                if other not in dirty:
                    dirty.add(other)
                    todo.append(other)

    plan = Plan()
    plan.bad_kept = {m.origin.line for m in msgs if isinstance(m.origin, BadLine)}
    names = {b.tool_id: b.name for m in msgs for b in m.blocks if b.type == TOOL_USE and b.name}
    assigned: dict[int, list[Block]] = {}  # user record key -> its blocks, in message order
    new_recs: dict[int, dict[str, Any]] = {}  # temporary negative keys -> new record
    new_after: dict[int, int | None] = {}
    extra_model: dict[int, list[Block]] = {}  # gemini record key -> new blocks for its content

    prev_keys: tuple[int, ...] = ()
    for m in msgs:
        if m.uid in dirty and m.live and m.role == "user":
            _assign_user(m, state, assigned, new_recs, new_after, prev_keys)
        elif m.uid in dirty and m.live and m.role == "assistant":
            new = [b for b in m.blocks if not isinstance(b.origin, PartRef)]
            if new:
                rec_keys = m.origin.keys if isinstance(m.origin, Recs) else ()
                gem = [k for k in rec_keys if state.recs[k].obj.get("type") == "gemini"]
                if not gem:
                    raise ExportRefused("a new model message cannot be written in a Gemini chat")
                extra_model.setdefault(gem[0], []).extend(new)
        if isinstance(m.origin, Recs) and m.origin.keys and not m.hidden:
            prev_keys = m.origin.keys

    live_uids = {m.uid for m in msgs if m.live}
    present_uids = set(by_uid)
    for key in sorted(dirty_recs):
        rec = state.recs[key]
        if rec.removed is not None:
            continue
        in_live = bool((state.rec_msgs.get(key, set()) | cur_rec_msgs.get(key, set())) & live_uids)
        if rec.obj.get("type") == "gemini" and record_problem(rec.obj) is None:
            plan.rewrite[key] = _render_gemini(rec, state, present, extra_model.get(key, []))
        elif rec.obj.get("type") == "user" and record_problem(rec.obj) is None:
            if key in assigned or in_live or not (cur_rec_msgs.get(key, set()) & present_uids):
                plan.rewrite[key] = _render_user(rec, state, assigned.get(key, []), names)
        elif not (state.rec_msgs.get(key, set()) & present_uids):
            plan.rewrite[key] = None  # a malformed or unsent record the user dropped
    for tmp, obj in new_recs.items():
        blocks = assigned.get(tmp, [])
        if blocks:
            obj["content"] = [_user_part(b, state, names) for b in blocks]
            plan.insert.append((new_after[tmp], obj))
    return plan


def _assign_user(
    m: Message,
    state: GeminiState,
    assigned: dict[int, list[Block]],
    new_recs: dict[int, dict[str, Any]],
    new_after: dict[int, int | None],
    prev_keys: tuple[int, ...],
) -> None:
    """Which user record each block of a user message is written in (`_user_places`)."""
    places = _user_places(m, state, prev_keys)
    home = -(len(new_recs) + 1)  # the message's responses record, where one is made
    if None in places:
        after = _anchor(state, prev_keys)
        anchor_rec = state.recs[after] if after is not None else None
        new_recs[home] = _new_record(state, anchor_rec, m)
        new_after[home] = after
    for b, dest in zip(m.blocks, places, strict=True):
        assigned.setdefault(home if dest is None else dest, []).append(b)


def _user_places(m: Message, state: GeminiState, prev_keys: tuple[int, ...]) -> list[int | None]:
    """The user record each block of a user message is written in (None: the responses
    record made for it, right after the record before the message): results go to the
    message's responses record (made when there is none), other blocks stay in theirs."""
    keys: list[int] = []
    if isinstance(m.origin, Recs):
        keys.extend(m.origin.keys)
    for b in m.blocks:
        if isinstance(b.origin, PartRef) and b.origin.field == "content":
            keys.append(b.origin.rec)
    users = [k for k in dict.fromkeys(keys) if state.recs[k].obj.get("type") == "user"]
    others = {
        b.origin.rec
        for b in m.blocks
        if b.type != TOOL_RESULT and isinstance(b.origin, PartRef) and b.origin.field == "content"
    }
    home = next(
        (
            k
            for k in users
            if _responses_only(state.recs[k].obj) and not _between(state, prev_keys, k, others)
        ),
        None,
    )
    made = home is None and any(b.type == TOOL_RESULT for b in m.blocks)
    places: list[int | None] = []
    for b in m.blocks:
        ref = b.origin
        if b.type == TOOL_RESULT and (home is not None or made):  # results have a home
            places.append(home)
        elif isinstance(ref, PartRef) and ref.field == "content" and ref.rec in users:
            places.append(ref.rec)
        elif home is not None or made:
            places.append(home)
        elif users:
            places.append(users[0])
        else:
            raise ExportRefused(f"a new {b.type} block has no user record to go into")
    return places


def _anchor(state: GeminiState, prev_keys: tuple[int, ...]) -> int | None:
    """The record a new responses record is written after: the last of the message before."""
    return max(prev_keys, key=lambda k: state.pos.get(k, -1)) if prev_keys else None


def stamped(session: Session, made: Collection[int]) -> Session:
    """`session` with each user message a fix made or edited stamped as it is read back
    from the written chat: its first record's time, the responses record made for it
    taking the time of the record it is written after (`_new_record`)."""
    state = session.state
    if not made or not isinstance(state, GeminiState):
        return session
    out = session.messages
    prev_keys: tuple[int, ...] = ()
    for i, m in enumerate(out):
        if m.uid in made and m.live and m.role == "user":
            t = _written_time(m, state, prev_keys)
            if t != m.timestamp:
                if out is session.messages:
                    out = list(out)
                out[i] = m.with_timestamp(t)
        if isinstance(m.origin, Recs) and m.origin.keys and not m.hidden:
            prev_keys = m.origin.keys
    return session if out is session.messages else session.copy_with(out)


def _written_time(m: Message, state: GeminiState, prev_keys: tuple[int, ...]) -> float | None:
    try:
        places = _user_places(m, state, prev_keys)
    except ExportRefused:  # not written: the export says why
        return m.timestamp
    anchor = _anchor(state, prev_keys)
    first_pos, first_ts = None, None
    for key in dict.fromkeys(places):
        if key is None:  # right after the anchor, with its time
            pos = state.pos.get(anchor, -1) + 0.5 if anchor is not None else -0.5
            rec = state.recs[anchor] if anchor is not None else None
        else:
            pos, rec = state.pos.get(key, -1), state.recs[key]
        if first_pos is None or pos < first_pos:
            first_pos, first_ts = pos, rec.obj.get("timestamp") if rec is not None else None
    if first_pos is None:
        return m.timestamp
    return parse_time(first_ts)


def _between(state: GeminiState, prev_keys: tuple[int, ...], key: int, others: set[int]) -> bool:
    """Whether responses written into record `key` would not open the message: a model
    record lies between the message before and `key` (a turn Gemini CLI leaves out, whose
    responses were sent with this message: the two model turns would become neighbours and
    be left out together), or a record holding the message's other blocks (its text would
    come before the results)."""
    start = max((state.pos.get(k, -1) for k in prev_keys), default=-1)
    end = state.pos.get(key, -1)
    return any(
        r.obj.get("type") == "gemini" or r.key in others for r in state.replay.live[start + 1 : end]
    )


def _responses_only(obj: dict[str, Any]) -> bool:
    content = obj.get("content")
    return (
        isinstance(content, list)
        and bool(content)
        and all(
            isinstance(p, dict) and isinstance(p.get("functionResponse"), dict) for p in content
        )
    )


def _new_record(state: GeminiState, after: Rec | None, m: Message) -> dict[str, Any]:
    seed = f"histview:{state.session_id}:{after.id if after else ''}:responses"
    rid = str(uuid.uuid5(uuid.NAMESPACE_URL, seed))
    n = 2
    while rid in state.ids:
        rid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{seed}:{n}"))
        n += 1
    state.ids.add(rid)
    ts = after.obj.get("timestamp") if after is not None else None
    obj: dict[str, Any] = {"id": rid}
    if ts is not None:
        obj["timestamp"] = ts
    obj["type"] = "user"
    obj["content"] = []
    return obj


def _changed_id(b: Block, state: GeminiState) -> bool:
    loaded = state.original.get(b.bid)
    return b.tool_id != (loaded.tool_id if loaded is not None else None)


def _user_part(b: Block, state: GeminiState, names: dict[str | None, str]) -> Any:
    part = state.part_of.get(b.bid)
    if b.type == TOOL_RESULT:
        if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
            fr = part["functionResponse"]
            if fr.get("id") == b.tool_id:
                return part
            return {**part, "functionResponse": {**fr, "id": b.tool_id}}
        text = result_text(b.data)
        return {
            "functionResponse": {
                "id": b.tool_id,
                "name": names.get(b.tool_id) or b.name or "unknown_tool",
                "response": {"error": text} if b.is_error else {"output": text},
            }
        }
    if part is not None and state.original.get(b.bid) is b:
        return part
    if b.type == TEXT:
        text = b.data if isinstance(b.data, str) else (b.data or {}).get("text", "")
        if isinstance(part, dict):
            return {**part, "text": text}
        return {"text": text}
    if part is not None:
        return part
    raise ExportRefused(f"a new {b.type} block cannot be written in a Gemini chat")


def _render_user(
    rec: Rec, state: GeminiState, blocks: list[Block], names: dict[str | None, str]
) -> dict[str, Any] | None:
    if not blocks:
        return None
    obj = rec.obj
    content = obj.get("content")
    if (
        not isinstance(content, list)
        and len(blocks) == 1
        and state.original.get(blocks[0].bid) is blocks[0]
        and isinstance(blocks[0].origin, PartRef)
        and blocks[0].origin.rec == rec.key
    ):
        return obj  # string content, untouched
    parts = [_user_part(b, state, names) for b in blocks]
    if isinstance(content, list):
        parts += [content[k] for k in sorted(state.skipped.get(rec.key, ()))]
    if (
        isinstance(content, list)
        and len(parts) == len(content)
        and all(a is b for a, b in zip(parts, content, strict=True))
    ):
        return obj
    return {**obj, "content": parts}


def _render_gemini(
    rec: Rec, state: GeminiState, present: dict[int, tuple[Message, Block]], extra: list[Block]
) -> dict[str, Any] | None:
    obj = rec.obj
    mine = [present[bid][1] for bid in state.rec_bids.get(rec.key, ()) if bid in present]
    if not mine and not extra and state.rec_bids.get(rec.key):
        return None
    renamed = {
        state.raw_id[b.bid]: b.tool_id or ""
        for b in mine
        if b.type == TOOL_USE and b.bid in state.raw_id and _changed_id(b, state)
    }
    new = dict(obj)
    content = obj.get("content")
    in_content = [b for b in mine if b.origin.field == "content"]
    if isinstance(content, list):
        keep = {b.origin.k: b for b in in_content}
        parts = []
        for k, p in enumerate(content):
            if k in keep:
                parts.append(_model_part(keep[k], p, state))
            elif k in state.skipped.get(rec.key, ()) or not _is_block_part(rec, k, state):
                parts.append(p)
        parts += [_model_part(b, None, state) for b in extra]
        new["content"] = parts
    elif isinstance(content, str) or content is None or extra:
        texts = [_text_of(b) for b in in_content + extra if b.type == TEXT]
        if content is not None or texts:
            joined = "".join(texts) if texts else ""
            if joined != (content if isinstance(content, str) else ""):
                new["content"] = joined
    calls = obj.get("toolCalls")
    if isinstance(calls, list):
        call_blocks = {b.origin.k: b for b in mine if b.origin.field == "call"}
        had_calls = any(_is_call_ref(state, bid) for bid in state.rec_bids.get(rec.key, ()))
        out = []
        for k, tc in enumerate(calls):
            if had_calls and k not in call_blocks:
                continue  # the call was dropped
            entry = {kk: vv for kk, vv in tc.items() if kk != "result"}
            b = call_blocks.get(k)
            raw = tc.get("id")
            if b is not None and (_changed_id(b, state) or b.bid not in state.raw_id):
                entry["id"] = _raw_for(raw, tc.get("name"), b.tool_id or "")
            elif b is None and isinstance(raw, str) and raw in renamed:
                # an entry whose call is read from the content (no block of its own); an
                # entry with its own block keeps the id that block has (the call written
                # twice under one id: the rename is the later one's only)
                entry["id"] = _raw_for(raw, tc.get("name"), renamed[raw])
            out.append(entry)
        new["toolCalls"] = out
    return new


def _is_call_ref(state: GeminiState, bid: int) -> bool:
    b = state.original.get(bid)
    return b is not None and isinstance(b.origin, PartRef) and b.origin.field == "call"


def _is_block_part(rec: Rec, k: int, state: GeminiState) -> bool:
    for bid in state.rec_bids.get(rec.key, ()):
        b = state.original.get(bid)
        if b is not None and b.origin.field == "content" and b.origin.k == k:
            return True
    return False


def _raw_for(raw: Any, name: Any, new_id: str) -> str:
    """A call id to write for the sent id `new_id`: with the `name__` prefix the old id had,
    or, for a call that had no id, the prefix Gemini CLI 0.61 gives every call (so that its
    response, written with the bare id, pairs on send and is not copied back on resume)."""
    if isinstance(raw, str) and raw:
        if sent_id(raw, name) != raw:
            return raw[: len(raw) - len(sent_id(raw, name))] + new_id
        return new_id
    label = name.strip() if isinstance(name, str) and name.strip() else "generic_tool"
    return f"{label}__{new_id}"


def _text_of(b: Block) -> str:
    return b.data if isinstance(b.data, str) else (b.data or {}).get("text", "")


def _model_part(b: Block, part: Any, state: GeminiState) -> Any:
    if part is not None and state.original.get(b.bid) is b and not _changed_id(b, state):
        if b.type != TOOL_USE or b.bid in state.raw_id:
            return part
    if b.type == TOOL_USE and isinstance(part, dict) and isinstance(part.get("functionCall"), dict):
        fc = part["functionCall"]
        return {
            **part,
            "functionCall": {**fc, "id": _raw_for(fc.get("id"), fc.get("name"), b.tool_id or "")},
        }
    if b.type == TEXT:
        if isinstance(part, dict):
            return {**part, "text": _text_of(b)}
        return {"text": _text_of(b)}
    if part is not None:
        return part
    raise ExportRefused(f"a new {b.type} block cannot be written in a Gemini chat")


# -------------------------------------------------------------------- writing


def _write_lines(plan: Plan, msgs: list[Message], state: GeminiState) -> Export:
    line_new: dict[int, Any] = {}  # line index -> new object for the whole line, None = drop
    arrays: dict[int | None, dict[int | None, Any]] = {}  # line -> {index -> new record/None}
    after_line: dict[int | None, list[dict[str, Any]]] = {}
    after_item: dict[tuple[int | None, int | None], list[dict[str, Any]]] = {}
    for key, obj in plan.rewrite.items():
        rec = state.recs[key]
        if obj is not None and (obj is rec.obj or obj == rec.obj):
            continue
        targets = rec.places if obj is None else [rec.places[-1]]
        for place in targets:
            if place.index is None:
                line_new[place.at_line] = obj
            else:
                arrays.setdefault(place.line, {})[place.index] = obj
    for after, obj in plan.insert:
        at, index = _insert_at(after, state)
        if index is None:
            after_line.setdefault(at, []).append(obj)
        else:
            after_item.setdefault((at, index), []).append(obj)
    item_lines = {at for at, _i in after_item}
    out: list[bytes] = [compact(o) for o in after_line.get(-1, ())]
    bad_lines = {idx for idx, _why in state.replay.bad} | {
        i for i, ln in enumerate(state.lines) if ln.error is not None
    }
    dropped: list[dict[str, Any]] = []
    for idx, line in enumerate(state.lines):
        if idx in bad_lines and idx not in plan.bad_kept:
            pass  # a malformed message the user dropped: in the report as read already
        elif idx in line_new:
            if line_new[idx] is not None:
                out.append(compact(line_new[idx]))
            outcome = "deleted" if line_new[idx] is None else "rewritten"
            dropped.append({"line": line.lineno, "outcome": outcome, "record": line.obj})
        elif idx in arrays or idx in item_lines:
            out.append(
                compact(_with_array(line.obj, state.replay.array_key[idx], idx, arrays, after_item))
            )
            if idx in arrays:
                dropped.append({"line": line.lineno, "outcome": "rewritten", "record": line.obj})
        else:
            out.append(line.raw)
        out.extend(compact(o) for o in after_line.get(idx, ()))
    if state.trailing_newline and out:
        out.append(b"")  # (joined with the rest: the body is not copied to add it)
    body = state.newline.encode().join(out)
    return Export((b"\xef\xbb\xbf" if state.bom else b"") + body, dropped)


def _insert_at(after: int | None, state: GeminiState) -> tuple[int | None, int | None]:
    """Where a new record goes so that it comes right after record `after` in the
    conversation (first when None): (line to follow, or array item to follow)."""
    if after is not None:
        rec = state.recs[after]
        anchor = rec.anchor
        if anchor.index is not None or state.kind != "jsonl":
            return anchor.line, anchor.index
        return _last_line_of(rec, state), None
    live = state.replay.live
    if not live:
        return (-1, None) if state.kind == "jsonl" else (None, -1)
    anchor = live[0].anchor
    if anchor.index is None:
        return anchor.at_line - 1, None
    return anchor.line, anchor.index - 1


def _last_line_of(rec: Rec, state: GeminiState) -> int:
    """The last line holding `rec` such that no other record enters the conversation (and
    no rewind or reset happens) between its first line and that one: a record written
    there takes the same place in the conversation as right after the first line."""
    best = rec.anchor.at_line
    for place in rec.places[1:]:
        if place.index is not None:
            break
        for i in range(best + 1, place.at_line):
            obj = state.lines[i].obj
            if isinstance(obj, dict) and (
                (isinstance(obj.get("id"), str) and obj["id"] != rec.id)
                or "$rewindTo" in obj
                or i in state.replay.array_key
            ):
                return best
        best = place.at_line
    return best


def _with_array(
    obj: dict[str, Any],
    path: tuple[str, ...],
    line: int | None,
    arrays: dict[int | None, dict[int | None, Any]],
    after_item: dict[tuple[int | None, int | None], list[dict[str, Any]]],
) -> dict[str, Any]:
    items = obj
    for key in path:
        items = items[key]
    edits = arrays.get(line, {})
    new_items: list[Any] = list(after_item.get((line, -1), ()))
    for i, item in enumerate(items):
        if i in edits:
            if edits[i] is not None:
                new_items.append(edits[i])
        else:
            new_items.append(item)
        new_items.extend(after_item.get((line, i), ()))
    if len(path) == 1:
        return {**obj, path[0]: new_items}
    return {**obj, path[0]: {**obj[path[0]], path[1]: new_items}}


def _write_document(plan: Plan, state: GeminiState) -> Export:
    arrays: dict[int | None, dict[int | None, Any]] = {}
    after_item: dict[tuple[int | None, int | None], list[dict[str, Any]]] = {}
    for key, obj in plan.rewrite.items():
        rec = state.recs[key]
        if obj is not None and (obj is rec.obj or obj == rec.obj):
            continue
        targets = rec.places if obj is None else [rec.places[-1]]
        for place in targets:
            arrays.setdefault(None, {})[place.index] = obj
    for after, obj in plan.insert:
        after_item.setdefault(_insert_at(after, state), []).append(obj)
    doc = _with_array(state.doc, ("messages",), None, arrays, after_item)
    items = state.doc["messages"]
    dropped = [
        {
            "path": f"/messages/{i}",
            "outcome": "deleted" if new is None else "rewritten",
            "record": items[i],
        }
        for i, new in sorted(arrays.get(None, {}).items())
    ]
    if state.style is None:
        raise ValueError("only a .json chat is written as a document")
    return Export(dumps(doc, state.style), dropped)


register(GeminiCliAdapter())
