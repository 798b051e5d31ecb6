"""Model-written code (the ``run_code`` action) run where it can reach the data only through
the environment of its query's cutoff, and nothing else: not the harness, not another
process, not a file outside, not more of the machine than its limits.

Threat model. The code is hostile and determined: whatever the import allow-list says, it
reaches any module (``get_events.__globals__['__builtins__']['__import__']``), the C library
(ctypes) and any system call, and it may run as root's child on a machine where the CLI runs
as root (CI does). Each attack class, and what stops it:

- **Reading the answers** (the release, the data root, any file): a root of its own. The
  worker (:mod:`gdelt_forecast.agents.sandbox_worker`) enters new mount, PID, IPC, UTS and
  network namespaces and pivots into a read-only tmpfs holding only the Python
  installation's library folders and this package (read-only bind mounts), ``/dev/null``,
  and its private folder: nothing else exists there to be opened, listed or stat'ed.
  Landlock (through the ``landlock`` package) allows reading only those folders again. The
  environment (release, DuckDB connection, cutoff) exists only in the harness: the code
  gets MIRAI's functions as stubs that send each call down a pipe
  (:mod:`gdelt_forecast.agents.sandbox_api`), run here by
  :func:`gdelt_forecast.environment.call_tool` on the environment opened at the cutoff.
- **Privilege**: none. A root harness's worker switches to its own uid and gid
  (``sandbox.uid``, nobody) after building its root; an unprivileged harness's worker
  builds it in a user namespace that maps only its own ids. Then every capability is
  dropped (bounding, ambient, effective, permitted) and ``no_new_privs`` is set.
- **System calls**: an allow-list (:mod:`gdelt_forecast.agents.sandbox_filter`, seccomp
  through ``pyseccomp``) of what the interpreter and the allowed libraries need; everything
  else is EPERM, so no process, thread or program starts, no socket opens, and no call
  reaches another process or the kernel's administration.
- **Killing, hanging or crashing the harness**: signals to any process are refused (kill,
  fcntl's F_SETOWN/F_SETSIG, pidfd), and other processes are not in its PID namespace. The
  protocol is its own: newline-delimited JSON on two pipes of its own (not stdout), each
  message at most the output limit long, parsed and validated by pydantic (a nested
  bracket line or a wrong type is a ValidationError), numbered with its action so that a
  forged or left-over message cannot pass for another action's; anything else kills the
  worker and ends that action with an error observation, and the next action starts a
  fresh one. This side writes without blocking and reads with the action's deadline, and
  caps an action's calls (``sandbox.calls``). An API call of the wrong types or sizes is a
  ValueError in MIRAI's words from ``call_tool``, and any exception a call raises is the
  call's error observation, never the harness's.
- **Files outside, changed**: not there to be named (the private root), and chmod, chown,
  utime, setxattr and the rest are not on the allow-list, also for its own files; nor are
  the ways to truncate a file that Landlock before ABI 3 does not see (``truncate`` by
  name, O_TRUNC without write access, ``openat2``).
- **Other processes blocked or starved**: fanotify, inotify, SysV and POSIX IPC, memfd,
  pipes, scheduling and priority calls, adjtimex, sethostname, klogctl: off the list.
- **Exhausting the machine**: address space (``memory_mb``, which memfd and pipes, refused,
  cannot sidestep), one file's size (``file_mb``) and all files' (``disk_mb``, the size of
  the private folder's tmpfs), their number (``inodes``, its inodes), ``files``
  descriptors, one thread, no processes; this side kills the worker when an action passes
  its wall time or its CPU seconds (threads and C loops included), and the worker's
  RLIMIT_CPU is a backstop. Output is cut inside.
- **The harness's own work**: call arguments have size limits (in the tool schemas), and
  each call has a deadline (``agents.call_s``) past which DuckDB is interrupted and the call
  is an error.
- **Leftovers**: the private folder is a tmpfs of the worker's mount namespace, IPC objects
  cannot be made, and the worker is killed with its process group at the end. When the
  harness itself is killed, the worker's watcher (outside its PID namespace, holding the
  end of a pipe only the harness writes) kills it, and the next start removes the
  folders of harnesses that are gone: only real folders of its user with the mode it gives
  them (another user may plant anything under such a name), never through a link, at any
  depth without recursing (each folder's subfolders are moved up first), every call naming
  one entry in an open folder; what it cannot remove is logged and left, never raised.

Where the platform refuses namespaces (a container's seccomp profile, AppArmor's
restriction of user namespaces), the worker says so in its layers (run.json's
``sandbox_layers``) and goes on with the rest: no capabilities, rlimits, Landlock and the
allow-list still hold, so files outside still cannot be read or changed and other processes
not reached; but it runs under the harness's uid (as root: root without capabilities),
sees the names, sizes and times of files outside (Landlock does not cover stat; so also
whether a host pid exists, ``/proc/<pid>``), and writes its folder on the real disk. The
harness looks at that folder five times a second and kills the worker when it passes a
limit: every entry (file, folder, link) is one of ``inodes`` and its own blocks count
towards ``disk_mb``; folders nest at most 64 deep. The look is iterative, follows no link
and stops at the first limit passed; between two looks the code may write what it can in
0.2 s. A worker whose harness was killed ends only when its CPU backstop runs out, filling
its folder meanwhile if it likes: the next start's sweep gives each folder 30 s. The tests
run every attack as root, as an unprivileged user and with namespaces refused
(tests/agents/test_attacks.py, tests/agents/test_sandbox_fallback.py).

Issue 48 found in that mode: 1,500 nested folders raised RecursionError in the harness's
recursive walk and removal (the disk check, ``close``, and the sweep at every later start,
so that no sandbox started on the machine again; another user could plant such a folder
under a dead harness's name); 58,000 folders and 32,000 links with long targets wrote about 350 MB
against ``disk_mb=64``, the check counting only files; ``getsid`` and ``getpgid`` told
whether a host pid exists (now allowed only of itself); and before Landlock ABI 3
truncation of files outside was not controlled. Each is closed as written above.

Landlock's guarantees grow with its ABI, which the worker reads at start and records in
the layers (``landlock-abi-N``): ABI 1 (Linux 5.13) controls reading, writing and
executing files, listing folders, and making and removing entries (and refuses every move
or link of a file into another folder); ABI 2 (5.19) allows such moves within the rules
(``REFER``); ABI 3 (6.2) controls truncation; ABI 4 (6.7) TCP bind and connect; ABI 5
(6.10) ioctl on devices; ABI 6 (6.12) scopes abstract unix sockets and signals to the
sandbox's own domain. The worker handles every file right of the running ABI (through
ABI 5); network and scoping it leaves to the allow-list (no socket, no signal to another
process). Below ABI 3 the layers also say ``landlock-no-truncate``: there the allow-list
alone refuses truncation of files outside.

Not prevented: the code reads the Python installation (public code, no data), uses its CPU
and memory up to the limits, sees its own process's memory (the API's answers so far, which
it was given anyway), and a kernel bug; where namespaces are refused, what is written above
(the names outside, host pids by their ``/proc`` names, 0.2 s of writing past a limit).
Linux with Landlock (5.13+) and libseccomp is needed; where either is missing the sandbox
refuses to start and says which.
"""

from __future__ import annotations

import json
import math
import os
import re
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from gdelt_forecast.agents.sandbox_folder import DIR, over_limits, remove
from gdelt_forecast.ground.config import SandboxConfig
from gdelt_forecast.ground.errors import StageError

# A message from the sandbox longer than its output limit plus this is not one of ours.
_SLACK = 1 << 20
_START_S = 60.0
_POLL_S = 0.2  # how often an action's CPU time is looked at
_TICKS = os.sysconf("SC_CLK_TCK")
_PREFIX = "gdelt-forecast-sandbox-"
# A stale folder's worker may still be filling it (without namespaces it outlives its harness).
_SWEEP_S = 30.0


class SandboxError(StageError):
    """The sandbox cannot start on this machine (no Landlock, no libseccomp, ...)."""


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    seq: int


class _Call(_Message):
    op: Literal["call"]
    name: str = Field(max_length=64)
    arguments: dict[str, Any]


class _Done(_Message):
    op: Literal["done"]
    output: str
    error: str | None = Field(max_length=4000)
    dropped: int = Field(ge=0)


class _Ready(_Message):
    op: Literal["ready"]
    layers: list[str]
    modules: list[str]
    pid: int = Field(gt=0)


# Parsed from the bytes as they came, by pydantic's parser, whose depth limit turns a line
# of nested brackets into a ValidationError instead of a RecursionError.
_MESSAGE = TypeAdapter(Annotated[_Call | _Done | _Ready, Field(discriminator="op")])


@dataclass
class Outcome:
    """What one action printed (and the repr of its last expression), its error, what was
    cut, and whether the process was killed (and so its variables lost)."""

    output: str = ""
    error: str | None = None
    dropped: int = 0
    killed: str | None = None
    calls: int = 0
    seconds: float = 0.0


@dataclass
class Sandbox:
    """One agent run's sandbox: ``run(code)`` per action; ``serve(name, arguments)`` answers
    the code's API calls (JSON in, JSON out); whatever it raises is the call's error."""

    limits: SandboxConfig
    serve: Callable[[str, dict], Any]
    apis: dict[str, list[str]]  # function name -> its parameters, in order
    layers: list[str] = field(default_factory=list)
    modules: list[str] = field(default_factory=list)
    _proc: subprocess.Popen | None = None
    _pid: int = 0  # the process that runs the code (in its own PID namespace, a child)
    _folder: str | None = None
    _to: int = -1
    _from: int = -1
    _lifeline: int = -1
    _buffer: bytes = b""
    _seq: int = 0
    _checked: float = 0.0  # when its CPU time and disk were last looked at

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def run(self, code: str) -> Outcome:
        started = time.monotonic()
        if self._proc is None:
            self._start()
        outcome = Outcome()
        # Starting has its own limit (_START_S): on a loaded machine it can take longer than an
        # action's wall, which would stop a first action that had not begun.
        deadline = time.monotonic() + self.limits.wall_s
        cpu_limit = self._cpu_s() + self.limits.cpu_s
        self._seq += 1
        try:
            self._write({"op": "run", "seq": self._seq, "code": code}, deadline)
            while True:
                message = self._read(deadline, cpu_limit)
                if message.seq != self._seq:
                    raise _Broken(f"a message out of turn (action {message.seq})")
                if isinstance(message, _Call):
                    outcome.calls += 1
                    if outcome.calls > self.limits.calls:
                        raise _Broken(f"the action made more than {self.limits.calls} calls")
                    self._write(self._answer(message), deadline)
                    continue
                if not isinstance(message, _Done):
                    raise _Broken(f"an unexpected message ({message.op})")
                if len(message.output) > self.limits.output_chars:
                    raise _Broken("its output is longer than the sandbox keeps")
                outcome.output, outcome.error = message.output, message.error
                outcome.dropped = message.dropped
                break
        except _Broken as exc:
            outcome.killed = str(exc)
            outcome.error = (
                f"the sandbox process was stopped: {exc}; the next action starts a fresh "
                "one, without the variables of earlier actions"
            )
            self.close()  # the next action starts a fresh one
        outcome.seconds = time.monotonic() - started
        return outcome

    def _answer(self, message: _Call) -> dict:
        if message.name not in self.apis:
            return {"error": f"{message.name} is not among this run's functions"}
        try:
            return {"value": self.serve(message.name, message.arguments)}
        except Exception as exc:  # noqa: BLE001  hostile arguments: any failure is the code's
            return {"error": str(exc) or type(exc).__name__}

    def _start(self) -> None:
        _remove_stale()
        self._folder = tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-")
        os.chmod(self._folder, 0o755)  # the mount point of the worker's new root
        child_reads, self._to = os.pipe()
        self._from, child_writes = os.pipe()
        lifeline, self._lifeline = os.pipe()  # never written: its end closes when we die
        os.set_blocking(self._to, False)  # a worker that stops reading cannot block us
        env = {
            "PATH": "/nonexistent",
            "HOME": self._folder,
            "TMPDIR": self._folder,
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
            # One thread: the process may start no other (the BLAS libraries' pools).
            **dict.fromkeys(("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"), "1"),
        }
        worker = "gdelt_forecast.agents.sandbox_worker"
        fds = (child_reads, child_writes, lifeline)
        self._proc = subprocess.Popen(
            [sys.executable, "-I", "-m", worker, *map(str, fds)],
            cwd=self._folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            pass_fds=fds,
            start_new_session=True,
        )
        self._pid = self._proc.pid
        for fd in fds:
            os.close(fd)
        limits = self.limits
        setup = {
            "folder": self._folder,
            **limits.model_dump(include={"memory_mb", "file_mb", "disk_mb", "inodes", "files",
                                         "wall_s", "output_chars", "modules", "uid"}),
            "gid": limits.uid,
            "cpu_total_s": limits.cpu_s * 50,  # the worker's own backstop; we watch each action
            "apis": self.apis,
        }  # fmt: skip
        try:
            self._write(setup, time.monotonic() + _START_S)
            ready = self._read(time.monotonic() + _START_S, float("inf"))
            if not isinstance(ready, _Ready):
                raise _Broken(f"it answered {ready.op}, not ready")
        except _Broken as exc:
            err = self._proc.stderr.read().decode(errors="replace")[-2000:] if self._proc else ""
            self.close()
            raise SandboxError(f"the sandbox did not start ({exc}): {err.strip()}") from None
        self.layers, self.modules, self._pid = ready.layers, ready.modules, ready.pid

    def _write(self, message: dict, deadline: float) -> None:
        data = (json.dumps(message) + "\n").encode()
        with selectors.DefaultSelector() as sel:
            sel.register(self._to, selectors.EVENT_WRITE)
            while data:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _Broken(f"it stopped reading for {self.limits.wall_s:g} s")
                if sel.select(left):
                    try:
                        data = data[os.write(self._to, data) :]
                    except BlockingIOError:
                        continue
                    except OSError as exc:
                        raise _Broken(f"it went away ({exc})") from None

    def _read(self, deadline: float, cpu_limit: float) -> _Message:
        limit = self.limits.output_chars * 6 + _SLACK  # JSON may escape a char as 6 bytes
        with selectors.DefaultSelector() as sel:
            sel.register(self._from, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                if len(self._buffer) > limit:
                    raise _Broken("it sent more than any answer holds")
                now = time.monotonic()
                if now >= deadline:
                    raise _Broken(f"the action ran past its {self.limits.wall_s:g} s")
                if now >= self._checked + _POLL_S:  # also while it sends message after message
                    self._checked = now
                    if self._cpu_s() > cpu_limit:
                        raise _Broken(f"the action used more than {self.limits.cpu_s} CPU s")
                    if over := self._over_disk():
                        raise _Broken(over)
                if not sel.select(min(deadline - now, _POLL_S)):
                    continue
                chunk = os.read(self._from, 1 << 16)
                if not chunk:
                    raise _Broken(f"it ended ({self._exit_reason()})")
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        if len(line) > limit:
            raise _Broken("it sent more than any answer holds")
        try:
            return _MESSAGE.validate_json(line)
        except ValidationError as exc:
            raise _Broken(f"it sent a message that is not ours ({_first(exc)})") from None

    def _cpu_s(self) -> float:
        """The process's CPU seconds so far (user and system, all its threads)."""
        try:
            with open(f"/proc/{self._pid}/stat", encoding="ascii") as stat:
                fields = stat.read().rpartition(")")[2].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / _TICKS

    def _over_disk(self) -> str | None:
        """Which limit its folder passed, where no tmpfs of its own bounds it (no private
        root); None while it holds less."""
        if "private-root" in self.layers or not self._folder:
            return None
        try:
            top = os.open(self._folder, DIR)
        except OSError:  # not there to hold anything
            return None
        return over_limits(top, self.limits)

    def _exit_reason(self) -> str:
        try:
            code = self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "no exit status"
        if code > 128:  # the watcher outside the PID namespace passes on its child's end
            code = 128 - code
        return f"killed by signal {-code}" if code < 0 else f"exit status {code}"

    def close(self) -> None:
        if self._proc is not None:
            with suppress(ProcessLookupError):  # the worker and its child: one session
                os.killpg(self._proc.pid, signal.SIGKILL)
            self._proc.wait()
            self._proc.stderr.close()
            self._proc = None
        for fd in (self._to, self._from, self._lifeline):
            if fd >= 0:
                with suppress(OSError):
                    os.close(fd)
        self._to = self._from = self._lifeline = -1
        self._buffer = b""
        if self._folder:
            remove(self._folder, math.inf)  # its worker is dead: nothing can grow it
            self._folder = None


def _first(exc: ValidationError) -> str:
    error = exc.errors()[0]
    return f"{'.'.join(map(str, error['loc'])) or 'message'}: {error['msg']}"[:200]


def _remove_stale() -> None:
    """Folders of sandboxes whose harness was killed (its pid is in the name), of those
    :func:`~gdelt_forecast.agents.sandbox_folder.remove` finds the harness made."""
    base = tempfile.gettempdir()
    for name in os.listdir(base):
        if (found := re.match(rf"{_PREFIX}(\d+)-", name)) and not _alive(int(found[1])):
            remove(os.path.join(base, name), time.monotonic() + _SWEEP_S)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _Broken(Exception):
    """The sandbox process broke the protocol, overran or died; it is killed."""
