"""run_shell through the public registry, with a real bash and real processes.

Most tests hold in the sandbox and without it. The process-group tests (`echo PGID $$`) are about the path
without a sandbox, where the group and the mark are what ends a command's processes; in the sandbox its PID
namespace does, and tests/tools/test_sandbox.py tries every escape there.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from meowgent.config import Settings
from meowgent.tools.registry import ToolRegistry, run_tool
from tests.sandboxing import needs_sandbox

needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds leftover processes in /proc")


def shell(
    workspace: Path,
    command: str,
    *,
    shell_timeout: float = 30,
    cancel: threading.Event | None = None,
    sandbox: bool = True,
    **arguments,
) -> str:
    settings = Settings(workspace=workspace, shell_timeout=shell_timeout, sandbox=sandbox)
    return run_tool("run_shell", {"command": command, **arguments}, settings=settings, cancel=cancel)


def plain(workspace: Path, command: str, **options) -> str:
    """The command without the sandbox: its process group and the mark end what it leaves."""
    return shell(workspace, command, sandbox=False, **options)


def timed(workspace: Path, command: str, **options) -> tuple[str, float]:
    """The command without the sandbox, and how long it took."""
    started = time.monotonic()
    result = plain(workspace, command, **options)
    return result, time.monotonic() - started


def group_of(result: str) -> int:
    """The commands under test start with `echo PGID $$`: the shell leads its own process group."""
    found = re.search(r"^PGID (\d+)$", result, re.MULTILINE)
    assert found, result
    return int(found.group(1))


def living(group: int) -> list[str]:
    """Command lines of the group's processes that still run; zombies do not count (this box's init never reaps)."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            text = stat.read_text()
            state, _parent, process_group = text[text.rindex(")") + 2 :].split()[:3]
            if state != "Z" and int(process_group) == group:
                alive.append((stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode())
    return alive


@pytest.fixture
def groups() -> Iterator[list[int]]:
    """Groups a test started; killed afterwards so a failing test leaves no `sleep 1000` behind."""
    started: list[int] = []
    yield started
    for group in started:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)


def test_is_a_risky_tool() -> None:
    assert ToolRegistry.builtins().get("run_shell").risky


def test_runs_in_the_workspace(tmp_path: Path) -> None:
    result = shell(tmp_path, "pwd")
    assert result.splitlines()[:4] == ["$ pwd", result.splitlines()[1], "--- stdout ---", str(tmp_path.resolve())]
    assert re.fullmatch(r"exit status: 0 \(\d+\.\d\d s\)", result.splitlines()[1])


def test_reports_a_failure_with_stdout_and_stderr(tmp_path: Path) -> None:
    result = shell(tmp_path, "echo out; echo oops >&2; exit 3")
    assert not result.startswith("Error")
    assert "exit status: 3 (" in result
    assert result.endswith("--- stdout ---\nout\n--- stderr ---\noops")


def test_reports_the_signal_that_killed_the_shell(tmp_path: Path) -> None:
    assert "exit status: killed by SIGSEGV (" in plain(tmp_path, "kill -SEGV $$")


@needs_sandbox
def test_in_the_sandbox_a_signal_is_128_plus_its_number(tmp_path: Path) -> None:
    """bwrap reports a command killed by a signal as bash does for its children: 128 + the number. The bash that
    watches the command inside says nothing of its own (no "Segmentation fault" line naming our script)."""
    result = shell(tmp_path, "kill -SEGV $$")
    assert re.fullmatch(r"\$ kill -SEGV \$\$\nexit status: 139 \(\d+\.\d\d s\)\n\(no output\)", result), result


def test_stdin_is_closed(tmp_path: Path) -> None:
    result, took = timed(tmp_path, "cat", shell_timeout=10)
    assert took < 5
    assert "exit status: 0 (" in result
    assert result.endswith("(no output)")


def test_pagers_are_plain(tmp_path: Path) -> None:
    assert shell(tmp_path, "echo $PAGER $GIT_PAGER $TERM").endswith("--- stdout ---\ncat cat dumb")


def test_undecodable_output_is_replaced(tmp_path: Path) -> None:
    assert shell(tmp_path, r"printf 'a\377b'").endswith("a\N{REPLACEMENT CHARACTER}b")


@needs_proc
def test_timeout_stops_every_process_of_the_group(tmp_path: Path, groups: list[int]) -> None:
    result, took = timed(tmp_path, "echo PGID $$; sleep 1000 & sleep 1000", timeout=1)
    groups.append(group_of(result))
    assert took < 5
    assert "timed out after 1 s; the command and its child processes were stopped." in result
    assert living(groups[0]) == []


@needs_proc
def test_the_default_timeout_comes_from_the_settings(tmp_path: Path, groups: list[int]) -> None:
    result, took = timed(tmp_path, "echo PGID $$; sleep 1000", shell_timeout=0.5)
    groups.append(group_of(result))
    assert took < 5
    assert "timed out after 0.5 s" in result


@needs_proc
def test_a_process_ignoring_sigterm_is_killed(tmp_path: Path, groups: list[int]) -> None:
    result, took = timed(tmp_path, "echo PGID $$; trap '' TERM; sleep 1000", timeout=1)
    groups.append(group_of(result))
    assert took < 6
    assert "exit status: killed by SIGKILL (" in result
    assert living(groups[0]) == []


@needs_proc
@pytest.mark.parametrize(
    "background",
    [
        pytest.param("sleep 1000 &", id="holding-the-output-pipe"),
        pytest.param("sleep 1000 >/dev/null 2>&1 &", id="detached-from-the-pipes"),
    ],
)
def test_background_processes_end_with_the_command(tmp_path: Path, groups: list[int], background: str) -> None:
    result, took = timed(tmp_path, f"echo PGID $$; {background} echo done", shell_timeout=60)
    groups.append(group_of(result))
    assert took < 5
    assert "exit status: 0 (" in result
    assert "it left processes running in the background; they were stopped" in result
    assert result.endswith("done")
    assert living(groups[0]) == []


def sessions_named(name: str) -> list[int]:
    """Ids of processes running `name` with our test mark in their command line."""
    return [
        int(folder.name)
        for folder in Path("/proc").glob("[0-9]*")
        if _cmdline(folder) == name and _state(folder) != "Z"
    ]


def _cmdline(folder: Path) -> str:
    with contextlib.suppress(OSError):
        return (folder / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    return ""


def _state(folder: Path) -> str:
    with contextlib.suppress(OSError):
        text = (folder / "stat").read_text()
        return text[text.rindex(")") + 2]
    return "Z"


ESCAPES = [
    pytest.param("setsid sleep {n} &", id="setsid-holding-the-pipes"),
    pytest.param("setsid sleep {n} >/dev/null 2>&1 &", id="setsid-detached"),
    pytest.param("nohup setsid sleep {n} >/dev/null 2>&1 &", id="nohup-setsid"),
    # The middle shell exits at once, leaving its sleep to init in a session of its own.
    pytest.param("( setsid sh -c 'sleep {n} &' & ) >/dev/null 2>&1", id="double-fork"),
]


@needs_proc
@pytest.mark.skipif(not shutil.which("setsid"), reason="needs setsid to leave the process group")
@pytest.mark.parametrize("escape", ESCAPES)
def test_a_process_that_left_the_group_is_ended_and_named(tmp_path: Path, escape: str) -> None:
    seconds = 1000 + secrets.randbelow(10**6)  # a number no other test's sleep uses
    # The pause lets the escape finish (setsid has left the group) before the command ends.
    result, took = timed(tmp_path, escape.format(n=seconds) + "\nsleep 0.3\necho started", shell_timeout=60)
    try:
        assert took < 6
        assert "exit status: 0 (" in result
        # The name is the one seen when it was found: `setsid` if it had not exec'd `sleep` yet.
        assert "Processes that had left its process group (setsid, nohup or a double fork) were ended: " in result
        assert sessions_named(f"sleep {seconds}") == []
    finally:
        for pid in sessions_named(f"sleep {seconds}"):
            os.kill(pid, signal.SIGKILL)


@needs_proc
@pytest.mark.skipif(not shutil.which("setsid"), reason="needs setsid to leave the process group")
def test_stop_also_ends_processes_that_left_the_group(tmp_path: Path) -> None:
    seconds = 1000 + secrets.randbelow(10**6)
    cancel = threading.Event()
    timer = threading.Timer(0.5, cancel.set)
    timer.start()
    try:
        result = plain(tmp_path, f"setsid sleep {seconds} >/dev/null 2>&1 & sleep 100", cancel=cancel)
        assert "stopped by the person" in result
        assert "were ended: sleep" in result
        assert sessions_named(f"sleep {seconds}") == []
    finally:
        timer.cancel()
        for pid in sessions_named(f"sleep {seconds}"):
            os.kill(pid, signal.SIGKILL)


@needs_proc
def test_stop_ends_a_running_command(tmp_path: Path, groups: list[int]) -> None:
    cancel = threading.Event()
    stopped_at: list[float] = []

    def press_stop() -> None:
        stopped_at.append(time.monotonic())
        cancel.set()

    timer = threading.Timer(0.5, press_stop)
    timer.start()
    try:
        result = plain(tmp_path, "echo PGID $$; sleep 100", cancel=cancel)
        returned_at = time.monotonic()
    finally:
        timer.cancel()
    groups.append(group_of(result))
    assert returned_at - stopped_at[0] < 1.5
    assert "stopped by the person; the command and its child processes were stopped." in result
    assert living(groups[0]) == []


def test_huge_output_keeps_head_and_tail_in_bounded_memory(tmp_path: Path) -> None:
    shell(tmp_path, "true")  # imports every tool module before memory is measured
    tracemalloc.start()
    try:
        result = shell(tmp_path, "seq 1 3000000")  # about 21 MB
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3_000_000
    assert len(result) <= Settings().max_tool_output
    assert "--- stdout ---\n1\n2\n3\n" in result
    assert result.endswith("\n2999999\n3000000")
    cut = re.search(r"\[\.\.\. ([\d,]+) bytes cut \.\.\.\]", result)
    assert cut
    assert int(cut.group(1).replace(",", "")) > 20_000_000


def test_both_streams_keep_their_share_of_the_room(tmp_path: Path) -> None:
    result = shell(tmp_path, "seq 1 100000; seq 100001 200000 >&2")
    assert len(result) <= Settings().max_tool_output
    stdout, stderr = result.split("--- stderr ---\n")
    assert "\n1\n2\n" in stdout
    assert stdout.rstrip().endswith("\n100000")
    assert stderr.startswith("100001\n100002\n")
    assert stderr.endswith("\n200000")
    assert "cut ...]" in stdout
    assert "cut ...]" in stderr


def test_output_a_little_too_long_is_cut_by_characters(tmp_path: Path) -> None:
    result = shell(tmp_path, "seq 1 5000; seq 1 5000 >&2")  # each stream fits what is read, not both in the result
    assert len(result) <= Settings().max_tool_output
    stdout, stderr = result.split("--- stderr ---\n")
    assert "characters cut ...]" in stdout
    assert "characters cut ...]" in stderr
    assert stderr.startswith("1\n2\n")
    assert stderr.endswith("\n5000")


def test_short_output_is_not_cut(tmp_path: Path) -> None:
    assert "cut ...]" not in shell(tmp_path, "seq 1 1000")


@pytest.mark.parametrize("command", ["", "   \n"])
def test_an_empty_command_is_refused(tmp_path: Path, command: str) -> None:
    assert shell(tmp_path, command) == "Error: command is empty; give the shell command to run."


@pytest.mark.parametrize("timeout", [0, -1, "nan"])
def test_a_timeout_that_is_not_positive_is_refused(tmp_path: Path, timeout: object) -> None:
    assert shell(tmp_path, "true", timeout=timeout).startswith("Error: timeout must be a positive number of seconds")


def test_a_timeout_of_the_wrong_type_is_refused_by_the_registry(tmp_path: Path) -> None:
    assert shell(tmp_path, "true", timeout="abc").startswith("Error: invalid arguments for run_shell: 'timeout'")


def test_a_missing_workspace_is_an_error(tmp_path: Path) -> None:
    result = shell(tmp_path / "gone", "true")
    assert result.startswith("Error: could not start the command in ")
    assert "No such file or directory" in result
