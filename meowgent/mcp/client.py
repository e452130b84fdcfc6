"""McpManager: one asyncio loop in a background thread that owns every MCP server session.

The SDK is async and our tool calls run in a run thread, synchronously. So each server lives in
one task on the manager's loop (the SDK's transports must be entered and left by the same task),
and `call()` submits a coroutine to that loop and waits for it, watching the run's cancel flag:
Stop cancels the call. A server that cannot start, exits, stops answering or sends something
that is not MCP becomes "stopped" with a sentence saying why; the others keep working.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import tempfile
import threading
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import IO, Any, Literal, TypeVar

import httpx2
import mcp_types
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from meowgent.mcp.config import ServerConfig
from meowgent.mcp.redact import scrubbed
from meowgent.mcp.sandboxed import Prepare, as_configured
from meowgent.tools.netproxy import Visits
from meowgent.tools.spec import Visited

log = logging.getLogger(__name__)

PING_SECONDS = 15.0
"""How often an idle server is asked whether it is still there, so a crash shows in the sidebar."""
_CLOSE_SECONDS = 10.0
_CONNECTION_CLOSED = -32000  # JSON-RPC code the SDK gives calls whose connection ended

Status = Literal["starting", "running", "stopped"]
_T = TypeVar("_T")


class _Ended(Exception):
    """The server failed or was stopped while we waited for it; the message says why."""


class McpCallError(Exception):
    """A call that did not produce a result: the message is a sentence for the model and the person."""


@dataclass(frozen=True)
class ServerState:
    """What the sidebar shows of one server: `detail` says why it stopped."""

    name: str
    status: Status
    detail: str = ""
    tools: tuple[mcp_types.Tool, ...] = ()


class _Connection:
    """One server's session and what the manager knows of it; touched only on the loop, except `state`."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.state = ServerState(config.name, "starting")
        self.session: ClientSession | None = None
        self.wake = asyncio.Event()  # set to end the session: a stop, or a failure in `failure`
        self.failure: str | None = None
        self.task: concurrent.futures.Future[None] | None = None
        self.generation = 0  # counts restarts: a session that ended long ago must not publish over a new one
        self.visits: Visits | None = None  # where the server went through its proxy, when it has one


class McpManager:
    """The configured MCP servers: start, call, watch, restart and stop them."""

    def __init__(
        self,
        servers: Sequence[ServerConfig],
        *,
        timeout: float,
        on_change: Callable[[ServerState], None] = lambda state: None,
        prepare: Prepare = as_configured,
    ) -> None:
        self._connections = {config.name: _Connection(config) for config in servers}
        self._timeout = timeout
        self._on_change = on_change
        self._prepare = prepare
        """How a server is really started (in the sandbox: meowgent.mcp.sandboxed); raising says why it is not."""
        self._changed = threading.Condition(threading.RLock())
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closing = False

    def start(self) -> None:
        """Start the loop and every server, without waiting for them."""
        if self._loop is not None or not self._connections:
            return
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mcp", daemon=True)
        self._thread.start()
        for name in self._connections:
            self.restart(name)

    def close(self) -> None:
        """Stop every server (their processes end) and the loop."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        self._closing = True  # before the wake-ups: a session starting now sees it
        for connection in self._connections.values():
            loop.call_soon_threadsafe(connection.wake.set)
        for connection in self._connections.values():
            if connection.task is not None:
                with contextlib.suppress(Exception):
                    connection.task.result(timeout=_CLOSE_SECONDS)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=_CLOSE_SECONDS)
        self._loop = self._thread = None

    def states(self) -> list[ServerState]:
        """Every configured server's state, in the configuration's order."""
        return [connection.state for connection in self._connections.values()]

    def state(self, name: str) -> ServerState:
        return self._connections[name].state

    def wait_settled(self, timeout: float) -> bool:
        """Wait until no server is starting; False if some still are after `timeout` seconds."""
        with self._changed:
            return self._changed.wait_for(lambda: all(s.status != "starting" for s in self.states()), timeout)

    def restart(self, name: str) -> None:
        """Start the server again if it is stopped (or for the first time)."""
        connection = self._connections[name]
        with self._changed:
            if self._loop is None or (connection.task is not None and connection.state.status != "stopped"):
                return
            previous = connection.task
            connection.generation += 1
            self._publish(connection, ServerState(name, "starting"))
            serve = self._serve(connection, previous, connection.generation)
            connection.task = asyncio.run_coroutine_threadsafe(serve, self._loop)

    def call(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any],
        *,
        cancel: threading.Event,
        on_visited: Callable[[Visited], None] = lambda visited: None,
    ) -> Any:
        """Call one tool and wait for its result (a `CallToolResult`); Stop (`cancel`) ends the wait. A server with a
        proxy tells `on_visited`, however the call ends, which hosts it reached and was refused while the call ran.

        Raises McpCallError when the server is not running, fails, takes too long or is stopped.
        """
        connection, loop = self._connections[server], self._loop
        if loop is None or connection.state.status != "running":
            raise McpCallError(not_running(connection.state))
        visits = connection.visits
        if visits is None:
            return _wait(loop, self._call(connection, tool, arguments), tool=tool, server=server, cancel=cancel)
        with visits.watching() as during:
            try:
                return _wait(loop, self._call(connection, tool, arguments), tool=tool, server=server, cancel=cancel)
            finally:
                on_visited(during.summary())

    async def _serve(
        self, connection: _Connection, previous: concurrent.futures.Future[None] | None, generation: int
    ) -> None:
        """The server's whole life, in one task: connect, list its tools, watch it, close it."""
        if previous is not None:  # a failed session may still be closing its process
            await asyncio.wait([asyncio.wrap_future(previous)])
        connection.wake = asyncio.Event()
        connection.failure = None
        if self._closing:
            connection.wake.set()
        config = connection.config
        # The server's error output (stdio): its last line often says why it stopped.
        with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errors:
            try:
                async with contextlib.AsyncExitStack() as stack:
                    # First in, last out: a server's proxy closes once its process has ended.
                    prepared = stack.enter_context(self._prepare(config))
                    connection.visits = prepared.visits
                    read, write = await stack.enter_async_context(_transport(prepared.config, errors))
                    session = ClientSession(read, write, message_handler=self._message_handler(connection))
                    await stack.enter_async_context(session)
                    tools = await self._unless_failed(connection, _handshake(session))
                    connection.session = session
                    self._publish(connection, ServerState(config.name, "running", tools=tools))
                    reason = await self._watch(connection, session, errors)
            except Exception as exc:  # the server's failure, not ours: it becomes the stopped state's sentence
                reason = describe_failure(exc, config, self._timeout, errors)
            finally:
                connection.session = None
                connection.visits = None
        with self._changed:
            if connection.generation == generation:  # else a restart already said "starting"
                self._publish(connection, ServerState(config.name, "stopped", reason, connection.state.tools))

    async def _watch(self, connection: _Connection, session: ClientSession, errors: IO[str] | None) -> str:
        """Wait until asked to stop or the server fails; ping it when idle. Returns why it ended."""
        while True:
            try:
                await asyncio.wait_for(connection.wake.wait(), PING_SECONDS)
                return connection.failure or "turned off"
            except asyncio.TimeoutError:
                pass
            try:
                await asyncio.wait_for(session.send_ping(), self._timeout)
            except Exception as exc:
                return describe_failure(exc, connection.config, self._timeout, errors)

    async def _call(self, connection: _Connection, tool: str, arguments: dict[str, Any]) -> Any:
        session = connection.session
        if session is None:
            raise McpCallError(not_running(connection.state))
        try:
            return await self._unless_failed(connection, session.call_tool(tool, arguments))
        except _Ended as exc:
            raise McpCallError(f"{connection.config.name} stopped during the call: {exc}") from None
        except asyncio.TimeoutError:
            self._fail(connection, f"a call to {tool} did not finish within {self._timeout:g} seconds")
            raise McpCallError(f"{connection.config.name} did not answer within {self._timeout:g} seconds.") from None
        except MCPError as exc:
            if exc.code != _CONNECTION_CLOSED:
                raise McpCallError(f"{connection.config.name} refused the call: {exc.error.message}") from None
            ended = "the server process ended" if connection.config.command else "the server closed the connection"
            self._fail(connection, f"{ended} during a call to {tool}")
            raise McpCallError(f"{connection.config.name} stopped during the call (connection closed).") from None

    async def _unless_failed(self, connection: _Connection, work: Coroutine[Any, Any, _T]) -> _T:
        """The work's result within the timeout, unless the server fails (or is stopped) first."""
        task = asyncio.ensure_future(asyncio.wait_for(work, self._timeout))
        ended = asyncio.ensure_future(connection.wake.wait())
        try:
            await asyncio.wait({task, ended}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ended.cancel()
            if not task.done():
                task.cancel()
        if task.done() and not task.cancelled():
            return task.result()
        raise _Ended(connection.failure or "turned off")

    def _message_handler(self, connection: _Connection) -> Callable[[Any], Any]:
        async def handle(message: Any) -> None:
            # The transport hands over what it could not read: the server is not speaking MCP.
            if isinstance(message, Exception):
                self._fail(connection, f"it sent something that is not MCP JSON ({_short(message)})")

        return handle

    def _fail(self, connection: _Connection, reason: str) -> None:
        """End the server's session because of `reason` (called on the loop); it shows as stopped at once."""
        connection.failure = connection.failure or reason
        connection.wake.set()
        state = connection.state
        if state.status == "running":
            self._publish(connection, ServerState(state.name, "stopped", connection.failure, state.tools))

    def _publish(self, connection: _Connection, state: ServerState) -> None:
        # The listener runs before the waiters wake: whoever waited for "running" finds the server's tools offered.
        with self._changed:
            connection.state = state
            try:
                self._on_change(state)
            except Exception:  # a listener's bug must not take the server down with it
                log.exception("MCP state listener failed")
            self._changed.notify_all()


def _transport(config: ServerConfig, errors: IO[str]) -> Any:
    """The SDK's transport to a server as started: its process over stdio, or its URL over streamable HTTP."""
    if config.command is not None:
        parameters = StdioServerParameters(
            command=config.command, args=list(config.args), env=config.env or None, cwd=config.cwd
        )
        return stdio_client(parameters, errlog=errors)
    client = httpx2.AsyncClient(headers=config.headers, timeout=httpx2.Timeout(30.0, read=300.0))
    return streamable_http_client(str(config.url), http_client=client)


def _wait(
    loop: asyncio.AbstractEventLoop, call: Coroutine[Any, Any, Any], *, tool: str, server: str, cancel: threading.Event
) -> Any:
    """The call's result, waited for on this (the run's) thread; Stop (`cancel`) cancels it."""
    future = asyncio.run_coroutine_threadsafe(call, loop)
    finished = threading.Event()
    future.add_done_callback(lambda _: finished.set())
    while not finished.wait(0.05):
        if cancel.is_set():
            future.cancel()
            raise McpCallError(
                f"stopped: the person pressed Stop, so the call to {tool} on {server} was cancelled "
                "(the server may have done part of it)."
            )
    try:
        return future.result()
    except concurrent.futures.CancelledError:
        raise McpCallError(f"the call to {tool} was cancelled because {server} stopped.") from None


async def _handshake(session: ClientSession) -> tuple[mcp_types.Tool, ...]:
    """Initialize the session and list every tool, page by page."""
    await session.initialize()
    tools: list[mcp_types.Tool] = []
    cursor = None
    while True:
        params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tuple(tools)


def not_running(state: ServerState) -> str:
    """Why a server's tools cannot be called now, for the model."""
    if state.status == "starting":
        return f"the MCP server {state.name} is still starting; try again in a moment."
    return f"the MCP server {state.name} is stopped ({state.detail}); the person can restart it from the sidebar."


def describe_failure(exc: BaseException, config: ServerConfig, timeout: float, errors: IO[str] | None) -> str:
    """Why a server stopped, in plain words, with the last line it wrote to its error output."""
    while getattr(exc, "exceptions", None):  # the SDK's task groups wrap what went wrong
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    if isinstance(exc, FileNotFoundError) and config.command:
        return f"the program {config.command!r} was not found"
    if isinstance(exc, PermissionError) and config.command:
        return f"the program {config.command!r} cannot be run (permission denied)"
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        reason = f"it did not answer within {timeout:g} seconds"
    elif isinstance(exc, MCPError) and exc.code == _CONNECTION_CLOSED:
        reason = "the server closed the connection" if config.url else "the server process ended"
    elif isinstance(exc, httpx2.ConnectError):
        reason = f"cannot connect to {config.url}"
    elif isinstance(exc, httpx2.HTTPStatusError):
        reason = f"{config.url} answered HTTP {exc.response.status_code}"
    else:
        reason = _short(exc)
    said = _last_line(errors)
    # Shown in the sidebar and told to the model: never with the server's keys, even where it echoes them.
    return scrubbed(f"{reason}; it said: {said}" if said else reason, config.credentials())


def _last_line(errors: IO[str] | None) -> str:
    if errors is None or errors.closed:
        return ""
    with contextlib.suppress(OSError, ValueError):
        errors.flush()
        errors.seek(0)
        lines = [line.strip() for line in errors.read()[-4000:].splitlines() if line.strip()]
        return lines[-1][:200] if lines else ""
    return ""


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]
