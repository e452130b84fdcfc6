"""File tools: read_file, write_file, edit_file, list_files, search_files, all confined to the workspace."""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import secrets
import shutil
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, BinaryIO, Literal

from pydantic import Field

from meowgent.tools.globs import Glob
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
MAX_MATCHES = 200
MAX_MATCH_LINE_CHARS = 300
MAX_SEARCH_FILE_BYTES = 2 * 1024 * 1024
SEARCH_TIMEOUT = 10.0
"""Seconds a search may run. Python's `re` can backtrack for ever on some patterns, so the fallback runs in a
child process that is killed at this deadline; ripgrep is linear-time but gets the same limit for huge trees."""
SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__"})
_POLL_SECONDS = 0.1
# Spaces and tabs only: with \s, a run of line breaks made every line start rescan the rest (quadratic).
_LINE_NUMBER_PREFIX = re.compile(r"^[ \t]*\d+│", re.MULTILINE)

Backend = Literal["rg", "python"]
Match = tuple[str, int, str]
"""(workspace-relative path, 1-based line number, line text)"""


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
            if _is_binary(file.read(BINARY_SNIFF_BYTES)):
                raise ToolError(_binary_message(name, os.fstat(descriptor).st_size, "read_file"))
            file.seek(0)
            if byte_offset is not None:
                return _byte_window(file, name, byte_offset, budget)
            return _line_window(file, name, offset, limit, budget)
    except OSError as exc:
        raise _os_error("read", name, exc) from None


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
            f"offset {offset} is past the end of {name}, which has {_count(total, 'line')}; "
            f"use an offset from 0 to {total - 1}."
        )
    last = offset + len(shown)
    parts = [f"{name}: {_count(total, 'line')}; showing lines {offset + 1}-{last}.", *shown]
    if last < total:
        parts.append(f"[{total - last:,} more lines; call read_file with offset={last} to continue]")
    return "\n".join(parts)


def _byte_window(file: BinaryIO, name: str, byte_offset: int, budget: int) -> str:
    """At most `budget` bytes from `byte_offset`, trimmed to whole UTF-8 characters."""
    size = os.fstat(file.fileno()).st_size
    if byte_offset >= size:
        raise ToolError(
            f"byte_offset {byte_offset} is past the end of {name}, which has {_count(size, 'byte')}; "
            f"use a byte_offset from 0 to {size - 1}."
        )
    file.seek(byte_offset)
    data = file.read(budget)
    skip = 0
    while skip < min(3, len(data)) and data[skip] & 0xC0 == 0x80:  # the middle of a character: start after it
        skip += 1
    end = len(data) - _cut_character(data)
    start, stop = byte_offset + skip, byte_offset + end
    text = _printable(data[skip:end].decode("utf-8", "surrogateescape"))
    parts = [f"{name}: {_count(size, 'byte')}; showing bytes {start:,}-{stop:,} (lines are not numbered here).", text]
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
    lines = _count(content.count("\n") + (1 if content and not content.endswith("\n") else 0), "line")
    return f"{'Created' if created else 'Replaced'} {name}: {_count(len(data), 'byte')}, {lines}."


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
        raise _os_error("read", name, exc) from None
    if _is_binary(data[:BINARY_SNIFF_BYTES]):
        raise ToolError(_binary_message(name, len(data), "edit_file"))
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
    shown = cap_text(_printable("\n".join(diff.lines)), MAX_DIFF_CHARS)
    return f"Edited {name} at line {_line_of(text, start)}.{rough}\n{shown}"


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
    matches = _glob_matcher(pattern, "pattern")
    if not folder.exists():
        raise ToolError(
            f"{name} does not exist{_did_you_mean(workspace, folder)}; "
            "call list_files with path='.' to start from the top."
        )
    if not folder.is_dir():
        raise ToolError(f"{name} is a file, not a folder; use read_file to read it.")
    prefix = "" if name == "." else f"{name}/"
    entries = []
    for relpath, entry in _walk(folder):
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
    return _printable("\n".join(parts))  # names that are not UTF-8 must not break the JSON the model gets


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
        _glob_matcher(glob, "glob")
    if target.is_file():
        _check_searchable(workspace, target, name)
    elif not target.exists():
        raise ToolError(
            f"{name} does not exist{_did_you_mean(workspace, target)}; use list_files to see what is there."
        )
    elif not target.is_dir():
        raise ToolError(f"{name} is not a regular file or folder, so it cannot be searched.")
    deadline = _Deadline(timeout, stop or threading.Event())
    ripgrep = _ripgrep() if backend in (None, "rg") else None
    if backend == "rg" and ripgrep is None:
        raise RuntimeError("backend='rg' needs the rg executable")
    base = target.parent if target.is_file() else target
    matches = _search_ripgrep(ripgrep, target, pattern, glob, deadline) if ripgrep else None
    if matches is not None:
        matches = _confirmed(matches, base, workspace)
    else:  # no ripgrep, or a regex feature it lacks (look-around, backreferences)
        matches = _search_python(workspace.root, target, pattern, glob, deadline)
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
            files[path] = _lines_inside(workspace, base / path)
        lines = files[path]
        if lines is not None and number <= len(lines) and lines[number - 1] == text:
            kept.append((path, number, text))
    return kept


def _lines_inside(workspace: Workspace, path: Path) -> list[str] | None:
    """The lines of a searchable file inside the workspace, as the search backends give them; None if unusable."""
    try:
        with workspace.open_file(path) as descriptor:
            if os.fstat(descriptor).st_size > MAX_SEARCH_FILE_BYTES:
                return None
            with os.fdopen(descriptor, "rb", closefd=False) as file:
                data = file.read()
    except (OSError, ToolError):
        return None
    lines = data.decode("utf-8-sig", "replace").split("\n")  # ripgrep drops a UTF-8 BOM too
    return [line.removesuffix("\r") for line in lines]


def _format_matches(matches: list[Match], pattern: str, where: str, max_chars: int) -> str:
    if not matches:
        return f"No matches for {pattern!r} in {where}."
    lines: list[str] = []
    used = 0
    for path, number, text in matches[:MAX_MATCHES]:
        if len(text) > MAX_MATCH_LINE_CHARS:
            text = text[:MAX_MATCH_LINE_CHARS] + " …"
        line = _printable(f"{path}:{number}: {text}")
        if lines and used + len(line) + 1 > max_chars - 300:  # room for the header
            break
        lines.append(line)
        used += len(line) + 1
    if len(lines) == len(matches):
        header = f"{_count(len(lines), 'matching line')} for {pattern!r} in {where}:"
    else:
        header = (
            f"Showing the first {len(lines)} matching lines for {pattern!r} in {where}; there are more. "
            "Narrow the pattern, path or glob to see the others:"
        )
    return "\n".join([header, *lines])


class _Deadline:
    """When a search must end, and the Stop flag that can end it sooner."""

    def __init__(self, seconds: float, stop: threading.Event) -> None:
        self.seconds = seconds
        self.stop = stop
        self.at = time.monotonic() + seconds

    def remaining(self) -> float:
        return max(self.at - time.monotonic(), 0.0)

    def wait(self, ready: Callable[[], bool]) -> None:
        """Call `ready` (which blocks up to _POLL_SECONDS) until it is true; ToolError on Stop or at the deadline."""
        while not ready():
            if self.stop.is_set():
                raise ToolError("search_files was stopped.")
            if not self.remaining():
                raise self.expired()

    def expired(self) -> ToolError:
        return ToolError(
            f"search_files stopped after {self.seconds:g} seconds without finishing. Simplify the pattern "
            "(nested repeats such as (a+)+ can take exponential time) or narrow path or glob."
        )


def _search_ripgrep(
    executable: str, target: Path, pattern: str, glob: str | None, deadline: _Deadline
) -> list[Match] | None:
    """Matches found by ripgrep, or None if ripgrep cannot compile a regex that Python accepts."""
    # --no-messages drops per-file errors (unreadable files are skipped, as in Python), so stderr stays small.
    command = [
        executable,
        "--no-config",
        "--no-ignore",
        "--hidden",
        "--no-messages",
        "--color=never",
        f"--max-filesize={MAX_SEARCH_FILE_BYTES}",
        *(f"--glob=!{name}/" for name in sorted(SKIP_DIRS)),
    ]
    if target.is_file():
        cwd, where, excluded = target.parent, target.name, ()
    else:
        cwd, where = target, "."
        excluded = _virtualenvs(command, cwd, deadline)
        if glob is not None:
            command.append(f"--glob={glob}")
    command += ["--sort=path", "--crlf", "--no-heading", "--with-filename", "--line-number", "--null"]
    command += ["--regexp", pattern, "--", where]
    process = subprocess.Popen(
        command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    matches: list[Match] = []

    def read() -> None:
        assert process.stdout is not None
        for raw in process.stdout:
            path_bytes, _, rest = raw.partition(b"\0")
            number, _, text = rest.partition(b":")
            path = os.fsdecode(path_bytes).removeprefix("./")
            if number.isdigit() and not any(path.startswith(venv) for venv in excluded):
                matches.append((path, int(number), _decode_line(text)))
                if len(matches) > MAX_MATCHES:  # one more than we show tells us there are more
                    return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        deadline.wait(lambda: _joined(reader))
    finally:
        process.kill()
        reader.join()
        _, errors = process.communicate()
    message = os.fsdecode(errors).strip()
    if process.returncode == 2 and not matches and message:
        if "regex" in message:
            return None
        raise ToolError(f"search failed: {message}")
    return matches


def _virtualenvs(command: list[str], cwd: Path, deadline: _Deadline) -> tuple[str, ...]:
    """Folders (as 'path/') holding a pyvenv.cfg: ripgrep globs can only skip venvs by name, so find the others."""
    try:
        found = subprocess.run(
            [*command, "--files", "--glob=pyvenv.cfg", "--null", "."],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=deadline.remaining(),
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise deadline.expired() from None
    folders = {os.path.dirname(os.fsdecode(item).removeprefix("./")) for item in found.stdout.split(b"\0") if item}
    return tuple(f"{folder}/" for folder in sorted(folders) if folder)


def _search_python(root: Path, target: Path, pattern: str, glob: str | None, deadline: _Deadline) -> list[Match]:
    """Matches found with Python's `re`, in a child process so a regex that backtracks for ever can be killed.

    A plain subprocess rather than multiprocessing: spawn would re-run the app's main module in every child.
    """
    # The child runs in the folder that holds the meowgent package, so `-c` can import it and no workspace
    # file can shadow a module.
    process = subprocess.Popen(
        [sys.executable, "-c", _WORKER, json.dumps([str(root), str(target), pattern, glob])],
        cwd=_PACKAGE_PARENT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    output: list[bytes] = []

    def finished() -> bool:
        try:
            output.extend(process.communicate(timeout=_POLL_SECONDS))
        except subprocess.TimeoutExpired:
            return False
        return True

    try:
        deadline.wait(finished)
    finally:
        if not output:
            process.kill()
            process.communicate()
    if process.returncode != 0:
        problem = os.fsdecode(output[1]).strip().splitlines()[-1:] or [f"exit status {process.returncode}"]
        raise ToolError(f"search_files failed unexpectedly ({problem[0]}).")
    return [(path, number, text) for path, number, text in json.loads(output[0])]


_WORKER = "from meowgent.tools.files import _python_worker; _python_worker()"
_PACKAGE_PARENT = Path(__file__).resolve().parents[2]


def _python_worker() -> None:
    """Entry point of the child process: arguments as JSON in argv, matches as JSON (ASCII) on stdout."""
    root, target, pattern, glob = json.loads(sys.argv[1])
    json.dump(_python_matches(Workspace(root), Path(target), re.compile(pattern), glob), sys.stdout)


def _python_matches(workspace: Workspace, target: Path, regex: re.Pattern[str], glob: str | None) -> list[Match]:
    """The same matches ripgrep gives for the same tree, in the same order (depth first, names sorted)."""
    matches: list[Match] = []
    if target.is_file():
        files: Iterator[tuple[str, str]] = iter([(target.name, str(target))])  # ripgrep ignores globs here too
    else:
        wanted = _glob_matcher(glob, "glob") if glob is not None else None
        files = (
            (relpath, entry.path)
            for relpath, entry in _walk(target)
            if entry.is_file(follow_symlinks=False) and (wanted is None or wanted(relpath))
        )
    for relpath, filename in files:
        lines = _lines_inside(workspace, Path(filename))  # no hard link or swapped folder leads outside
        if lines is None or any("\0" in line for line in lines):
            continue
        if lines[-1] == "":
            lines.pop()
        for number, line in enumerate(lines, 1):
            if regex.search(line):
                matches.append((relpath, number, line))
                if len(matches) > MAX_MATCHES:
                    return matches
    return matches


def _joined(thread: threading.Thread) -> bool:
    thread.join(_POLL_SECONDS)
    return not thread.is_alive()


def _ripgrep() -> str | None:
    """The rg executable: the `ripgrep` wheel installs it next to Python, which need not be on PATH."""
    return shutil.which("rg", path=str(Path(sys.executable).parent)) or shutil.which("rg")


def _walk(folder: Path) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Entries under `folder` with their relative posix paths, depth first with each folder's entries sorted
    by name (ripgrep's --sort=path order), not descending into symlinks or skipped folders."""
    stack = [(_sorted_entries(folder), "")]
    while stack:
        entries, prefix = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        relpath = prefix + entry.name
        if entry.is_dir(follow_symlinks=False):
            if entry.name in SKIP_DIRS or os.path.isfile(os.path.join(entry.path, "pyvenv.cfg")):
                continue
            yield relpath, entry
            stack.append((_sorted_entries(entry.path), relpath + "/"))
        else:
            yield relpath, entry


def _sorted_entries(folder: str | Path) -> Iterator[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as scan:
            return iter(sorted(scan, key=lambda entry: os.fsencode(entry.name)))  # byte order, as ripgrep sorts
    except OSError:  # an unreadable folder is skipped, as ripgrep does
        return iter(())


def _glob_matcher(glob: str, argument: str) -> Callable[[str], bool]:
    """A test for relative posix paths, with ripgrep's rules: without '/', the glob matches the name at any depth."""
    if glob.startswith("/") or ".." in glob.split("/"):
        raise ToolError(f"{argument} {glob!r} must stay inside the folder searched: no leading '/' and no '..'.")
    if glob.startswith("!"):
        raise ToolError(f"{argument} {glob!r} starts with '!'; only globs that select files are supported.")
    matches = Glob(glob, argument=argument)
    if "/" in glob:
        return matches
    return lambda relpath: matches(relpath.rpartition("/")[2])


def _where(name: str) -> str:
    return "the workspace" if name == "." else name


def _existing_file(workspace: Workspace, path: str, *, tool_name: str) -> Path:
    target = workspace.resolve(path)
    name = workspace.relative(target)
    if target.is_dir():
        raise ToolError(f"{name} is a folder, not a file; use list_files to see what is in it.")
    if not target.exists():
        create = " (write_file creates files)" if tool_name == "edit_file" else ""
        raise ToolError(
            f"{name} does not exist{_did_you_mean(workspace, target)}; "
            f"use list_files to see the files there are{create}."
        )
    if not target.is_file():
        raise ToolError(f"{name} is not a regular file (a device, socket or pipe); {tool_name} only handles files.")
    return target


def _did_you_mean(workspace: Workspace, missing: Path) -> str:
    if missing == workspace.root:  # its parent is outside, and not ours to show
        return ""
    try:
        siblings = os.listdir(missing.parent)
    except OSError:
        return ""
    close = difflib.get_close_matches(missing.name, siblings, n=3)
    return f" (did you mean {', '.join(repr(name) for name in close)}?)" if close else ""


def _check_searchable(workspace: Workspace, target: Path, name: str) -> None:
    try:
        with workspace.open_file(target) as descriptor:
            size = os.fstat(descriptor).st_size
            if size > MAX_SEARCH_FILE_BYTES:
                raise ToolError(
                    f"{name} is {size:,} bytes, over the 2 MB search_files limit; read it in pages with read_file."
                )
            with os.fdopen(descriptor, "rb", closefd=False) as file:
                if _is_binary(file.read()):
                    raise ToolError(_binary_message(name, size, "search_files"))
    except OSError as exc:
        raise _os_error("read", name, exc) from None


def _is_binary(head: bytes) -> bool:
    return b"\0" in head


def _binary_message(name: str, size: int, tool_name: str) -> str:
    return f"{name} is a binary file ({size:,} bytes); {tool_name} only handles text."


def _display_line(head: bytes, length: int, start: int, *, first: bool) -> str:
    """A line as shown: whole, or its first MAX_LINE_CHARS characters and where to read on."""
    text = head.removesuffix(b"\n").removesuffix(b"\r").decode("utf-8", "surrogateescape")
    bom = 3 if first and text.startswith("\ufeff") else 0
    text = text[1:] if bom else text
    if len(text) <= MAX_LINE_CHARS and length == len(head):
        return _printable(text)
    shown = text[:MAX_LINE_CHARS]
    resume = start + bom + len(shown.encode("utf-8", "surrogateescape"))
    rest = start + length - len(head) + len(head.rstrip(b"\r\n")) - resume
    return f"{_printable(shown)} … [line cut: {rest:,} more bytes; call read_file with byte_offset={resume} to read on]"


def _decode_line(raw: bytes) -> str:
    return raw.removesuffix(b"\n").removesuffix(b"\r").decode("utf-8", "replace")


def _printable(text: str) -> str:
    """Undecodable bytes kept by surrogateescape become '�': lone surrogates cannot be sent as JSON."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _encode(text: str, argument: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError(
            f"{argument} has a character that cannot be written as UTF-8 at position {exc.start}; remove it."
        ) from None


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


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

    Everything happens relative to the folder's descriptor, reached without following links, so a folder
    swapped for a link meanwhile cannot send the write outside. A name that is a hard link is replaced by a
    new file: the other names keep the old content. Returns True if the file was created. A replaced file
    keeps its permission bits.
    """
    temp = f".meowgent-{secrets.token_hex(6)}.tmp"
    try:
        with workspace.open_folder(target.parent, create=True) as folder:
            try:
                mode: int | None = stat.S_IMODE(os.stat(target.name, dir_fd=folder, follow_symlinks=False).st_mode)
            except FileNotFoundError:
                mode = None
            # os.open applies the umask to 0o666, so a new file gets the same mode any editor would give it.
            descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666, dir_fd=folder)
            try:
                with os.fdopen(descriptor, "wb") as file:
                    file.write(data)
                    file.flush()
                    os.fsync(file.fileno())
                if mode is not None:
                    os.chmod(temp, mode, dir_fd=folder)
                os.replace(temp, target.name, src_dir_fd=folder, dst_dir_fd=folder)
            except BaseException:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(temp, dir_fd=folder)
                raise
    except OSError as exc:
        raise _os_error("write", workspace.relative(target), exc) from None
    return mode is None


def _os_error(action: str, name: str, exc: OSError) -> ToolError:
    return ToolError(f"could not {action} {name}: {exc.strerror or exc}.")
