"""The gemini-cli writer on random Gemini CLI chats with random faults (doubled, missing,
extra responses, trailing calls, calls without ids, records written twice, a `$set` of all
messages as a resume leaves, info records): loading and writing back unchanged gives the same
bytes; after the default fix the written chat reads back with no error, each call answered
exactly once, every call kept; fixing the written chat again changes nothing."""

from __future__ import annotations

import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repair.analysis import analyze
from repair.formats import load_bytes
from repair.plan import apply_all


def chat(rng: random.Random) -> bytes:
    ts = iter(f"2026-11-23T08:{m:02d}:{s:02d}.000Z" for m in range(60) for s in range(60))
    head = {"sessionId": "s-1", "projectHash": "ab" * 32, "startTime": next(ts), "kind": "main"}
    lines: list[dict] = [head]
    msgs: list[dict] = []
    n = 0

    def put(rec: dict) -> None:
        lines.append(rec)
        msgs.append(rec)

    turns = rng.randint(1, 5)
    for t in range(turns):
        put({"id": f"u{t}", "timestamp": next(ts), "type": "user", "content": [{"text": "go"}]})
        if rng.random() < 0.2:
            put({"id": f"i{t}", "timestamp": next(ts), "type": "info", "content": "note"})
        calls = []
        no_ids = rng.random() < 0.2
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            n += 1
            name = rng.choice(["read_file", "glob", "run_shell_command"])
            cid = None if no_ids else f"{name}__{name}_{n}"
            calls.append((cid, name))
        gid = f"g{t}"
        base = {"id": gid, "timestamp": next(ts), "type": "gemini", "content": "", "thoughts": []}
        if not calls:
            put({**base, "content": "answer"})
            continue
        if rng.random() < 0.5:  # written first without its calls, as Gemini CLI does
            lines.append(dict(base))
        last = t == turns - 1 and rng.random() < 0.3  # a trailing call: never ran
        answered = [c for c in calls if last is False and rng.random() < 0.85]

        def fr(cid, name, text="out"):
            part = {"name": name, "response": {"output": text}}
            return {"functionResponse": {"id": cid, **part} if cid else part}

        tool_calls = []
        for cid, name in calls:
            tc = {"name": name, "args": {"n": n}, "status": "success"}
            if cid:
                tc = {"id": cid, **tc}
            if (cid, name) in answered and rng.random() < 0.7:
                tc["result"] = [fr(cid, name)]
            tool_calls.append(tc)
        put({**base, "toolCalls": tool_calls})
        if last:
            break
        parts = [fr(cid, name) for cid, name in answered if rng.random() < 0.8 or not cid]
        if rng.random() < 0.2:
            parts.append(fr(f"glob__glob_x{t}", "glob", "stray"))
        if parts:
            put({"id": f"r{t}", "timestamp": next(ts), "type": "user", "content": parts})
        put({"id": f"a{t}", "timestamp": next(ts), "type": "gemini", "content": "ok"})
    if rng.random() < 0.3:  # a resume saved all messages back in one $set
        lines.append({"$set": {"messages": list(msgs)}})
        lines.append({"id": "u-after", "timestamp": next(ts), "type": "user", "content": "more"})
    return b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in lines)


def calls_answered_once(session) -> None:
    msgs = [m for m in session.messages if m.live]
    for i, m in enumerate(msgs):
        uses = [b.tool_id for b in m.blocks if b.type == "tool_use"]
        if not uses:
            continue
        nxt = msgs[i + 1] if i + 1 < len(msgs) else None
        got = [b.tool_id for b in nxt.blocks if b.type == "tool_result"] if nxt else []
        assert sorted(got) == sorted(uses), (uses, got)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_random_chats_are_written_back_repaired_and_stay_repaired(seed):
    data = chat(random.Random(seed))
    s = load_bytes(data, path="chat.jsonl")
    assert s.format == "gemini-cli"
    assert s.export_bytes() == data
    calls = sorted(
        b.tool_id for m in s.messages if m.live for b in m.blocks if b.type == "tool_use"
    )
    # (an id Gemini CLI would make up for a call without one is written down by a fix)

    fixed, _ = apply_all(s)
    out = fixed.export_bytes()
    again = load_bytes(out, path="chat.jsonl")
    errors = [(f.code, f.detail) for f in analyze(again).findings if f.severity == "error"]
    assert errors == []
    calls_answered_once(again)
    kept = sorted(
        b.tool_id for m in again.messages if m.live for b in m.blocks if b.type == "tool_use"
    )
    assert kept == calls

    refixed, applied = apply_all(again)
    assert applied == [] and refixed.export_bytes() == out
