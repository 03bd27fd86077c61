"""A large JSONL file is not held in memory (repair.files.FileText): its lines are places in
the file, read from it again when asked for. Such a file says what it says when read whole,
writes the same bytes, backs up the bytes that were read, and refuses to pass off bytes
that changed on disk since for the ones it read."""

from __future__ import annotations

import os

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repair.analysis import analyze
from repair.errors import ExportRefused, FileChanged
from repair.files import FileText
from repair.formats import load_session, probe_bytes, probe_path
from repair.formats import probe as probe_mod
from repair.formats.base import FileProbe, LineIndex
from repair.workbench import Workbench
from tests.command import run
from tests.formats.build import JSONL_LINE
from tests.paths import CORPUS, sample_files


def _unheld(monkeypatch, on: bool = True) -> None:
    """Every JSONL file probed without its bytes, read back in chunks of 64 bytes (so lines
    cross chunks and windows), its records forgotten once read as a large file's are — or
    every file held, as small files are."""
    from repair.formats.claude_code import adapter

    monkeypatch.setattr(probe_mod, "UNHELD_BYTES", 0 if on else 1 << 62)
    monkeypatch.setattr(adapter, "LEAN_BYTES", 0 if on else 1 << 62)
    monkeypatch.setattr(FileText, "CHUNK", 64)
    monkeypatch.setattr(FileText, "WINDOW", 2)


def _jsonl_inputs() -> list[str]:
    found = [str(p) for p in sample_files() if p.suffix == ".jsonl"]
    if CORPUS.parent.is_dir():
        found += sorted(str(p) for p in CORPUS.parent.rglob("*.jsonl"))
    return found


@pytest.mark.parametrize("path", _jsonl_inputs(), ids=os.path.basename)
def test_a_file_not_held_says_what_it_says_when_read_whole(path, monkeypatch):
    said = {}
    for on in (False, True):
        _unheld(monkeypatch, on)
        assert isinstance(probe_path(path), FileProbe) is on
        said[on] = run("check", path, "--json")
    assert said[True] == said[False]


def test_a_fix_of_a_file_not_held_writes_the_same_bytes(cc_file, monkeypatch, tmp_path):
    written = {}
    for on in (False, True):
        _unheld(monkeypatch, on)
        out = tmp_path / f"fixed-{on}.jsonl"
        code, _, err = run("fix", cc_file, "-o", out, "--report", tmp_path / f"r-{on}.json")
        assert code == 0, err
        written[on] = out.read_bytes()
    assert written[True] == written[False]


def test_the_light_pass_reads_a_file_not_held_once(cc_file, monkeypatch):
    """The light pass reads the lines in order from the blocks the index read: a line
    across blocks (64-byte chunks: most lines cross several) is joined from them, not read
    from the disk again."""
    from repair.formats.claude_code import adapter

    _unheld(monkeypatch)
    again: list[tuple[int, int]] = []
    read, light = FileText._read, adapter.light_graph
    monkeypatch.setattr(FileText, "_read", lambda self, *a: again.append(a) or read(self, *a))

    def light_pass(*args, **kw):
        again.clear()  # (detection's looks at the head read it again, in chunks this small)
        graph = light(*args, **kw)
        assert again == []
        return graph

    monkeypatch.setattr(adapter, "light_graph", light_pass)
    session = load_session(str(cc_file))
    assert isinstance(session.source.held, FileText) and len(session.messages) > 100


def test_in_place_the_backup_is_the_bytes_that_were_read(cc_file, monkeypatch, tmp_path):
    _unheld(monkeypatch)
    path = tmp_path / "s.jsonl"
    original = cc_file.read_bytes()
    path.write_bytes(original)
    wb = Workbench(load_session(str(path)))
    assert isinstance(wb.original.source.held, FileText)
    wb.apply_all()
    res = wb.export(in_place=True)
    assert open(res.backup, "rb").read() == original
    assert path.read_bytes() != original


def test_bytes_changed_on_disk_are_refused_not_shown(cc_file, monkeypatch, tmp_path):
    _unheld(monkeypatch)
    path = tmp_path / "s.jsonl"
    path.write_bytes(cc_file.read_bytes())
    session = load_session(str(path))
    assert session.source.same_bytes_as(str(path))  # by its chunks' CRCs
    last = session.messages[-1]
    with open(path, "ab") as fh:  # an agent still appending: the bytes read are all there
        fh.write(b'{"type":"summary","summary":"later"}\n')
    assert last.raw is not None
    assert not session.source.same_bytes_as(str(path))  # but the file is not the one read
    first = session.messages[len(session.messages) // 2]  # its records forgotten once read
    at = session.state.file.lines[first.origin[0]]._start + 20
    with open(path, "r+b") as fh:  # rewritten in place: a record's text is not the one read
        fh.seek(at)
        byte = fh.read(1)
        fh.seek(at)
        fh.write(b"x" if byte != b"x" else b"y")
    session.state.file.held._kept = (0, b"")  # nothing of it kept from before
    with pytest.raises(FileChanged, match="changed on disk since it was read"):
        first.raw  # noqa: B018
    with pytest.raises(FileChanged):
        session.source.data  # noqa: B018
    wb = Workbench(session)
    wb.apply_all()
    with pytest.raises(ExportRefused, match="changed"):
        wb.export(in_place=True)
    assert not os.path.exists(f"{path}.bak")


def test_a_file_read_for_a_check_makes_no_crcs_and_refuses_a_changed_file(
    cc_file, monkeypatch, tmp_path
):
    """`check` writes nothing: its read of a large file makes no CRCs; what it reads again
    later is the bytes read while the file's size and time are those it was opened with,
    and a file touched since is refused, never passed off as the one read."""
    _unheld(monkeypatch)
    path = tmp_path / "s.jsonl"
    path.write_bytes(cc_file.read_bytes())
    session = load_session(str(path), writes=False)
    held = session.source.held
    assert isinstance(held, FileText) and not held.checked and held._crcs == []
    k = len(session.messages) // 2
    held._kept = (0, b"")  # nothing of it kept from before: read from the file again
    assert session.messages[k].raw == load_session(str(path)).messages[k].raw
    st_ = os.stat(path)
    os.utime(path, ns=(st_.st_atime_ns, st_.st_mtime_ns + 10**9))  # (the same bytes)
    held._kept = (0, b"")
    with pytest.raises(FileChanged):
        session.messages[k + 1].raw  # noqa: B018  # (k's records are held since read)
    assert not session.source.same_bytes_as(str(path))


def _file_text(data: bytes, chunk: int, window: int, later: bool = False) -> tuple[FileText, str]:
    """A FileText of `data` (a temporary file) in chunks of `chunk` bytes, its first read done
    (`later`: its CRCs left to `seal`, where the file counts as left alone)."""
    import tempfile

    fd, path = tempfile.mkstemp()
    os.write(fd, data)
    os.close(fd)
    text, _ = FileText.open(path, later=later)
    text.chunk, text.WINDOW = chunk, window
    for _ in text.blocks():
        pass
    text.forget()
    return text, path


@settings(max_examples=200, deadline=None)
@given(
    pattern=st.binary(min_size=1, max_size=100),
    size=st.integers(1, 5000),
    spans=st.lists(st.tuples(st.integers(0, 5000), st.integers(1, 300)), max_size=20),
    chunk=st.sampled_from([16, 64, 256]),
    changed=st.one_of(st.none(), st.integers(0, 4999)),
)
def test_a_file_not_held_gives_the_bytes_read_and_refuses_changed_ones(
    pattern, size, spans, chunk, changed
):
    """Spans read in any order (sliced, or viewed) are the file's bytes; a span read out of
    order reads only the chunks it covers (not a window); lines read in order read the file
    a few windows at a time; a changed byte is refused by every read that covers its chunk."""
    data = (pattern * (size // len(pattern) + 1))[:size]
    text, path = _file_text(data, chunk, 4)
    reads: list[int] = []
    read = text._read
    text._read = lambda first, end: reads.append(end - first) or read(first, end)  # type: ignore[method-assign]
    try:
        for a, n in spans:
            a %= len(data)
            b = min(a + n, len(data))
            at, kept = text._kept
            reads.clear()
            assert text[a:b] == data[a:b]
            if not at <= a < at + len(kept) + chunk:  # (else: read on, a window growing)
                assert sum(reads) <= -(-(b - a) // chunk) + 1
            assert text.view(a, b) == data[a:b]  # (a view of the bytes read: the writer's)
        text._kept = (0, b"")
        reads.clear()
        step = max(1, chunk // 3)  # "lines" shorter than a chunk, in order
        assert b"".join(text[a : a + step] for a in range(0, len(data), step)) == data
        # (windows of 4 chunks, from the chunk the line starts in: 3 new ones a read)
        assert len(reads) <= -(-len(data) // (3 * chunk)) + 4
        if changed is None or changed >= len(data):
            return
        with open(path, "r+b") as fh:
            fh.seek(changed)
            fh.write(bytes([data[changed] ^ 1]))
        text._kept = (0, b"")
        with pytest.raises(FileChanged):
            text[changed : changed + 1]  # noqa: B018
        text._kept = (0, b"")
        start = changed - changed % chunk
        with pytest.raises(FileChanged):
            text[start : min(start + chunk, len(data))]  # noqa: B018
    finally:
        os.unlink(path)


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(JSONL_LINE, min_size=2, max_size=30),
    crlf=st.lists(st.booleans(), min_size=30, max_size=30),
    trailing=st.sampled_from([b"", b"\n", b"\r\n", b"\r"]),
    bom=st.booleans(),
)
def test_the_lines_of_a_file_not_held_are_the_lines_split_whole(lines, crlf, trailing, bom):
    lines = [orjson.dumps({"first": 1}), *lines]
    body = b"".join(ln + (b"\r\n" if c else b"\n") for ln, c in zip(lines, crlf, strict=False))
    data = (b"\xef\xbb\xbf" if bom else b"") + body.rstrip(b"\r\n") + trailing
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".jsonl") as fh:
        fh.write(data)
        fh.flush()
        old = (probe_mod.UNHELD_BYTES, FileText.CHUNK, FileText.WINDOW)
        probe_mod.UNHELD_BYTES, FileText.CHUNK, FileText.WINDOW = 0, 16, 2
        try:
            unheld = probe_path(fh.name)
        finally:
            probe_mod.UNHELD_BYTES, FileText.CHUNK, FileText.WINDOW = old
        whole = probe_bytes(data, path=fh.name)
    assert isinstance(unheld, FileProbe) is (whole.kind == "jsonl")  # else one JSON value
    assert (unheld.newline, unheld.trailing_newline, unheld.bom) == (
        whole.newline,
        whole.trailing_newline,
        whole.bom,
    )

    def said(lines):
        return [(ln.lineno, ln.raw, ln.obj, ln.error) for ln in lines]

    assert said(unheld.lines) == said(whole.lines)
    # by place, from the end, in slices: the same lines, each the same object every time
    n = len(whole.lines)
    assert len(unheld.lines) == n
    assert said(unheld.lines[k] for k in range(-n, n)) == said(whole.lines[k] for k in range(-n, n))
    assert said(unheld.lines[1::2]) == said(whole.lines[1::2])
    assert all(unheld.lines[k] is unheld.lines[k - n] for k in range(n))
    with pytest.raises(IndexError):
        unheld.lines[n]


def test_a_check_makes_an_object_only_for_the_lines_it_reads(cc_file, monkeypatch):
    """A large file's lines are two arrays of offsets (`LineIndex`): a check of a Claude
    Code session makes a line object for the few lines it reads again (the records of the
    messages the findings name), not one for each of its lines."""
    _unheld(monkeypatch)
    session = load_session(str(cc_file), writes=False)
    analyze(session)
    lines = session.state.file.lines
    assert isinstance(lines, LineIndex) and len(lines) > 3000
    assert sum(ln is not None for ln in lines.made) < len(lines) / 10


def test_the_times_of_the_rows_do_not_hold_the_records_again(cc_file, monkeypatch):
    """The TUI asks each row on screen for its record's time: a long scroll through a large
    file must not parse and keep every record once more."""
    _unheld(monkeypatch)
    session = load_session(str(cc_file))
    lines = session.state.file.lines
    held = sum(1 for ln in lines if ln._state == 1)
    times = [session.adapter.block_time(session, b) for m in session.messages for b in m.blocks]
    assert sum(t is not None for t in times) > 3000  # every record's own time, read
    assert sum(1 for ln in lines if ln._state == 1) == held


def _client_jsonl() -> list[str]:
    # by the path from the checkout: its own path may hold either word (a worktree's name)
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    rel = {p: os.path.relpath(p, top) for p in _jsonl_inputs()}
    return [p for p, r in rel.items() if "codex" in r or "gemini" in r]


@pytest.mark.parametrize("path", _client_jsonl(), ids=os.path.basename)
def test_codex_and_gemini_cli_do_not_keep_a_large_file(path, monkeypatch, tmp_path):
    """A Codex or Gemini CLI session of a large file keeps the file, not its bytes (what an
    unedited export writes is read again), and fixes it to the same bytes as when held."""
    written = {}
    for on in (False, True):
        _unheld(monkeypatch, on)
        session = load_session(path)
        assert isinstance(session.state.held, FileText) is on
        with open(path, "rb") as fh:
            assert session.adapter.export(session).data == fh.read()
        out = tmp_path / f"fixed-{on}.jsonl"
        code, _, err = run("fix", path, "-o", out, "--report", tmp_path / f"r-{on}.json")
        assert code == 0, err
        written[on] = out.read_bytes()
    assert written[True] == written[False]


def _left_alone(monkeypatch) -> list[int]:
    """Every file taken as left alone since long before it was opened (`FileText.unchanged`
    then trusts its stat); the sizes the kernel copied, as they are copied."""
    from repair import files

    monkeypatch.setattr(FileText, "SETTLED_NS", -(1 << 62))
    copied: list[int] = []
    real = files._copy_range
    assert real is not None  # (Linux)

    def copy(src: int, dst: int, n: int, at: int) -> int:
        got = real(src, dst, n, at)
        copied.append(got)
        return got

    monkeypatch.setattr(files, "_copy_range", copy)
    return copied


def _fix_out(path, tmp_path, name: str) -> tuple[Workbench, str, str]:
    wb = Workbench(load_session(str(path)))
    wb.apply_all()
    return wb, str(tmp_path / f"{name}.jsonl"), str(tmp_path / f"{name}.report.json")


def _rewrite_byte(path, at: int) -> None:
    """A byte of the file changed in place, stamped a time later than the one it had (as a
    write after the file was opened is, on a file left alone before)."""
    st = os.stat(path)
    with open(path, "r+b") as fh:
        fh.seek(at)
        byte = fh.read(1)
        fh.seek(at)
        fh.write(b"x" if byte != b"x" else b"y")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_a_fix_copies_the_lines_written_as_read_without_reading_them(
    cc_file, monkeypatch, tmp_path
):
    """The runs of lines written as read are copied from the input by the kernel when the
    input was left alone: the same bytes as a write of the file held. A file written just
    before it was read (its time stamps may be shared with a later write) and a file
    appended to since are read and checked instead: still the same bytes."""
    _unheld(monkeypatch, False)
    wb, out, rep = _fix_out(cc_file, tmp_path, "held")
    wb.export(out, rep)
    want = open(out, "rb").read()
    _unheld(monkeypatch)
    path = tmp_path / "s.jsonl"
    path.write_bytes(cc_file.read_bytes())
    from repair import files

    real = files._copy_range
    copied: list[int] = []
    monkeypatch.setattr(files, "_copy_range", lambda *a: copied.append(a[2]) or real(*a))
    wb, out, rep = _fix_out(path, tmp_path, "fresh")
    wb.export(out, rep)
    assert open(out, "rb").read() == want
    assert copied == []  # written just now: read and checked
    copied = _left_alone(monkeypatch)
    wb, out, rep = _fix_out(path, tmp_path, "copied")
    wb.export(out, rep)
    assert open(out, "rb").read() == want
    assert sum(copied) > len(want) // 2  # (most of it: the lines written as read)
    copied.clear()
    wb, out, rep = _fix_out(path, tmp_path, "appended")
    with open(path, "ab") as fh:  # an agent still appending: the bytes read are all there
        fh.write(b'{"type":"summary","summary":"later"}\n')
    wb.export(out, rep)
    assert open(out, "rb").read() == want
    assert copied == []


@pytest.mark.parametrize("when", ["before the copy", "during the copy"])
def test_a_fix_refuses_an_input_changed_after_its_plan(cc_file, monkeypatch, tmp_path, when):
    """A byte of the input changed after the writer planned the file (before its lines are
    copied, or while they are): the fix is refused and nothing is written, as when the
    bytes are read and checked."""
    _unheld(monkeypatch)
    path = tmp_path / "s.jsonl"
    path.write_bytes(cc_file.read_bytes())
    copied = _left_alone(monkeypatch)
    wb, out, rep = _fix_out(path, tmp_path, "out")
    lines = wb.original.state.file.lines
    at = lines[len(lines) // 2]._start + 20  # (a line written as read)
    if when == "before the copy":
        _rewrite_byte(path, at)
    else:
        real = FileText.copy

        def copy(self, start: int, stop: int, fd: int) -> bool:
            if not copied:
                _rewrite_byte(path, at)
            return real(self, start, stop, fd)

        monkeypatch.setattr(FileText, "copy", copy)
    with pytest.raises(FileChanged):
        wb.export(out, rep)
    assert sorted(os.listdir(tmp_path)) == ["s.jsonl"]
    assert bool(copied) is (when == "during the copy")


@settings(max_examples=100, deadline=None)
@given(
    pattern=st.binary(min_size=1, max_size=50),
    size=st.integers(1, 3000),
    parts=st.lists(
        st.one_of(st.binary(max_size=40), st.tuples(st.integers(0, 3000), st.integers(0, 400))),
        max_size=12,
    ),
    sep=st.sampled_from([b"\n", b"\r\n"]),
    head=st.sampled_from([b"", b"\xef\xbb\xbf", b"["]),
    tail=st.sampled_from([b"", b"]", b"]\n"]),
    left_alone=st.booleans(),
    held=st.booleans(),
)
def test_a_splice_writes_the_bytes_it_joins(
    pattern, size, parts, sep, head, tail, left_alone, held
):
    """A writer's splice of a file read (bytes made, runs of the file) writes the bytes its
    join gives, the runs copied by the kernel or read and checked, or written from the
    bytes held (Roo's list)."""
    from unittest import mock

    from repair.files import Spliced

    data = (pattern * (size // len(pattern) + 1))[:size]
    runs = []
    for p in parts:
        if isinstance(p, tuple):
            a = p[0] % size
            p = (a, min(size, a + p[1]))
        runs.append(p)
    want = head + sep.join(data[p[0] : p[1]] if isinstance(p, tuple) else p for p in runs) + tail
    with mock.patch.object(FileText, "SETTLED_NS", -(1 << 62) if left_alone else 1 << 62):
        text, path = _file_text(data, 16, 4)
    out = path + ".out"
    try:
        splice = Spliced(data if held else text, runs, sep, head, tail)
        assert len(splice) == len(want)
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        try:
            os.write(fd, b"before")
            splice.write(fd)
        finally:
            os.close(fd)
        assert open(out, "rb").read() == b"before" + want
        assert splice.joined() == want
    finally:
        os.unlink(path)
        if os.path.exists(out):
            os.unlink(out)


@settings(max_examples=100, deadline=None)
@given(
    pattern=st.binary(min_size=1, max_size=100),
    size=st.integers(0, 3000),
    chunk=st.sampled_from([16, 64, 256]),
    spans=st.lists(st.tuples(st.integers(0, 3000), st.integers(1, 300)), max_size=8),
)
def test_crcs_made_later_are_the_ones_made_while_read(pattern, size, chunk, spans):
    """A file opened for CRCs made later (the TUI's load) and left alone: what is read before
    and after `seal` is the file's bytes, and the CRCs `seal` makes are those the first read
    makes when it makes them (a write and later reads are checked against the same)."""
    from unittest import mock

    data = (pattern * (size // len(pattern) + 1))[:size]
    with mock.patch.object(FileText, "SETTLED_NS", -(1 << 62)):
        eager, path = _file_text(data, chunk, 4)
        later, path2 = _file_text(data, chunk, 4, later=True)
    try:
        assert later._later and not later._crcs and not eager._later
        for sealed in (False, True):
            for a, n in spans:
                a %= max(1, len(data))
                assert later[a : a + n] == data[a : a + n]
            if not sealed:
                later.seal()
        assert later._crcs == eager._crcs and not later._later and not later._changed
        fd = os.open(path, os.O_RDONLY)
        try:
            assert later.matches(fd) and eager.matches(fd)
        finally:
            os.close(fd)
        assert later.unchanged() and later.read_all() == data
    finally:
        os.unlink(path)
        os.unlink(path2)


@pytest.mark.parametrize("when", ["before the late crcs", "during them"])
def test_a_change_before_the_late_crcs_is_caught(cc_file, monkeypatch, tmp_path, when):
    """The TUI's load makes a large file's CRCs after the analysis is shown (`crcs_later`):
    a byte changed on disk between the load and those CRCs (or while they are made) is
    refused as every change is: reads fail, the bytes are not the ones read, an export in
    place or to a new file is refused and nothing is written."""
    _unheld(monkeypatch)
    monkeypatch.setattr(FileText, "SETTLED_NS", -(1 << 62))  # (the file left alone before)
    path = tmp_path / "s.jsonl"
    path.write_bytes(cc_file.read_bytes())
    session = load_session(str(path), crcs_later=True)
    held = session.source.held
    assert isinstance(held, FileText) and held._later and held._crcs == []
    eager = load_session(str(path))
    assert isinstance(eager.source.held, FileText) and eager.source.held._crcs
    k = len(session.messages) // 2
    held._kept = (0, b"")
    assert session.messages[k].raw == eager.messages[k].raw  # (read under the stat)
    wb = Workbench(session)
    wb.apply_all()  # (the records it rewrites read before the change)
    lines = session.state.file.lines
    at = lines[session.messages[k + 1].origin[0]]._start + 20
    if when == "before the late crcs":
        _rewrite_byte(path, at)
        held._kept = (0, b"")
        with pytest.raises(FileChanged):
            session.messages[k + 1].raw  # noqa: B018  # (before the CRCs: by the stat)
        held.seal()
    else:
        real = FileText._crcs_on

        def crcs_on(self, fd):
            for k_, got in enumerate(real(self, fd)):
                if k_ == 0:
                    _rewrite_byte(path, at)
                yield got

        monkeypatch.setattr(FileText, "_crcs_on", crcs_on)
        held.seal()
        monkeypatch.setattr(FileText, "_crcs_on", real)
    assert held._changed and not held._later
    held._kept = (0, b"")
    with pytest.raises(FileChanged):
        session.messages[k + 1].raw  # noqa: B018
    with pytest.raises(FileChanged):
        session.source.data  # noqa: B018
    assert not session.source.same_bytes_as(str(path)) and not held.unchanged()
    with pytest.raises(ExportRefused, match="changed"):
        wb.export(in_place=True)
    with pytest.raises(ExportRefused, match="changed"):
        wb.export(str(tmp_path / "out.jsonl"), str(tmp_path / "out.report.json"))
    assert sorted(os.listdir(tmp_path)) == ["s.jsonl"]


def test_crcs_made_later_write_what_crcs_made_while_read_write(cc_file, monkeypatch, tmp_path):
    """A file left alone, its CRCs made later (by `seal`, or by the write that asks first),
    is written as the one whose CRCs were made while it was read; a file changed just
    before it was opened gets them while it is read, as before."""
    _unheld(monkeypatch)
    path = tmp_path / "s.jsonl"
    path.write_bytes(cc_file.read_bytes())
    fresh = load_session(str(path), crcs_later=True).source.held
    assert isinstance(fresh, FileText) and not fresh._later and fresh._crcs  # (just written)
    monkeypatch.setattr(FileText, "SETTLED_NS", -(1 << 62))
    written = {}
    for how in ("eager", "sealed", "asked by the write"):
        session = load_session(str(path), crcs_later=how != "eager")
        held = session.source.held
        assert isinstance(held, FileText) and held._later is (how != "eager")
        wb = Workbench(session)
        wb.apply_all()
        out, rep = tmp_path / f"{how}.jsonl", tmp_path / f"{how}.report.json"
        if how == "sealed":
            held.seal()
        assert held._later is (how == "asked by the write")
        wb.export(str(out), str(rep))
        assert held._crcs == fresh._crcs and not held._changed
        written[how] = out.read_bytes()
        assert session.source.same_bytes_as(str(path))
    assert written["sealed"] == written["eager"] == written["asked by the write"]
