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

from constructs_fifo.runtime.aws_limits import SQS_MAX_ID_LENGTH
from constructs_fifo.runtime.clock import Clock, epoch_ms, system_clock
from constructs_fifo.runtime.dead_jobs.record import DeadJob
from constructs_fifo.runtime.error_text import truncate_error

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_sqs.client import SQSClient

__all__ = ["DeadLetter", "DeadLetterSender", "dead_letter_attributes"]

_DEDUP_PREFIX = "dead-"


@dataclass(frozen=True)
class DeadLetter:
    """A dead job's message to the dead-letter queue: its body, its group and why it died.

    Attributes
    ----------
    body : str
        The original message body, forwarded unchanged.
    group : str
        The original MessageGroupId (the dead job stays in its group in the DLQ).
    dead : DeadJob
        Why it died (its ``message_id`` is the original SQS messageId, its ``at_ms`` when it was
        declared dead).
    """

    body: str
    group: str
    dead: DeadJob


def dead_letter_attributes(dead: DeadJob) -> dict[str, dict[str, str]]:
    """The SQS message attributes of a dead job (empty values are left out: SQS refuses them).

    Examples
    --------
    >>> dead = DeadJob("j-1", "apply_patch", "PermanentJobError", "no diff", 1, "m-1", 0)
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
        "deadAt": ("String", datetime.fromtimestamp(dead.at_ms / 1000, tz=UTC).isoformat()),
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

    def send(self, letter: DeadLetter) -> str:
        """Send one dead job's letter; return the DLQ's message id.

        Raises
        ------
        botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError
            The send failed: the caller keeps the source record (it is reported failed) so nothing
            is lost, and the next delivery sends it again.
        """
        params: dict[str, Any] = {
            "QueueUrl": self.queue_url,
            "MessageBody": letter.body or "(empty body)",
            "MessageGroupId": letter.group,
            "MessageDeduplicationId": f"{_DEDUP_PREFIX}{letter.dead.message_id}"[:SQS_MAX_ID_LENGTH],
            "MessageAttributes": dead_letter_attributes(letter.dead),
        }
        response = self._client.send_message(**params)
        return str(response.get("MessageId", ""))
