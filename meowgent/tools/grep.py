"""Finding the lines that match a regex under a workspace folder: ripgrep where it is installed, else Python's `re`
in a child process that can be killed at a deadline. Both give the same matches in the same order; the tree walk
and the glob rules are shared with list_files."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from meowgent.tools.globs import Glob
from meowgent.tools.spec import ToolError
from meowgent.tools.trusted import host_program
from meowgent.tools.workspace import Workspace

MAX_MATCHES = 200
MAX_SEARCH_FILE_BYTES = 2 * 1024 * 1024
SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__"})
_POLL_SECONDS = 0.1

Match = tuple[str, int, str]
"""(workspace-relative path, 1-based line number, line text)"""


def lines_inside(workspace: Workspace, path: Path) -> list[str] | None:
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


class Deadline:
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


def ripgrep_matches(
    executable: str, target: Path, pattern: str, glob: str | None, deadline: Deadline
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


def _virtualenvs(command: list[str], cwd: Path, deadline: Deadline) -> tuple[str, ...]:
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


def python_matches(root: Path, target: Path, pattern: str, glob: str | None, deadline: Deadline) -> list[Match]:
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


_WORKER = "from meowgent.tools.grep import _python_worker; _python_worker()"
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
        wanted = glob_matcher(glob, "glob") if glob is not None else None
        files = (
            (relpath, entry.path)
            for relpath, entry in walk(target)
            if entry.is_file(follow_symlinks=False) and (wanted is None or wanted(relpath))
        )
    for relpath, filename in files:
        lines = lines_inside(workspace, Path(filename))  # no hard link or swapped folder leads outside
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


def ripgrep_executable(workspace: Path) -> str | None:
    """The rg the host runs (meowgent.tools.trusted): the `ripgrep` wheel's, beside Python, or one on PATH; never
    one a sandboxed command could have put in the workspace."""
    found = host_program("rg", workspace)
    return str(found) if found is not None else None


def walk(folder: Path, *, skipped: list[str] | None = None) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Entries under `folder` with their relative posix paths, depth first with each folder's entries sorted
    by name (ripgrep's --sort=path order), not descending into symlinks or skipped folders (whose relative
    paths go into `skipped`, for a caller that must say what it left out)."""
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
                if skipped is not None:
                    skipped.append(relpath)
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


def glob_matcher(glob: str, argument: str) -> Callable[[str], bool]:
    """A test for relative posix paths, with ripgrep's rules: without '/', the glob matches the name at any depth."""
    if glob.startswith("/") or ".." in glob.split("/"):
        raise ToolError(f"{argument} {glob!r} must stay inside the folder searched: no leading '/' and no '..'.")
    if glob.startswith("!"):
        raise ToolError(f"{argument} {glob!r} starts with '!'; only globs that select files are supported.")
    matches = Glob(glob, argument=argument)
    if "/" in glob:
        return matches
    return lambda relpath: matches(relpath.rpartition("/")[2])


def _decode_line(raw: bytes) -> str:
    return raw.removesuffix(b"\n").removesuffix(b"\r").decode("utf-8", "replace")
