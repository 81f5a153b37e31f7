"""``status``: one queue's health at a glance, from SQS's counters, CloudWatch and the tables.

Per queue: visible, in flight and delayed messages (``GetQueueAttributes``), the age of the oldest
message, the DLQ's depth, the parked groups, the open sequence gaps (state mode), the ``IN_FLIGHT``
claims whose lease expired (claim mode: crashed workers), the alarms in ALARM whose metric names the
queue, its DLQ or its function, the staging queues that feed it and their dead-letter queues (an
``EventBusIngress``: :mod:`constructs_fifo.ops.staging`), and the groups with the largest backlog
where the tables know it (kept records of parked groups, buffered jobs). SQS does not count messages
per group, so a live group's backlog in the queue is unknown. A paced queue shows its limit: the
construct's numbers and key, and the override ``pace set`` wrote, if any (one ``GetItem``).

The age of the oldest message
-----------------------------
SQS has no attribute for it: CloudWatch's ``ApproximateAgeOfOldestMessage`` (the last
:data:`AGE_WINDOW_SECONDS`) is the only reading that leaves the messages alone. Without a datapoint:

* an empty queue (no visible, in-flight or delayed message) has no oldest message: the age is 0, as
  CloudWatch reports it for an empty queue;
* otherwise it is unknown, and ``status`` says why (:data:`AGE_UNKNOWN`): an emulator publishes no
  metrics (and on AWS the metric appears a few minutes after traffic starts); reading a message's
  ``SentTimestamp`` takes a ReceiveMessage, which hides the message from the function for its visibility
  timeout and counts toward ``maxReceiveCount`` (``status`` never receives from the queue).

What the tables know is shown beside it: the oldest *parked* job (its ``SentTimestamp``, kept with the
record). A parked group's jobs have left the queue for the group table, so ``ApproximateAgeOfOldestMessage``
never counts them: a group parked for a day reads as a young queue.

The parked groups and gaps come from a Scan of the group table, the expired claims from a Scan of the
claim table: an operator's command, never the runtime's path.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from constructs_fifo.ops.listing import group_rows
from constructs_fifo.ops.staging import StagingQueue, staging_queues
from constructs_fifo.ops.steering.jobs import steering_of
from constructs_fifo.ops.steering.pace import construct_pace
from constructs_fifo.ops.target import STATE_MODE
from constructs_fifo.runtime.constants import ATTR_LEASE_EXPIRES_AT, ATTR_STATUS, STATUS_IN_FLIGHT
from constructs_fifo.runtime.dead_jobs.park_records import HELD, PARKED, RESUMING
from constructs_fifo.runtime.state.storage.book import decode_cancelled
from constructs_fifo.runtime.steering.names import (
    STATE_ATTR_CANCELLED,
    STATUS_CANCELLED,
)
from constructs_fifo.stacks.counters import queue_counts

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.ops.target import OpsQueue

__all__ = [
    "AGE_FROM_CLOUDWATCH",
    "AGE_FROM_EMPTY_QUEUE",
    "AGE_UNKNOWN",
    "AGE_WINDOW_SECONDS",
    "BACKLOG_SHOWN",
    "QueueStatus",
    "queue_status",
]

#: Groups ``status`` lists by backlog.
BACKLOG_SHOWN: Final = 5
#: How far back ``status`` looks for the age-of-oldest-message metric.
AGE_WINDOW_SECONDS: Final = 600
#: Why the age of the oldest message is unknown without a CloudWatch datapoint (``status`` prints it).
AGE_UNKNOWN: Final = (
    "no CloudWatch ApproximateAgeOfOldestMessage datapoint in the last 10 minutes (an emulator publishes "
    "no metrics); SQS tells a message's age only to a ReceiveMessage, which would hide it from the "
    "function and count toward maxReceiveCount, so status does not receive"
)
#: Where the age of the oldest message came from.
AGE_FROM_CLOUDWATCH: Final = "cloudwatch"
AGE_FROM_EMPTY_QUEUE: Final = "empty queue"


@dataclass
class QueueStatus:
    """What ``status`` shows for one queue (``to_dict`` is its ``--json`` document)."""

    queue: str
    mode: str
    queue_name: str
    visible: int
    in_flight: int
    delayed: int
    oldest_age_seconds: float | None
    dead_letter_depth: int | None
    oldest_age_source: str | None = None
    oldest_parked: tuple[str, float] | None = None
    parked_groups: list[str] = field(default_factory=list)
    resuming_groups: list[str] = field(default_factory=list)
    #: Held groups (``groups hold``) and how long each has been held, in seconds: apart from the parked
    #: ones (a hold is an operator's decision, not a dead job, and fires no parked-groups alarm).
    held_groups: list[tuple[str, float]] = field(default_factory=list)
    gap_groups: list[str] = field(default_factory=list)
    expired_claims: list[str] = field(default_factory=list)
    #: Cancelled jobs the tables remember: claim mode, CANCELLED claims (until their TTL); state mode,
    #: the groups' cancelled entries (the last ``MAX_CANCELLED_IDS`` of each group).
    cancelled_jobs: int = 0
    alarms: list[str] = field(default_factory=list)
    backlog: list[tuple[str, int]] = field(default_factory=list)
    staging: list[StagingQueue] = field(default_factory=list)
    #: The pace limit: ``None`` (not paced), ``"unknown"`` (the consumer's environment was not read), or
    #: ``pace show``'s document (the construct's numbers and key, and the override in force or ``None``).
    pace: dict[str, Any] | str | None = None

    @property
    def healthy(self) -> bool:
        return not (
            any(staged.dead_letter_depth for staged in self.staging)
            or self.parked_groups
            or self.gap_groups
            or self.expired_claims
            or self.alarms
            or self.dead_letter_depth
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "queue": self.queue,
            "mode": self.mode,
            "queueName": self.queue_name,
            "visible": self.visible,
            "inFlight": self.in_flight,
            "delayed": self.delayed,
            "oldestMessageAgeSeconds": self.oldest_age_seconds,
            "oldestMessageAgeSource": self.oldest_age_source,
            "oldestMessageAgeUnknownBecause": None if self.oldest_age_source else AGE_UNKNOWN,
            "oldestParkedJob": None
            if self.oldest_parked is None
            else {"group": self.oldest_parked[0], "ageSeconds": self.oldest_parked[1]},
            "deadLetterQueueDepth": self.dead_letter_depth,
            "parkedGroups": self.parked_groups,
            "resumingGroups": self.resuming_groups,
            "heldGroups": [{"group": group, "heldSeconds": age} for group, age in self.held_groups],
            "openSequenceGaps": self.gap_groups,
            "expiredInFlightClaims": self.expired_claims,
            "cancelledJobs": self.cancelled_jobs,
            "alarmsInAlarm": self.alarms,
            "largestBacklogs": [{"group": group, "jobs": jobs} for group, jobs in self.backlog],
            "stagingQueues": [staged.to_dict() for staged in self.staging],
            "pace": self.pace,
        }


def _oldest_age(ops: OpsQueue) -> float | None:
    if ops.cloudwatch is None:
        return None
    now = dt.datetime.fromtimestamp(ops.clock(), tz=dt.UTC)
    response = ops.cloudwatch.get_metric_statistics(
        Namespace="AWS/SQS",
        MetricName="ApproximateAgeOfOldestMessage",
        Dimensions=[{"Name": "QueueName", "Value": ops.deployed.queue_name}],
        StartTime=now - dt.timedelta(seconds=AGE_WINDOW_SECONDS),
        EndTime=now,
        Period=60,
        Statistics=["Maximum"],
    )
    points = sorted(response.get("Datapoints", []), key=lambda point: point["Timestamp"])
    return float(points[-1]["Maximum"]) if points else None


def _oldest_parked(ops: OpsQueue, groups: list[str]) -> tuple[str, float] | None:
    """The parked group whose first kept job was sent longest ago, and that job's age in seconds."""
    operator = ops.parked
    if operator is None:
        return None
    oldest: tuple[str, float] | None = None
    for group in groups:
        kept = operator.kept(group, limit=1)
        header = operator.get(group) if not kept else None
        sent = kept[0].record.get("attributes", {}).get("SentTimestamp") if kept else None
        sent_ms = _number(sent) if sent is not None else None
        if sent_ms is None and header is not None:
            sent_ms = float(header.dead.at_ms)
        if sent_ms is None:
            continue
        age = round(max(0.0, ops.clock() - sent_ms / 1000), 1)
        if oldest is None or age > oldest[1]:
            oldest = (group, age)
    return oldest


def _held(ops: OpsQueue, groups: list[str]) -> list[tuple[str, float]]:
    """Each held group and the seconds since it was held (its header records when)."""
    operator = ops.parked
    held: list[tuple[str, float]] = []
    for group in groups:
        header = operator.get(group) if operator is not None else None
        if header is not None:
            held.append((group, round(max(0.0, ops.clock() - header.dead.at_ms / 1000), 1)))
    return held


def _number(value: object) -> float | None:
    try:
        return float(str(value))
    except ValueError:
        return None


def _alarms(ops: OpsQueue) -> list[str]:
    if ops.cloudwatch is None:
        return []
    names = {ops.deployed.queue_name, ops.label}
    if ops.deployed.function_name:
        names.add(ops.deployed.function_name)
    if ops.deployed.dead_letter_queue_url:
        names.add(ops.deployed.dead_letter_queue_url.rsplit("/", 1)[-1])
    firing: list[str] = []
    for page in ops.cloudwatch.get_paginator("describe_alarms").paginate(StateValue="ALARM"):
        for alarm in page.get("MetricAlarms", []):
            values = {dimension.get("Value") for dimension in alarm.get("Dimensions", [])}
            if values & names:
                firing.append(alarm["AlarmName"])
    return sorted(firing)


def _claims_of_note(ops: OpsQueue) -> tuple[list[str], int]:
    """One scan of the claim table (claim mode): IN_FLIGHT claims whose lease expired, and how many
    claims are CANCELLED; state mode: no expired claims, and the groups' cancelled entries."""
    table = ops.deployed.claim_table
    if not table:
        return [], _cancelled_in_states(ops)
    params: dict[str, Any] = {
        "TableName": table,
        "FilterExpression": "(#status = :in_flight AND #lease < :now) OR #status = :cancelled",
        "ExpressionAttributeNames": {"#status": ATTR_STATUS, "#lease": ATTR_LEASE_EXPIRES_AT},
        "ExpressionAttributeValues": {
            ":in_flight": {"S": STATUS_IN_FLIGHT},
            ":cancelled": {"S": STATUS_CANCELLED},
            ":now": {"N": str(ops.now_ms())},
        },
        "ProjectionExpression": "id, #status",
    }
    found: list[str] = []
    cancelled = 0
    while True:
        response = ops.dynamodb.scan(**params)
        for item in response.get("Items", []):
            if item[ATTR_STATUS]["S"] == STATUS_CANCELLED:
                cancelled += 1
            else:
                found.append(item["id"]["S"])
        if "LastEvaluatedKey" not in response:
            return sorted(found), cancelled
        params["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def _cancelled_in_states(ops: OpsQueue) -> int:
    """State mode: the cancelled entries of every group's state item (a scan of the items that have one)."""
    table = ops.deployed.group_table
    if not table or ops.mode != STATE_MODE:
        return 0
    params: dict[str, Any] = {
        "TableName": table,
        "FilterExpression": "attribute_exists(#cancelled)",
        "ExpressionAttributeNames": {"#cancelled": STATE_ATTR_CANCELLED},
        "ProjectionExpression": "#cancelled",
    }
    total = 0
    while True:
        response = ops.dynamodb.scan(**params)
        total += sum(
            len(decode_cancelled(item[STATE_ATTR_CANCELLED]["S"])) for item in response.get("Items", [])
        )
        if "LastEvaluatedKey" not in response:
            return total
        params["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def queue_status(ops: OpsQueue) -> QueueStatus:
    """Read everything ``status`` shows for one queue."""
    counts = queue_counts(ops.sqs, ops.deployed.queue_url)
    dlq = ops.deployed.dead_letter_queue_url
    rows = group_rows(ops)
    backlog = sorted(
        ((row.group, row.kept + row.buffered) for row in rows if row.kept + row.buffered),
        key=lambda pair: (-pair[1], pair[0]),
    )
    age = _oldest_age(ops)
    source = AGE_FROM_CLOUDWATCH if age is not None else None
    if age is None and counts.visible + counts.in_flight + counts.delayed == 0:
        age, source = 0.0, AGE_FROM_EMPTY_QUEUE
    # a resuming group goes on by itself (its kept jobs replay): parked is what waits for an operator
    parked = [row.group for row in rows if row.status == PARKED]
    resuming = [row.group for row in rows if row.status == RESUMING]
    expired, cancelled = _claims_of_note(ops)
    return QueueStatus(
        queue=ops.label,
        mode=ops.mode,
        queue_name=ops.deployed.queue_name,
        visible=counts.visible,
        in_flight=counts.in_flight,
        delayed=counts.delayed,
        oldest_age_seconds=age,
        oldest_age_source=source,
        oldest_parked=_oldest_parked(ops, parked + resuming),
        dead_letter_depth=None if not dlq else queue_counts(ops.sqs, dlq).total,
        parked_groups=parked,
        resuming_groups=resuming,
        held_groups=_held(ops, [row.group for row in rows if row.status == HELD]),
        gap_groups=[
            row.group for row in rows if row.status == "GAP" or (row.buffered and row.gap_open_since_ms)
        ],
        expired_claims=expired,
        cancelled_jobs=cancelled,
        alarms=_alarms(ops),
        backlog=backlog[:BACKLOG_SHOWN],
        staging=staging_queues(ops),
        pace=_pace(ops),
    )


def _pace(ops: OpsQueue) -> dict[str, Any] | str | None:
    """The construct's pace and the override in force (one read, only for a paced queue)."""
    construct = construct_pace(ops)
    if not isinstance(construct, dict):
        return construct
    return {"construct": construct, "override": steering_of(ops).pace()}
