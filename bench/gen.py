"""Write large synthetic sessions for the benchmark (bench/run.py).

    python bench/gen.py                      # roo 1k/10k/100k + claude-code 100k into bench/out/
    python bench/gen.py --sizes 1000 --claude-code 0
    python bench/gen.py --sizes "" --same-id 0 --reused-id 0 --claude-code 300000,500000
                                             # claude-code 300k (630 MB) and 500k (1.05 GB)

Roo Code files (`roo_<n>.json`) are what Roo writes: a compact JSON list, no trailing
newline, `ts` in epoch ms, about 1 KB per message (tool results with `<environment_details>`,
parallel calls on about a third of the turns). The Claude Code file (`claude_code_<n>.jsonl`)
has one record per content block in Claude Code's envelope, parallel results written in
completion order with `parentUuid` pointing at their tool_use record (the shape Claude Code's
resume repairs), and `n` API messages.

Faults: about 1% of the messages carry one, each one of: a result dropped, a result
duplicated into the next turn, a result moved to the next turn, a result with a wrong id.
Everything is seeded, so a size always gives the same file. `manifest.json` lists what
was written and the faults injected.

Two adversarial shapes (Roo files, issue 7 point 12) look for quadratic paths rather than
typical cost: `same_id_<n>.json`, one assistant message with n tool_use blocks that all share
one id and the next user message with their n results (timed with `check`), and
`reused_id_<n>.json`, n turns whose call and result all reuse one id (timed with `fix`:
n - 1 renames).
"""

from __future__ import annotations

import argparse
import json
import random
import uuid
from datetime import UTC, datetime
from pathlib import Path

import orjson

FAULTS = ("drop", "duplicate", "move", "re-id")
FAULT_RATE = 0.01  # per message
OUT = Path(__file__).resolve().parent / "out"

WORDS = (
    "the invoice total route handler returns a list of rows from the database and maps each "
    "one to a DTO with the customer id issued date due date status and amount in cents while "
    "the test suite checks that the CSV export quotes commas and that filters on status and "
    "date range are applied before the rows are streamed to the client"
).split()
TOOLS = ("read_file", "apply_diff", "execute_command", "search_files", "list_files")
B62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


class Words:
    """Cheap pseudo-text: slices of a long pre-built string of words and newlines."""

    def __init__(self, rng: random.Random) -> None:
        parts = []
        for _ in range(20000):
            parts.append(rng.choice(WORDS))
            if rng.random() < 0.08:
                parts.append('\n  const x = "y";\n')
        self.text = " ".join(parts)
        self.rng = rng

    def __call__(self, n: int) -> str:
        start = self.rng.randrange(0, len(self.text) - n - 1)
        return self.text[start : start + n]


def tool_id(rng: random.Random) -> str:
    return "toolu_01" + "".join(rng.choices(B62, k=22))


def tool_input(name: str, words: Words) -> dict:
    path = f"src/{words(12).strip().replace(' ', '_') or 'a'}.ts"
    if name == "apply_diff":
        return {
            "path": path,
            "diff": f"<<<<<<< SEARCH\n{words(60)}\n=======\n{words(60)}\n>>>>>>> REPLACE",
        }
    if name == "execute_command":
        return {"command": "pnpm test -- " + words(20).strip(), "cwd": None}
    if name == "search_files":
        return {"path": "src", "regex": words(15).strip(), "file_pattern": "*.ts"}
    return {"path": path}


def plan_faults(turns: int, n_messages: int, rng: random.Random) -> dict[int, str]:
    """Which turns get a fault (never two neighbours, never the last two turns)."""
    want = max(1, round(n_messages * FAULT_RATE)) if n_messages >= 100 else 0
    chosen: dict[int, str] = {}
    candidates = list(range(1, max(1, turns - 2)))
    rng.shuffle(candidates)
    for t in candidates:
        if len(chosen) >= want:
            break
        if t - 1 in chosen or t + 1 in chosen:
            continue
        chosen[t] = FAULTS[len(chosen) % len(FAULTS)]
    return chosen


# --------------------------------------------------------------------------------------
# Roo Code


def roo_turns(n_messages: int, rng: random.Random, words: Words):
    """(assistant content, results) per turn; results are (tool_use_id, text)."""
    turns = []
    for _ in range((n_messages - 1) // 2):
        k = 1 if rng.random() < 0.65 else rng.choice((2, 3))
        uses = []
        for _ in range(k):
            name = rng.choice(TOOLS)
            uses.append(
                {
                    "type": "tool_use",
                    "id": tool_id(rng),
                    "name": name,
                    "input": tool_input(name, words),
                }
            )
        assistant = [{"type": "text", "text": words(rng.randint(120, 260))}, *uses]
        per = max(80, 900 // k)
        results = [(u["id"], words(rng.randint(per // 2, per))) for u in uses]
        turns.append((assistant, results))
    return turns


def apply_faults(turns, faults: dict[int, str], rng: random.Random) -> list[list[tuple[str, str]]]:
    """The results each turn's user message carries once the faults are applied."""
    carried = [list(results) for _, results in turns]
    for t, kind in sorted(faults.items()):
        results = carried[t]
        i = rng.randrange(len(results))
        rid, text = results[i]
        if kind == "drop":
            del results[i]
        elif kind == "duplicate":
            carried[t + 1].append((rid, text))
        elif kind == "move":
            del results[i]
            carried[t + 1].append((rid, text))
        elif kind == "re-id":
            results[i] = (tool_id(rng), text)
    return carried


def env_details(ts: int) -> dict:
    when = datetime.fromtimestamp(ts / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    return {
        "type": "text",
        "text": "<environment_details>\n# VSCode Visible Files\nsrc/routes/invoices.ts\n\n"
        "# Current Time\nCurrent time in ISO 8601 UTC format: " + when + "\nUser time zone: "
        "Europe/Berlin, UTC+1:00\n\n# Current Mode\n<slug>code</slug>\n<name>Code</name>\n"
        "<model>claude-sonnet-4-5</model>\n</environment_details>",
    }


def gen_roo(n_messages: int, seed: int) -> tuple[bytes, dict]:
    rng = random.Random(seed)
    words = Words(rng)
    turns = roo_turns(n_messages, rng, words)
    faults = plan_faults(len(turns), n_messages, rng)
    carried = apply_faults(turns, faults, rng)
    ts = 1767720000000
    doc = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<user_message>\n" + words(300) + "\n</user_message>"},
                env_details(ts),
            ],
            "ts": ts,
        }
    ]
    for (assistant, _), results in zip(turns, carried, strict=True):
        ts += rng.randint(2000, 15000)
        doc.append(
            {
                "role": "assistant",
                "content": assistant,
                "id": "msg_01" + "".join(rng.choices(B62, k=22)),
                "ts": ts,
            }
        )
        ts += rng.randint(300, 3000)
        content = [
            {"type": "tool_result", "tool_use_id": rid, "content": text} for rid, text in results
        ]
        content.append(env_details(ts))
        doc.append({"role": "user", "content": content, "ts": ts})
    if len(doc) < n_messages:  # an even size ends with the model's last answer
        ts += rng.randint(2000, 15000)
        doc.append(
            {"role": "assistant", "content": [{"type": "text", "text": words(400)}], "ts": ts}
        )
    data = orjson.dumps(doc)
    return data, {"messages": len(doc), "faults": _count(faults)}


def _count(faults: dict[int, str]) -> dict[str, int]:
    out = dict.fromkeys(FAULTS, 0)
    for kind in faults.values():
        out[kind] += 1
    return out


# --------------------------------------------------------------------------------------
# Claude Code


class CCWriter:
    """Appends records the way Claude Code's insertMessageChain does: every record's
    `parentUuid` is the previous record, except a tool result, whose parent is its
    tool_use record (`sourceToolAssistantUUID`); the cursor moves on every record."""

    def __init__(self, rng: random.Random, session_id: str) -> None:
        self.rng = rng
        self.lines: list[bytes] = []
        self.cursor: str | None = None
        self.t = datetime(2026, 4, 18, 9, 0, 0, tzinfo=UTC).timestamp()
        self.session_id = session_id
        self.env = {
            "userType": "external",
            "entrypoint": "cli",
            "cwd": "/home/dana/src/invoicing",
            "sessionId": session_id,
            "version": "2.1.114",
            "gitBranch": "main",
        }

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def stamp(self, lo: float, hi: float) -> str:
        self.t += self.rng.uniform(lo, hi)
        return datetime.fromtimestamp(self.t, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"

    def write(self, rec: dict) -> None:
        self.lines.append(orjson.dumps(rec))

    def prompt(self, text: str) -> None:
        uid = self.uuid()
        self.write(
            {
                "parentUuid": self.cursor,
                "isSidechain": False,
                "promptId": self.uuid(),
                "type": "user",
                "message": {"role": "user", "content": text},
                "uuid": uid,
                "timestamp": self.stamp(5, 60),
                "permissionMode": "acceptEdits",
                **self.env,
            }
        )
        self.cursor = uid

    def assistant(self, blocks: list[dict], stop: str) -> list[str]:
        """One API message, one record per block; returns the records' uuids."""
        mid = "msg_01" + "".join(self.rng.choices(B62, k=22))
        req = "req_011C" + "".join(self.rng.choices(B62, k=20))
        out_tokens = self.rng.randint(50, 3000)
        uids = []
        for block in blocks:
            uid = self.uuid()
            self.write(
                {
                    "parentUuid": self.cursor,
                    "isSidechain": False,
                    "message": {
                        "model": "claude-opus-4-7",
                        "id": mid,
                        "type": "message",
                        "role": "assistant",
                        "content": [block],
                        "stop_reason": stop,
                        "stop_sequence": None,
                        "usage": {
                            "input_tokens": 6,
                            "cache_creation_input_tokens": self.rng.randint(0, 3000),
                            "cache_read_input_tokens": self.rng.randint(10000, 90000),
                            "output_tokens": out_tokens,
                            "service_tier": "standard",
                        },
                    },
                    "requestId": req,
                    "type": "assistant",
                    "uuid": uid,
                    "timestamp": self.stamp(0.2, 2.0),
                    **self.env,
                }
            )
            self.cursor = uid
            uids.append(uid)
        return uids

    def result(self, parent: str, tool_use_id: str, text: str, *, on_chain: bool = False) -> None:
        uid = self.uuid()
        self.write(
            {
                "parentUuid": self.cursor if on_chain else parent,
                "isSidechain": False,
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "tool_use_id": tool_use_id,
                            "type": "tool_result",
                            "content": text,
                            "is_error": False,
                        }
                    ],
                },
                "uuid": uid,
                "timestamp": self.stamp(0.05, 4.0),
                "toolUseResult": {
                    "stdout": text[:200],
                    "stderr": "",
                    "interrupted": False,
                    "isImage": False,
                },
                "sourceToolAssistantUUID": parent,
                **self.env,
            }
        )
        self.cursor = uid


def gen_claude_code(n_messages: int, seed: int) -> tuple[bytes, dict]:
    rng = random.Random(seed)
    words = Words(rng)
    session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    w = CCWriter(rng, session_id)
    w.write({"type": "permission-mode", "permissionMode": "acceptEdits", "sessionId": session_id})
    w.prompt(words(300))
    messages = 1
    faults = plan_faults(n_messages // 2, n_messages, rng)
    late: list[tuple[str, str, str]] = []  # results moved to the next turn
    applied: dict[int, str] = {}
    t = -1
    while messages < n_messages - 1:
        t += 1
        if t % 25 == 24 and messages + 2 < n_messages:  # the model ends its turn, the user writes
            w.assistant([{"type": "text", "text": words(rng.randint(200, 500))}], "end_turn")
            w.prompt(words(rng.randint(80, 300)))
            messages += 2
            continue
        k = 1 if rng.random() < 0.65 else rng.choice((2, 3))
        blocks: list[dict] = []
        if rng.random() < 0.3:
            blocks.append(
                {
                    "type": "thinking",
                    "thinking": "",
                    "signature": "Eq" + "".join(rng.choices(B62, k=300)),
                }
            )
        blocks.append({"type": "text", "text": words(rng.randint(80, 200))})
        uses = []
        for _ in range(k):
            name = rng.choice(TOOLS)
            uses.append(
                {
                    "type": "tool_use",
                    "id": tool_id(rng),
                    "name": name,
                    "input": tool_input(name, words),
                }
            )
        uids = w.assistant(blocks + uses, "tool_use")
        use_uids = uids[len(blocks) :]
        messages += 1
        written = len(late)
        for parent, tid, text in late:
            w.result(parent, tid, text, on_chain=True)
        late = []
        order = list(range(k))
        rng.shuffle(order)  # completion order
        kind = faults.get(t)
        hit = rng.choice(order) if kind else None
        if kind:
            applied[t] = kind
        for i in order:
            text = words(rng.randint(300 // k, 800 // k))
            if i == hit and kind == "drop":
                continue
            if i == hit and kind == "move":
                late.append((use_uids[i], uses[i]["id"], text))
                continue
            tid = tool_id(rng) if i == hit and kind == "re-id" else uses[i]["id"]
            w.result(use_uids[i], tid, text)
            written += 1
            if i == hit and kind == "duplicate":
                late.append((use_uids[i], tid, text))
        if written:
            messages += 1
    if messages < n_messages:
        w.assistant([{"type": "text", "text": words(300)}], "end_turn")
        messages += 1
    data = b"\n".join(w.lines) + b"\n"
    return data, {"messages": messages, "records": len(w.lines), "faults": _count(applied)}


# --------------------------------------------------------------------------------------
# Adversarial shapes: one id everywhere


def _same_id_use(k: int, tid: str) -> dict:
    return {"type": "tool_use", "id": tid, "name": "read_file", "input": {"path": f"src/f{k}.ts"}}


def _same_id_result(k: int, tid: str) -> dict:
    return {"type": "tool_result", "tool_use_id": tid, "content": f"contents of src/f{k}.ts"}


def gen_same_id(n_uses: int, seed: int) -> tuple[bytes, dict]:
    """One assistant message with `n_uses` calls sharing one id, then their results."""
    tid = tool_id(random.Random(seed))
    ts = 1767720000000
    doc = [
        {"role": "user", "content": [{"type": "text", "text": "read them all"}], "ts": ts},
        {
            "role": "assistant",
            "content": [_same_id_use(k, tid) for k in range(n_uses)],
            "ts": ts + 5000,
        },
        {
            "role": "user",
            "content": [_same_id_result(k, tid) for k in range(n_uses)],
            "ts": ts + 9000,
        },
        {"role": "assistant", "content": [{"type": "text", "text": "done"}], "ts": ts + 12000},
    ]
    return orjson.dumps(doc), {"messages": len(doc), "uses": n_uses, "mode": "check"}


def gen_reused_id(n_pairs: int, seed: int) -> tuple[bytes, dict]:
    """`n_pairs` turns, each one call and its result, all under one id."""
    tid = tool_id(random.Random(seed))
    ts = 1767720000000
    doc: list[dict] = [{"role": "user", "content": [{"type": "text", "text": "go"}], "ts": ts}]
    for k in range(n_pairs):
        ts += 4000
        doc.append({"role": "assistant", "content": [_same_id_use(k, tid)], "ts": ts})
        doc.append({"role": "user", "content": [_same_id_result(k, tid)], "ts": ts + 1000})
    doc.append(
        {"role": "assistant", "content": [{"type": "text", "text": "done"}], "ts": ts + 2000}
    )
    return orjson.dumps(doc), {"messages": len(doc), "pairs": n_pairs, "mode": "fix"}


# --------------------------------------------------------------------------------------
# Other formats: the same turns (text, calls, results, faults) in each format's own shape.
# `n` counts the messages of the normal form (an assistant turn and the user message of its
# results), as for Claude Code; a format that writes one entry per result has more entries.


def _turns(n_messages: int, seed: int):
    rng = random.Random(seed)
    words = Words(rng)
    turns = roo_turns(n_messages, rng, words)
    faults = plan_faults(len(turns), n_messages, rng)
    return rng, words, turns, faults, apply_faults(turns, faults, rng)


def gen_anthropic(n_messages: int, seed: int) -> tuple[bytes, dict]:
    """A plain Anthropic messages list (what an SDK agent keeps): no Roo keys."""
    rng, words, turns, faults, carried = _turns(n_messages, seed)
    doc: list[dict] = [{"role": "user", "content": words(300)}]
    for (assistant, _), results in zip(turns, carried, strict=True):
        doc.append({"role": "assistant", "content": assistant})
        content: list[dict] = [
            {"type": "tool_result", "tool_use_id": rid, "content": text} for rid, text in results
        ]
        if not content:
            content.append({"type": "text", "text": "go on"})
        doc.append({"role": "user", "content": content})
    if len(doc) < n_messages:
        doc.append({"role": "assistant", "content": [{"type": "text", "text": words(400)}]})
    return orjson.dumps(doc), {"messages": len(doc), "faults": _count(faults)}


def _call_id(use: dict) -> str:
    return "call_" + use["id"][8:]


def gen_openai_chat(n_messages: int, seed: int) -> tuple[bytes, dict]:
    """A Chat Completions request body: assistant `tool_calls`, one `tool` message per
    result (so the file has more entries than the normal form has messages)."""
    rng, words, turns, faults, carried = _turns(n_messages, seed)
    msgs: list[dict] = [
        {"role": "system", "content": "You are a coding agent. Use the tools."},
        {"role": "user", "content": words(300)},
    ]
    count = 1
    for (assistant, _), results in zip(turns, carried, strict=True):
        calls = [
            {
                "id": _call_id(u),
                "type": "function",
                "function": {"name": u["name"], "arguments": orjson.dumps(u["input"]).decode()},
            }
            for u in assistant[1:]
        ]
        msgs.append({"role": "assistant", "content": assistant[0]["text"], "tool_calls": calls})
        if results:
            for rid, text in results:
                msgs.append({"role": "tool", "tool_call_id": "call_" + rid[8:], "content": text})
        else:
            msgs.append({"role": "user", "content": "go on"})
        count += 2
    if count < n_messages:
        msgs.append({"role": "assistant", "content": words(400)})
        count += 1
    doc = {"model": "gpt-4.1", "messages": msgs, "tools": [], "stream": False}
    return orjson.dumps(doc), {"messages": count, "entries": len(msgs), "faults": _count(faults)}


def _stamp(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def gen_codex(n_messages: int, seed: int) -> tuple[bytes, dict]:
    """A Codex rollout: `session_meta`, then per turn a `turn_context`, a reasoning item,
    the assistant message, its `function_call`s, their `function_call_output`s and a
    `token_count` event, as Codex 0.5x writes them."""
    rng, words, turns, faults, carried = _turns(n_messages, seed)
    t = datetime(2025, 11, 17, 21, 30, 0, tzinfo=UTC).timestamp()
    sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    lines: list[bytes] = []

    def rec(kind: str, payload: dict) -> None:
        lines.append(orjson.dumps({"timestamp": _stamp(t), "type": kind, "payload": payload}))

    rec(
        "session_meta",
        {
            "id": sid,
            "timestamp": _stamp(t),
            "cwd": "/home/dana/src/invoicing",
            "originator": "codex_cli_rs",
            "cli_version": "0.58.0",
            "instructions": None,
            "source": "cli",
            "model_provider": "openai",
        },
    )
    text = [{"type": "input_text", "text": words(300)}]
    rec("response_item", {"type": "message", "role": "user", "content": text})
    count = 1
    for (assistant, _), results in zip(turns, carried, strict=True):
        t += rng.uniform(1, 15)
        rec("turn_context", {"cwd": "/home/dana/src/invoicing", "model": "gpt-5.1-codex"})
        rec(
            "response_item",
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": "**" + words(30) + "**"}],
                "content": None,
                "encrypted_content": "gAAAAA" + "".join(rng.choices(B62, k=400)),
            },
        )
        rec(
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": assistant[0]["text"]}],
            },
        )
        for u in assistant[1:]:
            args = orjson.dumps(u["input"]).decode()
            rec(
                "response_item",
                {
                    "type": "function_call",
                    "name": u["name"],
                    "arguments": args,
                    "call_id": _call_id(u),
                },
            )
        t += rng.uniform(0.3, 3)
        for rid, out in results:
            rec(
                "response_item",
                {"type": "function_call_output", "call_id": "call_" + rid[8:], "output": out},
            )
        if not results:
            text = [{"type": "input_text", "text": "go on"}]
            rec("response_item", {"type": "message", "role": "user", "content": text})
        rec("event_msg", {"type": "token_count", "info": None, "rate_limits": None})
        count += 2
    if count < n_messages:
        out_text = [{"type": "output_text", "text": words(400)}]
        rec("response_item", {"type": "message", "role": "assistant", "content": out_text})
        count += 1
    data = b"\n".join(lines) + b"\n"
    return data, {"messages": count, "records": len(lines), "faults": _count(faults)}


def gen_opencode(n_messages: int, seed: int) -> tuple[bytes, dict]:
    """An `opencode export`: indented by 2, one assistant message per turn holding its
    text and its tool parts (each part carries its call and its result), each followed by
    the next user prompt. About 1% of the tool parts are left `running` (interrupted)."""
    rng, words, turns, _, _ = _turns(n_messages, seed)
    sid = "ses_" + "".join(rng.choices(B62, k=26))
    created = 1781002810000
    seq = iter(range(1, 10**9))

    def oid(prefix: str) -> str:
        return f"{prefix}_{created:012x}{next(seq):08d}" + "".join(rng.choices(B62, k=8))

    def user(text: str) -> dict:
        mid = oid("msg")
        info = {
            "id": mid,
            "sessionID": sid,
            "role": "user",
            "time": {"created": created},
            "agent": "build",
            "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"},
        }
        part = {"id": oid("prt"), "sessionID": sid, "messageID": mid, "type": "text", "text": text}
        return {"info": info, "parts": [part]}

    messages = [user(words(300))]
    count = 1
    running = 0
    for assistant, results in turns:
        created += rng.randint(2000, 15000)
        mid = oid("msg")
        parent = messages[-1]["info"]["id"]
        parts: list[dict] = [
            {"id": oid("prt"), "sessionID": sid, "messageID": mid, "type": "step-start"},
            {
                "id": oid("prt"),
                "sessionID": sid,
                "messageID": mid,
                "type": "text",
                "text": assistant[0]["text"],
                "time": {"start": created, "end": created + 900},
            },
        ]
        for u, (_, out) in zip(assistant[1:], results, strict=True):
            state: dict = {"status": "completed", "input": u["input"], "output": out}
            if rng.random() < 0.005:
                state = {"status": "running", "input": u["input"], "time": {"start": created}}
                running += 1
            else:
                state.update(
                    title=u["name"], metadata={}, time={"start": created, "end": created + 400}
                )
            parts.append(
                {
                    "id": oid("prt"),
                    "sessionID": sid,
                    "messageID": mid,
                    "type": "tool",
                    "callID": _call_id(u),
                    "tool": u["name"],
                    "state": state,
                }
            )
        parts.append(
            {
                "id": oid("prt"),
                "sessionID": sid,
                "messageID": mid,
                "type": "step-finish",
                "reason": "tool-calls",
                "cost": 0,
                "tokens": {"input": 6, "output": 90},
            }
        )
        info = {
            "id": mid,
            "sessionID": sid,
            "role": "assistant",
            "time": {"created": created, "completed": created + 5000},
            "parentID": parent,
            "modelID": "claude-sonnet-4-5",
            "providerID": "anthropic",
            "mode": "build",
            "agent": "build",
            "cost": 0.0,
            "tokens": {"input": 14210, "output": 96, "reasoning": 0},
            "finish": "tool-calls",
        }
        messages.append({"info": info, "parts": parts})
        count += 2  # its step, then the user message of its results
    doc = {
        "info": {
            "id": sid,
            "slug": "brave-harbor",
            "directory": "/home/dana/src/invoicing",
            "title": "Invoices",
            "version": "1.15.7",
            "time": {"created": 1781002810000, "updated": created},
        },
        "messages": messages,
    }
    data = orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
    return data, {"messages": count, "entries": len(messages), "running": running}


def gen_gemini_cli(n_messages: int, seed: int) -> tuple[bytes, dict]:
    """A Gemini CLI 0.61 chat: a header, then per turn the model record written twice
    (first bare, then with its `toolCalls` and their results), the user record of the
    responses, and `$set` updates of `lastUpdated`, as Gemini CLI writes them."""
    rng, words, turns, _, _ = _turns(n_messages, seed)
    t = datetime(2026, 11, 23, 8, 11, 42, tzinfo=UTC).timestamp()
    sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    lines: list[bytes] = []

    def uid() -> str:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))

    def write(obj: dict) -> None:
        lines.append(orjson.dumps(obj))

    def touch() -> None:
        write({"$set": {"lastUpdated": _stamp(t)}})

    write(
        {
            "sessionId": sid,
            "projectHash": "51135692b8b84783ba6daff76c6a0e3e651770b9ecab0ef8a71df8d0f1788c56",
            "startTime": _stamp(t),
            "lastUpdated": _stamp(t),
            "kind": "main",
        }
    )
    write({"id": uid(), "timestamp": _stamp(t), "type": "user", "content": [{"text": words(300)}]})
    touch()
    count = 1
    tokens = {"input": 10, "output": 1, "cached": 0, "thoughts": 0, "tool": 0, "total": 11}
    for assistant, results in turns:
        t += rng.uniform(1, 15)
        rec = {
            "id": uid(),
            "timestamp": _stamp(t),
            "type": "gemini",
            "content": assistant[0]["text"],
            "thoughts": [],
            "tokens": tokens,
            "model": "gemini-2.5-pro",
        }
        write(rec)
        touch()
        ms = int(t * 1000)
        responses, calls = [], []
        for k, (u, (_, out)) in enumerate(zip(assistant[1:], results, strict=True)):
            cid = f"{u['name']}__{u['name']}_{ms}_{k}"
            resp = {"functionResponse": {"id": cid, "name": u["name"], "response": {"output": out}}}
            responses.append(resp)
            calls.append(
                {
                    "id": cid,
                    "name": u["name"],
                    "args": u["input"],
                    "result": [resp],
                    "status": "success",
                    "timestamp": _stamp(t + 0.01),
                    "resultDisplay": "",
                    "displayName": u["name"],
                    "renderOutputAsMarkdown": True,
                }
            )
        write({**rec, "toolCalls": calls})
        t += rng.uniform(0.3, 3)
        write({"id": uid(), "timestamp": _stamp(t), "type": "user", "content": responses})
        touch()
        count += 2
    data = b"\n".join(lines) + b"\n"
    return data, {"messages": count, "records": len(lines)}


# --------------------------------------------------------------------------------------


OTHERS = (
    ("anthropic", "json"),
    ("openai_chat", "json"),
    ("codex", "jsonl"),
    ("opencode", "json"),
    ("gemini_cli", "jsonl"),
)
# The adapter each file is for (bench/run.py checks that detection picks it).
FORMAT_OF = {
    "anthropic": "anthropic",
    "openai_chat": "openai-chat",
    "codex": "codex",
    "opencode": "opencode",
    "gemini_cli": "gemini-cli",
}


def label(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--sizes", default="1000,10000,100000", help="Roo sizes, in messages")
    ap.add_argument(
        "--claude-code",
        default="100000",
        help="messages, comma-separated for several files (500000: about 1 GB); 0 to skip",
    )
    ap.add_argument("--same-id", type=int, default=100000, help="calls sharing one id; 0 to skip")
    ap.add_argument("--reused-id", type=int, default=50000, help="pairs reusing one id; 0 to skip")
    ap.add_argument(
        "--others",
        type=int,
        default=100000,
        help="messages of each other format (Anthropic list, OpenAI chat, Codex, opencode,"
        " Gemini CLI); 0 to skip",
    )
    ap.add_argument("--only", help="comma-separated kinds to write (e.g. codex,opencode)")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    manifest_path = args.out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    jobs = [("roo", int(s), gen_roo, "json") for s in args.sizes.split(",") if s]
    for n in (int(s) for s in args.claude_code.split(",") if s):
        if n:
            jobs.append(("claude_code", n, gen_claude_code, "jsonl"))
    if args.same_id:
        jobs.append(("same_id", args.same_id, gen_same_id, "json"))
    if args.reused_id:
        jobs.append(("reused_id", args.reused_id, gen_reused_id, "json"))
    if args.others:
        for kind, ext in OTHERS:
            jobs.append((kind, args.others, globals()[f"gen_{kind}"], ext))
    if args.only:
        jobs = [job for job in jobs if job[0] in args.only.split(",")]
    for fmt, n, fn, ext in jobs:
        data, info = fn(n, args.seed + n)
        if fmt in FORMAT_OF:
            info["format"] = FORMAT_OF[fmt]
        name = f"{fmt}_{label(n)}.{ext}"
        (args.out / name).write_bytes(data)
        info["bytes"] = len(data)
        manifest[name] = info
        if "faults" in info:
            what = f"faults {info['faults']}"
        elif "mode" in info:
            what = f"timed with {info['mode']}"
        else:
            what = f"{info.get('running', 0)} calls left running"
        print(f"{name}: {info['messages']} messages, {len(data) / 1e6:.1f} MB, {what}")
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
