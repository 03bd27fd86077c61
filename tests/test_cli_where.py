"""FILE:WHERE: names the place in the file, not histview's internal message numbering."""

from __future__ import annotations

from pathlib import Path

from repair.cli import main, pointer_place

SAMPLES = Path(__file__).resolve().parents[1] / "sample_sessions"


def test_pointer_place():
    assert pointer_place("/7/content/0") == "messages[7].content[0]"
    assert pointer_place("/messages/2/parts/2") == "messages[2].parts[2]"
    assert pointer_place("/messages/3") == "messages[3]"


def test_opencode_finding_names_the_part_in_the_file(capsys):
    status = main(["check", str(SAMPLES / "opencode_stuck_running.json")])
    out = capsys.readouterr().out
    assert status == 0  # opencode answers the call itself when it resumes
    assert "opencode_stuck_running.json:messages[2].parts[2]: warning orphan-tool-use" in out
    assert "(message 3)" in out
