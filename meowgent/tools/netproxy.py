"""One command's way out to the network: a proxy on the host that lets it reach only the hosts it was given.

A command with network runs in a network namespace of its own; its HTTP_PROXY points at a bridge inside
(meowgent.tools.netbridge), which forwards to this proxy's Unix socket, bound into the sandbox. The proxy reads
each request's head (`proxyrequest`), refuses a host that is not among the command's patterns, or that resolves to
an address off the public internet (netguard; unless --allow-private-fetch, so a name that points at 127.0.0.1
can't reach the person's own Ollama or Meowgent), connects to an address it checked (never a second DNS answer),
and copies bytes both ways. It writes down every host reached and refused: the call's record says where the
command went. It lives as long as the command (`with HostProxy(...)`), or as a sandboxed MCP server
(meowgent.mcp.sandboxed), and is bounded: time limits, a cap on connections at once, and the head read with a size
cap.
"""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import logging
import secrets
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from meowgent.persist.private import private_temp_folder
from meowgent.tools import netbridge
from meowgent.tools.netguard import Resolver, non_public_reason, resolve_host
from meowgent.tools.proxyrequest import BadRequest, ProxyRequest, check_size, head_length, host_allowed, parse_head
from meowgent.tools.spec import Visited

log = logging.getLogger(__name__)

HEAD_SECONDS = 10.0
"""A client that has not sent its whole request head by then is dropped (a slow client can't hold a slot)."""
CONNECT_SECONDS = 10.0
MAX_CONNECTIONS = 64
"""Connections at once; the next ones are answered 503 at once (pip opens a handful, npm about 16)."""
_CHUNK = 65536


@dataclass
class Visits:
    """The hosts a command reached and the ones refused to it, each once, in the order of first asking."""

    reached: dict[str, None] = field(default_factory=dict)
    refused: dict[str, None] = field(default_factory=dict)
    on_new: Callable[[str, bool], None] = field(default=lambda host, reached: None, repr=False)
    """Told of each host the first time it is reached (True) or refused (False): an MCP server's proxy logs it."""
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _watchers: list[Visits] = field(default_factory=list, repr=False)

    def add(self, host: str, *, reached: bool) -> None:
        with self.lock:
            seen = self.reached if reached else self.refused
            new = host not in seen
            seen.setdefault(host, None)
            watchers = list(self._watchers)
        for watcher in watchers:
            watcher.add(host, reached=reached)
        if new:
            self.on_new(host, reached)

    def summary(self) -> Visited:
        with self.lock:
            return Visited(tuple(self.reached), tuple(self.refused))

    @contextlib.contextmanager
    def watching(self) -> Iterator[Visits]:
        """A record of the hosts asked for from now to the end of the `with`: one call of a server whose proxy
        lives longer than the call (whatever else the server did meanwhile is in it too)."""
        watcher = Visits()
        with self.lock:
            self._watchers.append(watcher)
        try:
            yield watcher
        finally:
            with self.lock:
                self._watchers.remove(watcher)


VISITED_PREFIX = "network: "
"""How the line of the result that says where a command went begins (the call's panel and the audit find it)."""


def visited_line(visited: Visited) -> str:
    """The line of the command's result that says where it went: "network: reached a, b; refused c"."""
    reached = f"reached {', '.join(visited.reached)}" if visited.reached else "reached no host"
    return VISITED_PREFIX + reached + (f"; refused {', '.join(visited.refused)}" if visited.refused else "")


def bridged(command: list[str] | tuple[str, ...]) -> list[str]:
    """`command` behind the bridge to the proxy: what the sandbox runs instead of it."""
    return [sys.executable, "-I", "-S", "-c", _bridge_source(), netbridge.SOCKET, str(netbridge.PORT), "--", *command]


@functools.cache
def _sockets_folder() -> Path:
    """This process's folder of proxy sockets: only we can reach into it, and a command can't see it (the host's
    temporary folder is hidden in the sandbox, and each socket is bound in on its own)."""
    return private_temp_folder()


@functools.cache
def _bridge_source() -> str:
    return Path(netbridge.__file__).read_text(encoding="utf-8")


def proxy_environment() -> dict[str, str]:
    """What tells pip, npm, git, curl and Python's urllib to go through the proxy (both spellings are read)."""
    address = f"http://127.0.0.1:{netbridge.PORT}"
    names = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
    local = "localhost,127.0.0.1,::1"  # the sandbox's own loopback (a server the command starts) stays direct
    return {**{n: address for n in names}, **{n.lower(): address for n in names}, "NO_PROXY": local, "no_proxy": local}


class HostProxy:
    """One call's proxy: `with HostProxy(hosts, ...) as proxy:` listens on `proxy.socket_path` until the end."""

    def __init__(
        self,
        hosts: tuple[str, ...],
        *,
        allow_private: bool,
        resolve: Resolver = resolve_host,
        head_seconds: float = HEAD_SECONDS,
        visits: Visits | None = None,
        asker: str = "this command",
        to_allow: str = "The person can allow it on the approval card.",
    ) -> None:
        self.hosts = hosts
        self.asker = asker
        self.to_allow = to_allow
        """Who the proxy serves and how the person would allow another host, in its refusals."""
        self.head_seconds = head_seconds
        self.allow_private = allow_private
        self.resolve = resolve
        self.visits = visits if visits is not None else Visits()
        self.socket_path = _sockets_folder() / f"proxy-{secrets.token_hex(8)}.sock"
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._accepting = threading.Thread(target=self._accept, name="meowgent-proxy", daemon=True)

    def __enter__(self) -> HostProxy:
        self._listener.bind(str(self.socket_path))
        self._listener.listen(MAX_CONNECTIONS)
        self._accepting.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop listening and end every open connection (the command is over)."""
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
        self._listener.close()
        with self._lock:
            for connection in self._open:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)
        self._accepting.join(timeout=CONNECT_SECONDS)
        self.socket_path.unlink(missing_ok=True)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if not self._slots.acquire(blocking=False):
                _answer(client, 503, f"more than {MAX_CONNECTIONS} connections at once through Meowgent's proxy")
                client.close()
                continue
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        upstream = None
        self._track(client)
        try:
            request, rest = _read_request(client, self.head_seconds)
            try:
                addresses = self._addresses(request)
            except _Refused as refused:
                self.visits.add(request.host, reached=False)
                _answer(client, 403, str(refused))
                return
            upstream = _connect(addresses, request.port)
            if upstream is None:
                found = "connect to" if addresses else "find the address of"
                _answer(client, 502, f"Meowgent's proxy could not {found} {request.host}:{request.port}.")
                return
            self._track(upstream)
            self.visits.add(request.host, reached=True)
            if request.tunnel:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            upstream.sendall(request.head + rest)
            _relay(client, upstream)
        except BadRequest as exc:
            _answer(client, exc.status, f"Meowgent's proxy can't read this request: {exc}")
        except OSError:
            pass  # the client or the server went away, or the proxy is closing
        except Exception:  # a bug here must end this connection only, never the command's other ones
            log.exception("the network proxy failed on a connection")
        finally:
            for end in (client, upstream):
                if end is not None:
                    self._untrack(end)
                    end.close()
            self._slots.release()

    def _addresses(self, request: ProxyRequest) -> tuple[str, ...]:
        """The checked addresses to connect to (none for a host that doesn't resolve); _Refused says why the host
        may not be reached, in a sentence naming it."""
        host = request.host
        if not host_allowed(host, self.hosts):
            allowed = ", ".join(self.hosts) or "none"
            raise _Refused(
                f"Meowgent's proxy refused {host}: it is not among the hosts {self.asker} may reach ({allowed}). "
                + self.to_allow
            )
        try:
            addresses = _literal(host) or tuple(self.resolve(host, request.port))
        except (OSError, UnicodeError):
            return ()  # not a refusal: the host is unknown, which the 502 says
        for address in () if self.allow_private else addresses:
            reason = non_public_reason(ipaddress.ip_address(address))
            if reason is not None:
                raise _Refused(
                    f"Meowgent's proxy refused {host}: it resolves to {address}, a {reason} address, not on the "
                    "public internet. The person can allow private addresses with --allow-private-fetch."
                )
        return addresses

    def _track(self, connection: socket.socket) -> None:
        with self._lock:
            self._open.add(connection)

    def _untrack(self, connection: socket.socket) -> None:
        with self._lock:
            self._open.discard(connection)


class _Refused(Exception):
    """The request names a host the command may not reach; the message says why, naming it."""


def _literal(host: str) -> tuple[str, ...]:
    """The address itself, for a host written as one (no resolver needed); () for a name."""
    try:
        return (str(ipaddress.ip_address(host)),)
    except ValueError:
        return ()


def _read_request(client: socket.socket, seconds: float) -> tuple[ProxyRequest, bytes]:
    """The request's head, parsed, and what came after it; within `seconds`, or socket.timeout."""
    deadline = time.monotonic() + seconds
    buffer = bytearray()
    end = None
    while end is None:
        client.settimeout(max(deadline - time.monotonic(), 0.001))
        chunk = client.recv(_CHUNK)
        if not chunk:
            raise BadRequest(400, "the connection closed before the request's head was whole")
        searched = len(buffer)
        buffer += chunk
        end = head_length(buffer, searched)
        if end is None:
            check_size(buffer)
    # Then no time limit of its own: a long download may go quiet one way, and the command's limit ends it all.
    client.settimeout(None)
    return parse_head(bytes(buffer[:end])), bytes(buffer[end:])


def _connect(addresses: tuple[str, ...], port: int) -> socket.socket | None:
    """A connection to the first address that answers, or None."""
    for address in addresses:
        try:
            connection = socket.create_connection((address, port), timeout=CONNECT_SECONDS)
        except OSError:
            continue
        connection.settimeout(None)
        return connection
    return None


def _relay(client: socket.socket, upstream: socket.socket) -> None:
    """Copy both ways until both ends are done, or one fails, or the proxy closes with the command."""
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()


def _pump(source: socket.socket, target: socket.socket) -> None:
    try:
        while chunk := source.recv(_CHUNK):
            target.sendall(chunk)
        target.shutdown(socket.SHUT_WR)
    except OSError:  # an end failed, or the proxy is closing: both directions are over
        for end in (source, target):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)


def _answer(client: socket.socket, status: int, sentence: str) -> None:
    """A short plain-text answer from the proxy itself, then the end of the connection."""
    reasons = {400: "Bad Request", 403: "Forbidden", 414: "URI Too Long", 431: "Request Header Fields Too Large"}
    reason = reasons.get(status, {502: "Bad Gateway", 503: "Service Unavailable"}.get(status, "Error"))
    body = (sentence + "\n").encode()
    head = f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {len(body)}"
    with contextlib.suppress(OSError):
        client.sendall(f"{head}\r\nConnection: close\r\n\r\n".encode() + body)
