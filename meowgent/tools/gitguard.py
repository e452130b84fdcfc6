"""Git's own code in a workspace, which the sandbox keeps read-only: a hook, or `core.fsmonitor` in a repository's
config, runs outside the sandbox at the person's next `git commit` or `git status`.

`git_guard` finds the repositories in the workspace with a bounded walk and says, for each of their git folders,
what to keep read-only (`config`, `hooks`, `commondir`, `config.worktree`, a `.git` file's pointer) and what to
bind onto itself (the git folder, so that `mv .git .git2` and a rebuilt `.git` can't get around the rest: a mount
point can't be renamed). Everything else in the git folder stays writable, so `git add`, `commit` and `switch` work.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MAX_FOLDERS = 2_000
"""Folders one walk looks into: a home folder as the workspace must not cost seconds."""
REWALK_SECONDS = 30.0
"""How long the repositories a walk found are trusted to be all there are: a walk of 2,000 folders takes a few
hundred milliseconds, too much for every command. The workspace's own `.git` is looked for at every command."""
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
    for dot_git in _repositories(workspace):
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


_walked_at: dict[Path, tuple[float, tuple[Path, ...]]] = {}
"""The last walk of each workspace: when, and the `.git`s it found (a cache of this process, see REWALK_SECONDS)."""
_walks = threading.Lock()


def _repositories(workspace: Path) -> list[Path]:
    """The `.git`s in the workspace: its own, looked for now, and those of the last walk that are still there."""
    now = time.monotonic()
    with _walks:
        last = _walked_at.get(workspace)
    if last is None or now - last[0] > REWALK_SECONDS:
        last = (now, tuple(_dot_gits(workspace)))
        with _walks:
            _walked_at[workspace] = last
    found = dict.fromkeys([workspace / ".git", *last[1]])
    return [dot_git for dot_git in found if os.path.lexists(dot_git) and not os.path.islink(dot_git)]


def _dot_gits(workspace: Path) -> Iterator[Path]:
    """Each `.git` (folder or file) at most MAX_DEPTH below the workspace, breadth first, in at most MAX_FOLDERS
    folders, never through a symbolic link nor into a virtualenv."""
    queue = deque([(workspace, 0)])
    visited = 0
    while queue and visited < MAX_FOLDERS:
        folder, depth = queue.popleft()
        visited += 1
        try:
            with os.scandir(folder) as scan:
                entries = list(scan)
        except OSError:
            continue
        names = {entry.name for entry in entries}
        if ".git" in names and not os.path.islink(folder / ".git"):
            yield folder / ".git"
        if depth < MAX_DEPTH and "pyvenv.cfg" not in names:
            queue += [(Path(entry.path), depth + 1) for entry in entries if _walked(entry)]


def _walked(entry: os.DirEntry[str]) -> bool:
    return not (entry.name.startswith(".") or entry.name in NOT_WALKED) and entry.is_dir(follow_symlinks=False)


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
