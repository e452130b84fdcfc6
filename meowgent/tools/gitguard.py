"""Git's own code in a workspace, which the sandbox keeps read-only: a hook, or `core.fsmonitor` in a repository's
config, runs outside the sandbox at the person's next `git commit` or `git status`.

`git_guard` finds the repositories in the workspace with a bounded walk and says, for each of their git folders,
what to keep read-only (`config`, `hooks`, `commondir`, `config.worktree`, a `.git` file's pointer) and what to
bind onto itself (the git folder, so that `mv .git .git2` and a rebuilt `.git` can't get around the rest: a mount
point can't be renamed). Everything else in the git folder stays writable, so `git add`, `commit` and `switch` work.

The walk is kept up to date at every command for one stat per folder it keeps track of: a folder whose time stamp
changed is read again, so a repository made by a command (or by the person) is guarded from the next command on.
A `commondir` planted where there was none is removed when the command ends (`remove_planted`), as no cover can
stand in for a missing one."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

MAX_FOLDERS = 2_000
"""Folders the walk keeps track of: a home folder as the workspace must not cost seconds. Breadth first, so in a
larger workspace the deepest folders are the ones left out."""
RACY_NANOSECONDS = 2_000_000_000
"""A folder changed this close before it was read may change again under the same time stamp (file systems keep
coarse times, 2 s on FAT): it is read again at the next command, as git does with a racy index."""
NOT_WALKED = frozenset({".git", "node_modules", "__pycache__", "site-packages", "target", "build", "dist"})
"""Folders that hold dependencies, build output or a git folder's insides, not the person's repositories.
Dot-folders are walked: `~/.oh-my-zsh`, `~/.pyenv` and `~/.config/nvim` are repositories the person updates."""
SUBMODULE_DEPTH = 8
"""How deep under a git folder's `modules` and `worktrees` it looks for their git folders (submodule `a/b` is 2)."""
_KEPT = ("config", "hooks", "commondir", "config.worktree")
_PLANTED = "commondir"
"""Sends git to another folder's config and hooks. No cover can stand in for a missing one: the mount point left
behind would be an empty `commondir`, which stops git. A git folder that had none never gets one (git makes it
only in a linked worktree's new git folder), so one that appears is removed."""


@dataclass(frozen=True)
class GitGuard:
    """What the sandbox does to a workspace's git folders (every path real and inside the workspace)."""

    pinned: tuple[Path, ...] = ()
    """Git folders, bound onto themselves: writable, but they can't be renamed or removed."""
    kept: tuple[Path, ...] = ()
    """Existing config files, hooks folders, `commondir` files and `.git` files: read-only. Also a git folder in
    which one of those is a symbolic link (the link could be replaced, not its target), whole, and the link's
    target."""
    emptied: tuple[Path, ...] = ()
    """Missing hooks folders: covered by an empty one, so a hook written there is gone when the command ends."""
    blanked: tuple[Path, ...] = ()
    """Missing config files: covered by an empty read-only file."""
    absent: tuple[Path, ...] = ()
    """Missing `commondir` files of writable git folders: one a command creates is removed when it ends
    (`remove_planted`), and before any later command starts."""


def git_guard(workspace: Path) -> GitGuard:
    """What to guard in the repositories found in `workspace` (resolved). First, a `commondir` that appeared
    where one was missing before is removed (a command that ran alongside, or ran when Meowgent stopped)."""
    with _walking:
        remove_planted(_absent_before)
    paths: dict[str, list[Path]] = {name: [] for name in ("pinned", "kept", "emptied", "blanked", "absent")}
    for dot_git in _repositories(workspace):
        if os.path.isfile(dot_git):
            paths["kept"].append(dot_git)  # its `gitdir:` line must keep pointing where it points
        for git_dir in _git_folders(dot_git, workspace):
            _guard_folder(git_dir, paths)
    with _walking:
        _absent_before.update(paths["absent"])
    return GitGuard(**{name: tuple(sorted(set(found))) for name, found in paths.items()})


def _guard_folder(git_dir: Path, paths: dict[str, list[Path]]) -> None:
    """Add what guards one git folder to `paths`."""
    links = [git_dir / name for name in _KEPT if os.path.islink(git_dir / name)]
    if links:
        _guard_linked(git_dir, links, paths)
        return
    paths["pinned"].append(git_dir)
    paths["kept"] += [git_dir / name for name in _KEPT if os.path.lexists(git_dir / name)]
    # Where no command can create anything, bwrap could not make a mount point either.
    if not os.access(git_dir, os.W_OK):
        return
    if not os.path.lexists(git_dir / "config.worktree") and _worktree_config(git_dir):
        paths["blanked"].append(git_dir / "config.worktree")  # an empty config is a valid one
    if os.path.lexists(git_dir / _PLANTED):
        return  # a linked worktree's hooks and config are its main repository's
    paths["absent"].append(git_dir / _PLANTED)
    if not os.path.lexists(git_dir / "hooks"):
        paths["emptied"].append(git_dir / "hooks")
    if not os.path.lexists(git_dir / "config"):
        paths["blanked"].append(git_dir / "config")


def _guard_linked(git_dir: Path, links: list[Path], paths: dict[str, list[Path]]) -> None:
    """A git folder whose config, hooks or commondir is a symbolic link: the link could be replaced in a writable
    folder whatever covers its target, so the folder is read-only whole (git can't commit there from the sandbox),
    and so is the target, or it is covered as missing."""
    paths["kept"].append(git_dir)
    for link in links:
        target = Path(os.path.realpath(link))
        if os.path.exists(target):
            paths["kept"].append(target)
        elif link.name == "hooks":
            paths["emptied"].append(target)
        elif link.name in ("config", "config.worktree"):
            paths["blanked"].append(target)


def _worktree_config(git_dir: Path) -> bool:
    """Whether git reads `config.worktree` here: `extensions.worktreeConfig` in the repository's config (its own,
    or its main repository's for a linked worktree). Read loosely: a false yes only leaves an empty file."""
    common = git_dir
    with contextlib.suppress(OSError):
        common = git_dir / (git_dir / _PLANTED).read_text(encoding="utf-8", errors="replace").strip()
    try:
        return "worktreeconfig" in (common / "config").read_text(encoding="utf-8", errors="replace").lower()
    except OSError:
        return False


def remove_planted(absent: Iterable[Path]) -> list[Path]:
    """Remove what a command created at paths that were missing when it started (`GitGuard.absent`), never
    following a link; the paths removed."""
    removed = []
    for path in absent:
        try:
            folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue  # the git folder is gone: nothing in it is read
        try:
            found = os.stat(path.name, dir_fd=folder, follow_symlinks=False)
            if stat.S_ISDIR(found.st_mode):
                shutil.rmtree(path.name, dir_fd=folder)
            else:
                os.unlink(path.name, dir_fd=folder)
            removed.append(path)
        except OSError:
            pass  # gone already; or a folder we can't empty, which git can't read either: it stops there
        finally:
            os.close(folder)
    return removed


@dataclass
class _Walk:
    """The folders of one workspace the walk has read, each with its stamp when read, and the `.git`s in them."""

    read: dict[Path, tuple[int, int, int] | None] = field(default_factory=dict)
    """Each folder read or queued, with (device, inode, mtime in ns) when read; None when queued or racy (read again
    next time)."""
    found: set[Path] = field(default_factory=set)


_absent_before: set[Path] = set()
"""Every `GitGuard.absent` path of this process (guarded by `_walking`)."""
_walks: dict[Path, _Walk] = {}
"""Each workspace's walk, kept up to date at every command (a cache of this process)."""
_walking = threading.Lock()


def _repositories(workspace: Path) -> list[Path]:
    """The `.git`s in the workspace: its own, looked for now, and every one in the folders the walk keeps track of,
    each of these looked at again (one stat) and read again where it changed."""
    with _walking:
        walk = _walks.setdefault(workspace, _Walk())
        _refresh(walk, workspace)
        found = dict.fromkeys([workspace / ".git", *sorted(walk.found)])
    return [dot_git for dot_git in found if os.path.lexists(dot_git) and not os.path.islink(dot_git)]


def _stamp(folder: Path) -> tuple[int, int, int] | None:
    """What changes when an entry of `folder` is added, removed or renamed, or `folder` is replaced."""
    try:
        found = os.stat(folder, follow_symlinks=False)
    except OSError:
        return None
    return (found.st_dev, found.st_ino, found.st_mtime_ns) if stat.S_ISDIR(found.st_mode) else None


def _refresh(walk: _Walk, workspace: Path) -> None:
    """Bring `walk` up to date: folders gone are forgotten, changed ones read again, and new folders read, breadth
    first, while fewer than MAX_FOLDERS are kept track of."""
    queue: deque[Path] = deque()
    if not walk.read:
        walk.read[workspace] = None
    for folder, then in list(walk.read.items()):
        now = _stamp(folder)
        if now is None:
            del walk.read[folder]
            walk.found.discard(folder / ".git")
        elif now != then:  # None, never equal to a stamp: not read yet, or racy
            queue.append(folder)
    while queue:
        _read(queue.popleft(), walk, queue)


def _read(folder: Path, walk: _Walk, queue: deque[Path]) -> None:
    """Read one folder: note its `.git`, and queue the subfolders not read yet (never through a symbolic link, nor
    into a virtualenv)."""
    stamp = _stamp(folder)  # before reading: a change while it is read shows at the next command
    racy = stamp is None or stamp[2] >= time.time_ns() - RACY_NANOSECONDS
    walk.read[folder] = None if racy else stamp
    try:
        with os.scandir(folder) as scan:
            entries = list(scan)
    except OSError:
        return
    names = {entry.name for entry in entries}
    if ".git" in names:
        walk.found.add(folder / ".git")
    else:
        walk.found.discard(folder / ".git")
    if "pyvenv.cfg" in names:
        return
    for entry in entries:
        if len(walk.read) >= MAX_FOLDERS:
            return
        path = Path(entry.path)
        if path not in walk.read and _walked(entry):
            walk.read[path] = None  # queued: counted, and read at the next command if this one stops first
            queue.append(path)


def _walked(entry: os.DirEntry[str]) -> bool:
    return entry.name not in NOT_WALKED and entry.is_dir(follow_symlinks=False)


def _git_folders(dot_git: Path, workspace: Path) -> list[Path]:
    """The git folder behind a `.git` (itself, or where a `.git` file points) when it is in the workspace, and
    the git folders inside it: submodules' (`modules/…`) and linked worktrees' (`worktrees/…`)."""
    git_dir = dot_git if os.path.isdir(dot_git) else _pointed(dot_git)
    if git_dir is None or not git_dir.is_relative_to(workspace):
        return []  # outside the workspace: read-only already
    found = [git_dir]
    for inner in ("modules", "worktrees"):
        found += _inner_git_folders(git_dir / inner, budget=SUBMODULE_DEPTH)
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
