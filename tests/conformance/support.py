"""Types and helpers of the conformance suite (fixtures are in conftest.py)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import boto3

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient
    from mypy_boto3_sqs.type_defs import MessageTypeDef

__all__ = [
    "RAW_ENV",
    "FifoQueue",
    "QueueFactory",
    "Target",
    "Timing",
    "dead_letter",
    "drain_bodies",
    "receive",
    "redrive_policy",
    "send",
    "visible_count",
]


RAW_ENV = "CONSTRUCTS_FIFO_CONFORMANCE_RAW"
"""Set to 1 to serve moto without the fidelity patches (shows what they correct)."""


@dataclass(frozen=True)
class Target:
    """Where the suite runs: ``endpoint_url`` is ``None`` on real AWS."""

    on_aws: bool
    session: boto3.session.Session
    endpoint_url: str | None
    run_id: str

    def client(self, service: str) -> Any:
        return self.session.client(service, endpoint_url=self.endpoint_url)  # type: ignore[call-overload]


@dataclass(frozen=True)
class Timing:
    """How long to wait before concluding "nothing (more) will arrive".

    The emulator answers at once; real AWS is distributed and eventually consistent.
    """

    empty_wait: int
    settle: float
    purge_wait: float = 0.0
    """How long a PurgeQueue may go on deleting (AWS: API_PurgeQueue, "up to 60 seconds")."""


@dataclass(frozen=True)
class FifoQueue:
    url: str
    arn: str


QueueFactory = Callable[..., FifoQueue]


def redrive_policy(dlq: FifoQueue, max_receive_count: int) -> str:
    return json.dumps({"deadLetterTargetArn": dlq.arn, "maxReceiveCount": max_receive_count})


def send(sqs: SQSClient, queue: FifoQueue, body: str, group: str, dedup: str | None = None) -> dict[str, Any]:
    """SendMessage with the body as deduplication id unless one is given."""
    response = sqs.send_message(
        QueueUrl=queue.url, MessageBody=body, MessageGroupId=group, MessageDeduplicationId=dedup or body
    )
    return dict(response)


def receive(
    sqs: SQSClient, queue: FifoQueue, max_messages: int = 10, wait: int = 1, visibility: int | None = None
) -> list[MessageTypeDef]:
    kwargs: dict[str, Any] = {
        "QueueUrl": queue.url,
        "MaxNumberOfMessages": max_messages,
        "WaitTimeSeconds": wait,
        "MessageSystemAttributeNames": ["All"],
    }
    if visibility is not None:
        kwargs["VisibilityTimeout"] = visibility
    return list(sqs.receive_message(**kwargs).get("Messages", []))


def drain_bodies(
    sqs: SQSClient, queue: FifoQueue, expected: int, timeout: float = 20.0, wait: int = 1
) -> list[str]:
    """Receive and delete until ``expected`` messages came (or the timeout); bodies in receive order."""
    bodies: list[str] = []
    deadline = time.monotonic() + timeout
    while len(bodies) < expected and time.monotonic() < deadline:
        for message in receive(sqs, queue, wait=wait):
            bodies.append(message["Body"])
            sqs.delete_message(QueueUrl=queue.url, ReceiptHandle=message["ReceiptHandle"])
    return bodies


def visible_count(sqs: SQSClient, queue: FifoQueue) -> int:
    """The queue's ApproximateNumberOfMessages (exact on the emulator, approximate on AWS)."""
    attributes = sqs.get_queue_attributes(QueueUrl=queue.url, AttributeNames=["ApproximateNumberOfMessages"])
    return int(attributes["Attributes"]["ApproximateNumberOfMessages"])


def dead_letter(sqs: SQSClient, source: FifoQueue, dlq: FifoQueue, count: int, timeout: float = 30.0) -> None:
    """Receive ``source`` (visibility 0, never deleting) until its DLQ holds ``count`` messages.

    ``source``'s redrive policy must name ``dlq`` with ``maxReceiveCount`` 1: SQS moves a message on
    the receive after its count passed it.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sqs.receive_message(QueueUrl=source.url, MaxNumberOfMessages=10, VisibilityTimeout=0)
        if visible_count(sqs, dlq) >= count:
            return
    raise AssertionError(f"the DLQ holds {visible_count(sqs, dlq)} messages after {timeout} s, not {count}")
