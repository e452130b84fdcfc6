"""Workspace: the one folder the file tools may touch; every path goes through `resolve`, every file through `open`.

`resolve` checks a path by name. Between that check and an open, a folder on the way could become a
symbolic link to somewhere outside, so the file tools never open by name: `open_file` and
`open_folder` walk from the root one folder at a time with O_NOFOLLOW, each step relative to the
descriptor of the one before. Whatever they return is inside the root, whatever happens meanwhile.
`write` writes into the folder so reached, by descriptor (`tools.atomicwrite`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from meowgent.tools.atomicwrite import TempSwapped, Wrote, write_in
from meowgent.tools.spec import ToolError


class Changed(ToolError):
    """A folder or file on the way, or a write's temporary file, was moved or replaced while it was in use."""


class OutsideWorkspace(ToolError):
    """A path that leaves the workspace (`path` as the call wrote it); the message says so to the model."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


class Workspace:
    """A root folder, and the rule that every path a tool uses must resolve inside it."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).resolve()

    def resolve(self, path: str) -> Path:
        """The real path `path` names (relative to the root, symlinks followed), or ToolError if it leaves the root.

        The empty string names the root. Paths that do not exist yet are fine as long as they would be
        inside. Checking after following symlinks is what makes a link pointing outside harmless.
        """
        if "\0" in path:
            raise ToolError(f"{path!r} contains a NUL character, which no file name can contain; remove it.")
        candidate = self.root / path  # an absolute `path` replaces the root; the check below catches it
        try:
            resolved = candidate.resolve()
        except RuntimeError:  # Python up to 3.12 reports symlink loops this way
            raise ToolError(self._loop_message(path)) from None
        # realpath does not always report a loop: past one it goes on by the letter, so `loop/../link` comes back
        # as `link`, unfollowed. The kernel's own walk of the path as given does report it; stat also catches
        # unusable names.
        for probe in (candidate, resolved):
            try:
                probe.stat()
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise ToolError(self._loop_message(path)) from None
                if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
                    raise ToolError(f"cannot use the path {path!r}: {exc.strerror}.") from None
        if not resolved.is_relative_to(self.root):
            raise OutsideWorkspace(
                f"{path!r} is outside the workspace {self.root}{self._via_link(path, resolved)}; "
                "use a path inside it, such as 'notes.md'.",
                path,
            )
        return resolved

    @contextlib.contextmanager
    def open_folder(self, path: Path, *, create: bool = False) -> Iterator[int]:
        """A descriptor of the folder `path` (resolved inside the root), reached without following any link.

        `create` makes the missing folders on the way. ToolError if the tree changed since `path` was resolved.
        """
        descriptor = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for part in path.relative_to(self.root).parts:
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, dir_fd=descriptor)
                try:
                    inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=descriptor)
                except OSError as exc:
                    if exc.errno == errno.ENOTDIR and not _is_link(part, descriptor):
                        raise  # a file where a folder should be: the caller says it could not
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
                        raise self._changed(path) from None
                    raise
                os.close(descriptor)
                descriptor = inner
            yield descriptor
        finally:
            os.close(descriptor)

    @contextlib.contextmanager
    def open_file(self, path: Path) -> Iterator[int]:
        """A read-only descriptor of the regular file `path` (resolved inside the root), reached without links.

        Refuses a file with more than one hard link: its other names may be outside the workspace.
        """
        with self.open_folder(path.parent) as folder:
            try:  # O_NONBLOCK: a FIFO put there meanwhile must not hang the open
                descriptor = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOENT):
                    raise self._changed(path) from None
                raise
        try:
            found = os.fstat(descriptor)
            if not stat.S_ISREG(found.st_mode):
                raise ToolError(f"{self.relative(path)} is not a regular file; the file tools only handle files.")
            if found.st_nlink > 1:
                raise ToolError(_hard_link_message(self.relative(path), found.st_nlink))
            os.set_blocking(descriptor, True)
            yield descriptor
        finally:
            os.close(descriptor)

    def write(self, path: Path, chunks: Iterable[bytes], *, replace: bool) -> Wrote:
        """Write `path` (resolved inside the root) atomically, its missing folders made, never through a link.

        See `atomicwrite.write_in` for `replace` and the errors; Changed if the temporary file was swapped meanwhile.
        """
        with self.open_folder(path.parent, create=True) as folder:
            try:
                return write_in(folder, path.name, chunks, replace=replace)
            except TempSwapped:
                raise Changed(
                    f"{self.relative(path)} was not written: while it was being written, its temporary file was "
                    "moved or replaced by something else (such as a command still running), so it was left as it "
                    "was; check it with read_file and try again."
                ) from None

    def _changed(self, path: Path) -> Changed:
        return Changed(
            f"{self.relative(path)} changed while it was being opened (a folder or file on the way was "
            "removed, replaced or became a symbolic link); check it with list_files and try again."
        )

    def relative(self, path: Path) -> str:
        """`path` (already resolved inside the root) as the model should write it: posix style, '.' for the root."""
        return path.relative_to(self.root).as_posix()

    def _via_link(self, path: str, resolved: Path) -> str:
        """Say so when only a symlink takes the path outside: the model would not guess that from the name."""
        if Path(os.path.normpath(self.root / path)).is_relative_to(self.root):
            return f" (a symbolic link leads to {resolved})"
        return ""

    def _loop_message(self, path: str) -> str:
        return f"{path!r} leads into a symlink loop (links that point back to each other); use a different path."


def _is_link(name: str, folder: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _hard_link_message(name: str, links: int) -> str:
    """Why a file with several hard links is refused, for the model."""
    return (
        f"{name} has {links} hard links (names for the same file), and the others may be outside the workspace, "
        "so the file tools do not open it. Ask the person to replace it with a copy of its own if it should be used."
    )
