"""MCP managers around the fixture server (tests/mcp_fixture_server.py), closed after each test."""

from collections.abc import Callable, Iterator

import pytest

from meowgent.mcp.client import McpManager
from meowgent.mcp.config import ServerConfig
from tests.mcp_fixture_server import stdio_entry

SETTLE_SECONDS = 60  # a wait, not an assert: a loaded machine may take long to start Python


def fixture_config(name: str = "fx") -> ServerConfig:
    entry = stdio_entry()
    return ServerConfig(name, command=entry["command"], args=tuple(entry["args"]), cwd=entry["cwd"])


def example_test(host: str, port: int) -> list[str]:
    """DNS for a sandboxed server's proxy in tests: `example.test` is the host's 127.0.0.1 (where a test's HTTP server
    plays a public host), `other.test` a public address."""
    known = {"example.test": "127.0.0.1", "other.test": "93.184.216.34"}
    if host not in known:
        raise OSError("Name or service not known")
    return [known[host]]


@pytest.fixture
def manager_of() -> Iterator[Callable[..., McpManager]]:
    """Start a manager for these servers and wait until none is starting."""
    managers: list[McpManager] = []

    def start(*servers: ServerConfig, timeout: float = 30.0, **options) -> McpManager:
        manager = McpManager(servers, timeout=timeout, **options)
        managers.append(manager)
        manager.start()
        assert manager.wait_settled(SETTLE_SECONDS)
        return manager

    yield start
    for manager in managers:
        manager.close()
