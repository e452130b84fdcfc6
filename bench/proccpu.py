"""CPU seconds of processes from /proc: one process, or every Chromium process this one started; bytes this one read."""

from __future__ import annotations

import os
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str] | None:
    """/proc/PID/stat's fields after the command name (which may hold spaces), or None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def cpu_seconds(pid: int) -> float:
    """User and system time of a process, all its threads, and of its children it has waited for."""
    fields = _stat(pid)
    if fields is None:
        return 0.0
    # After the name: state ppid … utime(11) stime(12) cutime(13) cstime(14), counted from 0.
    return sum(int(value) for value in fields[11:15]) / _TICKS


def descendants(root: int) -> list[int]:
    """Every live process under `root` (children, theirs, …)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) is not None:
            parents[int(entry.name)] = int(fields[1])
    found, frontier = [], [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return found


def browser_seconds(root: int | None = None) -> float:
    """CPU seconds of every Chromium process under `root` (this process by default): browser, renderers, GPU."""
    total = 0.0
    for pid in descendants(root or os.getpid()):
        try:
            name = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            continue
        if name.startswith(("chromium", "chrome")):
            total += cpu_seconds(pid)
    return total


def bytes_read() -> int:
    """Bytes this process (all its threads) has read so far, as the kernel counts them (/proc/self/io's rchar)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise OSError("/proc/self/io has no rchar")
