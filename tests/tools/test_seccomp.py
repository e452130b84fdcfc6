"""The seccomp filter: the program read by an interpreter of classic BPF, then the real kernel refusing, in the
sandbox, what would undo it (as root and as `nobody`), while everyday commands still work."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meowgent.config import Settings
from meowgent.mcp.config import ServerConfig
from meowgent.mcp.sandboxed import sandboxed
from meowgent.tools import seccomp_exec
from meowgent.tools.launch import Launch
from meowgent.tools.mounts import PRIVATE_TMP, HostView, SandboxPolicy, bwrap_options
from meowgent.tools.registry import run_tool
from meowgent.tools.sandbox import NoSandbox, Sandbox, policy_for, sandbox_for
from meowgent.tools.seccomp import (
    AARCH64,
    ARCHES,
    CLONE_NEWUSER,
    DENIED,
    TIOCLINUX,
    TIOCSTI,
    X32_SYSCALL_BIT,
    X86_64,
    Arch,
    Verdict,
    program,
    program_for_this_machine,
)
from tests.sandboxing import FOUND, bwrap_without_disable_userns, needs_sandbox
from tests.unprivileged import CAN_BECOME_NOBODY, Runner

OTHER_ARCHES = (0x40000003, 0x40000028, 0x800000B7, 0xC000003E, 0xC00000B7, 0)  # i386, arm, BE arm64, …


# ---- the program, read by an interpreter of classic BPF ----


def interpret(code: bytes, *, nr: int, arch: int, args: tuple[int, ...] = (0,) * 6) -> int:
    """What the kernel would return for this call: loads of 32-bit words of seccomp_data, jumps, returns."""
    data = struct.pack("<IIQ6Q", nr, arch, 0, *args)
    instructions = [struct.unpack_from("<HBBI", code, offset) for offset in range(0, len(code), 8)]
    accumulator, pc = 0, 0
    while True:
        opcode, jt, jf, k = instructions[pc]  # an IndexError is a program that runs off its end
        pc += 1
        if opcode == 0x20:  # ld [k]
            (accumulator,) = struct.unpack_from("<I", data, k)
        elif opcode == 0x06:  # ret k
            return k
        elif opcode in (0x15, 0x35, 0x45):  # jeq, jge, jset
            taken = {0x15: accumulator == k, 0x35: accumulator >= k, 0x45: bool(accumulator & k)}[opcode]
            pc += jt if taken else jf
        else:
            raise AssertionError(f"an instruction seccomp would not expect: {opcode:#x}")


def expected(arch: Arch, nr: int, args: tuple[int, ...]) -> Verdict:
    """The filter's promise, in words as plain as the module docstring."""
    numbers = arch.numbers
    if arch.x32 and nr >= X32_SYSCALL_BIT:
        return Verdict.EPERM
    if nr in {numbers[name] for name in DENIED}:
        return Verdict.EPERM
    if nr == numbers["clone3"]:
        return Verdict.ENOSYS
    if nr == numbers["clone"] and args[0] & CLONE_NEWUSER:
        return Verdict.EPERM
    if nr == numbers["ioctl"] and (args[1] & 0xFFFFFFFF) in (TIOCSTI, TIOCLINUX):
        return Verdict.EPERM
    return Verdict.ALLOW


def interesting_numbers(arch: Arch) -> st.SearchStrategy[int]:
    return st.one_of(
        st.sampled_from(sorted(arch.numbers.values())),
        st.integers(0, 600),
        st.integers(X32_SYSCALL_BIT - 2, X32_SYSCALL_BIT + 600),
        st.integers(0, 2**32 - 1),
    )


ARGUMENT = st.one_of(
    st.sampled_from([0, CLONE_NEWUSER, CLONE_NEWUSER | 17, TIOCSTI, TIOCLINUX, 1 << 32 | TIOCSTI, 0x5413]),
    st.integers(0, 2**64 - 1),
)


@pytest.mark.parametrize("arch", ARCHES.values(), ids=ARCHES.keys())
@given(data=st.data())
def test_every_call_gets_what_the_filter_promises(arch: Arch, data: st.DataObject):
    """Every denied number is refused (EPERM, ENOSYS for clone3), every other allowed, whatever the arguments."""
    nr = data.draw(interesting_numbers(arch))
    args = tuple(data.draw(ARGUMENT) for _ in range(6))
    assert interpret(program(arch), nr=nr, arch=arch.audit_arch, args=args) == expected(arch, nr, args)


@pytest.mark.parametrize("arch", ARCHES.values(), ids=ARCHES.keys())
@given(nr=st.integers(0, 500), other=st.sampled_from(OTHER_ARCHES))
def test_a_call_of_another_abi_kills_the_process(arch: Arch, nr: int, other: int):
    if other != arch.audit_arch:
        assert interpret(program(arch), nr=nr, arch=other) == Verdict.KILL


def test_the_calls_in_the_issue_are_all_refused():
    for arch in ARCHES.values():
        for name in ("mount", "umount2", "pivot_root", "unshare", "setns", "ptrace", "keyctl", "bpf"):
            assert interpret(program(arch), nr=arch.numbers[name], arch=arch.audit_arch) == Verdict.EPERM
        assert interpret(program(arch), nr=arch.numbers["clone3"], arch=arch.audit_arch) == Verdict.ENOSYS
        clone_newuser = (CLONE_NEWUSER | 17, 0, 0, 0, 0, 0)
        assert interpret(program(arch), nr=arch.numbers["clone"], arch=arch.audit_arch, args=clone_newuser) == (
            Verdict.EPERM
        )
        fork = (17, 0, 0, 0, 0, 0)
        assert interpret(program(arch), nr=arch.numbers["clone"], arch=arch.audit_arch, args=fork) == Verdict.ALLOW


def header_numbers(path: Path, prefix: str = "__NR_") -> dict[str, int]:
    text = path.read_text()
    return {name: int(number) for name, number in re.findall(rf"#define {prefix}(\w+)\s+(\d+)\b", text)}


@pytest.mark.parametrize(
    ("arch", "header"),
    [(X86_64, "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"), (AARCH64, "/usr/include/asm-generic/unistd.h")],
    ids=["x86_64", "aarch64"],
)
def test_the_numbers_are_the_kernel_headers_numbers(arch: Arch, header: str):
    """aarch64 uses the generic table. A call newer than these headers (open_tree_attr, Linux 6.15) is skipped."""
    if not Path(header).exists():
        pytest.skip(f"needs {header} (linux-libc-dev)")
    known = header_numbers(Path(header))
    checked = {name: number for name, number in arch.numbers.items() if name in known}
    assert checked == {name: known[name] for name in checked}
    assert len(checked) >= len(arch.numbers) - 1


def test_this_machine_has_a_filter():
    """The two architectures Meowgent's bwrap wheel exists for, and the CI's."""
    assert program_for_this_machine() == program(ARCHES[os.uname().machine])


# ---- handing it to bwrap ----


def test_the_filter_reaches_bwrap_on_a_descriptor_closed_afterwards():
    launch = Launch(("/usr/bin/bwrap", "--ro-bind", "/", "/", "--", "true"), {}, b"\x06\x00\x00\x00\x00\x00\xff\x7f")
    with launch.with_filter() as (argv, descriptors):
        (descriptor,) = descriptors
        assert argv == ("/usr/bin/bwrap", "--seccomp", str(descriptor), "--ro-bind", "/", "/", "--", "true")
        assert os.pread(descriptor, 100, 0) == launch.seccomp
        assert os.lseek(descriptor, 0, os.SEEK_CUR) == 0  # bwrap reads from where the offset is
    with pytest.raises(OSError, match="Bad file descriptor"):
        os.fstat(descriptor)


def test_without_a_filter_the_command_line_is_as_it_was():
    launch = Launch(("bwrap", "--", "true"), {})
    with launch.with_filter() as (argv, descriptors):
        assert (argv, descriptors) == (launch.argv, ())
    assert launch.wrapped() == launch.argv


def sandbox_run(settings: Settings, command: str, *, seccomp: bool = True, wrapped: bool = False) -> str:
    """`command` in bash in the sandbox of these settings, started as run_shell's or (`wrapped`) MCP's are."""
    assert isinstance(FOUND, Sandbox)
    launch = FOUND.launch(SandboxPolicy(settings.workspace), ["bash", "-c", command])
    launch = launch if seccomp else dataclasses.replace(launch, seccomp=b"")
    if wrapped:
        argv, descriptors = launch.wrapped(), ()
        done = subprocess.run(argv, env=launch.env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    else:
        with launch.with_filter() as (argv, descriptors):
            done = subprocess.run(
                argv, env=launch.env, pass_fds=descriptors, stdin=subprocess.DEVNULL, capture_output=True, text=True
            )
    return done.stdout + done.stderr


@needs_sandbox
def test_a_server_started_through_the_wrapper_is_filtered(settings: Settings):
    """What an MCP server gets: the SDK can't pass descriptors, so a few lines of Python make one and become bwrap."""
    assert "Seccomp:\t2" in sandbox_run(settings, "grep Seccomp: /proc/self/status", wrapped=True)
    assert "Seccomp:\t0" in sandbox_run(settings, "grep Seccomp: /proc/self/status", seccomp=False)


def test_a_sandboxed_mcp_server_starts_through_the_wrapper(settings: Settings):
    if not isinstance(FOUND, Sandbox):
        pytest.skip("no sandbox here")
    server = ServerConfig("fx", command="node", args=("server.js",), sandbox=True)
    with sandboxed(settings)(server) as started:
        prepared = started.config
    assert (prepared.command, *prepared.args[:3]) == (sys.executable, "-I", "-S", seccomp_exec.__file__)
    assert bytes.fromhex(prepared.args[3]) == program_for_this_machine()
    assert prepared.args[4] == FOUND.bwrap
    assert prepared.args[-2:] == ("node", "server.js")


# ---- the real kernel, through run_shell ----


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    return Settings(workspace=workspace, data_dir=tmp_path / "data", shell_timeout=60)


def run(settings: Settings, command: str) -> str:
    return run_tool("run_shell", {"command": command}, settings=settings)


PROBE = """\
import ctypes, errno, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
N = {numbers!r}
def call(name, *args, nr=None):
    ctypes.set_errno(0)
    values = [ctypes.c_char_p(a) if isinstance(a, bytes) else ctypes.c_ulong(a % 2**64) for a in args]
    result = libc.syscall(ctypes.c_long(N[name] if nr is None else nr), *values)
    if result == 0 and name == "clone":
        os._exit(0)  # the child of a clone that was let through
    return "ok" if result >= 0 else errno.errorcode[ctypes.get_errno()]
child = os.fork()
if child == 0:
    time.sleep(30)
    os._exit(0)
results = {{
    "mount": call("mount", b"none", b"/tmp", b"tmpfs", 0, 0),
    "umount2": call("umount2", b"/proc", 0),
    "unshare": call("unshare", 0x00020000),
    "setns": call("setns", 2**32 - 1, 0),
    "clone_newuser": call("clone", 0x10000000 | 17, 0, 0, 0, 0),
    "clone3": call("clone3", 0, 0),
    "open_tree": call("open_tree", -100, b"/", 1),
    "fsopen": call("fsopen", b"tmpfs", 0),
    "ptrace_child": call("ptrace", 16, child, 0, 0),
    "ptrace_host": call("ptrace", 16, {host_pid}, 0, 0),
    "process_vm_readv": call("process_vm_readv", os.getpid(), 0, 0, 0, 0, 0),
    "keyctl": call("keyctl", 0, 2**64 - 2, 1),
    "bpf": call("bpf", 5, 0, 0),
    "perf_event_open": call("perf_event_open", 0, 0, 2**64 - 1, 2**64 - 1, 0),
    "io_uring_setup": call("io_uring_setup", 1, 0),
    "tiocsti": call("ioctl", 0, 0x5412, b"x"),
    "tiocsti_high_bits": call("ioctl", 0, 1 << 32 | 0x5412, b"x"),
    "x32_getpid": call("x32", nr={x32_getpid}) if {x32_getpid} else "EPERM",
}}
os.kill(child, 9)
print(" ".join(f"{{name}}={{result}}" for name, result in results.items()))
"""
REFUSED = {
    **dict.fromkeys(
        ["mount", "umount2", "unshare", "setns", "clone_newuser", "open_tree", "fsopen", "ptrace_child"], "EPERM"
    ),
    **dict.fromkeys(["ptrace_host", "process_vm_readv", "keyctl", "bpf", "perf_event_open", "io_uring_setup"], "EPERM"),
    **dict.fromkeys(["tiocsti", "tiocsti_high_bits", "x32_getpid"], "EPERM"),
    "clone3": "ENOSYS",
}
ONLY_THE_FILTER_REFUSES = ("setns", "clone_newuser", "clone3", "ptrace_child", "process_vm_readv", "keyctl", "tiocsti")
"""Calls that get through, or fail for another reason, in the same sandbox without the filter: the control."""


PROBE_PYTHON = "/usr/bin/python3" if Path("/usr/bin/python3").is_file() else sys.executable
"""The probe needs only ctypes: the system's Python is in every sandbox, while a checkout's venv under /tmp (a
`mktemp -d` clone) is not, as the sandbox has a /tmp of its own."""


def probe(workspace: Path, python: str = PROBE_PYTHON) -> str:
    """A Python program in the workspace that makes each call with ctypes and prints name=result for each."""
    numbers = dict(ARCHES[os.uname().machine].numbers)
    x32_getpid = X32_SYSCALL_BIT | 39 if os.uname().machine == "x86_64" else 0
    script = workspace / "probe.py"
    script.write_text(PROBE.format(numbers=numbers, host_pid=os.getpid(), x32_getpid=x32_getpid))
    return f"{python} -I {script.name}"


def results(output: str) -> dict[str, str]:
    line = next(line for line in output.splitlines() if line.startswith("mount="))
    return dict(pair.split("=") for pair in line.split())


@needs_sandbox
def test_the_kernel_refuses_each_call_in_a_command(settings: Settings):
    assert results(run(settings, probe(settings.workspace))) == REFUSED


@needs_sandbox
def test_without_the_filter_the_same_sandbox_lets_those_calls_through(settings: Settings):
    """The control: the refusals above are the filter's, not the namespaces' or a missing capability's."""
    found = results(sandbox_run(settings, probe(settings.workspace), seccomp=False))
    for name in ONLY_THE_FILTER_REFUSES:
        assert found[name] != REFUSED[name], (name, found)


UNDO = (
    "unshare -U true; echo unshare-U=$?; unshare -r true; echo unshare-r=$?;"
    " mount -t tmpfs none /tmp; echo mount=$?; umount /proc; echo umount=$?; umount -l /; echo umount-root=$?;"
    " mount -o remount,rw /; echo remount=$?; echo x > /etc/meowgent-escape; echo write=$?"
)
UNDONE_NOTHING = "unshare-U=1\nunshare-r=1\nmount=32\numount=32\numount-root=32\nremount=32\nwrite=1"


@needs_sandbox
@pytest.mark.skipif(not shutil.which("unshare") or not shutil.which("mount"), reason="needs util-linux")
def test_unshare_mount_and_umount_fail_in_a_command(settings: Settings):
    result = run(settings, UNDO)
    assert UNDONE_NOTHING in result, result
    assert not Path("/etc/meowgent-escape").exists()


def everyday(python: str = sys.executable) -> str:
    return (
        "git init -q && git -c user.name=Cat -c user.email=cat@example.com commit -q --allow-empty -m first"
        " && git log --format=%s;"
        f" {python} -m pip --version | cut -c1-4;"
        f" {python} -c 'import threading as t; s=[t.Thread(target=print, args=(i,)) for i in range(3)];"
        " [x.start() for x in s]; [x.join() for x in s]' | sort | tr -d '\\n'; echo;"
        " printf 'all:\\n\\t@for i in 1 2 3 4; do (true) & done; wait; echo made\\n' > Makefile && make -s -j4;"
        f" {python} -c 'import multiprocessing as m; print(sum(m.Pool(2).map(abs, [-1, -2])))'"
    )


@needs_sandbox
@pytest.mark.skipif(not shutil.which("make") or not shutil.which("git"), reason="needs make and git")
def test_everyday_commands_still_work(settings: Settings):
    """git, pip, threads (glibc tries clone3 first, then clone), make's forks, a process pool."""
    result = run(settings, everyday())
    assert result.endswith("first\npip \n012\nmade\n3"), result


NO_CAPABILITIES = "\n".join(f"Cap{kind}:\t0000000000000000" for kind in ("Inh", "Prm", "Eff", "Bnd", "Amb"))
SHOW_CAPABILITIES = "grep ^Cap /proc/self/status"


def test_capabilities_are_dropped_by_name_only_as_root():
    """As anyone else bwrap drops them itself, and a setuid bwrap (where user namespaces are off) refuses the option."""
    policy = SandboxPolicy(Path("/w"))
    assert "--cap-drop" not in bwrap_options(policy, HostView(), disable_userns=True)
    options = bwrap_options(policy, HostView(), disable_userns=True, as_root=True)
    assert options[options.index("--cap-drop") + 1] == "ALL"


@needs_sandbox
def test_a_command_has_no_capabilities(settings: Settings):
    """As root, bwrap would have left it every one in its namespace: enough to unmount the covers."""
    assert NO_CAPABILITIES in run(settings, SHOW_CAPABILITIES)


@needs_sandbox
@pytest.mark.skipif(os.geteuid() != 0, reason="as root only: anyone else never had the capabilities")
def test_as_root_a_command_cannot_unmount_a_cover_to_read_what_it_hides(settings: Settings):
    """The finding: as root, bwrap left a command every capability in its namespace, enough to unmount the cover of
    the data folder (or of /tmp above it) and read it. Reproduced with the options as they were, then refused."""
    settings.data_dir.mkdir()
    (settings.data_dir / "secret").write_text("the owner's chats")
    steal = f"umount -l {PRIVATE_TMP}; umount -l {settings.data_dir}; cat {settings.data_dir}/secret"
    policy = policy_for(settings)
    before = bwrap_options(policy, HostView.read(policy), disable_userns=False)  # no --cap-drop, no filter
    assert isinstance(FOUND, Sandbox)
    done = subprocess.run([FOUND.bwrap, *before, "--", "bash", "-c", steal], capture_output=True, text=True)
    assert "the owner's chats" in done.stdout, done.stderr
    assert "the owner's chats" not in run(settings, steal)


# ---- as a person runs it: unprivileged ----

NOBODYS_PYTHON = "/usr/bin/python3"
"""Not ours: it lives under /root (pyenv), which nobody can enter."""
needs_root = pytest.mark.skipif(
    not CAN_BECOME_NOBODY or not Path(NOBODYS_PYTHON).exists(),
    reason="needs root to become another user, and a Python of the system's",
)


def as_nobody(nobody: Runner, folder: Path, code: str) -> str:
    """Python `code` run as `nobody`, with Meowgent importable; its output."""
    done = subprocess.run(
        [*nobody.become, nobody.python, "-c", code],
        cwd=folder,
        env={"PATH": os.environ["PATH"], "HOME": str(folder), "PYTHONPATH": str(nobody.code)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.stdout + done.stderr


@pytest.fixture
def nobodys() -> Iterator[Path]:
    """A workspace `nobody` owns, in a folder it can reach (pytest's own are root's alone) outside /tmp."""
    if not os.access("/var/tmp", os.W_OK):
        pytest.skip("needs a writable /var/tmp")
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="meowgent-test-") as folder:
        Path(folder).chmod(0o755)
        workspace = Path(folder) / "workspace"
        workspace.mkdir()
        os.chown(workspace, 65534, 65534)
        yield workspace


def run_as_nobody(nobody: Runner, workspace: Path, command: str, *, bwrap: Path | None = None) -> str:
    code = (
        "from pathlib import Path\n"
        "from meowgent.config import Settings\n"
        "from meowgent.tools.registry import run_tool\n"
        "from meowgent.tools.sandbox import sandbox_for\n"
        f"settings = Settings(workspace=Path({str(workspace)!r}), data_dir=Path({str(workspace.parent / 'data')!r}),"
        f" bwrap={str(bwrap) if bwrap else None!r} and Path({str(bwrap)!r}))\n"
        "print(sandbox_for(settings))\n"
        f"print(run_tool('run_shell', {{'command': {command!r}}}, settings=settings))\n"
    )
    return as_nobody(nobody, workspace.parent, code)


@needs_sandbox
@needs_root
def test_as_nobody_the_kernel_refuses_the_same_calls(nobodys: Path, nobody: Runner):
    output = run_as_nobody(nobody, nobodys, probe(nobodys, NOBODYS_PYTHON))
    assert "disable_userns=True" in output, output
    assert results(output) == REFUSED


@needs_sandbox
@needs_root
def test_as_nobody_unshare_and_mount_fail_and_everyday_commands_work(nobodys: Path, nobody: Runner):
    assert UNDONE_NOTHING in run_as_nobody(nobody, nobodys, UNDO)
    assert NO_CAPABILITIES in run_as_nobody(nobody, nobodys, SHOW_CAPABILITIES)
    result = run_as_nobody(nobody, nobodys, everyday(NOBODYS_PYTHON))
    assert result.endswith("first\npip \n012\nmade\n3\n"), result


# ---- a bwrap that can't forbid user namespaces ----


@needs_sandbox
@pytest.mark.skipif(os.geteuid() != 0, reason="as root only")
def test_as_root_a_bwrap_that_cannot_forbid_user_namespaces_is_refused_and_so_are_commands(
    tmp_path: Path, settings: Settings
):
    old = Settings(
        workspace=settings.workspace, data_dir=settings.data_dir, bwrap=bwrap_without_disable_userns(tmp_path)
    )
    found = sandbox_for(old)
    assert isinstance(found, NoSandbox)
    assert (found.refused, found.chosen) == (True, False)
    assert "can't forbid user namespaces" in found.reason
    result = run(old, "touch ran")
    assert result.startswith("Error: not run: commands are refused on this computer"), result
    assert not (settings.workspace / "ran").exists()


@needs_sandbox
@needs_root
def test_as_nobody_the_same_bwrap_is_used_and_the_filter_still_refuses_user_namespaces(nobodys: Path, nobody: Runner):
    old = bwrap_without_disable_userns(nobodys.parent, nobody.bundled_bwrap)
    output = run_as_nobody(nobody, nobodys, "unshare -U true; echo unshare-U=$?; touch ran", bwrap=old)
    assert f"Sandbox(bwrap='{old}', disable_userns=False)" in output, output
    assert "unshare-U=1" in output
    assert (nobodys / "ran").exists()


def test_the_filter_refuses_a_user_namespace_when_bwrap_cannot(settings: Settings):
    """Without --disable-userns, only the filter stands between a command and a user namespace of its own."""
    if not isinstance(FOUND, Sandbox):
        pytest.skip("no sandbox here")
    old = Sandbox(FOUND.bwrap, disable_userns=False)
    launch = old.launch(SandboxPolicy(settings.workspace), ["unshare", "-U", "true"])
    with launch.with_filter() as (argv, descriptors):
        filtered = subprocess.run(argv, env=launch.env, pass_fds=descriptors, capture_output=True, text=True)
    unfiltered = subprocess.run(launch.argv, env=launch.env, capture_output=True, text=True)
    assert (filtered.returncode, unfiltered.returncode) == (1, 0), (filtered.stderr, unfiltered.stderr)
    assert "Operation not permitted" in filtered.stderr
