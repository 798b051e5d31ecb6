"""The kernel calls the sandbox's worker makes to shut itself in, which Python 3.11's ``os``
lacks: ``unshare``, ``mount``, ``umount2``, ``pivot_root``, ``prctl`` and ``capset``.

Written by hand over the C library (ctypes): ``os.unshare`` arrived only in Python 3.12, and
the packages that wrap prctl and capabilities build against libcap's headers, which a plain
``pip install`` on a fresh machine does not have. Each call raises OSError with its errno.
"""

from __future__ import annotations

import ctypes
import os
import platform

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 0x400, 0x800, 0x200000
_MNT_DETACH = 2

_PR_SET_PDEATHSIG = 1
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_CAPABILITY_VERSION_3 = 0x20080522

# glibc has no wrapper for pivot_root; its number per architecture.
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                        ctypes.c_char_p]  # fmt: skip
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.prctl.argtypes = [ctypes.c_int] + [ctypes.c_ulong] * 4


def _check(result: int, what: str) -> None:
    if result != 0:
        # Read and cleared: ctypes keeps one errno for every library, and the landlock
        # package takes one left over as its own call's failure.
        err = ctypes.set_errno(0)
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    _check(_libc.unshare(flags), "unshare")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    def c(text):
        return text.encode() if text is not None else None

    _check(_libc.mount(c(source), c(target), c(fstype), flags, c(data) or None), f"mount {target}")


def detach(target: str) -> None:
    _check(_libc.umount2(target.encode(), _MNT_DETACH), f"umount {target}")


def pivot_root(new_root: str, put_old: str) -> None:
    number = _PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise OSError(0, f"pivot_root: not known on {platform.machine()}")
    _check(_libc.syscall(number, new_root.encode(), put_old.encode()), "pivot_root")


def die_with_parent(signal: int) -> None:
    _check(_libc.prctl(_PR_SET_PDEATHSIG, signal, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")


def no_new_privileges() -> None:
    _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")


def drop_bounding_set(last_cap: int) -> None:
    """No capability can come back (while CAP_SETPCAP still allows the drop; without it,
    unprivileged, there is none to drop)."""
    for cap in range(last_cap + 1):
        if _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.set_errno(0) != 1:
            raise OSError(f"prctl(PR_CAPBSET_DROP, {cap}) failed")


def clear_capabilities() -> None:
    """The ambient, effective, permitted and inheritable sets emptied."""
    _check(_libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "ambient caps")
    header = (ctypes.c_uint32 * 2)(_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # two {effective, permitted, inheritable}, all zero
    _check(_libc.capset(header, data), "capset")


def last_capability() -> int:
    """The highest capability number this kernel knows (read before /proc is out of reach)."""
    with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as f:
        return int(f.read())
