"""Whitespace and empties: an assistant message that holds only whitespace is repaired like an
empty one (the API refuses it, also as the final message), and fixes on odd opencode tool
parts always change the file and converge."""

from __future__ import annotations

import copy
import json

import pytest

from repair.analysis import analyze
from repair.formats import load_bytes, load_session
from repair.workbench import Workbench
from tests.command import run
from tests.paths import SAMPLES


def codes(doc, fmt: str = "anthropic") -> list[tuple[str, str, int | None]]:
    s = load_bytes(json.dumps(doc).encode(), format=fmt)
    return [(f.code, f.severity, f.message_index) for f in analyze(s).findings]


@pytest.mark.parametrize(
    "content", ["  \n ", [{"type": "text", "text": " "}], [{"type": "text", "text": "\t"}] * 2]
)
def test_a_final_assistant_message_of_whitespace_is_empty_content(content):
    doc = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": content}]
    assert ("empty-content", "error", 1) in codes(doc)


@pytest.mark.parametrize("content", ["", [], [{"type": "text", "text": "done"}]])
def test_an_empty_or_real_final_assistant_message_is_still_fine(content):
    doc = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": content}]
    assert [c for c in codes(doc) if c[0] == "empty-content"] == []


@pytest.mark.parametrize(
    "doc",
    [
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": " \n"}],
        {
            "model": "gpt-4o",
            "messages": [
                {"role": "system", "content": "s"},
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "   "},
            ],
        },
    ],
)
def test_fix_drops_a_whitespace_only_final_message_and_reports_it(tmp_path, doc):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    out = tmp_path / "fixed.json"
    code, stdout, err = run("fix", str(path), "-o", str(out))
    assert (code, err) == (0, ""), stdout
    written = json.loads(out.read_text())
    msgs = written if isinstance(written, list) else written["messages"]
    assert msgs[-1] == {"role": "user", "content": "hi"}
    report = json.loads((tmp_path / "fixed.report.json").read_text())
    removed = [e["removed"] for e in report["edits"] if "removed" in e]
    assert removed and removed[0]["role"] == "assistant"
    assert (
        Workbench(load_session(str(out), format=load_session(str(path)).format)).apply_all() is None
    )


def _opencode_variants():
    doc = json.loads((SAMPLES / "opencode_stuck_running.json").read_text())
    running = (2, 2)  # messages[2].parts[2] is the part left running

    def part(d):
        return d["messages"][running[0]]["parts"][running[1]]

    no_part_id = copy.deepcopy(doc)
    del part(no_part_id)["id"]
    empty_call = copy.deepcopy(doc)
    part(empty_call)["callID"] = ""
    both = copy.deepcopy(doc)
    del part(both)["id"]
    part(both)["callID"] = ""
    twin = copy.deepcopy(empty_call)  # two running parts, neither with a call id
    extra = copy.deepcopy(part(twin))
    extra.pop("id", None)
    twin["messages"][running[0]]["parts"].append(extra)
    return {"no part id": no_part_id, "empty callID": empty_call, "both": both, "twin": twin}


@pytest.mark.parametrize("name", list(_opencode_variants()))
def test_fixes_on_opencode_tool_parts_without_ids_change_the_file_and_converge(tmp_path, name):
    path = tmp_path / "session.json"
    path.write_text(json.dumps(_opencode_variants()[name], indent=2) + "\n")
    session = load_session(str(path))
    wb = Workbench(session)
    assert wb.apply_all().count > 0
    # every applied step changes what is written
    for step in wb.done:
        assert step.after.export_bytes() != step.before.export_bytes()
    out = tmp_path / "fixed.json"
    code, _, err = run("fix", str(path), "-o", str(out))
    assert err == "" and code == 0
    again = Workbench(load_session(str(out)))
    assert again.apply_all() is None, [(f.code, f.action) for f in again.applied]
