"""What a sandboxed program may do and what it sees of this computer: a `SandboxPolicy` and the host's facts
(`HostView`) turned into bubblewrap's options, purely (`bwrap_options`).

A `SandboxPolicy` is a small frozen value: the workspace (the only folder a command may change), whether it may
reach the network, what it may not even read (meowgent.tools.hidden), what the host trusts and so keeps read-only
(meowgent.tools.trusted), and which extra variables it gets. `HostView.read` looks up the few facts of this computer
the mounts depend on; `bwrap_options` turns both into bwrap's options without touching anything.

What the options promise (docs/reliability.md has the threat model and its tests):
- writes only in the workspace and a private, empty /tmp (everything else is `--ro-bind / /`);
- the data folder, the login file, the MCP configuration, the host's temporary folder, `/run` (where sockets such
  as docker.sock and the D-Bus bus live: a Unix socket on a read-only mount can still be connected to) and
  well-known folders of credentials are covered by something empty, and stay where they are: every folder between
  the workspace and one of them is bound onto itself, and a mount point can't be renamed;
- nothing the host runs or trusts is writable, even inside the workspace: Meowgent's Python and code, the programs
  it runs, and git's own code in every repository of the workspace (meowgent.tools.gitguard);
- no network without `network` (a network namespace with only its own loopback);
- no process outlives the command: a PID namespace, which the kernel empties when its init ends;
- nothing to type into (`--new-session`, as Codex and Claude Code's sandbox runtime do against TIOCSTI), no
  further user namespaces (`--disable-userns`, where the bwrap knows it), no capabilities (bwrap drops them for
  anyone but root; `--cap-drop ALL` as root).
The seccomp filter that keeps the kernel from undoing the mounts is meowgent.tools.seccomp's, loaded by
meowgent.tools.sandbox's launch.
"""

from __future__ import annotations

import enum
import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from meowgent.persist.private import private_temp_folder
from meowgent.tools import netbridge
from meowgent.tools.gitguard import git_guard
from meowgent.tools.hidden import remembered
from meowgent.tools.trusted import inside

PRIVATE_TMP = "/tmp"
"""The command's own temporary folder, a fresh tmpfs: TMPDIR and the pip and npm caches point into it."""


@dataclass(frozen=True)
class SandboxPolicy:
    """What one sandboxed program may do."""

    workspace: Path
    """The only folder it may change (resolved)."""
    network: bool = False
    """Whether it may reach the network; without it, only its own loopback."""
    hidden: tuple[Path, ...] = ()
    """Folders and files it may not read: each is covered by an empty one."""
    env_names: tuple[str, ...] = ()
    """Variables of Meowgent's environment it also gets (never MEOWGENT_*)."""
    cwd: Path | None = None
    """Where it starts; the workspace when None."""
    trusted: tuple[Path, ...] = ()
    """What the host runs or trusts (resolved): readable, and never writable, whatever covers the folders above
    them, the workspace's writable bind included. Meowgent's Python environment and code, the programs it runs
    (bwrap, ripgrep, git, MCP servers), git's settings; for an MCP server outside the workspace, its own folder
    (which may live under the host's /tmp)."""
    proxy: Path | None = None
    """The Unix socket of the host's proxy (meowgent.tools.netproxy): with it, the network namespace is its own
    whatever `network` says, and this proxy, bridged to its 127.0.0.1, is its one way out."""


@dataclass(frozen=True)
class HostView:
    """The facts of this computer the mounts depend on: which hidden paths exist (links followed), the workspace's
    git folders, which folders must not be renamed, and DNS."""

    hidden_folders: tuple[Path, ...] = ()
    hidden_files: tuple[Path, ...] = ()
    dns: Path | None = None
    """The real file behind /etc/resolv.conf when it is under /run (systemd-resolved), which is hidden."""
    empty_file: Path = Path("/dev/null")
    """What covers a hidden file. An empty regular file in practice: bwrap mounts /dev/null `nodev`, so a program
    that reads a hidden ~/.npmrc would fail on "Permission denied" instead of finding nothing."""
    pinned: tuple[Path, ...] = ()
    """Folders bound onto themselves where they are writable: a mount point can't be renamed, so a hidden or kept
    path stays where it was for the next command too (`mv ~/.config ~/.c2` would un-hide `~/.config/gh`)."""
    kept: tuple[Path, ...] = ()
    """Existing paths of git's own code in the workspace (meowgent.tools.gitguard): read-only."""
    emptied: tuple[Path, ...] = ()
    """Missing folders to cover with an empty one where they could be made (a repository's hooks)."""
    blanked: tuple[Path, ...] = ()
    """Missing files to cover with the empty file where they could be made (a repository's config)."""
    absent: tuple[Path, ...] = ()
    """Missing files that must still be missing when the program ends (a planted `commondir`): see `Launch`."""

    @classmethod
    def read(cls, policy: SandboxPolicy) -> HostView:
        # Resolved, because bwrap mounts on the real path, and can't put a file over a symbolic link (Claude Code's
        # sandbox runtime found the same with dotfiles that link into a dotfile manager's folder).
        now = {Path(os.path.realpath(path)) for path in policy.hidden if os.path.lexists(path)}
        real = remembered(now, workspace=policy.workspace)
        # os.path's checks: a folder we may not enter (another account's home) has nothing we can hide.
        folders = tuple(sorted(path for path in real if os.path.isdir(path)))
        files = tuple(sorted(path for path in real if os.path.exists(path) and not os.path.isdir(path)))
        resolv = Path(os.path.realpath("/etc/resolv.conf"))
        dns = resolv if policy.network and resolv.is_relative_to("/run") and os.path.isfile(resolv) else None
        git = git_guard(policy.workspace)
        guarded = [*folders, *files, *policy.trusted, *git.pinned, *git.kept, *git.emptied, *git.blanked]
        pinned = {*pinned_between(policy.workspace, guarded), *git.pinned}
        empty_file = _empty_file() if files or git.blanked else Path("/dev/null")
        return cls(
            folders, files, dns, empty_file, tuple(sorted(pinned)), git.kept, git.emptied, git.blanked, git.absent
        )


def pinned_between(workspace: Path, paths: Iterable[Path]) -> tuple[Path, ...]:
    """The folders strictly between the workspace and each path inside it: bound onto themselves, they keep the
    paths where they are."""
    inner = [path for path in paths if inside(path, workspace)]
    between = {folder for path in inner for folder in path.parents if inside(folder, workspace)}
    return tuple(sorted(between - {workspace}))


class _Cover(enum.IntEnum):
    """How a path is covered; on the same path, a later one wins: keeping read-only beats the workspace's bind,
    and hiding beats both (Python run from a script in /tmp has /tmp on its path, and /tmp stays hidden)."""

    EMPTY = 0
    WRITABLE = 1
    PINNED = 2
    EMPTIED = 3
    BLANKED = 4
    READ_ONLY = 5
    HIDDEN_FOLDER = 6
    HIDDEN_FILE = 7


_SHOWS_EMPTY = (_Cover.EMPTY, _Cover.HIDDEN_FOLDER)
_SHOWS_WRITABLE = (_Cover.WRITABLE, _Cover.PINNED)


def bwrap_options(
    policy: SandboxPolicy, view: HostView, *, disable_userns: bool, as_pid_1: bool = False, as_root: bool = False
) -> list[str]:
    """bwrap's options for `policy` on a computer that looks like `view` (everything before `--`).

    `as_root`: Meowgent runs as root, where bwrap would leave the command every capability in its namespace; as
    anyone else bwrap drops them all itself, and a setuid bwrap refuses `--cap-drop` from them.

    With `as_pid_1` the program is the PID namespace's init: bwrap then returns only once the kernel has ended
    every process in it. With bwrap's own init, bwrap returns as soon as the program exits, while the kernel is
    still ending the others (measured: a process or two of ten still alive as bwrap returned).

    The file system is read-only (`--ro-bind / /`), then paths are covered from the shallowest to the deepest, so
    the most specific one decides: the data folder inside the workspace stays hidden, a workspace inside a hidden
    folder stays writable, a virtualenv inside the workspace stays read-only. (Codex and Claude Code's sandbox
    runtime order their binds for the same reason, the latter re-binding writable paths that a later tmpfs wiped;
    sorting by depth makes every nesting right at once.) A layer that would change nothing is left out: a hidden
    path under something already empty (the data folder in /tmp), a read-only one under the read-only root, a pin
    where nothing is writable.
    """
    options = ["--die-with-parent", "--new-session", "--unshare-user", "--unshare-pid", "--unshare-ipc"]
    options += ["--unshare-uts", "--unshare-cgroup-try", *(["--cap-drop", "ALL"] if as_root else [])]
    if disable_userns:
        options.append("--disable-userns")
    if as_pid_1:
        options.append("--as-pid-1")
    if not policy.network or policy.proxy is not None:
        options.append("--unshare-net")
    options += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    layers = [(Path(PRIVATE_TMP), _Cover.EMPTY), (Path("/run"), _Cover.EMPTY), (policy.workspace, _Cover.WRITABLE)]
    for kind, paths in (
        (_Cover.HIDDEN_FOLDER, view.hidden_folders),
        (_Cover.HIDDEN_FILE, view.hidden_files),
        (_Cover.READ_ONLY, (*policy.trusted, *view.kept, *([view.dns] if view.dns else []))),
        (_Cover.PINNED, view.pinned),
        (_Cover.EMPTIED, view.emptied),
        (_Cover.BLANKED, view.blanked),
    ):
        layers += [(path, kind) for path in paths]
    shown: list[tuple[Path, _Cover]] = []
    for path, kind in sorted(layers, key=lambda layer: (len(layer[0].parts), layer[1])):
        above = [other_kind for other, other_kind in shown if inside(path, other)]
        if _changes(kind, above[-1] if above else None):
            shown.append((path, kind))
            options += _cover(path, kind, view.empty_file)
    if policy.proxy is not None:  # after the layers: /run is an empty tmpfs by then
        options += ["--ro-bind", str(policy.proxy), netbridge.SOCKET]
    options += ["--chdir", str(policy.cwd or policy.workspace)]
    return options


def _changes(kind: _Cover, above: _Cover | None) -> bool:
    """Whether covering a path as `kind` changes what it shows, under `above` (None: the read-only root)."""
    match kind:
        case _Cover.HIDDEN_FOLDER | _Cover.HIDDEN_FILE:
            return above not in _SHOWS_EMPTY
        case _Cover.PINNED | _Cover.EMPTIED | _Cover.BLANKED:  # the last two make a mount point: only where writable
            return above in _SHOWS_WRITABLE
        case _Cover.READ_ONLY:
            return above not in (None, _Cover.READ_ONLY)
    return True


def _cover(path: Path, kind: _Cover, empty_file: Path) -> list[str]:
    where = str(path)
    match kind:
        case _Cover.EMPTY | _Cover.HIDDEN_FOLDER | _Cover.EMPTIED:
            return ["--tmpfs", where]
        case _Cover.WRITABLE | _Cover.PINNED:
            return ["--bind", where, where]
        case _Cover.HIDDEN_FILE | _Cover.BLANKED:
            return ["--ro-bind", str(empty_file), where]
    return ["--ro-bind", where, where]


@functools.cache
def _empty_file() -> Path:
    """An empty read-only file of this process, to cover hidden files with (removed when the process exits)."""
    path = private_temp_folder() / "empty"
    path.touch(mode=0o444)
    return path
