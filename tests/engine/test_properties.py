"""Engine invariants on random valid sessions corrupted at random (issue 2 point 6).

After the default plan: no error for the target; fixing again is a no-op; every original
block is in the output or in the report; thinking blocks are the same objects; messages no
fix touched are the very same objects as in the input.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repair.analysis import analyze
from repair.model import Message, block_from_anthropic
from repair.plan import apply_all
from repair.report import edit_entries
from tests.engine.engine_factory import S


def build_valid(rng: random.Random, turns: int) -> list[Message]:
    msgs: list[Message] = []
    t = 1_700_000_000.0
    n = 0

    def stamp() -> dict:
        nonlocal t
        t += rng.uniform(0.5, 30)
        return {"timestamp": t}

    def msg(role, items):
        return Message(
            role=role, blocks=tuple(block_from_anthropic(i) for i in items), meta=stamp()
        )

    first = "start the task" if rng.random() < 0.5 else [{"type": "text", "text": "start"}]
    msgs.append(
        Message(
            role="user",
            blocks=(block_from_anthropic(first if isinstance(first, str) else first[0]),),
            meta=stamp(),
        )
    )
    for _ in range(turns):
        items: list = []
        if rng.random() < 0.3:
            items.append({"type": "thinking", "thinking": "hmm", "signature": "sig"})
        if rng.random() < 0.7:
            items.append(
                {"type": "text", "text": rng.choice(["Let me check.", "Reading files", "ok"])}
            )
        calls = []
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            n += 1
            cid = f"toolu_{n:03d}"
            calls.append(cid)
            items.append(
                {
                    "type": "tool_use",
                    "id": cid,
                    "name": rng.choice(["read_file", "Bash", "new_task"]),
                    "input": {"n": n},
                }
            )
        if not items:
            items.append({"type": "text", "text": "thinking aloud"})
        msgs.append(msg("assistant", items))
        if calls:
            res = []
            for cid in calls:
                content = rng.choice(
                    [
                        "output",
                        [{"type": "text", "text": "lines"}],
                        [
                            {"type": "text", "text": "img"},
                            {
                                "type": "image",
                                "source": {
                                    "type": "base64",
                                    "media_type": "image/png",
                                    "data": "AAAA",
                                },
                            },
                        ],
                    ]
                )
                r = {"type": "tool_result", "tool_use_id": cid, "content": content}
                if rng.random() < 0.2:
                    r["is_error"] = True
                res.append(r)
            if rng.random() < 0.4:
                res.append({"type": "text", "text": "<environment_details>x</environment_details>"})
            msgs.append(msg("user", res))
        else:
            msgs.append(msg("user", [{"type": "text", "text": "go on"}]))
    msgs.append(msg("assistant", [{"type": "text", "text": "done"}]))
    return msgs


def _users(msgs):
    return [i for i, m in enumerate(msgs) if m.role == "user"]


def corrupt(rng: random.Random, msgs: list[Message], k: int) -> list[Message]:
    msgs = list(msgs)
    for _ in range(k):
        kind = rng.choice(
            [
                "drop",
                "dup",
                "move",
                "split",
                "reid",
                "reorder",
                "empty",
                "restamp",
                "reuse",
                "dropuse",
                "noid",
                "numid",
                "emptyid",
                "wrongrole",
            ]
        )
        results = [
            (i, j)
            for i, m in enumerate(msgs)
            for j, b in enumerate(m.blocks)
            if b.type == "tool_result"
        ]
        uses = [
            (i, j)
            for i, m in enumerate(msgs)
            for j, b in enumerate(m.blocks)
            if b.type == "tool_use"
        ]
        if kind == "drop" and results:
            i, j = rng.choice(results)
            msgs[i] = msgs[i].with_blocks(msgs[i].blocks[:j] + msgs[i].blocks[j + 1 :])
        elif kind == "dup" and results:
            i, j = rng.choice(results)
            b = msgs[i].blocks[j]
            copy = block_from_anthropic(dict(b.data))
            target = rng.choice([u for u in _users(msgs) if u >= i] or [i])
            msgs[target] = msgs[target].with_blocks((copy, *msgs[target].blocks))
        elif kind in ("move", "split") and results:
            i, j = rng.choice(results)
            b = msgs[i].blocks[j]
            msgs[i] = msgs[i].with_blocks(msgs[i].blocks[:j] + msgs[i].blocks[j + 1 :])
            if kind == "split":
                msgs.insert(i + 1, Message(role="user", blocks=(b,), meta=dict(msgs[i].meta)))
            else:
                target = rng.choice(_users(msgs))
                msgs[target] = msgs[target].with_blocks((*msgs[target].blocks, b))
        elif kind == "reid" and results:
            i, j = rng.choice(results)
            b = msgs[i].blocks[j]
            new = dict(b.data)
            new["tool_use_id"] = f"wrong_{rng.randrange(1000)}"
            blocks = list(msgs[i].blocks)
            blocks[j] = block_from_anthropic(new)
            msgs[i] = msgs[i].with_blocks(blocks)
        elif kind == "reorder":
            cands = [
                i
                for i, m in enumerate(msgs)
                if m.role == "user" and any(b.type == "tool_result" for b in m.blocks)
            ]
            if cands:
                i = rng.choice(cands)
                msgs[i] = msgs[i].with_blocks(
                    (block_from_anthropic({"type": "text", "text": "note"}), *msgs[i].blocks)
                )
        elif kind == "empty":
            i = rng.randrange(1, len(msgs))
            if rng.random() < 0.5:
                msgs.insert(i, Message(role=rng.choice(["user", "assistant"]), blocks=()))
            else:
                msgs[i] = msgs[i].with_blocks(
                    (*msgs[i].blocks, block_from_anthropic({"type": "text", "text": "  "}))
                )
        elif kind == "restamp":
            i = rng.randrange(len(msgs))
            msgs[i].meta = {"timestamp": 1_600_000_000.0}
        elif kind == "reuse" and len(uses) >= 2:
            (i1, j1), (i2, j2) = sorted(rng.sample(uses, 2))
            if i1 != i2:
                old = msgs[i1].blocks[j1].tool_id
                new = dict(msgs[i2].blocks[j2].data)
                new["id"] = old
                blocks = list(msgs[i2].blocks)
                blocks[j2] = block_from_anthropic(new)
                msgs[i2] = msgs[i2].with_blocks(blocks)
        elif kind == "dropuse" and uses:
            i, j = rng.choice(uses)
            msgs[i] = msgs[i].with_blocks(msgs[i].blocks[:j] + msgs[i].blocks[j + 1 :])
        elif kind in ("noid", "numid", "emptyid") and (uses or results):
            i, j = rng.choice(uses + results)
            new = dict(msgs[i].blocks[j].data)
            key = "id" if new["type"] == "tool_use" else "tool_use_id"
            if kind == "noid":
                new.pop(key, None)
            else:
                new[key] = rng.randrange(100) if kind == "numid" else ""
            blocks = list(msgs[i].blocks)
            blocks[j] = block_from_anthropic(new)
            msgs[i] = msgs[i].with_blocks(blocks)
        elif kind == "wrongrole" and (uses or results):
            # a result into an assistant message, or a call into a user message
            i, j = rng.choice(uses + results)
            b = msgs[i].blocks[j]
            msgs[i] = msgs[i].with_blocks(msgs[i].blocks[:j] + msgs[i].blocks[j + 1 :])
            role = "user" if b.type == "tool_use" else "assistant"
            target = rng.choice([k for k, m in enumerate(msgs) if m.role == role] or [i])
            blocks = list(msgs[target].blocks)
            blocks.insert(rng.randrange(len(blocks) + 1), b)
            msgs[target] = msgs[target].with_blocks(blocks)
    return msgs


def _check_invariants(msgs: list[Message], target: str) -> None:
    session = S(*msgs, target=target)
    fixed, applied = apply_all(session)

    errors = [f for f in analyze(fixed).findings if f.severity == "error"]
    assert errors == [], [(f.code, f.message_index, f.detail) for f in errors]

    again, more = apply_all(fixed)
    assert more == [] and again.messages == fixed.messages

    out_bids = {b.bid for m in fixed.messages for b in m.blocks}
    removed_bids = {bid for fix in applied for e in fix.edits for bid in e.removed_bids}
    reported = [e for fix in applied for e in edit_entries(fix) if e["action"] == "drop_block"]
    assert all("removed" in e for e in reported)
    for m in msgs:
        for b in m.blocks:
            assert b.bid in out_bids or b.bid in removed_bids, ("lost", b.type, b.tool_id)

    original_thinking = {b.bid: b for m in msgs for b in m.blocks if b.type == "thinking"}
    for m in fixed.messages:
        for b in m.blocks:
            if b.bid in original_thinking:
                assert b is original_thinking[b.bid]

    touched = set().union(*(f.touches for f in applied)) if applied else set()
    by_uid = {m.uid: m for m in msgs}
    for m in fixed.messages:
        if m.uid in by_uid and m.uid not in touched:
            assert m is by_uid[m.uid]


SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), turns=st.integers(1, 8), k=st.integers(0, 4))
def test_default_plan_repairs_for_anthropic(seed, turns, k):
    rng = random.Random(seed)
    _check_invariants(corrupt(rng, build_valid(rng, turns), k), "anthropic")


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), turns=st.integers(1, 8), k=st.integers(0, 4))
def test_default_plan_repairs_for_bedrock(seed, turns, k):
    rng = random.Random(seed)
    _check_invariants(corrupt(rng, build_valid(rng, turns), k), "bedrock")


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), turns=st.integers(1, 8))
def test_valid_sessions_have_no_error_and_no_fix(seed, turns):
    rng = random.Random(seed)
    session = S(*build_valid(rng, turns))
    assert [f for f in analyze(session).findings if f.severity != "info"] == []
    _, applied = apply_all(session)
    assert applied == []


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), turns=st.integers(1, 8), k=st.integers(0, 4))
def test_default_plan_repairs_for_gemini(seed, turns, k):
    rng = random.Random(seed)
    _check_invariants(corrupt(rng, build_valid(rng, turns), k), "gemini")
