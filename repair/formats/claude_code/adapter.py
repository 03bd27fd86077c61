"""`claude-code`: Claude Code session transcripts (`~/.claude/projects/<project>/<id>.jsonl`).

Loading reproduces what `claude --resume <file>` rebuilds (docs/formats.md, Claude Code):
the newest non-sidechain leaf, its `parentUuid` chain, parallel results put back after
their `message.id` group, compaction boundaries respected. Sidechains (inline
`isSidechain` records, the `<id>/subagents/agent-*.jsonl` files, project-level
`agent-*.jsonl` files of this session) become `Session.threads`. Records without a uuid
(summary, file-history-snapshot, queue-operation, last-prompt, ...) and progress/attachment/
system records are not messages and are written back untouched; `system` local commands are
not shown as messages either (they only become user text at send time).

Writing (write.py) maps the engine's edits back to records and re-runs this loader on
the written bytes.
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Callable, Collection, Hashable, Sequence
from typing import TYPE_CHECKING, Any

from ...errors import InputError
from ...files import Source, Spliced
from ...jsonio import has_inexact_numbers
from ...model import Block, Message, Session
from ..base import Adapter, Edited, Export, JsonlLine, Probe, records_merged, same_messages
from ..probe import probe_path
from ..registry import register
from .chain import (
    MESSAGE_TYPES,
    NODE_TYPES,
    PROGRESS,
    candidates,
    newest,
    recover_lines,
    recover_parallel,
    roots,
    ts_ms,
    walk,
)
from .gaps import RecordFinding, apply_relinks, chain_findings
from .load import (
    _USES_LAST,
    CCFile,
    CCState,
    _block_type,
    _in_order,
    _use_before_other,
    build_view,
    light_graph,
    line_of,
    peek,
)
from .readback import read_back_edited
from .write import (
    check_resumes,
    number_lines,
    scanned_numbers,
    stamped,
    views_of,
    write_session,
    written_lines,
)

if TYPE_CHECKING:
    from ...records import RecordChange

# Records that are not conversation nodes (no uuid): metadata, passed through untouched.
META_TYPES = frozenset(
    {
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "last-prompt",
        "custom-title",
        "permission-mode",
        "tag",
        "mode",
        "pr-link",
        "worktree-state",
        "content-replacement",
        "agent-name",
        "ai-title",
        "agent-setting",
        "bridge-session",
    }
)


def is_record(obj: Any) -> bool:
    return _is_node(obj) and "sessionId" in obj


def _is_node(obj: Any) -> bool:
    """A conversation node: a record a lost `sessionId` leaves recognisable (a fix that
    dropped every other record must read back)."""
    return (
        type(obj) is dict
        and isinstance(obj.get("type"), str)
        and (obj.get("type") in NODE_TYPES or obj.get("type") == PROGRESS)
        and isinstance(obj.get("uuid"), str)
        and "parentUuid" in obj
    )


def _is_str_in(value: Any, names: frozenset[str]) -> bool:
    return type(value) is str and value in names


class ClaudeCodeAdapter(Adapter):
    name = "claude-code"
    default_target = "claude-code"  # the client as released judges what it sends
    reads_head = True
    # a merged record the writer gives the first's message id is in dropped_records
    # ("rewritten", whole as read); one it deletes too ("deleted")
    writes_merged_as_read = True

    def detect(self, probe: Probe) -> int:
        if probe.kind == "json":  # a transcript of one line
            if is_record(probe.doc):
                return 85
            doc = probe.doc
            if _is_node(doc):
                return 60
            # only a metadata record left (a fix dropped everything else): still a transcript
            if (
                type(doc) is dict
                and _is_str_in(doc.get("type"), META_TYPES)
                and "payload" not in doc
            ):
                return 50
            return 0
        seen = 0
        meta_only = True
        nodes = False
        for ln in probe.lines[:200]:
            obj = ln.obj
            if type(obj) is not dict:
                continue
            seen += 1
            if is_record(obj):
                return 90
            nodes = nodes or _is_node(obj)
            if not _is_str_in(obj.get("type"), META_TYPES) or "payload" in obj:
                meta_only = False
            if seen >= 50:
                break
        return 60 if nodes else 50 if seen and meta_only else 0

    def load(self, probe: Probe) -> Session:
        return load_probe(self, probe, with_files=True)

    def load_file(self, probe: Probe) -> Session:
        """The transcript alone, without its subagent files (a written file read back)."""
        return load_probe(self, probe, with_files=False)

    def load_head(self, probe: Probe) -> Session:
        return load_probe(self, probe, with_files=False)

    def original_bytes(self, session: Session) -> bytes | None:
        """Unchanged when every conversation written into the file is (inline sidechains
        are written with their main session)."""
        if not isinstance(session.state, CCState):
            return None  # a subagent file that could not be read: `write` refuses
        views = views_of(session)
        if all(same_messages(msgs, view.messages) for view, msgs in views):
            return session.state.file.data
        return None

    def write(self, session: Session) -> Export:
        st = session.state
        lean = isinstance(st, CCState) and len(st.file.held) >= LEAN_BYTES
        return write_session(session, scan_numbers=lean and not session.numbers_exact)

    def export(self, session: Session) -> Export:
        """As written, with the records an earlier write left out when the file is that
        write loaded again (a re-link, gaps.py)."""
        got = super().export(session)
        st = session.state
        carried = st.file.carried if isinstance(st, CCState) else []
        return Export(got.body, [*carried, *got.dropped_records]) if carried else got

    def record_changes(
        self,
        before: Session,
        after: Session,
        bytes_of: Callable[[Session], bytes] | None = None,
    ) -> list[RecordChange]:
        """From the writer's lines (no whole-file join or split of a 200 MB file)."""
        from ...records import line_changes

        return line_changes(written_lines(before), written_lines(after))

    def read_back(self, probe: Probe) -> Session:
        return self.load_file(probe)

    def parsed_records(self, session: Session) -> dict[bytes, Any] | None:
        state = session.state
        if not isinstance(state, CCState) or len(state.file.held) >= LEAN_BYTES:
            # a large file's records were released after the light pass: asking for them
            # parses them again, which the read-back does itself, without a dict of bytes
            return None
        return {ln.raw: ln.obj for ln in state.file.lines if ln.obj is not None}

    def reads_numbers_exactly(self, session: Session) -> bool:
        """A large file's records were released after the light pass: what its writer wrote
        of them (a record rewritten, re-linked, copied into a new one or kept whole for the
        report) it parsed again, and what it wrote of the messages' blocks comes from the
        records of the messages that changed. Those records alone are scanned; a smaller
        file whole."""
        state = session.state
        if not isinstance(state, CCState) or len(state.file.held) < LEAN_BYTES:
            return super().reads_numbers_exactly(session)
        lines = state.file.lines
        known = scanned_numbers(state.file)  # (the write scanned them as it read the file)
        return not any(
            known[i] if i in known else has_inexact_numbers(lines[i].raw)
            for i in sorted(number_lines(session))
        )

    def read_back_edited(
        self, session: Session, data: bytes | Spliced | None = None
    ) -> Edited | None:
        """The lines the writer wrote anew, read back with the chain they are on
        (readback.py), when `data` is what the writer gave last."""
        return read_back_edited(session, data) if data is not None else None

    def chain_findings(self, session: Session) -> list[RecordFinding]:
        return chain_findings(session)

    def apply_file_edits(self, session: Session, edits: list[Any]) -> Session:
        return apply_relinks(session, edits)

    def check_written(self, session: Session, again: Session) -> None:
        check_resumes(session, again)

    def message_records(self, session: Session) -> dict[int, frozenset[Hashable]]:
        """Records keyed by (the file as read, line index): a main conversation and its
        inline sidechains are views of one CCFile, whose walks up the parentUuid chain
        often cross the same records."""
        st = session.state
        if not isinstance(st, CCState):
            return {}
        view, key = st.view, id(st.file)
        return {m.uid: frozenset((key, idx) for idx in view.msg_records(m)) for m in view.messages}

    def block_record(self, session: Session, block: Any) -> Hashable | None:
        st = session.state
        if type(block.origin) is not int or not isinstance(st, CCState):
            return None
        return (id(st.file), block.origin)

    def claim_folder(self, folder: str) -> str | None:
        folder = os.path.normpath(folder)
        sibling = folder + ".jsonl"
        if os.path.isfile(sibling) and os.path.isdir(os.path.join(folder, "subagents")):
            return sibling
        return None

    def session_beside(self, path: str) -> str | None:
        if path.endswith(".meta.json"):  # a subagent's description beside its transcript
            transcript = path[: -len(".meta.json")] + ".jsonl"
            if os.path.isfile(transcript):
                return transcript
        return super().session_beside(path)

    def merged(
        self, first: Message, second: Message, moved: Sequence[Block] | None = None
    ) -> Message:
        taken = None if moved is None else {b.origin for b in moved}  # a block's record
        return records_merged(first, second, taken)

    def stamped(self, session: Session, made: Collection[int]) -> Session:
        return stamped(in_sent_order(session, made), made)

    def block_time(self, session: Session, block: Any) -> float | None:
        """The timestamp of the record the block was read from (one record per block)."""
        state = session.state
        if type(block.origin) is not int or not isinstance(state, CCState):
            return None
        lines = state.file.lines
        if not 0 <= block.origin < len(lines):
            return None
        obj = peek(lines[block.origin])
        if type(obj) is not dict:
            return None
        ts = obj.get("timestamp")
        ms = ts_ms(ts) if type(ts) is str else None
        return None if ms is None else ms / 1000


def in_sent_order(session: Session, made: Collection[int]) -> Session:
    """`session` with each assistant message a fix made or edited holding its blocks in the
    order Claude Code sends them: the writer writes its records as one `message.id` group,
    and a group of several records is sent with its tool_use blocks after the others when
    one came before another block and no thinking is among them (`load._sent_order`), so
    the merge of [text, use] and [text, use] resumes as [text, text, use, use]."""
    if not made or not isinstance(session.state, CCState):
        return session
    out = session.messages
    for i, m in enumerate(out):
        if m.uid not in made or m.role != "assistant" or not m.live:
            continue
        blocks = m.blocks
        records = {b.origin if type(b.origin) is int else None for b in blocks}
        if len(records) < 2 or not _use_before_other(b.data for b in blocks):
            continue
        if out is session.messages:
            out = list(out)
        out[i] = m.with_blocks(_in_order(blocks, _USES_LAST, _block_type))
    return session if out is session.messages else session.copy_with(out)


# A file this large is loaded without keeping its parsed records: each line's record is read
# once for the graph and the messages (their content blocks are kept) and then forgotten,
# read again only if something asks for it (docs/performance.md). Smaller files keep them.
LEAN_BYTES = 8 << 20


def file_from_probe(probe: Probe) -> CCFile:
    if probe.kind == "json":
        body = probe.data[3:] if probe.bom else probe.data
        stripped = body.rstrip(b"\r\n")
        lines = [JsonlLine(lineno=1, raw=stripped, obj=probe.doc)]
        newline = "\r\n" if stripped != body and body.endswith(b"\r\n") else "\n"
        graph = light_graph(lines)
        return CCFile(
            probe.path,
            probe.data,
            lines,
            newline,
            stripped != body,
            probe.bom,
            graph,
            single_doc=True,
        )
    lean = probe.size >= LEAN_BYTES and all(hasattr(ln, "release") for ln in probe.lines[:1])
    graph = light_graph(probe.lines, release=lean)
    return CCFile(
        probe.path,
        probe.held(),
        probe.lines,
        probe.newline,
        probe.trailing_newline,
        probe.bom,
        graph,
    )


def load_probe(adapter: Adapter, probe: Probe, with_files: bool) -> Session:
    f = file_from_probe(probe)
    g = f.graph
    index, side, kind = g.index, g.side, g.kind
    cands = candidates(g)
    main_cands = ([u for u in cands if not side[index[u]]] if any(side) else None) or cands
    leaf = newest(g, main_cands)
    chain: list[str] = []
    at: list[int] = []  # the chain's lines
    stop = None
    recovered = 0
    w = None
    if leaf is not None:
        w = walk(g, leaf)
        at, recovered = recover_lines(g, w.at)
        chain = list(map(g.uuid.__getitem__, at)) if recovered else w.chain
        if w.stop == "missing":
            stop = f"the chain stops at a parentUuid naming no record ({w.stop_uuid})"
        elif w.stop == "cycle":
            stop = f"the chain loops back to {w.stop_uuid}"
    main_side = bool(at) and side[at[-1]]
    not_on: set[int] = set()
    if len(at) < len(index):  # (a chain's lines are distinct: else every node is on it)
        not_on.update(index.values())
        not_on.difference_update(at)
    # the message nodes off the chain: (uuid, line) in map order
    uuid = g.uuid
    off = [(uuid[i], i) for i in g.in_map_order(not_on) if kind[i] in MESSAGE_TYPES]
    root = roots(g) if off else {}
    main_root = root.get(chain[0]) if chain else None
    boundary = _boundary_line(f, chain)

    # sidechain components not on the main chain: their own threads
    side_groups: dict[str, list[str]] = {}
    for u, i in off:
        if side[i]:
            side_groups.setdefault(root.get(u, u), []).append(u)
    thread_specs = []
    for members in side_groups.values():
        member_set = set(members)
        tl = newest(g, [u for u in cands if u in member_set]) or members[-1]
        tw = walk(g, tl)
        tchain, _ = recover_parallel(g, tw.chain)
        tchain_set = set(tchain)
        off_chain = sorted(
            (index[u], "an abandoned branch of this sidechain")
            for u in members
            if u not in tchain_set
        )
        thread_specs.append((tchain, off_chain, tw))

    # the main view's hidden and malformed lines
    pruned_reason = "history before the last compaction (not sent)"
    hidden: list[tuple[int, str]] = [(i, "malformed: " + why) for i, why in g.odd]
    for idx in g.pruned.values():
        if _is_str_in(f.lines[idx].obj.get("type"), MESSAGE_TYPES):
            hidden.append((idx, pruned_reason))
    for u, i in off:
        if side[i]:
            continue
        if boundary is not None and i < boundary:
            reason = pruned_reason
        elif main_root is not None and root.get(u) == main_root:
            reason = "an abandoned branch (rewind/edit): not on the resumed chain"
        else:
            reason = "not connected to the resumed conversation"
        hidden.append((i, reason))
    hidden.sort()
    view = build_view(f, chain, hidden, sidechain=main_side, at=at)
    session = adapter.session(
        f.path,
        view.messages,
        CCState(f, view, stop=stop, recovered=recovered, walk=w),
        "main conversation" if not main_side else "sidechain",
    )
    for tchain, thidden, tw in thread_specs:
        tview = build_view(f, tchain, thidden, sidechain=True)
        first = line_of(tview.messages[0]) if tview.messages else 0
        session.threads.append(
            adapter.session(
                f.path,
                tview.messages,
                CCState(f, tview, inline_thread=True, walk=tw),
                f"sidechain at line {first}",
            )
        )
    # every view is built: what they needed of the records is in them
    g.items, g.bad, g.one, g.one_id = [], {}, [], []
    if with_files:
        session.threads.extend(_subagent_threads(adapter, f, chain))
    return session


def _boundary_line(f: CCFile, chain: list[str]) -> int | None:
    """Line index of the compact boundary the chain starts from, if any."""
    if not chain:
        return None
    g = f.graph
    first = g.index[chain[0]]
    if g.kind[first] == "system" and f.lines[first].obj.get("subtype") == "compact_boundary":
        return first
    return None


def _session_id(f: CCFile, chain: list[str]) -> str | None:
    for u in reversed(chain):
        sid = f.graph.obj(u).get("sessionId")
        if isinstance(sid, str):
            return sid
    return None


def _subagent_threads(adapter: Adapter, f: CCFile, chain: list[str]) -> list[Session]:
    """`<dir>/<session>/subagents/agent-*.jsonl` (2.1.x) and project-level `agent-*.jsonl`
    files whose records carry this session's id (2.0.x)."""
    base, ext = os.path.splitext(f.path)
    if ext != ".jsonl" or os.path.basename(base).startswith("agent-"):
        return []
    paths = sorted(glob.glob(os.path.join(glob.escape(base), "subagents", "agent-*.jsonl")))
    sid = _session_id(f, chain)
    if sid:
        # a name already in subagents/ is that agent (a repaired copy written there by
        # `fix -o`): the project-level file of the same name is its original
        names = {os.path.basename(p) for p in paths}
        for p in sorted(
            glob.glob(os.path.join(glob.escape(os.path.dirname(base)), "agent-*.jsonl"))
        ):
            if os.path.basename(p) not in names and _first_session_id(p) == sid:
                paths.append(p)
    out = []
    for p in paths:
        try:
            probe = probe_path(p)
            if adapter.detect(probe) <= 0:
                raise InputError(p, "not a Claude Code transcript")
            t = load_probe(adapter, probe, with_files=False)
            t.source = Source.of(probe.path, probe.held(), probe.stat)
        except InputError as exc:
            unreadable = Message(
                role=None,
                blocks=(),
                malformed=f"cannot read the subagent file: {exc}",
                src={"line": 1},
            )
            t = adapter.session(p, [unreadable], None)
        t.label = _agent_label(p)
        out.append(t)
    return out


def _first_session_id(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            head = fh.readline(1 << 20)
        obj = json.loads(head)
    except (OSError, ValueError):
        return None
    sid = obj.get("sessionId") if isinstance(obj, dict) else None
    return sid if isinstance(sid, str) else None


def _agent_label(path: str) -> str:
    name = os.path.basename(path)[: -len(".jsonl")]
    meta_path = os.path.join(os.path.dirname(path), name + ".meta.json")
    try:
        with open(meta_path, "rb") as fh:
            meta = json.loads(fh.read(1 << 16))
    except (OSError, ValueError):
        return f"subagent {name}"
    if isinstance(meta, dict):
        bits = [str(meta[k]) for k in ("agentType", "description") if isinstance(meta.get(k), str)]
        if bits:
            return f"subagent {name} ({': '.join(bits)})"
    return f"subagent {name}"


register(ClaudeCodeAdapter())
