"""``constructs-fifo demo``: emulator, deploy, send, drain, verify, in one call.

:func:`run_demo` drives the sample app end to end with a generated workload
(:mod:`~constructs_fifo.local.demo.workload`) and returns a :class:`DemoResult` (counts, timings,
violations found by :mod:`~constructs_fifo.local.demo.verify`). The shared steps (where to run,
deploying, draining) are :mod:`~constructs_fifo.local.demo.steps`.

Examples
--------
>>> from constructs_fifo.local.demo.steps import DemoOptions
>>> from constructs_fifo.local.demo.workload import WorkloadSpec
>>> result = run_demo(DemoOptions(spec=WorkloadSpec(workspaces=4, jobs=40, poison=1)))  # doctest: +SKIP
>>> result.passed  # doctest: +SKIP
True
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from constructs_fifo.client import JobMessage
from constructs_fifo.local.aws import AwsTarget
from constructs_fifo.local.demo import steps
from constructs_fifo.local.demo.sample_app import SampleResources, read_workspace
from constructs_fifo.local.demo.steps import DemoOptions, Phase, ProgressCallback, Reporter
from constructs_fifo.local.demo.verify import Violation, expectations_of, observe, verify
from constructs_fifo.local.demo.workload import Workload, generate_workload
from constructs_fifo.local.errors import DemoError
from constructs_fifo.local.queues import queue_counts
from constructs_fifo.local.stack import DeployedQueue

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient

__all__ = ["DemoResult", "check_fresh", "run_demo", "send_workload"]


@dataclass
class DemoResult:
    """What a demo run measured and found."""

    options: DemoOptions
    endpoint_url: str | None = None
    queue: DeployedQueue | None = None
    counts: dict[str, int] = field(default_factory=dict)
    timings: Phase = field(default_factory=Phase)
    violations: list[Violation] = field(default_factory=list)
    drain_stats: dict[str, Any] = field(default_factory=dict)

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
            "queue": self.queue.to_dict() if self.queue is not None else None,
            "workload": {
                "workspaces": spec.workspaces,
                "jobs": spec.jobs,
                "duplicate_rate": spec.duplicate_rate,
                "failure_rate": spec.failure_rate,
                "poison": spec.poison,
                "seed": spec.seed,
            },
            "counts": self.counts,
            "timings_seconds": {
                **self.timings.seconds,
                "total": round(sum(self.timings.seconds.values()), 3),
            },
            "drain": self.drain_stats,
            "violations": [violation.to_dict() for violation in self.violations],
        }

    def write_report(self, path: Path) -> None:
        """Write :meth:`to_dict` as indented JSON, creating the directory."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=2, default=str) + "\n", encoding="utf-8")


def send_workload(workload: Workload, queue_url: str, *, sqs_client: SQSClient, target: AwsTarget) -> int:
    """Send the workload's plan in order; return the number of sends SQS accepted."""
    accepted = 0
    for batch in workload.batches():
        messages = [
            JobMessage(
                send.job.job_id,
                send.job.job_type,
                dict(send.job.payload),
                group=send.job.group,
                deduplication_id=send.deduplication_id,
            )
            for send in batch
        ]
        accepted += steps.send(messages, queue_url, sqs_client=sqs_client, target=target)
    return accepted


def check_fresh(workload: Workload, *, resources: SampleResources, dynamodb: DynamoDBClient) -> None:
    """Refuse to run a workload whose workspaces already exist (an earlier run with the same seed)."""
    for workspace in workload.workspace_ids[:3]:
        if read_workspace(dynamodb, resources.workspace_table, workspace) is not None:
            raise DemoError(
                f"workspace {workspace} already exists in {resources.workspace_table}: seed "
                f"{workload.spec.seed} was already run against this deployment, so its jobs would be "
                "skipped as duplicates",
                f"pass another --seed (e.g. --seed {workload.spec.seed + 1}) or use a fresh emulator",
            )


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
        Receives one line per phase.
    progress
        Receives ``(done, total)`` while the queue drains.

    Raises
    ------
    LocalError
        When a step cannot run (emulator, deploy, the stack's queue, a reused seed); violations are
        not errors but part of the result.
    """
    workload = generate_workload(options.spec)
    result = DemoResult(options=options)
    timings = result.timings
    with steps.connect(options, timings) as target:
        result.endpoint_url = target.endpoint_url
        say(f"endpoint: {target.endpoint_url or 'AWS (default endpoints)'} in {target.region}")
        clients = steps.make_clients(target)
        with timings.timed("deploy"):
            prepared = steps.prepare(options, target, say=say)
        result.queue = prepared.queue
        resources = prepared.resources
        check_fresh(workload, resources=resources, dynamodb=clients.dynamodb)

        with timings.timed("send"):
            jobs, messages = len(workload.jobs), len(workload.sends)
            say(f"sending {messages} messages for {jobs} jobs to {prepared.queue.label} ...")
            accepted = send_workload(workload, resources.queue_url, sqs_client=clients.sqs, target=target)
        delivered = queue_counts(clients.sqs, resources.queue_url).total

        with timings.timed("drain"):
            if not options.drain:
                say(f"waiting for the deployed function to drain {delivered} messages ...")
                steps.wait_until_empty(
                    clients.sqs,
                    resources.queue_url,
                    total=delivered,
                    timeout=options.wait_seconds,
                    progress=progress,
                )
            else:
                say(f"draining {delivered} messages through the function's handler ...")
                result.drain_stats = steps.drain(
                    prepared, target=target, say=say, progress=progress, watch=(clients.sqs, delivered)
                )

        with timings.timed("verify"):
            say("verifying workspaces, claims and queues ...")
            observed = observe(
                workload.workspace_ids,
                resources=resources,
                sqs_client=clients.sqs,
                dynamodb_client=clients.dynamodb,
            )
            result.violations = verify(expectations_of(workload), observed)

    applied = sum(len(order) for order in observed.applied.values())
    ours = {job.job_id for job in workload.jobs}
    applied_ids = {job_id for order in observed.applied.values() for job_id in order}
    dead_letter_ids = set(observed.dead_letter_job_ids)
    dead_lettered = sum(1 for job_id in observed.dead_letter_job_ids if job_id in ours)  # messages
    duplicates = workload.count("sqs_duplicate") + workload.count("late_duplicate")
    result.counts = {
        "jobs": len(workload.jobs),
        "messages_sent": accepted,
        "duplicates_sent": duplicates,
        "duplicates_same_dedup_id": workload.count("sqs_duplicate"),
        "duplicates_new_dedup_id": workload.count("late_duplicate"),
        "delivered_by_sqs": delivered,
        "collapsed_by_sqs": accepted - delivered,
        "skipped_by_claims": max(0, delivered - applied - dead_lettered),
        "applied": applied,
        "transient_failures": len(workload.transient_jobs),
        "transient_failures_recovered": sum(
            1 for job in workload.transient_jobs if job.job_id in applied_ids
        ),
        "redeliveries": max(0, int(result.drain_stats.get("records", delivered)) - delivered),
        "transient_retries_planned": sum(job.fail_attempts for job in workload.transient_jobs),
        "poison_sent": len(workload.poison_jobs),
        "poison_dead_lettered": sum(1 for job in workload.poison_jobs if job.job_id in dead_letter_ids),
        "violations": len(result.violations),
    }
    if options.report is not None:
        result.write_report(options.report)
    return result
