"""The code stays ruff clean and no function outgrows 60 lines: CI runs this like any other test."""

import ast
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


LONGEST_FUNCTION = 60
"""Lines from `def` to the last line of the body: a longer function does more than one thing, and is split."""


def long_functions(source: str) -> list[tuple[str, int]]:
    """The functions (methods and nested ones too) in `source` over LONGEST_FUNCTION lines, with their lengths."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = node.end_lineno - node.lineno + 1
            if length > LONGEST_FUNCTION:
                found.append((node.name, length))
    return found


def nested(*headers: str, statements: int) -> str:
    """Source with each header (`class A:`, `def f():`) inside the one before, then one-line statements."""
    lines = [" " * 4 * depth + header for depth, header in enumerate(headers)]
    return "\n".join([*lines, *(" " * 4 * len(headers) + f"x{i} = {i}" for i in range(statements))]) + "\n"


def test_long_functions_are_found():
    """The check below would pass vacuously if it measured nothing: a long method and a long nested function count."""
    assert long_functions(nested("def f():", statements=LONGEST_FUNCTION - 1)) == []
    assert long_functions(nested("class A:", "def m(self):", statements=LONGEST_FUNCTION)) == [("m", 61)]
    assert long_functions(nested("def outer():", "async def inner():", statements=LONGEST_FUNCTION)) == [
        ("outer", 62),
        ("inner", 61),
    ]


def test_no_function_is_over_sixty_lines():
    too_long = []
    for path in sorted((ROOT / "meowgent").rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        too_long += [f"{name}: {function} ({length} lines)" for function, length in long_functions(path.read_text())]
    assert not too_long, too_long
