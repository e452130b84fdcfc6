"""Files only this user can read: the data folder is 0700 and everything in it 0600.

Conversations, rules and exports hold whatever the model read from the workspace; on a shared
machine no other account may read them.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

FOLDER_MODE = 0o700
FILE_MODE = 0o600


def private_folder(path: Path) -> Path:
    """Create `path` (and its parents) if needed, and make it ours alone, also if it already existed."""
    path.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    path.chmod(FOLDER_MODE)
    return path


def private_file(path: Path) -> Path:
    """Create `path` empty if missing (0600 from the start, so it is never readable by others) and make it ours."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE)
    os.close(descriptor)
    path.chmod(FILE_MODE)
    return path


def write_private(path: Path, text: str) -> None:
    """Replace `path` with `text` in one step: a reader sees the old file or the new one, never half of it."""
    descriptor, staging = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")  # mkstemp makes it 0600
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(staging, path)
    except BaseException:
        Path(staging).unlink(missing_ok=True)
        raise


def private_temp_folder() -> Path:
    """A new temporary folder only we can read, removed with everything in it when the process exits."""
    folder = Path(tempfile.mkdtemp(prefix="meowgent-"))  # mkdtemp makes it 0700
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder
