"""Model-written code (the ``run_code`` action) run where it can reach the data only through
the environment of its query's cutoff.

Threat model. The code is hostile: it may try to read the release or any other file (the
answers are in there), reach the network or another process, start programs, exhaust the
machine, or ask the environment for rows on or after the cutoff. What holds it:

- **A separate process** (:mod:`gdelt_forecast.agents.sandbox_worker`) per agent run, with
  an empty environment, started in a private empty temporary folder. The environment object
  (release folder, DuckDB connection, cutoff) exists only in this process: the sandbox gets
  MIRAI's functions as stubs that send a call as JSON down a pipe and rebuild the typed
  values that come back (:mod:`gdelt_forecast.agents.sandbox_api`); this side runs the
  call with :func:`gdelt_forecast.environment.call_tool` on the environment opened at the
  cutoff, which clamps every date range to it.
- **Landlock** (the kernel's unprivileged file-system sandbox, through the ``landlock``
  package): read and execute only under the Python installation's library folders,
  everything in its own folder, nothing elsewhere, so ``/etc/passwd``, the data root and
  the release are refused (EACCES) however the path is reached.
- **seccomp** (through ``pyseccomp`` over libseccomp): ``execve``, ``fork``/``vfork``,
  ``clone`` other than for a thread, ``socket`` and the rest of the network calls,
  signals to any process, ``ptrace``, setting resource limits, mounts, namespaces, kernel
  modules and the like return EPERM, so no program starts, no connection opens (127.0.0.1
  included), no process forks, and a process that runs as root (the Python installation
  may live under ``/root``, so it keeps its user) cannot raise its own limits.
- **Resource limits**: address space (an allocation past it is a MemoryError), file size,
  no core files, no new processes. This side watches each action's wall time and the
  process's CPU time (``/proc/<pid>/stat``, threads included) and kills the process when
  either overruns (an endless loop in C code included), starting a fresh one for the next
  action; printed output is cut inside the sandbox, and a message from it longer than any
  answer is treated as an attack and kills it.
- **An import allow-list** for clear errors (``import os`` fails at once); it is not relied
  on, since a module's attributes lead to others (``().__class__.__mro__`` and friends):
  whatever they reach is still under the three layers above.

Not prevented: the code reads the Python installation (public code, no data), uses its
CPU and memory up to the limits, sees the process's own memory (the API's answers so far,
which it was given anyway), changes the scheduling priority of processes (a root process
may), and a kernel bug in Landlock or seccomp. The layers need Linux
with Landlock (5.13+) and libseccomp; where either is missing the sandbox refuses to start
and says which.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

from gdelt_forecast.config import SandboxConfig
from gdelt_forecast.errors import StageError

# A message from the sandbox longer than its output limit plus this is not one of ours.
_SLACK = 1 << 20
_START_S = 60.0
_POLL_S = 0.2  # how often an action's CPU time is looked at
_TICKS = os.sysconf("SC_CLK_TCK")


class SandboxError(StageError):
    """The sandbox cannot start on this machine (no Landlock, no libseccomp, ...)."""


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
    the code's API calls (JSON in, JSON out) and may raise ValueError for a refused call."""

    limits: SandboxConfig
    serve: Callable[[str, dict], Any]
    apis: dict[str, list[str]]  # function name -> its parameters, in order
    layers: list[str] = field(default_factory=list)
    modules: list[str] = field(default_factory=list)
    _proc: subprocess.Popen | None = None
    _folder: str | None = None
    _to: Any = None
    _from: Any = None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def run(self, code: str) -> Outcome:
        started = time.monotonic()
        if self._proc is None:
            self._start()
        outcome = Outcome()
        deadline = started + self.limits.wall_s
        cpu_limit = self._cpu_s() + self.limits.cpu_s
        try:
            self._write({"op": "run", "code": code})
            while True:
                message = self._read(deadline, cpu_limit)
                if message.get("op") == "call":
                    outcome.calls += 1
                    self._write(self._answer(message))
                    continue
                if message.get("op") != "done":
                    raise _Broken(f"an unexpected message ({str(message)[:80]})")
                outcome.output = str(message.get("output", ""))
                outcome.error = message.get("error")
                outcome.dropped = int(message.get("dropped", 0))
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

    def _answer(self, message: dict) -> dict:
        try:
            name, arguments = str(message["name"]), dict(message.get("arguments") or {})
            if name not in self.apis:
                raise ValueError(f"{name} is not among this run's functions")
            return {"value": self.serve(name, arguments)}
        except (ValueError, TypeError, KeyError) as exc:
            return {"error": str(exc)}

    def _start(self) -> None:
        self._folder = tempfile.mkdtemp(prefix="gdelt-forecast-sandbox-")
        os.chmod(self._folder, 0o700)
        child_reads, we_write = os.pipe()
        we_read, child_writes = os.pipe()
        env = {
            "PATH": "/nonexistent",
            "HOME": self._folder,
            "TMPDIR": self._folder,
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
            # One thread: the BLAS libraries' pools would count against the process limit.
            **dict.fromkeys(("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"), "1"),
        }
        worker = "gdelt_forecast.agents.sandbox_worker"
        self._proc = subprocess.Popen(
            [sys.executable, "-I", "-m", worker, str(child_reads), str(child_writes)],
            cwd=self._folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            pass_fds=(child_reads, child_writes),
            start_new_session=True,
        )
        os.close(child_reads)
        os.close(child_writes)
        self._to = os.fdopen(we_write, "w", encoding="utf-8")
        self._from = os.fdopen(we_read, "rb")
        self._write(
            {
                "folder": self._folder,
                "memory_mb": self.limits.memory_mb,
                "file_mb": self.limits.file_mb,
                "cpu_s": self.limits.cpu_s,
                "output_chars": self.limits.output_chars,
                "modules": self.limits.modules,
                "apis": self.apis,
            }
        )
        try:
            ready = self._read(time.monotonic() + _START_S, float("inf"))
        except _Broken as exc:
            err = self._proc.stderr.read().decode(errors="replace")[-2000:] if self._proc else ""
            self.close()
            raise SandboxError(f"the sandbox did not start ({exc}): {err.strip()}") from None
        self.layers, self.modules = ready["layers"], ready["modules"]

    def _write(self, message: dict) -> None:
        try:
            self._to.write(json.dumps(message) + "\n")
            self._to.flush()
        except (BrokenPipeError, OSError) as exc:
            raise _Broken(f"it went away ({exc})") from None

    def _read(self, deadline: float, cpu_limit: float) -> dict:
        limit = self.limits.output_chars * 4 + _SLACK  # JSON may escape a char as 4 bytes
        line = b""
        with selectors.DefaultSelector() as sel:
            sel.register(self._from, selectors.EVENT_READ)
            while not line.endswith(b"\n"):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _Broken(f"the action ran past its {self.limits.wall_s:g} s")
                if not sel.select(min(left, _POLL_S)):
                    if self._cpu_s() > cpu_limit:
                        raise _Broken(f"the action used more than {self.limits.cpu_s} CPU s")
                    continue
                chunk = os.read(self._from.fileno(), 1 << 16)
                if not chunk:
                    raise _Broken(f"it ended ({self._exit_reason()})")
                line += chunk
                if len(line) > limit:
                    raise _Broken("it sent more than any answer holds")
        try:
            return json.loads(line)
        except ValueError:
            raise _Broken("it sent something that is not JSON") from None

    def _cpu_s(self) -> float:
        """The process's CPU seconds so far (user and system, all its threads)."""
        try:
            with open(f"/proc/{self._proc.pid}/stat", encoding="ascii") as stat:
                fields = stat.read().rpartition(")")[2].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / _TICKS

    def _exit_reason(self) -> str:
        try:
            code = self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "no exit status"
        return f"killed by signal {-code}" if code < 0 else f"exit status {code}"

    def close(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait()
            self._proc.stderr.close()
            self._proc = None
        for end in (self._to, self._from):
            if end is not None:
                with suppress(OSError):
                    end.close()
        self._to = self._from = None
        if self._folder:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


class _Broken(Exception):
    """The sandbox process broke the protocol, overran or died; it is killed."""
