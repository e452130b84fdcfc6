"""The workspace guard for the page: paths resolved inside the root, files opened, written and removed by descriptor.

Everything goes through `tools.workspace.Workspace` (realpath check, then an O_NOFOLLOW walk from the root), as the
file tools do; its ToolError (a sentence for the model) becomes a `FileRefused` the page words.
"""

from __future__ import annotations

import contextlib
import os
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
from meowgent.tools.atomicwrite import Wrote
from meowgent.tools.spec import ToolError
from meowgent.tools.workspace import Changed, Workspace

CHUNK = 1 << 20
"""Bytes read or written at a time: memory stays flat whatever the file's size."""


def resolve(workspace: Workspace, path: str) -> Path:
    """The real path of `path` inside the workspace, or `unsafe_path`."""
    try:
        return workspace.resolve(path)
    except ToolError as exc:
        raise FileRefused("unsafe_path", str(exc), values={"path": path}) from None


def refused_by_guard(error: ToolError, path: str) -> FileRefused:
    """The workspace guard's refusal as the page's: `changed` for a race it lost, else `unsafe_path`."""
    return FileRefused("changed" if isinstance(error, Changed) else "unsafe_path", str(error), values={"path": path})


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
        raise refused_by_guard(exc, path) from None
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


def write_atomic(workspace: Workspace, path: str, chunks: Iterable[bytes], *, replace: bool) -> Wrote:
    """Write `chunks` to `path` through a temporary file in its folder, then one step to the name (`Workspace.write`).

    Without `replace`, an existing name (file, folder or link) is left alone and the answer is `exists`: the
    temporary file is hard-linked to the name, which fails if anything is there, so no check can race the write.
    With it, a file (or a link: the link itself, never its target) is replaced; a replaced file keeps its mode.
    A temporary file swapped meanwhile is `changed`.
    """
    target = resolve(workspace, path)
    values = {"path": path}
    if target != Path(os.path.normpath(workspace.root / path)):
        raise FileRefused("unsafe_path", f"{path} leads through a symbolic link.", values=values)
    try:
        return workspace.write(target, chunks, replace=replace)
    except ToolError as exc:
        raise refused_by_guard(exc, path) from None
    except IsADirectoryError:
        raise FileRefused("not_file", f"{path} is a folder.", values=values) from None
    except FileExistsError:
        raise FileRefused("exists", f"{path} exists already.", values=values) from None
    except OSError as exc:
        raise FileRefused("io", f"could not write {path}: {exc.strerror}", values=values) from None


def remove_file(workspace: Workspace, path: str) -> None:
    """Remove the file (or link) `path` from its folder, reached without following a link; nothing there is fine."""
    target = resolve(workspace, path)
    try:
        with workspace.open_folder(target.parent) as folder, contextlib.suppress(FileNotFoundError):
            os.unlink(target.name, dir_fd=folder)
    except ToolError as exc:
        raise refused_by_guard(exc, path) from None
    except OSError as exc:
        raise FileRefused("io", f"could not remove {path}: {exc.strerror}", values={"path": path}) from None


def _line_heads(file: BinaryIO) -> Iterator[bytes]:
    """Each line's first bytes (enough for the preview's longest line), the rest of a long line skipped unread."""
    while head := file.readline(MAX_LINE_CHARS * 4):
        yield head
        while not head.endswith(b"\n") and (head := file.readline(CHUNK)):
            pass
