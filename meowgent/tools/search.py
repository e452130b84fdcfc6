"""Search tools: list_files and search_files over the workspace (`grep` finds the lines), skipping .git,
node_modules, __pycache__ and virtual environments, never following a symbolic link out."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from meowgent.tools.filetext import binary_message, count, did_you_mean, is_binary, os_error, printable
from meowgent.tools.grep import (
    MAX_MATCHES,
    MAX_SEARCH_FILE_BYTES,
    Deadline,
    Match,
    glob_matcher,
    lines_inside,
    python_matches,
    ripgrep_executable,
    ripgrep_matches,
    walk,
)
from meowgent.tools.spec import ToolContext, ToolError, tool
from meowgent.tools.workspace import Workspace

MAX_MATCH_LINE_CHARS = 300
SEARCH_TIMEOUT = 10.0
"""Seconds a search may run. Python's `re` can backtrack for ever on some patterns, so the fallback runs in a
child process that is killed at this deadline; ripgrep is linear-time but gets the same limit for huge trees."""

Backend = Literal["rg", "python"]


@tool(risky=False, path="path", reads_folder=True)
def list_files(
    ctx: ToolContext,
    path: Annotated[str, "folder to list, relative to the workspace"] = ".",
    pattern: Annotated[
        str, "glob matched against paths relative to `path`, e.g. '*.py', 'src/**/*.ts' or 'docs/*'"
    ] = "**/*",
    offset: Annotated[int, "entries to skip, for the next page", Field(ge=0)] = 0,
    limit: Annotated[int, "most entries to show", Field(ge=1)] = 200,
) -> str:
    """List the files and folders under a workspace folder, recursively, in tree order; folder names end with '/'. In
    `pattern`, '*' stays within one folder, '**' crosses folders, '{a,b}' means either, and a pattern without '/'
    matches names at any depth (so '*.py' finds every Python file). Skips .git, node_modules, __pycache__ and
    virtual environments, and does not follow symbolic links. Returns workspace-relative paths with the total count,
    and the offset for the next page when there are more.
    """
    workspace = Workspace(ctx.settings.workspace)
    folder = workspace.resolve(path)
    name = workspace.relative(folder)
    matches = glob_matcher(pattern, "pattern")
    if not folder.exists():
        raise ToolError(
            f"{name} does not exist{did_you_mean(workspace, folder)}; "
            "call list_files with path='.' to start from the top."
        )
    if not folder.is_dir():
        raise ToolError(f"{name} is a file, not a folder; use read_file to read it.")
    prefix = "" if name == "." else f"{name}/"
    entries = []
    for relpath, entry in walk(folder):
        if ctx.cancel.is_set():
            raise ToolError("list_files was stopped.")
        is_dir = entry.is_dir(follow_symlinks=False)
        if entry.is_symlink():
            try:  # a link is listed (not followed) only if it stays inside the workspace
                is_dir = workspace.resolve(entry.path).is_dir()
            except ToolError:
                continue
        if matches(relpath):
            entries.append(prefix + relpath + ("/" if is_dir else ""))
    total = len(entries)
    if total == 0:
        return (
            f"Nothing in {_where(name)} matches {pattern!r} "
            "(.git, node_modules, __pycache__ and virtual environments are never listed)."
        )
    if offset >= total:
        raise ToolError(
            f"offset {offset} is past the end: {total:,} entries match; use an offset from 0 to {total - 1}."
        )
    page = entries[offset : offset + limit]
    end = offset + len(page)
    parts = [f"{total:,} entries in {_where(name)} match {pattern!r}; showing {offset + 1}-{end}:", *page]
    if end < total:
        parts.append(f"[{total - end:,} more; call list_files with offset={end} to continue]")
    return printable("\n".join(parts))  # names that are not UTF-8 must not break the JSON the model gets


@tool(risky=False, path="path", reads_folder=True)
def search_files(
    ctx: ToolContext,
    pattern: Annotated[str, "regular expression (Python syntax), matched against one line at a time"],
    path: Annotated[str, "file or folder to search, relative to the workspace"] = ".",
    glob: Annotated[
        str | None, "only search files whose path matches this glob, e.g. '*.py' or 'src/**/*.ts' (for folders)"
    ] = None,
) -> str:
    """Search the contents of workspace files with a regular expression, one line at a time; use (?i) to ignore case.
    Returns matching lines as 'path:line: text' with workspace-relative paths and 1-based line numbers, at most 200
    of them. Skips binary files, files over 2 MB, .git, node_modules, __pycache__ and virtual environments, and does
    not follow symbolic links.
    """
    return _search(
        ctx.settings.workspace, pattern, path=path, glob=glob, max_chars=ctx.settings.max_tool_output, stop=ctx.cancel
    )


def _search(
    root: Path,
    pattern: str,
    *,
    path: str = ".",
    glob: str | None = None,
    max_chars: int,
    backend: Backend | None = None,
    timeout: float = SEARCH_TIMEOUT,
    stop: threading.Event | None = None,
) -> str:
    """search_files with the backend made explicit (None picks ripgrep when installed), so tests can run both."""
    if pattern == "":
        raise ToolError("pattern is empty; give a regular expression, such as 'TODO' or 'def \\w+'.")
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ToolError(
            f"{pattern!r} is not a valid regular expression: {exc}. Escape special characters such as ( [ . * + ? "
            "with a backslash to match them literally."
        ) from None
    workspace = Workspace(root)
    target = workspace.resolve(path)
    name = workspace.relative(target)
    if glob is not None:
        glob_matcher(glob, "glob")
    if target.is_file():
        _check_searchable(workspace, target, name)
    elif not target.exists():
        raise ToolError(f"{name} does not exist{did_you_mean(workspace, target)}; use list_files to see what is there.")
    elif not target.is_dir():
        raise ToolError(f"{name} is not a regular file or folder, so it cannot be searched.")
    deadline = Deadline(timeout, stop or threading.Event())
    ripgrep = ripgrep_executable(workspace.root) if backend in (None, "rg") else None
    if backend == "rg" and ripgrep is None:
        raise RuntimeError("backend='rg' needs the rg executable")
    base = target.parent if target.is_file() else target
    matches = ripgrep_matches(ripgrep, target, pattern, glob, deadline) if ripgrep else None
    if matches is not None:
        matches = _confirmed(matches, base, workspace)
    else:  # no ripgrep, or a regex feature it lacks (look-around, backreferences)
        matches = python_matches(workspace.root, target, pattern, glob, deadline)
    prefix = "" if base == workspace.root else f"{workspace.relative(base)}/"
    return _format_matches([(prefix + p, n, t) for p, n, t in matches], pattern, _where(name), max_chars)


def _confirmed(matches: list[Match], base: Path, workspace: Workspace) -> list[Match]:
    """The matches whose line the file really holds, read again as the other file tools read.

    ripgrep opens files by name, so what it read through a hard link, or through a folder swapped for
    a link meanwhile, is not what the file inside the workspace says, and is dropped here.
    """
    files: dict[str, list[str] | None] = {}
    kept = []
    for path, number, text in matches:
        if path not in files:
            files[path] = lines_inside(workspace, base / path)
        lines = files[path]
        if lines is not None and number <= len(lines) and lines[number - 1] == text:
            kept.append((path, number, text))
    return kept


def _format_matches(matches: list[Match], pattern: str, where: str, max_chars: int) -> str:
    if not matches:
        return f"No matches for {pattern!r} in {where}."
    lines: list[str] = []
    used = 0
    for path, number, text in matches[:MAX_MATCHES]:
        if len(text) > MAX_MATCH_LINE_CHARS:
            text = text[:MAX_MATCH_LINE_CHARS] + " …"
        line = printable(f"{path}:{number}: {text}")
        if lines and used + len(line) + 1 > max_chars - 300:  # room for the header
            break
        lines.append(line)
        used += len(line) + 1
    if len(lines) == len(matches):
        header = f"{count(len(lines), 'matching line')} for {pattern!r} in {where}:"
    else:
        header = (
            f"Showing the first {len(lines)} matching lines for {pattern!r} in {where}; there are more. "
            "Narrow the pattern, path or glob to see the others:"
        )
    return "\n".join([header, *lines])


def _where(name: str) -> str:
    return "the workspace" if name == "." else name


def _check_searchable(workspace: Workspace, target: Path, name: str) -> None:
    try:
        with workspace.open_file(target) as descriptor:
            size = os.fstat(descriptor).st_size
            if size > MAX_SEARCH_FILE_BYTES:
                raise ToolError(
                    f"{name} is {size:,} bytes, over the 2 MB search_files limit; read it in pages with read_file."
                )
            with os.fdopen(descriptor, "rb", closefd=False) as file:
                if is_binary(file.read()):
                    raise ToolError(binary_message(name, size, "search_files"))
    except OSError as exc:
        raise os_error("read", name, exc) from None
