"""`fix` reads a file without the whole-file number scan (`load_session(exact_numbers=False)`)
and still writes every number literal back as read: in the records it copies, in the records
it rewrites and in the report (`repair.cli.fixed`, `Adapter.reads_numbers_exactly`)."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repair.formats import load_session
from repair.formats import probe as probe_mod
from repair.formats.claude_code import adapter as cc_adapter
from repair.jsonio import JsonStyle, dumps, loads_exact, reads_exactly
from tests.command import run
from tests.paths import SAMPLES

# literals orjson reads as written, and literals it would change (or refuses)
PLAIN = ("0", "7", "-3", "1.5", "0.25", "18446744073709551615", "1e+16", "123.456")
ODD = ("1e16", "123456789012345678901234567890", "1e400", "-1e400", "1e-400", "1E2", "1.50", "-0")
ODD += ("0.0000015", "100000000000000000000", "1.0e5", "NaN")
LITERAL = st.sampled_from(PLAIN + ODD)

SETTINGS = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def _values(text: bytes, key: str) -> list[str]:
    """Every literal written under `key` (compact or spaced JSON)."""
    pattern = re.escape(f'"{key}"').encode() + rb":\s*(-?[0-9A-Za-z.+-]+)"
    return [m.group(1).decode() for m in re.finditer(pattern, text)]


def _fix_and_check(name: str, text: str, literals: dict[str, str]) -> None:
    """Fix `text` (as a file named `name`); every key of `literals` is written with its
    literal (in the output, or in the report for a record the fix left out), never with
    another value."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = folder / name
        path.write_text(text)
        _fix_file(folder, path, literals)


def _fix_file(tmp_path: Path, path: Path, literals: dict[str, str]) -> None:
    out = tmp_path / ("fixed" + path.suffix)
    code, stdout, err = run("fix", str(path), "-o", str(out))
    assert err == "", err
    assert code in (0, 1), stdout
    written = out.read_bytes()
    report = (tmp_path / "fixed.report.json").read_bytes()
    assert written != path.read_bytes()  # a fix was made: numbers were written
    for key, literal in literals.items():
        found = _values(written, key) + _values(report, key)
        assert found, f"{key} ({literal}) is lost"
        assert set(found) == {literal}, f"{key}: {literal} written as {found}"


# ------------------------------------------------------------------ Roo (one JSON document)


@SETTINGS
@given(st.lists(st.tuples(LITERAL, LITERAL, LITERAL, st.booleans()), min_size=1, max_size=5))
def test_a_fixed_roo_file_keeps_every_literal_of_touched_and_untouched_entries(turns):
    """Each turn: a call whose input holds a literal, its result or none (an orphan: the
    fix adds a result to the next user entry, which is rewritten), literals on the entries."""
    entries = ['{"role":"user","content":[{"type":"text","text":"<task>go</task>"}],"ts":1}']
    literals: dict[str, str] = {}
    for k, (a, b, c, answered) in enumerate(turns):
        literals |= {f"in{k}": a, f"ea{k}": b, f"eu{k}": c}
        entries.append(
            '{"role":"assistant","content":[{"type":"text","text":"Running."},'
            f'{{"type":"tool_use","id":"toolu_{k}","name":"Bash","input":{{"in{k}":{a}}}}}],'
            f'"ea{k}":{b},"ts":2}}'
        )
        result = (
            f'{{"type":"tool_result","tool_use_id":"toolu_{k}","content":"ok"}},'
            if answered
            else ""
        )
        entries.append(
            f'{{"role":"user","content":[{result}{{"type":"text","text":"next"}}],'
            f'"eu{k}":{c},"ts":3}}'
        )
    if all(answered for *_, answered in turns):
        # a fault in the last turn at least: a duplicated result
        entries[-1] = entries[-1].replace(
            '"content":[', f'"content":[{{"type":"tool_result","tool_use_id":"toolu_{k}"}},', 1
        )
    _fix_and_check("api_conversation_history.json", "[" + ",".join(entries) + "]", literals)


# ------------------------------------------------------------------ Claude Code (JSONL records)


@SETTINGS
@given(st.data())
def test_a_fixed_claude_code_file_keeps_every_literal_of_copied_and_rewritten_records(data):
    """The sample whose parallel calls were interrupted (the fix adds result records and
    re-links the chain): a literal in every record, first (so a re-linked record is written
    anew, not patched) or last, and in every call's input."""
    lines = (SAMPLES / "claude_code_parallel_interrupted.jsonl").read_text().splitlines()
    literals: dict[str, str] = {}
    out = []
    for i, line in enumerate(lines):
        lit = data.draw(LITERAL)
        literals[f"r{i}"] = lit
        if data.draw(st.booleans()):
            line = f'{{"r{i}":{lit},' + line[1:]
        else:
            line = line[:-1] + f',"r{i}":{lit}}}'
        for j in range(line.count('"input":{')):
            lit = data.draw(LITERAL)
            literals[f"i{i}_{j}"] = lit
            at = [m.end() for m in re.finditer(re.escape('"input":{'), line)][j]
            line = line[:at] + f'"i{i}_{j}":{lit}' + ("," if line[at] != "}" else "") + line[at:]
        out.append(line)
    # a large file (its records released after the light pass, its bytes not held): the
    # export scans only the records its writer read again and those of changed messages
    large = data.draw(st.booleans())
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(probe_mod, "UNHELD_BYTES", 0 if large else 1 << 62)
        mp.setattr(cc_adapter, "LEAN_BYTES", 0 if large else 1 << 62)
        _fix_and_check("s.jsonl", "\n".join(out) + "\n", literals)


def test_codex_keeps_literals_of_copied_and_rewritten_lines():
    lines = (SAMPLES / "codex_missing_output.jsonl").read_text().splitlines()
    literals = {}
    for i, line in enumerate(lines):
        if '"payload":{' in line:
            lit = ODD[i % len(ODD)]
            literals[f"c{i}"] = lit
            lines[i] = line.replace('"payload":{', f'"payload":{{"c{i}":{lit},', 1)
    _fix_and_check("rollout-x.jsonl", "\n".join(lines), literals)


# ------------------------------------------------------------------ the round-trip test


@settings(max_examples=300, deadline=None)
@given(
    st.recursive(
        LITERAL | st.sampled_from(['"s"', '"1.50"', "true", "null"]),
        lambda inner: (
            st.lists(inner, max_size=4).map(lambda xs: "[" + ",".join(xs) + "]")
            | st.lists(inner, max_size=4).map(
                lambda xs: "{" + ",".join(f'"k{i}":{x}' for i, x in enumerate(xs)) + "}"
            )
        ),
        max_leaves=12,
    ),
    st.sampled_from([JsonStyle(), JsonStyle(item_sep=", ", key_sep=": "), JsonStyle(indent=2)]),
)
def test_a_document_said_to_read_exactly_writes_what_an_exact_read_writes(text, style):
    """`reads_exactly` is what lets `fix` skip the scan: when it says yes for the numbers
    orjson read, writing them gives the bytes an exact read (every literal kept) gives."""
    text = f"[{text}]"  # a document: a list or an object
    exact = loads_exact(text)
    data = dumps(exact, style)  # the file, as its writer wrote it
    try:
        fast = orjson.loads(data)
    except orjson.JSONDecodeError:
        return  # orjson refuses it: the exact parser reads it, nothing to decide
    if reads_exactly(data, fast, style):
        assert dumps(fast, style) == dumps(exact, style) == data
    if any(lit in text for lit in ODD if lit not in ("NaN",)):
        # an odd literal at a number's place is never said to read exactly
        odd_number = re.search(r"[:,\[](?:" + "|".join(map(re.escape, ODD)) + r")[,\]}]", text)
        if odd_number:
            assert not reads_exactly(data, fast, style)


def test_fix_of_a_file_without_odd_literals_loads_it_once(tmp_path, monkeypatch):
    """The round trip shows the numbers exact: no second load, no scan of the file."""
    import repair.cli
    import repair.jsonio

    path = tmp_path / "a.json"
    doc = [
        {"role": "user", "content": "hi", "n": 1.5},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "x", "input": {}}],
        },
        {"role": "user", "content": "and?"},
    ]
    path.write_text(json.dumps(doc, separators=(",", ":")))
    loads: list[bool] = []
    real = repair.cli._load

    def counted(*args, **kw):
        loads.append(kw.get("exact_numbers", True))
        return real(*args, **kw)

    scanned: list[int] = []
    real_scan = repair.jsonio.has_inexact_numbers

    def scan(data: bytes) -> bool:
        scanned.append(len(data))
        return real_scan(data)

    monkeypatch.setattr(repair.cli, "_load", counted)
    monkeypatch.setattr(repair.jsonio, "has_inexact_numbers", scan)
    monkeypatch.setattr("repair.formats.probe.has_inexact_numbers", scan)
    code, _, err = run("fix", str(path), "-o", str(tmp_path / "out.json"))
    assert (code, err) == (0, "")
    assert loads == [False]
    # neither the file nor what is written is scanned (a record alone may be)
    assert all(n < path.stat().st_size / 2 for n in scanned)
    assert load_session(str(tmp_path / "out.json")).messages[0].raw["n"] == 1.5


def test_the_render_scans_the_lines_the_number_check_reads_as_their_own_bytes(tmp_path):
    """A large file's number check takes what the render found in the lines as it read the
    file (`write.scanned_numbers`): for every line the check reads, the verdict a scan of
    that line's own bytes gives."""
    from bench.gen import gen_claude_code
    from repair.formats.claude_code import write
    from repair.jsonio import has_inexact_numbers
    from repair.workbench import Workbench

    data, _ = gen_claude_code(400, 3)
    lines = data.split(b"\n")
    for k in range(0, len(lines), 5):  # an odd literal in every fifth record
        if lines[k].endswith(b"}"):
            lines[k] = lines[k][:-1] + b',"odd":' + ODD[k % 6].encode() + b"}"
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(probe_mod, "UNHELD_BYTES", 0)
        mp.setattr(cc_adapter, "LEAN_BYTES", 0)
        wb = Workbench(load_session(str(path), exact_numbers=False))
        assert wb.apply_all() is not None
        session = wb.session
        session.adapter.write(session)
        found = write.scanned_numbers(session.state.file)
        read = session.state.file.lines
        assert write.number_lines(session) <= found.keys()
        assert found == {i: has_inexact_numbers(read[i].raw) for i in found}
        assert any(found.values()) and not all(found.values())
        assert not session.adapter.reads_numbers_exactly(session)
