"""Shared test setup. Animations must be off before Textual is imported anywhere: the
variable is read when `textual.constants` is imported (ScrollView paging animates)."""

import os

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _config_home(tmp_path_factory, monkeypatch):
    """histview keeps the chosen theme under $XDG_CONFIG_HOME: never the real one in tests."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))


@pytest.fixture(scope="session")
def bench_gen():
    """bench/gen.py, the benchmark's generator of synthetic sessions, as a module."""
    import importlib.util

    from tests.paths import REPO

    spec = importlib.util.spec_from_file_location("bench_gen", REPO / "bench" / "gen.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def cc_file(bench_gen, tmp_path_factory):
    """A generated Claude Code session of 1500 messages (its head is read by formats and tui)."""
    data, _ = bench_gen.gen_claude_code(1500, seed=5)
    path = tmp_path_factory.mktemp("head") / "session.jsonl"
    path.write_bytes(data)
    return path
