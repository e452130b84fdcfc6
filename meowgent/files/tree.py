"""The workspace as a tree: one folder at a time (newest changes first), and a search by name over all of it.

A folder is listed through a descriptor reached without following links (`Workspace.open_folder`), and a link is
shown as a link, never followed. The search walks as search_files does (`tools.grep.walk`: no link followed) and
says which folders it did not enter, so nothing is left out silently.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Literal

from meowgent.files.access import refused_by_guard, resolve
from meowgent.files.errors import FileRefused
from meowgent.tools.grep import walk
from meowgent.tools.spec import ToolError
from meowgent.tools.workspace import Workspace

EntryKind = Literal["file", "folder", "link", "other"]

SEARCH_LIMIT = 200
"""Names a search returns at most; the panel says there are more."""


@dataclass(frozen=True, slots=True)
class Entry:
    path: str
    """Relative to the workspace, posix style."""
    kind: EntryKind
    size: int
    mtime: float


@dataclass(frozen=True, slots=True)
class Found:
    entries: tuple[Entry, ...]
    """The first matches, in the walk's order (folders before what is in them, names sorted)."""
    more: bool
    """More names matched than were returned."""
    skipped: tuple[str, ...]
    """Folders not searched (version control, dependencies, virtual environments), as search_files skips them."""


def list_folder(workspace: Workspace, folder: str = "") -> tuple[Entry, ...]:
    """What is directly in `folder` (the root by default), the most recently changed first."""
    target = resolve(workspace, folder)
    if not target.is_dir():
        raise FileRefused("not_folder", f"{folder} is not a folder.", values={"path": folder})
    prefix = "" if target == workspace.root else workspace.relative(target) + "/"
    try:
        with workspace.open_folder(target) as descriptor, os.scandir(descriptor) as scan:
            entries = [_entry(prefix + item.name, item.stat(follow_symlinks=False)) for item in scan]
    except ToolError as exc:
        raise refused_by_guard(exc, folder) from None
    except OSError as exc:
        raise FileRefused("io", f"could not list {folder}: {exc.strerror}", values={"path": folder}) from None
    entries.sort(key=lambda entry: (-entry.mtime, entry.path))
    return tuple(entries)


def search(workspace: Workspace, query: str, *, limit: int = SEARCH_LIMIT) -> Found:
    """Files and folders whose name contains `query`, ignoring case; one pass over the tree, stopping past `limit`."""
    wanted = query.strip().casefold()
    skipped: list[str] = []
    found: list[Entry] = []
    more = False
    if wanted:
        for relpath, item in walk(workspace.root, skipped=skipped):
            if wanted in item.name.casefold():
                if len(found) == limit:
                    more = True
                    break
                found.append(_entry(relpath, item.stat(follow_symlinks=False)))
    return Found(tuple(found), more, tuple(skipped))


def _entry(path: str, found: os.stat_result) -> Entry:
    mode = found.st_mode
    kind: EntryKind = (
        "folder" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "link" if stat.S_ISLNK(mode) else "other"
    )
    return Entry(path, kind, found.st_size if kind == "file" else 0, found.st_mtime)
