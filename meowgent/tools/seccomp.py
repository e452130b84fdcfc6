"""The seccomp filter of the sandbox: a classic BPF program, assembled here, that bwrap loads (`--seccomp FD`).

The mounts are the sandbox; this filter makes the kernel refuse what would undo them, whatever a command's text
said (Codex's linux-sandbox and Flatpak filter the same way). It denies with EPERM: mounting and unmounting (the
old call and the new mount API), `pivot_root`, new user namespaces (`unshare`, `clone` with CLONE_NEWUSER, `setns`),
looking into other processes (`ptrace`, `process_vm_readv/writev`), the kernel's keyrings, BPF programs, perf
events, file handles that skip the path walk (`open_by_handle_at`), kernel modules, kexec, `userfaultfd`, the kernel
log, reboot, swap, io_uring (whose operations seccomp never sees), and typing into a terminal (TIOCSTI, TIOCLINUX).
`clone3` passes its flags in memory a filter can't read, so it fails with ENOSYS: libc then falls back to `clone`.

A syscall of another ABI than the one the filter was written for (i386 on x86_64, 32-bit ARM on aarch64) kills the
process: its numbers mean other calls. x32 calls on x86_64 are denied. Pure: no libseccomp, nothing loaded here.
"""

from __future__ import annotations

import enum
import errno
import platform
import struct
from collections.abc import Mapping
from dataclasses import dataclass

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6] (little-endian on both arches)
_NR, _ARCH = 0, 4
_ARG0_LOW, _ARG1_LOW = 16, 24  # the low 32 bits of args[0] and args[1]

# Classic BPF opcodes (linux/filter.h), as seccomp accepts them
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K

_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000
_RET_ALLOW = 0x7FFF0000

X32_SYSCALL_BIT = 0x40000000
CLONE_NEWUSER = 0x10000000
TIOCSTI, TIOCLINUX = 0x5412, 0x541C
"""ioctl's request is an unsigned int: only its low 32 bits are compared, so high bits set can't slip past."""


class Verdict(enum.IntEnum):
    """What the filter returns for a call (`SECCOMP_RET_*`, with the errno in the low bits)."""

    ALLOW = _RET_ALLOW
    EPERM = _RET_ERRNO | errno.EPERM
    ENOSYS = _RET_ERRNO | errno.ENOSYS
    KILL = _RET_KILL_PROCESS


DENIED = (
    "mount",
    "umount2",
    "pivot_root",
    "unshare",
    "setns",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "open_tree_attr",
    "mount_setattr",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "open_by_handle_at",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "userfaultfd",
    "syslog",
    "reboot",
    "swapon",
    "swapoff",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
)
"""Syscalls refused with EPERM whatever their arguments."""


@dataclass(frozen=True)
class Arch:
    """One ABI: its AUDIT_ARCH value and the numbers of the calls the filter looks at."""

    name: str
    audit_arch: int
    numbers: Mapping[str, int]
    x32: bool = False
    """Whether numbers with X32_SYSCALL_BIT reach another table of the kernel (x86_64's x32 ABI)."""


_NEW_MOUNT_API = {
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "clone3": 435,
    "mount_setattr": 442,
    "open_tree_attr": 467,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
}
"""Calls added since Linux 5.1 have one number on every architecture."""

X86_64 = Arch(
    "x86_64",
    audit_arch=0xC000003E,  # EM_X86_64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE
    # asm/unistd_64.h
    numbers={
        "ioctl": 16,
        "clone": 56,
        "ptrace": 101,
        "syslog": 103,
        "pivot_root": 155,
        "mount": 165,
        "umount2": 166,
        "swapon": 167,
        "swapoff": 168,
        "reboot": 169,
        "init_module": 175,
        "delete_module": 176,
        "kexec_load": 246,
        "add_key": 248,
        "request_key": 249,
        "keyctl": 250,
        "unshare": 272,
        "perf_event_open": 298,
        "open_by_handle_at": 304,
        "setns": 308,
        "process_vm_readv": 310,
        "process_vm_writev": 311,
        "finit_module": 313,
        "kexec_file_load": 320,
        "bpf": 321,
        "userfaultfd": 323,
        **_NEW_MOUNT_API,
    },
    x32=True,
)
AARCH64 = Arch(
    "aarch64",
    audit_arch=0xC00000B7,  # EM_AARCH64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE
    # asm-generic/unistd.h
    numbers={
        "ioctl": 29,
        "umount2": 39,
        "mount": 40,
        "pivot_root": 41,
        "unshare": 97,
        "kexec_load": 104,
        "init_module": 105,
        "delete_module": 106,
        "syslog": 116,
        "ptrace": 117,
        "reboot": 142,
        "add_key": 217,
        "request_key": 218,
        "keyctl": 219,
        "clone": 220,
        "swapon": 224,
        "swapoff": 225,
        "perf_event_open": 241,
        "open_by_handle_at": 265,
        "setns": 268,
        "process_vm_readv": 270,
        "process_vm_writev": 271,
        "finit_module": 273,
        "bpf": 280,
        "userfaultfd": 282,
        "kexec_file_load": 294,
        **_NEW_MOUNT_API,
    },
)
ARCHES = {arch.name: arch for arch in (X86_64, AARCH64)}


def program_for_this_machine() -> bytes:
    """The filter for the machine Python runs on; b"" where there is none (an architecture not listed)."""
    arch = ARCHES.get(platform.machine())
    return program(arch) if arch is not None else b""


def program(arch: Arch) -> bytes:
    """The filter as bwrap reads it: struct sock_filter entries (u16 code, u8 jt, u8 jf, u32 k), little-endian."""
    return b"".join(struct.pack("<HBBI", *instruction) for instruction in _assemble(_source(arch)))


# A line of source: ("ld", offset), ("ret", verdict), ("label", name), or a jump (kind, constant, label if true)
# that goes on to the next line when false.
_Line = tuple[str, int] | tuple[str, Verdict] | tuple[str, str] | tuple[str, int, str]
_JUMPS = {"jeq": _JEQ_K, "jge": _JGE_K, "jset": _JSET_K}


def _source(arch: Arch) -> list[_Line]:
    """The filter in a few readable lines: the ABI, then each number, then the calls whose arguments decide."""
    numbers = arch.numbers
    lines: list[_Line] = [("ld", _ARCH), ("jeq", arch.audit_arch, "native"), ("ret", Verdict.KILL)]
    lines += [("label", "native"), ("ld", _NR)]
    if arch.x32:
        lines.append(("jge", X32_SYSCALL_BIT, "eperm"))
    lines += [("jeq", numbers[name], "eperm") for name in DENIED]
    lines += [("jeq", numbers["clone3"], "enosys"), ("jeq", numbers["clone"], "clone")]
    lines += [("jeq", numbers["ioctl"], "ioctl"), ("ret", Verdict.ALLOW)]
    lines += [("label", "clone"), ("ld", _ARG0_LOW), ("jset", CLONE_NEWUSER, "eperm"), ("ret", Verdict.ALLOW)]
    lines += [("label", "ioctl"), ("ld", _ARG1_LOW), ("jeq", TIOCSTI, "eperm"), ("jeq", TIOCLINUX, "eperm")]
    lines += [("ret", Verdict.ALLOW)]
    lines += [("label", "eperm"), ("ret", Verdict.EPERM), ("label", "enosys"), ("ret", Verdict.ENOSYS)]
    return lines


def _assemble(lines: list[_Line]) -> list[tuple[int, int, int, int]]:
    """(code, jt, jf, k) for each instruction, with labels turned into forward offsets (at most 255: BPF's u8)."""
    at: dict[str, int] = {}
    code: list[_Line] = []
    for line in lines:
        if line[0] == "label":
            at[str(line[1])] = len(code)
        else:
            code.append(line)
    out = []
    for index, line in enumerate(code):
        match line:
            case ("ld", int(offset)):
                out.append((_LD_W_ABS, 0, 0, offset))
            case ("ret", Verdict() as verdict):
                out.append((_RET_K, 0, 0, int(verdict)))
            case (kind, int(constant), str(label)):
                jump = at[label] - index - 1
                if not 0 <= jump <= 0xFF:
                    raise ValueError(f"a jump to {label} of {jump} instructions does not fit classic BPF")
                out.append((_JUMPS[kind], jump, 0, constant))
    return out
