"""The code stays ruff clean: CI runs this like any other test."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def ruff() -> list[str]:
    found = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(found).exists():
        pytest.skip("ruff is not installed (it is in requirements-dev.txt)")
    return [found]


@pytest.mark.parametrize("arguments", [["check", "."], ["format", "--check", "."]])
def test_ruff_is_clean(arguments):
    result = subprocess.run([*ruff(), *arguments], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
