"""What the seccomp filter adds to a command: `true` in the sandbox with and without `--seccomp`, and through the
exec wrapper that sandboxed MCP servers start by.

Run from the repository root: `python -m bench.bench_seccomp`. Each bwrap that works here is measured; in every
round each way runs once, in turn, so a busy moment of the machine falls on each alike. Measured from the start of
the process to its end, as run_shell starts it (the filter on a memory file passed as a descriptor). The goal is at
most 25 ms added per command; the wrapper's Python start is paid once per MCP server start, not per call.
"""

from __future__ import annotations

import dataclasses
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench.bench_sandbox import _bundled
from bench.report import table
from meowgent.config import Settings
from meowgent.tools.launch import Launch
from meowgent.tools.mounts import SandboxPolicy
from meowgent.tools.sandbox import SYSTEM_BWRAP, Sandbox, sandbox_for

GOAL_MS = 25.0
WAYS = ("without the filter", "with the filter", "with the filter, through the MCP wrapper")
ONCE = WAYS[2]


def run(quick: bool = False) -> str:
    rounds = 10 if quick else 40
    with tempfile.TemporaryDirectory(prefix="meowgent-bench-") as folder:
        policy = SandboxPolicy(workspace=Path(folder).resolve())
        launches = {name: _launches(sandbox, policy) for name, sandbox in _working().items()}
        times = {(bwrap, way): [] for bwrap in launches for way in WAYS}
        for _ in range(rounds):
            for bwrap, ways in launches.items():
                for way, start in ways.items():
                    times[bwrap, way].append(_milliseconds(start))
    rows = []
    for bwrap in launches:
        plain = statistics.median(times[bwrap, WAYS[0]])
        for way in WAYS:
            median = statistics.median(times[bwrap, way])
            added = "" if way == WAYS[0] else f"{median - plain:+.1f}"
            verdict = "" if way == WAYS[0] else ("✅" if median - plain <= GOAL_MS else "❌ over the goal")
            verdict = "once per server start" if way == ONCE else verdict
            rows.append([bwrap, way, f"{median:.1f}", _p90(times[bwrap, way]), added, verdict])
    return "\n\n".join(
        [
            "### `true` in the sandbox with and without the seccomp filter (median, process start to end)",
            table(["bwrap", "how", "median ms", "p90 ms", "added ms", f"goal ≤{GOAL_MS:.0f} ms added"], rows),
            f"{rounds} rounds; in each, every way ran once with each bwrap, in turn.",
        ]
    )


def _working() -> dict[str, Sandbox]:
    """Each bwrap this computer has that works, as Meowgent probes it when named with --bwrap."""
    candidates = {"system bwrap": SYSTEM_BWRAP, "bundled bwrap": _bundled()}
    found = {name: sandbox_for(Settings(bwrap=bwrap)) for name, bwrap in candidates.items() if bwrap is not None}
    return {name: sandbox for name, sandbox in found.items() if isinstance(sandbox, Sandbox)}


def _launches(sandbox: Sandbox, policy: SandboxPolicy) -> dict[str, Launch | tuple[str, ...]]:
    filtered = sandbox.launch(policy, ["true"], as_pid_1=True)
    return {WAYS[0]: dataclasses.replace(filtered, seccomp=b""), WAYS[1]: filtered, WAYS[2]: filtered.wrapped()}


def _milliseconds(start: Launch | tuple[str, ...]) -> float:
    began = time.perf_counter()
    if isinstance(start, Launch):
        with start.with_filter() as (argv, descriptors):
            done = subprocess.run(argv, env=start.env, pass_fds=descriptors, stdin=subprocess.DEVNULL, check=False)
    else:
        done = subprocess.run(start, stdin=subprocess.DEVNULL, check=False)
    elapsed = (time.perf_counter() - began) * 1000
    if done.returncode != 0:
        raise RuntimeError(f"`true` failed in the sandbox: {start}")
    return elapsed


def _p90(values: list[float]) -> str:
    ordered = sorted(values)
    return f"{ordered[int(len(ordered) * 0.9)]:.1f}"


if __name__ == "__main__":
    print(run())
