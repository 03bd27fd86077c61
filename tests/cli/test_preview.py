"""The one diff renderer and the one read-back (issue 10 point 5, issue 11 point 3): a preview
shows the records the format's writer writes, a JSON document's preview says first what
happens to the blocks, and what `fix` promises is what `check` finds in the output, under
every target."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from repair.formats import load_session
from repair.preview import preview
from repair.workbench import Workbench
from tests.paths import SAMPLES, sample_files
from tui.cli import main

PROVIDERS = ["anthropic", "bedrock", "openai-chat", "openai-responses", "gemini"]


def _last_line(capsys) -> str:
    return capsys.readouterr().out.strip().splitlines()[-1]


def _counts(line: str) -> str:
    m = re.search(r"(\d+ errors?, \d+ warnings?, \d+ info)", line)
    assert m, line
    return m.group(1)


@pytest.mark.parametrize("target", [None, *PROVIDERS], ids=lambda t: t or "default")
@pytest.mark.parametrize("sample", sample_files(), ids=lambda p: p.name)
def test_the_dry_run_promises_what_check_finds_in_the_output(capsys, tmp_path, sample, target):
    """Before, `--target bedrock` on a Codex or OpenAI Chat file promised 0 errors and the
    written file had 1: the promise came from the repaired messages, not from the bytes."""
    src = tmp_path / sample.name
    shutil.copy(sample, src)
    flags = ["--target", target] if target else []
    dry = main(["fix", str(src), *flags])
    promised = _last_line(capsys)
    out = tmp_path / f"out{sample.suffix}"
    wrote = main(["fix", str(src), *flags, "-o", str(out)])
    written = _last_line(capsys)
    if not out.exists():  # nothing to fix under this target: nothing to compare
        assert "nothing to fix" in promised
        return
    checked = main(["check", str(out), *flags])
    found = _last_line(capsys)
    if "no problems" in found:
        assert "after them 0 errors, 0 warnings, 0 info" in promised or "nothing to fix" in promised
    else:
        assert _counts(promised) == _counts(found), (promised, found)
    assert _counts(written) == _counts(promised)
    assert dry == wrote == checked


def test_a_jsonl_preview_is_the_new_function_call_output_line():
    wb = Workbench(load_session(str(SAMPLES / "codex_missing_output.jsonl")))
    (fix,) = wb.plan.actionable
    pv = wb.preview(fix)
    (change,) = pv.records
    assert change.old is None and change.note == "new" and change.where.startswith("line ")
    assert change.new["payload"]["type"] == "function_call_output"
    assert '+    "type": "function_call_output",' in pv.diff
    assert pv.diff[0] == f"@@ {change.where} (new) @@"


def test_a_claude_code_preview_is_the_new_record_and_the_lines_re_linked_to_it():
    wb = Workbench(load_session(str(SAMPLES / "claude_code_parallel_interrupted.jsonl")))
    fix = wb.plan.actionable[0]
    pv = wb.preview(fix)
    new = [c for c in pv.records if c.old is None]
    relinked = [c for c in pv.records if c.old is not None and c.new is not None]
    assert len(new) == 1 and new[0].new["type"] == "user"
    assert new[0].new["message"]["content"][0]["tool_use_id"] == fix.tool_use_id
    uid = new[0].new["uuid"]
    # the record that followed the tool_use now hangs on the new result
    assert any(c.new["parentUuid"] == uid != c.old["parentUuid"] for c in relinked)
    assert f'+  "parentUuid": "{uid}",' in pv.diff
    # nothing else changes
    assert all(c.old["uuid"] == c.new["uuid"] for c in relinked)


def test_a_json_preview_says_what_happens_to_the_blocks_then_diffs_the_document():
    session = load_session(str(SAMPLES / "anthropic_parallel_results_split.json"))
    wb = Workbench(session)
    (fix,) = wb.plan.actionable
    pv = wb.preview(fix)
    moved = fix.tool_use_id
    assert pv.description == [
        f"Move result {moved} from message 3 into message 2, after result "
        "toolu_01yGzuU8BIXOcOqc9oGTaKD1; message 3 is dropped."
    ]
    lines = pv.lines()
    assert lines[0] == "# " + pv.description[0]
    assert lines[1] == "@@ messages[2] @@" and "@@ messages[3] (removed) @@" in lines
    assert f'+      "tool_use_id": "{moved}",' in lines


def test_the_preview_of_a_change_that_writes_the_same_bytes_is_empty():
    session = load_session(str(SAMPLES / "roo_clean_long_session.json"))
    pv = preview(session, session)
    assert pv.description == [] and pv.diff == [] and pv.records == []


def test_the_dry_run_and_the_preview_are_one_renderer(capsys, tmp_path):
    src = tmp_path / "s.json"
    shutil.copy(SAMPLES / "anthropic_parallel_results_split.json", src)
    wb = Workbench(load_session(str(src)))
    (fix,) = wb.plan.actionable
    pane = wb.preview(fix).lines()
    main(["fix", str(src)])
    printed = capsys.readouterr().out.splitlines()
    assert printed[1:-1] == pane


def test_a_record_cut_over_the_limit_is_said(tmp_path):
    doc = [{"role": "user", "content": "go"}]
    for i in range(300):
        doc.append(
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": f"t{i}", "name": "x", "input": {}}],
            }
        )
        doc.append({"role": "user", "content": "continue"})
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    wb = Workbench(load_session(str(path)))
    wb.apply_all()
    pv = wb.preview_applied()
    assert len(pv.description) == 300 and len(pv.records) == 300
    assert pv.lines()[200] == "# … and 100 more messages change"


@pytest.mark.parametrize("sample", sample_files(), ids=lambda p: p.name)
def test_an_adapters_own_record_changes_are_what_its_writer_writes(sample):
    """Roo, Anthropic and Claude Code compute the changed records without writing and
    parsing the whole file; they must equal the diff of the whole files written."""
    from repair.plan import apply_all
    from repair.records import changed_records

    before = load_session(str(sample))
    after, _ = apply_all(before)
    own = before.adapter.record_changes(before, after)
    whole = changed_records(before.export().data, after.export().data)
    assert [(c.where, c.old, c.new) for c in own] == [(c.where, c.old, c.new) for c in whole]


def test_bytes_that_do_not_read_back_refuse_the_export(tmp_path, monkeypatch):
    from repair.errors import ExportRefused

    src = tmp_path / "s.json"
    shutil.copy(SAMPLES / "anthropic_parallel_results_split.json", src)
    wb = Workbench(load_session(str(src)))
    wb.apply_all()

    from repair.formats import anthropic_list

    # a writer that cuts the document short: the entries it writes anew do not read back
    # (the narrowed read-back), nor does the whole file
    real = anthropic_list.dumps
    monkeypatch.setattr(anthropic_list, "dumps", lambda obj, style: real(obj, style)[:8])
    with pytest.raises(ExportRefused, match="would not read back as anthropic"):
        wb.export(str(tmp_path / "out.json"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]
