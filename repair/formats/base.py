"""What a format adapter is, and the parsed input it is handed."""

from __future__ import annotations

import json
import os
import re
from abc import ABC, abstractmethod
from array import array
from collections.abc import Callable, Collection, Hashable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import compress, count, repeat
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast, overload

import orjson

from ..jsonio import InexactNumbers, JsonNumber, loads_fast, reads_exactly
from ..model import Block, Message, Session
from ..place import Place

if TYPE_CHECKING:
    from ..files import FileText, Spliced
    from ..plan import Frozen
    from ..records import RecordChange

T = TypeVar("T")


def type_name(value: Any) -> str:
    """A JSON value's kind for a message: 'a list', 'an object', 'null', ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float, JsonNumber)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def own_type(kind: str, format: str) -> str:
    """A block type read from a part of `format` that has no such part: named after the
    format when it would pass for a call or a result (a part typed `tool_use` is neither)."""
    return f"{format} {kind}" if kind in ("tool_use", "tool_result") else kind


def shown(value: Any, limit: int = 60) -> str:
    """A value for an error message: a string quoted (and cut), anything else by its kind."""
    if isinstance(value, str):
        return repr(value if len(value) <= limit else value[:limit] + "…")
    return type_name(value)


# Detection looks at this many entries of a long list: the first and the last third, and
# the rest spread evenly over the middle (a format shows in its first turns and throughout;
# scoring all 100k entries of a session cost 0.3 s, more than some whole passes).
DETECT_SAMPLE = 3000


def detect_sample(entries: list[Any]) -> list[Any]:
    """The entries detection scores: all of a short list, a spread sample of a long one."""
    n = len(entries)
    if n <= DETECT_SAMPLE:
        return entries
    third = DETECT_SAMPLE // 3
    step = (n - 2 * third) // third + 1
    return entries[:third] + entries[third : n - third : step] + entries[n - third :]


@dataclass(slots=True)
class JsonlLine:
    """One physical line of a JSONL file. `raw` excludes the line terminator."""

    lineno: int  # 1-based
    raw: bytes
    obj: Any = None
    error: str | None = None  # why the line is not a JSON value (None for blank lines too)

    @property
    def blank(self) -> bool:
        return not self.raw.strip()

    @property
    def span(self) -> tuple[bytes | FileText, int, int] | None:
        """Where `raw` is in the file's bytes, for a line read in place (`IndexedLine`)."""
        return None


_SPACE = frozenset(b" \t\n\r\x0b\x0c")  # what bytes.strip() strips


class IndexedLine(JsonlLine):
    """A line of a JSONL file, as its place in the file's bytes (the line index): `raw` is
    sliced when asked for (from the bytes read, or from the file itself when it is not held:
    `files.FileText`), so the file is in memory once at most, not twice; `obj` is parsed
    when first asked for (the same parser and errors as a line parsed up front). `release`
    forgets the parsed value of a line a loader has taken what it keeps from (its content
    blocks): the record is parsed again (and kept) if anything asks for it later, such as a
    writer, and a file of 1 GB need not hold every record's envelope at once."""

    __slots__ = ("_body", "_start", "_end", "_parse", "_value", "_why", "_state")

    def __init__(
        self, lineno: int, body: bytes | FileText, start: int, end: int, parse: Any
    ) -> None:
        self.lineno = lineno
        self._body = body
        self._start = start
        self._end = end
        self._parse = parse
        self._value: Any = None
        self._why: str | None = None
        self._state = 0  # 0: not parsed (yet, or again after `release`), 1: parsed

    def _read(self) -> None:
        self._take(self._body[self._start : self._end])

    def _take(self, raw: bytes) -> None:
        """Parse `raw`, the line's bytes, and hold what it is."""
        value, why = None, None
        if raw and raw[0] not in _SPACE or raw.strip():  # not blank (`blank`, without a read)
            try:
                value = self._parse(raw)
            except (ValueError, RecursionError) as exc:
                why = describe_json_error(exc)
        self._value, self._why, self._state = value, why, 1

    @property
    def raw(self) -> bytes:  # type: ignore[override]
        return self._body[self._start : self._end]

    @property
    def parsed(self) -> bool:
        """The record is held parsed (read and not released since)."""
        return self._state == 1

    @property
    def span(self) -> tuple[bytes | FileText, int, int]:
        """The bytes the line is in, and where: `raw` is `body[start:end]`."""
        return self._body, self._start, self._end

    @property
    def blank(self) -> bool:
        # a line that opens with a non-space byte (a record) is not blank: no copy to strip
        start, end = self._start, self._end
        if start < end and self._body[start] not in _SPACE:
            return False
        return not self._body[start:end].strip()

    @property
    def obj(self) -> Any:
        if self._state == 0:
            self._read()
        return self._value

    @obj.setter
    def obj(self, value: Any) -> None:  # a record a loader rewrote in place
        self._value, self._why, self._state = value, None, 1

    @property
    def error(self) -> str | None:  # type: ignore[override]
        if self._state == 0:
            self._read()
        return self._why

    def release(self) -> None:
        if self._state == 1 and self._why is None:  # a line that is not JSON keeps its error
            self._value, self._state = None, 0


class LineIndex(Sequence[JsonlLine]):
    """The lines of a JSONL file as two arrays of offsets into its bytes or file (`body`),
    not an object per line: a line is made (an `IndexedLine`, kept, so `lines[i]` is
    always the same object) only when asked for by place or in a loop; a pass over every
    line's value (`each_line_value`) slices and parses the lines never asked for from the
    arrays. A 100k-message Claude Code file has 213k lines, few of which are ever asked for
    (docs/performance.md, "The line index")."""

    __slots__ = ("body", "starts", "ends", "parse", "made", "every_made", "numbers")

    def __init__(self, body: bytes | FileText, starts: array[int], ends: array[int], parse: Any):
        self.body = body
        self.starts = starts
        self.ends = ends
        self.parse = parse
        self.made: list[IndexedLine | None] = [None] * len(starts)  # by place
        # every line made (by a loader keeping every value, `_kept`): a loop reads the list
        # itself. (Not a count of the lines made: two threads may make one line at once.)
        self.every_made = False
        # each line's number where they are not their places + 1 (`renumber`); None: they are
        self.numbers: list[int] | None = None

    def __len__(self) -> int:
        return len(self.starts)

    @overload
    def __getitem__(self, i: int) -> JsonlLine: ...

    @overload
    def __getitem__(self, i: slice) -> list[JsonlLine]: ...

    def __getitem__(self, i: int | slice) -> JsonlLine | list[JsonlLine]:
        if isinstance(i, slice):
            return [self.line(k) for k in range(*i.indices(len(self.starts)))]
        return self.line(i)

    def line(self, i: int) -> IndexedLine:
        """The line at place `i`, made on the first ask."""
        ln = self.made[i]  # (an IndexError as a list's)
        if ln is None:
            if i < 0:
                i += len(self.starts)
            no = i + 1 if self.numbers is None else self.numbers[i]
            ln = IndexedLine(no, self.body, self.starts[i], self.ends[i], self.parse)
            self.made[i] = ln
        return ln

    def __iter__(self) -> Iterator[JsonlLine]:
        if self.every_made:
            return iter(self.made)  # type: ignore[arg-type]
        return self._each()

    def _each(self) -> Iterator[JsonlLine]:
        made = self.made
        for i in range(len(made)):
            yield made[i] or self.line(i)

    def renumber(self, numbers: Sequence[int]) -> None:
        """The first lines numbered `numbers` (as in another file: a write loaded again)."""
        every = self.numbers or list(range(1, len(self.starts) + 1))
        every[: len(numbers)] = numbers[: len(every)]
        self.numbers = every
        for ln, no in zip(self.made, every, strict=True):
            if ln is not None:
                ln.lineno = no

    def reads(self, body: bytes | FileText) -> None:
        """The lines read from `body` now (the same offsets: the file's bytes, held)."""
        self.body = body
        for ln in self.made:
            if ln is not None:
                ln._body = body

    def values(self, keep: bool) -> Iterator[Any]:
        """`each_line_value` of these lines."""
        return self._kept() if keep else self._released()

    def _released(self) -> Iterator[Any]:
        """Each line's value, no line holding it after: a line never asked for is not
        made (one that is not JSON is, to say why)."""
        made, starts, ends, parse, body = self.made, self.starts, self.ends, self.parse, self.body
        load = orjson.loads if parse is loads_fast else parse  # (no wrapper call a line)
        window: bytes = body if isinstance(body, bytes) else b""
        w0, w1 = 0, len(window)
        for i, s, e in zip(range(len(starts)), starts, ends, strict=True):
            ln = made[i]
            if ln is not None and ln._state:
                yield ln.obj
                ln.release()
                continue
            if e > w1 or s < w0:
                w0, w1, window = _window(body, s, e)
            raw = window[s - w0 : e - w0]
            try:
                value = load(raw)
            except (ValueError, RecursionError):  # blank, not JSON: the line says which
                ln = self.line(i)
                ln._take(raw)
                value = ln._value
                ln.release()  # (a line that is not JSON keeps why)
            yield value

    def _kept(self) -> Iterator[Any]:
        """Each line's value, held by its line (every line made, in one go)."""
        if not self.every_made:
            made, n = self.made, len(self.made)
            every: list[IndexedLine | None] = list(
                map(
                    IndexedLine,
                    range(1, n + 1) if self.numbers is None else self.numbers,
                    repeat(self.body, n),
                    self.starts,
                    self.ends,
                    repeat(self.parse, n),
                )
            )
            for i in compress(range(n), made):  # (the lines made before stay those objects)
                every[i] = made[i]
            self.made = every
            self.every_made = True
        body = self.body
        window: bytes = body if isinstance(body, bytes) else b""
        w0, w1 = 0, len(window)
        for ln in cast(list[IndexedLine], self.made):  # (each made above)
            if ln._state:
                yield ln._value
                continue
            s, e = ln._start, ln._end
            if e > w1 or s < w0:
                w0, w1, window = _window(body, s, e)
            raw = window[s - w0 : e - w0]
            if ln._parse is loads_fast and raw and raw[0] not in _SPACE:
                # (the usual line, `_take` spelt out: no call to it and to the parser's
                # wrapper for each of 250k records)
                try:
                    value = orjson.loads(raw)
                except (ValueError, RecursionError):  # (the stdlib's literals, or why not)
                    ln._take(raw)
                    yield ln._value
                    continue
                ln._value, ln._state = value, 1
                yield value
                continue
            ln._take(raw)
            yield ln._value


def _window(body: bytes | FileText, s: int, e: int) -> tuple[int, int, bytes]:
    """The bytes a line at `s:e` is sliced from, where they start and end in the file: a
    file's bytes, held, or a window of the file read (`FileText.window`)."""
    if isinstance(body, bytes):
        return 0, len(body), body
    if s >= e:
        return s, s, b""
    w0, window = body.window(s, e)
    return w0, w0 + len(window), window


def parsed_lines(lines: Sequence[JsonlLine]) -> set[int]:
    """The places of the lines holding their records parsed (a line made otherwise than
    from the file's bytes holds its record)."""
    if type(lines) is LineIndex:
        made = lines.made
        return {i for i in compress(range(len(made)), made) if made[i]._state}  # type: ignore[union-attr]
    return set(compress(count(), map(getattr, lines, repeat("parsed"), repeat(True))))


def line_values(lines: Sequence[JsonlLine]) -> list[Any]:
    """Each line's `obj` (None: blank, not JSON, or JSON null), in one pass: a line read in
    place (`IndexedLine`) and not parsed yet is sliced from the bytes its file was read in
    (`FileText.window`), not read on its own."""
    return list(each_line_value(lines))


def each_line_value(lines: Sequence[JsonlLine], keep: bool = True) -> Iterator[Any]:
    """`line_values` one line at a time; `keep` False: a line read in place holds no value
    after it is given (as after `IndexedLine.release`: a line that is not JSON keeps why),
    so a pass that forgets each record as it goes never holds them all."""
    if type(lines) is LineIndex:
        return lines.values(keep)
    return (ln.obj for ln in lines)  # (lines made otherwise: each holds its value)


MAX_DEPTH_HINT = "nesting is deeper than the parser allows"


_NOT_SPACE = re.compile(r"[^ \t\n\r]")


def describe_json_error(exc: Exception, *, whole_file: bool = False) -> str:
    """Why a text is not JSON, said once: the parser's reason, where in a line (a file's
    place is said by the InputError's `where`, so not again with `whole_file`), and when the
    text stops before its JSON does, that it was cut short (an agent killed mid-write)."""
    msg = str(exc)
    if "recursion" in msg.lower() or "depth" in msg.lower():
        return MAX_DEPTH_HINT
    if not isinstance(exc, json.JSONDecodeError):
        return msg
    # "Unterminated string starting at", "Invalid control character at": said at the place
    reason = exc.msg.removesuffix(" at").removesuffix(" starting")
    reason = reason[:1].lower() + reason[1:]
    if not whole_file:
        at = f"line {exc.lineno} column {exc.colno}" if exc.lineno > 1 else f"column {exc.colno}"
        reason = f"{reason} at {at}"
    if reason.startswith("unterminated string") or not _NOT_SPACE.search(exc.doc, exc.pos):
        what = "the file" if whole_file else "the line"
        reason += f"; {what} ends mid-JSON: was it cut short while being written?"
    return reason


@dataclass
class Probe:
    """The input, read and parsed once, handed to `detect` and `load`."""

    path: str  # the file read (a task folder resolves to its history file)
    given: str  # what the user named
    data: bytes
    kind: str  # "json" | "jsonl"
    doc: Any = None  # for "json"
    lines: Sequence[JsonlLine] = field(default_factory=list)  # for "jsonl"
    newline: str = "\n"
    trailing_newline: bool = True
    bom: bool = False
    stat: Any = None  # os.stat_result of the file when the bytes were read (None: not a file)
    # what detectors derived from the input, computed once (see `derived`)
    _derived: dict[Callable[[Probe], Any], Any] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def derived(self, fn: Callable[[Probe], T]) -> T:
        """`fn(self)`, computed on the first call only: every adapter that asks about the
        input (its detector, then the loader) shares one pass over it."""
        if fn not in self._derived:
            self._derived[fn] = fn(self)
        value: T = self._derived[fn]  # what `fn` returned (the map holds one type per fn)
        return value

    def records(self) -> list[Any]:
        """The parsed JSONL values (non-JSON and blank lines left out)."""
        return [ln.obj for ln in self.lines if ln.error is None and not ln.blank]

    def held(self) -> bytes | FileText:
        """What a session keeps of the input: the bytes, or the file they are read from."""
        return self.data

    @property
    def size(self) -> int:
        return len(self.data)


class FileProbe(Probe):
    """A large JSONL file probed without holding its bytes (`text`: files.FileText, which
    its lines read from). `data`, for an adapter that wants the whole bytes, reads the file
    again (checked) and keeps them, and its lines then read from them."""

    text: FileText
    _whole: bytes | None

    @property
    def data(self) -> bytes:
        if self._whole is None:
            self.text.forget()
            whole = self._whole = self.text.read_all()
            if isinstance(self.lines, LineIndex):  # (offsets in the file: the same in its bytes)
                self.lines.reads(whole)
        return self._whole

    @data.setter
    def data(self, value: bytes) -> None:
        self._whole = value or None

    def held(self) -> bytes | FileText:
        """The file (the loader is done: no block of the probe's read is kept for it), or
        its bytes where an adapter asked for them."""
        self.text.forget()
        return self._whole if self._whole is not None else self.text

    @property
    def size(self) -> int:
        return self.text.size


@dataclass
class Export:
    """What writing a session gives: the bytes, and the source records the written file
    leaves out, empties or rewrites, each whole as read (`{"line" or "path", "outcome",
    "record"}`), for the report. Formats whose records are the messages leave the list
    empty: a dropped message is already in the report verbatim."""

    body: bytes | Spliced  # (a large file's writer: its runs written as read not joined)
    dropped_records: list[dict[str, Any]] = field(default_factory=list)

    @property
    def data(self) -> bytes:
        body = self.body
        return body if isinstance(body, bytes) else body.joined()


@dataclass
class Edited:
    """The written file read back where its writer wrote something new (`read_back_edited`):
    the other records are byte copies of what was read, which load as they did.

    `messages`: position -> what the written record loads to, for every message written
    anew and every message whose load depends on one (its neighbour); each must equal the
    repaired message there (or, `complete`, the session with them is analysed), else the
    whole file is read back. `moved(place, position)`:
    where a byte-copied message's finding is in the written file (its record moved when
    messages before it came or went)."""

    messages: dict[int, Message]
    moved: Callable[[Place, int], Place]
    # the other positions load as the session's messages (as analysed): where an edited one
    # differs (a message whose first record the write deleted is stamped by its next), the
    # written file is the session with these messages, analysed (None: read it whole)
    complete: bool = False


class Adapter(ABC):
    """One on-disk format: detection, load into the normal form, export back.

    `detect` returns a score for how much the input looks like this format, from what the
    format itself holds (0 = not this format); the highest score wins. `load` builds a
    `Session` (with `session`) whose messages keep their original identity; `write` writes
    the session's current messages in the format. A session that still holds the messages
    it was loaded with is written as the bytes that were read (`export`).
    """

    name: ClassVar[str]
    default_target: ClassVar[str] = "anthropic"
    # Call ids are unique per call and never rewritten (Codex): a result under an unknown id
    # is an orphan, never "the same call under a wrong id".
    unique_call_ids: ClassVar[bool] = False
    # The first lines of a file read as a file of their own give the session's first
    # messages (a JSONL log of records): the TUI shows them before the whole load is done.
    reads_head: ClassVar[bool] = False
    # The writer writes the records of a message a fix merges into another (`merged`: named
    # by them) as read, and reports any it does not in `Export.dropped_records` (its own
    # account: a Codex line rewritten, a Claude Code record given the first's message id):
    # a merge's report entry removes none of them. False: the report keeps the second
    # message as read (a JSON list writes the merged message as the first's entry).
    writes_merged_as_read: ClassVar[bool] = False

    @abstractmethod
    def detect(self, probe: Probe) -> int: ...

    @abstractmethod
    def load(self, probe: Probe) -> Session: ...

    @abstractmethod
    def write(self, session: Session) -> Export:
        """The session written in the format (called when it no longer holds the messages
        it was loaded with)."""

    def session(self, path: str, messages: list[Message], state: Any, label: str = "") -> Session:
        """A session of this format, judged by its default target until the caller says."""
        return Session(
            path=path,
            format=self.name,
            target=self.default_target,
            messages=messages,
            adapter=self,
            state=state,
            label=label,
        )

    def export(self, session: Session) -> Export:
        original = self.original_bytes(session)
        if original is not None:
            return Export(original)
        written = self.write(session)
        check_numbers(session)
        return written

    def dump(self, session: Session) -> bytes:
        return self.export(session).data

    def original_bytes(self, session: Session) -> bytes | None:
        """The bytes that were read, when the session still holds exactly the messages it
        was loaded with (its state's `loaded` and `data`); None when it must be written."""
        state = session.state
        return state.data if same_messages(session.messages, state.loaded) else None

    def record_changes(
        self,
        before: Session,
        after: Session,
        bytes_of: Callable[[Session], bytes] | None = None,
    ) -> list[RecordChange]:
        """The records (JSONL lines, document entries) that `after` writes differently from
        `before`: repair.records.RecordChange, in file order. This default compares what
        the writer writes for each state (`bytes_of(state)`, the caller's kept bytes, when
        given); formats that can name their changed records without writing the whole
        file say so themselves."""
        from ..records import changed_records

        def written(s: Session) -> bytes:
            return bytes_of(s) if bytes_of is not None else self.export(s).data

        return changed_records(written(before), written(after))

    def read_back(self, probe: Probe) -> Session:
        """The written bytes (probed) loaded again as `check` loads the written file (its
        own file only: files written beside it are read back on their own)."""
        return self.load(probe)

    def parsed_records(self, session: Session) -> dict[bytes, Any] | None:
        """The lines of the file `session` was read from, parsed, by their bytes (JSONL
        formats): a written line equal to one of them is not parsed again on read-back."""
        return None

    def read_back_edited(
        self, session: Session, data: bytes | Spliced | None = None
    ) -> Edited | None:
        """The records `session` writes anew (as `data`, the bytes its export gave), read
        back (repair.readback's narrowed path); None: this format reads the whole written
        file back."""
        return None

    def reads_numbers_exactly(self, session: Session) -> bool:
        """Every number of the file `session` was read from is what an exact read gives
        (`jsonio.reads_exactly`), so a session read without the number scan
        (`load_session(exact_numbers=False)`) writes every literal back as read. False
        when it cannot tell. Asked after the session was written (`check_numbers`): a
        format may look only at the records its writer read."""
        st = session.state
        f = getattr(st, "file", st)  # the file's bytes, document and style where kept
        data = getattr(f, "data", None)
        if not isinstance(data, bytes):
            return False
        return reads_exactly(data, getattr(f, "doc", None), getattr(f, "style", None))

    def check_written(self, session: Session, again: Session) -> None:
        """Refuse (ExportRefused) a write whose bytes do not load back as `session`; `again`
        is what they load to. Formats whose loader is their writer's inverse need no check."""
        return None

    def chain_findings(self, session: Session) -> list[tuple[Any, ...]]:
        """Findings only the format's records show (a Claude Code chain cut by a lost
        record): (code, message position, detail, key, whether the client target repairs
        it). The analysis adds them under the session's target."""
        return []

    def apply_file_edits(self, session: Session, edits: list[Any]) -> Session:
        """Apply edits made to the file's records rather than to messages (a re-link of a
        Claude Code record) to `session`, as written: the state the written bytes load to."""
        raise NotImplementedError(f"{self.name} has no record edits")

    def load_head(self, probe: Probe) -> Session:
        """The session the first lines of a file hold (`reads_head`), to be shown only."""
        return self.load(probe)

    def message_records(self, session: Session) -> dict[int, frozenset[Hashable]]:
        """Each message of the session as loaded (by uid) -> the records it was read from,
        for formats whose threads share records with their session (Claude Code inline
        sidechains): keys equal across a session and its threads for the same record.
        Empty: the threads share nothing."""
        return {}

    def frozen(self, session: Session) -> Frozen | None:
        """What no fix may change in `session` as it is now, and why (a Codex compaction's
        history, which the client rebuilds from its line): a fix that would is left out of
        every plan (`Fix.frozen`, the reason). None: a fix may change anything."""
        return None

    def block_record(self, session: Session, block: Any) -> Hashable | None:
        """The record a block was read from, keyed as `message_records` keys it."""
        return None

    def claim_folder(self, folder: str) -> str | None:
        """A file to read when the user names a folder this format keeps sessions in."""
        return None

    def session_beside(self, path: str) -> str | None:
        """The session file of this format next to `path` (a file of the same folder that
        is not a session): by default, the folder's claimed file."""
        return self.claim_folder(os.path.dirname(os.path.abspath(path)))

    def stamped(self, session: Session, made: Collection[int]) -> Session:
        """`session` with the messages a fix made or edited (`made`: their uids) stamped
        with the time the writer writes them with (formats whose writer picks the time of a
        record it creates or moves), and, where the loader groups records into messages,
        grouped as the written file reads back (`regroup`); the session as it is where the
        writer keeps each message's time and form."""
        return session

    def merged(
        self, first: Message, second: Message, moved: Sequence[Block] | None = None
    ) -> Message:
        """`first` once a fix merges `second` (the message after it) into it, its blocks
        aside (the edit lays them out): where a message names the records it was read from
        (`origin`, and `raw` where it holds them), named by those of both, in file order,
        so the writer keeps the second's records that hold no block. With `moved` (a fix
        moves these blocks of `second` into `first`, which was read from records): named
        by its own and those the blocks were read from, where a block knows its record. By
        default `first`: a JSON list writes the merged message as the first's entry and
        reports the second's."""
        return first

    def kept_apart(self, first: Message, second: Message) -> str | None:
        """Why the written file cannot hold `first` and `second` (live messages of one role,
        in a row) as one message: it reads them back as two (Codex writes tool outputs as
        items of their own). None where it can. A fix does not merge such messages."""
        return None

    def block_time(self, session: Session, block: Any) -> float | None:
        """When the block itself was written (epoch seconds), for formats that stamp blocks
        apart from their message (a record or item per block); None otherwise."""
        return None


def records_merged(
    first: Message, second: Message, taken: Collection[int] | None = None
) -> Message:
    """`first` named by the records of both messages, for `Adapter.merged` where a
    message's `origin` holds its records' line or entry indexes: their union in file order,
    and `raw` those records as read (a message of one record holds it alone, of more a
    list: in that order where each message's list follows its `origin`, else the first's
    then the second's). `first` itself where either names its records otherwise. `taken`:
    only those of the second's records (a move: the records its moved blocks were read
    from; `first` itself where it names none, or none new, or was read from none)."""
    both = (first, second)
    if not all(isinstance(m.origin or (), tuple) for m in both):
        return first
    if not all(type(i) is int for m in both for i in m.origin or ()):
        return first
    own = set(first.origin or ())
    new = {i for i in second.origin or () if taken is None or i in taken}
    if taken is not None and (not own or new <= own):
        return first
    records = tuple(sorted(own | new))
    if not records:
        return first
    listed = [[] if m.raw is None else m.raw if isinstance(m.raw, list) else [m.raw] for m in both]
    read: dict[int, Any] = {}
    for m, raws in zip(both, listed, strict=True):
        if len(raws) != len(m.origin or ()):
            read = {}
            break
        read.update((i, r) for i, r in zip(m.origin or (), raws, strict=True) if i not in read)
    if read.keys() >= set(records):
        raw = [read[i] for i in records]
    elif taken is None:
        raw = [*listed[0], *listed[1]]
    else:
        return first
    return replace(first, origin=records, raw=raw[0] if len(raw) == 1 else raw or None)


def check_numbers(session: Session) -> None:
    """Raise InexactNumbers when `session` was read without the number scan and what was
    just written of it (the file, the records for the report) may hold a literal other than
    as read."""
    if not session.numbers_exact and not session.adapter.reads_numbers_exactly(session):
        raise InexactNumbers(session.path)


def same_messages(messages: Sequence[Message], loaded: Sequence[Message]) -> bool:
    """The same message objects in the same order (an edit replaces the messages it touches)."""
    return len(messages) == len(loaded) and all(
        a is b for a, b in zip(messages, loaded, strict=True)
    )
