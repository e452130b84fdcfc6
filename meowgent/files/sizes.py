"""A size as people read it: "2.1 MB", "640 bytes" (decimal units, as file managers show them)."""

from __future__ import annotations

_UNITS = ("KB", "MB", "GB", "TB")


def human_size(size: int) -> str:
    """`size` bytes in the largest decimal unit that keeps the number below 1000, to one decimal."""
    if size < 1000:
        return f"{size} byte{'' if size == 1 else 's'}"
    value = size / 1000
    for unit in _UNITS[:-1]:
        if value < 999.95:
            return f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} {_UNITS[-1]}"
