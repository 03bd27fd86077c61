"""A Claude Code merge reports what the writer did with the second message's records, from
the writer's own account (`Export.dropped_records`): a record it writes as read (but for its
parentUuid) is reported nowhere, one it gives the first's message id is "rewritten", one it
leaves out "deleted"; the merge's report entry removes none (`writes_merged_as_read`)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from repair.edits import MergeMessages
from repair.formats import load_bytes
from repair.plan import apply_all
from tests.claude_code_records import assistant, jsonl, result, text, tool_use, user

KINDS = ["ask", "blank", "say m1", "say m2", "say m3", "call m1", "call m2"]


def _records(kinds: list[str]) -> list[dict]:
    out: list[dict] = []
    for k, kind in enumerate(kinds):
        n, parent, t = len(out) + 1, len(out) or None, float(k)
        if kind == "ask":
            out.append(user(n, parent, f"ask {k}", t))
        elif kind == "blank":
            out.append(user(n, parent, [text("   ")], t))
        elif kind.startswith("say"):
            out.append(assistant(n, parent, f"msg_{kind[4:]}", text(f"say {k}"), t))
        else:
            tid = f"toolu_{k:02}"
            out.append(assistant(n, parent, f"msg_{kind[5:]}", tool_use(tid), t))
            out.append(result(n + 1, n, tid, "ok", t + 0.5))
    return out


def _uuids(value: Any) -> set[str]:
    """The uuids of the records a report value holds whole."""
    if isinstance(value, dict):
        own = {value["uuid"]} if "uuid" in value and "message" in value else set()
        return own.union(*(_uuids(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_uuids(v) for v in value))
    return set()


def _unparented(r: dict) -> dict:
    return {k: v for k, v in r.items() if k != "parentUuid"}


@given(st.lists(st.sampled_from(KINDS), min_size=3, max_size=9))
@settings(max_examples=80, deadline=None)
def test_every_record_is_in_the_written_file_as_read_or_reported(kinds):
    records = _records(["ask", *kinds])
    session = load_bytes(jsonl(records), "/tmp/session.jsonl", format="claude-code")
    after, applied = apply_all(session)
    if not applied:
        return
    written = after.export()
    now = {r["uuid"]: r for r in map(json.loads, written.data.splitlines())}
    merges = [e for f in applied for e in f.edits if isinstance(e, MergeMessages)]
    assert not any(e.has_removed for e in merges)  # the merge removes none of them
    reported = {(r["line"], r["outcome"]) for r in written.dropped_records}
    removed = _uuids([e.removed for f in applied for e in f.edits if e.has_removed])
    for line, r in enumerate(records, 1):
        got = now.get(r["uuid"])
        if got is not None and _unparented(got) == _unparented(r):
            continue  # as read
        if got is not None:  # rewritten: the report has it as read
            assert (line, "rewritten") in reported or r["uuid"] in removed, (line, got)
        else:
            assert {(line, "deleted"), (line, "emptied")} & reported or r["uuid"] in removed
