"""What ``jobs cancel`` does: cancel one job through :class:`~constructs_fifo.client.steering.JobSteering`.

The plan reads what the cancel would do now (a dry run of the cancel: one consistent read) and refuses,
before anything changes, a job that already succeeded or is dead (the fix names what to use instead).
Its one step is the cancel itself, one conditional write: a job that moved on between the plan and the
step (it started, or succeeded) is decided again by the write, so what ``done`` says is what happened.
Running the plan again is safe: a cancelled job stays cancelled (``ALREADY_CANCELLED``).
"""

from __future__ import annotations

import getpass
import socket

from constructs_fifo.client.errors import SteeringQueryError
from constructs_fifo.client.steering import CancelOutcome, CancelReport, JobSteering
from constructs_fifo.ops.errors import OperationError, OperationRefusedError
from constructs_fifo.ops.plan import Plan, PlanStep, command
from constructs_fifo.ops.target import OpsQueue

__all__ = ["default_by", "plan_cancel", "problem_of", "steering_of"]


def default_by(command: str) -> str:
    """Who acts when ``--by`` is not given: the operator's user and host, and the ``command`` they ran
    (``"groups hold"``), as ``jobs show`` and ``pace show`` show it."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no user name in a container: the host still says where it came from
        user = "unknown"
    return f"{user}@{socket.gethostname()} (constructs-fifo {command})"


def problem_of(error: Exception) -> str:
    """A client error's problem without its own ``Fix:`` (written for the Python API's arguments): the
    command's error carries the command's fix instead, once."""
    return str(error).split(" Fix: ", 1)[0]


def steering_of(ops: OpsQueue) -> JobSteering:
    """The queue's :class:`JobSteering`, on the commands' clients and clock."""
    claim_table = ops.deployed.claim_table or None
    return JobSteering(
        claim_table=claim_table,
        group_table=ops.deployed.group_table or None,
        dynamodb=ops.dynamodb,
        clock=ops.clock,
        sqs=ops.sqs,
        queue_url=ops.deployed.queue_url,
    )


def plan_cancel(ops: OpsQueue, job: str, *, group: str | None, seq: int | None, reason: str, by: str) -> Plan:
    """The plan of ``jobs cancel JOB``.

    Raises
    ------
    OperationError
        State mode without ``--group``, or a job with a seq without ``--seq``.
    OperationRefusedError
        The job already succeeded or is dead: nothing is changed.
    """
    steering = steering_of(ops)
    argv = [
        "jobs",
        "cancel",
        job,
        *(["--group", group] if group else []),
        *(["--seq", str(seq)] if seq is not None else []),
    ]
    try:
        preview = steering.cancel(job, group=group, seq=seq, dry_run=True)
    except SteeringQueryError as exc:
        raise OperationError(problem_of(exc), "pass the arguments named (--group GROUP, --seq N)") from exc
    if preview.outcome is CancelOutcome.SUCCEEDED:
        raise OperationRefusedError(
            f"job {job!r} already succeeded: a cancel cannot undo it; nothing was changed",
            f"see its result with {command('jobs', 'show', job)}",
        )
    if preview.outcome is CancelOutcome.DEAD:
        raise OperationRefusedError(
            f"job {job!r} is dead: nothing will run it again; nothing was changed",
            f"drop its letter with {command('dlq', 'drop', job)}, or skip it with "
            f"{command('groups', 'resume', preview.group or 'GROUP', '--skip-dead')}",
        )
    plan = Plan("jobs cancel", argv=argv, details={"job": job, "found": _document(preview)})
    if preview.outcome is CancelOutcome.ALREADY_CANCELLED:
        plan.notes.append(f"job {job!r} is cancelled already: nothing to do")
        return plan
    if preview.running:
        plan.notes.append(
            f"job {job!r} is running (attempt {preview.attempt}): a worker's run is told within one "
            "heartbeat interval; a function runs to its end; its result will not be recorded and its "
            "effect may happen"
        )

    def cancel() -> str:
        report = steering.cancel(job, group=group, seq=seq, reason=reason, by=by)
        plan.details["cancelled"] = _document(report)
        return f"job {job}: {report.outcome.value}: {report.detail}"

    plan.steps.append(PlanStep(f"cancel job {job} ({preview.detail})", cancel))
    return plan


def _document(report: CancelReport) -> dict[str, object]:
    return {
        "outcome": report.outcome.value,
        "cancelled": report.outcome.cancelled,
        "running": report.running,
        "attempt": report.attempt,
        "group": report.group,
        "detail": report.detail,
    }
