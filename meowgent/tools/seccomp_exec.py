"""Becomes bwrap with the seccomp filter on a descriptor, for a spawner that can't pass one (the mcp SDK's
stdio_client, which starts servers through anyio without `pass_fds`).

Run as `python -I -S seccomp_exec.py PROGRAM_HEX BWRAP OPTION...` (see `Launch.wrapped`): it stands alone, with no
import of Meowgent or site-packages, puts the program in a memory file and execs bwrap, which keeps the process id,
so the spawner ends bwrap as it would have ended its own child.
"""

from __future__ import annotations

import os
import sys


def filter_descriptor(program: bytes) -> int:
    """A memory file holding `program`, read from its start; closed at exec unless made inheritable."""
    descriptor = os.memfd_create("meowgent-seccomp", os.MFD_CLOEXEC)
    view = memoryview(program)
    while view:
        view = view[os.write(descriptor, view) :]
    os.lseek(descriptor, 0, os.SEEK_SET)
    return descriptor


def main(arguments: list[str]) -> None:
    program, bwrap, *options = arguments
    descriptor = filter_descriptor(bytes.fromhex(program))
    os.set_inheritable(descriptor, True)
    os.execv(bwrap, [bwrap, "--seccomp", str(descriptor), *options])


if __name__ == "__main__":
    main(sys.argv[1:])
