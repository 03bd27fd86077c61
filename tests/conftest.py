"""Shared test setup. Animations must be off before Textual is imported anywhere: the
variable is read when `textual.constants` is imported (ScrollView paging animates)."""

import os

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _config_home(tmp_path_factory, monkeypatch):
    """histview keeps the chosen theme under $XDG_CONFIG_HOME: never the real one in tests."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
