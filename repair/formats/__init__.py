"""The session formats: one adapter per format (`base.Adapter`), the registry of them
(`registry`), reading and detecting the input (`probe`) and loading a session (`load`).

A format with several modules is a sub-package (`claude_code/`, `gemini_cli/`, `roo/`).
"""

from .load import load_bytes, load_session
from .probe import describe_shape, detect, probe_bytes, probe_path, resolve_path, split_lines
from .registry import adapter_names, adapters, get_adapter, register

__all__ = [
    "adapter_names",
    "adapters",
    "describe_shape",
    "detect",
    "get_adapter",
    "load_bytes",
    "load_session",
    "probe_bytes",
    "probe_path",
    "register",
    "resolve_path",
    "split_lines",
]
