"""The whole workspace as a zip, built as a stream of chunks, with a cap on the bytes it holds.

`plan` walks the tree first (as search_files does: no link followed; version control, dependency and virtual
environment folders left out), adds up the sizes and refuses past the cap before a byte is sent. `zip_chunks` then
writes the zip into a write-only sink that hands its bytes on, so memory stays at about one chunk. Files opened
through the guard; what cannot be (a link, a hard-linked file, a device) and the folders left out are listed in
`MEOWGENT-LEFT-OUT.txt` inside the zip, so nothing is missing silently.

"What .gitignore hides": `git check-ignore --stdin` when git is installed and the workspace is a repository (git's
own rules, every .gitignore and .git/info/exclude); otherwise the root .gitignore's patterns without `!`, each a
glob matched as search_files' globs are (no '/': the name at any depth; with '/': the path from the root).
"""

from __future__ import annotations

import os
import subprocess
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from meowgent.files.access import CHUNK, open_file, read_current
from meowgent.files.errors import FileRefused
from meowgent.files.sizes import human_size
from meowgent.tools.grep import glob_matcher, walk
from meowgent.tools.spec import ToolError
from meowgent.tools.trusted import host_program
from meowgent.tools.workspace import Workspace

LEFT_OUT = "MEOWGENT-LEFT-OUT.txt"
_GIT_SECONDS = 30.0
_GITIGNORE_BYTES = 1 << 20


@dataclass(frozen=True)
class ZipPlan:
    files: tuple[tuple[str, int], ...]
    """(relative path, size) of each regular file to put in, in the walk's order."""
    total: int
    left_out: tuple[tuple[str, str], ...]
    """(relative path, why) of what is not in the zip."""


def plan(workspace: Workspace, *, cap: int, skip_ignored: bool = False) -> ZipPlan:
    """What the zip will hold; `zip_too_large` if its files add up to more than `cap` bytes."""
    skipped: list[str] = []
    entries = list(walk(workspace.root, skipped=skipped))
    folders = [(path, entry.is_dir(follow_symlinks=False)) for path, entry in entries]
    hidden = _ignored(workspace.root, folders) if skip_ignored else set()
    files: list[tuple[str, int]] = []
    left_out = [(path, "not searched or zipped (version control, dependencies)") for path in skipped]
    total = 0
    for path, entry in entries:
        if hidden and _hidden(path, hidden):
            continue
        if entry.is_symlink():
            left_out.append((path, "a symbolic link"))
        elif entry.is_file(follow_symlinks=False):
            size = entry.stat(follow_symlinks=False).st_size
            files.append((path, size))
            total += size
    if total > cap:
        raise FileRefused(
            "zip_too_large",
            f"the workspace holds {total} bytes of files, over {cap}.",
            values={"limit": human_size(cap)},
        )
    return ZipPlan(tuple(files), total, tuple(left_out))


def zip_chunks(workspace: Workspace, zip_plan: ZipPlan, *, cap: int) -> Iterator[bytes]:
    """The zip's bytes, a chunk at a time. A file that grew past the cap meanwhile stops it with `zip_too_large`."""
    sink = _Sink()
    left_out = list(zip_plan.left_out)
    written = 0
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1, allowZip64=True) as archive:
        for path, _ in zip_plan.files:
            try:
                with open_file(workspace, path) as (descriptor, found):
                    info = _member(path, found)
                    with archive.open(info, "w", force_zip64=found.st_size > 2**31) as member:
                        while chunk := os.read(descriptor, CHUNK):
                            written += len(chunk)
                            if written > cap:
                                raise FileRefused(
                                    "zip_too_large", "the files grew past the cap.", values={"limit": human_size(cap)}
                                )
                            member.write(chunk)
                            yield from sink.take()
            except FileRefused as refused:
                if refused.kind == "zip_too_large":
                    raise
                left_out.append((path, refused.kind.replace("_", " ")))
            yield from sink.take()
        if left_out:
            archive.writestr(LEFT_OUT, "".join(f"{path}: {why}\n" for path, why in left_out))
    yield from sink.take()


def _member(path: str, found: os.stat_result) -> zipfile.ZipInfo:
    """The zip entry of a file from its descriptor's stat (the name's may be another file by now)."""
    stamp = max(time.localtime(found.st_mtime)[:6], (1980, 1, 1, 0, 0, 0))  # zip dates start in 1980
    info = zipfile.ZipInfo(path, stamp)
    info.external_attr = (found.st_mode & 0xFFFF) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


class _Sink:
    """A write-only, unseekable file for ZipFile: what it is given waits in `take()`."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._position = 0

    def write(self, data: bytes) -> int:
        self._parts.append(bytes(data))
        self._position += len(data)
        return len(data)

    def tell(self) -> int:
        return self._position

    def flush(self) -> None:
        """Nothing is buffered here."""

    def take(self) -> Iterator[bytes]:
        if self._parts:
            joined = b"".join(self._parts)
            self._parts.clear()
            yield joined


def _ignored(root: Path, paths: list[tuple[str, bool]]) -> set[str]:
    """The paths (folders with a trailing '/') that .gitignore hides."""
    asked = [path + "/" if folder else path for path, folder in paths]
    git = host_program("git", root)  # never a git a command put on PATH inside the workspace
    if git and (root / ".git").exists():
        try:
            return _git_ignored(str(git), root, asked)
        except (OSError, subprocess.SubprocessError):
            pass  # a broken repository: the root .gitignore's patterns still apply
    return _pattern_ignored(root, asked)


def _git_ignored(git: str, root: Path, asked: list[str]) -> set[str]:
    # fsmonitor off: a workspace's own .git/config must not make us run a program of its choosing.
    done = subprocess.run(
        [git, "-c", "core.fsmonitor=false", "check-ignore", "--stdin", "-z", "--no-index"],
        cwd=root,
        input="\0".join(asked).encode("utf-8", "surrogateescape"),
        capture_output=True,
        timeout=_GIT_SECONDS,
        check=False,
    )
    if done.returncode not in (0, 1):  # 1: nothing is ignored
        raise subprocess.SubprocessError(done.stderr.decode("utf-8", "replace"))
    return {name.decode("utf-8", "surrogateescape") for name in done.stdout.split(b"\0") if name}


def _pattern_ignored(root: Path, asked: list[str]) -> set[str]:
    matchers = _root_patterns(root)
    return {path for path in asked if any(matches(path) for matches in matchers)}


def _root_patterns(root: Path) -> list[Callable[[str], bool]]:
    # Through the guard: a .gitignore that is a link out, a FIFO (which would hang the read) or huge is not read.
    try:
        data = read_current(Workspace(root), ".gitignore", limit=_GITIGNORE_BYTES)
    except FileRefused:
        return []
    lines = (data or b"").decode("utf-8", "replace").splitlines()
    matchers = []
    for line in lines:
        pattern = line.strip()
        if not pattern or pattern.startswith(("#", "!")) or ".." in pattern.split("/"):
            continue
        folder_only = pattern.endswith("/")
        pattern = pattern.strip("/")
        if not pattern:
            continue
        try:
            glob = glob_matcher(pattern, ".gitignore")
        except ToolError:
            continue
        matchers.append(_matcher(glob, folder_only=folder_only))
    return matchers


def _matcher(glob: Callable[[str], bool], *, folder_only: bool) -> Callable[[str], bool]:
    def matches(path: str) -> bool:
        is_folder = path.endswith("/")
        return (is_folder or not folder_only) and glob(path.rstrip("/"))

    return matches


def _hidden(path: str, hidden: set[str]) -> bool:
    """Whether the path, or a folder it is in, is hidden."""
    if path in hidden or path + "/" in hidden:
        return True
    parts = path.split("/")
    return any("/".join(parts[:depth]) + "/" in hidden for depth in range(1, len(parts)))
