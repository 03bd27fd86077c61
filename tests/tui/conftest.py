"""Fixtures shared by the TUI tests."""

import shutil

import pytest

from tests.paths import DEMO


@pytest.fixture
def demo_copy(tmp_path):
    """The demo session copied where the app may write its export and backup."""
    dst = tmp_path / "demo_session.json"
    shutil.copy(DEMO, dst)
    return dst
