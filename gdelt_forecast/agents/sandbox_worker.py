"""The sandbox process: runs an agent's ``run_code`` actions, one after another, with the
variables of earlier actions kept (as MIRAI's agents keep theirs). Started by
:class:`gdelt_forecast.agents.sandbox.Sandbox`, never by hand; the threat model is there.

Its arguments are three fds: the pipe it reads, the pipe it writes (newline-delimited JSON,
each message numbered with its action) and the harness's lifeline. It locks itself in
before it reads the first action, in this order: namespaces (and a fork: the child is PID
1 of the new PID namespace, the parent stays outside to watch the lifeline), a private
read-only root, its own uid where the harness is root, no capabilities, no_new_privs,
resource limits, Landlock, the seccomp allow-list. What the code may import is an
allow-list checked by the ``__import__`` of its builtins; that is for clear errors, not the
wall.
"""

from __future__ import annotations

import ast
import builtins
import importlib.util
import io
import json
import os
import resource
import select
import signal
import sys
import sysconfig
import traceback
import warnings
from typing import Any

from gdelt_forecast.agents import sandbox_api, sandbox_filter, sandbox_os


class _Channel:
    """Newline-delimited JSON on two pipes; every message carries the number of the action
    it belongs to, so that one the code forges or leaves behind cannot pass for the next."""

    def __init__(self, inp: int, out: int) -> None:
        self.inp, self.out, self.buffer = inp, out, b""
        self.seq = 0
        self.wait_s: float | None = None  # how long an answer may take (the action's wall)

    def send(self, message: dict) -> None:
        data = (json.dumps({**message, "seq": self.seq}) + "\n").encode()
        while data:
            data = data[os.write(self.out, data) :]

    def receive(self) -> dict:
        while b"\n" not in self.buffer:
            if self.wait_s is not None and not select.select([self.inp], [], [], self.wait_s)[0]:
                raise TimeoutError(f"no answer in {self.wait_s:g} s")
            chunk = os.read(self.inp, 1 << 16)
            if not chunk:
                sys.exit(0)  # the parent went away
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
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


def _lock_in(setup: dict, lifeline: int, channel: tuple[int, int]) -> tuple[list[str], int]:
    """Everything that must hold before the first action; returns the layers in force and
    the process's id as the parent sees it (for its CPU time)."""
    import pyseccomp  # imports ctypes.util, which the lock would no longer let it read

    folder, layers, pid = setup["folder"], ["process"], os.getpid()
    readable = _readable()
    last_cap = sandbox_os.last_capability()
    spaces = _namespaces()
    if spaces:
        layers.append("namespaces")
        pid = _pid_namespace(lifeline, channel)
        try:
            _new_root(folder, setup, readable)
            layers.append("private-root")
        except OSError as exc:  # a user namespace without mounts (AppArmor's restriction)
            print(f"no private root: {exc}", file=sys.stderr)
    os.close(lifeline)
    os.chdir(folder)
    sandbox_os.drop_bounding_set(last_cap)
    if "private-root" in layers and not spaces & sandbox_os.CLONE_NEWUSER and os.geteuid() == 0:
        os.setgroups([])  # a real root becomes the sandbox's own user: no capability left
        os.setresgid(setup["gid"], setup["gid"], setup["gid"])
        os.setresuid(setup["uid"], setup["uid"], setup["uid"])
        layers.append("unprivileged-user")
    sandbox_os.clear_capabilities()
    sandbox_os.no_new_privileges()
    layers.append("no-capabilities")
    _limits(setup)
    layers.append("rlimits")
    layers += _landlock(folder, readable)
    sandbox_filter.install(pyseccomp)
    layers.append("seccomp-allow-list")
    return layers, pid


_SPACES = (
    sandbox_os.CLONE_NEWNS | sandbox_os.CLONE_NEWPID | sandbox_os.CLONE_NEWIPC
    | sandbox_os.CLONE_NEWUTS | sandbox_os.CLONE_NEWNET
)  # fmt: skip


def _namespaces() -> int:
    """New mount, PID, IPC, UTS and network namespaces: as root directly, else (or where
    root may not) inside a new user namespace that maps only the process's own ids. 0 where
    the platform allows neither (a container's seccomp profile, a kernel setting)."""
    uid, gid = os.geteuid(), os.getegid()
    for flags in ([_SPACES] if uid == 0 else []) + [_SPACES | sandbox_os.CLONE_NEWUSER]:
        try:
            sandbox_os.unshare(flags)
        except OSError:
            continue
        if flags & sandbox_os.CLONE_NEWUSER:
            for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                               ("gid_map", f"{gid} {gid} 1")):  # fmt: skip
                with open(f"/proc/self/{name}", "w", encoding="ascii") as f:
                    f.write(text)
        return flags
    return 0


def _pid_namespace(lifeline: int, channel: tuple[int, int]) -> int:
    """Fork the process that becomes PID 1 of the new PID namespace and runs the actions;
    this one stays outside it to watch: when the harness dies (its end of ``lifeline``
    closes) it kills the child, and it exits with the child's status. The child dies with
    it too (PR_SET_PDEATHSIG). Returns, in the child, its pid as the harness sees it."""
    child = os.fork()
    if child == 0:
        sandbox_os.die_with_parent(signal.SIGKILL)
        with open("/proc/self/status", encoding="ascii") as status:  # the harness's /proc
            line = next(x for x in status if x.startswith("NSpid:"))
        return int(line.split()[1])
    for fd in channel:
        os.close(fd)
    pidfd = os.pidfd_open(child)
    if lifeline in select.select([lifeline, pidfd], [], [])[0]:
        os.kill(child, signal.SIGKILL)
    code = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
    os._exit(128 - code if code < 0 else code)


def _new_root(folder: str, setup: dict, readable: list[str]) -> None:
    """A new root, a small read-only tmpfs holding only the Python installation (bind
    mounts, read-only) and /dev/null, with the private folder at its own path: a tmpfs of
    ``disk_mb`` and ``inodes`` in all, the one writable place. The old root is detached:
    the release, the data root, other users' files are not there to be named, let alone
    changed."""
    sandbox_os.mount(None, "/", None, sandbox_os.MS_REC | sandbox_os.MS_PRIVATE)
    safe = sandbox_os.MS_NOSUID | sandbox_os.MS_NODEV
    sandbox_os.mount("sandbox-root", folder, "tmpfs", safe, "size=1m,mode=0755")
    for path in readable:
        target = folder + path
        os.makedirs(target, exist_ok=True)
        sandbox_os.mount(path, target, None, sandbox_os.MS_BIND | sandbox_os.MS_REC)
        sandbox_os.mount(None, target, None,
                         sandbox_os.MS_REMOUNT | sandbox_os.MS_BIND | sandbox_os.MS_RDONLY
                         | safe | _kept_flags(path))  # fmt: skip
    os.makedirs(folder + "/dev")
    open(folder + "/dev/null", "w").close()
    sandbox_os.mount("/dev/null", folder + "/dev/null", None, sandbox_os.MS_BIND)
    work = folder + folder
    os.makedirs(work)
    size = f"size={setup['disk_mb']}m,nr_inodes={setup['inodes']},mode=0700"
    owner = (setup["uid"], setup["gid"]) if os.geteuid() == 0 else (os.geteuid(), os.getegid())
    sandbox_os.mount("sandbox-work", work, "tmpfs", safe, f"{size},uid={owner[0]},gid={owner[1]}")
    os.makedirs(folder + "/.old")
    sandbox_os.pivot_root(folder, folder + "/.old")
    os.chdir("/")
    sandbox_os.detach("/.old")
    os.rmdir("/.old")
    sandbox_os.mount(None, "/", None, sandbox_os.MS_REMOUNT | sandbox_os.MS_RDONLY | safe)


def _readable() -> list[str]:
    """The Python installation's library folders and this package's, outermost only."""
    import gdelt_forecast

    paths = {sysconfig.get_path(p) for p in ("stdlib", "platstdlib", "purelib", "platlib")}
    paths.add(os.path.dirname(gdelt_forecast.__file__))
    kept: list[str] = []
    for path in sorted(os.path.realpath(p) for p in paths if p and os.path.isdir(p)):
        if not any(path.startswith(k + "/") for k in kept):
            kept.append(path)
    return kept


def _kept_flags(path: str) -> int:
    """A read-only remount in a user namespace must keep the flags its mount was locked
    with (noexec and the atime mode)."""
    have = os.statvfs(path).f_flag
    pairs = ((os.ST_NOEXEC, sandbox_os.MS_NOEXEC), (os.ST_NOATIME, sandbox_os.MS_NOATIME),
             (os.ST_NODIRATIME, sandbox_os.MS_NODIRATIME),
             (os.ST_RELATIME, sandbox_os.MS_RELATIME))  # fmt: skip
    return sum(ms for st, ms in pairs if have & st)


def _limits(setup: dict) -> None:
    mb = 1024 * 1024
    for limit, value in (
        (resource.RLIMIT_AS, setup["memory_mb"] * mb),
        (resource.RLIMIT_FSIZE, setup["file_mb"] * mb),
        (resource.RLIMIT_NOFILE, setup["files"]),
        (resource.RLIMIT_CPU, setup["cpu_total_s"]),  # a backstop: the harness watches each
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_NPROC, 0),
        (resource.RLIMIT_MEMLOCK, 0),
        (resource.RLIMIT_MSGQUEUE, 0),
    ):
        hard = resource.getrlimit(limit)[1]
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(limit, (value, value))


def _landlock(folder: str, readable: list[str]) -> list[str]:
    """Every file access right this kernel's Landlock knows, refused but for reading the
    installation and all in its own folder; returns its layers: ``landlock``, the ABI in
    force (run.json shows what held), and below ABI 3 (Linux 6.2) ``landlock-no-truncate``:
    Landlock does not see truncation there, and only the allow-list refuses the calls that
    would truncate a file outside (see :mod:`~gdelt_forecast.agents.sandbox_filter`)."""
    from landlock import FSAccess, Ruleset, landlock_abi_version

    read = FSAccess.READ_FILE | FSAccess.READ_DIR | FSAccess.EXECUTE
    ruleset = Ruleset()  # all the rights of this ABI (FSAccess.all)
    ruleset.allow(*readable, rules=read)
    ruleset.allow(folder)  # everything, in its own folder
    ruleset.allow("/dev/null", rules=FSAccess.READ_FILE | FSAccess.WRITE_FILE)
    ruleset.apply()
    abi = landlock_abi_version()
    return ["landlock", f"landlock-abi-{abi}"] + (["landlock-no-truncate"] if abi < 3 else [])


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
                out.write(repr(value) + "\n")  # not print: the code may have replaced stdout
    except MemoryError:
        error = "MemoryError: the action ran out of memory"
    except BaseException as exc:  # the agent's error is an observation, never our exit
        frames = traceback.extract_tb(exc.__traceback__)
        where = [f for f in frames if f.filename == "<action>"]
        line = f" (line {where[-1].lineno})" if where else ""
        error = f"{type(exc).__name__}: {str(exc)[:2000]}{line}"
    finally:
        sys.stdout, sys.stderr = saved
    return {"op": "done", "output": _text(out.value()), "dropped": out.dropped,
            "error": error and _text(error)}  # fmt: skip


def _text(text: str) -> str:
    """Lone surrogates (printable in Python, not in UTF-8 JSON) as escapes."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def main() -> None:
    inp, out, lifeline = (int(fd) for fd in sys.argv[1:4])
    channel = _Channel(inp, out)
    setup = channel.receive()
    modules = set(setup["modules"])
    # Found now, imported when the code asks (from the installation, which stays readable).
    available = [name for name in sorted(modules) if importlib.util.find_spec(name)]
    sandbox_api.connect(channel.send, channel.receive)
    layers, pid = _lock_in(setup, lifeline, (inp, out))
    safe = dict(vars(builtins))
    safe["__import__"] = _allowed_import(set(available))
    scope: dict[str, Any] = {"__builtins__": safe, "__name__": "__agent__"}
    scope.update(sandbox_api.namespace(setup["apis"]))
    channel.send({"op": "ready", "layers": layers, "modules": available, "pid": pid})
    while True:
        channel.wait_s = None  # the model may think for minutes between two actions
        request = channel.receive()
        channel.seq, channel.wait_s = request["seq"], setup["wall_s"]
        channel.send(_run(request["code"], scope, setup["output_chars"]))


if __name__ == "__main__":
    main()
