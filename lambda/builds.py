"""Sample job code for a long job on container workers: a workspace's ``run_tests`` (claim mode).

The build queue's workers (``constructs-fifo worker``, handler ``builds.run_tests``) run a job that
takes longer than the queue's visibility timeout: the worker's heartbeats keep its records hidden and
its claim held while it runs. :func:`run_tests` stands for the test run: it waits the payload's
``durationSeconds`` in short steps, and between them looks at ``context.cancelled``, which the worker
sets when the run went stale (another worker holds the claim, the receipt handle expired) or its
worker is stopping past its grace period: then it stops at once, as a real run would kill its test
process, and its result is never written (the claim's fence refuses it).

Its effect is its result: claim mode stores the returned JSON with the job's SUCCEEDED claim, once,
whatever number of runs it took (a run on a worker that was killed leaves no SUCCEEDED claim, and its
job runs again from the start, counted as an attempt). For demos the payload may ask for failure
(:mod:`simulation`).
"""

from __future__ import annotations

import time
from typing import Any

from simulation import simulate_failure

from constructs_fifo.runtime import Job

__all__ = ["DURATION_KEY", "PASSED", "STARTED_KEY", "STEP_SECONDS", "RunCancelledError", "run_tests"]

#: The payload key of how long the test run takes, in seconds.
DURATION_KEY = "durationSeconds"
#: The key of :func:`run_tests`'s result naming the job whose tests passed.
PASSED = "passed"
#: The key of the result's start of the run that finished (epoch ms): a group's order is visible in it.
STARTED_KEY = "startedAtMs"
#: How often a run looks at ``context.cancelled``: a stale run stops within this.
STEP_SECONDS = 0.25
_GROUP_PREFIX = "ws#"


class RunCancelledError(RuntimeError):
    """The worker cancelled the run (stale, or stopping): it stopped without a result."""


def run_tests(job: Job, context: Any) -> dict[str, Any]:
    """Run ``job``'s tests for ``payload.durationSeconds`` seconds; return the result claim mode stores.

    Raises
    ------
    RunCancelledError
        ``context.cancelled`` was set while it ran (the worker records nothing for the run).
    PermanentJobError, SimulatedFailureError
        The payload asked for it (:mod:`simulation`).
    """
    simulate_failure(job)
    payload = job.payload if isinstance(job.payload, dict) else {}
    duration_seconds = float(payload.get(DURATION_KEY, 0))
    cancelled = getattr(context, "cancelled", None)
    started_at_ms = int(time.time() * 1000)
    deadline = time.monotonic() + duration_seconds
    while (left := deadline - time.monotonic()) > 0:
        if cancelled is not None and cancelled.is_set():
            raise RunCancelledError(
                f"job {job.id!r}: the run was cancelled (it went stale, or its worker stopped past its grace)"
            )
        time.sleep(min(STEP_SECONDS, left))
    return {
        PASSED: job.id,
        "workspaceId": job.group.removeprefix(_GROUP_PREFIX),
        DURATION_KEY: duration_seconds,
        "attempt": job.attempt,
        STARTED_KEY: started_at_ms,
    }
