"""The workspace guard for the page: paths resolved inside the root, files opened, written and removed by descriptor.

Everything goes through `tools.workspace.Workspace` (realpath check, then an O_NOFOLLOW walk from the root), as the
file tools do; its ToolError (a sentence for the model) becomes a `FileRefused` the page words.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from meowgent.files.errors import FileRefused
from meowgent.files.preview import (
    MAX_IMAGE_BYTES,
    MAX_LINE_CHARS,
    MAX_MARKDOWN_BYTES,
    PAGE_LINES,
    SNIFF_BYTES,
    Binary,
    Image,
    MarkdownText,
    Preview,
    image_type,
    kind_of,
    text_page,
)
from meowgent.tools.spec import ToolError
from meowgent.tools.workspace import Workspace

CHUNK = 1 << 20
"""Bytes read or written at a time: memory stays flat whatever the file's size."""


def resolve(workspace: Workspace, path: str) -> Path:
    """The real path of `path` inside the workspace, or `unsafe_path`."""
    try:
        return workspace.resolve(path)
    except ToolError as exc:
        raise FileRefused("unsafe_path", str(exc), values={"path": path}) from None


@contextlib.contextmanager
def open_file(workspace: Workspace, path: str) -> Iterator[tuple[int, os.stat_result]]:
    """A read-only descriptor of the regular file `path` and its stat, reached without following a link."""
    target = resolve(workspace, path)
    try:
        kind = os.lstat(target).st_mode
    except (FileNotFoundError, NotADirectoryError):
        raise FileRefused("missing", f"{path} does not exist.", values={"path": path}) from None
    if not stat.S_ISREG(kind):
        raise FileRefused("not_file", f"{path} is not a file.", values={"path": path})
    try:
        with workspace.open_file(target) as descriptor:
            yield descriptor, os.fstat(descriptor)
    except ToolError as exc:  # a hard link, or the tree changed meanwhile
        raise FileRefused("unsafe_path", str(exc), values={"path": path}) from None
    except OSError as exc:
        raise FileRefused("io", f"could not read {path}: {exc.strerror}", values={"path": path}) from None


def read_chunks(workspace: Workspace, path: str) -> Iterator[bytes]:
    """The bytes of `path`, a chunk at a time (a download)."""
    with open_file(workspace, path) as (descriptor, _):
        while chunk := os.read(descriptor, CHUNK):
            yield chunk


def preview_file(workspace: Workspace, path: str, *, page: int = 1, page_size: int = PAGE_LINES) -> Preview:
    """What the preview of `path` shows (see `files.preview`), read through the guard."""
    with open_file(workspace, path) as (descriptor, found), os.fdopen(descriptor, "rb", closefd=False) as file:
        relative = workspace.relative(resolve(workspace, path))
        head = file.read(SNIFF_BYTES)
        kind = kind_of(relative, head, found.st_size)
        if kind == "binary":
            return Binary(relative, found.st_size)
        file.seek(0)
        if kind == "image":
            return Image(relative, image_type(head) or "", file.read(MAX_IMAGE_BYTES))
        if kind == "markdown":
            return MarkdownText(relative, file.read(MAX_MARKDOWN_BYTES).decode("utf-8", "replace"))
        return text_page(relative, _line_heads(file), page=page, page_size=page_size)


def read_current(workspace: Workspace, path: str, *, limit: int) -> bytes | None:
    """The whole of `path` if it is a file of at most `limit` bytes; None if nothing is there.

    `too_large` past the limit; `not_file` for a folder or a device.
    """
    target = resolve(workspace, path)
    if not os.path.lexists(target):
        return None
    with open_file(workspace, path) as (descriptor, found):
        if found.st_size > limit:
            raise FileRefused("too_large", f"{path} is over {limit} bytes.", values={"path": path, "limit": limit})
        with os.fdopen(descriptor, "rb", closefd=False) as file:
            return file.read(limit + 1)[:limit]


def write_atomic(workspace: Workspace, path: str, chunks: Iterable[bytes], *, replace: bool) -> int:
    """Write `chunks` to `path` through a temporary file in its folder, then a rename; returns the bytes written.

    Without `replace`, an existing name (file, folder or link) is left alone and the answer is `exists`: the
    temporary file is hard-linked to the name, which fails if anything is there, so no check can race the write.
    With it, a file (or a link: the link itself, never its target) is replaced; a replaced file keeps its mode.
    """
    target = resolve(workspace, path)
    if target != Path(os.path.normpath(workspace.root / path)):
        raise FileRefused("unsafe_path", f"{path} leads through a symbolic link.", values={"path": path})
    temp = f".meowgent-{secrets.token_hex(6)}.tmp"
    try:
        with workspace.open_folder(target.parent, create=True) as folder:
            try:
                found: os.stat_result | None = os.stat(target.name, dir_fd=folder, follow_symlinks=False)
            except FileNotFoundError:
                found = None
            if found is not None and stat.S_ISDIR(found.st_mode):
                raise FileRefused("not_file", f"{path} is a folder.", values={"path": path})
            if found is not None and not replace:
                raise FileRefused("exists", f"{path} exists already.", values={"path": path})
            descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666, dir_fd=folder)
            try:
                written = _fill(descriptor, chunks)
                if found is not None and stat.S_ISREG(found.st_mode):
                    os.chmod(temp, stat.S_IMODE(found.st_mode), dir_fd=folder)
                if replace:
                    os.replace(temp, target.name, src_dir_fd=folder, dst_dir_fd=folder)
                else:
                    _link_new(temp, target.name, folder, path)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(temp, dir_fd=folder)
    except ToolError as exc:
        raise FileRefused("unsafe_path", str(exc), values={"path": path}) from None
    except OSError as exc:
        raise FileRefused("io", f"could not write {path}: {exc.strerror}", values={"path": path}) from None
    return written


def remove_file(workspace: Workspace, path: str) -> None:
    """Remove the file (or link) `path` from its folder, reached without following a link; nothing there is fine."""
    target = resolve(workspace, path)
    try:
        with workspace.open_folder(target.parent) as folder, contextlib.suppress(FileNotFoundError):
            os.unlink(target.name, dir_fd=folder)
    except ToolError as exc:
        raise FileRefused("unsafe_path", str(exc), values={"path": path}) from None
    except OSError as exc:
        raise FileRefused("io", f"could not remove {path}: {exc.strerror}", values={"path": path}) from None


def _line_heads(file: BinaryIO) -> Iterator[bytes]:
    """Each line's first bytes (enough for the preview's longest line), the rest of a long line skipped unread."""
    while head := file.readline(MAX_LINE_CHARS * 4):
        yield head
        while not head.endswith(b"\n") and (head := file.readline(CHUNK)):
            pass


def _fill(descriptor: int, chunks: Iterable[bytes]) -> int:
    written = 0
    with os.fdopen(descriptor, "wb") as file:
        for chunk in chunks:
            file.write(chunk)
            written += len(chunk)
        file.flush()
        os.fsync(file.fileno())
    return written


def _link_new(temp: str, name: str, folder: int, path: str) -> None:
    try:
        os.link(temp, name, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
    except OSError as exc:
        if exc.errno == errno.EEXIST:
            raise FileRefused("exists", f"{path} exists already.", values={"path": path}) from None
        raise
