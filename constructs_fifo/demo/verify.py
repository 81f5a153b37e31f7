"""Verify a demo run from what the deployed queues and tables hold, against what was sent.

Two halves: :func:`observe` reads the deployment through injected boto3 clients (each workspace's
state with :class:`~constructs_fifo.client.state_reader.GroupStateReader`, the notification table,
both dead-letter queues, both queues' parked groups and depths); :func:`verify` is pure and compares
those observations with what the workload sent. Neither reads the runtime's own bookkeeping (the
state's record of applied jobs, claims): the checks hold what each group holds against what its
producer sent. Every :class:`Violation` names the workspace or job, what was expected and what was
found.

Examples
--------
>>> expectations = Expectations(order={"ws-a": ["j1", "j2"]}, poison={})
>>> observed = Observed(applied={"ws-a": ["j2", "j1"]})
>>> [v.kind for v in verify(expectations, observed)]
['order']
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final, Literal

from boto3.dynamodb.types import TypeDeserializer

from constructs_fifo.client.parked import ParkedGroups
from constructs_fifo.client.state_reader import GroupStateReader
from constructs_fifo.demo.sample_app import (
    ACTIVITY_ATTRIBUTE,
    NOTIFICATION_KEY,
    REPLAYS_ATTRIBUTE,
    SampleQueue,
    SampleResources,
    group_of,
    workspace_of,
)
from constructs_fifo.runtime.aws_limits import SQS_MAX_BATCH_ENTRIES, SQS_MAX_RECEIVE_MESSAGES
from constructs_fifo.runtime.constants import DeadReason
from constructs_fifo.runtime.dead_jobs.letters import decode_letter_attributes
from constructs_fifo.stacks.counters import queue_counts

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient

    from constructs_fifo.demo.workload import Workload

__all__ = [
    "POISON_REASONS",
    "Expectations",
    "Observed",
    "ObservedDeadLetter",
    "Violation",
    "ViolationKind",
    "expectations_of",
    "observe",
    "read_dead_letters",
    "verify",
]

ViolationKind = Literal[
    "order",
    "applied_twice",
    "poison_applied",
    "last_attempt_not_applied",
    "poison_not_dead_lettered",
    "unexpected_dead_letter",
    "group_parked",
    "notification_missing",
    "notification_unexpected",
    "duplicate_reached_job",
    "queue_not_empty",
    "build_not_succeeded",
    "build_run_twice",
    "build_not_retried",
    "worker_stop_lost_work",
]

#: The dead-letter messages a poison job sent twice leaves: the job itself, dead because it raised a
#: permanent error, and its second copy, which follows it without running.
POISON_REASONS: Final = (DeadReason.COPY_OF_DEAD_JOB.value, DeadReason.PERMANENT.value)
_DESERIALIZER: Final = TypeDeserializer()


@dataclass(frozen=True)
class Expectations:
    """What a correct run leaves behind.

    Parameters
    ----------
    order
        For each workspace, the job ids it must apply, in order (the sent order without poison jobs).
    poison
        Each poison job id and its workspace: both of its copies must be in the dead-letter queue.
    last_attempt
        Each job id that fails until its last attempt, and its workspace: it must be applied.
    notifications
        Each notification job id and its workspace: each must be recorded once.
    """

    order: Mapping[str, Sequence[str]]
    poison: Mapping[str, str]
    last_attempt: Mapping[str, str] = field(default_factory=dict)
    notifications: Mapping[str, str] = field(default_factory=dict)

    def job_ids(self) -> set[str]:
        """Every job id of the run, on both queues."""
        ordered = {job_id for order in self.order.values() for job_id in order}
        return ordered | set(self.poison) | set(self.last_attempt) | set(self.notifications)

    def groups(self) -> set[str]:
        """Every message group of the run."""
        return {group_of(workspace) for workspace in self.order}


@dataclass(frozen=True)
class ObservedDeadLetter:
    """One message of a dead-letter queue, read by its triage attributes (body as a fallback)."""

    queue: str
    job_id: str | None
    group: str | None
    reason: str | None


@dataclass(frozen=True)
class Observed:
    """What the deployment holds after the run.

    Parameters
    ----------
    applied
        For each workspace found, the job ids of its state's ``activity``, in order; a workspace with
        no state is absent.
    dead_letters
        Every message of both dead-letter queues, including messages of other runs (ignored).
    parked
        For each queue (its label), the groups parked or resuming on it.
    notifications
        For each recorded notification of the run's workspaces: its ``replays`` (0 when none).
    queue_depths
        For each queue (its label): (visible, in flight) messages left.
    """

    applied: Mapping[str, Sequence[str]] = field(default_factory=dict)
    dead_letters: Sequence[ObservedDeadLetter] = ()
    parked: Mapping[str, Sequence[str]] = field(default_factory=dict)
    notifications: Mapping[str, int] = field(default_factory=dict)
    queue_depths: Mapping[str, tuple[int, int]] = field(default_factory=dict)


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
        last_attempt={job.job_id: job.workspace_id for job in workload.last_attempt_jobs},
        notifications={job.job_id: job.workspace_id for job in workload.notifications},
    )


def _first_difference(expected: Sequence[str], actual: Sequence[str]) -> int:
    for index, (want, got) in enumerate(zip(expected, actual, strict=False)):
        if want != got:
            return index
    return min(len(expected), len(actual))


def _workspaces(expectations: Expectations, observed: Observed) -> list[Violation]:
    violations: list[Violation] = []
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
        violations += [
            Violation(
                "poison_applied",
                f"workspace {workspace}: poison job {job_id} was applied; it must only fail",
                workspace,
                job_id,
                "not applied",
                "applied",
            )
            for job_id in actual
            if job_id in expectations.poison
        ]
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
    for job_id, workspace in sorted(expectations.last_attempt.items()):
        if job_id not in observed.applied.get(workspace, []):
            violations.append(
                Violation(
                    "last_attempt_not_applied",
                    f"workspace {workspace}: job {job_id}, which fails every attempt but its last, was "
                    "not applied; succeeding on its last attempt, it is not dead",
                    workspace,
                    job_id,
                    "applied",
                    "not applied",
                )
            )
    return violations


def _dead_letters(expectations: Expectations, observed: Observed) -> list[Violation]:
    violations: list[Violation] = []
    ours, groups = expectations.job_ids(), expectations.groups()
    mine = [d for d in observed.dead_letters if d.job_id in ours or d.group in groups]
    reasons: dict[str, list[str]] = {}
    for dead in mine:
        if dead.job_id is not None and dead.job_id in expectations.poison:
            reasons.setdefault(dead.job_id, []).append(str(dead.reason))
            continue
        violations.append(
            Violation(
                "unexpected_dead_letter",
                f"job {dead.job_id or '<no jobId>'} of group {dead.group} is in the dead-letter queue of "
                f"{dead.queue} (reason {dead.reason}) but is not a poison job",
                workspace_of(dead.group) if dead.group else None,
                dead.job_id,
                "not in a DLQ",
                f"in the DLQ of {dead.queue}",
            )
        )
    for job_id, workspace in sorted(expectations.poison.items()):
        found = sorted(reasons.get(job_id, []))
        if found != sorted(POISON_REASONS):
            violations.append(
                Violation(
                    "poison_not_dead_lettered",
                    f"workspace {workspace}: poison job {job_id} (sent twice) must be in the dead-letter "
                    f"queue once as {' and once as '.join(POISON_REASONS)}; found {found or 'nothing'}",
                    workspace,
                    job_id,
                    list(POISON_REASONS),
                    found,
                )
            )
    return violations


def _notifications(expectations: Expectations, observed: Observed) -> list[Violation]:
    violations: list[Violation] = []
    for job_id, workspace in sorted(expectations.notifications.items()):
        if job_id not in observed.notifications:
            violations.append(
                Violation(
                    "notification_missing",
                    f"workspace {workspace}: notification {job_id} was not recorded",
                    workspace,
                    job_id,
                    "recorded",
                    "missing",
                )
            )
        elif observed.notifications[job_id]:
            replays = observed.notifications[job_id]
            violations.append(
                Violation(
                    "duplicate_reached_job",
                    f"workspace {workspace}: notification {job_id} ran {replays} more time(s) after it was "
                    "recorded; the claim table should have skipped the copies (only the notifier's "
                    "conditional put kept it single)",
                    workspace,
                    job_id,
                    0,
                    replays,
                )
            )
    violations += [
        Violation(
            "notification_unexpected",
            f"notification {job_id} was recorded for a workspace of this run but was never sent",
            None,
            job_id,
            "not recorded",
            "recorded",
        )
        for job_id in sorted(set(observed.notifications) - set(expectations.notifications))
    ]
    return violations


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
    violations = _workspaces(expectations, observed)
    violations += _dead_letters(expectations, observed)
    violations += _notifications(expectations, observed)
    groups = expectations.groups()
    for queue, parked in sorted(observed.parked.items()):
        violations += [
            Violation(
                "group_parked",
                f"group {group} is still parked on {queue}; every group must end live",
                workspace_of(group),
                None,
                "live",
                "parked",
            )
            for group in parked
            if group in groups
        ]
    for queue, (visible, in_flight) in sorted(observed.queue_depths.items()):
        if visible + in_flight:
            violations.append(
                Violation(
                    "queue_not_empty",
                    f"queue {queue} still holds {visible + in_flight} messages ({visible} visible, "
                    f"{in_flight} in flight), expected 0",
                    None,
                    None,
                    0,
                    visible + in_flight,
                )
            )
    return violations


def _body_job_id(body: str) -> str | None:
    try:
        decoded = json.loads(body)
    except ValueError:
        return None
    job_id = decoded.get("jobId") if isinstance(decoded, dict) else None
    return str(job_id) if job_id is not None else None


def read_dead_letters(sqs: SQSClient, queue: SampleQueue) -> list[ObservedDeadLetter]:
    """Receive every message of ``queue``'s dead-letter queue and make it visible again (left as found).

    A FIFO queue hides a group's later messages while one is in flight, and hands out as many of one
    group as a receive holds (10), so a group with more than 10 dead messages is read in part; the
    demo's groups hold at most two.
    """
    found: list[ObservedDeadLetter] = []
    handles: list[str] = []
    empty = 0
    while empty < 2:
        messages = sqs.receive_message(
            QueueUrl=queue.dead_letter_queue_url,
            MaxNumberOfMessages=SQS_MAX_RECEIVE_MESSAGES,
            VisibilityTimeout=60,
            WaitTimeSeconds=0,
            MessageAttributeNames=["All"],
            MessageSystemAttributeNames=["MessageGroupId"],
        ).get("Messages", [])
        if not messages:
            empty += 1
            continue
        empty = 0
        for message in messages:
            handles.append(message["ReceiptHandle"])
            attributes = decode_letter_attributes(message.get("MessageAttributes") or {})
            job_id = attributes.job_id or _body_job_id(message.get("Body", ""))
            group = (message.get("Attributes") or {}).get("MessageGroupId")
            found.append(ObservedDeadLetter(queue.label, job_id, group, attributes.reason))
    for start in range(0, len(handles), SQS_MAX_BATCH_ENTRIES):
        sqs.change_message_visibility_batch(
            QueueUrl=queue.dead_letter_queue_url,
            Entries=[
                {"Id": str(i), "ReceiptHandle": handle, "VisibilityTimeout": 0}
                for i, handle in enumerate(handles[start : start + SQS_MAX_BATCH_ENTRIES])
            ],
        )
    return found


def _plain(value: Any) -> Any:
    """DynamoDB numbers come back as Decimal: whole numbers become int."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def _scan_notifications(dynamodb: DynamoDBClient, table: str, workspaces: set[str]) -> dict[str, int]:
    """``{notification id: replays}`` for the notifications of ``workspaces``."""
    recorded: dict[str, int] = {}
    for page in dynamodb.get_paginator("scan").paginate(TableName=table, ConsistentRead=True):
        for raw in page.get("Items", []):
            item = {key: _plain(_DESERIALIZER.deserialize(value)) for key, value in raw.items()}
            if item.get("workspaceId") in workspaces:
                recorded[str(item[NOTIFICATION_KEY])] = int(item.get(REPLAYS_ATTRIBUTE, 0))
    return recorded


def _activity(state: Mapping[str, Any] | None) -> list[str] | None:
    if state is None:
        return None
    return [str(entry.get("jobId")) for entry in state.get(ACTIVITY_ATTRIBUTE, []) if isinstance(entry, dict)]


def observe(
    workspaces: Sequence[str],
    *,
    resources: SampleResources,
    sqs_client: SQSClient,
    dynamodb_client: DynamoDBClient,
) -> Observed:
    """Read what a run left in the deployed queues, dead-letter queues and tables.

    Parameters
    ----------
    workspaces
        Workspace ids of the run.
    resources
        The sample app's two queues and its notification table.
    sqs_client, dynamodb_client
        boto3 clients pointed at the deployment's endpoint.
    """
    reader = GroupStateReader(resources.workspaces.group_table, dynamodb_client)
    applied: dict[str, list[str]] = {}
    for workspace in workspaces:
        activity = _activity(reader.get(group_of(workspace)))
        if activity is not None:
            applied[workspace] = activity
    queues = (resources.workspaces, resources.notifications)
    parked: dict[str, list[str]] = {}
    dead_letters: list[ObservedDeadLetter] = []
    depths: dict[str, tuple[int, int]] = {}
    for queue in queues:
        groups = ParkedGroups(
            group_table=queue.group_table,
            queue_url=queue.queue_url,
            dead_letter_queue_url=queue.dead_letter_queue_url,
            dynamodb=dynamodb_client,
            sqs=sqs_client,
        )
        parked[queue.label] = [header.group for header in groups.list_groups()]
        dead_letters += read_dead_letters(sqs_client, queue)
        counts = queue_counts(sqs_client, queue.queue_url)
        depths[queue.label] = (counts.visible, counts.in_flight)
    return Observed(
        applied=applied,
        dead_letters=dead_letters,
        parked=parked,
        notifications=_scan_notifications(dynamodb_client, resources.notification_table, set(workspaces)),
        queue_depths=depths,
    )
