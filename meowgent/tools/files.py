"""File tools: read_file, write_file and edit_file, confined to the workspace (list_files and search_files are in
`search`)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, BinaryIO

from pydantic import Field

from meowgent.tools.filetext import binary_message, count, did_you_mean, is_binary, os_error, printable
from meowgent.tools.linediff import unified_diff
from meowgent.tools.spec import ScopedBy, ToolContext, ToolError, Writes, cap_text, tool
from meowgent.tools.workspace import Workspace

MAX_READ_CHARS = 100_000
"""Characters one read_file call returns at most (the tool-output limit in Settings may be lower)."""
MAX_LINE_CHARS = 2_000
"""A longer line is cut in read_file, so one minified line cannot fill the whole page."""
_LINE_KEEP = MAX_LINE_CHARS * 4 + 8  # bytes read of a line: enough for MAX_LINE_CHARS characters and a BOM
_READ_CHUNK = 65_536  # the rest of a long line is skipped in pieces this size, so memory stays flat
BINARY_SNIFF_BYTES = 8192
MAX_DIFF_CHARS = 4_000
_ROUGH_DIFF = (
    " The change is too big to compare line by line, so the diff shows all of its old lines removed"
    " and all of its new lines added."
)
# Spaces and tabs only: with \s, a run of line breaks made every line start rescan the rest (quadratic).
_LINE_NUMBER_PREFIX = re.compile(r"^[ \t]*\d+│", re.MULTILINE)


@tool(risky=False, path="path")
def read_file(
    ctx: ToolContext,
    path: Annotated[str, "file to read, relative to the workspace"],
    offset: Annotated[int, "lines to skip: 0 starts at line 1, 400 at line 401", Field(ge=0)] = 0,
    limit: Annotated[int, "most lines to show", Field(ge=1)] = 400,
    byte_offset: Annotated[
        int | None, "read from this byte of the file instead of by lines, for a line too long to show", Field(ge=0)
    ] = None,
) -> str:
    """Read a text file from the workspace. Returns a header with the file's path and total line count, then the lines,
    each prefixed with its 1-based line number and '│' (the prefix is not part of the file). A long file comes in
    pages: the last line says which offset reads the next page. A line over 2,000 characters is cut, and the cut
    says which byte_offset reads on from there. Binary files are refused; invalid UTF-8 shows as '�'.
    """
    workspace = Workspace(ctx.settings.workspace)
    target = _existing_file(workspace, path, tool_name="read_file")
    name = workspace.relative(target)
    budget = max(min(MAX_READ_CHARS, ctx.settings.max_tool_output) - 300, 1)  # room for header and footer
    try:
        with workspace.open_file(target) as descriptor, os.fdopen(descriptor, "rb", closefd=False) as file:
            if is_binary(file.read(BINARY_SNIFF_BYTES)):
                raise ToolError(binary_message(name, os.fstat(descriptor).st_size, "read_file"))
            file.seek(0)
            if byte_offset is not None:
                return _byte_window(file, name, byte_offset, budget)
            return _line_window(file, name, offset, limit, budget)
    except OSError as exc:
        raise os_error("read", name, exc) from None


def _line_window(file: BinaryIO, name: str, offset: int, limit: int, budget: int) -> str:
    """Lines offset+1 onwards, as many as `limit` and `budget` allow; the whole file is counted, never held."""
    shown: list[str] = []
    used = 0
    page_full = False
    total = 0
    for total, (start, head, length) in enumerate(_lines(file), 1):  # after the loop, `total` is the line count
        if total <= offset or page_full:
            continue
        line = f"{total:>6}│{_display_line(head, length, start, first=total == 1)}"
        if len(shown) == limit or (shown and used + len(line) + 1 > budget):
            page_full = True
            continue
        shown.append(line)
        used += len(line) + 1
    if total == 0:
        return f"{name} is empty (0 lines)."
    if offset >= total:
        raise ToolError(
            f"offset {offset} is past the end of {name}, which has {count(total, 'line')}; "
            f"use an offset from 0 to {total - 1}."
        )
    last = offset + len(shown)
    parts = [f"{name}: {count(total, 'line')}; showing lines {offset + 1}-{last}.", *shown]
    if last < total:
        parts.append(f"[{total - last:,} more lines; call read_file with offset={last} to continue]")
    return "\n".join(parts)


def _byte_window(file: BinaryIO, name: str, byte_offset: int, budget: int) -> str:
    """At most `budget` bytes from `byte_offset`, trimmed to whole UTF-8 characters."""
    size = os.fstat(file.fileno()).st_size
    if byte_offset >= size:
        raise ToolError(
            f"byte_offset {byte_offset} is past the end of {name}, which has {count(size, 'byte')}; "
            f"use a byte_offset from 0 to {size - 1}."
        )
    file.seek(byte_offset)
    data = file.read(budget)
    skip = 0
    while skip < min(3, len(data)) and data[skip] & 0xC0 == 0x80:  # the middle of a character: start after it
        skip += 1
    end = len(data) - _cut_character(data)
    start, stop = byte_offset + skip, byte_offset + end
    text = printable(data[skip:end].decode("utf-8", "surrogateescape"))
    parts = [f"{name}: {count(size, 'byte')}; showing bytes {start:,}-{stop:,} (lines are not numbered here).", text]
    if stop < size:
        parts.append(f"[{size - stop:,} more bytes; call read_file with byte_offset={stop} to continue]")
    return "\n".join(parts)


def _cut_character(data: bytes) -> int:
    """How many bytes at the end of `data` are an unfinished UTF-8 character."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 != 0x80:  # the lead byte of the last character
            needed = 2 if byte >> 5 == 0b110 else 3 if byte >> 4 == 0b1110 else 4 if byte >> 3 == 0b11110 else 1
            return back if back < needed else 0
    return 0


def _lines(file: BinaryIO) -> Iterator[tuple[int, bytes, int]]:
    """Each line as (where it starts, its first bytes, its length in bytes), in memory bounded by a line's head.

    Lines end at b"\n" only, so line numbers agree with search_files and ripgrep.
    """
    start = 0
    while head := file.readline(_LINE_KEEP):
        length = len(head)
        while not head.endswith(b"\n") and (rest := file.readline(_READ_CHUNK)):
            length += len(rest)
            if rest.endswith(b"\n"):
                break
        yield start, head, length
        start += length


@tool(risky=True, scope=ScopedBy.PATH, path="path", main="content", writes=Writes.REPLACES)
def write_file(
    ctx: ToolContext,
    path: Annotated[str, "file to create or overwrite, relative to the workspace"],
    content: Annotated[str, "the complete new content of the file"],
) -> str:
    """Create a file in the workspace, or replace one, with `content` as UTF-8; missing parent folders are created. The
    write is atomic: the file is either the old one or the new one, never half written, and a replaced file keeps
    its permissions. Returns whether the file was created or replaced, and its size in bytes and lines. To change
    part of a file, use edit_file.
    """
    workspace = Workspace(ctx.settings.workspace)
    target = workspace.resolve(path)
    name = workspace.relative(target)
    if target.is_dir():
        example = "notes.md" if name == "." else f"{name}/notes.md"
        raise ToolError(f"{name} is a folder; give the path of a file, such as '{example}'.")
    data = _encode(content, "content")
    created = _write_atomic(workspace, target, data)
    lines = count(content.count("\n") + (1 if content and not content.endswith("\n") else 0), "line")
    return f"{'Created' if created else 'Replaced'} {name}: {count(len(data), 'byte')}, {lines}."


@tool(risky=True, scope=ScopedBy.PATH, path="path", old="old", main="new", writes=Writes.EDITS)
def edit_file(
    ctx: ToolContext,
    path: Annotated[str, "file to edit, relative to the workspace"],
    old: Annotated[str, "the exact text to replace, as it appears in the file (without read_file's line numbers)"],
    new: Annotated[str, "the text to put in its place"],
) -> str:
    """Replace one exact piece of text in a workspace file. `old` must appear exactly once: copy it from read_file
    without the line-number prefixes, with enough surrounding lines to make it unique. Returns a unified diff of the
    change. To create a file or rewrite it completely, use write_file.
    """
    if old == "":
        raise ToolError(
            "old is empty; give the exact text to replace, copied from read_file. "
            "To write a whole file, use write_file."
        )
    if old == new:
        raise ToolError("old and new are the same, so there is nothing to change.")
    workspace = Workspace(ctx.settings.workspace)
    target = _existing_file(workspace, path, tool_name="edit_file")
    name = workspace.relative(target)
    try:
        with workspace.open_file(target) as descriptor, os.fdopen(descriptor, "rb", closefd=False) as file:
            data = file.read()
    except OSError as exc:
        raise os_error("read", name, exc) from None
    if is_binary(data[:BINARY_SNIFF_BYTES]):
        raise ToolError(binary_message(name, len(data), "edit_file"))
    # surrogateescape keeps bytes that are not UTF-8 exactly as they were in the parts we do not touch.
    text = data.decode("utf-8", "surrogateescape")
    if old not in text and "\r\n" in text and "\r" not in old:
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")  # the model writes \n; the file uses CRLF
    starts = _occurrences(text, old)
    if not starts:
        raise ToolError(_not_found_message(name, text, old))
    if len(starts) > 1:
        lines = ", ".join(str(_line_of(text, start)) for start in starts[:10])
        raise ToolError(
            f"old appears {len(starts)} times in {name} (at lines {lines}); "
            "include more of the surrounding lines in old so that it matches exactly once."
        )
    _encode(new, "new")  # refuse lone surrogates here; surrogateescape below is only for the file's own bytes
    start = starts[0]
    updated = text[:start] + new + text[start + len(old) :]
    _write_atomic(workspace, target, updated.encode("utf-8", "surrogateescape"))
    diff = unified_diff(text, updated, before=f"a/{name}", after=f"b/{name}")
    rough = "" if diff.exact else _ROUGH_DIFF
    shown = cap_text(printable("\n".join(diff.lines)), MAX_DIFF_CHARS)
    return f"Edited {name} at line {_line_of(text, start)}.{rough}\n{shown}"


def _existing_file(workspace: Workspace, path: str, *, tool_name: str) -> Path:
    target = workspace.resolve(path)
    name = workspace.relative(target)
    if target.is_dir():
        raise ToolError(f"{name} is a folder, not a file; use list_files to see what is in it.")
    if not target.exists():
        create = " (write_file creates files)" if tool_name == "edit_file" else ""
        raise ToolError(
            f"{name} does not exist{did_you_mean(workspace, target)}; "
            f"use list_files to see the files there are{create}."
        )
    if not target.is_file():
        raise ToolError(f"{name} is not a regular file (a device, socket or pipe); {tool_name} only handles files.")
    return target


def _display_line(head: bytes, length: int, start: int, *, first: bool) -> str:
    """A line as shown: whole, or its first MAX_LINE_CHARS characters and where to read on."""
    text = head.removesuffix(b"\n").removesuffix(b"\r").decode("utf-8", "surrogateescape")
    bom = 3 if first and text.startswith("\ufeff") else 0
    text = text[1:] if bom else text
    if len(text) <= MAX_LINE_CHARS and length == len(head):
        return printable(text)
    shown = text[:MAX_LINE_CHARS]
    resume = start + bom + len(shown.encode("utf-8", "surrogateescape"))
    rest = start + length - len(head) + len(head.rstrip(b"\r\n")) - resume
    return f"{printable(shown)} … [line cut: {rest:,} more bytes; call read_file with byte_offset={resume} to read on]"


def _encode(text: str, argument: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError(
            f"{argument} has a character that cannot be written as UTF-8 at position {exc.start}; remove it."
        ) from None


def _occurrences(text: str, old: str) -> list[int]:
    starts = []
    start = text.find(old)
    while start != -1:
        starts.append(start)
        start = text.find(old, start + len(old))
    return starts


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _not_found_message(name: str, text: str, old: str) -> str:
    message = f"old does not appear in {name}"
    if _LINE_NUMBER_PREFIX.search(old):
        return f"{message}: it contains read_file's line-number prefixes (like '    12│'); leave them out of old."
    if " ".join(old.split()) in " ".join(text.split()):
        return (
            f"{message} exactly, but it does if spaces, tabs and line breaks are ignored; "
            "copy the text from read_file again, keeping its indentation exactly."
        )
    return f"{message}; read the file again with read_file and copy the text exactly."


def _write_atomic(workspace: Workspace, target: Path, data: bytes) -> bool:
    """Write through a temporary file in the same folder and a rename, so no reader ever sees half a file.

    Everything happens by descriptor (`Workspace.write`), so neither a folder nor the temporary file swapped for a
    link meanwhile can send the write, or a mode, outside. A name that is a hard link is replaced by a new file: the
    other names keep the old content. Returns True if the file was created. A replaced file keeps its permission bits.
    """
    try:
        return workspace.write(target, [data], replace=True).created
    except OSError as exc:
        raise os_error("write", workspace.relative(target), exc) from None
