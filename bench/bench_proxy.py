"""What the network proxy adds to a command: `true` through run_shell in the sandbox, network off and on.

Run from the repository root: `python -m bench.bench_proxy`. With the network on, the command gets its own
network namespace either way; the proxy adds the host's proxy (a Unix socket and its thread), the bridge started
in the sandbox by the host's Python, and the socket's bind. The two ways alternate in the same run, so a busy
moment of the machine falls on each alike. The goal is at most 25 ms added.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.report import table
from meowgent.config import Settings
from meowgent.tools.registry import run_tool
from meowgent.tools.sandbox import NoSandbox, sandbox_for

GOAL_MS = 25.0
WAYS = {"network off": (), "network on, through the proxy": ("*",)}


def run(quick: bool = False) -> str:
    rounds = 10 if quick else 40
    with tempfile.TemporaryDirectory(prefix="meowgent-bench-") as folder:
        workspace = Path(folder) / "workspace"
        workspace.mkdir()
        settings = Settings(workspace=workspace, data_dir=Path(folder) / "data")
        found = sandbox_for(settings)
        if isinstance(found, NoSandbox):
            return f"*Skipped: no sandbox here ({found.reason}).*\n"
        times: dict[str, list[float]] = {way: [] for way in WAYS}
        starts: list[float] = []
        for _ in range(rounds):
            for way, hosts in WAYS.items():
                times[way].append(_milliseconds(settings, hosts))
            starts.append(_bridge_start())
    off = statistics.median(times["network off"])
    rows = []
    for way, measured in times.items():
        median = statistics.median(measured)
        added = median - off
        verdict = "" if way == "network off" else ("✅" if added <= GOAL_MS else "❌ over the goal")
        shown_added = "" if way == "network off" else f"{added:+.1f}"
        rows.append(["`true`", way, f"{median:.1f}", _p90(measured), shown_added, verdict])
    return "\n\n".join(
        [
            "### A command with the network off and on (median of the whole run_shell call, in the sandbox)",
            table(["command", "how", "median ms", "p90 ms", "added ms", f"goal ≤{GOAL_MS:.0f} ms added"], rows),
            f"{rounds} rounds; in each, the command ran once each way, in turn. Most of what the proxy adds is the "
            "start of the host's Python for the bridge: alone, on the host, in the same rounds, it took "
            f"{statistics.median(starts):.1f} ms (median).",
        ]
    )


def _milliseconds(settings: Settings, hosts: tuple[str, ...]) -> float:
    started = time.perf_counter()
    result = run_tool("run_shell", {"command": "true"}, settings=settings, network=hosts)
    elapsed = (time.perf_counter() - started) * 1000
    if "exit status: 0 (" not in result:
        raise RuntimeError(f"`true` failed in the benchmark:\n{result}")
    return elapsed


def _bridge_start() -> float:
    """Milliseconds to start the Python the bridge runs in, with the bridge's imports, and end it."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-I", "-S", "-c", "import _socket, _thread"], check=True)
    return (time.perf_counter() - started) * 1000


def _p90(values: list[float]) -> str:
    ordered = sorted(values)
    return f"{ordered[int(len(ordered) * 0.9)]:.1f}"


if __name__ == "__main__":
    print(run())
