"""The sandbox where the platform refuses namespaces (issue 48): its folder lies on the real
disk, so the harness bounds it (bytes, entries, depth) and removes it, and the next start
sweeps the folders of harnesses that are gone, whatever a sandbox left there and whatever
else lies beside them; and what the allow-list refuses there (probing host pids, truncating
files outside whatever Landlock's ABI)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from gdelt_forecast.agents import sandbox as sandbox_module
from gdelt_forecast.agents.sandbox import Sandbox
from gdelt_forecast.ground.config import SandboxConfig
from tests.agents.test_sandbox import OS

# As in a container whose seccomp profile refuses unshare (as tests/agents/test_attacks.py).
NO_NAMESPACES = [sys.executable, "-c", "import errno, os, sys, pyseccomp as s\n"
                 "f = s.SyscallFilter(s.ALLOW)\nf.add_rule(s.ERRNO(errno.EPERM), 'unshare')\n"
                 "f.load()\nos.execv(sys.argv[1], sys.argv[1:])"]  # fmt: skip
# A harness of its own, for one action, that says how it went.
HARNESS = """
import json, sys
from gdelt_forecast.agents.sandbox import Sandbox
from gdelt_forecast.ground.config import SandboxConfig
with Sandbox(SandboxConfig(**json.loads(sys.argv[1])), lambda n, a: None, {}) as box:
    outcome = box.run(sys.argv[2])
print(json.dumps({"layers": box.layers, "killed": outcome.killed, "output": outcome.output,
                  "error": outcome.error}))
"""
SLEEP = f"{OS}['__builtins__']['__import__']('time').sleep(6)\n"  # for the harness to look
DEPTH = 1500
EPERM = 1


@pytest.fixture
def base(monkeypatch):
    """The temporary folder of the harness (this process's and the fallback harness's)."""
    folder = Path(tempfile.mkdtemp(prefix="sandbox-fallback-"))
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    yield folder
    subprocess.run(["rm", "-rf", "--one-file-system", str(folder)], check=True)  # no recursion


@pytest.fixture
def outside(tmp_path):
    """A folder beside the sandbox's, with a file that must survive."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "keep.txt").write_text("keep me")
    return folder


def fallback(base: Path, code: str, **limits) -> dict:
    """One action in a sandbox without namespaces; its folder must be gone afterwards."""
    limits = {"wall_s": 20, "cpu_s": 10, **limits}
    proc = subprocess.run(
        [*NO_NAMESPACES, sys.executable, "-c", HARNESS, json.dumps(limits), code],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(base)},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    assert "private-root" not in result["layers"] and "landlock" in result["layers"]
    assert os.listdir(base) == []
    return result


def deep(folder: Path, levels: int = DEPTH, link_to: Path | None = None) -> None:
    """``levels`` nested folders in ``folder`` (one open folder at a time: no recursion here),
    with a link to ``link_to`` at the bottom and halfway."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for level in range(levels):
            if link_to is not None and level in (levels // 2, levels - 1):
                os.symlink(link_to, "out", dir_fd=fd)
            os.mkdir("d", dir_fd=fd)
            below = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = below
    finally:
        os.close(fd)


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def stale(base: Path, suffix: str = "xyz", mode: int = 0o755) -> Path:
    """A folder named as a harness that is gone names its sandbox's."""
    folder = base / f"gdelt-forecast-sandbox-{dead_pid()}-{suffix}"
    folder.mkdir()
    folder.chmod(mode)
    return folder


def test_a_deep_tree_stops_the_worker_and_is_removed(base):
    code = f"mkdir, chdir = {OS}['mkdir'], {OS}['chdir']\nfor _ in range({DEPTH}):\n" \
           "    mkdir('d')\n    chdir('d')\n" + SLEEP  # fmt: skip
    result = fallback(base, code)
    assert "nested more than" in result["killed"], result


def test_close_removes_a_deep_tree_without_following_links(base, outside):
    box = Sandbox(SandboxConfig(), lambda n, a: None, {})
    box._folder = tempfile.mkdtemp(prefix=f"gdelt-forecast-sandbox-{os.getpid()}-")
    deep(Path(box._folder), link_to=outside)
    os.symlink(outside, Path(box._folder) / "out")
    folder = box._folder
    box.close()
    assert not os.path.lexists(folder)
    assert (outside / "keep.txt").read_text() == "keep me"


def test_the_next_start_removes_a_dead_harness_folder_without_following_links(base, outside):
    folders = [stale(base, "deep"), stale(base, "xyz", 0o700)]
    deep(folders[0], link_to=outside)
    (folders[1] / "file").write_text("left behind")
    os.symlink(outside, folders[1] / "out")
    os.symlink(outside / "keep.txt", folders[1] / "file-out")
    sandbox_module._remove_stale()
    assert os.listdir(base) == []
    assert sorted(os.listdir(outside)) == ["keep.txt"]
    assert (outside / "keep.txt").read_text() == "keep me"


def test_the_sweep_leaves_what_the_harness_did_not_make(base, outside):
    pid = dead_pid()
    link = base / f"gdelt-forecast-sandbox-{pid}-link"
    link.symlink_to(outside, target_is_directory=True)
    planted = base / f"gdelt-forecast-sandbox-{pid}-file"
    planted.write_text("a file, not a folder")
    shared = stale(base, "shared", 0o777)  # not as mkdtemp and the harness leave theirs
    (shared / "theirs").write_text("theirs")
    kept = [link.name, planted.name, shared.name]
    if os.geteuid() == 0:
        other = stale(base, "other")
        (other / "theirs").write_text("theirs")
        os.chown(other, 65534, 65534)  # another user's, planted under a dead harness's name
        kept.append(other.name)
    alive = base / f"gdelt-forecast-sandbox-{os.getpid()}-alive"
    alive.mkdir(mode=0o755)
    kept.append(alive.name)
    gone = stale(base, "gone")
    sandbox_module._remove_stale()
    assert sorted(os.listdir(base)) == sorted(kept)
    assert not gone.exists()
    assert (shared / "theirs").exists() and (outside / "keep.txt").read_text() == "keep me"


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("chattr"), reason="needs root and chattr")
def test_the_sweep_goes_on_past_a_folder_it_cannot_remove(base, caplog):
    stuck = stale(base, "stuck")
    (stuck / "immutable").write_text("x")
    if subprocess.run(["chattr", "+i", str(stuck / "immutable")]).returncode != 0:
        pytest.skip("the file system has no immutable flag")
    try:
        deep(stale(base, "deep"))
        gone = stale(base, "gone")
        sandbox_module._remove_stale()
        assert os.listdir(base) == [stuck.name] and not gone.exists()
        assert stuck.name in caplog.text
    finally:
        subprocess.run(["chattr", "-i", str(stuck / "immutable")], check=True)


def test_an_unprivileged_harness_removes_folders_the_code_shut_with_mode_0(base):
    # An unprivileged harness's worker writes as its user: what it shut, its user must open.
    os.chmod(base, 0o777)
    child = os.fork()
    if child == 0:  # pragma: no cover  (reported by its exit status)
        code = 3
        try:
            if os.geteuid() == 0:
                os.setresgid(65534, 65534, 65534)
                os.setresuid(65534, 65534, 65534)
            box = Sandbox(SandboxConfig(), lambda n, a: None, {})
            folder = box._folder = tempfile.mkdtemp(prefix=f"gdelt-forecast-sandbox-{os.getpid()}-")
            os.makedirs(f"{folder}/a/b/c/d")
            for path, mode in (("a/b/c/d", 0), ("a/b/c", 0o500), ("a/b", 0o100), ("a", 0)):
                os.chmod(f"{folder}/{path}", mode)
            box.close()
            code = int(os.path.lexists(folder))
        finally:
            os._exit(code)
    assert os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) == 0
    assert os.listdir(base) == []


def test_empty_folders_and_long_links_count_against_disk_mb(base):
    probe = base / "probe"
    probe.mkdir()
    charged = probe.lstat().st_blocks
    probe.rmdir()
    if not charged:
        pytest.skip("the file system charges nothing for a folder (tmpfs)")
    code = f"mkdir, symlink = {OS}['mkdir'], {OS}['symlink']\nfor i in range(1000):\n" \
           "    mkdir(f'd{i}')\n    symlink('x' * 1000, f'l{i}')\n" + SLEEP  # fmt: skip
    result = fallback(base, code, disk_mb=4)
    assert result["killed"] == "its files hold more than 4 MB", result


def test_too_many_entries_stop_the_worker(base):
    limit = 10_000  # agents.sandbox.inodes's default
    code = f"for i in range({limit + 50}):\n    open(f'f{{i}}', 'w').close()\n" + SLEEP
    result = fallback(base, code)
    assert result["killed"] == f"its folder holds more than {limit} files, folders and links"
    assert SandboxConfig().inodes == limit


def test_no_host_pid_can_be_probed(base):
    code = (
        "out = []\n"
        f"for probe in ({OS}['getsid'], {OS}['getpgid']):\n"
        f"    for pid in ({os.getpid()}, {dead_pid()}):\n"
        "        try:\n            probe(pid)\n            out.append('allowed')\n"
        "        except OSError as e:\n            out.append(e.errno)\n"
        "    out.append(probe(0) > 0)\n"
        "print(out)"
    )
    result = fallback(base, code)
    assert result["output"] == f"{[EPERM, EPERM, True] * 2}\n", result


def test_truncation_is_refused_whatever_the_landlock_abi(base, outside):
    # Landlock controls truncate only from ABI 3; the allow-list refuses the ways around it.
    victim = outside / "keep.txt"
    code = (
        f"os = {OS}\nout = []\n"
        "open('mine', 'w').write('mine')\n"
        f"for step in (lambda: os['truncate']({str(victim)!r}, 0),\n"
        f"             lambda: os['open']({str(victim)!r}, os['O_RDONLY'] | os['O_TRUNC']),\n"
        "             lambda: os['truncate']('mine', 0),\n"
        "             lambda: os['open']('mine', os['O_RDONLY'] | os['O_TRUNC'])):\n"
        "    try:\n        step()\n        out.append('allowed')\n"
        "    except OSError as e:\n        out.append(e.errno)\n"
        "fd = os['open']('mine', os['O_RDWR'])\nos['ftruncate'](fd, 2)\nos['close'](fd)\n"
        "print(out, open('mine').read())"
    )
    result = fallback(base, code)
    assert result["output"] == f"{[EPERM] * 4} mi\n", result
    assert victim.read_text() == "keep me"


def test_the_layers_say_the_landlock_abi(base):
    from landlock import landlock_abi_version

    abi = landlock_abi_version()
    layers = fallback(base, "print(1)")["layers"]
    assert f"landlock-abi-{abi}" in layers
    assert ("landlock-no-truncate" in layers) == (abi < 3)
