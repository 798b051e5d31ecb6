"""The sandbox's folder on the real disk, where the platform refuses namespaces (no private
tmpfs bounds it): how much it holds against the limits, and its removal. The code in the
sandbox made everything in it, so every walk here is iterative (a tree may nest past
Python's recursion limit), names each entry relative to an open folder (no path grows past
PATH_MAX) and never follows a link (the code may point one anywhere)."""

from __future__ import annotations

import errno
import itertools
import logging
import os
import stat
import time
from collections.abc import Iterator

from gdelt_forecast.ground.config import SandboxConfig

# A folder opened to list it and to name what it holds: never through a link.
DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# Deeper than any analysis nests its folders; each level the disk check walks holds two fds.
DEPTH = 64

log = logging.getLogger(__name__)


def over_limits(top: int, limits: SandboxConfig) -> str | None:
    """Which limit the open folder ``top`` passed (and closes it): every entry in it (a
    file, a folder, a link) is one of the ``inodes`` and its own blocks count towards
    ``disk_mb``, looked at without following a link; the walk is iterative, names each entry
    relative to its open folder, and stops at the first limit passed."""
    levels = [_Level(top)]
    try:
        blocks, entries = os.fstat(top).st_blocks, 0
        while levels:
            entry = next(levels[-1].listing, None)
            if entry is None:
                levels.pop().close()
                continue
            entries += 1
            if entries > limits.inodes:
                return f"its folder holds more than {limits.inodes} files, folders and links"
            try:
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(info.st_mode):
                    if len(levels) > DEPTH:
                        return f"its folders are nested more than {DEPTH} deep"
                    levels.append(_Level(os.open(entry.name, DIR, dir_fd=levels[-1].fd)))
            except OSError:  # removed or replaced since it was listed
                continue
            blocks += info.st_blocks
            if blocks * 512 > limits.disk_mb << 20:
                return f"its files hold more than {limits.disk_mb} MB"
        return None
    finally:
        for level in levels:
            level.close()


class _Level:
    """One open folder of the disk check's walk (it owns ``fd``), and its listing."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        try:
            self.listing = os.scandir(fd)
        except OSError:
            os.close(fd)
            raise

    def close(self) -> None:
        self.listing.close()
        os.close(self.fd)


def remove(path: str, deadline: float) -> None:
    """The sandbox folder ``path`` and all it holds, where the harness made it: a real
    folder (not a link) of this user with the mode the harness gives its folders (another
    user may have put anything under such a name). Whatever keeps it (a file that cannot be
    removed, a tree still growing past ``deadline``) is logged, never raised: a later
    start's sweep tries again."""
    try:
        parent = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            _remove_ours(parent, os.path.basename(path), deadline)
        finally:
            os.close(parent)
    except Exception as exc:  # noqa: BLE001  whatever a sandbox left must not stop a start
        log.warning("the sandbox folder %s is left behind: %s", path, exc)


def _remove_ours(parent: int, name: str, deadline: float) -> None:
    try:
        top = os.open(name, DIR, dir_fd=parent)
    except OSError:  # a link, a file or another user's folder: not one the harness made
        return
    try:
        info = os.fstat(top)
        if info.st_uid != os.geteuid() or stat.S_IMODE(info.st_mode) not in (0o700, 0o755):
            return  # mkdtemp's mode, and the one the harness sets at once
        _empty(top, deadline)
    finally:
        os.close(top)
    os.rmdir(name, dir_fd=parent)


def _empty(top: int, deadline: float) -> None:
    """Remove all that the open folder ``top`` holds, at any depth, without recursing: the
    subfolders of each folder in it are first moved up into it (a rename within one file
    system), so the walk holds two folders open, names each entry relative to an open
    folder (no path grows past PATH_MAX), follows no link, and cannot leave ``top`` even
    while a worker still moves things around in it."""
    fresh = (f".moved-{n}" for n in itertools.count())
    found = True
    while found:  # what was moved up during a pass may have been missed by it
        found = False
        with os.scandir(top) as listing:
            for entry in listing:
                found = True
                _in_time(deadline)
                if entry.is_dir(follow_symlinks=False):
                    _lift(top, entry.name, fresh, deadline)
                    os.rmdir(entry.name, dir_fd=top)
                else:
                    os.unlink(entry.name, dir_fd=top)


def _lift(top: int, name: str, fresh: Iterator[str], deadline: float) -> None:
    """Move the subfolders of the folder ``name`` in ``top`` up into ``top``, and remove
    its other entries."""
    _unlock(top, name)
    folder = os.open(name, DIR, dir_fd=top)
    try:
        with os.scandir(folder) as listing:
            for entry in listing:
                _in_time(deadline)
                if not entry.is_dir(follow_symlinks=False):
                    os.unlink(entry.name, dir_fd=folder)
                    continue
                _unlock(folder, entry.name)  # a folder moving elsewhere updates its ".."
                while True:
                    try:
                        os.rename(entry.name, next(fresh), src_dir_fd=folder, dst_dir_fd=top)
                        break
                    except OSError as exc:  # a name the code chose too: the next one
                        if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR):
                            raise
    finally:
        os.close(folder)


def _in_time(deadline: float) -> None:
    if time.monotonic() > deadline:
        raise TimeoutError("it is still growing")


def _unlock(parent: int, name: str) -> None:
    """Give the folder ``name`` in ``parent`` back the permissions its removal needs (to
    list it, and to write it: an entry's removal, its own move), where the code took them
    away (mkdir's mode) and the harness, not root, has no way around them; through a handle
    that does not follow a link."""
    if os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode & 0o700 == 0o700:
        return
    handle = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                     dir_fd=parent)  # fmt: skip
    try:
        os.chmod(f"/proc/self/fd/{handle}", 0o700)
    finally:
        os.close(handle)
