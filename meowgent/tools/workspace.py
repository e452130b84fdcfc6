"""Workspace: the one folder the file tools may touch; every path goes through `resolve`."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from meowgent.tools import ToolError


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
        try:
            # realpath does not always report a loop; stat does, and also catches unusable names.
            resolved.stat()
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise ToolError(self._loop_message(path)) from None
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
                raise ToolError(f"cannot use the path {path!r}: {exc.strerror}.") from None
        if not resolved.is_relative_to(self.root):
            raise ToolError(
                f"{path!r} is outside the workspace {self.root}{self._via_link(path, resolved)}; "
                "use a path inside it, such as 'notes.md'."
            )
        return resolved

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
