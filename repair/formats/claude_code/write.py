"""Writing a Claude Code session back: the engine's edited messages mapped onto records.

The new message list defines the new conversation as a sequence of records: each message's
blocks, in order, grouped by the record holding them (`Block.origin` = its line index);
chain records that are not messages (attachments, system, whitespace-only lines Claude Code
drops) follow the record they followed before. Then (docs/formats.md, Claude Code: writing back):

- a record whose blocks all went is deleted, and its children are re-linked to its parent;
- a record that lost, gained or reordered blocks, or whose block got a new id, is rewritten
  (and only that record);
- a synthetic tool_result becomes a new `user` record: compact JSON, key order copied from a
  neighbouring tool-result record of the same version, parentUuid first, a fresh uuid4, a
  timestamp 1 ms after its parent (never after its child), the tool_use record's envelope,
  `toolUseResult` = the text, `sourceToolAssistantUUID` = the tool_use record; it is written
  right after its parent line. A new record that opens a message takes the time the
  session gives that message (`stamped`, `_written_time`: the time of the message's first
  record kept, else 1 ms after the message before); a record kept, moved or not, keeps its
  own time;
- in every turn (an assistant message and what follows it up to the next one) that changed,
  each record's parentUuid becomes the record before it, so the walk from the leaf gives the
  new order without relying on Claude Code's parallel-result recovery; off-chain results are
  thereby laid out after their assistant group and the old child re-linked. No new leaf.

Untouched lines are written from their original bytes. The written bytes are loaded again
(repair.readback, the one read-back of every export) and must resume as the repaired
conversation (`check_resumes`), else the export is refused.
"""

from __future__ import annotations

import hashlib
import re
import uuid as uuidlib
from bisect import bisect_right
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import compress, count, filterfalse
from operator import not_
from typing import Any, cast

from ...errors import ExportRefused
from ...files import FileText, Part, Spliced
from ...jsonio import compact, has_inexact_numbers
from ...model import TOOL_RESULT, TOOL_USE, Block, Message, Session, content_text
from ..base import Export, JsonlLine, LineIndex, check_numbers, parsed_lines, same_messages
from .chain import Graph, Node, ts_ms
from .load import _DERIVED, CCFile, CCState, View, _epoch, peek
from .turns import Gap, Turns, changed, gaps, touched_turns, whole

_ROOT = ("root",)

ENVELOPE = (
    "isSidechain",
    "userType",
    "cwd",
    "sessionId",
    "version",
    "gitBranch",
    "slug",
    "entrypoint",
    "agentId",
    "teamName",
    "sessionKind",
)
DEFAULT_RESULT_KEYS = (
    "parentUuid",
    "isSidechain",
    "userType",
    "cwd",
    "sessionId",
    "version",
    "gitBranch",
    "type",
    "message",
    "uuid",
    "timestamp",
    "toolUseResult",
    "sourceToolAssistantUUID",
)
# Keys that describe one particular record and must not be copied onto a new one.
_RECORD_SPECIFIC = frozenset(
    {
        "toolUseResult",
        "sourceToolAssistantUUID",
        "sourceToolUseID",
        "isMeta",
        "isCompactSummary",
        "isVisibleInTranscriptOnly",
        "thinkingMetadata",
        "todos",
        "imagePasteIds",
        "planContent",
        "isApiErrorMessage",
    }
)


def views_of(session: Session) -> list[tuple[View, list[Message]]]:
    """Every conversation written into the session's file, with its current messages: the
    session's own, and the sidechains stored inline in a main session's file."""
    st = session.state
    if not isinstance(st, CCState):  # a subagent file that could not be read
        raise ExportRefused(f"{session.path}: the file could not be read; nothing to write")
    views: list[tuple[View, list[Message]]] = [(st.view, session.messages)]
    if not st.inline_thread:
        for t in session.threads:
            ts = t.state
            if isinstance(ts, CCState) and ts.file is st.file and ts.inline_thread:
                views.append((ts.view, t.messages))
    return views


def write_session(session: Session, scan_numbers: bool = False) -> Export:
    """The bytes, and every record the bytes leave out (deleted: all its blocks went, or a
    duplicate of such a record) or keep emptied, whole as read, for the report. (The
    records a re-link's earlier write left out are added by the adapter's export.)
    `scan_numbers`: the lines the number check reads (`number_lines`) are scanned for
    literals orjson changes as the render reads the file (`scanned_numbers`)."""
    w = _planned(views_of(session))
    scan: list[int] = []
    if scan_numbers:
        got = number_lines(session, w)
        got.update(w.rewrite.keys() | w.relink.keys() | w.deleted)  # (parsed as it renders)
        scan = sorted(got)
    data = w.written(scan=scan)
    _LAST_WRITE[:] = [w, data]
    return Export(data, w.dropped_records())


def number_lines(session: Session, w: _Writer | None = None) -> set[int]:
    """The lines whose records what the session writes may hold values of (the number
    check, `Adapter.reads_numbers_exactly`, of a large file read without keeping its
    records): those parsed since the load (a record rewritten, re-linked, copied into a new
    one or kept whole for the report) and the records of the blocks of every message that
    changed, as read and as written (a block moved into a record written anew, or removed
    and kept in the report). `w`: the plan of the write (else the last write's, when it
    wrote these messages): the blocks' records are found once per write."""
    read = parsed_lines(session.state.file.lines)
    if w is None:
        w = _last_plan(session)
    origins = w.origins if w is not None else None
    if origins is None:
        origins = set()
        for view, msgs in views_of(session):
            got = w.gaps.get(id(view)) if w is not None else None
            if got is not None and got[0] is msgs and got[1] is not None:
                differ = changed(view.messages, msgs, got[1])
            else:
                differ = [*_not_in(msgs, view.messages), *_not_in(view.messages, msgs)]
            for m in differ:
                origins.update(b.origin for b in m.blocks if type(b.origin) is int)
        if w is not None:
            w.origins = origins
    read.update(origins)
    return read


def _not_in(messages: list[Message], others: list[Message]) -> Iterator[Message]:
    """The messages that are not among `others` (the very objects), in order."""
    held = set(map(id, others))
    return compress(messages, map(not_, map(held.__contains__, map(id, messages))))


def scanned_numbers(f: CCFile) -> dict[int, bool]:
    """What the last write scanned of the lines of `f` (line -> whether it holds a literal
    orjson changes; `write_session(scan_numbers=True)`)."""
    if len(_LAST_WRITE) != 2 or _LAST_WRITE[0].f is not f:
        return {}
    got: dict[int, bool] = _LAST_WRITE[0].numbers
    return got


# The last write's plan and bytes: the read-back of those very bytes (readback.py) reads
# the lines the plan wrote anew, not the whole file again.
_LAST_WRITE: list[Any] = []


def forget_write() -> None:
    _LAST_WRITE.clear()


def last_write(session: Session, data: bytes | Spliced) -> _Writer | None:
    """The plan `write_session(session)` made of `data`, if those are the bytes it wrote
    last (or their join; and the session still holds the messages it wrote)."""
    if len(_LAST_WRITE) != 2:
        return None
    got = _LAST_WRITE[1]
    if got is not data and not (isinstance(got, Spliced) and got.is_joined(data)):
        return None
    return _last_plan(session)


def _last_plan(session: Session) -> _Writer | None:
    """The last write's plan, if it wrote the messages the session holds."""
    if len(_LAST_WRITE) != 2:
        return None
    w: _Writer = _LAST_WRITE[0]
    views = views_of(session)
    if (
        w.f is not views[0][0].file
        or len(views) != len(w.planned)
        or any(msgs is not got for (_, msgs), got in zip(views, w.planned, strict=True))
    ):
        return None
    return w


def export_lines(session: Session) -> tuple[Export, list[int | None]]:
    """The export, and for each line it writes the line number it had in the file as read
    (None: a record histview creates): what a reload of the written bytes numbers its lines
    by, so that findings and the report keep naming the user's lines."""
    f = session.state.file
    views = views_of(session)
    if _unchanged(views):
        return Export(f.data, list(f.carried)), [ln.lineno for ln in f.lines]
    w = _planned(views)
    keys = w.order()
    linenos = [f.lines[k].lineno if isinstance(k, int) else None for k in keys]
    written = Export(w.render(keys), [*f.carried, *w.dropped_records()])
    check_numbers(session)
    return written, linenos


def written_start(session: Session) -> tuple[int | None, set[int]]:
    """The line the session's conversation starts from as written (None: a record histview
    creates, or nothing), and the lines the write deletes."""
    st = session.state
    w = _planned(views_of(session))
    start = w.starts.get(id(st.view))
    return (start if isinstance(start, int) else None), w.deleted


def written_lines(session: Session) -> list[bytes]:
    """The lines the session writes (without their terminators): what a preview compares,
    with no whole-file join or split."""
    views = views_of(session)
    if _unchanged(views):
        return [ln.raw for ln in session.state.file.lines]
    return _planned(views).lines()


def _unchanged(views: list[tuple[View, list[Message]]]) -> bool:
    return all(same_messages(msgs, view.messages) for view, msgs in views)


def _planned(views: list[tuple[View, list[Message]]], narrow: bool = True) -> _Writer:
    """The writer planned for the conversations of one file (`narrow`: the turns a fix
    touched only, where a file holds one conversation and they can be told)."""
    w = _Writer(views[0][0].file)
    for v, msgs in views:
        w.plan_view(v, msgs, narrow and len(views) == 1)
        w.planned.append(msgs)
    return w


# --------------------------------------------------------------------------- planning


@dataclass(eq=False)
class _New:
    """A record histview creates."""

    kind: str  # "result" | "clone" | "plain"
    role: str
    blocks: list[Block]
    base: int | None = None  # clone: the record it is split from
    obj: dict[str, Any] | None = None
    uuid: str = ""
    ts_ms: float | None = None
    stamp: float | None = None  # the time of the message it opens (`_written_time`)


@dataclass(eq=False, slots=True)
class _Run:
    rec: Any  # line index (int) or _New
    given: Sequence[Block] | None  # None: the blocks the record holds as read (`as_read`)
    role: str
    starts_assistant: bool = False
    edited: bool = False  # the message it belongs to was edited
    as_read: Mapping[int, Sequence[Block]] | None = None
    opens: int | None = None  # the first run of an edited message: its place in the list

    @property
    def blocks(self) -> Sequence[Block]:
        """Its blocks (a run of an unchanged message: its record's as read, made when asked
        for; a plan of 100k messages asks for a few)."""
        if self.given is None:
            assert self.as_read is not None
            self.given = self.as_read.get(self.rec, ())
        return self.given


class NodeAt:
    """The graph's node of each line that holds one (`get(line)`), made from the graph's
    lists when first asked for: a plan asks for the lines of the turns it touches, not for
    an object per node of the file."""

    __slots__ = ("g", "made")

    def __init__(self, g: Graph) -> None:
        self.g = g
        self.made: dict[int, Node] = {}

    def get(self, idx: Any, default: Node | None = None) -> Node | None:
        nd = self.made.get(idx)
        if nd is not None:
            return nd
        g = self.g
        if type(idx) is not int or not 0 <= idx < len(g.uuid):
            return default
        u = g.uuid[idx]
        if not u or g.index.get(u) != idx:  # no node, or a line a later duplicate replaced
            return default
        nd = self.made[idx] = Node(
            u,
            idx,
            g.place(u),
            g.kind[idx],  # type: ignore[arg-type]
            g.parent[idx],
            g.side[idx],
            g.ts[idx],
            g.mid[idx],
            g.results[idx],
        )
        return nd

    def __getitem__(self, idx: Any) -> Node:
        nd = self.get(idx)
        if nd is None:
            raise KeyError(idx)
        return nd

    def __contains__(self, idx: Any) -> bool:
        return self.get(idx) is not None


@dataclass(eq=False)
class _Part:
    """One stretch of turns planned (`_Writer._part`): its runs, its new sequence of chain
    entries with each one's turn (counted from the stretch's start) and the places where a
    turn starts, the lines it deletes (unreadable ones dropped, records whose blocks all
    went), and where its sequence starts in the conversation's."""

    turns: Turns
    runs: list[_Run]
    seq: list[Any]
    turn_of: list[int]
    first_of_turn: set[int]
    drop: list[int]
    dropped: list[int]
    base: int = 0


@dataclass
class _Writer:
    f: CCFile
    deleted: set[int] = field(default_factory=set)
    relink: dict[int, str | None] = field(default_factory=dict)  # line -> new parentUuid
    rewrite: dict[int, dict[str, Any]] = field(default_factory=dict)  # line -> new record object
    after: dict[Any, list[Any]] = field(default_factory=dict)  # emitted-after links
    deferred: set[int] = field(default_factory=set)
    new_records: list[_New] = field(default_factory=list)
    _fresh: set[str] = field(default_factory=set)
    _dup_lines: dict[str, list[int]] | None = None
    _children: dict[str, list[int]] | None = None
    _children_for: set[str] | None = None  # the parents `_children` holds (None: all)
    _others: list[tuple[int, Any]] | None = None
    _node_at: NodeAt | None = None
    # id(view) -> the entry its conversation starts from as written (None: nothing left)
    starts: dict[int, Any] = field(default_factory=dict)
    planned: list[list[Message]] = field(default_factory=list)  # each view's messages
    narrowed: list[bool] = field(default_factory=list)  # each view's plan: of its touched turns
    # id(view) -> its chain's lines; the stretches of turns planned (a narrowed plan)
    chains: dict[int, list[int]] = field(default_factory=dict)
    turns: dict[int, list[Turns]] = field(default_factory=dict)
    _order: list[Any] | None = None
    # the ranges of lines `_order` writes in file order: (where in it, first line, end line)
    _ranges: list[tuple[int, int, int]] = field(default_factory=list)
    new_written: list[_New] = field(default_factory=list)  # the new records, in `order()`
    _by_uid: dict[int, dict[int, Message]] = field(default_factory=dict)
    _made: dict[Any, bytes] = field(default_factory=dict)  # the lines written anew
    numbers: dict[int, bool] = field(default_factory=dict)  # `render(scan=...)`'s finds
    origins: set[int] | None = None  # `number_lines`' records of the messages that changed
    # id(view) -> (the messages planned, their `turns.gaps` against the view's): a plan
    # of the touched turns
    gaps: dict[int, tuple[list[Message], list[Gap] | None]] = field(default_factory=dict)

    # --- one conversation
    def plan_view(self, view: View, messages: list[Message], narrow: bool = True) -> None:
        """Plan the conversation's records: only the turns the new messages touch
        (`turns.touched_turns`) where it can tell them, else the whole conversation (the
        same bytes either way)."""
        chain_idx = view.chain_lines()
        parts: list[_Part] | None = None
        if narrow:
            apart = gaps(view.messages, messages)
            self.gaps[id(view)] = (messages, apart)
            stretches = touched_turns(view, messages, chain_idx, apart)
            if stretches is not None:
                got = [self._part(view, messages, chain_idx, t, True) for t in stretches]
                parts = [p for p in got if p is not None]
                if len(parts) != len(got):
                    parts = None
        self.narrowed.append(parts is not None)
        self.chains[id(view)] = chain_idx
        if parts is not None:
            self.turns[id(view)] = [p.turns for p in parts]
        else:
            part = self._part(view, messages, chain_idx, whole(view, messages), False)
            assert part is not None
            parts = [part]
        self._plan_parts(view, messages, chain_idx, parts)

    def _part(
        self,
        view: View,
        messages: list[Message],
        chain_idx: list[int],
        t: Turns,
        check: bool,
    ) -> _Part | None:
        """The new sequence of the chain entries of one stretch of turns; None (`check`)
        when the stretch's records are not the chain's between its edges."""
        old = view.messages[t.old : t.old_end]
        present = {m.uid for m in messages[t.new : t.new_end]}
        msg_recs: set[int] = set()
        drop: list[int] = []
        for m in old:
            recs = view.msg_records(m)
            if not m.hidden:
                msg_recs.update(recs)
            elif m.malformed is not None and m.uid not in present:
                drop.extend(recs)  # an unreadable line the user chose to drop
        span = chain_idx[t.chain : t.chain_end]
        if check:
            rec_blocks = view.rec_blocks
            if not msg_recs.issubset(span) or any(
                i in rec_blocks and i not in msg_recs for i in span
            ):
                return None

        runs = self._runs(view, messages, t.new, t.new_end)
        if check and any(type(r.rec) is int and r.rec not in msg_recs for r in runs):
            return None
        owners: set[int] = set()
        for r in runs:
            if isinstance(r.rec, int):
                if r.rec in owners:  # the record's blocks are split: a copy holds these
                    stamp = None if r.opens is None else _written_time(view, messages, r.opens)
                    r.rec = _New("clone", r.role, list(r.blocks), base=r.rec, stamp=stamp)
                else:
                    owners.add(r.rec)

        runs = _chain_order_where_unchanged(
            runs, dict(zip(span, range(t.chain, t.chain_end), strict=True))
        )
        glue: dict[Any, list[int]] = {_ROOT: []}
        owner: Any = _ROOT
        dropped: list[int] = []
        for idx in span:
            if idx in msg_recs:
                if idx in owners:
                    owner = idx
                else:
                    dropped.append(idx)
                continue
            glue.setdefault(owner, []).append(idx)

        # the new sequence of chain entries
        seq: list[Any] = list(glue[_ROOT])
        turn_of: list[int] = [0] * len(seq)
        first_of_turn: set[int] = set()
        turn = 0
        for r in runs:
            if r.starts_assistant:
                turn += 1
                first_of_turn.add(len(seq))
            seq.append(r.rec)
            turn_of.append(turn)
            if isinstance(r.rec, int):
                for gi in glue.get(r.rec, ()):
                    seq.append(gi)
                    turn_of.append(turn)
        return _Part(t, runs, seq, turn_of, first_of_turn, drop, dropped)

    def _plan_parts(
        self, view: View, messages: list[Message], chain_idx: list[int], parts: list[_Part]
    ) -> None:
        """The chain's entries with each stretch's new sequence in its place; then the
        stretches' deletions, rewrites, new records, re-links and placement."""
        lines = self.f.lines
        for p in parts:
            for idx in p.drop:
                self._delete(idx)
        seq: list[Any] = []
        done = 0
        for p in parts:
            seq += chain_idx[done : p.turns.chain]
            p.base = len(seq)
            seq += p.seq
            done = p.turns.chain_end
        seq += chain_idx[done:]
        self.starts[id(view)] = seq[0] if seq else None
        if not seq:
            for p in parts:
                for idx in p.dropped:
                    self._delete(idx)
            return
        root_parent = lines[chain_idx[0]].obj.get("parentUuid") if chain_idx else None

        def pred_n(i: int) -> Any:
            return seq[i - 1] if i > 0 else _ROOT

        # each stretch's entries whose parent is set again: (place in seq, the entry)
        redo: list[list[tuple[int, Any]]] = []
        for p in parts:
            t = p.turns
            pred_c: dict[int, Any] = {}
            prev: Any = chain_idx[t.chain - 1] if t.chain > 0 else _ROOT
            for idx in chain_idx[t.chain : t.chain_end + 1]:  # (and the entry after it)
                pred_c[idx] = prev
                prev = idx
            span = range(p.base, min(p.base + len(p.seq) + 1, len(seq)))
            changed = {
                i: isinstance(seq[i], _New) or pred_c.get(seq[i], None) != pred_n(i) for i in span
            }
            after = p.base + len(p.seq)  # the entry after the stretch: the next turn's first
            turn_of = p.turn_of
            touched = {
                turn_of[i - p.base]
                for i in span
                if i < after
                and (isinstance(seq[i], _New) or (changed[i] and i - p.base not in p.first_of_turn))
            }
            redo.append(
                [
                    (i, seq[i])
                    for i in span
                    if changed[i] or (i < after and turn_of[i - p.base] in touched)
                ]
            )
        for p in parts:
            for idx in p.dropped:
                self._delete(idx)

        # uuids and timestamps of new records, parents, content rewrites
        for p in parts:
            self._finish_runs(view, p.runs)
        self._build_new(
            view,
            seq,
            root_parent,
            [p.base + k for p in parts for k, e in enumerate(p.seq) if isinstance(e, _New)],
        )
        for entries in redo:
            for i, e in entries:
                if isinstance(e, _New):
                    continue
                pr = pred_n(i)
                parent = root_parent if pr is _ROOT else self._uuid_of(pr)
                if self._parent_as_written(e) != parent:
                    self.relink[e] = parent
        self._relink_orphaned_children(view, chain_idx, seq)
        self._place(seq, [range(p.base, min(p.base + len(p.seq) + 1, len(seq))) for p in parts])

    def _runs(self, view: View, messages: list[Message], lo: int, hi: int) -> list[_Run]:
        """Each live message's blocks grouped by the record that will hold them (of the
        messages [lo, hi))."""
        orig_by_uid = self._read_by_uid(view)
        plans: list[tuple[Message, bool, list[Any]]] = []  # (message, unchanged, runs|items)
        used: set[int] = set()
        rec_blocks = as_read = view.rec_blocks  # (a run of an unchanged message is only read)
        msg_records = view.msg_records
        edited_at: dict[int, int] = {}
        for k in range(lo, hi):
            m = messages[k]
            if m.hidden:
                continue
            om = orig_by_uid.get(m.uid)
            if om is not None and not om.hidden and (om is m or _same_blocks(m.blocks, om.blocks)):
                recs = msg_records(m)
                used.update(recs)
                role = m.role or "user"
                plans.append((m, True, [_Run(r, None, role, False, False, as_read) for r in recs]))
                continue
            items: list[list[Any]] = []
            role = m.role or "user"
            for b in m.blocks:
                rec = b.origin if isinstance(b.origin, int) and b.origin in rec_blocks else None
                if rec is not None and self._type(rec) != role:
                    rec = None  # moved across roles (wrong-role-block): a record of its new role
                if rec is not None:
                    used.add(rec)
                items.append([rec, b])
            plans.append((m, False, items))
            edited_at[m.uid] = k
        runs: list[_Run] = []
        for m, unchanged, plan in plans:
            role = m.role or "user"
            mruns = plan if unchanged else self._edited_runs(view, m, plan, used, role)
            if not unchanged and mruns:  # its first record is written with its time
                k = mruns[0].opens = edited_at[m.uid]
                if isinstance(mruns[0].rec, _New):
                    mruns[0].rec.stamp = _written_time(view, messages, k)
            if role == "assistant" and mruns:
                mruns[0].starts_assistant = True
            runs.extend(mruns)
        return runs

    def _read_by_uid(self, view: View) -> dict[int, Message]:
        """The conversation's messages as read, by uid (made once per conversation)."""
        got = self._by_uid.get(id(view))
        if got is None:
            got = self._by_uid[id(view)] = {m.uid: m for m in view.messages}
        return got

    def _edited_runs(
        self, view: View, m: Message, items: list[list[Any]], used: set[int], role: str
    ) -> list[_Run]:
        # blocks histview created: a synthetic result gets a record of its own; other new
        # blocks take a record of this message that lost all its blocks, else join the
        # record before them (or after them), else a new record.
        vacated = [r for r in view.msg_records(m) if r not in used]
        pending = False
        for k, item in enumerate(items):
            rec, b = item
            if rec is not None:
                continue
            prev = items[k - 1][0] if k > 0 else None
            if b.type == TOOL_RESULT:
                item[0] = _New("result", "user", [b])
            elif vacated:
                item[0] = vacated.pop(0)
                used.add(item[0])
            elif prev is not None and not _is_result_record(prev):
                item[0] = prev
            else:
                pending = True
        if pending:
            nxt: Any = None
            for item in reversed(items):
                if item[0] is None:
                    if nxt is None or _is_result_record(nxt):
                        nxt = _New("plain", role, [])
                    item[0] = nxt
                else:
                    nxt = item[0]
        mruns: list[_Run] = []
        grouped: list[tuple[Any, list[Block]]] = []
        for rec, b in items:
            if grouped and grouped[-1][0] is rec:
                grouped[-1][1].append(b)
            else:
                grouped.append((rec, [b]))
        mruns = [_Run(rec, blocks, role, edited=True) for rec, blocks in grouped]
        if not mruns:  # emptied but kept by the engine: keep its records as they are
            for r in view.msg_records(m):
                if r not in used:
                    used.add(r)
                    mruns.append(_Run(r, [], role, edited=True))
        for run in mruns:
            if isinstance(run.rec, _New):
                run.rec.blocks = list(run.blocks)
        return mruns

    def _finish_runs(self, view: View, runs: list[_Run]) -> None:
        """Content rewrites of existing records (and message.id of merged assistants)."""
        lines, nodes = self.f.lines, self._nodes()
        first_mid: str | None = None
        for r in runs:
            if r.starts_assistant:
                first_mid = None
            if not isinstance(r.rec, int):
                continue
            if not r.edited and (first_mid is not None or r.role != "assistant"):
                continue  # nothing to rewrite, and the turn's first id is known
            idx = r.rec
            new_obj = None
            if r.edited and not _same_blocks(r.blocks, view.rec_blocks.get(idx, ())):
                new_obj = _with_content(lines[idx].obj, r.blocks, view.rec_blocks.get(idx, ()))
            if r.role == "assistant":
                nd = nodes.get(idx)
                mid: str | None
                if nd is not None and nd.type == "assistant" and nd.mid is not None:
                    mid = nd.mid  # read by the light pass: the record is not parsed again
                else:
                    mid = _mid(lines[idx].obj)
                if first_mid is None:
                    first_mid = mid
                elif mid != first_mid and r.edited:
                    # merged into the assistant message before it: Claude Code merges by id
                    new_obj = new_obj or _copy_record(lines[idx].obj)
                    new_obj["message"]["id"] = first_mid
            if new_obj is not None:
                self.rewrite[idx] = new_obj

    # --- new records
    def _build_new(
        self, view: View, seq: list[Any], root_parent: str | None, at: list[int]
    ) -> None:
        """The records of the new entries (at these places of `seq`, in order)."""
        prompt = [0, None]  # the promptId of the user records before seq[k], found so far
        n = len(seq)
        for i in at:
            e = seq[i]
            parent_key = seq[i - 1] if i > 0 else None
            parent = self._uuid_of(parent_key) if parent_key is not None else root_parent
            if e.stamp is not None:  # it opens a message (as the session stamps it)
                ts: float | None = e.stamp * 1000
            else:
                p_ts = self._ts_of(seq, i - 1)
                c_ts = next(
                    (self._ts_of(seq, j) for j in range(i + 1, n) if isinstance(seq[j], int)),
                    None,
                )
                ts = _between(p_ts, c_ts)
            e.ts_ms = ts
            if e.kind == "result":
                b = e.blocks[0]
                src = self._call_record(view, seq, i, b.tool_id or "")
                e.uuid = self._new_uuid(parent, b.tool_id or "")
                e.obj = self._result_record(
                    b, src, parent, e.uuid, ts, self._prompt_before(seq, i, prompt)
                )
            else:
                base = e.base if e.base is not None else self._nearest_role(seq, i, e.role)
                e.uuid = self._new_uuid(parent, f"{e.kind}:{i}")
                e.obj = self._clone_record(base, e, parent, ts)
            self.new_records.append(e)

    def _call_record(self, view: View, seq: list[Any], i: int, tool_id: str) -> int | None:
        """The last assistant record before seq[i] holding the tool_use `tool_id` (as read),
        else the last assistant record before it: looked for from seq[i] back."""
        lines, nodes, rec_blocks = self.f.lines, self._nodes(), view.rec_blocks
        last: int | None = None
        for j in range(i - 1, -1, -1):
            e = seq[j]
            if isinstance(e, _New):
                continue
            # what the light pass and the messages hold of the record (no parse)
            nd = nodes.get(e)
            blocks = rec_blocks.get(e)
            if nd is not None and nd.type == "assistant" and blocks:
                ids = [b.tool_id for b in blocks if b.type == TOOL_USE and b.tool_id is not None]
            elif nd is not None and nd.type != "assistant":
                continue
            else:
                obj = lines[e].obj
                if obj.get("type") != "assistant":
                    continue
                ids = [
                    item["id"]
                    for item in _content_list(obj)
                    if item.get("type") == "tool_use" and isinstance(item.get("id"), str)
                ]
            if last is None:
                last = e
            if tool_id in ids:
                found: int = e
                return found
        return last

    def _prompt_before(self, seq: list[Any], i: int, seen: list[Any]) -> str | None:
        """The promptId of the last user record before seq[i] that has one. Looked for from
        seq[i] back to where the last call looked (`seen`: [that place, what it found]), so
        the records are read once at most and, where most user records carry one, hardly at
        all; what the light pass read of them (`Graph.prompts`), not the file again."""
        lines, g = self.f.lines, self.f.graph
        prompts, kind = g.prompts, g.kind
        for k in range(i - 1, seen[0] - 1, -1):
            e = seq[k]
            if isinstance(e, int) and self._type(e) == "user":
                if prompts is not None and kind[e] == "user":  # the light pass read it
                    pid = prompts.get(e)
                elif b'"promptId"' in lines[e].raw:
                    pid = lines[e].obj.get("promptId")
                else:
                    continue
                if isinstance(pid, str):
                    seen[:] = [i, pid]
                    return pid
        seen[0] = i
        found: str | None = seen[1]
        return found

    def _result_record(
        self,
        block: Block,
        src: int | None,
        parent: str | None,
        uid: str,
        ts: float | None,
        prompt_id: str | None,
    ) -> dict[str, Any]:
        lines = self.f.lines
        src_obj = lines[src].obj if src is not None else {}
        tmpl_idx = self._template(src)
        tmpl = lines[tmpl_idx].obj if tmpl_idx is not None else None
        keys = list(tmpl) if tmpl is not None else list(DEFAULT_RESULT_KEYS)
        if "parentUuid" in keys:
            keys.remove("parentUuid")
        keys.insert(0, "parentUuid")
        data = block.data if isinstance(block.data, dict) else {}
        text = content_text(data.get("content"))
        out_block = _ordered_like(data, _first_result_block(tmpl))
        message = {"role": "user", "content": [out_block]}
        tstr = _iso(ts) if ts is not None else (src_obj.get("timestamp") or "")
        values = {
            "parentUuid": parent,
            "type": "user",
            "message": message,
            "uuid": uid,
            "timestamp": tstr,
            "toolUseResult": text,
            "sourceToolAssistantUUID": src_obj.get("uuid"),
        }
        rec: dict[str, Any] = {}
        for k in keys:
            if k in values:
                rec[k] = values[k]
            elif k == "promptId":
                if prompt_id is not None:
                    rec[k] = prompt_id
            elif k in ENVELOPE:
                if k in src_obj:
                    rec[k] = src_obj[k]
                elif tmpl is not None and k in tmpl:
                    rec[k] = tmpl[k]
        for k in (
            "type",
            "message",
            "uuid",
            "timestamp",
            "toolUseResult",
            "sourceToolAssistantUUID",
        ):
            if k not in rec:
                rec[k] = values[k]
        for k in ENVELOPE:
            if k not in rec and k in src_obj:
                rec[k] = src_obj[k]
        return rec

    def _clone_record(
        self, base: int | None, e: _New, parent: str | None, ts: float | None
    ) -> dict[str, Any]:
        lines = self.f.lines
        src = lines[base].obj if base is not None else {"type": e.role}
        rec = _copy_record(src)
        if e.kind == "plain" or not any(b.type == TOOL_RESULT for b in e.blocks):
            for k in _RECORD_SPECIFIC:
                rec.pop(k, None)
        rec["parentUuid"] = parent
        rec["uuid"] = e.uuid
        if ts is not None:
            rec["timestamp"] = _iso(ts)
        msg = rec.get("message")
        if not isinstance(msg, dict):
            msg = {"role": e.role}
        msg["content"] = [_block_dict(b) for b in e.blocks]
        rec["message"] = msg
        if "parentUuid" in rec and next(iter(rec)) != "parentUuid":
            rec = {"parentUuid": parent, **{k: v for k, v in rec.items() if k != "parentUuid"}}
        return rec

    def _template(self, near: int | None) -> int | None:
        """The tool-result user record nearest to `near`, preferring the same CLI version:
        the result records before and from `near` taken in turns, up to 128 of each side
        (looked for from `near` out, not in a pass over every line)."""
        lines = self.f.lines
        n = len(lines)
        if near is None:
            return next(self._results_from(n - 1, -1), None)
        version = lines[near].obj.get("version")
        below, above = self._results_from(near - 1, -1), self._results_from(near, 1)
        nearest = None
        for _ in range(128):
            picks = [c for c in (next(below, None), next(above, None)) if c is not None]
            if not picks:
                break
            for c in picks:
                if nearest is None:
                    nearest = c
                if lines[c].obj.get("version") == version:
                    return c
        return nearest

    def _results_from(self, start: int, step: int) -> Iterator[int]:
        """The lines holding a tool-result user record, from `start` on in `step`'s
        direction: the graph says which node records do; other lines are read."""
        lines, nodes = self.f.lines, self._nodes()
        for i in range(start, len(lines) if step > 0 else -1, step):
            nd = nodes.get(i)
            if nd is not None:
                if nd.type == "user" and nd.results:
                    yield i
                continue
            obj = lines[i].obj
            if (
                type(obj) is dict
                and obj.get("type") == "user"
                and _first_result_block(obj) is not None
            ):
                yield i

    def _nearest_role(self, seq: list[Any], i: int, role: str) -> int | None:
        for j in range(i - 1, -1, -1):
            e = seq[j]
            if isinstance(e, int) and self._type(e) == role:
                return e
        for e in seq[i + 1 :]:
            if isinstance(e, int) and self._type(e) == role:
                return e
        return None

    def _new_uuid(self, parent: str | None, salt: str) -> str:
        """A uuid4-shaped id derived from its place, so that a fix writes the same bytes
        every time it runs."""
        k = 0
        while True:
            seed = f"histview|{parent}|{salt}|{k}".encode("utf-8", "surrogatepass")
            h = hashlib.sha256(seed).digest()
            u = str(uuidlib.UUID(bytes=h[:16], version=4))
            if u not in self.f.graph.index and u not in self._fresh:
                self._fresh.add(u)
                return u
            k += 1

    # --- helpers on entries
    def _uuid_of(self, e: Any) -> str | None:
        if isinstance(e, _New):
            return e.uuid
        nd = self._nodes().get(e)
        if nd is not None:
            return nd.uuid
        uuid: str | None = self.f.lines[e].obj.get("uuid")  # a record of the chain: a str
        return uuid

    def _parent_as_written(self, idx: int) -> Any:
        """A record's parentUuid as written: the graph's link where no progress record was
        bridged and no compaction re-parented (no system record), else the record's."""
        g = self.f.graph
        if not g.bridged and not g.glue and g.lines is self.f.lines:
            nd = self._nodes().get(idx)
            if nd is not None:
                return nd.parent
        return self.f.lines[idx].obj.get("parentUuid")

    def _type(self, idx: int) -> Any:
        """A record's `type`, from the light pass where it read the record: a node's (the
        line its uuid names, as `NodeAt`) is the graph's kind, read without a `Node` made."""
        g = self.f.graph
        if 0 <= idx < len(g.uuid):
            u = g.uuid[idx]
            if u and g.index.get(u) == idx:
                return g.kind[idx]
        return self.f.lines[idx].obj.get("type")

    def _nodes(self) -> NodeAt:
        """The graph's node of each line that holds one: what the light pass read of it
        (type, uuid, parent, timestamp, message.id, whether it holds a result)."""
        if self._node_at is None:
            self._node_at = NodeAt(self.f.graph)
        return self._node_at

    def _ts_of(self, seq: list[Any], i: int) -> float | None:
        """The timestamp of entry i, or of the nearest entry before it that has one."""
        for j in range(i, -1, -1):
            e = seq[j]
            if isinstance(e, _New):
                ms = e.ts_ms
            else:
                nd = self._nodes().get(e)
                ts = nd.ts if nd is not None else self.f.lines[e].obj.get("timestamp")
                ms = ts_ms(ts) if isinstance(ts, str) else None
            if ms is not None:
                return ms
        return None

    # --- deletions and their children
    def _delete(self, idx: int) -> None:
        self.deleted.add(idx)
        obj = self.f.lines[idx].obj
        u = obj.get("uuid") if type(obj) is dict else None
        if isinstance(u, str):
            for d in self._dups().get(u, ()):
                self.deleted.add(d)

    def _dups(self) -> dict[str, list[int]]:
        if self._dup_lines is None:
            self._dup_lines = {}
            for idx in self.f.graph.shadowed:
                u = self.f.lines[idx].obj.get("uuid")
                self._dup_lines.setdefault(u, []).append(idx)
        return self._dup_lines

    def _relink_orphaned_children(self, view: View, chain_idx: list[int], seq: list[Any]) -> None:
        """Lines off the new sequence whose parent was deleted hang on the deleted record's
        nearest surviving ancestor on the chain."""
        if not self.deleted:
            return
        in_seq = set(seq)
        lines = self.f.lines
        root_parent = lines[chain_idx[0]].obj.get("parentUuid") if chain_idx else None
        repl: dict[Any, str | None] = {}
        deleted = self.deleted
        # each deleted record of the chain: the last record of the chain kept before it
        for k in compress(count(), map(deleted.__contains__, chain_idx)):
            before = k - 1
            while before >= 0 and chain_idx[before] in deleted:
                before -= 1
            u = self._uuid_of(chain_idx[k])  # a record of the chain: a str
            repl[u] = root_parent if before < 0 else self._uuid_of(chain_idx[before])
        gone = [
            (u, obj)
            for idx in self.deleted
            if type(obj := lines[idx].obj) is dict and isinstance(u := obj.get("uuid"), str)
        ]
        self._index_children({u for u, _ in gone})
        for u, obj in gone:
            if u not in repl:  # an off-chain record: its children go to its own parent
                p = obj.get("parentUuid")
                repl[u] = p if isinstance(p, str) else None
            for child in self._children_of(u):
                if child in self.deleted or child in in_seq or child in self.relink:
                    continue
                self.relink[child] = repl[u]

    def _index_children(self, parents: set[str] | None) -> None:
        """The lines naming each of `parents` (None: any line) as their parent, for
        `_children_of`: the graph's links (no line parsed again) and the lines that are
        no node."""
        g = self.f.graph
        exact = not g.pruned  # a compaction re-parents nodes: read every line then
        children: dict[str, list[int]] = {p: [] for p in parents or ()}
        if exact:
            parent_of = g.parent
            nodes: Iterable[int] = g.index.values()
            if parents is not None:  # (the few lines naming one of them, picked in C)
                nodes = compress(
                    nodes, map(parents.__contains__, map(parent_of.__getitem__, nodes))
                )
            for i in nodes:
                p = parent_of[i]
                if p is not None:
                    children.setdefault(p, []).append(i)
        for i, obj in self._other_lines() if exact else enumerate(ln.obj for ln in self.f.lines):
            if type(obj) is dict and isinstance(p := obj.get("parentUuid"), str):
                if parents is None or p in parents:
                    children.setdefault(p, []).append(i)
        self._children = children
        self._children_for = parents

    def _children_of(self, parent: str) -> list[int]:
        """The lines whose parentUuid, as written, is `parent` (in file order)."""
        if self._children is None or (
            self._children_for is not None and parent not in self._children_for
        ):
            self._index_children(None)
        assert self._children is not None
        lines = self.f.lines
        # a node's parent in the graph bridges progress records: keep the lines that
        # name `parent` themselves
        return sorted(
            i for i in self._children.get(parent, ()) if lines[i].obj.get("parentUuid") == parent
        )

    def _other_lines(self) -> list[tuple[int, Any]]:
        """(index, parsed record) of every line that is no node of the graph (metadata,
        progress, a duplicate uuid, an unreadable line): the few the light pass did not keep."""
        if self._others is None:
            at = set(self.f.graph.index.values())
            lines = self.f.lines
            others = filterfalse(at.__contains__, range(len(lines)))
            self._others = [(i, lines[i].obj) for i in others]
        return self._others

    # --- physical placement
    def _place(self, seq: list[Any], spans: list[range]) -> None:
        """New records go right after their parent's line; a re-linked line whose new parent
        is written later in the file moves to just after it. (Only the places in `spans`
        hold new or re-linked entries: the others are written where they were read.)"""
        pos: dict[Any, int] = {}
        for i in (i for span in spans for i in span):
            e = seq[i]
            if isinstance(e, _New):
                p = seq[i - 1] if i > 0 else None
                self.after.setdefault(p, []).append(e)
                pos[e] = (pos.get(p, p if isinstance(p, int) else -1)) if p is not None else -1
            elif e in self.relink and i > 0:
                p = seq[i - 1]
                ppos = pos.get(p, p if isinstance(p, int) else -1)
                if ppos > e:
                    self.after.setdefault(p, []).append(e)
                    self.deferred.add(e)
                    pos[e] = ppos
                else:
                    pos[e] = e
            else:
                pos[e] = e

    # --- the report
    def dropped_records(self) -> list[dict[str, Any]]:
        lines = self.f.lines
        lost_parent = self._lost_parents()
        out = []
        for idx in sorted(self.deleted | self.rewrite.keys() | lost_parent):
            if idx in self.deleted:
                outcome = "deleted"
            elif idx in self.rewrite and not _content_list(self.rewrite[idx]):
                if not _content_list(lines[idx].obj):
                    continue  # it had no blocks to lose
                outcome = "emptied"
            elif idx in lost_parent:
                outcome = "relinked"
            elif idx in self.rewrite and _mid(self.rewrite[idx]) != _mid(lines[idx].obj):
                outcome = "rewritten"  # merged into the message before it: given its id
            else:
                continue
            out.append({"line": lines[idx].lineno, "outcome": outcome, "record": lines[idx].obj})
        return out

    def _lost_parents(self) -> set[int]:
        """Re-linked lines whose old parentUuid neither the written file nor a deleted record
        (in the report) holds (it named a record missing from the file): the report keeps
        them as read."""
        if not self.relink:
            return set()
        lines = self.f.lines
        g = self.f.graph
        held: set[Any] = set(self.relink.values())
        held.update(e.obj.get("parentUuid") for e in self.new_records if e.obj is not None)
        other_uuids = {
            u
            for _, obj in self._other_lines()
            if type(obj) is dict and isinstance(u := obj.get("uuid"), str)
        }

        def is_held(u: str) -> bool:
            # a line's uuid (a node's, a pruned node's, another line's) or the parentUuid of
            # a line that keeps its own
            if u in held or u in g.index or u in g.pruned or u in other_uuids:
                return True
            return any(i not in self.relink for i in self._children_of(u))

        out = set()
        for i in self.relink:
            old = lines[i].obj.get("parentUuid")
            if isinstance(old, str) and not is_held(old):
                out.add(i)
        return out

    # --- bytes
    def render(self, keys: list[Any] | None = None, scan: list[int] | None = None) -> bytes:
        """The file as written (of `keys`, the `order()` if given); `scan`: lines read (in
        order) to scan for literals orjson changes as the bytes are read (`numbers`)."""
        got = self.written(keys, scan)
        return got if isinstance(got, bytes) else got.joined()

    def written(
        self, keys: list[Any] | None = None, scan: list[int] | None = None
    ) -> bytes | Spliced:
        """`render`, a large file's as a `files.Spliced`: its runs of lines written as read
        are places in the file, copied from it when written, not read here."""
        f = self.f
        nl = f.newline.encode()
        keys = self.order() if keys is None else keys
        text, out = self._spliced(keys, nl, _NumberScan(f.lines, scan or [], self.numbers))
        if f.trailing_newline and keys:
            out.append(b"")
        if text is not None:
            return Spliced(text, out, nl, b"\xef\xbb\xbf" if f.bom else b"")
        # the newline after the last line and the BOM joined in: 200 MB are not copied
        # again to add three bytes
        held = cast(list[bytes | memoryview], out)  # (no place in a held file)
        if f.bom:
            held[:1] = [b"\xef\xbb\xbf" + held[0]] if held else [b"\xef\xbb\xbf"]
        return nl.join(held)

    def _spliced(
        self, keys: list[Any], nl: bytes, scan: _NumberScan
    ) -> tuple[FileText | None, list[Part]]:
        """`lines(keys)`, with each run of lines written as read and in the file's order
        (joined there by this newline) taken as one piece: a 200 MB file is not cut into
        200k lines to be joined again. A piece of a held file is a view of its bytes (the
        join copies them once), of a large file (the `FileText` given back) its place
        (start, stop). The lines `scan` wants are scanned from the bytes read as it goes."""
        lines = self.f.lines
        rewrite, relink = self.rewrite, self.relink
        out: list[Part] = []
        text: FileText | None = None
        body: Any = None  # bytes, or the files.FileText of a large file
        start = end = -1  # the run being read: bytes [start, end) of `body`
        first = -1  # its first line

        def flush() -> None:
            nonlocal text
            if type(body) is bytes:
                out.append(memoryview(body)[start:end])
            elif text is None or body is text:
                text = body
                out.append((start, end))
            else:
                out.append(body.view(start, end))
            scan.run(first, body, start, end)

        # (a line index's places are read from its arrays: no line object made for each)
        index = lines if type(lines) is LineIndex else None
        for k in keys:
            if type(k) is int and k not in rewrite and k not in relink:
                span = (
                    (index.body, index.starts[k], index.ends[k])
                    if index is not None
                    else lines[k].span
                )
                if span is not None:
                    b, s, e = span
                    if b is body and s - end == len(nl):  # the next line, after this newline
                        end = e
                        continue
                    if body is not None:
                        flush()
                    scan.upto(k)
                    body, start, end, first = b, s, e, k
                    continue
            if body is not None:
                flush()
                body = None
            if type(k) is int:
                scan.upto(k)
            out.append(self._bytes(k))
            if type(k) is int:
                scan.one(k)
        if body is not None:
            flush()
        scan.upto(len(lines))
        return text, out

    def lines(self, keys: list[Any] | None = None) -> list[bytes]:
        """The file's lines as written, in order (of `keys`, the `order()` if given)."""
        return [self._bytes(k) for k in (self.order() if keys is None else keys)]

    def order(self) -> list[Any]:
        """What each written line is, in order: a line index of the file, or a `_New`."""
        if self._order is None:
            self._order = self._ordered()
        return self._order

    def places(self) -> Mapping[Any, int]:
        """Each key of `order()` -> its written index (`dict(zip(keys, range(len(keys))))`),
        read from the ranges of lines `order` writes in file order, where no key is written
        twice: no map of every line."""
        keys = self.order()
        got = Places(keys, self._ranges)
        return dict(zip(keys, range(len(keys)), strict=True)) if got.twice else got

    def _ordered(self) -> list[Any]:
        f = self.f
        out: list[Any] = []
        written: set[Any] = set()
        head = self.after.get(None)
        if head:
            self._emit_followers(None, out, written)
        # each line in file order, but those deleted or moved, each new or moved line right
        # after the line it follows; the lines between such places (no line follows them,
        # none is a follower) are taken as ranges
        left_out = self.deleted | self.deferred
        stops = sorted(left_out.union(k for k in self.after if type(k) is int))
        done = 0
        ranges = self._ranges = []
        for idx in [*stops, len(f.lines)]:
            if done < idx:
                ranges.append((len(out), done, idx))
                out += range(done, idx)
            if idx < len(f.lines) and idx not in left_out:
                self._emit(idx, out, written)
            done = idx + 1
        for items in list(self.after.values()):  # safety: anything not reached yet
            for e in items:
                if e not in written:
                    self._emit(e, out, written)
        return out

    def _emit(self, key: Any, out: list[Any], written: set[Any]) -> None:
        stack = [key]
        while stack:
            k = stack.pop()
            if k in written or (isinstance(k, int) and k in self.deleted):
                continue
            written.add(k)
            out.append(k)
            if type(k) is _New:
                self.new_written.append(k)
            followers = self.after.get(k)
            if followers:
                stack.extend(reversed(followers))

    def _emit_followers(self, key: Any, out: list[Any], written: set[Any]) -> None:
        for e in self.after.get(key, ()):
            self._emit(e, out, written)

    def _bytes(self, k: Any) -> bytes:
        """The line written for `k` (kept: the read-back reads the lines written anew)."""
        if type(k) is int and k not in self.rewrite and k not in self.relink:
            return self.f.lines[k].raw
        got = self._made.get(k)
        if got is None:
            got = self._made[k] = self._made_bytes(k)
        return got

    def _made_bytes(self, k: Any) -> bytes:
        if isinstance(k, _New):
            return compact(k.obj)
        ln: JsonlLine = self.f.lines[k]
        if k in self.rewrite:
            obj = self.rewrite[k]
            if k in self.relink:
                obj = _set_parent(obj, self.relink[k])
            return compact(obj)
        if k in self.relink:
            return _swap_parent(ln.raw, ln.obj, self.relink[k])
        return ln.raw


class _NumberScan:
    """The lines the number check reads (`want`, in file order), scanned as the render
    reads the file: a line in a run copied from that run's bytes, a line between (written
    anew, or left out) from the bytes the render read last, just after the run before it."""

    def __init__(self, lines: Sequence[JsonlLine], want: list[int], found: dict[int, bool]):
        self.lines, self.want, self.found = lines, want, found
        self.at = 0  # the first line of `want` not passed yet
        self.wanted = set(want)

    def upto(self, k: int) -> None:
        """The lines wanted before line k (not passed yet), from their bytes."""
        want, at, found, lines = self.want, self.at, self.found, self.lines
        while at < len(want) and want[at] < k:
            i = want[at]
            if i not in found:
                found[i] = has_inexact_numbers(lines[i].raw)
            at += 1
        self.at = at

    def one(self, k: int) -> None:
        """Line k, if wanted (a line written anew, or moved: its bytes were just read)."""
        if k in self.wanted and k not in self.found:
            self.found[k] = has_inexact_numbers(self.lines[k].raw)

    def run(self, first: int, body: bytes | FileText, start: int, end: int) -> None:
        """The lines wanted in a run of lines from line `first` (bytes start..end of the
        lines' `body`), each read on its own (a large file's run is not read whole)."""
        want, at, found, lines = self.want, self.at, self.found, self.lines
        while at < len(want) and want[at] >= first:
            i = want[at]
            span = lines[i].span
            if span is None or span[2] > end:
                break
            found[i] = has_inexact_numbers(body[span[1] : span[2]])
            at += 1
        self.at = at


class Places(Mapping[Any, int]):
    """The written index of each key of a writer's order (`_Writer.places`): a line of a
    range written in file order (`ranges`: (where, first line, end line)) by the range, any
    other key by a map of those. `twice`: a key is written twice (use a map of them all)."""

    def __init__(self, keys: list[Any], ranges: list[tuple[int, int, int]]) -> None:
        self.order, self.ranges = keys, ranges
        self.firsts = [lo for _, lo, _ in ranges]
        other: dict[Any, int] = {}
        done = 0
        for at, lo, hi in [*ranges, (len(keys), 0, 0)]:
            other.update(zip(keys[done:at], range(done, at), strict=True))
            done = at + hi - lo
        self.other = other
        self.twice = len(other) != len(keys) - sum(hi - lo for _, lo, hi in ranges) or any(
            self._ranged(k) is not None for k in other if type(k) is int
        )

    def _ranged(self, k: int) -> int | None:
        r = bisect_right(self.firsts, k) - 1
        if r < 0:
            return None
        at, lo, hi = self.ranges[r]
        return at + k - lo if k < hi else None

    def __getitem__(self, k: Any) -> int:
        got = self.other.get(k)
        if got is None and type(k) is int:
            got = self._ranged(k)
        if got is None:
            raise KeyError(k)
        return got

    def __iter__(self) -> Iterator[Any]:
        return iter(self.order)

    def __len__(self) -> int:
        return len(self.order)


def _chain_order_where_unchanged(runs: list[_Run], chain_pos: dict[int, int]) -> list[_Run]:
    """Runs in the order their records are laid out, changing the chain as little as it can.

    Claude Code merges a message's records across the records between them (`[use A]
    [result A][use B][result B]` is one assistant and one user message), so message order and
    chain order differ there. Turns whose messages are all unchanged keep the chain's order
    (nothing in them moves). In an edited turn the assistant's records stay in message order
    and the user's records too (that is what Claude Code merges back), interleaved by chain
    position; a new record follows the record before it in its message."""
    out: list[_Run] = []
    kept: list[_Run] = []
    turn: list[_Run] = []
    clean = True  # no run of the turn so far is edited or off the chain

    def end_turn() -> None:
        if clean:
            kept.extend(turn)
        else:
            end_kept()
            out.extend(_interleave_turn(turn, chain_pos))
        turn.clear()

    def end_kept() -> None:
        kept.sort(key=lambda r: chain_pos[r.rec])
        out.extend(kept)
        kept.clear()

    for r in runs:
        if r.starts_assistant and turn:
            end_turn()
            clean = True
        turn.append(r)
        if clean and (r.edited or not isinstance(r.rec, int) or r.rec not in chain_pos):
            clean = False
    end_turn()
    end_kept()
    return out


def _interleave_turn(turn: list[_Run], chain_pos: dict[int, int]) -> list[_Run]:
    """One edited turn: its first run, then the assistant's other runs in message order, and
    the user's records, interleaved by chain position. A new user record (a synthetic
    result) goes after the response's last line, as Claude Code writes results, and after the
    user records before it in the message (so a result keeps its place among the others). (Claude Code
    merges the user's records results first, in record order: the order of a turn's results
    may differ from the message's, which the provider does not read.)"""

    def pos(r: _Run) -> int | None:
        return chain_pos.get(r.rec) if isinstance(r.rec, int) else None

    first, rest = turn[0], turn[1:]
    key = pos(first)
    key = -1 if key is None else key
    a: list[tuple[int, _Run]] = []
    for r in (r for r in rest if r.role == "assistant"):
        p = pos(r)
        key = key if p is None else max(key, p)
        a.append((key, r))
    # Claude Code puts a user message's results first, in record order, then its other
    # blocks in record order: result records may stay where they are, the others keep
    # message order among themselves.
    u: list[tuple[int, int, _Run]] = []
    last_new = key
    last_other = -1
    before = -1  # the latest place of the user records before this one in the message
    for k, r in enumerate(r for r in rest if r.role != "assistant"):
        p = pos(r)
        if p is None:  # after the response and after the record before it in the message
            p = last_new = max(last_new, last_other, before)
        if not all(b.type == TOOL_RESULT for b in r.blocks):
            p = last_other = max(p, last_other)
        before = max(before, p)
        u.append((p, k, r))
    u.sort(key=lambda t: (t[0], t[1]))
    out = [first]
    i = j = 0
    while i < len(a) or j < len(u):
        if j >= len(u) or (i < len(a) and a[i][0] <= u[j][0]):
            out.append(a[i][1])
            i += 1
        else:
            out.append(u[j][2])
            j += 1
    return out


# --------------------------------------------------------------------------- records


def _is_result_record(rec: Any) -> bool:
    return isinstance(rec, _New) and rec.kind == "result"


def _same_blocks(a: Sequence[Block], b: Sequence[Block]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def _mid(obj: dict[str, Any]) -> str | None:
    msg = obj.get("message")
    mid = msg.get("id") if type(msg) is dict else None
    return mid if isinstance(mid, str) else None


def _content_list(obj: dict[str, Any]) -> list[dict[str, Any]]:
    msg = obj.get("message")
    content = msg.get("content") if type(msg) is dict else None
    return [b for b in content if type(b) is dict] if type(content) is list else []


def _first_result_block(obj: Any) -> dict[str, Any] | None:
    if type(obj) is not dict:
        return None
    for b in _content_list(obj):
        if b.get("type") == TOOL_RESULT:
            return b
    return None


def _ordered_like(data: dict[str, Any], like: dict[str, Any] | None) -> dict[str, Any]:
    if not like:
        return dict(data)
    out = {k: data[k] for k in like if k in data}
    out.update((k, v) for k, v in data.items() if k not in out)
    return out


def _block_dict(b: Block) -> Any:
    if isinstance(b.data, str):
        return {"type": "text", "text": b.data}
    return b.data


def _copy_record(obj: dict[str, Any]) -> dict[str, Any]:
    rec = dict(obj)
    if type(rec.get("message")) is dict:
        rec["message"] = dict(rec["message"])
    return rec


def _with_content(
    obj: dict[str, Any], blocks: Sequence[Block], orig: tuple[Block, ...]
) -> dict[str, Any]:
    rec = _copy_record(obj)
    msg = rec.get("message")
    if type(msg) is not dict:
        msg = {"role": obj.get("type"), "content": []}
        rec["message"] = msg
    if len(blocks) == 1 and isinstance(blocks[0].data, str) and isinstance(msg.get("content"), str):
        msg["content"] = blocks[0].data
    else:
        msg["content"] = [_block_dict(b) for b in blocks]
    # an id carried to this record's result: keep the record's own pointer in step
    by_bid = {b.bid: b for b in orig}
    for b in blocks:
        old = by_bid.get(b.bid)
        if old is not None and old is not b and old.tool_id and b.tool_id != old.tool_id:
            if rec.get("sourceToolUseID") == old.tool_id:
                rec["sourceToolUseID"] = b.tool_id
    return rec


def _set_parent(obj: dict[str, Any], parent: str | None) -> dict[str, Any]:
    if "parentUuid" in obj:
        rec = dict(obj)
        rec["parentUuid"] = parent
        return rec
    return {"parentUuid": parent, **obj}


_PLAIN = re.compile(r"[\x20\x21\x23-\x5b\x5d-\x7e]*")


def _plain_token(v: Any) -> bool:
    """None, or a string JSON writes as itself between quotes (no escapes)."""
    return v is None or (type(v) is str and _PLAIN.fullmatch(v) is not None)


def _swap_parent(raw: bytes, obj: dict[str, Any], parent: str | None) -> bytes:
    """Replace only the parentUuid value in the original bytes when it is the first key."""
    old = obj.get("parentUuid")
    if not (_plain_token(old) and _plain_token(parent)):
        return compact(_set_parent(obj, parent))
    old_tok = b"null" if old is None else b'"' + old.encode() + b'"'
    head = b'{"parentUuid":' + old_tok
    if raw.startswith(head):
        new_tok = b"null" if parent is None else b'"' + parent.encode() + b'"'
        return b'{"parentUuid":' + new_tok + raw[len(head) :]
    return compact(_set_parent(obj, parent))


# --------------------------------------------------------------------------- timestamps


def stamped(session: Session, made: Collection[int]) -> Session:
    """`session` with each message a fix made or edited (`made`: uids) stamped as it is
    written, so that what the session's analysis finds (out-of-order-timestamp,
    result-before-use) is what `check` finds in the written file.

    A message's time is its first record's in the written chain (as the loader reads it).
    A record it keeps is written with its own time: Claude Code lays a conversation out by
    the parentUuid chain, never by time, and the time read is not lost (a result moved
    home keeps the time it came back at). A message that keeps no record opens with a new
    one, stamped 1 ms after the latest record of the message before it and never after
    the message after it: Claude Code resumes from the newest leaf, so a new tip must be
    newer than what it follows. The writer stamps that record with the same function."""
    st = session.state
    if not made or not isinstance(st, CCState):
        return session
    out = session.messages
    at: set[int] = set()
    for i, m in enumerate(out):
        if m.uid in made:
            # a message is stamped from the live ones around it: those are looked at too
            at.update(_live_near(out, i))
    for _ in range(4):  # new messages in a row are stamped from each other: until it holds
        changed = False
        for i in sorted(at, reverse=True):
            m = out[i]
            t = _written_time(st.view, out, i)
            if t != m.timestamp:
                if out is session.messages:
                    out = list(out)
                out[i] = m.with_timestamp(t)
                changed = True
        if not changed:
            break
    return session if out is session.messages else session.copy_with(out)


def _written_time(view: View, msgs: list[Message], i: int) -> float | None:
    """The time message i is written with (its first record's, as the loader reads it), as
    `_Writer` lays it out: an assistant's records in message order, a user message's by
    chain position; a block keeps its record where that record is of the message's role;
    a record whose blocks all went takes the message's new blocks other than results. A new
    record that opens a message keeps the time of the message's first record kept (the
    record it is written before), else it is stamped 1 ms after the message before and
    never after the message after it; the writer stamps it with this time."""
    m = msgs[i]
    if getattr(m, "_meta", None) is _DERIVED:
        return m.timestamp  # a message as loaded: written as read
    role = m.role or "user"
    kept = [
        b.origin
        for b in m.blocks
        if type(b.origin) is int and _fact(view, b.origin, "type") == role
    ]
    first: int | None = kept[0] if kept else None
    if role != "assistant" and len(set(kept)) > 1:
        first = min(kept, key=lambda idx: _chain_pos(view, idx))
    if first is None and m.blocks and m.blocks[0].type != TOOL_RESULT and view.msg_records(m):
        first = view.msg_records(m)[0]  # its record, emptied, holds its new blocks
    if first is not None:
        return _epoch(_fact(view, first, "timestamp"))
    before = next((msgs[k] for k in range(i - 1, -1, -1) if msgs[k].live), None)
    after = next((msgs[k] for k in range(i + 1, len(msgs)) if msgs[k].live), None)
    p_ms = None
    if before is not None:
        times = [_fact_ms(view, b.origin) for b in before.blocks if type(b.origin) is int]
        if before.timestamp is not None:
            times.append(before.timestamp * 1000)
        p_ms = max((t for t in times if t is not None), default=None)
    t_after = after.timestamp if after is not None else None
    ms = _between(p_ms, t_after * 1000 if t_after is not None else None)
    try:
        return None if ms is None else _epoch(_iso(ms))
    except (OverflowError, OSError, ValueError):
        return None


def _record(lines: Sequence[JsonlLine], idx: int) -> dict[str, Any]:
    obj = peek(lines[idx]) if 0 <= idx < len(lines) else None
    return obj if type(obj) is dict else {}


def _fact(view: View, idx: int, key: str) -> Any:
    """A record's type, uuid or timestamp: from the graph's lists where the light pass read
    that line as a node (a timestamp not a string is "" there: no time, as read), else from
    the record (a large file's line is read from disk again)."""
    g = view.file.graph
    if g.lines is view.file.lines and 0 <= idx < len(g.uuid) and g.uuid[idx]:
        return g.kind[idx] if key == "type" else g.uuid[idx] if key == "uuid" else g.ts[idx]
    return _record(view.file.lines, idx).get(key)


def _fact_ms(view: View, idx: int) -> float | None:
    ts = _fact(view, idx, "timestamp")
    return ts_ms(ts) if type(ts) is str else None


def _live_near(msgs: list[Message], i: int) -> list[int]:
    """Message i (if live) and the live messages right before and after it."""
    near = [i] if msgs[i].live else []
    k = i - 1
    while k >= 0 and not msgs[k].live:
        k -= 1
    if k >= 0:
        near.append(k)
    k = i + 1
    while k < len(msgs) and not msgs[k].live:
        k += 1
    if k < len(msgs):
        near.append(k)
    return near


def _chain_pos(view: View, idx: int) -> int:
    """The record's place in the view's chain (as the writer's `chain_pos`; after it when it
    is not on it)."""
    return view.chain_place(_fact(view, idx, "uuid"))


def _between(p_ms: float | None, c_ms: float | None) -> float | None:
    """Parent + 1 ms, but never later than the child (and never before the parent)."""
    if p_ms is None:
        return c_ms
    t = p_ms + 1.0
    if c_ms is not None and c_ms < t:
        t = max(p_ms, c_ms)
    return t


def _iso(ms: float) -> str:
    whole = int(round(ms))
    dt = datetime.fromtimestamp(whole // 1000, UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + f".{whole % 1000:03d}Z"


# --------------------------------------------------------------------------- verification


def _signature(messages: list[Message]) -> list[tuple[Any, ...]]:
    """The live conversation as the API receives it: consecutive messages of one role are
    merged (the loader merges consecutive user records; providers merge the rest), and the
    tool_results that open a user message compared as a set (the writer keeps result records
    where they were, so their order may differ from the repaired message's)."""
    return [_signature_of(role, blocks) for role, blocks in _merged(messages)]


def _results_as_set(blocks: tuple[Any, ...]) -> tuple[Any, ...]:
    k = 0
    while k < len(blocks) and blocks[k][0] == "block" and ("type", TOOL_RESULT) in blocks[k][1]:
        k += 1
    return tuple(sorted(blocks[:k], key=repr)) + blocks[k:] if k > 1 else blocks


def _block_sig(b: Block) -> Any:
    data = b.data
    if isinstance(data, str):
        return ("text", data)
    if isinstance(data, dict) and data.get("type") == "text" and set(data) <= {"type", "text"}:
        return ("text", data.get("text"))
    return ("block", _freeze(data))


def _freeze(v: Any, depth: int = 0) -> Any:
    if depth > 64 and isinstance(v, (dict, list)):
        return compact(v)  # deep data: compared as written, without recursing further
    if isinstance(v, dict):
        return tuple(sorted((k, _freeze(x, depth + 1)) for k, x in v.items()))
    if isinstance(v, list):
        return tuple(_freeze(x, depth + 1) for x in v)
    return v


def check_resumes(session: Session, again: Session) -> None:
    """`again` is the written bytes loaded again (the one read-back, repair.readback): it
    must resume as the repaired conversation, and each inline sidechain as repaired. A
    sidechain left with no record of its own (a branch whose only own record was an orphan
    result, dropped) is no conversation of its own any more: its records are checked as
    part of the conversation that holds them."""
    st = session.state
    if not isinstance(st, CCState):
        return
    path = st.file.path
    threads = [
        t.messages
        for t in ([] if st.inline_thread else session.threads)
        if isinstance(t.state, CCState) and t.state.file is st.file and t.state.inline_thread
    ]
    if st.inline_thread:
        got_threads = [_signature(again.messages)] + [_signature(t.messages) for t in again.threads]
        want_threads = [_signature(session.messages)]
    else:
        _same_conversation(path, session.messages, again.messages)
        got_threads = [_signature(t.messages) for t in again.threads]
        held = [_records(msgs) for msgs in (session.messages, *threads)] if threads else []
        want_threads = [
            _signature(msgs)
            for k, msgs in enumerate(threads, 1)
            if not _records(msgs) <= set().union(*held[:k], *held[k + 1 :])
        ]
    for w in want_threads:
        if w not in got_threads:
            raise ExportRefused(
                f"{path}: after writing, a sidechain thread no longer loads as repaired"
            )


def _records(messages: list[Message]) -> set[int]:
    """The line indexes of the records a conversation's live messages hold."""
    return {b.origin for m in messages if m.live for b in m.blocks if isinstance(b.origin, int)}


def _same_conversation(path: str, want: list[Message], got: list[Message]) -> None:
    """ExportRefused unless `got` has `want`'s signature (`_signature`). Merged message by
    merged message, block data compared as they are first (the lines written as read are
    the very objects read, and equal data has an equal signature); only a message that
    differs so is compared by its signature. Where `got` holds `want`'s very messages but
    a few (the narrowed read-back), only the merged messages holding those are compared."""
    if _same_but_few(want, got):
        return
    a, b = _merged(want), _merged(got)
    for i, ((ra, xa), (rb, xb)) in enumerate(zip(a, b, strict=False)):
        if ra == rb and len(xa) == len(xb):
            if all(x.data is y.data or x.data == y.data for x, y in zip(xa, xb, strict=True)):
                continue
        if _signature_of(ra, xa) != _signature_of(rb, xb):
            raise ExportRefused(
                f"{path}: the written file would not resume as the repaired conversation "
                f"(message {i} differs on reload)"
            )
    if len(a) != len(b):
        raise ExportRefused(
            f"{path}: the written file would not resume as the repaired conversation "
            f"({len(b)} live messages on reload, {len(a)} expected)"
        )


def _same_but_few(want: list[Message], got: list[Message]) -> bool:
    """True when `got` has `want`'s signature, told from the positions where they hold other
    messages only (of one role and liveness each, so both merge alike): each merged
    message holding one, as `_merged` makes it, compared as `_same_conversation` compares.
    False: compare them whole (also where one of those differs, for the message's number)."""
    if len(want) != len(got):
        return False
    differ = [p for p, (x, y) in enumerate(zip(want, got, strict=True)) if x is not y]
    if len(differ) * 8 > len(want):
        return False
    for p in differ:
        if want[p].role != got[p].role or want[p].live != got[p].live:
            return False
    done = -1
    for p in differ:
        if p <= done or not want[p].live:
            continue
        lo, hi = _merged_span(want, p), _merged_span(want, p, 1)
        done = hi
        (ra, xa), (rb, xb) = _merged(want[lo : hi + 1])[0], _merged(got[lo : hi + 1])[0]
        if len(xa) == len(xb) and all(
            x.data is y.data or x.data == y.data for x, y in zip(xa, xb, strict=True)
        ):
            continue
        if _signature_of(ra, xa) != _signature_of(rb, xb):
            return False
    return True


def _merged_span(messages: list[Message], p: int, step: int = -1) -> int:
    """The first (step -1) or last (step 1) position of the merged message that live
    message p is part of: the live messages of its role around it, the others between
    them skipped."""
    role = messages[p].role
    end = q = p
    while 0 <= q + step < len(messages):
        q += step
        m = messages[q]
        if not m.live:
            continue
        if m.role != role:
            break
        end = q
    return end


def _merged(messages: list[Message]) -> list[tuple[str | None, list[Block]]]:
    """The live messages with consecutive ones of one role merged (as `_signature`)."""
    out: list[tuple[str | None, list[Block]]] = []
    for m in messages:
        if not m.live:
            continue
        if out and out[-1][0] == m.role:
            out[-1][1].extend(m.blocks)
        else:
            out.append((m.role, list(m.blocks)))
    return out


def _signature_of(role: str | None, blocks: list[Block]) -> tuple[Any, ...]:
    return (role, _results_as_set(tuple(_block_sig(b) for b in blocks)))
