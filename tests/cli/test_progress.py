"""The status line of a long command (repair.progress): at a terminal, stderr says what the
command is doing and for how long; it is erased before anything else is printed, so no
result or error shares a line with it; where stderr is no terminal, or the work is quick,
nothing is written."""

from __future__ import annotations

import io
import os
import time

import pytest

from repair import cli, progress
from repair.errors import InputError
from tests.paths import SAMPLES

SAMPLE = SAMPLES / "roo_subtask_delegation_duplicate.json"


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _shown(text: str) -> list[str]:
    """What a terminal shows of `text`: each line as the carriage returns leave it."""
    out = []
    for line in text.split("\n"):
        screen: list[str] = []
        for part in line.split("\r"):
            screen[: len(part)] = part
        out.append("".join(screen).rstrip())  # (erased: spaces)
    return out


@pytest.fixture
def soon(monkeypatch):
    """The line shows at once and is redrawn often (a test's work takes milliseconds)."""
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "TICK", 0.005)


def _slow_load(monkeypatch, seconds: float = 0.1, fail: str | None = None) -> None:
    """The load takes `seconds` (long enough for the line to be drawn), or then fails."""
    load = cli._load

    def slow(*args, **kw):
        time.sleep(seconds)
        if fail is not None:
            raise InputError(args[0], fail)
        return load(*args, **kw)

    monkeypatch.setattr(cli, "_load", slow)


def test_fix_at_a_terminal_says_what_it_does_then_erases_it(soon, monkeypatch, tmp_path):
    _slow_load(monkeypatch)
    out, err = Tty(), Tty()
    code = cli.main(["fix", str(SAMPLE), "-o", str(tmp_path / "o.json")], stdout=out, stderr=err)
    assert code == 0
    drawn = err.getvalue()
    assert f"histview: reading {SAMPLE.name} … " in drawn
    assert f"histview: repairing {SAMPLE.name} … " in drawn
    assert "histview: writing and reading back … " in drawn
    # erased: the terminal shows nothing of it, and stdout's lines are the command's own
    assert _shown(drawn) == [""]
    assert out.getvalue().splitlines()[-1].startswith(f"{SAMPLE}: wrote ")
    assert "…" not in out.getvalue()


def test_check_says_checking_once_the_file_is_read(soon, monkeypatch):
    _slow_load(monkeypatch)
    analyze = cli._thread_findings

    def slow_findings(session):
        time.sleep(0.1)
        yield from analyze(session)

    monkeypatch.setattr(cli, "_thread_findings", slow_findings)
    err = Tty()
    assert cli.main(["check", str(SAMPLE)], stdout=io.StringIO(), stderr=err) == 1
    drawn = err.getvalue()
    assert drawn.index("histview: reading") < drawn.index(f"histview: checking {SAMPLE.name}")
    assert _shown(drawn) == [""]


def test_an_error_is_printed_on_a_line_of_its_own(soon, monkeypatch):
    _slow_load(monkeypatch, fail="the file is empty")
    err = Tty()
    assert cli.main(["check", str(SAMPLE)], stdout=io.StringIO(), stderr=err) == 2
    assert "histview: reading" in err.getvalue()
    assert _shown(err.getvalue()) == [f"histview: {SAMPLE}: the file is empty", ""]


def test_nothing_is_written_where_stderr_is_no_terminal(soon, monkeypatch, tmp_path):
    _slow_load(monkeypatch)
    err = io.StringIO()
    cli.main(["fix", str(SAMPLE), "-o", str(tmp_path / "o.json")], stdout=Tty(), stderr=err)
    assert err.getvalue() == ""


def test_nothing_is_written_while_stdout_goes_to_a_pager(soon, monkeypatch):
    """`histview check big.jsonl | less`: the pager draws on the terminal stderr is on."""
    _slow_load(monkeypatch)
    r, w = os.pipe()
    err = Tty()
    with os.fdopen(w, "w") as pipe:
        cli.main(["check", str(SAMPLE)], stdout=pipe, stderr=err)
    with os.fdopen(r) as got:
        assert f"{SAMPLE}: 2 errors" in got.read()
    assert err.getvalue() == ""


def test_quick_work_writes_nothing(monkeypatch, tmp_path):
    monkeypatch.setattr(progress, "DELAY", 60.0)
    err = Tty()
    cli.main(["fix", str(SAMPLE), "-o", str(tmp_path / "o.json")], stdout=io.StringIO(), stderr=err)
    assert err.getvalue() == ""


def test_a_dumb_terminal_gets_no_line(soon, monkeypatch, tmp_path):
    monkeypatch.setenv("TERM", "dumb")
    _slow_load(monkeypatch)
    err = Tty()
    cli.main(["fix", str(SAMPLE), "-o", str(tmp_path / "o.json")], stdout=io.StringIO(), stderr=err)
    assert err.getvalue() == ""


def test_the_line_shows_a_file_name_made_safe(soon, monkeypatch, tmp_path):
    hostile = tmp_path / "a\x1b[2Jb\u202e.json"
    hostile.write_bytes(SAMPLE.read_bytes())
    _slow_load(monkeypatch)
    err = Tty()
    cli.main(["check", str(hostile)], stdout=io.StringIO(), stderr=err)
    drawn = err.getvalue()
    assert "histview: reading" in drawn
    assert "\x1b" not in drawn and "\u202e" not in drawn


def test_a_long_name_is_cut_to_the_terminal(soon, monkeypatch, tmp_path):
    """A line wider than the terminal would wrap, and the carriage return would redraw only
    its last row: the line is cut to the terminal's width."""
    long = tmp_path / ("x" * 30 + ".json")
    long.write_bytes(SAMPLE.read_bytes())
    monkeypatch.setattr(progress.Progress, "_columns", lambda self: 40)
    _slow_load(monkeypatch)
    err = Tty()
    cli.main(["check", str(long)], stdout=io.StringIO(), stderr=err)
    drawn = [p for p in err.getvalue().split("\r") if p.strip()]
    assert drawn and all(len(p) <= 39 for p in drawn)
    assert drawn[0].startswith("histview: reading xxxx")
