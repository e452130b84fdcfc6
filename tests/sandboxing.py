"""What the sandbox tests share: whether this computer has the sandbox they try to break, a bwrap that fails,
and a server on the host's 127.0.0.1 that a command with network reaches and one without cannot."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from meowgent.config import Settings
from meowgent.tools.netbridge import PORT as PROXY_PORT
from meowgent.tools.sandbox import NoSandbox, sandbox_for

FOUND = sandbox_for(Settings())
needs_sandbox = pytest.mark.skipif(isinstance(FOUND, NoSandbox), reason=f"no sandbox here: {FOUND}")
"""For tests of what the sandbox forbids. tests/tools/test_sandbox.py fails, instead of skipping, where user
namespaces work and still no sandbox was found."""
GREETING = "meow from the host"


def failing_bwrap(folder: Path) -> Path:
    """A bwrap that refuses, as one does without user namespaces: the way to drive the path without a sandbox."""
    script = folder / "bwrap"
    script.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    script.chmod(0o755)
    return script


def fetch(port: int, host: str = "127.0.0.1") -> str:
    """A shell line that fetches / from `host`:port through the command's proxy, with bash alone (no curl needed).

    The host's 127.0.0.1 is a private address: the proxy takes it only with --allow-private-fetch."""
    request = f"GET http://{host}:{port}/ HTTP/1.0\\r\\n\\r\\n"
    return f"exec 3<>/dev/tcp/127.0.0.1/{PROXY_PORT} && printf '{request}' >&3 && cat <&3"


def fetch_directly(port: int) -> str:
    """A shell line that fetches / from 127.0.0.1:port without the proxy: the host's, or the sandbox's own."""
    return f"exec 3<>/dev/tcp/127.0.0.1/{port} && printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3"


class _Greeter(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()
        self.wfile.write(GREETING.encode())

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def host_http_server() -> Iterator[int]:
    """An HTTP server on the host's 127.0.0.1 that answers GREETING; yields its port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Greeter)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
