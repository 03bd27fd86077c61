"""The formats histview reads: each adapter registers itself when its module is imported."""

from __future__ import annotations

from .base import Adapter

_ADAPTERS: list[Adapter] = []


def register(adapter: Adapter) -> Adapter:
    _ADAPTERS.append(adapter)
    return adapter


def adapters() -> list[Adapter]:
    _load_builtin()
    return list(_ADAPTERS)


def adapter_names() -> list[str]:
    return [a.name for a in adapters()]


def get_adapter(name: str) -> Adapter:
    for a in adapters():
        if a.name == name:
            return a
    raise KeyError(name)


_loaded = False


def _load_builtin() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    import importlib

    for mod in (
        "anthropic",
        "roo.adapter",
        "claude_code.adapter",
        "codex",
        "opencode",
        "openai_chat",
        "gemini_cli.adapter",
        "bedrock",
    ):
        importlib.import_module(f"{__package__}.{mod}")
