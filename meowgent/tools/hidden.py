"""What a sandboxed command may not even read: the files Meowgent reads a secret from, well-known credentials in
the home folder, the host's temporary folder; and, for as long as Meowgent runs, every real path it hid before.

The sandbox covers each hidden path by its real path at launch, and pins the folders between it and the workspace
so that nothing can be renamed (meowgent.tools.mounts). What a symbolic link inside the workspace points to can
still change: a link planted where a credential did not exist yet (`~/.config/gh` → `~/notes`), filled later by
the person's own tools, then pointed elsewhere, would un-hide `~/notes`. So a real path, once hidden, stays hidden
while it exists.
"""

from __future__ import annotations

import functools
import os
import tempfile
import threading
from pathlib import Path

from meowgent.config import Settings
from meowgent.mcp.config import config_path

SECRET_FOLDERS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".config/gcloud",
    ".config/gh",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials.toml",
    ".password-store",
    ".local/share/keyrings",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".config/git/credentials",
    ".config/containers/auth.json",
    ".ollama/id_ed25519",
    ".cache/huggingface/token",
)
"""Under the home folder: keys, tokens and logins whose whole content is a credential, and which no build or test
reads. A command could copy them into the workspace for a later command with network, so they are hidden too."""

_hidden_before: set[Path] = set()
"""Every real path this process has hidden (see the module's docstring); guarded by `_remembering`."""
_remembering = threading.Lock()


@functools.cache
def host_temporary_folder() -> Path:
    """The host's temporary folder (resolved): Gradio's private cache (exports, uploads) lives there."""
    return Path(tempfile.gettempdir()).resolve()


def hidden_for(settings: Settings) -> tuple[Path, ...]:
    """What a command of this server may not read (as given, not resolved)."""
    home, host_tmp = Path.home(), host_temporary_folder()
    return (
        settings.data_dir,
        config_path(settings.data_dir, settings.mcp_config),
        *settings.secret_files,
        *([host_tmp] if host_tmp != settings.workspace else []),  # a workspace of /tmp itself stays one
        *(home / name for name in SECRET_FOLDERS),
    )


def remembered(real: set[Path], *, workspace: Path) -> set[Path]:
    """`real` (the real paths hidden now), and those hidden before that still exist and don't hold the workspace.
    The host's temporary folder is left out: it is hidden by its name, or is the workspace."""
    host_tmp = host_temporary_folder()
    with _remembering:
        _hidden_before.update(path for path in real if path != host_tmp and os.path.lexists(path))
        before = set(_hidden_before)
    return real | {path for path in before if os.path.lexists(path) and not workspace.is_relative_to(path)}
