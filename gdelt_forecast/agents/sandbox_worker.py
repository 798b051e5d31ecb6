"""The sandbox process: runs an agent's ``run_code`` actions, one after another, with the
variables of earlier actions kept (as MIRAI's agents keep theirs). Started by
:class:`gdelt_forecast.agents.sandbox.Sandbox`, never by hand; the threat model is there.

It speaks newline-delimited JSON on two pipes (their fds are its arguments) and locks
itself in before it reads the first action: resource limits set, the file system closed by
Landlock but for the Python installation (read) and its private folder (read and write),
and system calls that reach other processes, the network or new programs refused by a
seccomp filter. What the code may import is an allow-list checked by the ``__import__`` of
its builtins; that is for clear errors, not the wall.
"""

from __future__ import annotations

import ast
import builtins
import errno
import importlib.util
import io
import json
import os
import resource
import sys
import sysconfig
import traceback
import warnings
from typing import Any

from gdelt_forecast.agents import sandbox_api


class _Channel:
    def __init__(self, inp: int, out: int) -> None:
        self.inp = os.fdopen(inp, "r", encoding="utf-8")
        self.out = os.fdopen(out, "w", encoding="utf-8")

    def send(self, message: dict) -> None:
        self.out.write(json.dumps(message) + "\n")
        self.out.flush()

    def receive(self) -> dict:
        line = self.inp.readline()
        if not line:
            sys.exit(0)  # the parent went away
        return json.loads(line)


class _Bounded(io.TextIOBase):
    """Printed output, kept up to ``limit`` characters and counted past it."""

    def __init__(self, limit: int) -> None:
        self.limit, self.parts, self.kept, self.dropped = limit, [], 0, 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        room = self.limit - self.kept
        self.parts.append(text[:room])
        self.kept += min(len(text), room)
        self.dropped += max(0, len(text) - room)
        return len(text)

    def value(self) -> str:
        return "".join(self.parts)


def _allowed_import(modules: set[str]):
    real = builtins.__import__

    def guarded(name, globals=None, locals=None, fromlist=(), level=0):
        if level or name.split(".")[0] not in modules:
            raise ImportError(f"import of {name!r} is not allowed in this sandbox")
        return real(name, globals, locals, fromlist, level)

    return guarded


def _lock_in(setup: dict) -> list[str]:
    """Everything that must hold before the first action; returns the layers in force."""
    folder = setup["folder"]
    os.chdir(folder)
    mb = 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (setup["memory_mb"] * mb,) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (setup["file_mb"] * mb,) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    import pyseccomp  # imports ctypes.util, which the lock would no longer let it read

    _landlock(folder)
    _seccomp(pyseccomp)
    return ["process", "rlimits", "landlock", "seccomp"]


def _landlock(folder: str) -> None:
    from landlock import FSAccess, Ruleset

    read = FSAccess.READ_FILE | FSAccess.READ_DIR | FSAccess.EXECUTE
    ruleset = Ruleset()
    paths = {sysconfig.get_path(p) for p in ("stdlib", "platstdlib", "purelib", "platlib")}
    ruleset.allow(*sorted(p for p in paths if p and os.path.isdir(p)), rules=read)
    ruleset.allow(folder)  # everything, in its own folder
    ruleset.allow("/dev/null", rules=FSAccess.READ_FILE | FSAccess.WRITE_FILE)
    ruleset.apply()


# Refused with EPERM: whatever starts a program or a process, reaches another process, the
# network or the kernel's administration. clone is refused unless it makes a thread.
_REFUSED = (
    "execve", "execveat", "fork", "vfork", "socket", "socketpair", "connect", "bind",
    "listen", "accept", "accept4", "ptrace", "process_vm_readv", "process_vm_writev",
    "kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_open",
    "pidfd_send_signal", "pidfd_getfd", "setrlimit", "mount", "umount2", "pivot_root",
    "chroot", "unshare", "setns", "bpf", "perf_event_open", "keyctl", "add_key",
    "request_key", "userfaultfd",
    "io_uring_setup", "init_module", "finit_module", "delete_module", "kexec_load",
    "reboot", "swapon", "swapoff", "setuid", "setgid", "setreuid", "setregid", "setresuid",
    "setresgid", "setgroups", "mknod", "mknodat", "personality", "name_to_handle_at",
    "open_by_handle_at", "memfd_secret",
)  # fmt: skip
_CLONE_THREAD = 0x00010000


def _seccomp(seccomp) -> None:
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in _REFUSED:
        try:
            rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
        except (OSError, RuntimeError, ValueError):
            continue  # a call this architecture does not have
    rules.add_rule(
        seccomp.ERRNO(errno.EPERM),
        "clone",
        seccomp.Arg(0, seccomp.MASKED_EQ, _CLONE_THREAD, 0),
    )
    # clone3 passes its flags in memory a filter cannot read: "not here" makes the C
    # library fall back to clone, which the rule above sees.
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    # Limits may be read (a null new limit), never set: root could raise its own.
    rules.add_rule(seccomp.ERRNO(errno.EPERM), "prlimit64", seccomp.Arg(2, seccomp.NE, 0))
    rules.load()


def _run(code: str, scope: dict, limit_chars: int) -> dict:
    out = _Bounded(limit_chars)
    error = None
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = out
    try:
        warnings.simplefilter("ignore")  # as MIRAI runs its agents' code: print() only
        tree = ast.parse(code, "<action>", "exec")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, "<action>", "exec"), scope)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), "<action>", "eval"), scope)
            if value is not None:
                print(repr(value))
    except MemoryError:
        error = "MemoryError: the action ran out of memory"
    except BaseException as exc:  # the agent's error is an observation, never our exit
        frames = traceback.extract_tb(exc.__traceback__)
        where = [f for f in frames if f.filename == "<action>"]
        line = f" (line {where[-1].lineno})" if where else ""
        error = f"{type(exc).__name__}: {exc}{line}"
    finally:
        sys.stdout, sys.stderr = saved
    return {"op": "done", "output": out.value(), "dropped": out.dropped, "error": error}


def main() -> None:
    channel = _Channel(int(sys.argv[1]), int(sys.argv[2]))
    setup = channel.receive()
    modules = set(setup["modules"])
    # Found now, imported when the code asks (from the installation, which stays readable).
    available = [name for name in sorted(modules) if importlib.util.find_spec(name)]
    sandbox_api.connect(channel.send, channel.receive)
    layers = _lock_in(setup)
    safe = dict(vars(builtins))
    safe["__import__"] = _allowed_import(set(available))
    scope: dict[str, Any] = {"__builtins__": safe, "__name__": "__agent__"}
    scope.update(sandbox_api.namespace(setup["apis"]))
    channel.send({"op": "ready", "layers": layers, "modules": available})
    while True:
        request = channel.receive()
        channel.send(_run(request["code"], scope, setup["output_chars"]))


if __name__ == "__main__":
    main()
