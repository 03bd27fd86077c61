"""What histview remembers between runs: a small JSON file,
`$XDG_CONFIG_HOME/histview/config.json` (default `~/.config/histview/config.json`).
Today only the theme. A file that cannot be read is ignored, never an error."""

from __future__ import annotations

import json
import os
from pathlib import Path


def config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "histview" / "config.json"


def load_config() -> dict:
    try:
        data = json.loads(config_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_config(**values) -> bool:
    """Merge `values` into the file (written whole through a temporary file). False when it
    could not be written (a read-only home must not stop the app)."""
    path = config_path()
    data = load_config()
    data.update(values)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        return False
    return True
