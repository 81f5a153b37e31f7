"""Sending a dead job to the FIFO dead-letter queue, with attributes that make triage possible.

The runtime, not SQS's ``maxReceiveCount``, decides when a job is dead (see
:mod:`constructs_fifo.runtime.claim.processor`). A dead job's message is sent to the dead-letter queue in
its own message group with its body unchanged and these message attributes, so an operator can sort
the queue without parsing bodies: ``jobId``, ``jobType``, ``reason`` (a
:class:`~constructs_fifo.runtime.constants.DeadReason`), ``errorType``, ``error`` (cut to 1024
characters), ``attempts``, ``originalMessageId`` and ``deadAt`` (ISO 8601, UTC).

The deduplication id is derived from the original message id, so sending the same message twice
(a crash between this send and the delete of the source record) leaves one copy in the DLQ.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.clock import Clock, epoch_ms, system_clock
from constructs_fifo.runtime.constants import DeadReason
from constructs_fifo.runtime.error_text import truncate_error

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_sqs.client import SQSClient

__all__ = ["DeadJob", "DeadLetterSender", "dead_letter_attributes"]

_DEDUP_PREFIX = "dead-"


@dataclass(frozen=True)
class DeadJob:
    """What is known about a dead job: the message to forward and why it died.

    Attributes
    ----------
    body : str
        The original message body, forwarded unchanged.
    group : str
        The original MessageGroupId (the dead job stays in its group in the DLQ).
    message_id : str
        The original SQS messageId.
    reason : DeadReason
        Why it is dead.
    error_type, error : str
        The last error (type name and text).
    attempts : int
        Runs the job started (0 for a malformed body or a copy of a dead job that never ran).
    job_id, job_type : str or None
        The envelope's ``jobId`` and ``type`` when the body has them.
    dead_at_ms : int
        When it was declared dead (epoch ms).
    """

    body: str
    group: str
    message_id: str
    reason: DeadReason
    error_type: str
    error: str
    attempts: int
    job_id: str | None
    job_type: str | None
    dead_at_ms: int


def dead_letter_attributes(dead: DeadJob) -> dict[str, dict[str, str]]:
    """The SQS message attributes of a dead job (empty values are left out: SQS refuses them).

    Examples
    --------
    >>> dead = DeadJob(body="{}", group="ws#1", message_id="m-1", reason=DeadReason.PERMANENT,
    ...     error_type="PermanentJobError", error="no diff", attempts=1, job_id="j-1",
    ...     job_type="apply_patch", dead_at_ms=0)
    >>> dead_letter_attributes(dead)["reason"]
    {'DataType': 'String', 'StringValue': 'PERMANENT'}
    """
    values: dict[str, tuple[str, str]] = {
        "jobId": ("String", dead.job_id or ""),
        "jobType": ("String", dead.job_type or ""),
        "reason": ("String", dead.reason.value),
        "errorType": ("String", dead.error_type),
        "error": ("String", truncate_error(dead.error)),
        "attempts": ("Number", str(dead.attempts)),
        "originalMessageId": ("String", dead.message_id),
        "deadAt": ("String", datetime.fromtimestamp(dead.dead_at_ms / 1000, tz=UTC).isoformat()),
    }
    return {
        name: {"DataType": data_type, "StringValue": value}
        for name, (data_type, value) in values.items()
        if value
    }


class DeadLetterSender:
    """Sends dead jobs to the FIFO dead-letter queue (one SendMessage each); raises on failure.

    Parameters
    ----------
    client : SQSClient
        A boto3 SQS client (injected).
    queue_url : str
        The FIFO dead-letter queue.
    clock : Callable[[], float]
        Epoch seconds, for ``deadAt``.
    """

    def __init__(self, client: SQSClient, queue_url: str, *, clock: Clock = system_clock) -> None:
        self.queue_url = queue_url
        self._client = client
        self._clock = clock

    def now_ms(self) -> int:
        """The sender's clock in epoch milliseconds."""
        return epoch_ms(self._clock)

    def send(self, dead: DeadJob) -> str:
        """Send one dead job; return the DLQ's message id.

        Raises
        ------
        botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError
            The send failed: the caller keeps the source record (it is reported failed) so nothing
            is lost, and the next delivery sends it again.
        """
        params: dict[str, Any] = {
            "QueueUrl": self.queue_url,
            "MessageBody": dead.body or "(empty body)",
            "MessageGroupId": dead.group,
            "MessageDeduplicationId": f"{_DEDUP_PREFIX}{dead.message_id}"[:128],
            "MessageAttributes": dead_letter_attributes(dead),
        }
        response = self._client.send_message(**params)
        return str(response.get("MessageId", ""))
