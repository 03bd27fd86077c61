"""`fix` on a session where a finding's fix would change what the format keeps as it was
(the history a Codex `compacted` line stands for, which Codex rebuilds from that line): the
other fixes are written, that finding is left and said to be (SPEC §7, README: fix)."""

from __future__ import annotations

import json

from repair.analysis import analyze
from repair.formats import load_session
from tests.command import run
from tests.paths import CLIENT_FIXTURES, FIXTURES

# a compaction's history ending in a user item of no content, alone in its message (an
# empty-content warning), then a line Codex cannot read (line 17, malformed)
CASE = FIXTURES / "fuzz" / "codex_compacted_empty_item_dropped.jsonl"
WHY = (
    "the history the compaction on line 16 stands for cannot be edited (Codex rebuilds it "
    "from that line)"
)


def test_fix_writes_every_other_fix_and_reports_the_frozen_finding_unfixed(tmp_path):
    out = tmp_path / "out.jsonl"
    code, stdout, stderr = run("fix", CASE, "-o", out, "--strategy", "malformed=drop")
    # only a warning remains: exit 0, as for any output without an error-level finding
    assert (code, stderr) == (0, "")
    assert f"{out}:16: warning empty-content" in stdout
    assert f"[left as is: {WHY}]" in stdout
    assert "wrote" in stdout and "now 0 errors, 1 warning" in stdout
    # the unreadable line is gone, nothing else changed: the file Codex was recorded sending
    # the same 6 items for, before and after (compacted_empty_item_dropped*.sent.json)
    lines = CASE.read_bytes().splitlines(keepends=True)
    assert out.read_bytes() == b"".join(lines[:16] + lines[17:])
    assert (
        out.read_bytes()
        == (CLIENT_FIXTURES / "codex" / "compacted_empty_item_dropped_fixed.jsonl").read_bytes()
    )
    # it reads back with the frozen finding alone, and the report says why it is left
    again = analyze(load_session(str(out)))
    assert [(f.code, f.source.line) for f in again.findings] == [("empty-content", 16)]
    report = json.loads((tmp_path / "out.report.json").read_text())
    assert [e["finding"] for e in report["edits"]] == ["malformed"]
    assert [(r["code"], r.get("unfixed")) for r in report["remaining"]] == [("empty-content", WHY)]


def test_fix_json_and_a_second_fix_say_the_same(tmp_path):
    out = tmp_path / "out.jsonl"
    code, stdout, _ = run("fix", CASE, "-o", out, "--strategy", "malformed=drop", "--json")
    assert code == 0
    doc = json.loads(stdout)
    assert [r.get("unfixed") for r in doc["remaining"]] == [WHY]
    # fixing the output again changes nothing and leaves the same finding for the same reason
    code, stdout, _ = run("fix", out)
    assert code == 0
    assert "nothing to fix (0 errors, 1 warning, 0 info)" in stdout
    assert f"[left as is: {WHY}]" in stdout
