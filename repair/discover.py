"""Finding sessions where the agents keep them, and checking their health (`histview list`,
and the TUI's session picker).

Places (README, list): Claude Code `~/.claude/projects/*/*.jsonl`, Codex
`~/.codex/sessions/**/rollout-*.jsonl`, Gemini CLI `~/.gemini/tmp/*/chats/session-*.jsonl`
(and the older `session-*.json`), and Roo Code / Kilo Code / Cline
`tasks/*/api_conversation_history.json` under VS Code's globalStorage. `$HISTVIEW_HOME`
replaces the home folder and `$HISTVIEW_VSCODE_STORAGE` the globalStorage folder, so tests
and unusual set-ups can point elsewhere.

histview's own report and backup beside a session it fixed (`session-*.report.json` matches
Gemini CLI's `session-*.json`) are left out everywhere; a `.fixed` output is a session and is
listed.

Files are checked in a process pool: loading and analysing is CPU-bound Python, and a
user's disk holds hundreds of sessions.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from .files import is_report_or_backup

# VS Code extension ids -> the tool's name in the list.
EXTENSIONS = {
    "rooveterinaryinc.roo-cline": "roo",
    "kilocode.kilo-code": "kilo",
    "saoudrizwan.claude-dev": "cline",
}

# Editors that keep a VS Code style globalStorage (Linux and macOS layouts).
_EDITORS = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")


@dataclass(frozen=True)
class Roots:
    home: str
    vscode_storage: tuple[str, ...]  # globalStorage folders to search

    @classmethod
    def from_env(cls, home: str | None = None, vscode_storage: str | None = None) -> Roots:
        home = home or os.environ.get("HISTVIEW_HOME") or os.path.expanduser("~")
        storage = vscode_storage or os.environ.get("HISTVIEW_VSCODE_STORAGE")
        if storage:
            return cls(home, (storage,))
        folders = []
        for editor in _EDITORS:
            folders.append(os.path.join(home, ".config", editor, "User", "globalStorage"))
            folders.append(
                os.path.join(
                    home, "Library", "Application Support", editor, "User", "globalStorage"
                )
            )
        appdata = os.environ.get("APPDATA")
        if appdata and not os.environ.get("HISTVIEW_HOME"):
            folders += [os.path.join(appdata, e, "User", "globalStorage") for e in _EDITORS]
        return cls(home, tuple(folders))

    def describe(self) -> list[str]:
        places = [
            os.path.join(self.home, ".claude", "projects", "*", "*.jsonl"),
            os.path.join(self.home, ".codex", "sessions", "**", "rollout-*.jsonl"),
            os.path.join(self.home, ".gemini", "tmp", "*", "chats", "session-*.json{l,}"),
        ]
        existing = [s for s in self.vscode_storage if os.path.isdir(s)] or list(
            self.vscode_storage[:1]
        )
        for storage in existing:
            ext = "{" + ",".join(EXTENSIONS) + "}"
            places.append(os.path.join(storage, ext, "tasks", "*", "api_conversation_history.json"))
        return places


@dataclass(frozen=True)
class Found:
    path: str
    tool: str  # claude-code | codex | gemini | roo | kilo | cline
    mtime: float
    size: int


def find_sessions(roots: Roots) -> list[Found]:
    """Every session file in the known places, newest first. Cheap: no file is opened."""
    found: list[Found] = []
    home = Path(roots.home)
    projects = home / ".claude" / "projects"
    if projects.is_dir():
        for path in projects.glob("*/*.jsonl"):
            if path.name.startswith("agent-"):  # a subagent thread of another session
                continue
            _add(found, path, "claude-code")
    codex = home / ".codex" / "sessions"
    if codex.is_dir():
        for path in codex.rglob("rollout-*.jsonl"):
            _add(found, path, "codex")
    gemini = home / ".gemini" / "tmp"
    if gemini.is_dir():
        for path in gemini.glob("*/chats/session-*.json*"):
            if path.suffix in (".jsonl", ".json"):
                _add(found, path, "gemini")
    seen: set[str] = set()
    for storage in roots.vscode_storage:
        for ext, tool in EXTENSIONS.items():
            tasks = Path(storage) / ext / "tasks"
            if not tasks.is_dir():
                continue
            for path in tasks.glob("*/api_conversation_history.json"):
                real = os.path.realpath(path)
                if real not in seen:
                    seen.add(real)
                    _add(found, path, tool)
    found.sort(key=lambda f: (-f.mtime, f.path))
    return found


def _add(found: list[Found], path: Path, tool: str) -> None:
    if is_report_or_backup(path.name):  # histview's own, beside a session it fixed
        return
    try:
        st = path.stat()
    except OSError:
        return
    if path.is_file():
        found.append(Found(str(path), tool, st.st_mtime, st.st_size))


@dataclass
class Health:
    """One listed session: where it is and what `check` says about it."""

    path: str
    tool: str
    mtime: float
    size: int
    format: str | None = None
    messages: int = 0
    errors: int = 0
    warnings: int = 0
    infos: int = 0
    title: str = ""  # the first user text, one line
    error: str | None = None  # why the file could not be read

    def modified_text(self) -> str:
        return datetime.fromtimestamp(self.mtime).strftime("%Y-%m-%d %H:%M")

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.path,
            "tool": self.tool,
            "modified": datetime.fromtimestamp(self.mtime)
            .astimezone()
            .isoformat(timespec="seconds"),
            "size": self.size,
            "format": self.format,
            "messages": self.messages,
            "errors": self.errors,
            "warnings": self.warnings,
            "infos": self.infos,
            "title": self.title,
            "error": self.error,
        }


def check_one(found: Found) -> Health:
    """Load and analyse one file; never raises (an unreadable file carries its error)."""
    from .analysis import analyze
    from .errors import InputError
    from .formats import load_session
    from .model import block_text
    from .sanitize import clean_line

    h = Health(found.path, found.tool, found.mtime, found.size)
    try:
        session = load_session(found.path)
        analysis = analyze(session)
    except InputError as exc:
        h.error = f"{exc.where}: {exc.message}" if exc.where else exc.message
        return h
    except Exception as exc:  # a bug in one adapter must not hide the other sessions
        h.error = f"internal error: {type(exc).__name__}: {exc}"
        return h
    h.format = session.format
    h.messages = len(session.messages)
    counts = analysis.counts()
    h.errors, h.warnings, h.infos = counts["error"], counts["warning"], counts["info"]
    for msg in session.messages:
        if msg.role == "user" and msg.live:
            text = next((block_text(b) for b in msg.blocks if b.type == "text"), "")
            if text.strip():
                h.title = clean_line(text.strip(), 80)
                break
    return h


def iter_health(found: list[Found], workers: int | None = None) -> Iterator[Health]:
    """Health of each file as it is ready (not in order). `workers=1` checks in-process."""
    if not found:
        return
    if workers is None:
        workers = min(len(found), os.cpu_count() or 1, 8)
    if workers <= 1 or len(found) == 1:
        for f in found:
            yield check_one(f)
        return
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(check_one, f): f for f in found}
        for fut in as_completed(futures):
            try:
                yield fut.result()
            except Exception as exc:  # the worker died (e.g. out of memory)
                f = futures[fut]
                yield Health(f.path, f.tool, f.mtime, f.size, error=f"check failed: {exc}")


def check_all(found: list[Found], workers: int | None = None) -> list[Health]:
    """Health of every file, newest first."""
    rows = list(iter_health(found, workers))
    rows.sort(key=lambda h: (-h.mtime, h.path))
    return rows


# Folders never searched when the user opens histview on a folder: tool caches, and
# Claude Code's `<session>/subagents/` (threads of another session, reached from it).
_SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "subagents"})
_HISTORY_FILES = ("api_conversation_history.json", "claude_messages.json")


def find_in_folder(folder: str, max_depth: int = 4) -> list[Found]:
    """Session files under `folder` (the TUI's picker for `histview FOLDER`), newest first.

    `*.jsonl` (except `agent-*` subagent threads) and Roo/Kilo/Cline history files are
    taken by name; any other `*.json` is read and kept only when a format detects it.
    """
    found: list[Found] = []
    root = os.path.normpath(folder)
    base_depth = root.count(os.sep)
    for dirpath, dirnames, filenames in os.walk(root):
        if dirpath.count(os.sep) - base_depth >= max_depth:
            dirnames[:] = []
        else:
            dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS]
        names = set(filenames)
        history = next((h for h in _HISTORY_FILES if h in names), None)
        for name in filenames:
            path = Path(dirpath) / name
            if name.endswith(".jsonl"):
                if not name.startswith("agent-"):
                    _add(found, path, "file")
            elif name == history:
                _add(found, path, "file")
            elif name.endswith(".json") and history is None and _is_session_json(path):
                _add(found, path, "file")
    found.sort(key=lambda f: (-f.mtime, f.path))
    return found


def folder_places(folder: str) -> list[str]:
    """What `find_in_folder` looks for, for a "nothing found" message."""
    return [
        os.path.join(folder, "**", "*.jsonl"),
        os.path.join(folder, "**", "api_conversation_history.json"),
        os.path.join(folder, "**", "*.json") + " (when it is a session a format knows)",
    ]


def _is_session_json(path: Path) -> bool:
    from .formats import detect, probe_path

    try:
        detect(probe_path(str(path)))
    except Exception:  # unreadable, unknown shape, or a detect tripping over odd JSON
        return False
    return True
