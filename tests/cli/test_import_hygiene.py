"""The engine and the headless commands never load Textual or Rich (issue 2 point 1): a
fresh interpreter imports every module of `repair`, runs `histview check|fix|explain|messages|list`
through the console script's entry point (and `--help`, `open --help`, `--version`: the
command tree is parsed before the TUI loads), and finds neither in sys.modules."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from tests.paths import REPO

ROOT = REPO

SESSION = [
    {"role": "user", "content": "go"},
    {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}],
    },
    {"role": "user", "content": "continue"},
]

PROGRAM = r"""
import contextlib, io, json, pkgutil, importlib, sys
import repair
for mod in pkgutil.walk_packages(repair.__path__, "repair."):
    importlib.import_module(mod.name)
from tui.cli import main
session, home = sys.argv[1], sys.argv[2]
codes = {}
with contextlib.redirect_stdout(io.StringIO()) as out:
    codes["check"] = main(["check", session])
    codes["fix"] = main(["fix", session])
    codes["explain"] = main(["explain", "messages.1: tool_use ids were found without tool_result blocks immediately after: t1.", session])
    codes["messages"] = main(["messages", session])
    codes["messages --json"] = main(["messages", session, "--json"])
    codes["list"] = main(["list", "--home", home])
    # the command tree is parsed before Textual loads: help and version never load it
    for argv in (["--help"], ["open", "--help"], ["--version"]):
        try:
            main(argv)
        except SystemExit as exc:
            codes[" ".join(argv)] = exc.code
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("textual", "rich"))
print(json.dumps({"codes": codes, "loaded": loaded, "check": out.getvalue().splitlines()[0]}))
"""


def _sample() -> Path | None:
    samples = ROOT / "sample_sessions"
    found = sorted(samples.glob("roo_*.json")) if samples.is_dir() else []
    return found[0] if found else None


def test_headless_commands_do_not_load_textual_or_rich(tmp_path):
    session = tmp_path / "s.json"
    session.write_text(json.dumps(SESSION))
    sample = _sample()
    proc = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(sample or session), str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["loaded"] == []
    assert result["codes"]["explain"] == 0 and result["codes"]["list"] == 0
    assert result["codes"]["messages"] == 0 and result["codes"]["messages --json"] == 0
    assert result["codes"]["check"] in (0, 1)
    assert result["codes"]["--help"] == 0 and result["codes"]["open --help"] == 0
    assert result["codes"]["--version"] == 0
    assert ": " in result["check"]  # check printed its FILE:WHERE lines / summary


def test_textual_really_is_installed(tmp_path):
    """Guard against a vacuous pass: the check above means something only if textual could
    have been imported."""
    proc = subprocess.run(
        [sys.executable, "-c", "import textual, rich"], capture_output=True, check=False
    )
    assert proc.returncode == 0


def _import_graph(package: Path) -> dict[str, set[str]]:
    """Every `import` in the package's modules (function-level ones too), as module names."""
    mods = {}
    for p in package.rglob("*.py"):
        parts = list(p.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = p
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        pkg = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                target = node.module or ""
                if node.level:
                    base = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:
                    full = f"{target}.{alias.name}"
                    deps.add(full if full in mods else target)
            elif isinstance(node, ast.Import):
                deps.update(alias.name for alias in node.names)
        graph[name] = {d for d in deps if d in mods and d != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    state: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(u: str) -> None:
        state[u] = 1
        stack.append(u)
        for v in sorted(graph[u]):
            if state.get(v) == 1:
                found.append(stack[stack.index(v) :] + [v])
            elif v not in state:
                visit(v)
        stack.pop()
        state[u] = 2

    for u in sorted(graph):
        if u not in state:
            visit(u)
    return found


def test_format_modules_import_without_cycles():
    """The registry never imports an adapter by name and no adapter module imports one that
    imports it back (a cycle made the loader and the writer import each other lazily)."""
    graph = _import_graph(ROOT / "repair" / "formats")
    assert "repair.formats.claude_code.write" in graph["repair.formats.claude_code.adapter"]
    assert _cycles(graph) == []


def test_a_cycle_would_be_found():
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b", "a"]]
