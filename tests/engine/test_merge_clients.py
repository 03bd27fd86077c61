"""A merge keeps the second message's records the client sends: measured with Codex CLI
0.169 (`../shared/clients/resume codex`, tests/fixtures/clients/codex/
merged_empty_item.recorded.json). The rollout holds an empty user message between two
assistant turns, the second opening with an assistant message item of no content
(`content: []`). Codex sends every item as the rollout holds it, that one too; so the fix
(drop the empty user message, merge the assistant messages around it) writes that line, and
what Codex sends of the written file is what it sent of the original less the empty user
message item. Before, the merged message named only the first message's lines and the
writer dropped the item (the report listed line 8 as removed): Codex then sent one
assistant item fewer."""

from __future__ import annotations

import json
import os

import pytest

from tests.command import run
from tests.formats.client_requests import history_of, input_path, resume, sent_by_histview, shape
from tests.paths import CLIENT_FIXTURES

CODEX = CLIENT_FIXTURES / "codex"
ORIGINAL = CODEX / "merged_empty_item.jsonl"
WRITTEN = CODEX / "merged_empty_item_fixed.jsonl"  # what `fix --target anthropic -o` wrote
RECORDED = json.loads((CODEX / "merged_empty_item.recorded.json").read_text())
EMPTY_USER = {"type": "message", "role": "user", "text": ""}
EMPTY_ASSISTANT = {"type": "message", "role": "assistant", "text": ""}


def test_the_fix_writes_the_item_of_no_content_and_reports_only_the_dropped_message(tmp_path):
    out, report = tmp_path / "out.jsonl", tmp_path / "out.report.json"
    code, said, _ = run("fix", ORIGINAL, "--target", "anthropic", "-o", out, "--report", report)
    assert code == 0, said
    assert out.read_bytes() == WRITTEN.read_bytes()
    assert b'"role":"assistant","content":[]' in out.read_bytes()
    doc = json.loads(report.read_text())
    dropped = doc["dropped_records"]
    assert [(d["line"], d["record"]["payload"]["role"]) for d in dropped] == [(7, "user")]
    # the edits: the empty user message (line 7) removed; the merge removes nothing (before,
    # it listed lines 8 and 9 as removed: the written file holds them)
    edits = {e["action"]: e for e in doc["edits"]}
    assert set(edits) == {"drop_message", "merge_messages"}
    assert edits["drop_message"]["removed"] == [dropped[0]["record"]]
    assert "removed" not in edits["merge_messages"]
    assert edits["merge_messages"]["detail"] == "merge message 3 into message 1"
    written = [json.loads(ln) for ln in out.read_bytes().splitlines()]
    original = [json.loads(ln) for ln in ORIGINAL.read_bytes().splitlines()]
    assert original[7] in written and original[8] in written  # lines 8 and 9


def test_the_dry_run_shows_only_the_dropped_message_removed():
    code, said, _ = run("fix", ORIGINAL)
    assert code == 0
    assert [ln for ln in said.splitlines() if ln.startswith("@@")] == ["@@ line 7 (removed) @@"]


def test_codex_sends_the_written_file_as_the_original_less_the_dropped_message():
    sent, written = RECORDED["sent"], RECORDED["written"]["sent"]
    k = sent.index(EMPTY_USER)
    assert written == sent[:k] + sent[k + 1 :]
    assert written[k] == EMPTY_ASSISTANT  # the line the merge keeps: Codex sends it


@pytest.mark.parametrize("case", [RECORDED, RECORDED["written"]], ids=["original", "written"])
def test_histview_sends_what_codex_sent_the_items_of_no_content_too(case):
    assert sent_by_histview("codex", input_path(case["input"])) == case["sent"]


@pytest.mark.skipif(
    not os.environ.get("HISTVIEW_CLIENTS"), reason="set HISTVIEW_CLIENTS to run the real clients"
)
@pytest.mark.parametrize("case", [RECORDED, RECORDED["written"]], ids=["original", "written"])
def test_the_real_codex_still_sends_what_was_recorded(case):
    body = resume("codex", input_path(case["input"]))
    assert shape("codex", history_of("codex", body)) == case["sent"]
