"""What the model is told of the person's own acts on files (uploads, undos), in English as every note to it.

The chat service appends these to `Conversation.notes`; `Agent.run` sends them before the person's next message.
"""

from __future__ import annotations

from collections.abc import Iterable

from meowgent.files.sizes import human_size


def uploaded(written: Iterable[tuple[str, int]]) -> str:
    """Files the person uploaded, as (workspace path, bytes): "The person added report.pdf (2.1 MB) to the workspace."""
    files = ", ".join(f"{path} ({human_size(size)})" for path, size in written)
    return f"The person added {files} to the workspace."


def undone(paths: Iterable[tuple[str, bool]]) -> str:
    """Changes the person undid, as (workspace path, whether undoing removed the file)."""
    told = []
    for path, removed in paths:
        told.append(
            f"removed {path}, which you had created" if removed else f"put {path} back as it was before you changed it"
        )
    return f"The person undid your changes to files: {'; '.join(told)}. Read a file again before changing it."
