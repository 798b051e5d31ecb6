"""The sandbox's seccomp filter: an allow-list. The system calls the Python interpreter and
the allowed libraries (numpy, pandas, scipy, scikit-learn, networkx; found by tracing them)
need to compute, read their own installation and use the private folder; every other call
fails with EPERM, whatever it is (new calls of later kernels included).

Allowed only with safe arguments: ``fcntl`` without F_SETOWN, F_SETSIG, leases or
directory notifications (signals sent to another process); ``ioctl`` only the terminal and
close-on-exec queries Python makes; ``prctl`` only a thread's name; ``prlimit64`` only to
read the process's own limits; ``sched_getaffinity``, ``getsid`` and ``getpgid`` only of
itself (of another pid they tell whether it exists, where it shares the host's PID
namespace); ``open`` and ``openat`` with O_TRUNC only for writing. Not on the list, so
refused: new processes and threads (clone, fork, execve), signals to anything, sockets,
pipes, memfd, SysV and POSIX IPC, fanotify and inotify, changes to a file's mode, owner,
times or attributes, truncating a file by its name (``truncate``; ``ftruncate`` needs it
open for writing) and ``openat2`` (its flags lie in memory a filter cannot read):
Landlock controls truncation only from ABI 3 (Linux 6.2), and before it these were the
ways to truncate a file outside; scheduling and priority, mounts and namespaces, clocks,
host names, the kernel log, keys, BPF, io_uring, ptrace, personality.
"""

from __future__ import annotations

import errno
import os
from contextlib import suppress

_ALLOWED = (
    # memory
    "brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "mbind", "msync", "mincore",
    # files (what they reach is the mount namespace's and Landlock's business)
    "read", "write", "pread64", "pwrite64", "readv", "writev", "preadv", "pwritev",
    "preadv2", "pwritev2", "lseek", "close", "close_range",
    "stat", "fstat", "lstat", "newfstatat", "statx", "access", "faccessat", "faccessat2",
    "getdents64", "readlink", "readlinkat", "getcwd", "chdir", "fchdir", "mkdir", "mkdirat",
    "rmdir", "unlink", "unlinkat", "rename", "renameat", "renameat2", "link", "linkat",
    "symlink", "symlinkat", "ftruncate", "fallocate", "fsync", "fdatasync",
    "fadvise64", "flock", "statfs", "fstatfs", "umask", "dup", "dup2", "dup3",
    "sendfile", "copy_file_range", "poll", "ppoll", "select", "pselect6",
    "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait",
    # signals to itself and time
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack", "restart_syscall",
    "clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time",
    "getitimer", "setitimer", "alarm",
    # who and where it is
    "getpid", "gettid", "getppid", "getuid", "geteuid", "getgid", "getegid", "getgroups",
    "getresuid", "getresgid", "getpgrp", "uname", "sysinfo",
    "getrusage", "times", "getcpu", "getrandom",
    # the C library's threads machinery on a single thread, and leaving
    "futex", "set_robust_list", "get_robust_list", "rseq", "set_tid_address", "arch_prctl",
    "sched_yield", "exit", "exit_group",
)  # fmt: skip

_F_DUPFD, _F_GETFD, _F_SETFD, _F_GETFL, _F_SETFL = 0, 1, 2, 3, 4
_F_GETLK, _F_SETLK, _F_SETLKW, _F_DUPFD_CLOEXEC = 5, 6, 7, 1030
_F_OFD_GETLK, _F_OFD_SETLK, _F_OFD_SETLKW = 36, 37, 38
_FCNTL = (_F_DUPFD, _F_GETFD, _F_SETFD, _F_GETFL, _F_SETFL, _F_GETLK, _F_SETLK, _F_SETLKW,
          _F_DUPFD_CLOEXEC, _F_OFD_GETLK, _F_OFD_SETLK, _F_OFD_SETLKW)  # fmt: skip
_TCGETS, _FIOCLEX, _FIONCLEX = 0x5401, 0x5451, 0x5450
_PR_SET_NAME, _PR_GET_NAME = 15, 16
# Opening with O_TRUNC truncates with read access alone (and with access mode 3, none), and
# Landlock before ABI 3 checks only the access: O_TRUNC only with write access.
_TRUNC_MODE = os.O_ACCMODE | os.O_TRUNC
_OPEN_MODES = (os.O_RDONLY, os.O_WRONLY, os.O_RDWR, os.O_WRONLY | os.O_TRUNC,
               os.O_RDWR | os.O_TRUNC)  # fmt: skip


def install(seccomp) -> None:
    """Load the filter (``seccomp`` is the pyseccomp module) on this process for good."""
    rules = seccomp.SyscallFilter(seccomp.ERRNO(errno.EPERM))

    def allow(name, *args):
        # A call this architecture does not have (open, stat, ... on arm64) is left out.
        with suppress(OSError, RuntimeError, ValueError):
            rules.add_rule(seccomp.ALLOW, name, *args)

    for name in _ALLOWED:
        allow(name)
    for cmd in _FCNTL:
        allow("fcntl", seccomp.Arg(1, seccomp.EQ, cmd))
    for cmd in (_TCGETS, _FIOCLEX, _FIONCLEX):
        allow("ioctl", seccomp.Arg(1, seccomp.EQ, cmd))
    for option in (_PR_SET_NAME, _PR_GET_NAME):
        allow("prctl", seccomp.Arg(0, seccomp.EQ, option))
    for mode in _OPEN_MODES:
        allow("open", seccomp.Arg(1, seccomp.MASKED_EQ, _TRUNC_MODE, mode))
        allow("openat", seccomp.Arg(2, seccomp.MASKED_EQ, _TRUNC_MODE, mode))
    for me in {0, os.getpid()}:
        allow("prlimit64", seccomp.Arg(0, seccomp.EQ, me), seccomp.Arg(2, seccomp.EQ, 0))
        for name in ("sched_getaffinity", "getsid", "getpgid"):
            allow(name, seccomp.Arg(0, seccomp.EQ, me))
    # clone3 passes its flags in memory a filter cannot read; "not here" (rather than EPERM)
    # is what makes the C library fall back to clone, which the list refuses.
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    rules.load()
