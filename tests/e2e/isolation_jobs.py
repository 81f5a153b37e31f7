"""The job code of ``test_worker_isolation_e2e.py``, run by real ``constructs-fifo worker`` processes
(``CONSTRUCTS_FIFO_HANDLER=isolation_jobs.handle``, this directory on ``PYTHONPATH``).

Every run appends one line to ``<dir>/<job id>.runs`` (``<pid> <start, epoch ms>``), so the test, and
the other jobs, see which runs started in which process. The payload's ``kind`` says what a job does:

- ``healthy``: waits ``seconds``, returns its result;
- ``poison``: kills its own process (SIGKILL) on every run; on its first run only once a healthy job
  runs in the same process, so that its crash takes a slot-mate's run down with it;
- ``release``: waits for ``<job id>.release`` (the test creates it), then returns;
- ``child``: on its first run starts a child process (``sleep``), writes its pid to ``<job id>.child``
  and waits for the child, ignoring ``context.cancelled`` (a test run that only the worker can stop);
  a later run writes to ``<job id>.orphan`` whether that child was still alive when it started;
- ``fenced``: writes its run's fencing token (``context.fence``) to the test's table through
  :mod:`constructs_fifo.worker.fence` and appends ``<run> <token> written|refused`` to
  ``<job id>.fence``; its first run first waits for ``<job id>.go`` (the test creates it once another
  worker took the job over), ignoring ``context.cancelled``: a stale run that writes late.

Every wait is bounded (:data:`WAIT_LIMIT_SECONDS`), so a broken worker fails the test instead of
hanging it. The directory is ``$ISOLATION_E2E_DIR``, the table ``$ISOLATION_E2E_FENCE_TABLE``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from constructs_fifo.runtime import Job
from constructs_fifo.worker.fence import dynamodb_condition, dynamodb_set

__all__ = [
    "ENV_DIR",
    "ENV_FENCE_TABLE",
    "FENCE_KEY",
    "WAIT_LIMIT_SECONDS",
    "alive",
    "handle",
    "runs",
]

ENV_DIR: Final = "ISOLATION_E2E_DIR"
ENV_FENCE_TABLE: Final = "ISOLATION_E2E_FENCE_TABLE"
#: The fence table's partition key (a job id).
FENCE_KEY: Final = "id"
#: The bound of every wait of a job.
WAIT_LIMIT_SECONDS: Final = 120.0
_POLL_SECONDS: Final = 0.05
#: How long a poison job's first run waits for a slot-mate's run before it crashes anyway.
_SLOT_MATE_SECONDS: Final = 15.0


def runs(root: Path, job_id: str) -> list[tuple[int, int]]:
    """The runs of ``job_id`` so far: ``(pid, start epoch ms)`` each, in order."""
    path = root / f"{job_id}.runs"
    if not path.exists():
        return []
    return [
        (int(pid), int(ms)) for pid, ms in (line.split() for line in path.read_text().splitlines() if line)
    ]


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] not in {"Z", "X"}


def handle(job: Job, context: Any) -> dict[str, Any]:
    """Run ``job`` as its payload's ``kind`` says (module docstring); return its result."""
    root = Path(os.environ[ENV_DIR])
    started_ms = int(time.time() * 1000)
    with (root / f"{job.id}.runs").open("a") as out:
        out.write(f"{os.getpid()} {started_ms}\n")
    run = len(runs(root, job.id))
    payload = job.payload if isinstance(job.payload, dict) else {}
    kind = payload.get("kind", "healthy")
    if kind == "poison":
        if run == 1:
            _wait(lambda: _slot_mate_running(root, job.id), limit_seconds=_SLOT_MATE_SECONDS)
        time.sleep(0.3)  # the slot-mate is in the middle of its run
        os.kill(os.getpid(), signal.SIGKILL)
    elif kind == "healthy":
        time.sleep(float(payload.get("seconds", 0)))
    elif kind == "release":
        _wait(lambda: (root / f"{job.id}.release").exists() or context.cancelled.is_set())
    elif kind == "child":
        _child(root, job, context, run)
    elif kind == "fenced":
        if run == 1:
            _wait((root / f"{job.id}.go").exists)  # context.cancelled ignored: a stale run
        _fenced_write(root, job, context, run)
    return {"jobId": job.id, "attempt": job.attempt, "startedAtMs": started_ms, "pid": os.getpid()}


def _child(root: Path, job: Job, context: Any, run: int) -> None:
    pid_file = root / f"{job.id}.child"
    if run == 1:
        child = subprocess.Popen(["sleep", "300"])
        pid_file.write_text(str(child.pid))
        child.wait(WAIT_LIMIT_SECONDS)  # context.cancelled ignored: only the worker can stop the child
        return
    (root / f"{job.id}.orphan").write_text(str(alive(int(pid_file.read_text()))))


def _fenced_write(root: Path, job: Job, context: Any, run: int) -> None:
    import boto3  # the job's own client, from the worker's environment

    dynamodb = boto3.client("dynamodb")
    token = int(context.fence)
    try:
        dynamodb.put_item(
            TableName=os.environ[ENV_FENCE_TABLE],
            Item={FENCE_KEY: {"S": job.id}, "run": {"N": str(run)}, **dynamodb_set(token)},
            **dynamodb_condition(token),
        )
        outcome = "written"
    except dynamodb.exceptions.ConditionalCheckFailedException:
        outcome = "refused"
    with (root / f"{job.id}.fence").open("a") as out:
        out.write(f"{run} {token} {outcome}\n")


def _slot_mate_running(root: Path, job_id: str) -> bool:
    """Whether another job's run started in this process (so one runs beside this one)."""
    me = os.getpid()
    return any(
        path.name != f"{job_id}.runs"
        and any(pid == me for pid, _ in runs(root, path.name.removesuffix(".runs")))
        for path in root.glob("*.runs")
    )


def _wait(condition: Callable[[], bool], *, limit_seconds: float = WAIT_LIMIT_SECONDS) -> None:
    deadline = time.monotonic() + limit_seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(_POLL_SECONDS)
