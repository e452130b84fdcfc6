"""MCP calls through McpManager against the SDK fixture server: start, call latency, Stop, close.

Run from the repository root: `python -m bench.bench_mcp`. One stdio and one streamable HTTP server
(tests/mcp_fixture_server.py); each call is `add` from the run thread's side, so the figure includes
the hop onto the manager's loop and back.
"""

from __future__ import annotations

import contextlib
import statistics
import threading
import time

from bench.report import table
from meowgent.mcp.client import McpCallError, McpManager
from meowgent.mcp.config import ServerConfig
from tests.mcp_fixture_server import http_server, stdio_entry


def run(quick: bool = False) -> str:
    calls = 50 if quick else 500
    entry = stdio_entry()
    stdio = ServerConfig("stdio", command=entry["command"], args=tuple(entry["args"]), cwd=entry["cwd"])
    with http_server() as url:
        manager = McpManager([stdio, ServerConfig("http", url=url)], timeout=60)
        started = time.perf_counter()
        manager.start()
        manager.wait_settled(120)
        start_seconds = time.perf_counter() - started
        rows = [[name, str(calls), *_latencies(manager, name, calls)] for name in ("stdio", "http")]
        stop_ms = _stop_latency(manager)
        started = time.perf_counter()
        manager.close()
        close_seconds = time.perf_counter() - started
    return "\n\n".join(
        [
            "### MCP calls",
            table(["transport", "calls", "median ms", "p95 ms"], rows),
            f"Both servers started (process or connection, initialize, list tools) in {start_seconds:.2f} s; "
            f"Stop ended a running call {stop_ms:.0f} ms after it was pressed; "
            f"closing both took {close_seconds:.2f} s.",
        ]
    )


def _latencies(manager: McpManager, server: str, calls: int) -> list[str]:
    never = threading.Event()
    times = []
    for i in range(calls):
        started = time.perf_counter()
        manager.call(server, "add", {"a": i, "b": 1}, cancel=never)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return [f"{statistics.median(times):.1f}", f"{times[int(len(times) * 0.95)]:.1f}"]


def _stop_latency(manager: McpManager) -> float:
    cancel = threading.Event()
    pressed: list[float] = []
    timer = threading.Timer(0.5, lambda: (pressed.append(time.perf_counter()), cancel.set()))
    timer.start()
    with contextlib.suppress(McpCallError):  # the Stop it measures
        manager.call("stdio", "slow", {"seconds": 60}, cancel=cancel)
    return (time.perf_counter() - pressed[0]) * 1000


if __name__ == "__main__":
    print(run())
