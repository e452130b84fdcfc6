"""Fixtures of the policy tests: a workspace with a secret, notes and sources, and a policy of shell rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from meowgent.policy.rules import Policy
from tests.policy.calls import SHELL_RULES


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "secrets").mkdir(parents=True)
    (root / "secrets" / "key.pem").write_text("secret")
    (root / "docs").mkdir()
    (root / "src").mkdir()
    (root / "src" / "main.py").write_text("print()")
    (root / "notes.md").write_text("notes")
    return root


@pytest.fixture
def policy(workspace: Path) -> Policy:
    return Policy(SHELL_RULES, workspace)
