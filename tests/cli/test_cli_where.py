"""FILE:WHERE: names the place in the file, not histview's internal message numbering."""

from __future__ import annotations

from repair.cli import main
from repair.place import Place
from tests.paths import SAMPLES


def test_pointer_place():
    assert Place(pointer="/7/content/0").where() == "messages[7].content[0]"
    assert Place(pointer="/messages/2/parts/2").where() == "messages[2].parts[2]"
    assert Place(pointer="/messages/3").where() == "messages[3]"


def test_place_reads_what_an_adapter_recorded():
    """A line wins over the pointer inside its record; escaped tokens are unescaped; JSON
    output is what the adapter recorded."""
    both = Place.of({"line": 4, "path": "/messages/2"})
    assert (both.where(), both.words(), both.message_number()) == ("4", "line 4", 2)
    assert both.to_json() == {"line": 4, "path": "/messages/2"}
    odd = Place.of({"path": "/a~1b/0~0"})
    assert odd.segments == ("a/b", "0~") and odd.message_number() is None
    assert Place.of(None).to_json() == {} and Place.of({}).where() == ""


def test_opencode_finding_names_the_part_in_the_file(capsys):
    status = main(["check", str(SAMPLES / "opencode_stuck_running.json")])
    out = capsys.readouterr().out
    assert status == 0  # opencode answers the call itself when it resumes
    assert "opencode_stuck_running.json:messages[2].parts[2]: warning orphan-tool-use" in out
    assert "(message 3)" in out
