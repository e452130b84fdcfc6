"""A sandboxed program as it is started: bwrap's command line, the environment, and the seccomp filter that bwrap
loads from an open descriptor (`--seccomp FD`), which a command line alone can't carry.

Whoever starts one can pass descriptors (`subprocess.Popen`'s `pass_fds`: run_shell, the probe) and uses
`with_filter`; a spawner that can't (the mcp SDK's stdio_client) uses `wrapped`.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from meowgent.tools import seccomp_exec
from meowgent.tools.gitguard import remove_planted


@dataclass(frozen=True)
class Launch:
    """A program to start: its whole command line and its whole environment, and the seccomp filter bwrap (the
    command line's first word) loads from a descriptor; start it through `with_filter` or `wrapped`."""

    argv: tuple[str, ...]
    env: dict[str, str]
    seccomp: bytes = b""
    """The filter's program (meowgent.tools.seccomp); b"" where this machine has none."""
    absent: tuple[Path, ...] = ()
    """Paths of git's code that were missing at the start and must be missing again once it ends (`ended`)."""

    def ended(self) -> list[Path]:
        """Undo what no cover could stop, once the program and everything it started have ended: a `commondir`
        it planted in a git folder (meowgent.tools.gitguard). The paths removed."""
        return remove_planted(self.absent)

    @contextlib.contextmanager
    def with_filter(self) -> Iterator[tuple[tuple[str, ...], tuple[int, ...]]]:
        """The command line that gives bwrap the filter on an open descriptor, and the descriptors to pass the
        process (`pass_fds`). Start it inside: the descriptor is closed on leaving, as the process has its copy."""
        if not self.seccomp:
            yield self.argv, ()
            return
        descriptor = seccomp_exec.filter_descriptor(self.seccomp)
        try:
            yield (self.argv[0], "--seccomp", str(descriptor), *self.argv[1:]), (descriptor,)
        finally:
            os.close(descriptor)

    def wrapped(self) -> tuple[str, ...]:
        """The command line for a spawner that can't pass descriptors: a few lines of Python make the descriptor,
        then become bwrap (meowgent.tools.seccomp_exec). Costs a Python start, so only where it is needed."""
        if not self.seccomp:
            return self.argv
        return (sys.executable, "-I", "-S", seccomp_exec.__file__, self.seccomp.hex(), *self.argv)
