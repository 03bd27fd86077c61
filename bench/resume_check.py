"""Does the repaired file resume? For every sample and corpus file of the agent-client formats:
resume the file with the real client, repair it with `histview fix -o`, resume the repaired
file, and check that the client's request breaks no rule of its provider (judged with
histview's own rules for that provider) and still carries every tool call the client sent
for the original. Prints a table; exit status 1 if any repaired file fails.

    python bench/resume_check.py                 # every client declared below
    python bench/resume_check.py claude-code     # one format
    python bench/resume_check.py --json

Needs the clients (../shared/clients/install; HISTVIEW_CLIENTS names their folder) and
../shared/clients/resume. A format is one `Client(...)` line in CLIENTS: the resume
script's client name, the provider target its requests are judged by, the files to try,
and how to read the request (conversation list, tool call ids).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
RESUME = SHARED / "clients" / "resume"
CORPUS = SHARED / "corpus"
sys.path.insert(0, str(ROOT))


def _files(*globs: str) -> Callable[[], list[Path]]:
    """Files under the repository (samples, fixtures) and the shared corpus, by glob."""

    def find() -> list[Path]:
        out: list[Path] = []
        for g in globs:
            base = CORPUS if g.startswith("corpus/") else ROOT
            out.extend(sorted(base.glob(g.removeprefix("corpus/"))))
        # not sessions: the recorded requests beside the broken files, notes
        return [p for p in out if not p.name.endswith((".sent.json", ".md"))]

    return find


def anthropic_judge(request: dict) -> list[str]:
    """Error-level findings of histview's `anthropic` rules on an Anthropic request body
    (system-role messages, a separate API feature, left out)."""
    from repair.analysis import analyze
    from repair.formats import load_bytes

    body = {"messages": [m for m in request["messages"] if m["role"] != "system"]}
    s = load_bytes(json.dumps(body).encode(), path="request.json", target="anthropic")
    return [f"{f.code}@messages.{f.message_index}" for f in analyze(s).errors]


def anthropic_calls(request: dict) -> set[str]:
    return {
        b["id"]
        for m in request["messages"]
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_use"
    }


def responses_judge(request: dict) -> list[str]:
    """Error-level findings of histview's `openai-responses` rules on a Responses request
    body's `input` (read back as a Codex rollout: one response_item line per item)."""
    from repair.analysis import analyze
    from repair.formats import load_bytes

    lines = [
        json.dumps({"timestamp": "2026-01-01T00:00:00.000Z", "type": "response_item", "payload": i})
        for i in request["input"]
    ]
    s = load_bytes(("\n".join(lines) + "\n").encode(), "request.jsonl", "codex", "openai-responses")
    return [f"{f.code}@input.{f.message_index}" for f in analyze(s).errors]


def responses_calls(request: dict) -> set[str]:
    return {
        i["call_id"]
        for i in request["input"]
        if i.get("type") in ("function_call", "custom_tool_call", "local_shell_call")
    }


def gemini_judge(request: dict) -> list[str]:
    """Error-level findings of histview's `gemini` rules on a Gemini request's `contents`
    (read as the same conversation in Anthropic shape)."""
    from repair.analysis import analyze
    from repair.formats import load_bytes

    msgs = []
    for c in request["contents"]:
        blocks = []
        for p in c.get("parts") or ():
            if "functionCall" in p:
                fc = p["functionCall"]
                blocks.append(
                    {"type": "tool_use", "id": fc.get("id"), "name": fc.get("name"), "input": {}}
                )
            elif "functionResponse" in p:
                fr = p["functionResponse"]
                blocks.append({"type": "tool_result", "tool_use_id": fr.get("id"), "content": "."})
            elif isinstance(p.get("text"), str) and not p.get("thought"):
                blocks.append({"type": "text", "text": p["text"] or " "})
        role = "assistant" if c.get("role") == "model" else "user"
        msgs.append({"role": role, "content": blocks})
    s = load_bytes(json.dumps(msgs).encode(), "request.json", "anthropic", "gemini")
    return [f"{f.code}@contents.{f.message_index}" for f in analyze(s).errors]


def gemini_calls(request: dict) -> set[str]:
    """A call is its name and arguments (Gemini CLI makes up the ids of calls that have none,
    so the same call may carry another id once the file is repaired), counted."""
    seen: dict[str, int] = {}
    out = set()
    for c in request["contents"]:
        for p in c.get("parts") or ():
            if "functionCall" in p:
                fc = p["functionCall"]
                key = f"{fc.get('name')}{json.dumps(fc.get('args'), sort_keys=True)}"
                seen[key] = seen.get(key, 0) + 1
                out.add(f"{key}#{seen[key]}")
    return out


@dataclass(frozen=True)
class Client:
    format: str  # histview's format name
    client: str  # ../shared/clients/resume CLIENT
    files: Callable[[], list[Path]]
    judge: Callable[[dict], list[str]]  # the provider's rules on the request: error findings
    calls: Callable[[dict], set[str]]  # the tool call ids the request carries


CLIENTS: tuple[Client, ...] = (
    Client(
        "claude-code",
        "claude",
        _files(
            "sample_sessions/claude_code_*.jsonl",
            "corpus/real/claude_code/*/[!a]*.jsonl",  # subagent agent-*.jsonl files do not resume
            "tests/fixtures/clients/claude/broken/*.jsonl",
        ),
        anthropic_judge,
        anthropic_calls,
    ),
    Client(
        "codex",
        "codex",
        _files(
            "sample_sessions/codex_*.jsonl",
            "corpus/real/codex/*/*.jsonl",
            "tests/fixtures/clients/codex/*.jsonl",
        ),
        responses_judge,
        responses_calls,
    ),
    Client(
        "opencode",
        "opencode",
        _files(
            "sample_sessions/opencode_*.json",
            "corpus/real/opencode/*",  # share folders (session.json + messages.json)
            "tests/fixtures/clients/opencode/*.json",
        ),
        anthropic_judge,
        anthropic_calls,
    ),
    Client(
        "gemini-cli",
        "gemini",
        _files(
            "sample_sessions/gemini_cli_*.jsonl",
            "corpus/generated/gemini_cli/*.jsonl",
            "tests/data/gemini_cli/*.jsonl",
            "tests/data/gemini_cli/legacy_chat.json",
            "tests/fixtures/fuzz/gemini_cli_*.jsonl",
        ),
        gemini_judge,
        gemini_calls,
    ),
)


@dataclass
class Row:
    format: str
    file: str
    sent_before: int | None = None  # messages the client sent for the original
    fixes: int | None = None
    sent_after: int | None = None
    refused: list[str] | None = None  # the provider's errors on the repaired file's request
    calls_before: int = 0
    calls_kept: int = 0
    calls_after: int = 0  # every call the repaired file's request carries
    note: str = ""

    @property
    def ok(self) -> bool:
        return (
            self.sent_after is not None
            and not self.refused
            and self.calls_kept == self.calls_before
        )


def resume(client: str, path: Path, out: Path) -> dict | None:
    subprocess.run(
        [str(RESUME), client, str(path), str(out)], capture_output=True, text=True, check=False
    )
    req = out / "request.json"
    return json.loads(req.read_text()) if req.is_file() else None


def fix(path: Path, out: Path) -> tuple[int, str]:
    """`histview fix FILE -o OUT --json`: the number of fixes applied, or why none. A file
    with unreadable records needs `--strategy malformed=drop` (fix never drops them on its
    own): it is tried again with it, and the note says so."""
    for extra in ([], ["--strategy", "malformed=drop"]):
        proc = subprocess.run(
            [sys.executable, "-m", "tui.cli", "fix", str(path), "-o", str(out), "--json", *extra],
            capture_output=True,
            text=True,
            check=False,
            cwd=ROOT,
        )
        if proc.returncode != 2 and out.is_file():
            edits = len({e["fix"] for e in json.loads(proc.stdout)["edits"]})
            return edits, " ".join(extra)
        if "malformed" not in proc.stderr:
            break
    return -1, (proc.stderr or proc.stdout).strip().splitlines()[-1:][0][:120]


def check_file(c: Client, path: Path, tmp: Path) -> Row:
    rel = str(path.relative_to(CORPUS if path.is_relative_to(CORPUS) else ROOT))
    row = Row(c.format, rel)
    before = resume(c.client, path, tmp / "before")
    if before is None:
        row.note = "the client sends nothing for the original (not a session of its own)"
        return row
    calls0 = c.calls(before)
    row.sent_before, row.calls_before = len(_conversation(before)), len(calls0)
    if path.is_dir():  # an opencode share folder: the repaired messages.json beside a copy
        fixed = tmp / "fixed" / "messages.json"
        fixed.parent.mkdir()
        shutil.copy(path / "session.json", fixed.parent / "session.json")
    else:
        fixed = tmp / ("fixed" + path.suffix)
    row.fixes, why = fix(path, fixed)
    if row.fixes < 0:
        row.note = f"histview fix refused: {why}"
        return row
    if why:
        row.note = f"fixed with {why}"
    if path.is_dir():
        fixed = fixed.parent
    after = resume(c.client, fixed, tmp / "after")
    if after is None:
        row.note = "the client sends nothing for the repaired file"
        return row
    row.sent_after = len(_conversation(after))
    row.refused = c.judge(after)
    row.calls_kept = len(calls0 & c.calls(after))
    row.calls_after = len(c.calls(after))
    if row.calls_kept < row.calls_before:
        row.note = f"lost calls: {sorted(calls0 - c.calls(after))[:3]}"
    return row


def _conversation(request: dict) -> list:
    for key in ("messages", "input", "contents"):
        if isinstance(request.get(key), list):
            return request[key]
    return []


def table(rows: list[Row]) -> list[str]:
    head = (
        f"{'FORMAT':12} {'SENT':>4} {'FIXES':>5} {'SENT':>4} {'CALLS':>7} {'CALLS':>5} "
        f"{'REFUSED':8} FILE"
    )
    out = [f"{'':12} {'orig':>4} {'':>5} {'fixd':>4} {'kept':>7} {'fixd':>5}", head]
    for r in rows:
        sent0 = "-" if r.sent_before is None else str(r.sent_before)
        fixes = "-" if r.fixes is None else str(r.fixes)
        sent1 = "-" if r.sent_after is None else str(r.sent_after)
        calls = f"{r.calls_kept}/{r.calls_before}" if r.sent_before is not None else "-"
        calls1 = "-" if r.sent_after is None else str(r.calls_after)
        refused = "-" if r.refused is None else ("no" if not r.refused else "YES")
        line = (
            f"{r.format:12} {sent0:>4} {fixes:>5} {sent1:>4} {calls:>7} {calls1:>5} "
            f"{refused:8} {r.file}"
        )
        if r.refused:
            line += "  " + ", ".join(r.refused[:3])
        if r.note:
            line += f"  ({r.note})"
        out.append(line)
    tried = [r for r in rows if r.sent_before is not None]
    good = sum(r.ok for r in tried)
    out.append(
        f"{good} of {len(tried)} repaired files resume with a request the provider accepts "
        "and every tool call the client sent for the original"
    )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("formats", nargs="*", help="formats to check (default: all declared)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if not RESUME.is_file():
        print(f"resume_check: {RESUME} not found", file=sys.stderr)
        return 2
    rows: list[Row] = []
    for c in CLIENTS:
        if args.formats and c.format not in args.formats:
            continue
        for path in c.files():
            with tempfile.TemporaryDirectory() as tmp:
                rows.append(check_file(c, path, Path(tmp)))
            if not args.json:
                print(table(rows[-1:])[-2], flush=True)
    if args.json:
        print(json.dumps([r.__dict__ | {"ok": r.ok} for r in rows], indent=1))
    else:
        print()
        print("\n".join(table(rows)))
    tried = [r for r in rows if r.sent_before is not None]
    return 0 if all(r.ok for r in tried) else 1


if __name__ == "__main__":
    sys.exit(main())
