"""opencode sessions: `opencode export` JSON `{info, messages: [{info, parts}]}`, or the
`session.json` + `messages.json` pair (the two halves of an export, as the share API stores
them) given as a folder or as the `messages.json` file.

A tool part carries its call and its result (`state.status` pending/running/completed/error).

Normal form: the messages opencode 1.18 sends to Anthropic when it resumes the session
(measured with the real client; docs/clients.md), except its own repairs, which the
engine reports (a pending/running part is sent with the error result "[Tool execution was
interrupted]"). opencode reads messages in (created time, id) order and parts in id order;
a user message sends its text (not empty, not ignored), file, compaction and subtask parts;
an assistant message that failed (other than an abort with content) is left out; the others
are cut into steps at `step-start` parts, each step an assistant message with its text,
reasoning and tool calls, then a user message with the results of its completed and errored
tool parts; empty text and blank unsigned reasoning are dropped (a message left empty goes),
reasoning from another model than the one resuming is sent as text, unsigned reasoning of
the same model is dropped by the Anthropic provider (which can leave an assistant message
empty: refused); consecutive messages of one role are merged (results first) and tool calls
go after the other blocks of an assistant message. Left-out messages are hidden rows;
bookkeeping parts (step-start/finish, patch, snapshot, ...) are not blocks but stay in the
file. The next resume is assumed to use the last Anthropic model the session names.

Export edits the document in place of the loaded one: every block goes back to the part it
came from, by its (message, part) place; a synthetic result for a pending/running part sets
that part's state to `error` with histview's text and an end time (keeping `input`,
`metadata`, `time.start`); a dropped block drops its part (a dropped message drops the
unsigned reasoning parts it was sent for, which have no block); an id change sets `callID`; a
message whose blocks are all gone (and that no other message draws from) is dropped.
Messages nobody touched are the same objects, and the document is written in its own JSON
style.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ExportRefused, InputError
from ..jsonio import JsonStyle, StyleRead, dumps, loads
from ..model import (
    LAZY,
    TEXT,
    TIMED_META,
    TOOL_RESULT,
    TOOL_USE,
    Block,
    LazyMessage,
    Message,
    Session,
    new_uid,
)
from .base import Adapter, Export, Probe, own_type, records_merged, shown, type_name
from .registry import register
from .regroup import Rules, regrouped, uses_after_results_first

OPEN_STATES = frozenset({"pending", "running"})
ROLES = frozenset({"user", "assistant"})
INTERRUPTED = "[Tool execution was interrupted]"  # what opencode sends for an open part
COMPACTED_OUTPUT = "[Old tool result content cleared]"
# User parts opencode sends as a fixed text.
USER_PART_TEXT = {
    "compaction": "What did we do so far?",
    "subtask": "The following tool was executed by the user",
}


# A value never changed once made, but not frozen: a frozen dataclass's __init__ costs four
# times a plain one's, and a load makes one per block.
@dataclass(slots=True, unsafe_hash=True)
class PartRef:
    msg: int  # index in the messages list of the file
    part: int  # index in that message's parts (in the file)
    result: bool = False  # the derived tool_result of a tool part


@dataclass
class OpencodeState:
    doc: Any  # the loaded document (dict export or list of messages)
    entries: list[Any]  # the messages list inside it
    base: str  # JSON pointer of the messages list ("" or "/messages")
    data: bytes  # the file as read, for an unedited export
    loaded: list[Message]
    # message uid -> parts it stands for without a block (see _Piece.ghosts)
    ghosts: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    _made: tuple[dict[int, Block], set[tuple[int, int]]] | None = None
    _style: JsonStyle | None = None  # `style`, read when first asked for (a check writes none)

    style = StyleRead()

    @property
    def original(self) -> dict[int, Block]:
        """bid -> block as loaded (every loaded message's blocks, made when first asked for:
        a write)."""
        return self._loaded_blocks()[0]

    @property
    def view_parts(self) -> set[tuple[int, int]]:
        """The (message, part) places of the parts that are blocks."""
        return self._loaded_blocks()[1]

    def _loaded_blocks(self) -> tuple[dict[int, Block], set[tuple[int, int]]]:
        got = self._made
        if got is None:
            original = {b.bid: b for m in self.loaded for b in m.blocks}
            refs = [b.origin for b in original.values() if isinstance(b.origin, PartRef)]
            got = self._made = (original, {(ref.msg, ref.part) for ref in refs})
        return got


def _messages_of(doc: Any) -> tuple[list[Any], str] | None:
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        info = doc.get("info")
        if isinstance(info, dict) and _id_with(info, "ses_"):
            return doc["messages"], "/messages"
        if _looks_like_entries(doc["messages"]):
            return doc["messages"], "/messages"
        return None
    if isinstance(doc, list) and _looks_like_entries(doc):
        return doc, ""
    return None


def _id_with(info: dict[str, Any], prefix: str) -> bool:
    ident = info.get("id")
    return isinstance(ident, str) and ident.startswith(prefix)


def _looks_like_entries(items: list[Any]) -> bool:
    """A list of `{info, parts}` whose infos are opencode messages."""
    sample = [x for x in items[:20] if isinstance(x, dict)]
    if not sample:
        return False
    hits = 0
    for x in sample:
        info = x.get("info")
        if isinstance(info, dict) and isinstance(x.get("parts"), list) and "role" in info:
            if _id_with(info, "msg_") or "sessionID" in info:
                hits += 1
    return hits * 2 > len(sample)


class OpencodeAdapter(Adapter):
    name = "opencode"
    default_target = "opencode"

    def detect(self, probe: Probe) -> int:
        if probe.kind != "json":
            return 0
        found = _messages_of(probe.doc)
        if found is None:
            return 0
        return 100 if isinstance(probe.doc, dict) else 90

    def claim_folder(self, folder: str) -> str | None:
        path = os.path.join(folder, "messages.json")
        if os.path.isfile(path) and os.path.isfile(os.path.join(folder, "session.json")):
            return path
        return None

    # ---------------------------------------------------------------- load
    def load(self, probe: Probe) -> Session:
        found = _messages_of(probe.doc)
        if found is None:
            raise InputError(
                probe.given, "not an opencode export: no messages list of {info, parts}"
            )
        entries, base = found
        order = _send_order(entries)  # sorted once: the model and the messages read it
        model = _resume_model(entries, order)
        pieces: list[Message | _Piece] = []
        add = pieces.append
        usual = _usual_assistant if USUAL else None
        for i in order:
            entry = entries[i]
            if usual is None or not usual(i, entry, base, model, pieces):
                _load_entry(i, entry, base, model, add)
        ghosts: dict[int, list[tuple[int, int]]] = {}
        messages = _merge(pieces, ghosts)
        state = OpencodeState(
            doc=probe.doc,
            entries=entries,
            base=base,
            data=probe.data,
            loaded=list(messages),
            ghosts=ghosts,
        )
        return self.session(probe.path, messages, state, _label(probe))

    def block_time(self, session: Session, block: Block) -> float | None:
        """A tool part's `state.time`: `start` for the call, `end` for its result (ms)."""
        state = session.state
        ref = block.origin
        if not isinstance(ref, PartRef) or not isinstance(state, OpencodeState):
            return None
        try:
            part = state.entries[ref.msg]["parts"][ref.part]
            t = part["state"]["time"]["end" if ref.result else "start"]
        except (IndexError, KeyError, TypeError):
            return None
        n = _num(t)
        return None if n is None else n / 1000

    def merged(
        self, first: Message, second: Message, moved: Sequence[Block] | None = None
    ) -> Message:
        return records_merged(first, second) if moved is None else first

    def kept_apart(self, first: Message, second: Message) -> str | None:
        if first.role == "assistant" and any(b.type == TOOL_USE for b in first.blocks):
            return (
                "opencode sends the results of a step's tool calls right after it, so the "
                "message after the calls stays a message of its own"
            )
        return None

    def stamped(self, session: Session, made: Collection[int]) -> Session:
        """The messages around those a fix made, grouped as the written export reads back
        (`regroup`, as `_merge` groups pieces): messages of one role in a row are one
        (results first, tool calls last), except after an assistant's tool calls; a message
        opencode does not send parts none."""
        state = session.state
        if not isinstance(state, OpencodeState):
            return session
        rules = Rules(
            runs=lambda m: [(m.role, list(m.blocks))],
            joins=_joins,
            ordered=uses_after_results_first,
            through_hidden=True,
            keeps=_kept,
            time=lambda blocks, before: _results_time(state, blocks, before),
        )
        return regrouped(session, made, rules)

    # ---------------------------------------------------------------- write
    def write(self, session: Session) -> Export:
        """The bytes, and every message of the file the written one leaves out or rewrites,
        whole as read (a dropped part's ids and times, a closed part's old state), for the
        report."""
        state: OpencodeState = session.state
        msgs = session.messages
        written: dict[int, Any] = {}
        doc = _rebuild(msgs, state, written)
        dropped = [
            {
                "path": f"{state.base}/{i}",
                "outcome": "deleted" if i not in written else "rewritten",
                "record": entry,
            }
            for i, entry in enumerate(state.entries)
            if written.get(i) is not entry
        ]
        return Export(dumps(doc, state.style), dropped)


# -------------------------------------------------------------------- loading helpers

# How a part is sent (the kind of an `_Piece` item), besides TEXT (the part's own text),
# TOOL_USE, TOOL_RESULT, "thinking", "redacted_thinking", "file" and the USER_PART_TEXT types
SPACE = "space"  # the empty text of a message with signed reasoning, sent as " "
GHOST = "ghost"  # (`_reasoning`) a reasoning part opencode keeps and the provider drops
_NO_TIME: Any = object()  # a tool part's state without a time
# An assistant message in the usual shape is read in one pass (`_usual_assistant`); False:
# every message the long way (tests/formats/test_opencode_usual.py)
USUAL = True
_STATUSES = OPEN_STATES | {"completed", "error"}


@dataclass(slots=True)
class _Piece:
    """One message as opencode's conversion emits it, before consecutive ones merge: the
    parts it sends (`items`: each part's index and how it is sent), and what a check reads
    of them without blocks. An assistant piece holds no result, a piece of results nothing
    else."""

    role: str
    entry: int
    raw: Any
    parts: list[Any]  # its message's parts
    path: str  # its message's pointer
    timestamp: float | None
    items: list[tuple[int, str]]
    calls: tuple[str, ...]  # the callIDs of its tool_use blocks, in order
    answers: tuple[str, ...]  # of its tool_result blocks
    opens: tuple[str, ...]  # of its pending and running tool parts
    blank: bool  # it sends a blank text
    # parts it stands for without a block: unsigned reasoning opencode sends and the
    # Anthropic provider drops (a piece of only these is sent empty); they go from the file
    # with the message
    ghosts: list[tuple[int, int]]

    def blocks(self) -> list[Block]:
        i, parts, path = self.entry, self.parts, self.path
        return [_block(i, k, parts[k], path, kind) for k, kind in self.items]

    def src(self) -> dict[str, Any]:
        if self.answers:  # a piece of results: where its first one is
            return {"path": f"{self.path}/parts/{self.items[0][0]}/state"}
        return {"path": self.path}


class PartsMessage(LazyMessage):
    """The message of one or more consecutive pieces of one role (`_merge`), whose blocks
    are made when first asked for (`LazyMessage`): the loader reads its tool ids, plain
    shape, block counts and open calls from the parts. Equal to what its blocks say once
    made (tests/formats/test_opencode_lazy.py)."""

    __slots__ = ("_pieces", "open_calls", "timestamp", "_meta")
    _pieces: tuple[_Piece, ...]
    open_calls: tuple[str, ...]  # the callIDs of its pending and running tool parts
    # its time a slot, its `meta` made from it when first asked for (`model.TIMED_META`)
    timestamp: float | None
    _meta: Any
    meta = TIMED_META

    def _make_blocks(self) -> tuple[Block, ...]:
        blocks = [b for p in self._pieces for b in p.blocks()]
        if self.role == "assistant":  # the tool calls after the other blocks
            blocks = [b for b in blocks if b.type != TOOL_USE] + [
                b for b in blocks if b.type == TOOL_USE
            ]
        return tuple(blocks)

    def _make_src(self) -> dict[str, Any] | None:
        return self._pieces[0].src()


_new = object.__new__


def _label(probe: Probe) -> str:
    doc = probe.doc
    info = doc.get("info") if isinstance(doc, dict) else None
    if info is None:
        side = os.path.join(os.path.dirname(probe.path), "session.json")
        try:
            with open(side, "rb") as fh:
                info = loads(fh.read())
        except (OSError, ValueError, RecursionError):
            info = None
    if isinstance(info, dict):
        title = info.get("title")
        ident = info.get("id")
        return title if isinstance(title, str) else ident if isinstance(ident, str) else ""
    return ""


def _info(entry: Any) -> dict[str, Any]:
    info = entry.get("info") if isinstance(entry, dict) else None
    return info if isinstance(info, dict) else {}


def _send_order(entries: list[Any]) -> list[int]:
    """opencode reads a session's messages by (created time, id); file order when a message
    lacks either (an export is already in that order)."""
    keys = []
    ordered = True  # the keys so far are in file order: no sort
    last: tuple[float, str] | None = None
    for i, entry in enumerate(entries):
        info = entry.get("info") if isinstance(entry, dict) else None
        if not isinstance(info, dict):
            return list(range(len(entries)))
        t = info.get("time")
        when = t.get("created") if isinstance(t, dict) else None
        if type(when) is not float:  # (`_num`, without a call for an int)
            when = float(when) if type(when) is int else _num(when)
        mid = info.get("id")
        if when is None or not isinstance(mid, str):
            return list(range(len(entries)))
        key = (when, mid)
        if ordered and last is not None and key < last:
            ordered = False
        last = key
        keys.append((when, mid, i))
    if ordered:
        return list(range(len(entries)))
    return [k[2] for k in sorted(keys)]


def _part_order(parts: list[Any]) -> list[int]:
    """opencode reads parts by id; file order when a part has no string id."""
    ids = [p.get("id") if isinstance(p, dict) else None for p in parts]
    if all(isinstance(x, str) for x in ids):
        key: Callable[[int], str] = ids.__getitem__  # type: ignore[assignment]
        return sorted(range(len(parts)), key=key)  # stable: ties in file order
    return list(range(len(parts)))


def _model_of(info: dict[str, Any]) -> str | None:
    if info.get("role") == "user":
        m = info.get("model")
        if isinstance(m, dict):
            return f"{m.get('providerID')}/{m.get('modelID')}"
        return None
    if "providerID" in info or "modelID" in info:
        return f"{info.get('providerID')}/{info.get('modelID')}"
    return None


def _resume_model(entries: list[Any], order: list[int]) -> str | None:
    """The Anthropic model the next resume sends to: the last one the session names
    (`order`: the entries' send order)."""
    for i in reversed(order):
        m = _model_of(_info(entries[i]))
        if m is not None and m.startswith("anthropic/"):
            return m
    return None


def _load_entry(
    i: int, entry: Any, base: str, model: str | None, add: Callable[[Message | _Piece], None]
) -> None:
    """The pieces of a message (`add`ed), or the message shown in its place."""
    path = f"{base}/{i}"
    if not isinstance(entry, dict):
        return add(_malformed(i, entry, path, f"message is {type_name(entry)}, not an object"))
    info, parts = entry.get("info"), entry.get("parts")
    if not isinstance(info, dict):
        return add(_malformed(i, entry, path, "message has no info object"))
    role = info.get("role")
    if not isinstance(role, str) or role not in ROLES:
        why = f"message role is {shown(role)}, not user or assistant"
        return add(_malformed(i, entry, path, why))
    if not isinstance(parts, list):
        return add(_malformed(i, entry, path, "message parts is not a list", role))
    read = _read_parts(parts)
    if isinstance(read, str):
        return add(_malformed(i, entry, path, read, role))
    order, signed = read
    created = _num(
        (info.get("time") or {}).get("created") if isinstance(info.get("time"), dict) else None
    )
    ts = created / 1000 if created is not None else None
    if role == "user":
        piece = _user_piece(i, entry, parts, order, path, ts)
        return add(piece if piece is not None else _hidden(i, entry, path, order, ts))
    if _skipped_by_opencode(info, parts):
        return add(_hidden(i, entry, path, order, ts))
    different = model is None or _model_of(info) != model
    made = 0
    step: list[int] = []
    for k in order:
        if parts[k]["type"] == "step-start":
            made += _step(i, entry, parts, step, path, ts, different, signed, add)
            step = []
        else:
            step.append(k)
    made += _step(i, entry, parts, step, path, ts, different, signed, add)
    if not made:  # nothing in it opencode sends (empty texts): shown, and kept in the file
        why = "nothing in it that opencode sends (it leaves the message out)"
        add(_hidden(i, entry, path, order, ts, why))
    return None


def _read_parts(parts: list[Any]) -> tuple[Sequence[int], bool] | str:
    """The parts' indexes in the order opencode reads them (by id; file order when a part
    has no string id), and whether one is signed reasoning; or what makes the message
    unreadable (its first part that does)."""
    signed = False
    ascending = True  # the ids are strings in file order so far
    last = ""
    for k, part in enumerate(parts):
        ptype = part.get("type") if isinstance(part, dict) else None
        if not isinstance(ptype, str):
            return f"part {k} has no type"
        if ptype == "tool":
            state = part.get("state")
            if not isinstance(part.get("callID"), str) or not isinstance(state, dict):
                return f"tool part {k} has no callID or state"
            if "time" in state and not isinstance(state["time"], dict):
                return (
                    f"tool part {k} has a state.time that is {type_name(state['time'])}, "
                    "not an object"
                )
            status = state.get("status")
            if not isinstance(status, str) or status not in _STATUSES:
                return f"tool part {k} has unknown status {shown(status)}"
        elif ptype == "text" or ptype == "reasoning":
            text = part.get("text", "")
            if not isinstance(text, str):
                return f"{ptype} part {k} has a text that is {type_name(text)}"
            signed = signed or (ptype == "reasoning" and _signature(part) is not None)
        if ascending:
            pid = part.get("id")
            if type(pid) is str and last <= pid:
                last = pid
            else:
                ascending = False
    if ascending:
        return range(len(parts)), signed
    return _part_order(parts), signed


def _user_piece(
    i: int, entry: dict[str, Any], parts: list[Any], order: Sequence[int], path: str, ts: Any
) -> _Piece | None:
    """What opencode sends of a user message (None: nothing): its texts (not empty, not
    ignored), files and compaction and subtask parts."""
    items: list[tuple[int, str]] = []
    blank = False
    for k in order:
        part = parts[k]
        ptype = part["type"]
        if ptype == "text":
            text = part.get("text")
            if not isinstance(text, str) or text == "" or part.get("ignored"):
                continue
            blank = blank or text.isspace()
            items.append((k, TEXT))
        elif ptype == "file":
            if part.get("mime") in ("text/plain", "application/x-directory"):
                continue  # its content was sent as a text part already
            items.append((k, "file"))
        elif ptype in USER_PART_TEXT:
            items.append((k, ptype))
    if not items:
        return None
    return _Piece("user", i, entry, parts, path, ts, items, (), (), (), blank, [])


def _anthropic(part: dict[str, Any]) -> dict[str, Any]:
    meta = part.get("metadata")
    anth = meta.get("anthropic") if isinstance(meta, dict) else None
    return anth if isinstance(anth, dict) else {}


def _signature(part: dict[str, Any]) -> Any:
    return _anthropic(part).get("signature")


def _step(
    i: int,
    entry: dict[str, Any],
    parts: list[Any],
    ks: list[int],
    path: str,
    ts: float | None,
    different: bool,
    signed: bool,
    add: Callable[[Message | _Piece], None],
) -> int:
    """One step of an assistant message: its assistant piece and its results piece
    (`add`ed); how many pieces."""
    items: list[tuple[int, str]] = []
    calls: list[str] = []
    opens: list[str] = []
    results: list[tuple[int, str]] = []
    answers: list[str] = []
    ghosts: list[tuple[int, int]] = []
    end: float | None = None  # the results' last end time
    blank = False
    sent = 0  # parts that survive opencode's own filter (empty text, blank reasoning)
    for k in ks:
        part = parts[k]
        ptype = part["type"]
        if ptype == "tool":
            call_id = part["callID"]
            items.append((k, TOOL_USE))
            calls.append(call_id)
            state = part["state"]
            if state.get("status") in OPEN_STATES:
                opens.append(call_id)  # no result: opencode sends an interrupted one
            else:
                results.append((k, TOOL_RESULT))
                answers.append(call_id)
                t = state.get("time")
                e = _num(t.get("end")) if isinstance(t, dict) else None
                if e is not None and (end is None or e > end):
                    end = e
        elif ptype == "text":
            text = part.get("text")
            if not isinstance(text, str):
                continue
            if text == "":
                if not signed:
                    continue
                items.append((k, SPACE))
                blank = True
            else:
                items.append((k, TEXT))
                blank = blank or text.isspace()
        elif ptype == "reasoning":
            how = _reasoning(part, different)
            if how is None:
                continue
            if how is GHOST:
                sent += 1
                ghosts.append((i, k))
                continue
            items.append((k, how))
        else:
            continue
        sent += 1
    if not sent:
        return 0
    return _add_step(
        add, i, entry, parts, path, ts, items, calls, opens, blank, ghosts, results, answers, end
    )


def _add_step(
    add: Callable[[Message | _Piece], None],
    i: int,
    entry: dict[str, Any],
    parts: list[Any],
    path: str,
    ts: float | None,
    items: list[tuple[int, str]],
    calls: list[str],
    opens: list[str],
    blank: bool,
    ghosts: list[tuple[int, int]],
    results: list[tuple[int, str]],
    answers: list[str],
    end: float | None,
) -> int:
    """The pieces of a step that sends something (`_step`, `_usual_assistant`): the
    assistant piece, and the piece of its results (stamped with their last end) if any;
    how many pieces."""
    add(
        _Piece(
            "assistant",
            i,
            entry,
            parts,
            path,
            ts,
            items,
            tuple(calls),
            (),
            tuple(opens),
            blank,
            ghosts,
        )
    )
    if not results:
        return 1
    rts = end / 1000 if end is not None else ts
    raw = [parts[k] for k, _kind in results]
    add(_Piece("user", i, raw, parts, path, rts, results, (), tuple(answers), (), False, []))
    return 2


def _reasoning(part: dict[str, Any], different: bool) -> str | None:
    """How a reasoning part of an assistant message is sent (`_Piece.items` kind); GHOST:
    kept by opencode, then dropped by the Anthropic provider; None: dropped by opencode
    (`different`: its message's model is not the one resuming)."""
    text = part.get("text")
    if not isinstance(text, str):
        text = ""
    anth = _anthropic(part)
    if different:
        return TEXT if text.strip() else None
    if anth.get("signature") is not None:
        return "thinking"
    if anth.get("redactedData") is not None:
        return "redacted_thinking"
    return GHOST if text.strip() else None


def _usual_assistant(
    i: int, entry: Any, base: str, model: str | None, pieces: list[Message | _Piece]
) -> bool:
    """The pieces of an assistant message in the usual shape, read in one pass over its
    parts (`_load_entry`'s `_read_parts` and `_step`s at once), added to `pieces`; False,
    nothing added, for any other message (the long way reads it): the usual shape is an
    assistant message without an error whose parts are objects with string ids in order,
    each a readable tool part, a text part whose text is not empty, a reasoning part, or
    another type a step skips. tests/formats/test_opencode_usual.py holds it to the long
    way (`USUAL` False)."""
    if type(entry) is not dict:
        return False
    info = entry.get("info")
    parts = entry.get("parts")
    if (
        type(info) is not dict
        or info.get("role") != "assistant"
        or type(parts) is not list
        or not parts
        or info.get("error")
    ):
        return False
    t = info.get("time")
    created = _num(t.get("created") if isinstance(t, dict) else None)
    ts = created / 1000 if created is not None else None
    path = f"{base}/{i}"
    got: list[Message | _Piece] = []
    add = got.append
    different: bool | None = None  # read at the first reasoning part
    last = ""  # the id of the part before
    steps = enumerate(parts)  # one iterator: a step-start ends a step, the next goes on
    while True:
        # the step being read: as `_step`'s
        items: list[tuple[int, str]] = []
        calls: list[str] = []
        opens: list[str] = []
        results: list[tuple[int, str]] = []
        answers: list[str] = []
        ghosts: list[tuple[int, int]] = []
        end: float | None = None
        blank = False
        sent = 0
        read_all = True
        for k, part in steps:
            if type(part) is not dict:
                return False
            pid = part.get("id")
            if type(pid) is not str or pid < last:
                return False
            last = pid
            ptype = part.get("type")
            if ptype == "tool":
                call_id = part.get("callID")
                state = part.get("state")
                if type(call_id) is not str or type(state) is not dict:
                    return False
                status = state.get("status")
                if status == "completed" or status == "error":
                    tm = state.get("time", _NO_TIME)
                    if tm is not _NO_TIME:
                        if type(tm) is not dict:
                            return False
                        e = tm.get("end")
                        if type(e) is not float:  # (`_num`, without a call for an int)
                            e = float(e) if type(e) is int else _num(e)
                        if e is not None and (end is None or e > end):
                            end = e
                    results.append((k, TOOL_RESULT))
                    answers.append(call_id)
                elif status == "pending" or status == "running":
                    if "time" in state and type(state["time"]) is not dict:
                        return False
                    opens.append(call_id)
                else:
                    return False
                items.append((k, TOOL_USE))
                calls.append(call_id)
            elif ptype == "text":
                text = part.get("text", "")
                if type(text) is not str or text == "":
                    return False  # (an empty text is sent where a part is signed reasoning)
                items.append((k, TEXT))
                blank = blank or text.isspace()
            elif ptype == "reasoning":
                if type(part.get("text", "")) is not str:
                    return False
                if different is None:
                    different = model is None or _model_of(info) != model
                how = _reasoning(part, different)
                if how is None:
                    continue
                if how is GHOST:
                    ghosts.append((i, k))
                else:
                    items.append((k, how))
            elif ptype == "step-start":
                if sent:
                    read_all = False
                    break  # the step before is read: added below, the next read on from here
                continue
            elif type(ptype) is str:
                continue  # bookkeeping (step-finish, patch, ...): not sent
            else:
                return False
            sent += 1
        if sent:
            _add_step(
                add,
                i,
                entry,
                parts,
                path,
                ts,
                items,
                calls,
                opens,
                blank,
                ghosts,
                results,
                answers,
                end,
            )
        if read_all:
            break
    if not got:
        return False  # shown as a message opencode leaves out: the long way
    pieces += got
    return True


def _block(i: int, k: int, part: dict[str, Any], path: str, kind: str) -> Block:
    """The block part `k` of message `i` is sent as (`kind`: how, `_Piece.items`)."""
    if kind == TOOL_RESULT:
        return _result(i, k, part, path)
    src = {"path": f"{path}/parts/{k}"}
    ref = PartRef(i, k)
    if kind == TOOL_USE:
        call_id = part["callID"]
        name = part.get("tool") if isinstance(part.get("tool"), str) else "?"
        data = {"type": TOOL_USE, "id": call_id, "name": name, "input": part["state"].get("input")}
        return Block(TOOL_USE, data, tool_id=call_id, name=name, src=src, origin=ref)
    if kind == "file":
        return Block("file", part, src=src, origin=ref)
    if kind == "thinking":
        text = part.get("text") if isinstance(part.get("text"), str) else ""
        data = {"type": "thinking", "thinking": text, "signature": _signature(part)}
    elif kind == "redacted_thinking":
        data = {"type": "redacted_thinking", "data": _anthropic(part)["redactedData"]}
    else:
        text = " " if kind == SPACE else USER_PART_TEXT.get(kind) or part["text"]
        return Block(TEXT, {"type": TEXT, "text": text}, src=src, origin=ref)
    return Block(kind, data, src=src, origin=ref)


def _result(i: int, k: int, part: dict[str, Any], path: str) -> Block:
    """The tool_result opencode sends for a completed or errored part."""
    state = part["state"]
    call_id = part["callID"]
    if state.get("status") == "completed":
        t = state.get("time")
        compacted = isinstance(t, dict) and t.get("compacted")
        content = COMPACTED_OUTPUT if compacted else state.get("output")
        is_error = False
    else:
        meta = state.get("metadata")
        output = (
            meta.get("output")
            if isinstance(meta, dict) and meta.get("interrupted") is True
            else None
        )
        is_error = not isinstance(output, str)
        content = state.get("error") if is_error else output
    data: dict[str, Any] = {"type": TOOL_RESULT, "tool_use_id": call_id, "content": content}
    if is_error:
        data["is_error"] = True
    return Block(
        TOOL_RESULT,
        data,
        tool_id=call_id,
        is_error=is_error,
        src={"path": f"{path}/parts/{k}/state"},
        origin=PartRef(i, k, result=True),
    )


def _hidden(
    i: int,
    entry: dict[str, Any],
    path: str,
    order: Sequence[int],
    ts: float | None,
    why: str | None = None,
) -> Message:
    """A message opencode leaves out: shown with all its parts, not checked."""
    parts = entry["parts"]
    blocks = []
    for k in order:
        part = parts[k]
        src = {"path": f"{path}/parts/{k}"}
        if part["type"] == "tool":
            name = part.get("tool") if isinstance(part.get("tool"), str) else "?"
            data = {
                "type": TOOL_USE,
                "id": part["callID"],
                "name": name,
                "input": part["state"].get("input"),
            }
            b = Block(
                TOOL_USE, data, tool_id=part["callID"], name=name, src=src, origin=PartRef(i, k)
            )
        elif part["type"] == "text" and isinstance(part.get("text"), str):
            b = Block(TEXT, {"type": TEXT, "text": part["text"]}, src=src, origin=PartRef(i, k))
        else:
            # a part type opencode does not have may not pass for a call or a result
            btype = own_type(part["type"], "opencode")
            b = Block(btype, part, src=src, origin=PartRef(i, k))
        blocks.append(b)
    meta: dict[str, Any] = {"timestamp": ts} if ts is not None else {}
    if why:
        meta["hidden_reason"] = why
    role = entry["info"]["role"]
    return Message(
        role=role,
        blocks=tuple(blocks),
        raw=entry,
        meta=meta,
        hidden=True,
        src={"path": path},
        origin=(i,),
    )


def _merge(
    pieces: list[Message | _Piece], ghosts: dict[int, list[tuple[int, int]]]
) -> list[Message]:
    """Consecutive pieces of one role become one message, as the Anthropic provider groups
    them, except that an assistant piece with tool calls is never continued: opencode always
    sends a user message (the results) after it. Tool calls go after an assistant message's
    other blocks (`PartsMessage`). `ghosts` gets each message's ghost parts."""
    out: list[Any] = []  # (None: the place of the group being read, filled when it ends)
    group: list[_Piece] | None = None
    at = 0  # its place
    for p in pieces:
        if type(p) is not _Piece:
            out.append(p)  # (a message shown in its place: the group goes on after it)
            continue
        if group is not None:
            # (a group's pieces but its last hold no tool call: only its last is looked at)
            last = group[-1]
            if last.role == p.role and not last.calls:
                group.append(p)
                continue
            out[at] = _message(group, ghosts)
        group = [p]
        at = len(out)
        out.append(None)
    if group is not None:
        out[at] = _message(group, ghosts)
    return out


def _joins(kind: Hashable, blocks: list[Block], then: Hashable) -> bool:
    """A message of role `then` joins the group before it (`_merge`)."""
    return kind == then and not (kind == "assistant" and any(b.type == TOOL_USE for b in blocks))


def _kept(b: Block, before: Message) -> bool:
    """A tool part's result is written with its call: it stays only where its call is in the
    message before it (the step the part is sent in), a dropped call took it along."""
    ref = b.origin
    if b.type != TOOL_RESULT or not isinstance(ref, PartRef):
        return True
    return before.role == "assistant" and any(
        isinstance(c.origin, PartRef) and c.origin.msg == ref.msg and c.origin.part == ref.part
        for c in before.blocks
    )


def _results_time(
    state: OpencodeState, blocks: list[Block], before: Message | None
) -> float | None:
    """The time a user message opening with results is read back with (`_step`): the latest
    end of the results of its first tool parts' message, a synthetic result's as the
    writer closes its part (`_closed_times`)."""
    calls = {b.tool_id: b.origin for b in before.blocks if b.type == TOOL_USE} if before else {}
    ends: list[float] = []
    entry: int | None = None
    for b in blocks:
        if b.type != TOOL_RESULT:
            break
        ref = b.origin if b.origin is not None else calls.get(b.tool_id)
        if not isinstance(ref, PartRef):
            return None
        if entry is None:
            entry = ref.msg
        if ref.msg != entry:
            continue
        try:
            st = state.entries[ref.msg]["parts"][ref.part]["state"]
            t = st["time"]["end"] if b.origin is not None else None
            if b.origin is None:
                t = _closed_times(st, state.entries[ref.msg])["end"]
        except (IndexError, KeyError, TypeError):
            return None
        n = _num(t)
        if n is not None:
            ends.append(n)
    return max(ends) / 1000 if ends else None


def _message(group: list[_Piece], ghosts: dict[int, list[tuple[int, int]]]) -> PartsMessage:
    """The message of a group of pieces, its blocks to come: its tool ids, plain shape
    (`Message.tool_ids`) and block counts from its pieces; `ghosts` gets its ghost parts."""
    first = group[0]
    if len(group) == 1:
        calls, answers, opens = first.calls, first.answers, first.opens
        n = len(first.items)
        plain = n > 0 and not first.blank
        raw = first.raw
        origin: tuple[int, ...] = (first.entry,)
        ghost = first.ghosts
    else:
        calls = tuple(c for g in group for c in g.calls)
        answers = tuple(c for g in group for c in g.answers)
        opens = tuple(c for g in group for c in g.opens)
        n = sum(len(g.items) for g in group)
        plain = n > 0 and not any(g.blank for g in group) and not _result_after_other(group)
        raw = [g.raw for g in group]
        origin = tuple(dict.fromkeys(g.entry for g in group))
        ghost = [p for g in group for p in g.ghosts]
    # (`LazyMessage.unmade` spelt out, its meta left to come, `model.TIMED_META`: no call
    # and no dict for each of 100k messages)
    m: PartsMessage = _new(PartsMessage)
    m.role = first.role
    m._blocks = LAZY
    m.raw = raw
    m._meta = LAZY
    m.hidden = False
    m.malformed = None
    m._src = LAZY
    m._origin = origin
    m.uid = uid = new_uid()
    m._tool_ids = (calls, answers)
    m._plain_shape = plain
    m._counts = (n, len(answers))
    m._pieces = tuple(group)
    m.open_calls = opens
    m.timestamp = first.timestamp
    if ghost:
        ghosts[uid] = list(ghost)
    return m


def _result_after_other(group: list[_Piece]) -> bool:
    """A piece of results after a piece of other blocks (the shape rules look)."""
    other = False
    for g in group:
        if g.answers and other:
            return True
        other = other or (bool(g.items) and not g.answers)
    return False


def _skipped_by_opencode(info: dict[str, Any], parts: list[Any]) -> bool:
    """opencode leaves these out of the model messages (`toModelMessages`)."""
    if not parts:
        return True
    err = info.get("error")
    if info.get("role") == "assistant" and err:
        aborted = isinstance(err, dict) and err.get("name") == "MessageAbortedError"
        substantive = any(p.get("type") not in ("step-start", "reasoning") for p in parts)
        return not (aborted and substantive)
    return False


def _malformed(i: int, entry: Any, path: str, reason: str, role: Any = None) -> Message:
    return Message(
        role=role if isinstance(role, str) and role in ROLES else None,
        blocks=(),
        raw=entry,
        malformed=reason,
        src={"path": path},
        origin=(i,),
    )


def _num(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


# -------------------------------------------------------------------- export helpers


def _rebuild(msgs: list[Message], state: OpencodeState, written: dict[int, Any]) -> Any:
    """The document with every block written back into the part it came from; `written`
    gets each message of the file that stays (index -> the entry written for it)."""
    present: dict[tuple[int, int], Block] = {}
    referenced: set[int] = set()
    after: dict[tuple[int, int | None], list[Block]] = {}  # new text parts, by anchor
    for m in msgs:
        if isinstance(m.origin, tuple):
            referenced.update(m.origin)
        anchor: tuple[int, int | None] | None = None
        pending: list[Block] = []  # new blocks before the message's first placed block
        for b in m.blocks:
            ref = b.origin
            if isinstance(ref, PartRef):
                referenced.add(ref.msg)
                if not ref.result:
                    present[(ref.msg, ref.part)] = b
                    anchor = (ref.msg, ref.part)
                    if pending and _role_of(state, ref.msg) == m.role:
                        after.setdefault((ref.msg, _before(ref.part)), []).extend(pending)
                        pending = []
                continue
            if b.type == TOOL_RESULT:
                continue  # a synthetic result: written into its call's part
            if b.type != TEXT:
                raise ExportRefused(f"a new {b.type} block cannot be written in an opencode export")
            if anchor is not None and _role_of(state, anchor[0]) != m.role:
                anchor = None  # a user's text never goes into the assistant's message
            if anchor is not None:
                after.setdefault(anchor, []).append(b)
            else:
                pending.append(b)
        if pending:
            own = [i for i in m.origin or () if _role_of(state, i) == m.role]
            if not isinstance(m.origin, tuple) or not own:
                raise ExportRefused(
                    "a text block in a message of its own cannot be written in an opencode "
                    "export (tool results live inside the assistant's tool parts)"
                )
            after.setdefault((own[-1], None), []).extend(pending)
    _check_results_kept(msgs, state)
    synthetic = _synthetic_results(msgs)
    kept = {m.uid for m in msgs}
    gone = {p for uid, parts in state.ghosts.items() if uid not in kept for p in parts}
    new_entries: list[Any] = []
    for i, entry in enumerate(state.entries):
        if i not in referenced:
            continue  # every block of it was dropped
        if not isinstance(entry, dict) or not isinstance(entry.get("parts"), list):
            written[i] = entry
        else:
            written[i] = _entry(i, entry, state, present, synthetic, after, gone)
        new_entries.append(written[i])
    doc = state.doc
    return {**doc, "messages": new_entries} if isinstance(doc, dict) else new_entries


def _role_of(state: OpencodeState, i: int) -> Any:
    return _info(state.entries[i]).get("role")


def _before(part: int) -> int | None:
    """Anchor key for new blocks that come before `part` (None = the message's end)."""
    return -1 - part


def _entry(
    i: int,
    entry: dict[str, Any],
    state: OpencodeState,
    present: dict[tuple[int, int], Block],
    synthetic: dict[tuple[int, int], Block],
    after: dict[tuple[int, int | None], list[Block]],
    gone: set[tuple[int, int]],
) -> dict[str, Any]:
    parts = entry["parts"]
    new_parts: list[Any] = []
    changed = False
    for k, part in enumerate(parts):
        for b in after.get((i, _before(k)), ()):
            new_parts.append(_new_text_part(b, entry, new_parts))
            changed = True
        if (i, k) in gone:
            changed = True  # the message it made was dropped (unsigned reasoning)
            continue
        if (i, k) in state.view_parts:
            block = present.get((i, k))
            if block is None:
                changed = True  # the block was dropped: so is its part
                continue
            new = _part(block, part, state, synthetic.get((i, k)))
            changed = changed or new is not part
            part = new
        new_parts.append(part)
        for b in after.get((i, k), ()):
            new_parts.append(_new_text_part(b, entry, new_parts))
            changed = True
    for b in after.get((i, None), ()):
        new_parts.append(_new_text_part(b, entry, new_parts))
        changed = True
    return {**entry, "parts": new_parts} if changed else entry


def _synthetic_results(msgs: list[Message]) -> dict[tuple[int, int], Block]:
    """(message, part) of a pending/running tool part -> the synthetic result answering it:
    the latest earlier tool_use with that id."""
    last_use: dict[str, PartRef] = {}
    out: dict[tuple[int, int], Block] = {}
    for m in msgs:
        for b in m.blocks:
            if b.type == TOOL_USE and isinstance(b.origin, PartRef):
                last_use[b.tool_id or ""] = b.origin
            elif b.type == TOOL_RESULT and b.origin is None:
                ref = last_use.get(b.tool_id or "")
                if ref is None:
                    raise ExportRefused(
                        f"a tool result for {b.tool_id} has no tool part to go into in the export"
                    )
                out[(ref.msg, ref.part)] = b
    return out


def _check_results_kept(msgs: list[Message], state: OpencodeState) -> None:
    """A completed part's result cannot be removed without removing the call: refuse."""
    kept_results = {
        b.origin
        for m in msgs
        for b in m.blocks
        if isinstance(b.origin, PartRef) and b.origin.result
    }
    kept_uses = {
        b.origin
        for m in msgs
        for b in m.blocks
        if isinstance(b.origin, PartRef) and b.type == TOOL_USE
    }
    for b in state.original.values():
        ref = b.origin
        if (
            isinstance(ref, PartRef)
            and ref.result
            and ref not in kept_results
            and PartRef(ref.msg, ref.part) in kept_uses
        ):
            raise ExportRefused(
                f"the result of tool call {b.tool_id} cannot be removed in an opencode export "
                "without its call"
            )


def _part(
    b: Block, part: dict[str, Any], state: OpencodeState, synth: Block | None
) -> dict[str, Any]:
    if b.type == TOOL_USE:
        new = part
        if b.tool_id != part.get("callID"):
            new = {**new, "callID": b.tool_id}
        st = part.get("state")
        if (
            synth is not None
            and isinstance(st, dict)
            and st.get("status") in ("pending", "running")
        ):
            new = {**new, "state": _error_state(st, synth, state.entries[b.origin.msg])}
        return new
    if state.original.get(b.bid) is b:
        return part
    if b.type == TEXT and isinstance(b.data, dict) and isinstance(b.data.get("text"), str):
        return {**part, "text": b.data["text"]}
    return part


def _error_state(st: dict[str, Any], synth: Block, entry: dict[str, Any]) -> dict[str, Any]:
    """The part's state once histview records that no result came: status error, the synthetic
    text as `error`, `time.end` = the last time the message recorded (deterministic)."""
    text = synth.data.get("content") if isinstance(synth.data, dict) else None
    if not isinstance(text, str):
        text = str(text)
    new: dict[str, Any] = {"status": "error", "input": st.get("input", {}), "error": text}
    if "metadata" in st:
        new["metadata"] = st["metadata"]
    new["time"] = _closed_times(st, entry)
    # Keys an error state does not have (a pending part's `raw` arguments, a running part's
    # `title`, anything newer) stay: nothing the file held is lost; opencode ignores them.
    for key, value in st.items():
        if key not in new and key not in ("output", "attachments"):
            new[key] = value
    return new


def _closed_times(st: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    """The `time` of a part histview closes: what it recorded (whatever its type), with a
    missing `start` or `end` set to the last time its message recorded (not before the
    start)."""
    t = st.get("time")
    if not isinstance(t, dict):
        t = {}
    start = _num(t.get("start"))
    end = _last_time(entry)
    if start is not None and (end is None or end < start):
        end = start
    times = dict(t)
    if "start" not in times:
        times["start"] = _as_int(end) if end is not None else 0
    if "end" not in times:
        times["end"] = _as_int(end) if end is not None else times["start"]
    return times


def _last_time(entry: dict[str, Any]) -> float | None:
    best: float | None = None

    def see(v: Any) -> None:
        nonlocal best
        n = _num(v)
        if n is not None and (best is None or n > best):
            best = n

    info = entry.get("info") or {}
    if isinstance(info.get("time"), dict):
        see(info["time"].get("created"))
        see(info["time"].get("completed"))
    for p in entry.get("parts") or ():
        if not isinstance(p, dict):
            continue
        for holder in (p, p.get("state")):
            if isinstance(holder, dict) and isinstance(holder.get("time"), dict):
                see(holder["time"].get("start"))
                see(holder["time"].get("end"))
    return best


def _as_int(v: float) -> int | float:
    return int(v) if float(v).is_integer() else v


def _new_text_part(b: Block, entry: dict[str, Any], siblings: list[Any]) -> dict[str, Any]:
    info = entry.get("info") or {}
    text = b.data if isinstance(b.data, str) else (b.data or {}).get("text", "")
    part: dict[str, Any] = {}
    prev = next((p for p in reversed(siblings) if isinstance(p, dict) and "id" in p), None)
    if prev is not None:
        part["id"] = f"{prev['id']}_histview"
    if "sessionID" in info:
        part["sessionID"] = info["sessionID"]
    if "id" in info:
        part["messageID"] = info["id"]
    part.update({"type": "text", "text": text, "synthetic": True})
    return part


register(OpencodeAdapter())
