"""A warm interpreter for the DAG tests' snippets (``python()`` in conftest.py): it imports
Airflow and builds the in-process execution API that ``dag.test()`` serves its tasks from
(6 s of CPU in every fresh interpreter), then forks a child for each snippet, so that each
still starts from this state alone, as a fresh ``python -c`` would, and nothing one snippet
loads or changes reaches the next. Airflow's own executors fork from a warm parent the same
way.

Protocol: a JSON line on stdin, ``{code, env, out, err, timeout}``; the child runs ``code``
as ``__main__`` with ``env`` as its environment and its stdout and stderr in the files
``out`` and ``err``, and is killed after ``timeout`` s (SIGALRM); then a line ``EXIT
<status>`` on stdout, the status as subprocess gives it. ``READY`` once warm.
"""

import atexit
import json
import os
import signal
import sys
import traceback

sys.path[0] = ""  # as under `python -c`: the working folder, not this file's

from airflow.dag_processing.dagbag import DagBag  # noqa: E402, F401
from airflow.sdk.execution_time.supervisor import in_process_api_server  # noqa: E402

_app = in_process_api_server().app  # built once here; each child reuses it
print("READY", flush=True)


def child(job: dict) -> int:
    os.environ.clear()
    os.environ.update(job["env"])
    for fd, path in ((1, job["out"]), (2, job["err"])):
        os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
    signal.alarm(job["timeout"])
    sys.argv = ["-c"]
    try:
        exec(compile(job["code"], "<string>", "exec"), {"__name__": "__main__"})
        status = 0
    except SystemExit as exc:
        status = exc.code or 0
        if not isinstance(status, int):
            print(status, file=sys.stderr)
            status = 1
    except BaseException:
        traceback.print_exc()
        status = 1
    atexit._run_exitfuncs()
    return status


for line in sys.stdin:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = child(job)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    print("EXIT", os.waitstatus_to_exitcode(status), flush=True)
