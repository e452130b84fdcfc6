"""How a stdio MCP server is really started: in the sandbox shell commands run in, when its configuration asks.

With `"sandbox": {"hosts": [...]}` it runs as a networked command does: in a network namespace of its own, whose
one way out is a proxy (meowgent.tools.netproxy) that lets it reach those hosts. The proxy is the server's own and
lives as long as it does: `McpManager` enters what `sandboxed` prepares before the server starts and leaves it after
the server's process has ended. Each host the server reaches or is refused is written to Meowgent's log the first
time; the manager tells each call which hosts were asked for while it ran, for the call's record.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path

from meowgent.config import Settings
from meowgent.mcp.config import ServerConfig
from meowgent.tools.mounts import SandboxPolicy
from meowgent.tools.netguard import Resolver, resolve_host
from meowgent.tools.netproxy import HostProxy, Visits
from meowgent.tools.sandbox import NoSandbox, Sandbox, SandboxUnavailable, policy_for, sandbox_for

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Prepared:
    """A server as it is started: its configuration (for a sandboxed one, the sandbox's command line), and the record
    of where it went through its proxy (None: it has no proxy)."""

    config: ServerConfig
    visits: Visits | None = None


Prepare = Callable[[ServerConfig], AbstractContextManager[Prepared]]
"""How the manager starts a server: entered before it starts, left once it has ended; raising says why it can't."""


def as_configured(config: ServerConfig) -> AbstractContextManager[Prepared]:
    """The server as its configuration says, with nothing around it."""
    return contextlib.nullcontext(Prepared(config))


def sandboxed(settings: Settings, *, resolve: Resolver = resolve_host) -> Prepare:
    """A server that asks for the sandbox, as started in it: the shell's policy (the workspace writable, the data
    folder hidden), a clean environment plus its own `env`, and with hosts, its own proxy (which finds addresses with
    `resolve`: tests name a local server with it). Without a sandbox it does not start (SandboxUnavailable): the
    person asked for one."""

    @contextlib.contextmanager
    def prepare(config: ServerConfig) -> Iterator[Prepared]:
        if not config.sandbox or config.command is None:
            yield Prepared(config)
            return
        found = sandbox_for(settings)
        if isinstance(found, NoSandbox):
            raise SandboxUnavailable(
                f"it asks for a sandbox and this computer has none, so it was not started ({found.reason})"
            )
        policy = policy_for(settings, cwd=Path(config.cwd or ".").resolve())
        if not config.hosts:
            yield Prepared(_in_sandbox(config, found, policy))
            return
        visits = Visits(on_new=lambda host, reached: _log_visit(config.name, host, reached=reached))
        with HostProxy(
            config.hosts,
            allow_private=settings.allow_private_fetch,
            resolve=resolve,
            visits=visits,
            asker=f"the MCP server {config.name}",
            to_allow=f'The person can add it to the "hosts" of {config.name} in the MCP configuration.',
        ) as proxy:
            policy = replace(policy, network=True, proxy=proxy.socket_path)
            yield Prepared(_in_sandbox(config, found, policy), visits)

    return prepare


def _in_sandbox(config: ServerConfig, sandbox: Sandbox, policy: SandboxPolicy) -> ServerConfig:
    """The configuration whose command starts the server in the sandbox `policy` describes."""
    launch = sandbox.launch(policy, [str(config.command), *config.args])
    argv = launch.wrapped()  # stdio_client can't pass bwrap the filter's descriptor
    return replace(config, command=argv[0], args=argv[1:], env=launch.env | config.env, cwd=None)


def _log_visit(server: str, host: str, *, reached: bool) -> None:
    """Where the person sees what a server did outside any call: Meowgent's log (warnings show in its terminal)."""
    if reached:
        log.warning("MCP server %s reached %s through its proxy", server, host)
    else:
        log.warning("MCP server %s was refused %s by its proxy (not among its hosts, or not public)", server, host)
