"""Verify a demo run from what the deployed tables and queues hold.

Two halves: :func:`observe` reads the deployment (workspace table, claim table, dead-letter queue, main
queue) through injected boto3 clients; :func:`verify` is pure and compares those observations with
what the workload expects. Every :class:`Violation` names the workspace or job, what was expected and
what was found.

Examples
--------
>>> expectations = Expectations(order={"ws-a": ["j1", "j2"]}, poison={})
>>> observed = Observed(applied={"ws-a": ["j2", "j1"]}, dead_letter_job_ids=[], claim_status={},
...                     queue_visible=0, queue_in_flight=0)
>>> [v.kind for v in verify(expectations, observed)]
['order']
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from constructs_fifo.local.demo.sample_app import (
    APPLIED_ATTRIBUTE,
    REPLAYED_ATTRIBUTE,
    SampleResources,
    read_workspace,
)
from constructs_fifo.local.queues import queue_counts
from constructs_fifo.runtime.constants import ATTR_ID, ATTR_STATUS, STATUS_FAILED, STATUS_SUCCEEDED

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient

    from constructs_fifo.local.demo.workload import Workload

__all__ = [
    "Expectations",
    "Observed",
    "Violation",
    "ViolationKind",
    "expectations_of",
    "observe",
    "verify",
]

ViolationKind = Literal[
    "order",
    "applied_twice",
    "duplicate_reached_worker",
    "poison_applied",
    "poison_not_dead_lettered",
    "poison_claim_not_failed",
    "unexpected_dead_letter",
    "claim_not_succeeded",
    "queue_not_empty",
]


@dataclass(frozen=True)
class Expectations:
    """What a correct run leaves behind.

    Parameters
    ----------
    order
        For each workspace, the job ids it must apply, in order (the sent order without poison jobs).
    poison
        Each poison job id and its workspace.
    """

    order: Mapping[str, Sequence[str]]
    poison: Mapping[str, str]


@dataclass(frozen=True)
class Observed:
    """What the deployment holds after the drain.

    Parameters
    ----------
    applied
        For each workspace found, its ``applied`` list; a workspace with no item is absent.
    dead_letter_job_ids
        The ``jobId`` of every message in the dead-letter queue (repeats kept), including messages
        that are not of this run (they are ignored).
    claim_status
        The claim ``status`` per job id (``None`` when a job has no claim item).
    queue_visible, queue_in_flight
        Messages left in the main queue.
    replayed
        For each workspace, the job ids its worker received again after applying them (its own
        guard kept the effect single; the claim table should have skipped them first).
    """

    applied: Mapping[str, Sequence[str]]
    dead_letter_job_ids: Sequence[str]
    claim_status: Mapping[str, str | None]
    queue_visible: int
    queue_in_flight: int
    replayed: Mapping[str, Sequence[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Violation:
    """One broken guarantee, described by where, what was expected and what was found."""

    kind: ViolationKind
    message: str
    workspace: str | None = None
    job_id: str | None = None
    expected: Any = None
    actual: Any = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for the report."""
        return asdict(self)


def expectations_of(workload: Workload) -> Expectations:
    """The expectations of a generated workload."""
    return Expectations(
        order=workload.expected_order(),
        poison={job.job_id: job.workspace_id for job in workload.poison_jobs},
    )


def _first_difference(expected: Sequence[str], actual: Sequence[str]) -> int:
    for index, (want, got) in enumerate(zip(expected, actual, strict=False)):
        if want != got:
            return index
    return min(len(expected), len(actual))


def verify(expectations: Expectations, observed: Observed) -> list[Violation]:
    """Compare a run's observations with its expectations.

    Parameters
    ----------
    expectations
        From :func:`expectations_of`.
    observed
        From :func:`observe` (or built by hand in tests).

    Returns
    -------
    list of Violation
        Empty when every guarantee held.
    """
    violations: list[Violation] = []
    poison = expectations.poison
    for workspace, expected in expectations.order.items():
        actual = list(observed.applied.get(workspace, []))
        for job_id, times in sorted(Counter(actual).items()):
            if times > 1:
                violations.append(
                    Violation(
                        "applied_twice",
                        f"workspace {workspace}: job {job_id} applied {times} times, expected once",
                        workspace,
                        job_id,
                        1,
                        times,
                    )
                )
        for job_id in observed.replayed.get(workspace, []):
            violations.append(
                Violation(
                    "duplicate_reached_worker",
                    f"workspace {workspace}: job {job_id} reached the worker again after it was applied; "
                    "the claim table should have skipped it (only the worker's own guard kept it single)",
                    workspace,
                    job_id,
                    "skipped by the claim table",
                    "delivered to the worker",
                )
            )
        for job_id in actual:
            if job_id in poison:
                violations.append(
                    Violation(
                        "poison_applied",
                        f"workspace {workspace}: poison job {job_id} was applied; it must only fail",
                        workspace,
                        job_id,
                        "not applied",
                        "applied",
                    )
                )
        if actual != list(expected):
            at = _first_difference(expected, actual)
            want = expected[at] if at < len(expected) else "<end>"
            got = actual[at] if at < len(actual) else "<end>"
            violations.append(
                Violation(
                    "order",
                    f"workspace {workspace}: applied order differs at position {at}: expected {want}, "
                    f"got {got} ({len(expected)} jobs expected, {len(actual)} applied)",
                    workspace,
                    None,
                    list(expected),
                    actual,
                )
            )

    dead = Counter(observed.dead_letter_job_ids)
    for job_id, workspace in sorted(poison.items()):
        if job_id not in dead:
            violations.append(
                Violation(
                    "poison_not_dead_lettered",
                    f"workspace {workspace}: poison job {job_id} is not in the dead-letter queue",
                    workspace,
                    job_id,
                    "in DLQ",
                    "missing",
                )
            )
        status = observed.claim_status.get(job_id)
        if status != STATUS_FAILED:
            violations.append(
                Violation(
                    "poison_claim_not_failed",
                    f"workspace {workspace}: poison job {job_id} has claim status {status}, "
                    f"expected {STATUS_FAILED}",
                    workspace,
                    job_id,
                    STATUS_FAILED,
                    status,
                )
            )
    # The DLQ may hold messages of earlier runs or other producers: only this run's jobs are judged.
    healthy = {job_id for order in expectations.order.values() for job_id in order}
    for job_id in sorted(dead):
        if job_id in healthy:
            violations.append(
                Violation(
                    "unexpected_dead_letter",
                    f"job {job_id} is in the dead-letter queue but is not a poison job",
                    None,
                    job_id,
                    "not in DLQ",
                    "in DLQ",
                )
            )
    for workspace, expected in expectations.order.items():
        for job_id in expected:
            if job_id in observed.claim_status and observed.claim_status[job_id] != STATUS_SUCCEEDED:
                status = observed.claim_status[job_id]
                violations.append(
                    Violation(
                        "claim_not_succeeded",
                        f"workspace {workspace}: job {job_id} has claim status {status}, "
                        f"expected {STATUS_SUCCEEDED}",
                        workspace,
                        job_id,
                        STATUS_SUCCEEDED,
                        status,
                    )
                )
    left = observed.queue_visible + observed.queue_in_flight
    if left:
        violations.append(
            Violation(
                "queue_not_empty",
                f"main queue still holds {left} messages ({observed.queue_visible} visible, "
                f"{observed.queue_in_flight} in flight), expected 0",
                None,
                None,
                0,
                left,
            )
        )
    return violations


def _read_dead_letters(sqs: SQSClient, queue_url: str) -> list[str]:
    """Receive every DLQ message, note its jobId and make it visible again (the DLQ is left as found)."""
    job_ids: list[str] = []
    handles: list[str] = []
    empty = 0
    while empty < 2:
        response = sqs.receive_message(
            QueueUrl=queue_url, MaxNumberOfMessages=10, VisibilityTimeout=60, WaitTimeSeconds=0
        )
        messages = response.get("Messages", [])
        if not messages:
            empty += 1
            continue
        empty = 0
        for message in messages:
            handles.append(message["ReceiptHandle"])
            try:
                body = json.loads(message.get("Body", ""))
                job_ids.append(str(body["jobId"]) if isinstance(body, dict) else "<not a job>")
            except (ValueError, KeyError):
                job_ids.append("<not a job>")
    for start in range(0, len(handles), 10):
        sqs.change_message_visibility_batch(
            QueueUrl=queue_url,
            Entries=[
                {"Id": str(i), "ReceiptHandle": handle, "VisibilityTimeout": 0}
                for i, handle in enumerate(handles[start : start + 10])
            ],
        )
    return job_ids


def _scan_claims(dynamodb: DynamoDBClient, table: str) -> dict[str, str | None]:
    statuses: dict[str, str | None] = {}
    for page in dynamodb.get_paginator("scan").paginate(
        TableName=table,
        ProjectionExpression="#i, #s",
        ExpressionAttributeNames={"#i": ATTR_ID, "#s": ATTR_STATUS},
    ):
        for item in page.get("Items", []):
            job_id = item.get(ATTR_ID, {}).get("S")
            if job_id is not None:
                statuses[job_id] = item.get(ATTR_STATUS, {}).get("S")
    return statuses


def observe(
    workspaces: Sequence[str],
    *,
    resources: SampleResources,
    sqs_client: SQSClient,
    dynamodb_client: DynamoDBClient,
) -> Observed:
    """Read what a run left in the deployed queue, dead-letter queue and tables.

    Parameters
    ----------
    workspaces
        Workspace ids to read from the workspace table.
    resources
        The queue, dead-letter queue, claim table and workspace table of the run.
    sqs_client, dynamodb_client
        boto3 clients pointed at the deployment's endpoint.
    """
    applied: dict[str, list[str]] = {}
    replayed: dict[str, list[str]] = {}
    for workspace in workspaces:
        item = read_workspace(dynamodb_client, resources.workspace_table, workspace)
        if item is None:
            continue
        for attribute, found in ((APPLIED_ATTRIBUTE, applied), (REPLAYED_ATTRIBUTE, replayed)):
            if attribute in item:
                found[workspace] = [str(job_id) for job_id in item[attribute]]
    counts = queue_counts(sqs_client, resources.queue_url)
    return Observed(
        applied=applied,
        dead_letter_job_ids=_read_dead_letters(sqs_client, resources.dead_letter_queue_url),
        claim_status=_scan_claims(dynamodb_client, resources.claim_table),
        queue_visible=counts.visible,
        queue_in_flight=counts.in_flight,
        replayed=replayed,
    )
