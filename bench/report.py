"""Shared helpers for benchmark reports: markdown tables and the machine they ran on."""

from __future__ import annotations

import os
import platform


def table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def machine() -> str:
    """`2 cores, Intel(R) Xeon(R) ..., Python 3.11.7`: enough to compare runs honestly."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{os.cpu_count()} cores, {cpu}, Python {platform.python_version()}"
