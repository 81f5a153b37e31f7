"""Sample job code: an agent's workspace, a state changed by ordered jobs (state mode).

The workspace queue runs in state mode (``mode=JobMode.STATE``, handler ``agent_worker.apply_job``):
:func:`apply_job` is the transition ``apply(job, state) -> next_state`` of one workspace (message
group ``ws#<workspaceId>``). It is pure: it makes no AWS call, holds no lock and checks no duplicate.
The runtime reads the workspace's state, calls it once per job in queue order (in ``seq`` order when
the producer sends one), and commits the result together with the record of which jobs it includes,
in one conditional write per workspace per batch; the state lives in the queue's state table and
other services read it with ``constructs_fifo.client.state_reader.GroupStateReader``.

What a workspace holds, so that order matters and shows:

- ``apply_patch`` appends ``payload["patch"]`` (default: the jobId) to ``patches``;
- ``run_tests`` records ``tested_head`` = number of patches and appends to ``test_runs``;
- ``open_pr`` appends ``{"jobId", "head", "tested"}`` to ``prs``, where ``tested`` says whether the
  tests ran on exactly the patches the PR holds;
- every job appends ``{"jobId", "type"}`` to ``activity``: the workspace's timeline, what the agent
  did in the order it did it. The transition never reads it (the runtime keeps each job single); the
  demo's verifier compares it with what was sent.

For demos the payload may ask for failure (:mod:`simulation`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simulation import SimulatedFailureError, simulate_failure

from constructs_fifo.runtime import Job, PermanentJobError

__all__ = [
    "ACTIVITY",
    "GROUP_PREFIX",
    "JOB_TYPES",
    "SimulatedFailureError",
    "apply_job",
    "workspace_id_of",
]

#: The state's timeline of applied jobs: ``[{"jobId", "type"}, ...]`` in the order they were applied.
ACTIVITY = "activity"
GROUP_PREFIX = "ws#"
JOB_TYPES = ("apply_patch", "run_tests", "open_pr")


def workspace_id_of(job: Job) -> str:
    """The workspace id of ``job``: its group without the ``ws#`` prefix.

    Raises
    ------
    PermanentJobError
        The group does not start with ``ws#`` or names no workspace.
    """
    if not job.group.startswith(GROUP_PREFIX) or len(job.group) == len(GROUP_PREFIX):
        raise PermanentJobError(
            f"job {job.id!r} has MessageGroupId {job.group!r}: the sample worker needs "
            f"'{GROUP_PREFIX}<workspaceId>'; send it with that group id."
        )
    return job.group[len(GROUP_PREFIX) :]


def apply_job(job: Job, state: Mapping[str, Any] | None) -> dict[str, Any]:
    """Return the workspace's next state: ``state`` with ``job`` applied (``state`` is not changed).

    Parameters
    ----------
    job
        The job; ``job.type`` is one of :data:`JOB_TYPES`, its group ``ws#<workspaceId>``.
    state
        The workspace's state, ``None`` before its first job.

    Raises
    ------
    PermanentJobError
        Bad group id, unknown job type, or a poison job: the job is dead at once.
    SimulatedFailureError
        Transient (the payload asked for it): the runtime retries the job with backoff.
    """
    workspace_id_of(job)
    simulate_failure(job)
    new = {key: list(value) if isinstance(value, list) else value for key, value in (state or {}).items()}
    payload = job.payload if isinstance(job.payload, dict) else {}
    patches: list[Any] = new.setdefault("patches", [])
    if job.type == "apply_patch":
        patches.append(payload.get("patch", job.id))
    elif job.type == "run_tests":
        new["tested_head"] = len(patches)
        new.setdefault("test_runs", []).append({"jobId": job.id, "head": len(patches)})
    elif job.type == "open_pr":
        tested = new.get("tested_head") == len(patches)
        new.setdefault("prs", []).append({"jobId": job.id, "head": len(patches), "tested": tested})
    else:
        raise PermanentJobError(
            f"job {job.id!r} has type {job.type!r}: the sample worker handles {', '.join(JOB_TYPES)}; "
            "send one of those."
        )
    new.setdefault(ACTIVITY, []).append({"jobId": job.id, "type": job.type})
    return new
