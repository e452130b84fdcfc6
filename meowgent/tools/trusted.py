"""What the host runs and trusts: its Python environment, Meowgent's own code, and the programs it runs itself
(ripgrep, git, bubblewrap, MCP servers), found once per process from places no sandboxed command can write.

A command in the sandbox may change the workspace, so anything the host later runs from there could be the
command's: a virtualenv's `rg`, a `git` in a PATH folder inside it, a `.pth` file in site-packages. The sandbox
binds `host_code()` and the programs read-only over the workspace (`meowgent.tools.sandbox.policy_for`), and
`host_program` refuses a candidate that is inside the workspace without being under one of those, or that another
account could replace (it, or a folder above it, writable by someone else).
"""

from __future__ import annotations

import functools
import os
import site
import stat
import sys
from collections.abc import Sequence
from pathlib import Path

from meowgent.mcp.config import ServerConfig

MEOWGENT_CODE = Path(__file__).resolve().parents[2]
"""The folder that holds the `meowgent` package (and app.py in a checkout): Python imports from it at start."""
GIT_SETTINGS = (".gitconfig", ".config/git/config")
"""Under the home folder: git's own settings, read-only (with the home folder as the workspace, `core.fsmonitor`
there would run at the host's next git command)."""
SCRIPT_SUFFIXES = frozenset({".py", ".js", ".mjs", ".cjs", ".ts", ".sh", ".rb", ".pl", ".jar"})
"""An MCP server's argument with one of these names code the server runs (`python server.py`)."""


@functools.cache
def host_code() -> tuple[Path, ...]:
    """Where Meowgent's Python runs and imports from (resolved, existing): its prefixes, every folder on sys.path
    (site-packages, where a `.pth` file runs at start) and its own code. Nested ones are all kept: with
    `sys.base_prefix` /usr and a virtualenv in a workspace under /usr/local, only the inner one is below the
    workspace's bind."""
    places = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *site.getsitepackages()]
    if site.ENABLE_USER_SITE:
        places.append(site.getusersitepackages())
    places += [entry for entry in sys.path if entry]  # "" is the folder a `python -c` ran in, not ours to pin
    found = {Path(os.path.realpath(place)) for place in [*places, MEOWGENT_CODE] if os.path.exists(place)}
    return tuple(sorted(found))


def user_site(workspace: Path) -> tuple[Path, ...]:
    """Python's user site-packages (resolved) where Meowgent's Python reads it at start (`.pth` files,
    `usercustomize.py`) and it lies in the workspace (a home folder as the workspace), made if it is missing, empty,
    as `pip install --user` would: a missing folder can't be bound read-only, and a command could make it."""
    if not site.ENABLE_USER_SITE:
        return ()  # a virtualenv's Python never reads it
    folder = Path(site.getusersitepackages())
    if not inside(Path(os.path.realpath(folder)), workspace):
        return ()  # read-only already, or out of reach of a command
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return ()  # no command of ours can make it either
    return (Path(os.path.realpath(folder)),)


def inside(path: Path, folder: Path) -> bool:
    """`path.is_relative_to(folder)` for absolute, normal paths, at a tenth of pathlib's cost: the sandbox asks it
    for every pair of mounts, at every command."""
    text, base = str(path), str(folder)
    return text == base or text.startswith(base if base.endswith("/") else base + "/")


def kept_read_only(path: Path, workspace: Path) -> bool:
    """Whether the sandbox keeps `path` (resolved) from being changed: outside the workspace, or under host code
    that is itself inside it (the read-only bind is then deeper than the workspace's writable one)."""
    if not inside(path, workspace):
        return True
    return any(inside(path, root) and inside(root, workspace) for root in host_code())


def writable_by_others(path: Path) -> bool:
    """Whether an account other than ours (and root) could replace `path`: it or a folder above it belongs to
    someone else, or is writable by others (a sticky folder such as /tmp only lets them change their own)."""
    ours = {0, os.geteuid()}
    for place in (path, *path.parents):
        try:
            found = os.stat(place)
        except OSError:
            return True
        if found.st_uid not in ours:
            return True
        if stat.S_ISDIR(found.st_mode) and found.st_mode & stat.S_ISVTX:
            continue  # what is below is ours, and others can't rename it
        if found.st_mode & stat.S_IWOTH or (found.st_mode & stat.S_IWGRP and found.st_gid != os.getegid()):
            return True
    return False


def trustworthy(candidate: Path, workspace: Path) -> bool:
    """Whether the host may run `candidate`: no sandboxed command and no other account can have put it there."""
    real = Path(os.path.realpath(candidate))
    if not (os.path.isfile(real) and os.access(real, os.X_OK)):
        return False
    return kept_read_only(real, workspace) and not writable_by_others(real)


@functools.cache
def host_program(name: str, workspace: Path) -> Path | None:
    """The program `name` the host runs, resolved: beside Meowgent's Python first (where pip puts ripgrep, which
    need not be on PATH), then PATH in order, skipping every candidate that is not trustworthy."""
    folders = [Path(sys.executable).parent, *(Path(entry) for entry in os.get_exec_path() if entry)]
    for folder in folders:
        candidate = folder / name
        if folder.is_absolute() and trustworthy(candidate, workspace):  # a relative entry means the cwd
            return Path(os.path.realpath(candidate))
    return None


def server_programs(servers: Sequence[ServerConfig]) -> tuple[Path, ...]:
    """What stdio MCP servers start from (resolved, existing files): each command, found on PATH or from its
    folder, and the scripts named in its arguments (`server.py`, `build/index.js`). Not its data: a folder or a
    database named in an argument stays as writable as the workspace makes it."""
    found: list[Path] = []
    for server in servers:
        if server.command is None:
            continue
        folder = Path(server.cwd).expanduser() if server.cwd else Path.cwd()
        path = server.env.get("PATH") or os.environ.get("PATH", os.defpath)
        command = server.command if "/" in server.command else _which(server.command, path)
        scripts = [arg for arg in server.args if Path(arg).suffix in SCRIPT_SUFFIXES]
        found += [folder / word for word in (command, *scripts) if word]
    return tuple(sorted({Path(os.path.realpath(place)) for place in found if os.path.isfile(place)}))


def _which(name: str, path: str) -> str:
    for entry in path.split(os.pathsep):
        candidate = Path(entry or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return str(candidate)
    return ""
