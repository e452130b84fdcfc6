"""Git's own code in a workspace, which the sandbox keeps read-only: a hook, or `core.fsmonitor` in a repository's
config, runs outside the sandbox at the person's next `git commit` or `git status`.

`git_guard` finds the repositories in the workspace with a bounded walk and says, for each of their git folders,
what to keep read-only (`config`, `hooks`, `commondir`, `config.worktree`, a `.git` file's pointer) and what to
bind onto itself (the git folder, so that `mv .git .git2` and a rebuilt `.git` can't get around the rest: a mount
point can't be renamed). Everything else in the git folder stays writable, so `git add`, `commit` and `switch` work.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MAX_FOLDERS = 2_000
"""Folders the walk looks into per command: a home folder as the workspace must not cost a second per command."""
MAX_DEPTH = 4
"""How deep below the workspace it looks for repositories (~/src/team/project is 3)."""
NOT_WALKED = frozenset({"node_modules", "__pycache__", "site-packages", "target", "build", "dist"})
"""Folders that hold dependencies or build output, not the person's repositories; dot-folders are skipped too."""
_KEPT = ("config", "hooks", "commondir", "config.worktree")


@dataclass(frozen=True)
class GitGuard:
    """What the sandbox does to a workspace's git folders (every path real and inside the workspace)."""

    pinned: tuple[Path, ...] = ()
    """Git folders, bound onto themselves: writable, but they can't be renamed or removed."""
    kept: tuple[Path, ...] = ()
    """Existing config files, hooks folders, `commondir` files and `.git` files: read-only."""
    emptied: tuple[Path, ...] = ()
    """Missing hooks folders: covered by an empty one, so a hook written there is gone when the command ends."""
    blanked: tuple[Path, ...] = ()
    """Missing config files: covered by an empty read-only file."""


def git_guard(workspace: Path) -> GitGuard:
    """What to guard in the repositories found in `workspace` (resolved)."""
    pinned: list[Path] = []
    kept: list[Path] = []
    emptied: list[Path] = []
    blanked: list[Path] = []
    for dot_git in _dot_gits(workspace):
        if os.path.isfile(dot_git):
            kept.append(dot_git)  # its `gitdir:` line must keep pointing where it points
        for git_dir in _git_folders(dot_git, workspace):
            pinned.append(git_dir)
            kept += [git_dir / name for name in _KEPT if os.path.lexists(git_dir / name)]
            # A linked worktree's hooks and config are its main repository's; where no command can create
            # anything, bwrap could not make a mount point either.
            if os.path.lexists(git_dir / "commondir") or not os.access(git_dir, os.W_OK):
                continue
            if not os.path.lexists(git_dir / "hooks"):
                emptied.append(git_dir / "hooks")
            if not os.path.lexists(git_dir / "config"):
                blanked.append(git_dir / "config")
    return GitGuard(*(tuple(sorted(set(paths))) for paths in (pinned, kept, emptied, blanked)))


def _dot_gits(workspace: Path) -> Iterator[Path]:
    """Each `.git` (folder or file) at most MAX_DEPTH below the workspace, breadth first, in at most MAX_FOLDERS
    folders, never through a symbolic link."""
    queue = deque([(workspace, 0)])
    visited = 0
    while queue and visited < MAX_FOLDERS:
        folder, depth = queue.popleft()
        visited += 1
        try:
            with os.scandir(folder) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name == ".git" and not entry.is_symlink():
                yield Path(entry.path)
            elif depth < MAX_DEPTH and _walked(entry):
                queue.append((Path(entry.path), depth + 1))


def _walked(entry: os.DirEntry[str]) -> bool:
    if entry.name.startswith(".") or entry.name in NOT_WALKED or not entry.is_dir(follow_symlinks=False):
        return False
    return not os.path.exists(os.path.join(entry.path, "pyvenv.cfg"))


def _git_folders(dot_git: Path, workspace: Path) -> list[Path]:
    """The git folder behind a `.git` (itself, or where a `.git` file points) when it is in the workspace, and
    the git folders inside it: submodules' (`modules/…`) and linked worktrees' (`worktrees/…`)."""
    git_dir = dot_git if os.path.isdir(dot_git) else _pointed(dot_git)
    if git_dir is None or not git_dir.is_relative_to(workspace):
        return []  # outside the workspace: read-only already
    found = [git_dir]
    for inner in ("modules", "worktrees"):
        found += _inner_git_folders(git_dir / inner, budget=MAX_DEPTH)
    return found


def _inner_git_folders(folder: Path, *, budget: int) -> list[Path]:
    """Folders under `folder` that are git folders (they hold a HEAD), nested submodules included."""
    if budget <= 0 or os.path.islink(folder) or not os.path.isdir(folder):
        return []
    found: list[Path] = []
    try:
        children = sorted(child for child in folder.iterdir() if os.path.isdir(child) and not os.path.islink(child))
    except OSError:
        return []
    for child in children:
        if os.path.isfile(child / "HEAD"):
            found += [child, *_inner_git_folders(child / "modules", budget=budget - 1)]
        else:
            found += _inner_git_folders(child, budget=budget - 1)  # a submodule named a/b lives in modules/a/b
    return found


def _pointed(dot_git: Path) -> Path | None:
    """Where a `.git` file's `gitdir:` line points (real), or None if it is not one."""
    try:
        line = dot_git.read_text(encoding="utf-8", errors="replace").partition("\n")[0]
    except OSError:
        return None
    if not line.startswith("gitdir:"):
        return None
    return Path(os.path.realpath(dot_git.parent / line.removeprefix("gitdir:").strip()))
