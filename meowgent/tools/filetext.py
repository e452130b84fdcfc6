"""How the file tools speak of files: a close name for a missing one, binary files, counts, undecodable bytes,
and a failed read or write, in sentences the model can act on. Shared by `files` and `search`."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from meowgent.tools.spec import ToolError
from meowgent.tools.workspace import Workspace


def did_you_mean(workspace: Workspace, missing: Path) -> str:
    if missing == workspace.root:  # its parent is outside, and not ours to show
        return ""
    try:
        siblings = os.listdir(missing.parent)
    except OSError:
        return ""
    close = difflib.get_close_matches(missing.name, siblings, n=3)
    return f" (did you mean {', '.join(repr(name) for name in close)}?)" if close else ""


def is_binary(head: bytes) -> bool:
    return b"\0" in head


def binary_message(name: str, size: int, tool_name: str) -> str:
    return f"{name} is a binary file ({size:,} bytes); {tool_name} only handles text."


def printable(text: str) -> str:
    """Undecodable bytes kept by surrogateescape become '�': lone surrogates cannot be sent as JSON."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def os_error(action: str, name: str, exc: OSError) -> ToolError:
    return ToolError(f"could not {action} {name}: {exc.strerror or exc}.")
