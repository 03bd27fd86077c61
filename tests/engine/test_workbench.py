"""Stepping through repairs: preview, apply, skip, alternatives, undo/redo, export safety."""

from __future__ import annotations

import json
import os

import pytest

from bench.gen import gen_claude_code
from repair.errors import ExportRefused
from repair.formats import load_session
from repair.plan import Choices
from repair.workbench import Workbench
from tests.command import run

BROKEN = [
    {"role": "user", "content": "fix the test"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Reading two files."},
            {"type": "tool_use", "id": "toolu_A", "name": "read_file", "input": {"path": "a.py"}},
            {"type": "tool_use", "id": "toolu_B", "name": "read_file", "input": {"path": "b.py"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_A", "content": "print(1)"},
            {
                "type": "tool_result",
                "tool_use_id": "toolu_STRAY",
                "content": "from another session",
            },
        ],
    },
    {"role": "assistant", "content": "Done."},
]


@pytest.fixture
def broken(tmp_path):
    path = tmp_path / "session.json"
    path.write_text(json.dumps(BROKEN, indent=2) + "\n")
    return str(path)


def test_preview_shows_the_change_and_changes_nothing(broken):
    wb = Workbench(load_session(broken))
    fix = wb.plan.actionable[0]
    assert fix.code == "mismatched-tool-result-id" and fix.action == "remap"
    prev = wb.preview(fix)
    text = "\n".join(prev.diff)
    assert '-      "tool_use_id": "toolu_STRAY",' in text
    assert '+      "tool_use_id": "toolu_B",' in text
    assert not wb.dirty and len(wb.analysis.errors) == 1


def test_apply_undo_redo_restore_exact_states(broken):
    wb = Workbench(load_session(broken))
    start = wb.session
    assert wb.apply(wb.plan.actionable[0])
    fixed = wb.session
    assert wb.analysis.errors == [] and wb.dirty
    wb.undo()
    assert wb.session is start and len(wb.analysis.errors) == 1
    wb.redo()
    assert wb.session is fixed and wb.analysis.errors == []


def test_cycle_switches_to_the_alternative_and_skip_takes_a_fix_out(broken):
    wb = Workbench(load_session(broken))
    fix = wb.plan.actionable[0]
    assert wb.cycle(fix) == "drop"
    fix = wb.plan.fixes[0]
    assert fix.action == "drop" and [e.action for e in fix.edits][0] == "drop_block"
    assert wb.skip(fix) is True
    assert wb.plan.actionable == [] and wb.apply_all() is None
    assert wb.skip(wb.plan.fixes[0]) is False
    assert wb.apply_all().count >= 1
    # dropping the wrong-id result leaves toolu_B unanswered: the next round answers it
    codes = [f.code for f in wb.applied]
    assert codes[0] == "mismatched-tool-result-id" and "orphan-tool-use" in codes
    assert wb.analysis.errors == []


def test_export_writes_default_names_and_report_with_removed_content(broken, tmp_path):
    wb = Workbench(load_session(broken), Choices(by_code={"mismatched-tool-result-id": "drop"}))
    wb.apply_all()
    result = wb.export()
    assert result.output == str(tmp_path / "session.fixed.json")
    assert result.report == str(tmp_path / "session.report.json")
    fixed = load_session(result.output)
    assert [m.role for m in fixed.messages] == ["user", "assistant", "user", "assistant"]
    report = json.loads(open(result.report).read())
    removed = [e["removed"] for e in report["edits"] if "removed" in e]
    assert {
        "type": "tool_result",
        "tool_use_id": "toolu_STRAY",
        "content": "from another session",
    } in removed
    assert report["remaining"] == [] and report["before"] == {"mismatched-tool-result-id": 1}
    first = open(result.output, "rb").read()
    again = wb.export()  # (the default names are free names: the first export is kept)
    assert again.output == str(tmp_path / "session.fixed.1.json")
    assert again.report == str(tmp_path / "session.report.1.json")
    assert open(result.output, "rb").read() == first == open(again.output, "rb").read()
    with pytest.raises(ExportRefused, match="exists"):
        wb.export(result.output)


def test_in_place_keeps_backups_and_never_overwrites_them(broken):
    original = open(broken, "rb").read()
    wb = Workbench(load_session(broken))
    wb.apply_all()
    res = wb.export(in_place=True)
    assert res.backup == broken + ".bak" and open(res.backup, "rb").read() == original
    assert load_session(broken).messages[2].blocks[1].tool_id == "toolu_B"
    wb2 = Workbench(load_session(broken))
    res2 = wb2.export(in_place=True)
    assert res2.backup == broken + ".bak.1"
    assert open(broken + ".bak", "rb").read() == original


def test_in_place_refuses_when_the_file_changed_since_read(broken):
    wb = Workbench(load_session(broken))
    wb.apply_all()
    with open(broken, "a") as fh:
        fh.write(" ")
    before = open(broken, "rb").read()
    with pytest.raises(ExportRefused, match="changed since it was read"):
        wb.export(in_place=True)
    assert open(broken, "rb").read() == before
    assert not os.path.exists(broken + ".bak")


def test_export_refuses_while_malformed_records_remain(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(
        json.dumps(
            [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": 42},
                {"role": "user", "content": "x"},
                {"role": "assistant", "content": "ok"},
            ]
        )
    )
    wb = Workbench(load_session(str(path)))
    assert [f.code for f in wb.analysis.findings if f.severity == "error"] == ["malformed"]
    with pytest.raises(ExportRefused, match="malformed"):
        wb.export()
    assert not (tmp_path / "m.fixed.json").exists()
    wb = Workbench(load_session(str(path)), Choices(by_code={"malformed": "drop"}))
    wb.apply_all()
    out = wb.export()
    report = json.loads(open(out.report).read())
    assert {"role": "assistant", "content": 42} in [e.get("removed") for e in report["edits"]]


def test_new_output_gets_the_usual_file_mode(broken):
    wb = Workbench(load_session(broken))
    wb.apply_all()
    res = wb.export()
    umask = os.umask(0)
    os.umask(umask)
    assert os.stat(res.output).st_mode & 0o777 == 0o666 & ~umask


def test_overwrite_replaces_an_agreed_file_but_never_the_input_or_the_backup(broken, tmp_path):
    """The TUI's "Overwrite?" answer lets an existing output or report be replaced, and
    nothing else: the input, the output and the backup stay off limits."""
    wb = Workbench(load_session(broken))
    wb.apply_all()
    out, rep = tmp_path / "o.json", tmp_path / "r.json"
    out.write_text("old output")
    rep.write_text("old report")
    os.chmod(rep, 0o600)
    res = wb.export(str(out), str(rep), overwrite=True)
    assert json.loads(out.read_text())[2]["content"][1]["tool_use_id"] == "toolu_B"
    assert json.loads(rep.read_text())["output"] == str(out)
    assert os.stat(rep).st_mode & 0o777 == 0o600  # a replaced file keeps its mode
    assert res.backup is None
    for report in (broken, str(out)):
        with pytest.raises(ExportRefused, match="would be"):
            wb.export(str(out), report, overwrite=True)
    with pytest.raises(ExportRefused, match="would be the backup"):
        wb.export(report=broken + ".bak", in_place=True, overwrite=True)
    with pytest.raises(ExportRefused, match="the report path is empty"):
        wb.export(str(tmp_path / "new.json"), "")


def test_a_session_not_read_from_a_file_is_not_written_in_place(broken):
    from repair.formats import load_bytes

    with open(broken, "rb") as fh:
        wb = Workbench(load_bytes(fh.read(), path=broken))
    wb.apply_all()
    with pytest.raises(ExportRefused, match="was not read from a file"):
        wb.export(in_place=True)
    assert not os.path.exists(broken + ".bak")


def test_a_failed_export_leaves_the_workbench_ready_to_try_again(broken, tmp_path, monkeypatch):
    import errno

    import repair.files as files

    wb = Workbench(load_session(broken))
    wb.apply_all()
    real = files._create_temp
    monkeypatch.setattr(
        files, "_create_temp", lambda p: (_ for _ in ()).throw(OSError(errno.EDQUOT, "quota"))
    )
    with pytest.raises(ExportRefused, match="disk quota exceeded"):
        wb.export(in_place=True)
    assert sorted(os.listdir(tmp_path)) == ["session.json"]
    monkeypatch.setattr(files, "_create_temp", real)
    res = wb.export(in_place=True)
    assert res.backup == broken + ".bak" and res.report == str(tmp_path / "session.report.json")


# Codes the generated Claude Code session below holds: fixing these three leaves an orphan
# call and an info, and apply-all's last round is analysed as `check` does (lean)
_SOME = {"mismatched-tool-result-id", "duplicate-tool-result", "misplaced-tool-result"}


@pytest.fixture
def generated(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(gen_claude_code(400, seed=5)[0])
    return str(path)


def test_export_after_apply_all_reports_what_check_finds_in_the_written_file(generated):
    """As `fix` runs it (nothing asked before apply-all): the report's remaining findings
    are those `check` prints for the file written, and the workbench's analysis of that
    state (what the TUI shows) finds them too, but where they were read; undo shows the
    findings as read again."""
    wb = Workbench(load_session(generated), Choices(only=_SOME))
    assert wb.apply_all().count == 3
    result = wb.export()
    report = json.loads(open(result.report).read())
    checked = json.loads(run("check", result.output, "--json")[1])["findings"]
    assert [f["code"] for f in checked] == [
        "orphan-tool-use",
        "consecutive-same-role",
    ]
    assert report["remaining"] == checked
    # (the state in memory: its places are the input's, where its messages were read)
    assert _placeless(wb.analysis.findings) == [{**f, "source": None} for f in checked]
    wb.undo()
    as_read = json.loads(run("check", generated, "--json")[1])["findings"]
    assert [f.to_json() for f in wb.analysis.findings] == as_read


def _placeless(findings) -> list[dict]:
    return [{**f.to_json(), "source": None} for f in findings]


def test_undo_and_redo_of_apply_all_show_the_findings_kept(generated):
    """As the TUI steps (each state's analysis asked for): undo of apply-all and redo give
    back the analyses shown before, not made again."""
    wb = Workbench(load_session(generated), Choices(only=_SOME))
    first = wb.analysis
    assert len(first.findings) == 5
    wb.apply_all()
    fixed = wb.analysis
    assert [f.code for f in fixed.findings] == ["orphan-tool-use", "consecutive-same-role"]
    wb.undo()
    assert wb.analysis is first
    wb.redo()
    assert wb.analysis is fixed
