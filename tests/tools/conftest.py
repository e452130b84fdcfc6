"""Fixtures the tool tests share."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
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


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A folder on the host outside /tmp, which the sandbox empties anyway: /var/tmp, world-writable like /tmp."""
    base = Path("/var/tmp")
    if not os.access(base, os.W_OK):
        pytest.skip("needs a writable /var/tmp")
    with tempfile.TemporaryDirectory(dir=base, prefix="meowgent-test-") as folder:
        yield Path(folder).resolve()
