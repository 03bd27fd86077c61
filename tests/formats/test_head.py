"""Large Claude Code files: the head (its first lines, read as a file of their own) shows the
messages the whole file starts with; a file read without keeping its records says the same
as one read whole."""

from __future__ import annotations

from repair.formats import load_session
from repair.formats.head import load_head


def _shape(messages):
    return [
        (m.src["line"], m.role, m.hidden, tuple((b.type, b.tool_id) for b in m.blocks))
        for m in messages
    ]


def test_head_shows_the_messages_the_whole_file_starts_with(cc_file):
    head = load_head(str(cc_file), size=100_000, small=0)
    whole = load_session(str(cc_file))
    assert head is not None and head.format == "claude-code" and head.target == "claude-code"
    assert 20 < len(head.messages) < len(whole.messages) / 5
    # the last message of the head may still take records the head does not hold
    n = len(head.messages) - 1
    assert _shape(head.messages[:n]) == _shape(whole.messages[:n])
    assert head.source is None  # never written


def test_no_head_for_small_files_whole_documents_or_other_formats(cc_file, tmp_path):
    assert load_head(str(cc_file)) is None  # below 16 MB the whole load is the first paint
    assert load_head(str(cc_file), size=100_000, small=cc_file.stat().st_size) is None
    doc = tmp_path / "roo.json"
    doc.write_text('[{"role": "user", "content": "hi"}]\n' + " " * 200_000)
    assert load_head(str(doc), size=100_000, small=0) is None
    codex = tmp_path / "rollout.jsonl"
    line = '{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x"}}\n'
    codex.write_text(line * 3000)
    assert load_head(str(codex), size=100_000, small=0) is None
    assert load_head(str(tmp_path / "missing.jsonl"), small=0) is None


def _lean(monkeypatch, lean: bool) -> None:
    from repair.formats.claude_code import adapter

    monkeypatch.setattr(adapter, "LEAN_BYTES", 0 if lean else 1 << 62)


def test_a_large_file_loads_without_its_records_and_says_the_same(cc_file, monkeypatch, tmp_path):
    """Above LEAN_BYTES the lines forget their parsed records once read: the messages, their
    records as read, the findings and a fix's bytes are those of the ordinary load."""
    from repair.analysis import analyze
    from repair.plan import apply_all

    out = {}
    for lean in (False, True):
        _lean(monkeypatch, lean)
        session = load_session(str(cc_file))
        lines = session.state.file.lines
        held = (sum(1 for ln in lines if ln._state == 1), len(lines))
        findings = [f.to_json() for f in analyze(session).findings]
        raws = [m.raw for m in session.messages]
        fixed, _ = apply_all(session)
        out[lean] = (_shape(session.messages), raws, findings, fixed.export().data, held)
    assert out[True][:4] == out[False][:4]
    kept, n = out[False][4]
    assert kept == n > 3000  # every record held
    kept, n = out[True][4]
    assert kept < 10 and n > 3000  # none held once read, but the few asked for again
