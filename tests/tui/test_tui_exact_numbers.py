"""The TUI reads a session without the whole-file number scan (as `check` and `fix` do) and
still writes every number literal back as read: an export that would change one reads the
file again exactly, makes the user's steps again on it and writes that (repair.reread)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.paths import SAMPLES
from tests.tui.tui_helpers import opened, settle, timeline

# literals orjson reads otherwise (1e400 it refuses; the others it changes)
ODD = ("1.0", "1e400", "12345678901234567890123", "-0.0")


def _values(text: bytes, key: str) -> list[str]:
    pattern = re.escape(f'"{key}"').encode() + rb":\s*(-?[0-9A-Za-z.+-]+)"
    return [m.group(1).decode() for m in re.finditer(pattern, text)]


def _with_literals(src: Path, dst: Path) -> dict[str, str]:
    """`src` (JSONL) with an odd literal in every record, first or last, and in every call's
    input: what each key holds."""
    literals: dict[str, str] = {}
    out = []
    for i, line in enumerate(src.read_text().splitlines()):
        lit = ODD[i % len(ODD)]
        literals[f"r{i}"] = lit
        line = f'{{"r{i}":{lit},' + line[1:] if i % 2 else line[:-1] + f',"r{i}":{lit}}}'
        if '"input":{' in line:
            lit = ODD[(i + 1) % len(ODD)]
            literals[f"i{i}"] = lit
            at = line.index('"input":{') + len('"input":{')
            line = line[:at] + f'"i{i}":{lit}' + ("," if line[at] != "}" else "") + line[at:]
        out.append(line)
    dst.write_text("\n".join(out) + "\n")
    return literals


async def _export(pilot) -> None:
    await pilot.press("e")
    await settle(pilot)
    await pilot.click("#export-ok")
    await settle(pilot)


def _notes(app) -> str:
    return " ".join(str(n.message) for n in app._notifications)


@pytest.fixture
def odd_claude(tmp_path):
    path = tmp_path / "s.jsonl"
    return path, _with_literals(SAMPLES / "claude_code_parallel_interrupted.jsonl", path)


def _assert_kept(literals: dict[str, str], *texts: bytes) -> None:
    for key, literal in literals.items():
        found = [v for t in texts for v in _values(t, key)]
        assert found and set(found) == {literal}, (key, literal, found)


async def test_an_export_of_a_file_with_odd_literals_writes_each_as_read(odd_claude):
    """Every fix applied, undone, applied again: the export reads the file again exactly,
    makes the step again and writes the state shown; every literal of a touched or
    untouched record is in the output or the report as it was read. An undo and a second
    export go on from the file read exactly."""
    path, literals = odd_claude
    async with opened(path, (120, 40)) as (app, pilot):
        main = app.main
        wb = main.wb
        assert not wb.original.numbers_exact  # read without the number scan
        for key in ("A", "u", "ctrl+y"):
            await pilot.press(key)
            await settle(pilot)
        shown = [(m.role, len(m.blocks)) for m in wb.session.messages]
        await _export(pilot)
        assert "read again keeping each as written" in _notes(app)
        again = main.wb
        assert again is not wb and again.original.numbers_exact
        assert (len(again.done), len(again.undone)) == (1, 0)
        assert [(m.role, len(m.blocks)) for m in again.session.messages] == shown
        assert main.exported is again.session and main.derived.state is again.session
        out = path.with_name("s.fixed.jsonl")
        _assert_kept(literals, out.read_bytes(), path.with_name("s.report.json").read_bytes())
        # the exact workbench goes on: an undo, a redo, a second export (read once)
        for key in ("u", "ctrl+y"):
            await pilot.press(key)
            await settle(pilot)
        assert main.wb is again and len(again.done) == 1
        os.remove(out)
        await _export(pilot)
        assert main.wb is again and out.exists()
        assert not [n for n in app._notifications if n.severity == "error"]


async def test_the_promise_after_one_fix_reads_the_file_exactly(odd_claude):
    """With the repair pane open, the promise writes the state's bytes after each step:
    meeting an odd literal, the file is read again exactly and the one fix applied is
    applied again on it (the fix of the new plan with the same code, action and places);
    the export goes on from there."""
    path, literals = odd_claude
    async with opened(path, (120, 40)) as (app, pilot):
        main = app.main
        first = main.wb
        await pilot.press("r")
        await settle(pilot)
        applied = main._selected_fix()
        await pilot.press("a")
        await settle(pilot)
        again = main.wb
        assert again is not first and again.original.numbers_exact
        assert "read again keeping each as written" in _notes(app)
        assert [(f.code, f.action) for f in again.applied] == [(applied.code, applied.action)]
        assert [m.role for m in again.session.messages] == [m.role for m in first.session.messages]
        assert "check finds" in str(main.query_one("#promise").render())
        await _export(pilot)
        assert main.wb is again and main.exported is again.session
        out = path.with_name("s.fixed.jsonl")
        _assert_kept(literals, out.read_bytes(), path.with_name("s.report.json").read_bytes())


async def test_the_preview_of_a_file_with_odd_literals_reads_it_exactly(odd_claude):
    """The repair pane's preview shows the records a fix writes: meeting an odd literal in
    them, the file is read again exactly first and the records shown hold it as read."""
    path, literals = odd_claude
    async with opened(path, (120, 40)) as (app, pilot):
        main = app.main
        first = main.wb
        await pilot.press("r")
        await settle(pilot)
        assert main.wb is not first and main.wb.original.numbers_exact
        assert not first.done and not main.wb.done
        diff = str(main.query_one("#diff").render())
        shown = {k: v for k, v in literals.items() if f'"{k}"' in diff}
        assert shown, diff
        for key, literal in shown.items():
            assert f'"{key}": {literal}' in diff, (key, literal)


async def test_a_roo_document_with_odd_literals_is_exported_with_each_as_read(demo_copy):
    """A JSON document (the demo, Roo): a literal on every entry and in every call's input;
    every fix applied and exported: each literal is in the output or the report as read.
    (No 1e400: orjson refuses it, and a document it refuses is read exactly at once.)"""
    import json

    odd = tuple(lit for lit in ODD if lit != "1e400")

    entries = json.loads(demo_copy.read_text())
    parts, literals = [], {}
    for i, entry in enumerate(entries):
        text = json.dumps(entry, separators=(",", ":"), ensure_ascii=False)
        lit = odd[i % len(odd)]
        literals[f"e{i}"] = lit
        text = f'{{"e{i}":{lit},' + text[1:]
        if '"input":{' in text:
            lit = odd[(i + 1) % len(odd)]
            literals[f"i{i}"] = lit
            text = text.replace('"input":{', f'"input":{{"i{i}":{lit},', 1)
        parts.append(text)
    demo_copy.write_text("[" + ",".join(parts) + "]")
    async with opened(demo_copy, (120, 40)) as (app, pilot):
        assert not app.main.wb.original.numbers_exact
        await pilot.press("A")
        await settle(pilot)
        await _export(pilot)
        assert app.main.wb.original.numbers_exact and app.main.wb.done
        assert "read again keeping each as written" in _notes(app)
    out = demo_copy.with_name("demo_session.fixed.json").read_bytes()
    _assert_kept(literals, out, demo_copy.with_name("demo_session.report.json").read_bytes())


async def test_the_raw_view_of_a_file_with_odd_literals_shows_each_as_read(odd_claude):
    """The raw view shows the records as parsed: opened on a session read without the
    number scan, the file is scanned, and holding an odd literal, read again exactly."""
    path, literals = odd_claude
    async with opened(path, (120, 40)) as (app, pilot):
        main = app.main
        first = main.wb
        timeline(app).go_to_row(timeline(app).state.table.message_row[2])
        await pilot.press("J")
        await settle(pilot)
        assert main.raw and main.wb is not first and main.wb.original.numbers_exact
        detail = str(main.query_one("#detail").render())
        shown = {k: v for k, v in literals.items() if f'"{k}"' in detail}
        assert shown, detail
        for key, literal in shown.items():
            assert f'"{key}": {literal}' in detail, (key, literal, detail)


async def test_the_raw_view_of_a_file_without_odd_literals_keeps_the_first_read(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes((SAMPLES / "claude_code_parallel_interrupted.jsonl").read_bytes())
    async with opened(path, (120, 40)) as (app, pilot):
        wb = app.main.wb
        await pilot.press("J")
        await settle(pilot)
        assert app.main.raw and app.main.wb is wb and wb in app.main._numbers_seen


async def test_the_file_changed_since_it_was_read_refuses_the_export(odd_claude):
    """The literals can only be read again from the file as it was: changed on disk, the
    export writes nothing and says why."""
    path, _ = odd_claude
    async with opened(path, (120, 40)) as (app, pilot):
        await pilot.press("A")
        await settle(pilot)
        with open(path, "a") as fh:
            fh.write("\n")
        await pilot.press("e")
        await settle(pilot)
        await pilot.click("#export-ok")
        await settle(pilot)
        if app.screen is not app.main:  # the export asks first: the file changed
            await pilot.click("#yes")
            await settle(pilot)
        notes = _notes(app)
        assert "changed on disk since histview read it" in notes
        assert "nothing was written" in notes
        assert not app.main.wb.original.numbers_exact
    assert not path.with_name("s.fixed.jsonl").exists()
    assert not path.with_name("s.report.json").exists()


async def test_the_promise_says_why_when_the_file_cannot_be_read_again(odd_claude):
    """Changed on disk, the file cannot be read again exactly: the preview's attempt says
    so once, and the promise of every state after says an export would be refused."""
    path, _ = odd_claude
    async with opened(path, (120, 40)) as (app, pilot):
        main = app.main
        first = main.wb
        with open(path, "a") as fh:
            fh.write("\n")
        await pilot.press("r")
        await settle(pilot)
        assert "Could not read the file again exactly" in _notes(app)
        promise = str(main.query_one("#promise").render())
        assert "refused" in promise and "changed on disk" in promise
        await pilot.press("a")
        await settle(pilot)
        assert main.wb is first and len(first.done) == 1
        promise = str(main.query_one("#promise").render())
        assert "refused" in promise and "changed on disk" in promise
        assert _notes(app).count("Could not read the file again exactly") == 1


async def test_a_file_without_odd_literals_is_read_once(tmp_path):
    """The usual file: the export finds every literal exact and writes from the first read."""
    path = tmp_path / "s.jsonl"
    path.write_bytes((SAMPLES / "claude_code_parallel_interrupted.jsonl").read_bytes())
    async with opened(path, (120, 40)) as (app, pilot):
        wb = app.main.wb
        await pilot.press("A")
        await settle(pilot)
        await _export(pilot)
        assert app.main.wb is wb and app.main.exported is wb.session
        assert "read again" not in _notes(app)
    assert path.with_name("s.fixed.jsonl").exists()
