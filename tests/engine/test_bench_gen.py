"""The benchmark's synthetic sessions are what they claim to be: the requested size, in the
format histview detects, and each injected fault found as its finding (so the benchmark
times a real check, not an early exit)."""

from __future__ import annotations

from collections import Counter

import pytest

from repair.analysis import analyze
from repair.formats import load_bytes
from repair.plan import apply_all

FAULT_CODE = {
    "drop": "orphan-tool-use",
    "duplicate": "duplicate-tool-result",
    "move": "misplaced-tool-result",
    "re-id": "mismatched-tool-result-id",
}


@pytest.mark.parametrize(
    ("kind", "fmt", "ext"), [("roo", "roo", "json"), ("claude_code", "claude-code", "jsonl")]
)
def test_generated_session_has_its_size_and_exactly_its_faults(bench_gen, kind, fmt, ext):
    data, info = getattr(bench_gen, f"gen_{kind}")(2000, seed=3)
    # the raw history by the API's rules (Claude Code itself would repair most of these)
    session = load_bytes(data, path=f"bench.{ext}", target="anthropic")
    assert session.format == fmt
    assert len(session.messages) == info["messages"] == 2000
    assert sum(info["faults"].values()) == 20  # 1% of the messages

    errors = Counter(f.code for f in analyze(session).findings if f.severity == "error")
    for fault, count in info["faults"].items():
        assert errors[FAULT_CODE[fault]] == count, fault
    fixed, _ = apply_all(session)
    assert [f for f in analyze(fixed).findings if f.severity == "error"] == []


def test_generation_is_deterministic(bench_gen):
    assert bench_gen.gen_roo(500, seed=9)[0] == bench_gen.gen_roo(500, seed=9)[0]
    assert bench_gen.gen_claude_code(500, seed=9)[0] == bench_gen.gen_claude_code(500, seed=9)[0]


def test_adversarial_shapes_hold_one_id_everywhere(bench_gen):
    data, info = bench_gen.gen_same_id(300, seed=3)
    session = load_bytes(data, path="same_id.json")
    assert session.format == "roo" and info["mode"] == "check"
    assert len(session.messages[1].blocks) == len(session.messages[2].blocks) == 300
    assert len({b.tool_id for m in session.messages for b in m.blocks if b.tool_id}) == 1
    assert analyze(session).summary() == {"duplicate-tool-use-id": 299}

    data, info = bench_gen.gen_reused_id(200, seed=3)
    session = load_bytes(data, path="reused_id.json")
    assert info["mode"] == "fix" and len(session.messages) == info["messages"] == 402
    fixed, applied = apply_all(session)
    assert len(applied) == 199 and analyze(fixed).findings == []


@pytest.mark.parametrize("kind", ["anthropic", "openai_chat", "codex"])
def test_other_formats_carry_their_faults(bench_gen, kind):
    """The same turns in each format's shape: detected as that format, the size asked for,
    and a fault injected for every 100 messages, found as an error."""
    ext = dict(bench_gen.OTHERS)[kind]
    data, info = getattr(bench_gen, f"gen_{kind}")(2000, seed=3)
    session = load_bytes(data, path=f"bench.{ext}")
    assert session.format == bench_gen.FORMAT_OF[kind]
    assert sum(m.live for m in session.messages) == info["messages"] == 2000
    assert sum(info["faults"].values()) == 20
    errors = Counter(f.code for f in analyze(session).findings if f.severity == "error")
    assert errors["duplicate-tool-result"] == info["faults"]["duplicate"]
    assert errors["misplaced-tool-result"] == info["faults"]["move"]


def test_opencode_and_gemini_cli_are_their_formats(bench_gen):
    data, info = bench_gen.gen_opencode(2000, seed=3)
    session = load_bytes(data, path="bench.json")
    assert session.format == "opencode" and data.startswith(b'{\n  "info"')
    interrupted = [f for f in analyze(session).findings if f.code == "orphan-tool-use"]
    assert len(interrupted) == info["running"] > 0

    data, info = bench_gen.gen_gemini_cli(2000, seed=3)
    session = load_bytes(data, path="bench.jsonl")
    assert session.format == "gemini-cli"
    # Gemini CLI 0.61 keeps each response twice and sends both (docs/clients.md)
    assert sum(m.live for m in session.messages) == info["messages"]
