"""Git's own code in the workspace, tried as an attacker would with a real bwrap, as root and as an unprivileged
user: hooks, config and `.git` pointers can't be written, `.git` can't be moved away and rebuilt, and git's
everyday work still runs inside."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from meowgent.tools import gitguard
from meowgent.tools.gitguard import MAX_FOLDERS, git_guard
from tests.sandboxing import needs_sandbox, run_commands
from tests.unprivileged import Runner

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
    inner = repository(workspace / "src" / "inner")
    subprocess.run([*GIT, "-C", str(workspace), "worktree", "add", "-q", str(workspace / "wt")], check=True)
    deep = repository(workspace.joinpath(*["d"] * 7))
    dotted = repository(workspace / ".config" / "nvim")
    (workspace / "node_modules" / "pkg" / ".git").mkdir(parents=True)
    guard = git_guard(workspace)
    assert set(guard.pinned) == {
        workspace / ".git",
        workspace / "src/inner/.git",
        workspace / ".git/worktrees/wt",
        deep / ".git",
        dotted / ".git",
    }
    assert {workspace / ".git/config", workspace / ".git/hooks", workspace / "wt/.git"} <= set(guard.kept)
    assert workspace / ".git/worktrees/wt/commondir" in guard.kept
    assert guard.emptied == guard.blanked == ()
    assert set(guard.absent) == {
        workspace / ".git/commondir",
        *(repo / ".git/commondir" for repo in (inner, deep, dotted)),
    }


@needs_sandbox
def test_hooks_and_config_cannot_be_written_nor_git_moved_away_and_git_still_works(outside_tmp: Path, user: Runner):
    workspace = repository(outside_tmp / "workspace")
    inner = repository(workspace / "sub" / "inner")
    subprocess.run([*GIT, "-C", str(workspace), "worktree", "add", "-q", str(workspace / "wt")], check=True)
    bare = repository(workspace / "nohooks")
    shutil.rmtree(bare / ".git" / "hooks")
    (outside_tmp / "home").mkdir()
    configs = {path: path.read_text() for path in (workspace / ".git/config", inner / ".git/config")}
    pointer = (workspace / "wt/.git").read_text()
    user.own(outside_tmp)
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


def test_the_walk_keeps_up_with_repositories_made_and_removed_since(tmp_path: Path):
    workspace = repository(tmp_path / "ws")
    assert git_guard(workspace).pinned == (workspace / ".git",)
    made = repository(workspace / "a" / "b")  # a new folder tree, as `git init a/b` makes it
    assert made / ".git" in git_guard(workspace).pinned
    shutil.rmtree(made / ".git")
    assert git_guard(workspace).pinned == (workspace / ".git",)


def test_the_walk_keeps_track_of_at_most_max_folders(tmp_path: Path):
    workspace = repository(tmp_path / "ws")
    for number in range(MAX_FOLDERS + 50):
        (workspace / "many" / str(number)).mkdir(parents=True)
    repository(workspace / "zz")  # near the top: breadth first, it is read before the many folders' insides
    assert workspace / "zz/.git" in git_guard(workspace).pinned
    assert len(gitguard._walks[workspace].read) == MAX_FOLDERS


def test_a_commondir_that_appears_in_a_git_folder_that_had_none_is_removed_before_the_next_command(tmp_path: Path):
    workspace = repository(tmp_path / "ws")
    assert workspace / ".git/commondir" in git_guard(workspace).absent
    (workspace / ".git/commondir").write_text(str(tmp_path / "elsewhere"))  # while Meowgent was stopped, say
    guard = git_guard(workspace)
    assert not (workspace / ".git/commondir").exists()
    assert workspace / ".git/commondir" not in guard.kept


def test_a_git_folder_whose_config_is_a_link_is_kept_read_only_whole_with_the_links_target(tmp_path: Path):
    workspace = repository(tmp_path / "ws")
    (workspace / ".git/config").rename(workspace / "gitconfig")
    (workspace / ".git/config").symlink_to("../gitconfig")
    guard = git_guard(workspace)
    assert {workspace / ".git", workspace / "gitconfig"} <= set(guard.kept)
    assert workspace / ".git" not in guard.pinned


@needs_sandbox
def test_a_planted_commondir_is_gone_when_the_command_ends_and_git_on_the_host_runs_nothing(
    outside_tmp: Path, user: Runner
):
    workspace = repository(outside_tmp / "workspace")
    (outside_tmp / "home").mkdir()
    user.own(outside_tmp)
    plant = (
        "mkdir -p evil/hooks && printf '#!/bin/sh\\ntouch pwned-hook\\n' > evil/hooks/pre-commit"
        " && chmod +x evil/hooks/pre-commit && cp .git/config evil/config"
        " && printf '[core]\\n\\tfsmonitor = touch pwned-fsmonitor\\n' >> evil/config"
        ' && echo "$PWD/evil" > .git/commondir && git rev-parse --git-common-dir'
    )
    _, planted, after = run_commands(
        user, [plant, "cat .git/commondir || echo gone"], env={"HOME": str(outside_tmp / "home")}, workspace=workspace
    )
    assert "evil" in planted  # inside, for the command's own git
    assert "gone" in after, after
    assert not (workspace / ".git/commondir").exists()
    git_output(workspace, "status")
    git_output(workspace, "commit", "-q", "--allow-empty", "-m", "after")
    assert not list(outside_tmp.rglob("pwned*"))


@needs_sandbox
def test_repositories_the_old_walk_missed_are_guarded_and_a_new_one_from_the_next_command_on(
    outside_tmp: Path, user: Runner
):
    workspace = repository(outside_tmp / "workspace")
    deep = repository(workspace.joinpath(*"abcdefg"))
    dotted = repository(workspace / ".config" / "nvim")
    linked = repository(workspace / "linked")
    (linked / ".git/config").rename(linked / "gitconfig")
    (linked / ".git/config").symlink_to("../gitconfig")
    (outside_tmp / "home").mkdir()
    user.own(outside_tmp)
    configs = {path: path.read_text() for path in (deep / ".git/config", dotted / ".git/config", linked / "gitconfig")}
    hook = (
        "printf '#!/bin/sh\\ntouch pwned\\n' > {0}/.git/hooks/pre-commit; echo x >> {0}/.git/config; mv {0}/.git {0}/g2"
    )
    commands = [
        hook.format("a/b/c/d/e/f/g"),
        hook.format(".config/nvim"),
        "rm -f linked/.git/config; echo '[core] fsmonitor = touch pwned' > linked/.git/config;"
        " echo x >> linked/gitconfig; mv linked/gitconfig linked/g2",
        "git init -q made",
        hook.format("made"),
    ]
    _, deep_out, dotted_out, linked_out, _, made_out = run_commands(
        user, commands, env={"HOME": str(outside_tmp / "home")}, workspace=workspace
    )
    for out in (deep_out, dotted_out, made_out):
        assert out.count(READ_ONLY) == 2, out
        assert BUSY in out, out
    assert linked_out.count(READ_ONLY) == 3, linked_out
    assert BUSY in linked_out, linked_out
    assert {path: path.read_text() for path in configs} == configs
    assert (linked / ".git/config").is_symlink()
    assert not list(outside_tmp.rglob("pwned"))
