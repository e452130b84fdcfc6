"""An HTTP relay in front of an OpenAI-compatible server that notes what each streamed chat reply did on the wire.

The app is pointed at the relay (`Tap.url`, ending in /v1) instead of the server. For every chat request it keeps
the request's JSON body (so a raw client can replay it exactly), when each content token passed, when the reply
ended, and when the client hung up early (Stop). A client that hangs up is noticed at once, not at the next token,
and the relay then closes its own stream to the server, as the app's closing would have, so the server stops.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

_HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


@dataclass
class Reply:
    """One chat reply as it passed the relay; times are time.time(), comparable with the page's clock."""

    body: dict[str, Any]
    sent: float
    tokens: list[float] = field(default_factory=list)
    """When each chunk with content (or reasoning) passed."""
    ended: float = 0.0
    hung_up: float = 0.0
    """When the client closed the connection before the reply ended (0.0 if it never did)."""
    timings: dict[str, Any] | None = None
    """llama.cpp's `timings` from the last chunk (its own count of the tokens and their rate)."""
    text: list[str] = field(default_factory=list)
    """What the model wrote: its content, and each native call's name and arguments as they came."""
    done: threading.Event = field(default_factory=threading.Event)


class Tap:
    """The relay: `with Tap(upstream) as tap:` … `tap.url`; `tap.replies` in the order they were asked."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self._upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.replies: list[Reply] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> Tap:
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def reply(self, number: int, timeout: float) -> Reply:
        """The reply to the `number`th chat request (from 0), waiting for its request to come."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if len(self.replies) > number:
                    return self.replies[number]
            time.sleep(0.005)
        raise TimeoutError("no chat request reached the model server")

    def _connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(*self._upstream, timeout=600)

    def _add(self, reply: Reply) -> None:
        with self._lock:
            self.replies.append(reply)


def _handler_for(tap: Tap) -> type[BaseHTTPRequestHandler]:
    class Relay(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # each response ends when its connection closes: no framing to redo

        def log_message(self, format: str, *args: object) -> None:
            """Quiet."""

        def do_GET(self) -> None:
            self._forward(b"")

        def do_POST(self) -> None:
            self._forward(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

        def _forward(self, raw: bytes) -> None:
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_HEADERS}
            upstream = tap._connect()
            upstream.request(self.command, self.path, body=raw or None, headers=headers)
            response = upstream.getresponse()
            self.send_response(response.status)
            for name, value in response.getheaders():
                if name.lower() not in _HOP_HEADERS:
                    self.send_header(name, value)
            self.end_headers()
            if self.path.endswith("/chat/completions") and response.status == 200:
                reply = Reply(json.loads(raw), time.time())
                tap._add(reply)
                self._stream(response, upstream, reply)
            else:
                self.wfile.write(response.read())
            upstream.close()

        def _stream(self, response: http.client.HTTPResponse, upstream: http.client.HTTPConnection, reply: Reply):
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._watch_hangup, args=(upstream, reply), daemon=True).start()
            try:
                for line in response:
                    self.wfile.write(line)
                    self.wfile.flush()
                    _note(line, reply)
            except (OSError, ValueError, http.client.HTTPException):
                pass  # the client hung up (noted by the watcher) and the stream to the server was closed
            reply.ended = reply.ended or time.time()
            reply.done.set()

        def _watch_hangup(self, upstream: http.client.HTTPConnection, reply: Reply) -> None:
            """The client sends nothing while a reply streams: a readable socket is its hang-up."""
            with contextlib.suppress(OSError):
                if self.connection.recv(1) == b"" and not reply.done.is_set():
                    reply.hung_up = time.time()
                    with contextlib.suppress(OSError):
                        upstream.sock.shutdown(socket.SHUT_RDWR)

    return Relay


def _note(line: bytes, reply: Reply) -> None:
    if not line.startswith(b"data: {"):
        if line.startswith(b"data: [DONE]"):
            reply.ended = time.time()
        return
    chunk = json.loads(line[6:])
    delta = (chunk.get("choices") or [{}])[0].get("delta") or {}
    if delta.get("content") or delta.get("reasoning_content"):
        reply.tokens.append(time.time())
    reply.text.append(delta.get("content") or "")
    for call in delta.get("tool_calls") or ():
        function = call.get("function") or {}
        named = f"\n[call {function['name']}] " if function.get("name") else ""
        reply.text.append(named + (function.get("arguments") or ""))
    if chunk.get("timings"):
        reply.timings = chunk["timings"]
