"""``constructs-fifo demo``: emulator, deploy, send, drain, resume, drain, verify, in one call.

:func:`run_demo` drives the sample app end to end with a generated workload
(:mod:`~constructs_fifo.demo.workload`): workspace jobs to the state-mode queue, notifications to
the claim-mode queue. It drains both at once; the default PARK policy parks each poison job's workspace, so it
then resumes those groups skipping the dead job (``ParkedGroups.resume(group, skip_dead=True)``) and
drains again; and it returns a :class:`DemoResult` (counts, DynamoDB calls per job of each queue,
timings, violations found by :mod:`~constructs_fifo.demo.verify`). The shared steps (where to
run, deploying, draining) are :mod:`~constructs_fifo.demo.steps`.

Examples
--------
>>> from constructs_fifo.demo.steps import DemoOptions
>>> from constructs_fifo.demo.workload import WorkloadSpec
>>> result = run_demo(DemoOptions(spec=WorkloadSpec(workspaces=4, jobs=48, poison=1)))  # doctest: +SKIP
>>> result.passed  # doctest: +SKIP
True
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from constructs_fifo.client import JobMessage, ParkedGroups
from constructs_fifo.client.state_reader import GroupStateReader
from constructs_fifo.demo import steps
from constructs_fifo.demo.errors import DemoError
from constructs_fifo.demo.sample_app import SampleQueue, SampleResources, group_of
from constructs_fifo.demo.scenarios.builds import BuildsResult, start_builds
from constructs_fifo.demo.steps import DemoOptions, Phase, Prepared, ProgressCallback, Reporter
from constructs_fifo.demo.verify import Observed, Violation, expectations_of, observe, verify
from constructs_fifo.demo.workload import QueueRole, Workload, generate_workload
from constructs_fifo.ops import OpsQueue
from constructs_fifo.ops.status import queue_status
from constructs_fifo.stacks.aws import AwsTarget
from constructs_fifo.stacks.counters import queue_counts
from constructs_fifo.stacks.deployed import DeployedQueue

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient

__all__ = [
    "DemoResult",
    "Resumed",
    "check_fresh",
    "dynamodb_calls",
    "resume_parked",
    "run_demo",
    "send_workload",
]


@dataclass(frozen=True)
class Resumed:
    """One parked group the demo resumed, skipping its dead job."""

    queue: str
    group: str
    dead_job_id: str | None
    reason: str | None
    kept: int
    """The group's kept records, the dead job's among them when it was kept (it is, unless it died
    waiting in the reorder buffer)."""
    dead_was_kept: bool = True

    @property
    def kept_behind(self) -> int:
        """The kept jobs replayed after the dead one."""
        return self.kept - (1 if self.dead_was_kept else 0)

    def describe(self) -> str:
        """One line for the demo's output (its figures are the report's ``kept`` and ``keptBehind``)."""
        with_dead = ", the dead job's included" if self.dead_was_kept else ""
        return (
            f"resumed {self.group} on {self.queue}: ParkedGroups.resume(group, skip_dead=True) sent dead job "
            f"{self.dead_job_id} ({self.reason}) to the dead-letter queue; replaying the {self.kept_behind} "
            f"{_plural(self.kept_behind, 'kept job')} behind it in order ({self.kept} kept{with_dead})"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "queue": self.queue,
            "group": self.group,
            "deadJobId": self.dead_job_id,
            "reason": self.reason,
            "kept": self.kept,
            "keptBehind": self.kept_behind,
        }


@dataclass
class DemoResult:
    """What a demo run measured and found."""

    options: DemoOptions
    endpoint_url: str | None = None
    queues: dict[str, DeployedQueue] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    timings: Phase = field(default_factory=Phase)
    violations: list[Violation] = field(default_factory=list)
    drain_stats: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    resumed: list[Resumed] = field(default_factory=list)
    calls_per_job: dict[str, dict[str, float]] = field(default_factory=dict)
    status: list[dict[str, Any]] = field(default_factory=list)
    builds: BuildsResult | None = None

    @property
    def passed(self) -> bool:
        """True when verification found no violation."""
        return not self.violations

    def to_dict(self) -> dict[str, Any]:
        """The JSON report."""
        spec = self.options.spec
        return {
            "passed": self.passed,
            "endpoint_url": self.endpoint_url or "aws",
            "region": self.options.region,
            "stack": self.options.stack,
            "queues": {role: queue.to_dict() for role, queue in self.queues.items()},
            "workload": {
                "workspaces": spec.workspaces,
                "jobs": spec.jobs,
                "duplicate_rate": spec.duplicate_rate,
                "failure_rate": spec.failure_rate,
                "poison": spec.poison,
                "last_attempt": spec.last_attempt,
                "max_attempts": spec.max_attempts,
                "seed": spec.seed,
            },
            "counts": self.counts,
            "resumed": [resumed.to_dict() for resumed in self.resumed],
            "dynamodb_calls_per_job": self.calls_per_job,
            "timings_seconds": {
                **self.timings.seconds,
                "total": round(sum(self.timings.seconds.values()), 3),
            },
            "drain": self.drain_stats,
            "builds": self.builds.to_dict() if self.builds is not None else None,
            "violations": [violation.to_dict() for violation in self.violations],
        }

    def write_report(self, path: Path) -> None:
        """Write :meth:`to_dict` as indented JSON, creating the directory."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=2, default=str) + "\n", encoding="utf-8")


def send_workload(
    workload: Workload, queue_url: str, *, sqs_client: SQSClient, target: AwsTarget, queue: QueueRole
) -> int:
    """Send one queue's plan in order; return the number of sends SQS accepted."""
    accepted = 0
    for batch in workload.batches(queue=queue):
        messages = [
            JobMessage(
                send.job.job_id,
                send.job.job_type,
                dict(send.job.payload),
                group=send.job.group,
                deduplication_id=send.deduplication_id,
                seq=send.job.seq,
            )
            for send in batch
        ]
        accepted += steps.send(messages, queue_url, sqs_client=sqs_client, target=target)
    return accepted


def check_fresh(workload: Workload, *, resources: SampleResources, dynamodb: DynamoDBClient) -> None:
    """Refuse to run a workload whose workspaces already have a state (an earlier run with the same seed)."""
    reader = GroupStateReader(resources.workspaces.group_table, dynamodb)
    for workspace in workload.workspace_ids[:3]:
        if reader.version(group_of(workspace)):
            raise DemoError(
                f"workspace {workspace} already has a state in {resources.workspaces.group_table}: seed "
                f"{workload.spec.seed} was already run against this deployment, so its jobs would be "
                "skipped as duplicates",
                f"pass another --seed (e.g. --seed {workload.spec.seed + 1}) or use a fresh emulator",
            )


def resume_parked(
    queue: SampleQueue,
    *,
    groups: set[str],
    dead_job_ids: set[str],
    sqs: SQSClient,
    dynamodb: DynamoDBClient,
) -> tuple[list[Resumed], list[str]]:
    """Resume, skipping the dead job, each parked group of ``groups`` whose dead job is in ``dead_job_ids``.

    A group parked at any other job is left parked (the verifier reports it): the demo skips only what
    it sent as poison, as an operator would skip only a job known to be bad.

    Returns
    -------
    tuple
        The groups resumed, and lines describing the groups left parked.
    """
    parked = ParkedGroups(
        group_table=queue.group_table,
        queue_url=queue.queue_url,
        dead_letter_queue_url=queue.dead_letter_queue_url,
        dynamodb=dynamodb,
        sqs=sqs,
    )
    resumed: list[Resumed] = []
    left: list[str] = []
    for header in parked.list_groups():
        if header.group not in groups:
            continue
        dead_job_id = header.dead.job_id or None
        if dead_job_id not in dead_job_ids:
            left.append(
                f"left {header.group} parked on {queue.label}: its dead job {dead_job_id} is not a poison job"
            )
            continue
        records = parked.kept(header.group, limit=1000)
        dead_was_kept = bool(records) and records[0].record.get("messageId") == header.dead_message_id
        parked.resume(header.group, skip_dead=True)
        resumed.append(
            Resumed(
                queue.label, header.group, dead_job_id, header.dead.reason.value, len(records), dead_was_kept
            )
        )
    return resumed, left


def _plural(count: int, noun: str) -> str:
    return noun if count == 1 else f"{noun}s"


def _messages(count: int) -> str:
    return f"{count} {_plural(count, 'message')}"


def dynamodb_calls(aws_calls: Mapping[str, int], runtime_tables: set[str]) -> tuple[int, int]:
    """``(runtime's, job code's)`` DynamoDB calls among a drain's AWS calls (``"dynamodb.Op table"`` keys)."""
    runtime = job_code = 0
    for key, count in aws_calls.items():
        operation, _, tables = key.partition(" ")
        if not operation.startswith("dynamodb."):
            continue
        if tables and set(tables.split(",")) <= runtime_tables:
            runtime += count
        else:
            job_code += count
    return runtime, job_code


def _drain_or_wait(
    role: QueueRole,
    queue: DeployedQueue,
    *,
    options: DemoOptions,
    target: AwsTarget,
    sqs: SQSClient,
    say: Reporter,
    progress: ProgressCallback | None,
    cancel: threading.Event | None = None,
) -> dict[str, Any]:
    total = queue_counts(sqs, queue.queue_url).total
    if not options.drain:
        say(f"waiting for the deployed function to drain {_messages(total)} of {queue.label} ...")
        steps.wait_until_empty(
            sqs, queue.queue_url, total=total, timeout=options.wait_seconds, progress=progress, cancel=cancel
        )
        return {}
    say(f"draining {_messages(total)} of {queue.label} through the function's handler ...")
    return steps.drain(queue, target=target, say=say, progress=progress, watch=(sqs, total), cancel=cancel)


def _calls_per_job(result: DemoResult, prepared: Prepared, workload: Workload) -> None:
    jobs = {"workspaces": len(workload.jobs), "notifications": len(workload.notifications)}
    for role, queue in prepared.by_role():
        drains = result.drain_stats.get(role, [])
        if not drains:
            continue
        calls: dict[str, int] = {}
        for stats in drains:
            for key, count in stats.get("aws_calls", {}).items():
                calls[key] = calls.get(key, 0) + int(count)
        tables = {table for table in (queue.claim_table, queue.group_table) if table}
        runtime, job_code = dynamodb_calls(calls, tables)
        result.calls_per_job[role] = {
            "jobs": jobs[role],
            "runtime": round(runtime / max(jobs[role], 1), 3),
            "job_code": round(job_code / max(jobs[role], 1), 3),
            "runtime_calls": runtime,
            "job_code_calls": job_code,
        }


def _counts(
    workload: Workload, observed: Observed, accepted: Mapping[str, int], delivered: Mapping[str, int]
) -> dict[str, int]:
    applied_ids = {job_id for order in observed.applied.values() for job_id in order}
    dead = {d.job_id for d in observed.dead_letters}
    poison = {job.job_id for job in workload.poison_jobs}
    dead_messages = sum(1 for d in observed.dead_letters if d.job_id in poison)
    recorded = len(set(observed.notifications) & {n.job_id for n in workload.notifications})
    applied = sum(len(order) for order in observed.applied.values())
    transient = workload.transient_jobs
    return {
        "jobs": len(workload.jobs),
        "messages_sent": accepted["workspaces"],
        "notifications": len(workload.notifications),
        "notification_messages_sent": accepted["notifications"],
        "duplicates_same_dedup_id": workload.count("sqs_duplicate"),
        "duplicates_new_dedup_id": workload.count("late_duplicate"),
        "collapsed_by_sqs": sum(accepted.values()) - sum(delivered.values()),
        "skipped_by_state": max(0, delivered["workspaces"] - applied - dead_messages),
        "skipped_by_claims": max(0, delivered["notifications"] - recorded),
        "applied": applied,
        "notifications_recorded": recorded,
        "transient_failures": len(transient),
        "transient_failures_recovered": sum(
            1 for job in transient if job.job_id in applied_ids or job.job_id in observed.notifications
        ),
        "last_attempt": len(workload.last_attempt_jobs),
        "last_attempt_applied": sum(1 for job in workload.last_attempt_jobs if job.job_id in applied_ids),
        "poison_sent": len(poison),
        "poison_dead_lettered": sum(1 for job_id in poison if job_id in dead),
        "poison_dead_letter_messages": dead_messages,
    }


def run_demo(
    options: DemoOptions,
    *,
    say: Reporter = print,
    progress: ProgressCallback | None = None,
) -> DemoResult:
    """Run the whole demo and return what it measured.

    Parameters
    ----------
    options
        What to run against and what to send.
    say
        Receives one line per phase (and one per resumed group).
    progress
        Receives ``(done, total)`` while a queue drains.

    Raises
    ------
    CommandError
        When a step cannot run (emulator, deploy, the stack's queues, a reused seed); violations are
        not errors but part of the result.
    """
    result = DemoResult(options=options)
    timings = result.timings
    with steps.connect(options, timings) as target:
        result.endpoint_url = target.endpoint_url
        say(f"endpoint: {target.endpoint_url or 'AWS (default endpoints)'} in {target.region}")
        clients = steps.make_clients(target)
        with timings.timed("deploy"):
            prepared = steps.prepare(options, target, say=say)
        result.queues = {"workspaces": prepared.workspaces, "notifications": prepared.notifications}
        resources = prepared.resources
        # The long jobs run on their own workers meanwhile: they take about three of their jobs' time.
        builds_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="builds")
        builds_cancel = threading.Event()
        builds = start_builds(builds_pool, options, target, say=say, cancel=builds_cancel)
        try:
            workload = generate_workload(replace(options.spec, max_attempts=prepared.max_attempts))
            check_fresh(workload, resources=resources, dynamodb=clients.dynamodb)

            accepted: dict[str, int] = {}
            delivered: dict[str, int] = {}
            with timings.timed("send"):
                for role, queue in prepared.by_role():
                    plan = workload.sends_to(role)
                    say(f"sending {len(plan)} messages to {queue.label} ...")
                    accepted[role] = send_workload(
                        workload, queue.queue_url, sqs_client=clients.sqs, target=target, queue=role
                    )
                    delivered[role] = queue_counts(clients.sqs, queue.queue_url).total

            with (
                timings.timed("drain"),
                ThreadPoolExecutor(max_workers=2, thread_name_prefix="drain") as pool,
            ):
                # Both queues at once, as their two event source mappings would: the workspace queue waits
                # out its failing jobs' backoff while the notification queue drains.
                cancel = threading.Event()
                futures = {
                    role: pool.submit(
                        _drain_or_wait,
                        role,
                        queue,
                        options=options,
                        target=target,
                        sqs=clients.sqs,
                        say=say,
                        progress=progress,
                        cancel=cancel,
                    )
                    for role, queue in prepared.by_role()
                }
                for role, stats in steps.results_or_cancel(futures, cancel).items():
                    result.drain_stats.setdefault(role, []).append(stats)

            with timings.timed("resume"):
                groups = {group_of(workspace) for workspace in workload.workspace_ids}
                poison = {job.job_id for job in workload.poison_jobs}
                for sample_queue in (resources.workspaces, resources.notifications):
                    resumed, left = resume_parked(
                        sample_queue,
                        groups=groups,
                        dead_job_ids=poison,
                        sqs=clients.sqs,
                        dynamodb=clients.dynamodb,
                    )
                    result.resumed += resumed
                    for line in (*(r.describe() for r in resumed), *left):
                        say(line)
                if not result.resumed:
                    say("no group parked at a poison job: nothing to resume")
            if result.resumed:
                with timings.timed("drain_after_resume"):
                    stats = _drain_or_wait(
                        "workspaces",
                        prepared.workspaces,
                        options=options,
                        target=target,
                        sqs=clients.sqs,
                        say=say,
                        progress=progress,
                    )
                    result.drain_stats["workspaces"].append(stats)

            if builds is not None:
                with timings.timed("builds_wait"):
                    built = builds.result()
                builds_pool.shutdown()
                result.queues["builds"] = built.queue
                result.builds = built.result
            with timings.timed("verify"):
                say("verifying workspaces, notifications, dead-letter queues, parked groups and queues ...")
                observed = observe(
                    workload.workspace_ids,
                    resources=resources,
                    sqs_client=clients.sqs,
                    dynamodb_client=clients.dynamodb,
                )
                result.violations = verify(expectations_of(workload), observed)
                if result.builds is not None:
                    result.violations += result.builds.violations
            # What an operator sees next: `constructs-fifo status` of both queues, as the demo left them.
            result.status = [
                queue_status(OpsQueue(queue, clients.sqs, clients.dynamodb)).to_dict()
                for queue in (prepared.workspaces, prepared.notifications)
            ]
        finally:  # a failed or interrupted demo ends the builds' waits and their workers
            builds_cancel.set()
            builds_pool.shutdown(wait=True)

    result.counts = {
        **_counts(workload, observed, accepted, delivered),
        "groups_resumed": len(result.resumed),
        "deliveries": sum(int(s.get("records", 0)) for drains in result.drain_stats.values() for s in drains),
        "messages_delivered": sum(delivered.values()),
        "violations": len(result.violations),
        **(result.builds.counts() if result.builds is not None else {}),
    }
    _calls_per_job(result, prepared, workload)
    if options.report is not None:
        result.write_report(options.report)
    return result
