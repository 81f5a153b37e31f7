"""How many messages an SQS queue holds, from its approximate counters (GetQueueAttributes).

The drain runs until these are zero, the demo shows its progress with them, and the verifier checks
that the main queue ended empty.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_sqs.client import SQSClient

__all__ = ["QueueCounts", "queue_counts"]


@dataclass(frozen=True)
class QueueCounts:
    """A queue's approximate counters.

    Attributes
    ----------
    visible
        ``ApproximateNumberOfMessages``: ready to be received.
    in_flight
        ``ApproximateNumberOfMessagesNotVisible``: received and not yet deleted (or waiting out a
        visibility timeout).
    delayed
        ``ApproximateNumberOfMessagesDelayed``.
    """

    visible: int
    in_flight: int
    delayed: int = 0

    @property
    def total(self) -> int:
        """Every message the queue still holds."""
        return self.visible + self.in_flight + self.delayed


def queue_counts(sqs_client: SQSClient, queue_url: str) -> QueueCounts:
    """Read the counters of the queue at ``queue_url``."""
    attributes = sqs_client.get_queue_attributes(
        QueueUrl=queue_url,
        AttributeNames=[
            "ApproximateNumberOfMessages",
            "ApproximateNumberOfMessagesNotVisible",
            "ApproximateNumberOfMessagesDelayed",
        ],
    ).get("Attributes", {})
    return QueueCounts(
        visible=int(attributes.get("ApproximateNumberOfMessages", "0")),
        in_flight=int(attributes.get("ApproximateNumberOfMessagesNotVisible", "0")),
        delayed=int(attributes.get("ApproximateNumberOfMessagesDelayed", "0")),
    )
