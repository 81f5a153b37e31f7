"""Typed shapes of what Lambda hands the runtime and what the runtime hands back.

Only the fields the runtime reads are required by the code; the rest are listed so that tests can
build realistic records and type checkers can see mistakes.
"""

from __future__ import annotations

from typing import Any, Protocol, TypedDict

__all__ = [
    "BatchItemFailure",
    "BatchResponse",
    "LambdaContext",
    "SQSEvent",
    "SQSRecord",
    "SQSRecordAttributes",
]


class SQSRecordAttributes(TypedDict, total=False):
    """The ``attributes`` of one SQS record (all values are strings, as Lambda sends them)."""

    ApproximateReceiveCount: str
    ApproximateFirstReceiveTimestamp: str
    SentTimestamp: str
    SenderId: str
    MessageGroupId: str
    MessageDeduplicationId: str
    SequenceNumber: str


class SQSRecord(TypedDict, total=False):
    """One record of a Lambda SQS event."""

    messageId: str
    receiptHandle: str
    body: str
    attributes: SQSRecordAttributes
    messageAttributes: dict[str, Any]
    md5OfBody: str
    eventSource: str
    eventSourceARN: str
    awsRegion: str


class SQSEvent(TypedDict):
    """The event Lambda passes for an SQS event source mapping."""

    Records: list[SQSRecord]


class BatchItemFailure(TypedDict):
    """One entry of ``batchItemFailures``: the ``messageId`` of a record to keep on the queue."""

    itemIdentifier: str


class BatchResponse(TypedDict):
    """The partial-batch response (ReportBatchItemFailures): every listed record stays on the queue."""

    batchItemFailures: list[BatchItemFailure]


class LambdaContext(Protocol):
    """The part of the Lambda context object the runtime uses."""

    def get_remaining_time_in_millis(self) -> int:
        """Milliseconds left before Lambda stops the invocation."""
        ...
