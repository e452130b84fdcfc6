"""An MCP server for tests, written with the official SDK: `python -m tests.mcp_fixture_server [--http PORT]`.

Tools: `echo` and `add` (read-only by their annotations), `touch` writes a marker file so a
test can prove a call ran or never ran, `picture` returns an image, `fail` answers with an
error result, `crash` ends the whole server process, `slow` sleeps.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import ImageContent, ToolAnnotations

server = MCPServer("fixture")
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
def picture() -> ImageContent:
    """A one-pixel picture."""
    return ImageContent(type="image", data=TINY_PNG, mime_type="image/png")


@server.tool()
def fail(why: str) -> str:
    """Fail with the reason given."""
    raise ValueError(why)


@server.tool()
def crash() -> str:
    """End the server process at once."""
    os._exit(3)


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return "awake"


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, help="serve streamable HTTP on this loopback port instead of stdio")
    args = parser.parse_args()
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run()
