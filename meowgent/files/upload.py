"""Uploads: the person's files into the workspace (or a folder in it), under clean names, never through a link.

A name is cleaned to NFC and checked part by part: no absolute path, no `..`, no control, bidi or other invisible
format character, nothing empty or reserved. The bytes go to a temporary file in the target folder, reached by a
descriptor walk without following links, then take the name in one step (`access.write_atomic`). An existing file
is replaced only with `replace=True`; otherwise the answer is the kind `exists`, which the page turns into a question.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import BinaryIO

from meowgent.files.access import CHUNK, resolve, write_atomic
from meowgent.files.errors import FileRefused
from meowgent.tools.workspace import Workspace

MAX_NAME_BYTES = 255
"""The longest file name most file systems take (in UTF-8 bytes)."""
_RESERVED = re.compile(r"(?i)(con|prn|aux|nul|com[1-9]|lpt[1-9])(\..*)?")
"""Names Windows reserves: a workspace is often shared with Windows or copied there."""
_UNSAFE_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
"""Control, format (bidi, zero-width), surrogate, private, unassigned and line/paragraph separator characters."""


@dataclass(frozen=True, slots=True)
class Written:
    """One uploaded file as written, for the approval log and the model's next message."""

    path: str
    """Relative to the workspace, posix style."""
    size: int
    replaced: bool


def clean_name(name: str) -> str:
    """`name` (which may hold folders: `a/b.txt`) as a safe relative posix path, or `bad_name` with `why`."""
    cleaned = unicodedata.normalize("NFC", name).strip()
    if not cleaned:
        raise _bad(name, "empty")
    for character in cleaned:
        if unicodedata.category(character) in _UNSAFE_CATEGORIES:
            raise _bad(name, "invisible", character=f"U+{ord(character):04X}")
    if cleaned.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", cleaned):
        raise _bad(name, "absolute")
    parts = re.split(r"[/\\]", cleaned)
    for part in parts:
        if part in ("", ".", ".."):
            raise _bad(name, "dots" if part else "empty")
        if _RESERVED.fullmatch(part) or part.endswith((".", " ")):
            raise _bad(name, "reserved", part=part)
        if len(part.encode("utf-8")) > MAX_NAME_BYTES:
            raise _bad(name, "too_long", limit=MAX_NAME_BYTES)
    return "/".join(parts)


def check_count(count: int, *, limit: int) -> None:
    """`too_many` when one upload brings more than `limit` files."""
    if count > limit:
        raise FileRefused(
            "too_many", f"{count} files at once; at most {limit}.", values={"count": count, "limit": limit}
        )


def save(
    workspace: Workspace,
    name: str,
    source: BinaryIO,
    *,
    folder: str = "",
    replace: bool = False,
    max_bytes: int,
) -> Written:
    """Write `source` as `name` in `folder` (the workspace's root by default); `max_bytes` caps its size."""
    path = clean_name(name)
    target_folder = resolve(workspace, folder)
    if not target_folder.is_dir():
        raise FileRefused("not_folder", f"{folder} is not a folder.", values={"path": folder})
    base = "" if target_folder == workspace.root else workspace.relative(target_folder)
    relative = posixpath.join(base, path)
    wrote = write_atomic(workspace, relative, _capped(source, relative, max_bytes), replace=replace)
    return Written(relative, wrote.size, replaced=not wrote.created)


def save_all(
    workspace: Workspace,
    files: Sequence[tuple[str, BinaryIO]],
    *,
    folder: str = "",
    replace: bool = False,
    max_bytes: int,
    max_files: int,
) -> list[Written]:
    """Several uploads at once, after the count cap; the first refusal stops the rest (those written stay)."""
    check_count(len(files), limit=max_files)
    return [
        save(workspace, name, source, folder=folder, replace=replace, max_bytes=max_bytes) for name, source in files
    ]


def names(written: Iterable[Written]) -> list[tuple[str, int]]:
    """(path, size) of each, as `files.told.uploaded` takes them."""
    return [(item.path, item.size) for item in written]


def _capped(source: BinaryIO, path: str, limit: int) -> Iterator[bytes]:
    """The source's bytes a chunk at a time; `too_large` (and nothing kept) as soon as they pass `limit`."""
    total = 0
    while chunk := source.read(CHUNK):
        total += len(chunk)
        if total > limit:
            raise FileRefused("too_large", f"{path} is over {limit} bytes.", values={"path": path, "limit": limit})
        yield chunk


def _bad(name: str, why: str, **values: object) -> FileRefused:
    return FileRefused(
        "bad_name", f"the name {name!r} cannot be used ({why}).", values={"name": name, "why": why, **values}
    )
