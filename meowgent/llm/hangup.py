"""Hanging up on a reply at once, even while the thread reading it is blocked on a silent server.

A reply read in a helper thread (llm/watch.py) can only be closed by that thread, and only once its read returns.
While the server is silent (prompt processing, a call held back, a stall) that read may last minutes, and the
server goes on computing a reply no one reads, ahead of the person's next message. So the thread that left ends
the request's side of the connection (a FIN), which every server we speak to takes as the client gone: Go's
net/http (Ollama) cancels the request, llama.cpp's and vLLM's servers check for it. The server then closes its side,
which ends the blocked read.

Only the sending side. With the reading side shut too, a server still writing a long reply to a reader that had
fallen behind was seen left on a full receive window after the reader closed: the orphaned socket never reset it,
and the server waited a minute for it to time out (5 of 90 runs of a cap test under load; 0 of 75 with the sending
side alone). A reader that closes with the reading side open resets a server still writing, as before.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx

_CONNECTED = frozenset({"connection.connect_tcp.complete", "connection.start_tls.complete"})
"""httpx's trace events that carry a new connection's network stream as their return value."""


class ReplyConnection:
    """The connection one reply is read from, for whoever stops wanting it.

    It learns the connection when it is made (`trace`, httpx's `trace` request extension: before the server sends
    a byte, while it processes the prompt) or when the response starts (`held`), and forgets it before the response
    closes, so a late `hang_up` never touches a socket the reader gave back.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self._hung_up = False

    def trace(self, event: str, info: dict[str, Any]) -> None:
        if event in _CONNECTED:
            self._attach(info.get("return_value"))

    @contextlib.contextmanager
    def held(self, response: httpx.Response) -> Iterator[None]:
        """While the reader reads `response`; put it after the response in a `with`, so it ends first."""
        self._attach(response.extensions.get("network_stream"))
        try:
            yield
        finally:
            with self._lock:
                self._socket = None

    def hang_up(self) -> None:
        """End the request's side of the connection now, or as soon as it is made."""
        with self._lock:
            self._hung_up = True
            _shut(self._socket)

    def _attach(self, stream: Any) -> None:
        found = stream.get_extra_info("socket") if stream is not None else None
        if not isinstance(found, socket.socket):
            return
        with self._lock:
            self._socket = found
            if self._hung_up:
                _shut(found)


def _shut(connection: socket.socket | None) -> None:
    if connection is None:
        return
    # socket.socket's own shutdown: an SSLSocket's would also drop its TLS state under the reading thread.
    with contextlib.suppress(OSError):
        socket.socket.shutdown(connection, socket.SHUT_WR)
