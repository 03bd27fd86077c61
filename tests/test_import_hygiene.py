"""The engine and the headless commands never load Textual or Rich (issue 2 point 1): a
fresh interpreter imports every module of `repair`, runs `histview check|fix|explain|messages|list`
through the console script's entry point, and finds neither in sys.modules."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

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
    assert ": " in result["check"]  # check printed its FILE:WHERE lines / summary


def test_textual_really_is_installed(tmp_path):
    """Guard against a vacuous pass: the check above means something only if textual could
    have been imported."""
    proc = subprocess.run(
        [sys.executable, "-c", "import textual, rich"], capture_output=True, check=False
    )
    assert proc.returncode == 0
