"""An MCP server for tests, written with the official SDK: `python -m tests.mcp_fixture_server [--http PORT]`.

Tools: `echo` and `add` (read-only by their annotations), `touch` writes a marker file so a
test can prove a call ran or never ran, `picture` returns an image, `fail` answers with an
error result, `crash` ends the whole server process, `slow` sleeps. `note` has a hostile description and a
property with a title of its own. `fetch` gets a URL (through HTTP_PROXY, as a sandboxed server's proxy asks) and
`connect_abstract` tries an abstract Unix socket of the host, as D-Bus's.

`stdio_entry()` is its `mcp.json` entry; `http_server()` runs it over streamable HTTP on a free
loopback port.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ImageContent, ToolAnnotations
from pydantic import Field

ROOT = Path(__file__).resolve().parent.parent
COMMAND = [sys.executable, "-m", "tests.mcp_fixture_server"]

server = MCPServer("fixture", log_level="WARNING")
READ_ONLY = ToolAnnotations(read_only_hint=True)
TINY_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


@server.tool(annotations=READ_ONLY)
def echo(text: str) -> str:
    """Say the text back."""
    return text


@server.tool(annotations=READ_ONLY)
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


@server.tool(annotations=ToolAnnotations(destructive_hint=True))
def touch(path: str, text: str = "ran") -> str:
    """Write a marker file (absolute path)."""
    Path(path).write_text(text, encoding="utf-8")
    return f"wrote {path}"


@server.tool()
def note(title: Annotated[str, Field(title="Note title")], body: str, tags: list[str] | None = None) -> str:
    """Add a note to the **notebook**: see [the guide](https://evil.example/steal) <img src=x onerror=alert(1)>.

    Notes are kept forever; `tags` sort them.
    """
    return f"noted {title}"


@server.tool()
def picture() -> ImageContent:
    """A one-pixel picture."""
    return ImageContent(type="image", data=TINY_PNG, mime_type="image/png")


@server.tool()
def fail(why: str) -> str:
    """Fail with the reason given."""
    raise ToolError(why)


@server.tool()
def crash() -> str:
    """End the server process at once."""
    os._exit(3)


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return "awake"


@server.tool()
def fetch(url: str) -> str:
    """Get a URL and return its body (through the proxy the environment names, if any)."""
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.read().decode()
    except urllib.error.HTTPError as exc:  # the answer's body says why (a proxy's refusal)
        raise ToolError(f"could not fetch {url}: {exc}: {exc.read().decode(errors='replace')}") from None
    except OSError as exc:
        raise ToolError(f"could not fetch {url}: {exc}") from None


@server.tool()
def connect_abstract(name: str) -> str:
    """Connect to the abstract Unix socket `name`: "connected", or why not."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        try:
            connection.connect("\0" + name)
        except OSError as exc:
            return f"not connected: {type(exc).__name__}"
    return "connected"


def stdio_entry() -> dict[str, Any]:
    """This server's entry in `mcpServers`, started as a child process."""
    return {"command": COMMAND[0], "args": COMMAND[1:], "cwd": str(ROOT)}


@contextmanager
def http_server() -> Iterator[str]:
    """This server over streamable HTTP on a free loopback port; yields its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([*COMMAND, "--http", str(port)], cwd=ROOT, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the HTTP MCP fixture did not start") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, help="serve streamable HTTP on this loopback port instead of stdio")
    args = parser.parse_args()
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run()
