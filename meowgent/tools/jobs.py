"""A shell command's processes: started in a session of their own, their output read with bounds, and ended
together at the deadline, on Stop, or when the command leaves processes running in the background.

In the sandbox (`run_sandboxed`), the command's bash is the PID namespace's init, so ending it ends
everything the command started, and it reports what was still running. Without one (`run_plain`), the
command is a process group, and processes that left the group are found by a mark in their environment.
"""

from __future__ import annotations

import contextlib
import enum
import fcntl
import os
import secrets
import selectors
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from meowgent.tools.mounts import SandboxPolicy
from meowgent.tools.sandbox import Sandbox
from meowgent.tools.spec import ToolError, cap_text

_POLL = 0.1  # how often Stop and the clock are checked while nothing is printed
_GRACE = 1.0  # between SIGTERM and SIGKILL, so programs can clean up
_LINGER = 1.0  # how long a background process may hold the output pipes once the shell has exited
_CHUNK = 65536
_MARK = "MEOWGENT_RUN"
"""Without a sandbox: set to a token per command in its environment. Processes that leave its process group
(setsid, a double fork) still inherit it, so they can be found in /proc and ended. `env -i` escapes this."""
_LEFTOVERS = r"""report=$2
exec 3>&"$report" 4>&2 2>/dev/null {report}>&-
bridge=${MEOWGENT_PROXY_BRIDGE:-$$}
unset MEOWGENT_PROXY_BRIDGE
"$0" -c "$1" 2>&4 3>&- 4>&-
status=$?
for entry in /proc/[1-9]*; do
  case ${entry#/proc/} in "$$" | "$bridge") continue ;; esac
  read -r stat < "$entry/stat" || continue
  case ${stat##*) } in Z*) ;; *) printf x >&3; break ;; esac
done
exit "$status"
"""
"""The bash that runs the command in the sandbox (`$1`, with its own stderr and nothing else of ours), then says
on the report pipe (`$2`, moved to fd 3) whether anything else still runs in the PID namespace. It is the
namespace's init (pid 1, which reaps orphans): the kernel ends everything else when it exits. The network
proxy's bridge (meowgent.tools.netbridge) is not the command's, so it is not counted. Its own stderr is
/dev/null, so bash's "Segmentation fault" line about the command stays out of the output. Builtins only: the check
starts no process."""
_REPORT_FD = 10


class Ending(enum.Enum):
    """Why the command's process group was ended; the value is the sentence the model reads."""

    TIMED_OUT = "timed out after {timeout:g} s; the command and its child processes were stopped."
    STOPPED = "stopped by the person; the command and its child processes were stopped."
    BACKGROUND = "it left processes running in the background; they were stopped (a command's processes end with it)."


@dataclass
class Capture:
    """One output stream, bounded while it is read so a command printing gigabytes cannot eat memory."""

    keep: int
    """Bytes kept at each end; at least the characters the result can show, as a character is at least a byte."""
    head: bytearray = field(default_factory=bytearray)
    tail: bytearray = field(default_factory=bytearray)
    total: int = 0
    dropped: int = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.keep - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        excess = len(self.tail) - self.keep
        if excess > 0:
            del self.tail[:excess]
            self.dropped += excess

    def text(self, room: int) -> str:
        """At most `room` characters (plus the cut note), head and tail kept."""
        if not self.dropped:
            return cap_text(decode(self.head + self.tail), room)
        # The middle is gone already, so the cut is counted in bytes, the only unit known for it.
        head = self.head[: room * 2 // 3]
        tail = self.tail[max(len(self.tail) - (room - len(head)), 0) :]
        cut = self.total - len(head) - len(tail)
        return f"{decode(head)}\n\n[... {cut:,} bytes cut ...]\n\n{decode(tail)}"


@dataclass(frozen=True)
class Finished:
    returncode: int
    ending: Ending | None
    duration: float
    stdout: Capture
    stderr: Capture
    escaped: tuple[str, ...] = ()
    """Names of processes that had left the command's process group and were ended with it."""


def run_sandboxed(
    command: str,
    sandbox: Sandbox,
    policy: SandboxPolicy,
    *,
    timeout: float,
    cancel: threading.Event,
    keep: int,
) -> Finished:
    """The command in the sandbox. Ending bwrap ends its PID namespace, so no process of the command survives."""
    started = time.monotonic()
    report, report_end = _report_pipe()
    with open(report, "rb") as leftovers:
        try:
            # The watching shell is the namespace's init: bwrap returns once everything in it has ended.
            launch = sandbox.launch(policy, _leftover_check(command, report_end), as_pid_1=True)
            with launch.with_filter() as (argv, filter_fds):
                job = _SandboxedJob(
                    _start(argv, policy.workspace, launch.env, pass_fds=(report_end, *filter_fds)), keep
                )
        finally:
            os.close(report_end)
        try:
            ending = job.watch(deadline=started + timeout, cancel=cancel)
            if ending is not None:
                job.stop()
        finally:
            job.close()
            launch.ended()  # bwrap, the namespace's init's parent, has returned: nothing of the command is left
        if ending is None and leftovers.read(1):
            ending = Ending.BACKGROUND
    return Finished(job.process.returncode, ending, time.monotonic() - started, job.stdout, job.stderr)


def _report_pipe() -> tuple[int, int]:
    """A pipe whose read end never blocks (it is read once the sandbox is gone) and whose write end is >= fd 10."""
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    moved = fcntl.fcntl(write_end, fcntl.F_DUPFD_CLOEXEC, _REPORT_FD)
    os.close(write_end)
    return read_end, moved


def _leftover_check(command: str, report: int) -> list[str]:
    """The command line in the sandbox: the command in bash, which then reports on `report` what it left running."""
    bash = shutil.which("bash")
    if bash is None:  # a BusyBox system: it still ends with the command, only unreported
        return ["/bin/sh", "-c", command]
    return [bash, "-c", _LEFTOVERS, bash, command, str(report)]


def run_plain(
    command: str,
    *,
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    cancel: threading.Event,
    keep: int,
) -> Finished:
    """The command as a process group of its own, and the processes that left it found by their mark."""
    started = time.monotonic()
    token = secrets.token_hex(8)
    shell = shutil.which("bash") or "/bin/sh"
    job = _Job(_start([shell, "-c", command], cwd, {**env, _MARK: token}), keep)
    escaped: list[str] = []
    try:
        ending = job.watch(deadline=started + timeout, cancel=cancel)
        escaped += _end_marked(token, job.group)  # first, as an escaped process may hold the output pipes
        if ending is None and (escaped or _group_alive(job.group)):
            ending = Ending.BACKGROUND
        if ending is not None:
            job.stop()
    finally:
        escaped += _end_marked(token, job.group)  # also what the group started while it was being stopped
        job.close()
    duration = time.monotonic() - started
    return Finished(job.process.returncode, ending, duration, job.stdout, job.stderr, tuple(sorted(set(escaped))))


def _start(
    argv: Sequence[str], cwd: Path, env: dict[str, str], *, pass_fds: tuple[int, ...] = ()
) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            # Its own session: the whole group can be signalled, and there is no terminal to prompt on.
            start_new_session=True,
            env=env,
            pass_fds=pass_fds,
        )
    except OSError as exc:
        raise ToolError(f"could not start the command in {cwd}: {exc.strerror or exc}.") from None


class _Job:
    """A started command: its process group, and its output pipes until they close."""

    def __init__(self, process: subprocess.Popen[bytes], keep: int) -> None:
        self.process = process
        self.group = process.pid  # a new session's leader gives the group its id
        self.stdout, self.stderr = Capture(keep), Capture(keep)
        self.pipes = selectors.DefaultSelector()
        self.pipes.register(process.stdout, selectors.EVENT_READ, self.stdout)
        self.pipes.register(process.stderr, selectors.EVENT_READ, self.stderr)

    def watch(self, *, deadline: float, cancel: threading.Event) -> Ending | None:
        """Read output until the command is over; returns why it must be cut short, if it must."""
        exited_at: float | None = None
        while True:
            self._pump()
            if exited_at is None and self.process.poll() is not None:
                exited_at = time.monotonic()
            if exited_at is not None and not self.pipes.get_map():
                return None
            if cancel.is_set():
                return Ending.STOPPED
            now = time.monotonic()
            # Waiting for pipe EOF here would hang on any background process that inherited the pipes.
            if exited_at is not None and now - exited_at >= _LINGER:
                return Ending.BACKGROUND
            if now >= deadline:
                return Ending.TIMED_OUT

    def stop(self) -> None:
        """SIGTERM the whole group, SIGKILL whatever is left after a grace period, then read what remains briefly."""
        _signal_group(self.group, signal.SIGTERM)
        self._pump_until(lambda: self.process.poll() is not None and not _group_alive(self.group), _GRACE)
        if _group_alive(self.group):
            _signal_group(self.group, signal.SIGKILL)
        self._pump_until(lambda: not self.pipes.get_map(), _LINGER)

    def close(self) -> None:
        """Release the pipes and reap the shell; if a bug got us here early, kill the group first."""
        if self.process.poll() is None:
            _signal_group(self.group, signal.SIGKILL)
        # A process that escaped the group may still hold a pipe; closing our end is all we can do.
        for key in list(self.pipes.get_map().values()):
            key.fileobj.close()
        self.pipes.close()
        self.process.wait()

    def _pump(self) -> None:
        """Read what is ready, waiting at most one poll interval; with no pipes left, wait for the shell instead."""
        if not self.pipes.get_map():
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(_POLL)
            return
        for key, _ in self.pipes.select(_POLL):
            chunk = os.read(key.fd, _CHUNK)
            if chunk:
                key.data.add(chunk)
            else:
                self.pipes.unregister(key.fileobj)
                key.fileobj.close()

    def _pump_until(self, done: Callable[[], bool], seconds: float) -> None:
        end = time.monotonic() + seconds
        while not done() and time.monotonic() < end:
            self._pump()


class _SandboxedJob(_Job):
    """A command in the sandbox: bwrap, whose one child is the PID namespace's init (our bash)."""

    def stop(self) -> None:
        """SIGKILL the namespace's init (the only signal an init without handlers takes from outside): the kernel
        ends every process in the namespace, and bwrap, which waits for its init, returns only then. Killing bwrap
        instead returns at once, while the kernel may still be ending them."""
        for pid in _children(self.process.pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        self._pump_until(lambda: self.process.poll() is not None, _GRACE)
        if self.process.poll() is None:  # no init yet (bwrap was still setting up), or no children file
            _signal_group(self.group, signal.SIGKILL)
        self._pump_until(lambda: not self.pipes.get_map(), _LINGER)


def _children(pid: int) -> list[int]:
    """The child processes of `pid` (Linux's /proc/PID/task/PID/children; none where the kernel lacks it)."""
    try:
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


def _signal_group(group: int, signum: signal.Signals) -> None:
    # Gone already, or only processes of another user (setuid) are left, which we cannot stop anyway.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signum)


def _group_alive(group: int) -> bool:
    """Whether a process of the group still runs. Zombies do not count: some containers' init never reaps them."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # a member runs as another user; /proc still tells
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    return any(_running_in(group, stat) for stat in proc.glob("[0-9]*/stat"))


def _end_marked(token: str, group: int) -> list[str]:
    """End every process outside `group` that still carries this command's mark (SIGTERM, then SIGKILL); their names.

    The group's own processes are left to the group's ending, which says so in its own words.
    """
    mark = f"{_MARK}={token}".encode()
    ended: dict[int, str] = {}
    deadline = time.monotonic() + _GRACE
    signum = signal.SIGTERM
    while found := _marked(mark, group):
        if time.monotonic() >= deadline:
            if signum == signal.SIGKILL:
                break  # unkillable (another user's, or stuck in the kernel): reported, not waited for
            signum, deadline = signal.SIGKILL, time.monotonic() + _GRACE
        for pid in found.keys() - ended.keys() if signum == signal.SIGTERM else found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signum)
        ended.update(found)
        time.sleep(_POLL / 2)
    return list(ended.values())


def _marked(mark: bytes, group: int) -> dict[int, str]:
    """The processes outside `group` whose environment holds `mark`, by id, with their names; without /proc, none."""
    found = {}
    for folder in Path("/proc").glob("[0-9]*"):
        try:
            if mark in (folder / "environ").read_bytes().split(b"\0") and not _running_in(group, folder / "stat"):
                found[int(folder.name)] = (folder / "comm").read_text().strip()
        except (OSError, ValueError):  # gone, a zombie, or another user's
            continue
    return found


def _running_in(group: int, stat: Path) -> bool:
    try:
        text = stat.read_text()
    except OSError:  # the process ended while we looked
        return False
    # The command name is in parentheses and may hold anything, so fields are counted after the last one.
    state, _parent, process_group = text[text.rindex(")") + 2 :].split()[:3]
    return state != "Z" and int(process_group) == group


def decode(data: bytes | bytearray) -> str:
    return data.decode("utf-8", errors="replace")
