"""One atomic write into a folder held by its descriptor: a temporary file, filled, then given the name in one step.

Another process that can write the folder (a command of another chat, a sandboxed MCP server) can swap the
temporary name for a symbolic link at any moment, for instance to a file outside the workspace. So nothing here
goes back to the temporary file by its name: it is made with O_EXCL and O_NOFOLLOW, its mode is set with fchmod
on the descriptor, and just before the rename the name is checked to still be that file (st_dev, st_ino). The
rename, the link and the clean-up act on names in the folder and never follow a link. The worst such a process can
do is make the write refuse (`TempSwapped`) or put its own link at the name, which it could have done anyway.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Wrote:
    size: int
    """Bytes written."""
    created: bool
    """Nothing had the name before."""


class TempSwapped(Exception):
    """The temporary name was no longer the file written when it was to take the name: something else is there."""


def write_in(folder: int, name: str, chunks: Iterable[bytes], *, replace: bool) -> Wrote:
    """Write `chunks` as `name` in the folder `folder` (a descriptor); a replaced regular file keeps its mode.

    Without `replace`, an existing name (anything: file, folder or link) raises FileExistsError, before and, through
    a hard link that cannot overwrite, after the write. A folder at the name raises IsADirectoryError.
    """
    found = _lstat(name, folder)
    if found is not None and stat.S_ISDIR(found.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
    if found is not None and not replace:
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), name)
    mode = stat.S_IMODE(found.st_mode) if found is not None and stat.S_ISREG(found.st_mode) else None
    size, _ = write_then_name(folder, chunks, lambda: name, replace=replace, mode=mode)
    return Wrote(size, created=found is None)


def write_then_name(
    folder: int,
    chunks: Iterable[bytes],
    name: Callable[[], str | None],
    *,
    replace: bool = True,
    mode: int | None = None,
    new_mode: int = 0o666,
) -> tuple[int, str | None]:
    """Write `chunks` to a new temporary file in the folder `folder` (a descriptor), then give it the name `name()`
    returns once every chunk is written (a blob named by its hash), or drop it if that is None. The bytes written,
    and the name. `mode` is set on the descriptor; a new file gets `new_mode` less the umask."""
    temp = f".meowgent-{secrets.token_hex(6)}.tmp"
    descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, new_mode, dir_fd=folder)
    mine = os.fstat(descriptor)
    try:
        size = _fill(descriptor, chunks)
        if mode is not None:
            os.fchmod(descriptor, mode)
        os.fsync(descriptor)
        final = name()
        if final is None:
            return size, None
        if not _is_mine(temp, folder, mine):
            raise TempSwapped(temp)
        if replace:
            os.replace(temp, final, src_dir_fd=folder, dst_dir_fd=folder)
        else:
            os.link(temp, final, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
        return size, final
    finally:
        # Our descriptor stays open until here, so no other file can reuse the inode the check compares with.
        if _is_mine(temp, folder, mine):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=folder)
        os.close(descriptor)


def _fill(descriptor: int, chunks: Iterable[bytes]) -> int:
    written = 0
    with os.fdopen(descriptor, "wb", closefd=False) as file:
        for chunk in chunks:
            file.write(chunk)
            written += len(chunk)
    return written


def _lstat(name: str, folder: int) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _is_mine(name: str, folder: int, mine: os.stat_result) -> bool:
    """Whether `name` in the folder is, itself and not through a link, the file `mine` describes."""
    now = _lstat(name, folder)
    return now is not None and (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino)
