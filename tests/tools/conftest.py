"""Fixtures the tool tests share."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    """A workspace holding a hard link to a file outside it."""
    (tmp_path / "outside.txt").write_text("API_KEY=outside\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "mine.txt").write_text("API_KEY=mine\n")
    os.link(tmp_path / "outside.txt", workspace / "linked.txt")
    return workspace
