"""``constructs-fifo describe``: what a deployed OrderedAgentQueue is made of, read-only.

The queue is found as ``drain`` and the operations commands find it
(:func:`~constructs_fifo.stacks.deployed.find_queues`: the stack's resources, its functions' SQS event
source mappings), so it works whether or not the stack has CfnOutputs. Every URL is the one the
endpoint serves (SQS ``GetQueueUrl``): deployed to the emulator, CloudFormation reports a queue's URL
as ``https://sqs.us-east-1.amazonaws.com/...``, which no client can reach there;
:func:`served_outputs` puts the served URL in place of such a value in the stack's outputs too.

Calls made: CloudFormation ListStackResources, GetTemplate and DescribeStacks; Lambda
ListEventSourceMappings and GetFunctionConfiguration; SQS GetQueueUrl and GetQueueAttributes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from botocore.exceptions import ClientError

from constructs_fifo.runtime.constants import ENV_MODE
from constructs_fifo.stacks.deployed import DeployedQueue

__all__ = ["QueueDescription", "StackDescription", "describe", "served_outputs"]

#: ``https://sqs.<region>.amazonaws.com/<account>/<name>`` (and the legacy ``queue.amazonaws.com``).
_AWS_QUEUE_URL: Final = re.compile(
    r"^https://(?:sqs\.[a-z0-9-]+|queue)\.amazonaws\.com(?:\.cn)?/(\d{12})/([^/]+)$"
)


@dataclass(frozen=True)
class QueueDescription:
    """A deployed queue: its resources and the event source mapping that feeds its function."""

    queue: DeployedQueue
    mode: str | None
    mapping: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the keys of ``deploy --queue`` plus ``mode`` and ``eventSourceMapping``."""
        return {**self.queue.to_dict(), "mode": self.mode, "eventSourceMapping": dict(self.mapping)}

    def rows(self) -> list[tuple[str, str]]:
        """``(label, value)`` lines for the text form, every value whole (a URL or an ARN is pasted)."""
        queue = self.queue
        return [
            ("mode", self.mode or "-"),
            ("queue URL", queue.queue_url),
            ("queue", queue.queue_name),
            ("queue ARN", queue.queue_arn),
            ("DLQ URL", queue.dead_letter_queue_url or "-"),
            ("DLQ ARN", queue.dead_letter_queue_arn or "-"),
            ("function", queue.function_name or "-"),
            ("task definition", queue.task_definition or "-"),
            ("mapping", str(self.mapping.get("uuid") or "-")),
            ("mapping state", str(self.mapping.get("state") or "-")),
            ("batch size", str(self.mapping.get("batchSize") or "-")),
            ("max concurrency", str(self.mapping.get("maximumConcurrency") or "-")),
            ("claim table", queue.claim_table or "-"),
            ("group table", queue.group_table or "-"),
        ]


@dataclass(frozen=True)
class StackDescription:
    """The queues of one stack that a ``describe`` shows, and the stack's outputs (served URLs)."""

    stack: str
    queues: Sequence[QueueDescription]
    outputs: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """``describe --json``: ``{"stack", "queues": [...], "outputs": {...}}``."""
        return {
            "stack": self.stack,
            "queues": [queue.to_dict() for queue in self.queues],
            "outputs": dict(self.outputs),
        }


def _mapping(queue: DeployedQueue, lambda_client: Any) -> dict[str, Any]:
    if queue.function_name is None:  # container workers poll the queue themselves: no mapping
        return {}
    mappings = lambda_client.list_event_source_mappings(FunctionName=queue.function_name).get(
        "EventSourceMappings", []
    )
    found = next((m for m in mappings if m.get("EventSourceArn") == queue.queue_arn), None)
    if found is None:
        return {}
    return {
        "uuid": found.get("UUID"),
        "state": found.get("State"),
        "batchSize": found.get("BatchSize"),
        "maximumConcurrency": (found.get("ScalingConfig") or {}).get("MaximumConcurrency"),
    }


def served_outputs(outputs: Mapping[str, str], sqs_client: Any) -> dict[str, str]:
    """``outputs`` with each AWS-form queue URL replaced by the URL the endpoint serves for that queue.

    Against AWS the two are the same; against the emulator the served one is
    ``http://localhost:4566/123456789012/<name>``. A value naming no queue the endpoint knows is kept.
    """
    served = dict(outputs)
    for key, value in outputs.items():
        match = _AWS_QUEUE_URL.match(value)
        if match is None:
            continue
        account, name = match.groups()
        try:
            served[key] = sqs_client.get_queue_url(QueueName=name, QueueOwnerAWSAccountId=account)["QueueUrl"]
        except ClientError:
            continue
    return served


def _stack_outputs(stack: str, cloudformation_client: Any) -> dict[str, str]:
    stacks = cloudformation_client.describe_stacks(StackName=stack).get("Stacks", [])
    return {
        o["OutputKey"]: o["OutputValue"]
        for found in stacks[:1]
        for o in found.get("Outputs", [])
        if "OutputKey" in o and "OutputValue" in o
    }


def describe(
    stack: str,
    queues: Sequence[DeployedQueue],
    *,
    cloudformation_client: Any,
    lambda_client: Any,
    sqs_client: Any,
) -> StackDescription:
    """The :class:`StackDescription` of ``queues`` of ``stack`` (read-only; see the module docstring)."""
    return StackDescription(
        stack=stack,
        queues=[
            QueueDescription(
                queue=queue,
                mode=queue.function_environment.get(ENV_MODE),
                mapping=_mapping(queue, lambda_client),
            )
            for queue in queues
        ],
        outputs=served_outputs(_stack_outputs(stack, cloudformation_client), sqs_client),
    )
