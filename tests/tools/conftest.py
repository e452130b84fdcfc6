"""Fixtures the tool tests share."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unprivileged import (
    AS_NOBODY,
    AS_ROOT,
    CAN_BECOME_NOBODY,
    USERS,
    Runner,
    python_nobody_can_start,
    readable_copy,
)


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


@pytest.fixture(scope="session")
def nobody() -> Iterator[Runner]:
    """Runs Meowgent as `nobody`, with a copy of what it imports where `nobody` can read it (tests/unprivileged.py),
    made once per session: outside /tmp, as `outside_tmp`."""
    if not CAN_BECOME_NOBODY:
        pytest.skip("needs root and setpriv to become another user")
    python = python_nobody_can_start()
    if python is None:
        pytest.skip(f"no Python of version {sys.version_info[:2]} that nobody can start")
    if not os.access("/var/tmp", os.W_OK):
        pytest.skip("needs a writable /var/tmp")
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="meowgent-nobody-") as folder:
        Path(folder).chmod(0o755)
        code = readable_copy(Path(folder).resolve())
        yield Runner("nobody", AS_NOBODY, python, code, code)


@pytest.fixture(params=USERS)
def user(request: pytest.FixtureRequest) -> Runner:
    """Who runs Meowgent in a test: this process (root in CI), or `nobody`, as a person does."""
    return AS_ROOT if request.param == "root" else request.getfixturevalue("nobody")
