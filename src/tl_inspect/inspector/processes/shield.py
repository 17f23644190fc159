"""Keep a user file's code from stopping, killing or tracing tl-inspect's own processes.

The time limit is enforced by the parent (the pool) through the zygote; a file that could SIGSTOP or
SIGKILL either of them would hang the run past `--timeout` or end it with no output. Each worker
installs, before the user's file is imported, a seccomp filter that the user's code and everything it
starts inherit and cannot remove: a signal to the zygote, to the tl-inspect process, to their process
groups or their threads, or to every process (`kill(-1, ...)`) fails with EPERM, and so do `ptrace`,
`process_vm_writev`, `tkill` and `pidfd_send_signal` (they reach processes by thread or by file, which
the filter cannot check). The zygote, and the tl-inspect process while workers run, are also made
non-dumpable, so their memory and their pipes under /proc/<pid>/ are closed to the workers.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
from contextlib import contextmanager

_PR_GET_DUMPABLE, _PR_SET_DUMPABLE = 3, 4
_PR_SET_SECCOMP = 22
_PR_SET_NO_NEW_PRIVS = 38
_SECCOMP_MODE_FILTER = 2
_RET_ALLOW = 0x7FFF0000
_RET_DENY = 0x00050000 | errno.EPERM  # SECCOMP_RET_ERRNO
_LD_ABS_W, _JEQ, _JGE, _RET = 0x20, 0x15, 0x35, 0x06  # BPF opcodes
_NR, _ARCH, _ARG0 = 0, 4, 16  # offsets in struct seccomp_data (arg 0: its low 32 bits, little-endian)

# (audit arch, syscalls always denied, syscalls whose first argument is a pid or process group checked)
_SYSCALLS = {
    "x86_64": (
        0xC000003E,
        {"ptrace": 101, "tkill": 200, "process_vm_writev": 311, "pidfd_send_signal": 424},
        {"kill": 62, "rt_sigqueueinfo": 129, "tgkill": 234, "rt_tgsigqueueinfo": 297, "pidfd_open": 434},
    ),
    "aarch64": (
        0xC00000B7,
        {"ptrace": 117, "tkill": 130, "process_vm_writev": 271, "pidfd_send_signal": 424},
        {"kill": 129, "tgkill": 131, "rt_sigqueueinfo": 138, "rt_tgsigqueueinfo": 240, "pidfd_open": 434},
    ),
}
_X32_BIT = 0x40000000

_libc = ctypes.CDLL(None, use_errno=True)


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def make_undumpable() -> None:
    """For the zygote: its /proc/<pid>/mem, fd/ and ptrace are closed to processes of the same user."""
    _libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


@contextmanager
def undumpable():
    """The calling process undumpable while workers run (the tl-inspect process or an API caller)."""
    was = _libc.prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0)
    make_undumpable()
    try:
        yield
    finally:
        if was > 0:
            _libc.prctl(_PR_SET_DUMPABLE, was, 0, 0, 0)


def shield_worker(protected: tuple[int, ...]) -> bool:
    """In a freshly forked worker: make itself dumpable again (the zygote is not, and a worker's own
    /proc/self must stay readable) and deny signals to the `protected` processes, their groups and their
    threads. False where the machine has no filter for this architecture (the protection is then absent)."""
    _libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)
    known = _SYSCALLS.get(platform.machine())
    if known is None:
        return False
    arch, denied, checked = known
    targets = {pid & 0xFFFFFFFF for pid in _targets(protected)} | {0xFFFFFFFF}  # -1: every process
    deny = [(_RET, 0, 0, _RET_DENY)]
    code = [(_LD_ABS_W, 0, 0, _ARCH), (_JEQ, 1, 0, arch), *deny, (_LD_ABS_W, 0, 0, _NR)]
    if arch == _SYSCALLS["x86_64"][0]:
        code += [(_JGE, 0, 1, _X32_BIT), *deny]
    code += [op for nr in denied.values() for op in ((_JEQ, 0, 1, nr), *deny)]
    checks = [(_LD_ABS_W, 0, 0, _ARG0)]
    checks += [op for target in sorted(targets) for op in ((_JEQ, 0, 1, target), *deny)]
    # a checked syscall jumps over the others' tests and the allow to the argument's tests
    code += [(_JEQ, len(checked) - i + 1, 0, nr) for i, nr in enumerate(checked.values(), 1)]
    code += [(_RET, 0, 0, _RET_ALLOW), *checks, (_RET, 0, 0, _RET_ALLOW)]
    program = b"".join(struct.pack("HBBI", *op) for op in code)
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _Program(len(code), ctypes.addressof(buffer))
    if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    return _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) == 0


def _targets(protected: tuple[int, ...]) -> set[int]:
    """The processes, their threads (a thread id reaches its whole process through `kill`) and, negated,
    their process groups."""
    found: set[int] = set(protected)
    for pid in protected:
        try:
            found.add(-os.getpgid(pid))
            found.update(int(tid) for tid in os.listdir(f"/proc/{pid}/task"))
        except OSError:
            continue  # already gone: nothing more to protect
    return found
