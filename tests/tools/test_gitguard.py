"""Git's own code in the workspace, tried as an attacker would with a real bwrap, as root and as an unprivileged
user: hooks, config and `.git` pointers can't be written, `.git` can't be moved away and rebuilt, and git's
everyday work still runs inside."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from meowgent.tools.gitguard import MAX_DEPTH, git_guard
from tests.sandboxing import USERS, give_to_nobody, needs_sandbox, run_commands

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
READ_ONLY = "Read-only file system"
BUSY = "Device or resource busy"
GIT = ["git", "-c", "user.name=Cat", "-c", "user.email=cat@example.com", "-c", "safe.directory=*"]


def repository(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run([*GIT, "init", "-q", "-b", "main", str(folder)], check=True)
    (folder / "a.txt").write_text("a\n")
    subprocess.run([*GIT, "-C", str(folder), "add", "a.txt"], check=True)
    subprocess.run([*GIT, "-C", str(folder), "commit", "-q", "-m", "first"], check=True)
    return folder


def git_output(folder: Path, *arguments: str) -> str:
    return subprocess.run([*GIT, "-C", str(folder), *arguments], capture_output=True, text=True, check=True).stdout


def test_the_walk_finds_nested_repositories_worktrees_and_submodule_folders(tmp_path: Path):
    workspace = repository(tmp_path / "ws")
    repository(workspace / "src" / "inner")
    subprocess.run([*GIT, "-C", str(workspace), "worktree", "add", "-q", str(workspace / "wt")], check=True)
    deep = repository(workspace.joinpath(*["d"] * (MAX_DEPTH + 1)))  # past the walk's depth: not looked for
    (workspace / "node_modules" / "pkg" / ".git").mkdir(parents=True)
    guard = git_guard(workspace)
    assert set(guard.pinned) == {
        workspace / ".git",
        workspace / "src/inner/.git",
        workspace / ".git/worktrees/wt",
    }
    assert {workspace / ".git/config", workspace / ".git/hooks", workspace / "wt/.git"} <= set(guard.kept)
    assert workspace / ".git/worktrees/wt/commondir" in guard.kept
    assert deep / ".git" not in guard.pinned
    assert guard.emptied == guard.blanked == ()


@needs_sandbox
@pytest.mark.parametrize("user", USERS)
def test_hooks_and_config_cannot_be_written_nor_git_moved_away_and_git_still_works(outside_tmp: Path, user: str):
    workspace = repository(outside_tmp / "workspace")
    inner = repository(workspace / "sub" / "inner")
    subprocess.run([*GIT, "-C", str(workspace), "worktree", "add", "-q", str(workspace / "wt")], check=True)
    bare = repository(workspace / "nohooks")
    shutil.rmtree(bare / ".git" / "hooks")
    (outside_tmp / "home").mkdir()
    configs = {path: path.read_text() for path in (workspace / ".git/config", inner / ".git/config")}
    pointer = (workspace / "wt/.git").read_text()
    if user == "nobody":
        give_to_nobody(outside_tmp)
    commands = [
        "printf '#!/bin/sh\\ntouch pwned\\n' > nohooks/.git/hooks/pre-commit && echo written-in-the-sandbox",
        "echo 'touch pwned' > .git/hooks/pre-commit; echo x >> sub/inner/.git/config; echo x > wt/.git;"
        " echo /elsewhere > .git/worktrees/wt/commondir",
        "git config core.fsmonitor 'touch pwned' && echo configured",
        "mv .git .git2; mv sub/inner/.git sub/inner/git2; mv sub s2; mv .git/worktrees/wt .git/worktrees/w2",
        "echo b > b.txt && git add b.txt && git -c user.name=Cat -c user.email=cat@example.com commit -q -m second"
        " && git switch -q -c other && git status --short --branch",
    ]
    _, hook, written, configured, moved, work = run_commands(
        user, commands, env={"HOME": str(outside_tmp / "home")}, workspace=workspace
    )
    assert written.count(READ_ONLY) == 4, written
    assert BUSY in configured
    assert "--- stdout ---" not in configured
    assert moved.count(BUSY) == 4, moved
    assert hook.endswith("written-in-the-sandbox")  # in an empty folder of the sandbox's own, gone after
    assert "exit status: 0 (" in work, work
    assert "--- stdout ---\n## other\n" in work
    assert not (bare / ".git/hooks/pre-commit").exists()
    assert not (workspace / ".git/hooks/pre-commit").exists()
    assert {path: path.read_text() for path in configs} == configs
    assert (workspace / "wt/.git").read_text() == pointer
    assert git_output(workspace, "log", "--format=%s", "other").split() == ["second", "first"]
    assert not list(outside_tmp.rglob("pwned"))
