"""Writing results safely (docs/writing.md).

- Paths are planned before anything is written (`plan_paths`): the output, the report and
  the backup never name the same file nor the input (compared after resolving symlinks and
  `..`, and by inode, so hard links count), and no existing file is overwritten unless the
  caller says so; the backup is never overwritten at all.
- Every file is staged (`Staging.add`): written whole to a temporary file beside its target
  and synced. Only when all are staged are they renamed into place, in the order added
  (backup, report, output). A failure on the way removes every file this write created, so
  either all of them are in place or none. A writer's runs of a large input written as read
  (`Spliced`) are copied by the kernel where the input's stat shows it untouched since it
  was opened, else read and checked as every later read of it is (`FileText`).
- In place, the input is re-checked right before the rename (`Watch`): same inode, size,
  mtime and bytes as when it was read, else the write is refused.
- A new file gets the mode the umask gives (the kernel applies it: no process-wide umask
  call), narrowed so that nobody can read it who could not read the input.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import threading
import time
import weakref
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import overload

from .errors import ExportRefused, FileChanged, WriteFailed


def default_output(path: str) -> str:
    """NAME.fixed.EXT, or NAME.fixed.1.EXT, ... (`numbered`): never an existing file."""
    root, ext = os.path.splitext(path)
    return numbered(f"{root}.fixed{ext}")


def default_report(path: str) -> str:
    """NAME.report.json beside the output NAME.EXT (NAME.fixed.EXT, NAME.fixed.1.EXT: NAME
    the input's)."""
    root, _ = os.path.splitext(path)
    return f"{re.sub(r'[.]fixed([.][0-9]+)?$', '', root)}.report.json"


def backup_path(path: str) -> str:
    """FILE.bak, or FILE.bak.1, FILE.bak.2, ..."""
    return free_name(f"{path}.bak")


def numbered(path: str) -> str:
    """NAME.EXT, or NAME.1.EXT, NAME.2.EXT, ... (NAME.report.1.json, NAME.fixed.1.json): a
    second run keeps the first run's report and output, as it keeps the first backup."""
    return free_name(*os.path.splitext(path))


def free_name(stem: str, ext: str = "") -> str:
    """STEM EXT, or STEM.1 EXT, STEM.2 EXT, ...: the first of them nothing is at (a dangling
    symlink counts as something)."""
    cand, n = stem + ext, 0
    while os.path.lexists(cand):
        n += 1
        cand = f"{stem}.{n}{ext}"
    return cand


def same_file(a: str, b: str) -> bool:
    """Whether two paths name one file: equal once symlinks and `..` are resolved, or the
    same inode (hard links, bind mounts)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def is_backup_name(path: str, of: str) -> bool:
    """`path` is, or would be taken for, a backup of `of` (of.bak, of.bak.N)."""
    for p, o in (
        (os.path.abspath(path), os.path.abspath(of)),
        (os.path.realpath(path), os.path.realpath(of)),
    ):
        if re.fullmatch(re.escape(o) + r"\.bak(\.[0-9]+)?", p):
            return True
    return False


# The names of what histview writes beside a session other than its output: a report
# (default_report, numbered) and a backup (backup_path).
_REPORT_OR_BACKUP = re.compile(r".+([.]report([.][0-9]+)?[.]json|[.]bak([.][0-9]+)?)")


def is_report_or_backup(path: str) -> bool:
    """`path`'s name is one histview gives a report or a backup (NAME.report.json,
    NAME.report.N.json, FILE.bak, FILE.bak.N): not a session to list."""
    return _REPORT_OR_BACKUP.fullmatch(os.path.basename(path)) is not None


def read_only(st: os.stat_result, path: str) -> bool:
    """No write permission bit is set, or this user may not write the file."""
    return not (st.st_mode & 0o222) or not os.access(path, os.W_OK)


# --------------------------------------------------------------------------- the input


class FileText:
    """A large file's bytes, read from the file when asked for instead of held
    (docs/performance.md): `text[a:b]` and `read_all()` give bytes like a `bytes` would.

    The file is read once, in order, by whoever indexes it (`blocks`), which records a CRC-32
    of each `CHUNK`; every later read covers whole chunks and checks them, so bytes that
    changed since (the file rewritten, truncated) raise FileChanged instead of being taken
    for the ones that were read. Appending is no change: the bytes read are still there. The
    descriptor stays open, so a file replaced by a rename (histview's own in-place write) is
    still read as it was. Not `checked` (a session nothing is written from: `check`), no CRC
    is made: a later read refuses a file whose size or time changed, and `matches` is False.
    Opened `later` (a session a write may follow, but not at once: the TUI's), a file left
    alone a while before it was opened is read without them, and `seal` makes them after
    (the TUI's load, once the analysis is shown): it reads the file again, and where the stat
    (device, inode, size, mtime, ctime) is not the one it was opened with, before or after
    that read, the file is changed, and every later read and write of it is refused. A
    read before `seal` is checked against that stat.

    The blocks of that first read are kept until a reader in file order has passed them (a
    loader's one pass over the lines): the pass reads no byte twice, and what it builds grows
    as they go, so the peak is the larger of the two, not their sum. `forget` drops those
    left. After, the last chunks read are kept: a read that goes on from their end (lines
    read in order) reads twice as many chunks, up to `WINDOW`, so the file is read once
    more, not once per line; a read elsewhere (a record here and there: a writer's, an
    edited message's) reads only the chunks it covers, which are small for that (16 KB:
    20 us with their CRCs, where a window of 8 MB is 5 ms)."""

    CHUNK = 1 << 14
    WINDOW = 512  # chunks read at once when a read goes on from the kept ones (8 MB)
    # A file last changed (ctime, mtime) longer than this before it was opened is one whose
    # stat tells a later write: that write's times are later (`unchanged`). Well above the
    # coarsest time stamps (FAT: 2 s) and the kernel's clock tick.
    SETTLED_NS = 3_000_000_000

    def __init__(
        self, path: str, fd: int, size: int, checked: bool = True, mtime_ns: int = 0
    ) -> None:
        self.path = path
        self.size = size
        self._fd = fd
        self.chunk = self.CHUNK  # fixed for this file: its CRCs are of chunks this long
        self.checked = checked
        self._mtime_ns = mtime_ns  # (for a file not checked: its time when opened)
        self._crcs: list[int] = []
        self._chunks = 0  # chunks the first read covered
        self._kept: tuple[int, bytes] = (0, b"")  # (offset, bytes) of the chunks read last
        self._ahead: deque[tuple[int, bytes]] = deque()  # the first read's, not passed yet
        self._state: tuple[int, ...] | None = None  # (`open`: its stat, if settled then)
        self._later = False  # (checked: the CRCs are `seal`'s to make)
        self._changed = False  # (`seal` found the file changed since it was opened)
        self._sealing = threading.Lock()
        weakref.finalize(self, os.close, fd)

    @classmethod
    def open(
        cls, path: str, checked: bool = True, later: bool = False
    ) -> tuple[FileText, os.stat_result]:
        now = time.time_ns()
        fd = os.open(path, os.O_RDONLY)
        try:
            st = os.fstat(fd)
        except OSError:
            os.close(fd)
            raise
        text = cls(path, fd, st.st_size, checked, st.st_mtime_ns)
        if max(st.st_ctime_ns, st.st_mtime_ns) + cls.SETTLED_NS <= now:
            text._state = _state_of(st)
            text._later = checked and later  # (a settled file: its stat tells a write after)
        return text, st

    def __len__(self) -> int:
        return self.size

    def head(self, n: int) -> bytes:
        """The first `n` bytes as they are now (before `blocks`: not checked)."""
        return os.pread(self._fd, n, 0)

    def blocks(self) -> Iterator[tuple[int, bytes]]:
        """The file in order, `WINDOW` chunks at a time, as (offset, bytes): the first read,
        which records each chunk's CRC (if `checked`). Ends at the size the file had when
        opened."""
        step = self.chunk * self.WINDOW
        off = 0
        crcs = self._crcs
        crcs.clear()
        self._chunks = 0
        while off < self.size:
            block = os.pread(self._fd, min(step, self.size - off), off)
            if not block:
                raise FileChanged(self.path)  # shorter than it was when opened
            self._chunks += -(-len(block) // self.chunk)
            if self.checked and not self._later:
                crcs += _crcs_of(block, self.chunk)
            self._ahead.append((off, block))
            yield off, block
            off += len(block)
            if len(block) % self.chunk and off < self.size:
                raise FileChanged(self.path)  # a short read mid-file: it shrank meanwhile

    @overload
    def __getitem__(self, key: int) -> int: ...
    @overload
    def __getitem__(self, key: slice) -> bytes: ...
    def __getitem__(self, key: int | slice) -> int | bytes:
        if isinstance(key, int):
            at = key + self.size if key < 0 else key
            if not 0 <= at < self.size:
                raise IndexError("FileText index out of range")
            return self[at : at + 1][0]
        start, stop, _ = key.indices(self.size)
        if stop <= start:
            return b""
        at, kept = self._covering(start, stop)
        return kept[start - at : stop - at]

    def window(self, start: int, stop: int) -> tuple[int, bytes]:
        """(offset, bytes) holding bytes start..stop (start < stop) and the rest of what was
        read with them: a reader in file order slices its lines from these (`window` once
        per block read, not `text[a:b]` once per line)."""
        return self._covering(start, stop)

    def view(self, start: int, stop: int) -> memoryview:
        """`text[start:stop]` (start < stop) as a view of the bytes read, not a copy of them:
        a writer that joins long runs of the file copies them once."""
        at, kept = self._covering(start, stop)
        return memoryview(kept)[start - at : stop - at]

    def _covering(self, start: int, stop: int) -> tuple[int, bytes]:
        """The bytes kept after reading start..stop (start < stop), which hold them: the
        chunks kept, a block of the first read, or the chunks read for it."""
        at, kept = self._kept
        if at <= start and stop <= at + len(kept):
            return at, kept
        ahead = self._ahead
        cur: tuple[int, bytes] | None = None  # the first read's block holding `start`
        if ahead and at <= start < ahead[0][0] == at + len(kept):
            cur = (at, kept)  # the block before those ahead
        elif ahead and ahead[0][0] <= start:
            while ahead and ahead[0][0] + len(ahead[0][1]) <= start:
                ahead.popleft()  # passed
            if ahead:
                cur = at, kept = ahead.popleft()
                if stop <= at + len(kept):
                    self._kept = cur
                    return cur
        if cur is not None and ahead and stop <= ahead[-1][0] + len(ahead[-1][1]):
            # a line across blocks of the first read: joined from them, not read again (the
            # block it ends in stays ahead, for the lines after it)
            at, kept = cur
            parts = [kept[start - at :]]
            while ahead[0][0] + len(ahead[0][1]) < stop:
                parts.append(ahead.popleft()[1])
            at, kept = ahead[0]
            parts.append(kept[: stop - at])
            self._kept = (start, b"".join(parts))
            return self._kept
        first = start // self.chunk
        last = (stop - 1) // self.chunk + 1
        at, kept = self._kept
        if at <= start < at + len(kept) + self.chunk:
            # on from the kept bytes (lines read in order): twice as many chunks as those,
            # up to a `WINDOW` (a record just after another's does not read a window)
            last = max(last, first + min(2 * -(-len(kept) // self.chunk), self.WINDOW))
        self._kept = self._read(first, min(last, self._chunks))
        return self._kept

    def forget(self) -> None:
        """Drop the blocks of the first read nobody has passed."""
        self._ahead.clear()

    def read_all(self) -> bytes:
        """The whole file as it was read (checked)."""
        return self._read(0, self._chunks)[1] if self.size else b""

    def seal(self) -> None:
        """The CRCs of a file opened `later` (once its first read is done; nothing where
        they were made then): the file read again, under the stat it was opened with, which
        must hold before and after (else it is changed: every later read is refused)."""
        with self._sealing:
            if not self._later:
                return
            crcs: list[int] = []
            ok = _state_of(os.fstat(self._fd)) == self._state
            for got in self._crcs_on(self._fd) if ok else ():
                if got is None:
                    ok = False
                    break
                crcs += got
            if ok and _state_of(os.fstat(self._fd)) == self._state:
                self._crcs = crcs
            else:
                self._changed = True
            self._later = False  # (after the CRCs: a read that saw it True read by the stat)

    def matches(self, fd: int) -> bool:
        """The file open at `fd` holds exactly the bytes that were read (not `checked`:
        unknown, so False)."""
        self.seal()
        if not self.checked or self._changed:
            return False
        crcs, step = self._crcs, self.WINDOW
        for first, got in enumerate(self._crcs_on(fd)):
            if got != crcs[first * step : first * step + step]:
                return False
        return not os.pread(fd, 1, self.size)

    def _crcs_on(self, fd: int) -> Iterator[list[int] | None]:
        """The CRCs of the chunks of the first read as the file open at `fd` holds them, a
        window at a time (None: it ends before them)."""
        step, chunks = self.chunk, self._chunks
        for first in range(0, chunks, self.WINDOW):
            end = min(first + self.WINDOW, chunks)
            want = min(end * step, self.size) - first * step
            data = os.pread(fd, want, first * step)
            yield _crcs_of(data, step) if len(data) == want else None

    def unchanged(self) -> bool:
        """Nothing was written to the file since it was opened, as its stat tells: same
        inode, size, mtime and ctime, where it had been left alone a while before (a write
        after the open stamps a later time; ctime no one can set back). Only then are its
        bytes copied without being read (`Spliced`). False when unknown: not `checked`, or
        changed shortly before it was opened (the write may share its time stamp)."""
        self.seal()
        return (
            self.checked
            and not self._changed
            and self._state is not None
            and (_state_of(os.fstat(self._fd)) == self._state)
        )

    def copy(self, start: int, stop: int, fd: int) -> bool:
        """Bytes start..stop copied to `fd` (at its position) by the kernel, not read here:
        False, nothing copied, where it cannot (another file system, an old kernel). The
        caller checks `unchanged` after."""
        if _copy_range is None:
            return False
        at = start
        while at < stop:
            try:
                n = _copy_range(self._fd, fd, stop - at, at)
            except OSError as exc:
                if at == start and exc.errno in _NO_COPY:
                    return False
                raise
            if n == 0:
                raise FileChanged(self.path)  # shorter than it was
            at += n
        return True

    def _read(self, first: int, end: int) -> tuple[int, bytes]:
        """Chunks first..end-1, checked against the CRCs of the first read (not `checked`:
        against the file's size and time when opened; their CRCs not made yet: against its
        stat then)."""
        at = first * self.chunk
        want = min(end * self.chunk, self.size) - at
        data = os.pread(self._fd, want, at)
        if len(data) != want or self._changed:
            raise FileChanged(self.path)
        if self._later:
            if _state_of(os.fstat(self._fd)) != self._state:
                raise FileChanged(self.path)
            return at, data
        if not self.checked:
            st = os.fstat(self._fd)
            if (st.st_size, st.st_mtime_ns) != (self.size, self._mtime_ns):
                raise FileChanged(self.path)
            return at, data
        if _crcs_of(data, self.chunk) != self._crcs[first:end]:
            raise FileChanged(self.path)
        return at, data


def _state_of(st: os.stat_result, *, ctime: bool = True) -> tuple[int, ...]:
    """What stat tells of a file read: which file it is (device, inode), its size, mtime
    and, with `ctime`, its change time, which no one can set back: the guard of a copy that
    reads no byte (`FileText.unchanged`). `Source.same_state` leaves it out: a file whose
    mode or links alone changed is the file read (the in-place write's `Watch` compares
    its bytes too)."""
    state = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    return (*state, st.st_ctime_ns) if ctime else state


# copy_file_range cannot copy between these files (nothing was copied)
_NO_COPY = frozenset(
    {errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EBADF}
)


_copy_range = getattr(os, "copy_file_range", None)  # (Linux)


def _crcs_of(data: bytes, step: int) -> list[int]:
    """The CRC-32 of each `step` bytes of `data` (the last: what is left)."""
    view = memoryview(data)
    return [zlib.crc32(view[k : k + step]) for k in range(0, len(data), step)]


Part = bytes | memoryview | tuple[int, int]


@dataclass(eq=False)
class Spliced:
    """A file a writer makes of a file it read (`text`: its bytes, or a large file's
    `FileText`) and of bytes it made: `head`, then `parts` joined by `sep`, then `tail`; a
    part is bytes made or a run (start, stop) of `text` written as read. `joined` gives the
    bytes (a large file's runs read again, checked); `write` writes them to a file without
    joining them, a large file's runs copied by the kernel, not read into Python, when
    `text` is `unchanged` before and after the copy (else as `joined` reads them)."""

    text: FileText | bytes
    parts: list[Part]
    sep: bytes
    head: bytes = b""
    tail: bytes = b""
    _joined: bytes | None = field(default=None, repr=False)
    _size: int = field(default=-1, repr=False)

    def __len__(self) -> int:
        if self._size < 0:
            n = len(self.head) + len(self.tail) + len(self.sep) * max(len(self.parts) - 1, 0)
            for p in self.parts:
                n += p[1] - p[0] if isinstance(p, tuple) else len(p)
            self._size = n
        return self._size

    def joined(self) -> bytes:
        """The bytes (made once, kept)."""
        if self._joined is None:
            pieces = self._pieces()
            if self.head:
                pieces[:1] = [self.head + bytes(pieces[0])] if pieces else [self.head]
            if self.tail:
                pieces[-1:] = [bytes(pieces[-1]) + self.tail] if pieces else [self.tail]
            self._joined = self.sep.join(pieces)
        return self._joined

    def is_joined(self, data: bytes | Spliced) -> bool:
        """`data` is the bytes `joined` gave."""
        return data is self._joined

    def write(self, fd: int) -> None:
        """The bytes written to `fd` from its position on."""
        if self._joined is not None:
            _write_all(fd, self._joined)
        elif not self._copied(fd):
            out = _Out(fd)
            out.add(self.head)
            for k, piece in enumerate(self._pieces()):
                if k:
                    out.add(self.sep)
                out.add(piece)
            out.add(self.tail)
            out.flush()

    def _pieces(self) -> list[bytes | memoryview]:
        text = self.text
        if isinstance(text, bytes):
            held = memoryview(text)
            return [held[p[0] : p[1]] if isinstance(p, tuple) else p for p in self.parts]
        return [text.view(*p) if isinstance(p, tuple) else p for p in self.parts]

    def _copied(self, fd: int) -> bool:
        """Written with the runs copied by the kernel; False (nothing written) where the
        file read is not known `unchanged` from its open to the end of the copy (or is held
        as bytes: written from them)."""
        text = self.text
        if isinstance(text, bytes) or not text.unchanged():
            return False
        start = os.lseek(fd, 0, os.SEEK_CUR)
        out = _Out(fd)
        out.add(self.head)
        done = True
        for k, part in enumerate(self.parts):
            if k:
                out.add(self.sep)
            if isinstance(part, tuple):
                out.flush()
                if not text.copy(part[0], part[1], fd):
                    done = False
                    break
            else:
                out.add(part)
        out.add(self.tail)
        out.flush()
        if done and text.unchanged():
            return True
        os.ftruncate(fd, start)
        os.lseek(fd, start, os.SEEK_SET)
        return False


class _Out:
    """Writes to a descriptor, the small pieces gathered first (one call for many)."""

    LARGE = 1 << 16

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.small: list[bytes | memoryview] = []
        self.held = 0

    def add(self, piece: bytes | memoryview) -> None:
        n = len(piece)
        if n >= self.LARGE:
            self.flush()
            _write_all(self.fd, piece)
        elif n:
            self.small.append(piece)
            self.held += n
            if self.held >= self.LARGE:
                self.flush()

    def flush(self) -> None:
        if self.small:
            _write_all(self.fd, b"".join(self.small))
            self.small.clear()
            self.held = 0


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


@dataclass(frozen=True, eq=False)
class Source:
    """The input as it was read: its bytes (a large file's `FileText`), and the file's
    identity and state at that moment (`stat`: fstat on the descriptor the bytes came
    through)."""

    path: str
    held: bytes | FileText
    stat: os.stat_result

    @classmethod
    def of(cls, path: str, data: bytes | FileText, st: os.stat_result | None) -> Source | None:
        return None if st is None else cls(path, data, st)

    @property
    def data(self) -> bytes:
        """The bytes as read (a large file's read again, and checked: FileChanged)."""
        held = self.held
        return held if isinstance(held, bytes) else held.read_all()

    @property
    def size(self) -> int:
        return len(self.held)

    def same_state(self, st: os.stat_result) -> bool:
        """The file `st` describes is this one, unchanged as far as stat can tell (and the
        bytes read were all there was)."""
        return st.st_size == self.size and _state_of(st, ctime=False) == _state_of(
            self.stat, ctime=False
        )

    def same_bytes_as(self, path: str) -> bool:
        """The file at `path` holds exactly the bytes that were read (a large one's compared
        by its chunks' CRCs, not read whole). OSError when it cannot be read."""
        fd = os.open(path, os.O_RDONLY)
        try:
            return _same_bytes(fd, self.held)
        finally:
            os.close(fd)

    def changed(self) -> ExportRefused:
        return ExportRefused(f"{self.path} changed since it was read; load it again")


class Watch:
    """The input file held open across an in-place rename.

    `check` (right before the rename) refuses unless the path still names the inode that was
    read, with the same size, mtime and bytes. `moved` (right after it) tells whether
    anything was written to that inode since the check; `save_as` then keeps its content."""

    def __init__(self, source: Source, real: str) -> None:
        self.source = source
        self.real = real
        try:
            self.fd: int | None = os.open(real, os.O_RDONLY)
        except OSError:
            raise source.changed() from None

    def check(self) -> None:
        src = self.source
        fd = self._held()
        if not src.same_state(os.fstat(fd)) or not _same_bytes(fd, src.held):
            raise src.changed()
        try:  # last: the name still points at that inode, unchanged
            st = os.stat(self.real)
        except OSError:
            raise src.changed() from None
        if not src.same_state(st):
            raise src.changed()

    def moved(self) -> bool:
        return not self.source.same_state(os.fstat(self._held()))

    def save_as(self, path: str) -> None:
        fd = self._held()
        chunks = []
        off = 0
        while chunk := os.pread(fd, 1 << 20, off):
            chunks.append(chunk)
            off += len(chunk)
        st = os.fstat(fd)
        staging = Staging()
        staging.add(path, b"".join(chunks), like=st, exact=True)
        staging.commit()

    def _held(self) -> int:
        if self.fd is None:
            raise ValueError("the watch is closed")
        return self.fd

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _same_bytes(fd: int, data: bytes | FileText) -> bool:
    if isinstance(data, FileText):
        return data.matches(fd)
    view = memoryview(data)
    off = 0
    while True:
        chunk = os.pread(fd, 1 << 20, off)
        if not chunk:
            return off == len(data)
        if view[off : off + len(chunk)] != chunk:
            return False
        off += len(chunk)


# --------------------------------------------------------------------------- paths


@dataclass
class Paths:
    """Where one export writes. `replace_*`: the file exists and is replaced (the input in
    place, or an existing file the user agreed to overwrite)."""

    output: str
    report: str
    backup: str | None = None
    replace_output: bool = False
    replace_report: bool = False


def plan_paths(
    src: str,
    source: Source | None,
    output: str | None,
    report: str | None,
    *,
    in_place: bool = False,
    overwrite: bool = False,
    force: bool = False,
) -> Paths:
    """Choose and check every path before anything is written; ExportRefused says why not.

    In place, the output is the file behind `src` (a symlink stays a link; its target is
    repaired) and the backup goes beside that file. `report` None means the default name
    beside the output, numbered when taken; a named report must not exist (unless
    `overwrite`). No two paths may be one file, and the report may not be the input, the
    output, the backup or be named like a backup of the input."""
    if report == "":
        raise ExportRefused(
            "the report path is empty; leave it out for the default name, or name a file "
            "(the report keeps every dropped block)"
        )
    if output == "":
        raise ExportRefused("the output path is empty; name a file")
    if in_place:
        real = in_place_target(src, source, force=force)
        paths = Paths(output=real, report="", backup=backup_path(real), replace_output=True)
    else:
        out = output or default_output(src)
        paths = Paths(output="", report="")
        paths.output, paths.replace_output = new_target(out, src, overwrite=overwrite)

    rep = numbered(default_report(paths.output)) if report is None else report
    for other, what in (
        (src, "the input file"),
        (paths.output, "the output"),
        (paths.backup, "the backup"),
    ):
        if other and same_file(rep, other):
            raise ExportRefused(f"the report {rep} would be {what}; name another report file")
    if is_backup_name(rep, src):
        raise ExportRefused(f"the report {rep} is named like a backup of the input; name another")
    if os.path.lexists(rep) and not overwrite:
        raise ExportRefused(f"{rep} exists; refusing to overwrite it (name another report file)")
    if os.path.lexists(rep):  # only with overwrite: replace a file the user agreed to
        if not os.path.isfile(rep):
            raise ExportRefused(f"{rep} is not a regular file")
        paths.replace_report = True
    paths.report = _through_link(rep)
    for p in (paths.output, paths.report):
        folder = os.path.dirname(p) or "."
        if not os.path.isdir(folder):
            what = "is not a folder" if os.path.exists(folder) else "does not exist"
            raise ExportRefused(f"the folder {folder} {what}; create it or choose another path")
    return paths


def as_read(src: str, source: Source | None) -> Source:
    """The file `src` as it was read, which an in-place write backs up and checks again."""
    if source is None:
        raise ExportRefused(f"{src} was not read from a file; write it elsewhere with -o")
    return source


def in_place_target(src: str, source: Source | None, *, force: bool = False) -> str:
    """The file an in-place write of `src` replaces (through a symlink), checked: read from
    that file, unchanged since, writable unless `force`."""
    source = as_read(src, source)
    real = _through_link(src)
    try:
        st = os.stat(real)
    except OSError:
        raise source.changed() from None
    if not source.same_state(st):
        raise source.changed()
    if read_only(st, real) and not force:
        raise ExportRefused(
            f"{src} is read-only; make it writable, or give --force to replace it "
            "anyway (its mode is kept)"
        )
    return real


def new_target(out: str, src: str, *, overwrite: bool = False) -> tuple[str, bool]:
    """The file a write to `out` (a copy of `src`) creates or, with `overwrite`, replaces;
    and whether it replaces one."""
    if same_file(out, src):
        raise ExportRefused("the output is the input file; use --in-place for that")
    if is_backup_name(out, src):
        raise ExportRefused(f"{out} is named like a backup of the input; choose another name")
    replace = False
    if os.path.lexists(out):
        if not overwrite:
            raise ExportRefused(f"{out} exists; refusing to overwrite it")
        if not os.path.exists(out):
            raise ExportRefused(f"{out} is a symlink to a missing file; remove it first")
        if not os.path.isfile(out):
            raise ExportRefused(f"{out} is not a regular file")
        replace = True
    return _through_link(out), replace


def _through_link(path: str) -> str:
    """The path as given, or the file a symlink leads to: a write replaces that file and
    the link stays a link."""
    return os.path.realpath(path) if os.path.islink(path) else path


# --------------------------------------------------------------------------- staging


@dataclass
class _Staged:
    path: str
    tmp: str | None
    replace: bool


@dataclass
class Staging:
    """Files written whole beside their targets, renamed into place together (`commit`), or
    all removed (`discard`)."""

    staged: list[_Staged] = field(default_factory=list)
    created: list[str] = field(default_factory=list)  # targets this write put in place

    def add(
        self,
        path: str,
        data: bytes | Spliced,
        *,
        replace: bool = False,
        like: os.stat_result | None = None,
        exact: bool = False,
    ) -> None:
        """Stage `data` for `path`. `exact`: take the mode and owner of `like` (a backup, a
        replaced file); else the umask mode, narrowed to what `like` (the input) allows."""
        try:
            fd, tmp = _create_temp(path)
        except OSError as exc:
            self.discard()
            raise write_failed(path, exc) from None
        self.staged.append(_Staged(path, tmp, replace))
        try:
            with os.fdopen(fd, "wb") as fh:
                if isinstance(data, Spliced):
                    data.write(fh.fileno())
                else:
                    fh.write(data)
                fh.flush()
                _set_mode(fh.fileno(), like, exact)
                os.fsync(fh.fileno())
        except OSError as exc:
            self.discard()
            raise write_failed(path, exc) from None
        except BaseException:  # the file read changed (FileChanged)
            self.discard()
            raise

    def commit(self, before_replace: Callable[[], None] | None = None) -> None:
        """Rename the staged files into place in the order they were added. A new file is
        hard-linked into place, so a file that appeared meanwhile is never clobbered;
        `before_replace` runs right before the first rename over an existing file."""
        try:
            for item in self.staged:
                if item.tmp is None:
                    raise ValueError(f"{item.path} was committed or discarded already")
                if item.replace:
                    if before_replace is not None:
                        before_replace()
                        before_replace = None
                    os.replace(item.tmp, item.path)
                else:
                    _place_new(item.tmp, item.path)
                    self.created.append(item.path)
                item.tmp = None
        except OSError as exc:
            failed = item.path
            self.discard()
            raise write_failed(failed, exc) from None
        except BaseException:
            self.discard()
            raise
        self.created.clear()  # in place for good: `discard` no longer removes them
        for folder in {os.path.dirname(i.path) for i in self.staged}:
            _sync_folder(folder)

    def discard(self) -> None:
        """Remove every temporary file and every file this write already put in place."""
        for p in [i.tmp for i in self.staged if i.tmp] + self.created:
            try:
                os.unlink(p)
            except OSError:
                pass
        for i in self.staged:
            i.tmp = None
        self.created.clear()


def _create_temp(path: str) -> tuple[int, str]:
    folder = os.path.dirname(path) or "."
    base = os.path.basename(path)[:100]
    while True:
        tmp = os.path.join(folder, f".{base}.{secrets.token_hex(4)}.tmp")
        try:  # mode 0o666: the kernel applies the umask
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:
            continue


def _set_mode(fd: int, like: os.stat_result | None, exact: bool) -> None:
    if like is None:
        return
    if exact:
        try:
            os.fchown(fd, like.st_uid, like.st_gid)
        except OSError:  # not ours to give away: the file stays ours
            pass
        os.fchmod(fd, like.st_mode & 0o7777)
    else:
        mode = os.fstat(fd).st_mode & 0o777
        os.fchmod(fd, mode & (like.st_mode | 0o700))


def _place_new(tmp: str, path: str) -> None:
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise ExportRefused(f"{path} appeared while writing; nothing replaced") from None
    except OSError as exc:  # a file system without hard links
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK):
            raise
        if os.path.lexists(path):
            raise ExportRefused(f"{path} appeared while writing; nothing replaced") from None
        os.rename(tmp, path)
        return
    os.unlink(tmp)


def _sync_folder(folder: str) -> None:
    try:
        fd = os.open(folder or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


_CAUSES = {
    errno.EACCES: ("permission denied", "choose a folder you can write to, or fix its permissions"),
    errno.EPERM: ("not permitted", "choose a folder you can write to, or fix its permissions"),
    errno.ENOSPC: ("no space left on the device", "free some space or write to another disk"),
    errno.EDQUOT: ("disk quota exceeded", "free some space or write to another disk"),
    errno.EROFS: ("the file system is read-only", "write to another folder"),
    errno.ENOENT: ("the folder does not exist", "create it or choose another path"),
    errno.ENOTDIR: ("a part of the path is not a folder", "check the path"),
    errno.EISDIR: ("it is a folder", "name a file"),
    errno.ENAMETOOLONG: ("the name is too long", "choose a shorter name"),
    errno.EIO: ("input/output error", "check the disk, then try again"),
    errno.EXDEV: ("the temporary file is on another file system", "write to another folder"),
}


def write_failed(path: str, exc: OSError) -> WriteFailed:
    known = _CAUSES.get(exc.errno) if exc.errno is not None else None
    cause, advice = known or (exc.strerror or str(exc), "check the path and try again")
    return WriteFailed(f"cannot write {path}: {cause}; {advice}")
