"""What ``groups hold``, ``groups release`` and ``groups cancel`` do
(:class:`~constructs_fifo.client.steering.JobSteering`).

``groups hold GROUP``: from its next batch on nothing of the group starts; its jobs are kept in order
in the group table (as a parked group's, without a dead job). ``groups release GROUP``: its kept jobs
replay first, in order, then it is live again. Each plan reads what the control would do now (a dry
run) and refuses what cannot be done before anything changes; its one step is the control itself,
which decides again on what it finds (a group that moved meanwhile is reported as it was found).
``groups cancel GROUP``: every job of the group sent before the command never runs: a held or parked
group's kept jobs at once (its dead job, if parked, is left to ``groups resume``), a live group's queued
jobs as they arrive, up to a marker message sent through the group (``--running``: the running job too,
claim mode; ``--up-to-seq N``: only seqs up to N, state mode). ``groups run-first GROUP --job FILE``:
the job runs first when the held or parked group goes on (release or resume). All but ``run-first``
are safe to run again (``run-first`` refuses a second job while one waits).
"""

from __future__ import annotations

import json

from constructs_fifo.client.errors import SteeringQueryError
from constructs_fifo.client.producer import JobMessage
from constructs_fifo.client.steering import CancelOutcome, HoldOutcome
from constructs_fifo.client.steering.controls import LIVE
from constructs_fifo.ops.errors import OperationError, OperationRefusedError
from constructs_fifo.ops.plan import Plan, PlanStep, command
from constructs_fifo.ops.steering.jobs import problem_of, steering_of
from constructs_fifo.ops.target import CLAIM_MODE, OpsQueue
from constructs_fifo.runtime.dead_jobs.parking import CANCELLING

__all__ = ["plan_cancel_group", "plan_hold", "plan_release", "plan_run_first"]


def plan_hold(ops: OpsQueue, group: str, *, reason: str, by: str) -> Plan:
    """The plan of ``groups hold GROUP``.

    Raises
    ------
    OperationError
        The queue cannot hold (claim mode under CONTINUE: no group table).
    OperationRefusedError
        The group is parked at a dead job (nothing of it runs already), or being cancelled.
    """
    steering = steering_of(ops)
    try:
        preview = steering.hold(group, dry_run=True)
    except SteeringQueryError as exc:
        raise OperationError(problem_of(exc), "hold a queue under the PARK policy (the default)") from exc
    if preview.outcome is HoldOutcome.PARKED:
        raise OperationRefusedError(
            f"group {group!r} of {ops.label} is parked at a dead job: nothing of it runs already; "
            "nothing was changed",
            f"see it with {command('groups', 'show', group)}",
        )
    if preview.outcome is HoldOutcome.CANCELLING:
        raise OperationRefusedError(
            f"group {group!r} of {ops.label} is live, its queued jobs being cancelled (groups cancel); "
            "nothing was changed",
            f"hold it once its cancel ended: {command('groups', 'show', group)} says so",
        )
    plan = Plan("groups hold", argv=["groups", "hold", group], details={"group": group})
    if preview.outcome is HoldOutcome.ALREADY_HELD:
        plan.notes.append(f"group {group} is held already: nothing to do")
        return plan
    plan.notes.append(
        "a batch of the group already running finishes ("
        + ("its jobs may still start" if ops.mode == CLAIM_MODE else "nothing of it is applied")
        + "); nothing of the group starts after it until it is released"
    )

    def hold() -> str:
        report = steering.hold(group, reason=reason, by=by)
        plan.details["outcome"] = report.outcome.value
        return f"group {group}: {report.outcome.value}: {report.detail}"

    plan.steps.append(PlanStep(f"hold group {group}: keep its jobs, in order, until it is released", hold))
    return plan


def plan_release(ops: OpsQueue, group: str) -> Plan:
    """The plan of ``groups release GROUP``.

    Raises
    ------
    OperationError
        The queue has no group table.
    OperationRefusedError
        The group is not held (a parked one is resumed with ``groups resume``).
    """
    steering = steering_of(ops)
    try:
        preview = steering.release(group, dry_run=True)
    except SteeringQueryError as exc:
        raise OperationError(problem_of(exc), "release a group of a queue under the PARK policy") from exc
    if preview.outcome is HoldOutcome.NOT_HELD:
        raise OperationRefusedError(
            f"group {group!r} of {ops.label} is not held ({preview.detail}); nothing was changed",
            f"list the groups: {command('groups', 'list', '--parked')}",
        )
    plan = Plan("groups release", argv=["groups", "release", group], details={"group": group})

    def release() -> str:
        report = steering.release(group)
        plan.details["outcome"] = report.outcome.value
        plan.details["wakeUpMessageId"] = report.wake_up_message_id
        return f"group {group}: {report.outcome.value}: {report.detail}"

    plan.steps.append(
        PlanStep(f"release group {group}: its kept jobs run in order, before anything sent later", release)
    )
    return plan


def plan_cancel_group(
    ops: OpsQueue, group: str, *, reason: str, by: str, running: bool = False, up_to_seq: int | None = None
) -> Plan:
    """The plan of ``groups cancel GROUP [--running] [--up-to-seq N]``.

    Raises
    ------
    OperationError
        The queue has no group table (claim mode under CONTINUE), or ``--up-to-seq`` in claim mode.
    """
    steering = steering_of(ops)
    try:
        preview = steering.cancel_group(group, dry_run=True, running=running, up_to_seq=up_to_seq)
    except SteeringQueryError as exc:
        fix = (
            "leave --up-to-seq out in claim mode"
            if up_to_seq is not None and ops.deployed.group_table
            else "cancel a group of a queue under the PARK policy (the default), or cancel single jobs "
            f"({command('jobs', 'cancel', 'JOB')})"
        )
        raise OperationError(problem_of(exc), fix) from exc
    argv = [
        "groups",
        "cancel",
        group,
        *(["--running"] if running else []),
        *(["--up-to-seq", str(up_to_seq)] if up_to_seq is not None else []),
    ]
    live = preview.status in (LIVE, CANCELLING)
    cancellable = [
        r.job_id for r in preview.jobs if r.outcome in (CancelOutcome.NOT_STARTED, CancelOutcome.STOPPED)
    ]
    plan = Plan(
        "groups cancel",
        argv=argv,
        details={"group": group, "status": preview.status, "jobs": cancellable, "upToSeq": up_to_seq},
    )
    refused = [f"{r.job_id} ({r.outcome.value})" for r in preview.jobs if not r.outcome.cancelled]
    if refused:
        plan.notes.append(f"not cancelled (refused): {', '.join(refused)}")
    if preview.malformed:
        plan.notes.append(f"kept records without a job id, left as they are: {', '.join(preview.malformed)}")
    running_now = [r.job_id for r in preview.jobs if r.running]
    if running_now:
        plan.notes.append(
            f"running now: {', '.join(running_now)}: a worker's run is told within one heartbeat interval; "
            "a function runs to its end; its result will not be recorded and its effect may happen"
        )
    claim_mode = ops.mode == CLAIM_MODE
    if running and not claim_mode:
        plan.notes.append(
            "--running changes nothing in state mode: no job of the group runs apart from a batch in "
            "flight, and the cancel moves the group's version so that batch's transition is never "
            "committed; leave --running out"
        )
    if live:
        plan.notes.append(
            f"group {group} is live: its jobs sent before this command are cancelled as they arrive, up to "
            "a marker message sent through the group; jobs sent after it run. "
            + (
                "A batch of the group already running may still start its jobs (at most a batch)"
                if claim_mode
                else "A batch of the group already running applies nothing (its commit is refused)"
            )
        )
    elif not cancellable:
        plan.notes.append(
            f"group {group} keeps no job to cancel"
            + (f"; no job of {group} was running" if running and claim_mode else "")
        )
        return plan

    def cancel() -> str:
        report = steering.cancel_group(group, reason=reason, by=by, running=running, up_to_seq=up_to_seq)
        plan.details["cancelled"] = [r.job_id for r in report.jobs if r.outcome.cancelled]
        nothing_running = (
            f"; no job of {group} was running"
            if running and claim_mode and not any(r.running for r in report.jobs)
            else ""
        )
        if report.marker_id is not None:
            plan.details["markerId"] = report.marker_id
            return (
                f"group {group}: its queued jobs are cancelled as they arrive, up to marker "
                f"{report.marker_id}; {report.cancelled} more cancelled now{nothing_running}"
            )
        return f"group {group}: {report.cancelled} kept job(s) cancelled; they never run{nothing_running}"

    what = (
        f"cancel the jobs of live group {group} sent before now (a marker through the group)"
        if live
        else f"cancel the {len(cancellable)} job(s) group {group} keeps ({', '.join(cancellable[:5])}"
        f"{' ...' if len(cancellable) > 5 else ''})"
    )
    plan.steps.append(PlanStep(f"{what}; jobs sent later run", cancel))
    return plan


def plan_run_first(ops: OpsQueue, group: str, job_file: str) -> Plan:
    """The plan of ``groups run-first GROUP --job FILE`` (FILE: ``{"jobId", "type", "payload"}``).

    Raises
    ------
    OperationError
        The file is not a job envelope.
    OperationRefusedError
        The group is live, or a job already waits at its head.
    """
    try:
        with open(job_file, encoding="utf-8") as handle:
            envelope = json.load(handle)
        job = JobMessage(str(envelope["jobId"]), str(envelope["type"]), envelope.get("payload"), group=group)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise OperationError(
            f"--job {job_file!r} is not a job envelope ({exc})",
            'write the job as JSON: {"jobId": "fix-1", "type": "apply_patch", "payload": {...}}',
        ) from exc
    steering = steering_of(ops)
    header = ops.parked.get(group) if ops.parked is not None else None
    if header is None:
        raise OperationRefusedError(
            f"group {group!r} of {ops.label} is live: nothing is kept to run ahead of; nothing was changed",
            f"send the job normally, or hold the group first: {command('groups', 'hold', group)}",
        )
    plan = Plan(
        "groups run-first",
        argv=["groups", "run-first", group, "--job", job_file],
        details={"group": group, "jobId": job.job_id},
    )
    plan.notes.append(
        f"it runs when the group goes on: {command('groups', 'release', group)} (held) or "
        f"{command('groups', 'resume', group)} (parked)"
    )

    def first() -> str:
        try:
            report = steering.run_first(job)
        except SteeringQueryError as exc:
            raise OperationRefusedError(
                problem_of(exc), f"see the group: {command('groups', 'show', group)}"
            ) from exc
        return f"group {group}: {report.detail}"

    plan.steps.append(PlanStep(f"put job {job.job_id} first in group {group}, ahead of its kept jobs", first))
    return plan
