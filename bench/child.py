"""A scripted model server in a child process, so it does not compete with the measured reader for the GIL."""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def served_in_child(module: str, function: str, *args: str) -> Iterator[str]:
    """Runs `module.function(*args)`, which prints its server's URL and serves until stdin closes; yields the URL."""
    os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")
    code = f"import sys; from {module} import {function}; {function}(*sys.argv[1:])"
    command = [sys.executable, "-c", code, *args]
    with subprocess.Popen(command, cwd=_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as child:
        try:
            ready, _, _ = select.select([child.stdout], [], [], 60)
            url = child.stdout.readline().strip() if ready else ""
            if not url.startswith("http"):
                raise RuntimeError(f"the scripted server did not start (exit code {child.poll()})")
            yield url
        finally:
            child.stdin.close()
            child.wait(10)
