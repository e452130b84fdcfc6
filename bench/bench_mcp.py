"""MCP calls through McpManager against the SDK fixture server: start, call latency, Stop, close.

Run from the repository root: `python -m bench.bench_mcp`. One stdio and one streamable HTTP server
(tests/mcp_fixture_server.py); each call is `add` from the run thread's side, so the figure includes
the hop onto the manager's loop and back. Then the credential hiding (meowgent.mcp.redact) over hostile
text a server may write, at N and 10×N characters in the same run: linear means a ratio near 10.
"""

from __future__ import annotations

import contextlib
import statistics
import threading
import time

from bench.report import table
from meowgent.mcp.client import McpCallError, McpManager
from meowgent.mcp.config import ServerConfig
from meowgent.mcp.redact import scrubbed, shown_command
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
            "### Hiding credentials in what a server writes",
            _hiding_table(100_000 if quick else 1_000_000),
        ]
    )


# Runs that a backtracking pattern would read once per position: no URL, a JWT prefix, query marks, header colons.
HOSTILE_TEXT = {
    "letters": lambda n: "a" * n,
    "eyJ repeated": lambda n: "eyJ" * (n // 3),
    "?a repeated": lambda n: "?a" * (n // 2),
    "A: repeated": lambda n: "A:" * (n // 2),
    "--token x words": lambda n: "--token x " * (n // 10),
}


def _hiding_table(size: int) -> str:
    rows = []
    for name, make in HOSTILE_TEXT.items():
        small, large = _seconds(make(size // 10)), _seconds(make(size))
        rows.append([name, f"{small * 1000:.1f}", f"{large * 1000:.1f}", f"{large / small:.1f}"])
    return table(["text", f"{size // 10:,} chars ms", f"{size:,} chars ms", "ratio"], rows)


def _seconds(text: str) -> float:
    started = time.perf_counter()
    scrubbed(text, ["s3cr3t-value"])
    shown_command(text.split(" "))
    return time.perf_counter() - started


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
