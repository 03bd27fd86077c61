"""What Gemini CLI 0.61 sends for a chat file, measured with the real client, and the Gemini
API's function-call rules checked on such a request.

The requests measured are kept trimmed in data/gemini_cli/requests.json so that the tests run
without the client; `python -m tests.formats.gemini_requests` measures them again (it needs the
clients, see ../shared/clients/README.md) and rewrites that file.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.paths import DATA as TEST_DATA
from tests.paths import FIXTURES, SAMPLES, SHARED

DATA = TEST_DATA / "gemini_cli"
REQUESTS = DATA / "requests.json"
RESUME = SHARED / "clients" / "resume"
SAMPLE = SAMPLES / "gemini_cli_doubled_after_resume.jsonl"
CASES = {
    "clean_seed": DATA / "clean_seed.jsonl",
    "orphan_call": DATA / "orphan_call.jsonl",
    "orphan_response": DATA / "orphan_response.jsonl",
    "trailing_call": DATA / "trailing_call.jsonl",
    "legacy_chat": DATA / "legacy_chat.json",
    "no_ids": DATA / "no_ids.jsonl",
    "empty_model_text": DATA / "empty_model_text.jsonl",
    "doubled_after_resume": SAMPLE,
    # a fuzz case (bench/fuzz.py, seed 41): one toolCalls[] item written twice
    "call_written_twice": FIXTURES / "fuzz" / "gemini_cli_call_written_twice.jsonl",
}
PROMPT = "continue"  # what ../shared/clients/resume sends as the new prompt
INTERRUPTED = "[The previous response was interrupted before it completed.]"


def trim(contents: list[dict]) -> list[dict]:
    """A request's contents, each part cut to what the rules read: kind, id, name, text head."""
    out = []
    for c in contents:
        parts = []
        for p in c.get("parts") or ():
            if "functionCall" in p:
                fc = p["functionCall"]
                parts.append({"functionCall": {"id": fc.get("id"), "name": fc.get("name")}})
            elif "functionResponse" in p:
                fr = p["functionResponse"]
                parts.append({"functionResponse": {"id": fr.get("id"), "name": fr.get("name")}})
            elif "text" in p:
                parts.append({"text": p["text"][:60]})
            else:
                parts.append({next(iter(p), "empty"): "..."})
        out.append({"role": c.get("role"), "parts": parts})
    return out


def history(contents: list[dict]) -> list[dict]:
    """The part of a trimmed request that comes from the file: without the context Gemini CLI
    puts first, the new prompt it appends, and its placeholder for an unanswered response."""
    out = [dict(c, parts=list(c["parts"])) for c in contents]
    if out and out[0]["parts"] and out[0]["parts"][0].get("text", "").startswith("<session"):
        out[0]["parts"].pop(0)
    if out and out[-1]["role"] == "user" and out[-1]["parts"][-1:] == [{"text": PROMPT}]:
        out[-1]["parts"].pop()  # the prompt, merged into the responses turn it follows
        if not out[-1]["parts"]:
            out.pop()
    if out and out[-1]["role"] == "model" and out[-1]["parts"] == [{"text": INTERRUPTED[:60]}]:
        out.pop()
    return out


def made_up_ids(contents: list[dict]) -> list[dict]:
    """Ids made up for calls and responses that have none in the file (`synth_...`: Gemini
    CLI's and histview's differ) replaced by their order of appearance, so that two views
    compare by which response answers which call."""
    seen: dict[str, str] = {}
    out = []
    for c in contents:
        parts = []
        for p in c["parts"]:
            key = next(iter(p))
            inner = p[key]
            if isinstance(inner, dict) and str(inner.get("id", "")).startswith("synth_"):
                label = "orphan" if inner["id"].startswith("synth_orph_") else "paired"
                ref = seen.setdefault(inner["id"], f"{label}#{len(seen)}")
                p = {key: {**inner, "id": ref}}
            parts.append(p)
        out.append({**c, "parts": parts})
    return out


def violations(contents: list[dict]) -> list[str]:
    """Where a request breaks the Gemini API's function-call rules: a function-call turn must be
    followed at once by one user turn holding exactly one functionResponse per functionCall
    (by id), and no functionResponse may come without the call turn right before it."""
    out = []
    for i, c in enumerate(contents):
        calls = [p["functionCall"] for p in c["parts"] if "functionCall" in p]
        responses = [p["functionResponse"] for p in c["parts"] if "functionResponse" in p]
        prev = contents[i - 1] if i else None
        prev_calls = (
            [p["functionCall"] for p in prev["parts"] if "functionCall" in p] if prev else []
        )
        if responses and (c["role"] != "user" or not prev_calls):
            out.append(f"contents[{i}]: function responses without a function-call turn before")
        if calls:
            nxt = contents[i + 1] if i + 1 < len(contents) else None
            got = (
                [p["functionResponse"] for p in nxt["parts"] if "functionResponse" in p]
                if nxt
                else []
            )
            if nxt is None or nxt["role"] != "user" or not got:
                out.append(f"contents[{i}]: function calls not followed by a response turn")
            elif len(got) != len(calls):
                out.append(
                    f"contents[{i + 1}]: {len(got)} function responses for {len(calls)} calls"
                )
            elif sorted(str(r.get("id")) for r in got) != sorted(str(c.get("id")) for c in calls):
                out.append(f"contents[{i + 1}]: function responses do not match the calls' ids")
    return out


def view(session) -> list[dict]:
    """histview's live messages in the trimmed request shape."""
    out = []
    for m in session.messages:
        if not m.live:
            continue
        parts = []
        for b in m.blocks:
            if b.type == "tool_use":
                parts.append({"functionCall": {"id": b.tool_id, "name": b.name}})
            elif b.type == "tool_result":
                parts.append({"functionResponse": {"id": b.tool_id, "name": b.name}})
            elif b.type == "text":
                parts.append({"text": b.data["text"][:60]})
            elif b.type != "thinking":
                parts.append({b.type: "..."})
        out.append({"role": "model" if m.role == "assistant" else "user", "parts": parts})
    return out


def clients_dir() -> str | None:
    return os.environ.get("HISTVIEW_CLIENTS")


def resume(path: Path, out: Path) -> list[dict]:
    """Resume `path` with the real Gemini CLI; the trimmed contents of the request it sent."""
    run = subprocess.run(
        [str(RESUME), "gemini", str(path), str(out)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    request = out / "request.json"
    if not request.exists():
        raise RuntimeError(f"Gemini CLI sent nothing for {path}: {run.stdout} {run.stderr}")
    return trim(json.loads(request.read_text())["contents"])


def measure(name: str, path: Path, work: Path) -> dict:
    """Before and after `histview fix`, and after a second resume of the file Gemini CLI left."""
    from repair.cli import main

    fixed = work / f"{name}.fixed{path.suffix}"
    code = main(["fix", str(path), "-o", str(fixed)], stdout=io.StringIO(), stderr=io.StringIO())
    assert code == 0, f"histview fix {path} exited {code}"
    return {"before": resume(path, work / f"{name}-before"), "after": resume(fixed, work / name)}


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        found = {name: measure(name, path, Path(tmp)) for name, path in CASES.items()}
    REQUESTS.write_text(json.dumps(found, indent=1, ensure_ascii=False) + "\n")
    for name, got in found.items():
        print(
            name,
            "before:",
            violations(got["before"]) or "ok",
            "after:",
            violations(got["after"]) or "ok",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
