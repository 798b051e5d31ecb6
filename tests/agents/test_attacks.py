"""A determined attacker's model, through `gdelt-forecast agent --action code` against a
scripted server: each step of both demo queries is one attack on the harness, on other
processes, on files outside or on the limits, written as model code would reach for it (any
module, through the builtins of an API function). The run must finish every query; the
victims (a process, a file outside, the machine's IPC and open()s) must not notice.

Run as root (as CI does: the worker becomes its own uid) and as an unprivileged user (the
harness in a user namespace without any capability: the worker makes its own)."""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.agents.test_agent import CHN_USA, USA_RUS, call, final, play

# The machine's IPC, /dev/shm and sandbox folders are compared before and after an attack: no
# other test may run meanwhile (make test runs these after the rest).
pytestmark = pytest.mark.alone

PRE = (
    "B = get_events.__globals__['__builtins__']\n"
    "I = B['__import__'] if isinstance(B, dict) else B.__import__\n"
    "os, fcntl, ctypes, threading, sys = (I(m) for m in "
    "('os', 'fcntl', 'ctypes', 'threading', 'sys'))\n"
    "SEND = get_events.__globals__['_send']\n"
    "PROTOCOL = SEND.__self__.out\n"
    "def tried(*steps):\n"
    "    out = []\n"
    "    for step in steps:\n"
    "        try:\n"
    "            step()\n"
    "            out.append('allowed')\n"
    "        except OSError as e:\n"
    "            out.append(e.errno)\n"
    "    print(out)\n"
)
EPERM, ENOENT, EACCES, EROFS, ENOSYS = 1, 2, 13, 30, 38
# x86_64 numbers of calls the allow-list refuses, with arguments that would do harm if it
# let them through ({victim} and {harness} are other processes' pids).
SYSCALLS = {
    "fanotify_init": (300, 4, 0), "inotify_init1": (294, 0), "syslog": (103, 3, 0, 0),
    "adjtimex": (159, 0), "sethostname": (170, 0, 0), "shmget": (29, 0, 1 << 20, 0o1600),
    "msgget": (68, 0, 0o1600), "semget": (64, 0, 1, 0o1600), "memfd_create": (319, 0, 0),
    "mq_open": (240, 0, 0, 0, 0), "io_uring_setup": (425, 1, 0), "bpf": (321, 0, 0, 0),
    "perf_event_open": (298, 0, 0, 0, 0, 0), "keyctl": (250, 0), "userfaultfd": (323, 0),
    "ptrace": (101, 16, "{victim}"), "process_vm_readv": (310, "{victim}", 0, 0, 0, 0, 0),
    "unshare": (272, 0x20000000), "setns": (308, 0, 0), "mount": (165, 0, 0, 0, 0, 0),
    "personality": (135, 0x0040000), "kill": (62, "{victim}", 9),
    "kill_harness": (62, "{harness}", 9), "tgkill": (234, "{victim}", "{victim}", 9),
    "pidfd_open": (434, "{victim}", 0), "fork": (57,), "clone": (56, 17, 0, 0, 0, 0),
    "setsid": (112,), "setpgid": (109, 0, 0), "setpriority": (141, 0, "{victim}", 19),
    "sched_setaffinity": (203, "{victim}", 8, 0), "sched_setscheduler": (144, "{victim}", 5, 0),
    "sched_setattr": (314, "{victim}", 0, 0), "ioprio_set": (251, 1, "{victim}", 0),
    "prlimit64_set": (302, 0, 7, 1, 0), "setrlimit": (160, 7, 0), "socket": (41, 2, 1, 0),
    "socketpair": (53, 1, 1, 0, 0), "pipe2": (293, 0, 0), "eventfd2": (290, 0, 0),
    "execve": (59, 0, 0, 0), "chroot": (161, 0), "init_module": (175, 0, 0, 0),
    "settimeofday": (164, 0, 0), "clock_settime": (227, 0, 0), "setuid": (105, 0),
    "capset": (126, 0, 0), "open_by_handle_at": (304, 0, 0, 0), "fchmodat": (268, -100, 0, 0),
    "fchownat": (260, -100, 0, 0, 0, 0), "utimensat": (280, -100, 0, 0, 0),
    "setxattr": (188, 0, 0, 0, 0, 0), "chmod": (90, 0, 0), "fchmod": (91, 0, 0),
    "mknod": (133, 0, 0, 0), "iopl": (172, 3), "modify_ldt": (154, 0, 0, 0), "vhangup": (153,),
    "getsid": (124, "{victim}"), "getpgid": (121, "{victim}"), "truncate": (76, 0, 0),
    "openat_read_trunc": (257, -100, 0, 0o1000), "openat2": (437, -100, 0, 0, 0),
}  # fmt: skip

# (name, code, what its step must show): "killed" (the sandbox stopped, the run goes on),
# an error's beginning, or a check of the printed output.
ATTACKS = [
    ("plain mistake", "print(count_events('2025-08-01'))",
     "ValueError: Input 'date_range' must be a DateRange object, but received type <class 'str'>"),
    ("a list for a range", "print(count_events(date_range=[1, 2]))",
     "ValueError: Input 'date_range' must be a DateRange object, but received type <class 'list'>"),
    ("kill the harness", PRE + "fd = os.open('x', os.O_RDWR | os.O_CREAT)\n"
     "tried(lambda: os.pipe(), lambda: fcntl.fcntl(fd, fcntl.F_SETOWN, {harness}),\n"
     "      lambda: fcntl.fcntl(fd, 10, 9), lambda: fcntl.fcntl(fd, fcntl.F_SETOWN, {victim}),\n"
     "      lambda: fcntl.fcntl(fd, 1026, 0x80000001))",
     lambda out: out == f"{[EPERM] * 5}\n"),
    ("hang the harness", PRE + "for i in range(20000):\n"
     "    SEND({{'op': 'call', 'name': 'count_events', 'arguments': {{}}}})", "killed"),
    ("forge a list", PRE + "os.write(PROTOCOL, b'[1, 2]\\n')", "killed"),
    ("forge nesting", PRE + "os.write(PROTOCOL, b'[' * 200000 + b'\\n')",
     "killed"),
    ("forge a done", PRE + "os.write(PROTOCOL, b'{{\"op\": \"done\", \"seq\": 0, \"output\": "
     "\"\", \"error\": null, \"dropped\": \"x\"}}\\n')", "killed"),
    ("forge a call", PRE + "SEND({{'op': 'call', 'name': 'exec', 'arguments': {{'x': 1}}}})\n"
     "print(get_events.__globals__['_receive']())", lambda out: "not among" in out),
    ("files outside", PRE + "tried(lambda: os.chmod({outside!r}, 0),\n"
     "      lambda: os.chown({outside!r}, 1, 1), lambda: os.utime({outside!r}, (0, 0)),\n"
     "      lambda: os.setxattr({outside!r}, 'user.x', b'1'), lambda: os.chmod({release!r}, 0),\n"
     "      lambda: os.stat({outside!r}), lambda: os.stat({release!r}),\n"
     "      lambda: os.chmod('.', 0o777), lambda: os.utime('x', (0, 0)),\n"
     "      lambda: os.setxattr('x', 'user.x', b'1'), lambda: os.chown('x', 0, 0),\n"
     "      lambda: os.chmod('/', 0o777), lambda: os.mkdir('/new'))",
     {True: lambda out: out == f"{[EPERM] * 5 + [ENOENT] * 2 + [EPERM] * 5 + [EROFS]}\n",
      # Without a root of its own it sees what is outside (Landlock does not cover stat).
      False: lambda out: out == f"{[EPERM] * 5 + ['allowed'] * 2 + [EPERM] * 5 + [EACCES]}\n"}),
    ("other processes", PRE + "tried(lambda: os.setpriority(os.PRIO_PROCESS, {victim}, 19),\n"
     "      lambda: os.sched_setaffinity({victim}, {{0}}),\n"
     "      lambda: os.sched_setscheduler({victim}, os.SCHED_IDLE, os.sched_param(0)),\n"
     "      lambda: os.kill({harness}, 9), lambda: os.kill({victim}, 9),\n"
     "      lambda: os.setpriority(os.PRIO_USER, 0, 19), lambda: os.killpg(0, 9))",
     lambda out: out == f"{[EPERM] * 7}\n"),
    ("the allow-list", PRE + "libc = ctypes.CDLL(None, use_errno=True)\nrefused = {{}}\n"
     "for name, (nr, *args) in {syscalls}.items():\n"
     "    ok = libc.syscall(nr, *args) >= 0\n"
     "    refused[name] = 'allowed' if ok else ctypes.get_errno()\n"
     "refused['clone3'] = libc.syscall(435, 0, 0) >= 0 or ctypes.get_errno()\n"
     "refused['getpid'] = libc.syscall(39)\nprint(refused)",
     lambda out: {**json.loads(out.replace("'", '"')), "getpid": 0}
     == {**dict.fromkeys(SYSCALLS, EPERM), "clone3": ENOSYS, "getpid": 0}),
    ("limits", PRE + "out = {{}}\n"
     "try:\n    os.memfd_create('m')\nexcept OSError as e:\n    out['memfd'] = e.errno\n"
     "try:\n    os.pipe()\nexcept OSError as e:\n    out['pipe'] = e.errno\n"
     "n = 0\ntry:\n    for i in range(1000):\n"
     "        threading.Thread(target=I('time').sleep, args=(5,)).start()\n        n += 1\n"
     "except RuntimeError:\n    out['threads'] = n\n"
     "fds = []\ntry:\n    for i in range(20000):\n"
     "        fds.append(os.open('/dev/null', os.O_RDONLY))\n"
     "except OSError as e:\n    out['fds'] = len(fds)\n"
     "for fd in fds:\n    os.close(fd)\n"
     "written = 0\ntry:\n    for i in range(1000):\n"
     "        fd = os.open(f'f{{i}}', os.O_WRONLY | os.O_CREAT)\n"
     "        for _ in range(4):\n            written += os.write(fd, b'x' * (1 << 20))\n"
     "        os.close(fd)\nexcept OSError as e:\n    out['disk'] = (e.errno, written)\n"
     "try:\n    bytearray(3 * 1024 ** 3)\nexcept MemoryError:\n    out['memory'] = 'refused'\n"
     "print(out)", {True: "limits", False: "killed"}),  # by the harness's watch on its folder
    ("unbounded work", "print(get_news_articles(text_description='x ' * 450000))",
     "ValueError: Input 'text_description' is 900,000 characters long"),
    ("a long list", "print(get_events(head_entities=[ISOCode('USA')] * 5000))",
     "ValueError: Input 'head_entities' holds 5,000 items"),
    ("forged done, desync", PRE + "SEND({{'op': 'done', 'output': 'forged\\n', 'dropped': 0, "
     "'error': None}})\nprint('A-real')", lambda out: out == "forged\n"),
    ("the next action", "print('B')", "killed"),  # the real done of A came out of turn
    ("replaced stdout", PRE + "sys.stdout = sys.stderr = None\nprint('lost')\n'kept'",
     lambda out: out == "'kept'\n"),
    ("after all that", "print(40 + 2)", lambda out: out == "42\n"),
]  # fmt: skip
LIMITS = dict(disk_mb=8, file_mb=4, files=64, memory_mb=1024)


def _modes() -> list:
    root = pytest.param(
        [], id="root", marks=pytest.mark.skipif(os.geteuid() != 0, reason="needs root")
    )
    userns = [] if os.geteuid() != 0 else ["unshare", "--user", "--map-user=65534",
                                           "--map-group=65534", "--"]  # fmt: skip
    usable = os.geteuid() != 0 or (
        shutil.which("unshare") and subprocess.run([*userns, "true"]).returncode == 0
    )
    unusable = pytest.mark.skipif(not usable, reason="no user namespaces")
    # As in a container whose seccomp profile refuses unshare: the layers without namespaces.
    blocked = [sys.executable, "-c", "import errno, os, sys, pyseccomp as s\n"
               "f = s.SyscallFilter(s.ALLOW)\nf.add_rule(s.ERRNO(errno.EPERM), 'unshare')\n"
               "f.load()\nos.execv(sys.argv[1], sys.argv[1:])"]  # fmt: skip
    return [root, pytest.param(userns, id="unprivileged", marks=unusable),
            pytest.param(blocked, id="no-namespaces")]  # fmt: skip


@pytest.fixture
def victim():
    proc = subprocess.Popen(["sleep", "600"])
    before = os.getpriority(os.PRIO_PROCESS, proc.pid), os.sched_getaffinity(proc.pid)
    yield proc
    alive = proc.poll() is None
    after = os.getpriority(os.PRIO_PROCESS, proc.pid), os.sched_getaffinity(proc.pid)
    policy = os.sched_getscheduler(proc.pid)
    proc.kill()
    proc.wait()
    assert alive and after == before and policy == os.SCHED_OTHER


@pytest.fixture
def shared():
    """A folder the harness may write as any user (tmp_path's parents are root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="attack-", dir="/tmp"))
    os.chmod(folder, 0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def outside(tmp_path):
    path = tmp_path / "outside.txt"
    path.write_text("keep me")
    os.setxattr(path, "user.kept", b"1")
    return path


def _state(path: Path) -> tuple:
    st = path.stat()
    return st.st_mode, st.st_uid, st.st_gid, st.st_mtime_ns, st.st_atime_ns, os.listxattr(path)


def _ipc() -> tuple:
    lists = [Path(f"/proc/sysvipc/{k}").read_text() for k in ("shm", "msg", "sem")]
    return *lists, sorted(os.listdir("/dev/shm"))


def _sandbox_folders() -> list[str]:
    return sorted(n for n in os.listdir(tempfile.gettempdir()) if "gdelt-forecast-sandbox" in n)


class _Opener(threading.Thread):
    """Opens a file outside every 20 ms and keeps the slowest open."""

    def __init__(self, path: Path):
        super().__init__(daemon=True)
        self.path, self.slowest, self.stop = path, 0.0, threading.Event()

    def run(self):
        while not self.stop.wait(0.02):
            started = time.monotonic()
            with open(self.path, "rb"):
                self.slowest = max(self.slowest, time.monotonic() - started)


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the attacks use x86_64 numbers")
@pytest.mark.parametrize("prefix", _modes())
def test_no_attack_stops_the_run_or_reaches_outside(
    prefix, server, release, shared, victim, outside
):
    copy = shared / "release"
    shutil.copytree(release, copy)
    pids = {}

    def turns(subject, obj, messages, turn):
        if turn < len(ATTACKS):
            code = ATTACKS[turn][1]
            if code.startswith(PRE):
                code = PRE + code[len(PRE):].format(
                    harness=pids["harness"], victim=victim.pid, outside=str(outside),
                    release=str(copy), syscalls=_syscalls(victim.pid, pids["harness"]))  # fmt: skip
            return call("run_code", {"code": code}, turn)
        return final({"02": ["020"]})

    server.player = play(turns)
    ipc, files, folders = _ipc(), _state(outside), _sandbox_folders()
    release_mode = copy.stat().st_mode
    opener = _Opener(outside)
    opener.start()
    sets = [f"llm.base_url={server.url}", "llm.model=scripted-model", "llm.backoff_s=0",
            "llm.timeout_s=120", "llm.max_retries=0", "agents.max_invalid=100",
            f"agents.max_steps={len(ATTACKS) + 2}", "agents.sandbox.wall_s=8",
            "agents.sandbox.cpu_s=6",
            *(f"agents.sandbox.{k}={v}" for k, v in LIMITS.items())]  # fmt: skip
    cli = [*prefix, sys.executable, "-m", "gdelt_forecast.cli", "agent", "--release",
           str(copy), "--data-root", str(shared), "--split", "subset", "--action", "code",
           "--json", *(a for s in sets for a in ("--set", s))]  # fmt: skip
    proc = subprocess.Popen(cli, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pids["harness"] = proc.pid
    try:
        out, err = proc.communicate(timeout=600)
    finally:
        proc.kill()
        opener.stop.set()
    assert proc.returncode == 0, err[-3000:]
    summary = json.loads(out)
    assert {k: n for k, n in summary["end_states"].items() if n} == {"Final Answer": 2}
    steps = pq.read_table(Path(summary["path"]) / "steps.parquet").to_pylist()
    meta = json.loads((Path(summary["path"]) / "run.json").read_text())
    layers = set(meta["sandbox_layers"])
    private = "private-root" in layers
    assert private == (prefix[:1] != [sys.executable])
    for query in (USA_RUS, CHN_USA):
        mine = sorted((s for s in steps if s["query_id"] == query), key=lambda s: s["step"])
        assert len(mine) == len(ATTACKS) + 1
        for (name, _, want), step in zip(ATTACKS, mine, strict=False):
            _expect(name, want[private] if isinstance(want, dict) else want, step)
    assert {"no-capabilities", "landlock", "seccomp-allow-list"} <= layers
    assert ("namespaces" in layers) == private
    assert ("unprivileged-user" in layers) == (not prefix and os.geteuid() == 0)
    assert _state(outside) == files and outside.read_text() == "keep me"
    assert copy.stat().st_mode == release_mode
    assert _ipc() == ipc and _sandbox_folders() == folders
    assert opener.slowest < 1.0


def _expect(name: str, want, step: dict) -> None:
    shown = f"{name}: {step['observation'][:500]!r} / {step['error']!r}"
    if want == "killed":
        assert "the sandbox process was stopped" in (step["error"] or ""), shown
    elif want == "limits":
        out = eval(step["observation"])  # a dict the attack printed
        assert out["memfd"] == out["pipe"] == EPERM, shown
        assert out["threads"] == 0 and out["fds"] < LIMITS["files"], shown
        errno, written = out["disk"]
        assert written <= LIMITS["disk_mb"] << 20 and errno in (27, 28), shown  # EFBIG, ENOSPC
        assert out["memory"] == "refused", shown
    elif callable(want):
        assert step["error"] is None and want(step["observation"]), shown
    else:
        assert (step["error"] or "").startswith(want), shown


def _syscalls(victim: int, harness: int) -> str:
    def arg(a):
        return int(str(a).format(victim=victim, harness=harness))

    return repr({name: tuple(arg(a) for a in call_) for name, call_ in SYSCALLS.items()})


def test_a_killed_harness_leaves_no_process_and_its_folder_goes_at_the_next_start(
    server, release, tmp_path
):
    server.player = play(
        lambda s, o, m, t: call("run_code", {"code": "x = 1\nwhile True:\n    x += 1"}, t)
    )
    sets = [f"llm.base_url={server.url}", "llm.model=scripted-model", "llm.max_retries=0",
            "agents.sandbox.wall_s=300", "agents.sandbox.cpu_s=300"]  # fmt: skip
    cli = [sys.executable, "-m", "gdelt_forecast.cli", "agent", "--release", str(release),
           "--data-root", str(tmp_path), "--action", "code", "--split", "subset",
           *(a for s in sets for a in ("--set", s))]  # fmt: skip
    proc = subprocess.Popen(cli, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers, deadline = [], time.monotonic() + 120
    while time.monotonic() < deadline and len(workers) < 2:  # a loop in each query's sandbox
        time.sleep(0.3)
        workers = [p for p in _descendants(proc.pid) if _busy(p)]
    assert workers, "no sandbox started"
    folders = [n for n in _sandbox_folders() if re.match(rf".*-{proc.pid}-", n)]
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_running(p) for p in workers):
        time.sleep(0.1)
    assert not any(_running(p) for p in workers)  # the watcher saw its lifeline close
    assert folders and set(folders) <= set(_sandbox_folders())  # left behind, until:
    from gdelt_forecast.agents.sandbox import Sandbox
    from gdelt_forecast.ground.config import SandboxConfig

    with Sandbox(SandboxConfig(), lambda n, a: None, {}) as box:
        assert box.run("print(1)").output == "1\n"
    assert not set(folders) & set(_sandbox_folders())


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            kids = (task / "children").read_text().split() if (task / "children").exists() else []
            found += map(int, kids)
            todo += map(int, kids)
    return found


def _busy(pid: int) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return False
    return fields[0] == "R" or int(fields[11]) > 50  # running, or half a second of CPU


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False
