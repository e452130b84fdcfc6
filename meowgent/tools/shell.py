"""run_shell: one shell command in the workspace, with a time limit, Stop, and capped output.

Every command runs in the OS sandbox (meowgent.tools.sandbox) where this computer has one: writes only in the
workspace, no network unless the person allowed it, and a PID namespace, so nothing it starts outlives it.
Without one (another OS, no user namespaces, or --no-sandbox), it runs as a plain process group, and processes
that leave the group are found afterwards by a mark in their environment and ended.
"""

from __future__ import annotations

import math
import os
import signal
from dataclasses import replace
from typing import Annotated

from meowgent.tools.jobs import Finished, run_plain, run_sandboxed
from meowgent.tools.netguard import resolve_host
from meowgent.tools.netproxy import HostProxy, visited_line
from meowgent.tools.sandbox import NoSandbox, Sandbox, policy_for, sandbox_for, shell_environment
from meowgent.tools.spec import ScopedBy, ToolContext, ToolError, Visited, cap_text, tool

MAX_TIMEOUT = 600.0
"""Seconds; a longer `timeout` from the model is lowered to this."""
_COMMAND_ECHO = 300  # characters of the command repeated in the result; the model already knows it
_SECTION_FRAMING = 150  # characters of section headings and cut notes, besides the status lines


@tool(risky=True, scope=ScopedBy.COMMAND, command="command", main="command")
def run_shell(
    ctx: ToolContext,
    command: Annotated[str, "the command line; bash runs it in the workspace folder"],
    timeout: Annotated[float | None, "seconds before it is stopped (at most 600); omit for the default"] = None,
) -> str:
    """Run a shell command in the workspace folder with bash (shell=True, so pipes, `&&` and redirections work)
    and return its exit status, stdout and stderr. There is no stdin: interactive programs read end of input at
    once, so pass non-interactive flags such as `-y`. The command and every process it started are stopped when
    the time limit runs out or the person presses Stop; processes left in the background are stopped when it
    ends. Long output is cut in the middle, keeping its head and tail. Where the computer allows it, commands run
    in a sandbox: only the workspace and /tmp (empty each time) can be changed, and there is no network unless
    the person turns it on, for the hosts they name, through a proxy (HTTP_PROXY is set; pip, npm, git and curl
    use it). The result says which hosts were reached and refused; a download or install that fails for want of
    network or a host should be said, not retried.
    """
    if not command.strip():
        raise ToolError("command is empty; give the shell command to run.")
    limit = _time_limit(timeout, ctx.settings.shell_timeout)
    size = ctx.settings.max_tool_output
    finished, visited = _run(command, ctx, timeout=limit, keep=size)
    return _report(command, finished, visited, timeout=limit, size=size)


def _time_limit(requested: float | None, default: float) -> float:
    if requested is None:
        return default
    if math.isnan(requested) or requested <= 0:
        raise ToolError(f"timeout must be a positive number of seconds (at most {MAX_TIMEOUT:g}), got {requested}.")
    return min(requested, MAX_TIMEOUT)


def _run(command: str, ctx: ToolContext, *, timeout: float, keep: int) -> tuple[Finished, Visited | None]:
    """The finished command, and where it went through its proxy (None: it had none).

    With network, the command's only way out is a proxy of its own (meowgent.tools.netproxy) that lets it reach
    the hosts it was given; without a sandbox there is no proxy, and no way to hold a command to it.
    """
    settings = ctx.settings
    cwd = settings.workspace
    if not cwd.is_dir():
        problem = "Not a directory" if cwd.exists() else "No such file or directory"
        raise ToolError(f"could not start the command in {cwd}: {problem}.")
    sandbox = sandbox_for(settings)
    if isinstance(sandbox, NoSandbox) and sandbox.refused:
        raise ToolError(f"not run: commands are refused on this computer, as {sandbox.reason}.")
    if isinstance(sandbox, Sandbox):
        policy = policy_for(settings)
        if not ctx.network:
            return run_sandboxed(command, sandbox, policy, timeout=timeout, cancel=ctx.cancel, keep=keep), None
        resolve = ctx.resolve or resolve_host
        with HostProxy(ctx.network, allow_private=settings.allow_private_fetch, resolve=resolve) as proxy:
            policy = replace(policy, network=True, proxy=proxy.socket_path)
            finished = run_sandboxed(command, sandbox, policy, timeout=timeout, cancel=ctx.cancel, keep=keep)
        visited = proxy.visits.summary()
        ctx.on_visited(visited)
        return finished, visited
    env = shell_environment(os.environ, settings.shell_env, sandboxed=False)
    return run_plain(command, cwd=cwd, env=env, timeout=timeout, cancel=ctx.cancel, keep=keep), None


def _report(command: str, finished: Finished, visited: Visited | None, *, timeout: float, size: int) -> str:
    """The result for the model, at most about `size` characters."""
    lines = [
        f"$ {cap_text(command, _COMMAND_ECHO)}",
        f"exit status: {_status(finished.returncode)} ({finished.duration:.2f} s)",
    ]
    if finished.ending is not None:
        lines.append(finished.ending.value.format(timeout=timeout))
    if finished.escaped:
        names = ", ".join(finished.escaped)
        lines.append(f"Processes that had left its process group (setsid, nohup or a double fork) were ended: {names}.")
    if visited is not None:
        lines.append(visited_line(visited))
    budget = max(size - len("\n".join(lines)) - _SECTION_FRAMING, 100)
    stdout_room, stderr_room = _share(finished.stdout.total, finished.stderr.total, budget)
    for name, capture, room in (("stdout", finished.stdout, stdout_room), ("stderr", finished.stderr, stderr_room)):
        if capture.total:
            lines += [f"--- {name} ---", capture.text(room).rstrip("\n")]
    if not (finished.stdout.total or finished.stderr.total):
        lines.append("(no output)")
    return "\n".join(lines)


def _share(stdout_size: int, stderr_size: int, budget: int) -> tuple[int, int]:
    """Room for each stream: half the budget each, and what one leaves unused goes to the other.

    Sizes are in bytes, which bound the characters from above: a stream may get a little less room than it could.
    """
    half = budget // 2
    return budget - min(stderr_size, half), budget - min(stdout_size, half)


def _status(returncode: int) -> str:
    if returncode >= 0:
        return str(returncode)
    try:
        return f"killed by {signal.Signals(-returncode).name}"
    except ValueError:
        return f"killed by signal {-returncode}"
