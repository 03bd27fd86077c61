"""`line_values` (a JSONL loader's one pass over its lines' values: the Codex loader's) gives
each line's `obj`, and leaves each line as reading it on its own would (its value, its
error), for a file held or read in place in small chunks, whatever lines were read before;
`each_line_value(keep=False)` (Claude Code's light pass) gives the same values and leaves no
line holding its record (a line that is not JSON keeps why), each read again as before."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from repair.files import FileText
from repair.formats import probe as probe_mod
from repair.formats import probe_bytes, probe_path
from repair.formats.base import IndexedLine, each_line_value, line_values
from repair.jsonio import numbers_as_parsed
from tests.formats.build import JSONL_LINE


@contextlib.contextmanager
def file_read_in_chunks(data: bytes, chunk: int) -> Iterator[str]:
    """A file of `data`, read in place (not held) in chunks of `chunk` bytes."""
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as fh:
        fh.write(data)
        fh.flush()
        old = (probe_mod.UNHELD_BYTES, FileText.CHUNK, FileText.WINDOW)
        probe_mod.UNHELD_BYTES, FileText.CHUNK, FileText.WINDOW = 0, chunk, 2
        try:
            yield fh.name
        finally:
            probe_mod.UNHELD_BYTES, FileText.CHUNK, FileText.WINDOW = old


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(JSONL_LINE, min_size=1, max_size=30),
    crlf=st.lists(st.booleans(), min_size=31, max_size=31),
    trailing=st.sampled_from([b"", b"\n", b"\r\n"]),
    read_first=st.lists(st.integers(0, 30), max_size=5),
    chunk=st.sampled_from([16, 64]),
)
def test_the_values_are_each_lines_own(lines, crlf, trailing, read_first, chunk):
    lines = [orjson.dumps({"first": 1}), *lines]
    body = b"".join(ln + (b"\r\n" if c else b"\n") for ln, c in zip(lines, crlf, strict=False))
    data = body.rstrip(b"\r\n") + trailing
    with file_read_in_chunks(data, chunk) as path:
        for probe in (probe_path(path), probe_bytes(data, path=path)):
            if probe.kind != "jsonl":
                continue  # one JSON value: no lines
            for k in read_first:  # some lines read on their own before
                if k < len(probe.lines):
                    probe.lines[k].obj  # noqa: B018
            alone = probe_bytes(data, path=path).lines
            forgot = list(each_line_value(probe.lines, keep=False))
            assert forgot == [ln.obj for ln in alone]
            for ln in probe.lines:
                if isinstance(ln, IndexedLine):
                    assert not ln.parsed or ln.error is not None
            got = line_values(probe.lines)
            assert got == [ln.obj for ln in alone]
            said = [(ln.raw, ln.obj, ln.error, ln.blank) for ln in probe.lines]
            assert said == [(ln.raw, ln.obj, ln.error, ln.blank) for ln in alone]


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(JSONL_LINE, min_size=1, max_size=30),
    trailing=st.sampled_from([b"", b"\n"]),
    read_first=st.lists(st.integers(0, 30), max_size=5),
    chunk=st.sampled_from([16, 64]),
    scan=st.booleans(),
)
def test_the_values_kept_are_each_lines_own(lines, trailing, read_first, chunk, scan):
    """`line_values` (each value kept, as the Gemini CLI loader reads its lines) on lines
    not read before, with and without the number scan: a record orjson reads is taken
    without `_take`, and a line it refuses (not JSON, a number it would change) is read
    the long way; each line is left as reading it on its own would."""
    lines = [orjson.dumps({"first": 1}), *lines]
    data = b"\n".join(lines) + trailing
    with file_read_in_chunks(data, chunk) as path:
        with contextlib.nullcontext() if scan else numbers_as_parsed():
            for probe in (probe_path(path), probe_bytes(data, path=path)):
                if probe.kind != "jsonl":
                    continue  # one JSON value: no lines
                for k in read_first:
                    if k < len(probe.lines):
                        probe.lines[k].obj  # noqa: B018
                alone = probe_bytes(data, path=path).lines
                assert line_values(probe.lines) == [ln.obj for ln in alone]
                said = [(ln.raw, ln.parsed, ln.error, ln.blank) for ln in probe.lines]
                assert said == [(ln.raw, True, ln.error, ln.blank) for ln in alone]
                assert [ln.obj for ln in probe.lines] == [ln.obj for ln in alone]
