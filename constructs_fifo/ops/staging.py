"""The staging queues that feed a queue (an ``EventBusIngress``'s), and their dead-letter queues.

An ingress from a bus stages its events in a standard queue that a pipe moves into the FIFO queue
(``docs/events.md``); events the rule or the pipe could not deliver wait in the staging queue's
dead-letter queue, with ``UndeliveredAlarm`` on it. ``status`` shows both beside the queue they feed,
found as deployed: the stack's ``AWS::Pipes::Pipe`` resources (DescribeStackResources), each read with
DescribePipe, whose target is this queue; the staging queue is the pipe's source, its dead-letter
queue the one its redrive policy names.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from botocore.exceptions import BotoCoreError, ClientError

from constructs_fifo.stacks.counters import queue_counts

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.ops.target import OpsQueue

__all__ = ["PIPE_RESOURCE_TYPE", "StagingQueue", "staging_queues"]

#: The resource type of a pipe in a stack.
PIPE_RESOURCE_TYPE: Final = "AWS::Pipes::Pipe"


@dataclass(frozen=True, slots=True)
class StagingQueue:
    """One staging queue feeding the queue, and its dead-letter queue (depths: every message)."""

    pipe: str
    queue_name: str
    depth: int
    dead_letter_queue_name: str | None
    dead_letter_depth: int | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "pipe": self.pipe,
            "queueName": self.queue_name,
            "depth": self.depth,
            "deadLetterQueueName": self.dead_letter_queue_name,
            "deadLetterQueueDepth": self.dead_letter_depth,
        }


def staging_queues(ops: OpsQueue) -> list[StagingQueue]:
    """The staging queues whose pipe targets ``ops``'s queue (none without the clients to look)."""
    if ops.cloudformation is None or ops.pipes is None:
        return []
    try:
        resources = ops.cloudformation.describe_stack_resources(StackName=ops.deployed.stack)[
            "StackResources"
        ]
    except (ClientError, BotoCoreError):
        return []
    found: list[StagingQueue] = []
    for resource in resources:
        if resource.get("ResourceType") != PIPE_RESOURCE_TYPE or not resource.get("PhysicalResourceId"):
            continue
        name = str(resource["PhysicalResourceId"]).rsplit("/", 1)[-1]
        pipe = ops.pipes.describe_pipe(Name=name)
        source = str(pipe.get("Source", ""))
        if pipe.get("Target") != ops.deployed.queue_arn or not source.startswith("arn:aws:sqs:"):
            continue
        found.append(_staging(ops, name, source))
    return sorted(found, key=lambda staging: staging.queue_name)


def _staging(ops: OpsQueue, pipe: str, source_arn: str) -> StagingQueue:
    queue_name = source_arn.rsplit(":", 1)[-1]
    url = ops.sqs.get_queue_url(QueueName=queue_name)["QueueUrl"]
    redrive = ops.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["RedrivePolicy"]).get(
        "Attributes", {}
    )
    target = json.loads(redrive.get("RedrivePolicy") or "{}").get("deadLetterTargetArn")
    dlq_name = str(target).rsplit(":", 1)[-1] if target else None
    dlq_depth = None
    if dlq_name is not None:
        dlq_url = ops.sqs.get_queue_url(QueueName=dlq_name)["QueueUrl"]
        dlq_depth = queue_counts(ops.sqs, dlq_url).total
    return StagingQueue(pipe, queue_name, queue_counts(ops.sqs, url).total, dlq_name, dlq_depth)
