"""Sending a dead job to the FIFO dead-letter queue, with attributes that make triage possible.

The runtime, not SQS's ``maxReceiveCount``, decides when a job is dead (see
:mod:`constructs_fifo.runtime.claim.processor`). A dead job's message is sent to the dead-letter queue in
its own message group with its body unchanged and these message attributes, so an operator can sort
the queue without parsing bodies: ``jobId``, ``jobType``, ``reason`` (a
:class:`~constructs_fifo.runtime.constants.DeadReason`), ``errorType``, ``error`` (cut to 1024
characters), ``attempts``, ``originalMessageId`` and ``deadAt`` (ISO 8601, UTC). Their names and their
one codec are here: :func:`encode_letter_attributes` writes them, :func:`decode_letter_attributes`
reads them back for the operators' tools (``constructs-fifo dlq``, the demo's checks).

The deduplication id is derived from the original message id, so sending the same message twice
(a crash between this send and the delete of the source record) leaves one copy in the DLQ.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from constructs_fifo.runtime.aws_limits import SQS_MAX_ID_LENGTH
from constructs_fifo.runtime.clock import Clock, epoch_ms, system_clock
from constructs_fifo.runtime.dead_jobs.record import DeadJob
from constructs_fifo.runtime.error_text import truncate_error

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_sqs.client import SQSClient

__all__ = [
    "LETTER_ATTEMPTS",
    "LETTER_DEAD_AT",
    "LETTER_ERROR",
    "LETTER_ERROR_TYPE",
    "LETTER_JOB_ID",
    "LETTER_JOB_TYPE",
    "LETTER_ORIGINAL_MESSAGE_ID",
    "LETTER_REASON",
    "DeadLetter",
    "DeadLetterSender",
    "LetterAttributes",
    "decode_letter_attributes",
    "encode_letter_attributes",
]

_DEDUP_PREFIX = "dead-"

# The dead-letter message's attributes (SQS message attributes, read without parsing the body).
LETTER_JOB_ID: Final = "jobId"
LETTER_JOB_TYPE: Final = "jobType"
#: A :class:`~constructs_fifo.runtime.constants.DeadReason` value.
LETTER_REASON: Final = "reason"
LETTER_ERROR_TYPE: Final = "errorType"
#: The error text, cut to ``MAX_ERROR_LENGTH`` characters.
LETTER_ERROR: Final = "error"
#: A ``Number`` attribute: the job's runs.
LETTER_ATTEMPTS: Final = "attempts"
#: The messageId of the source queue's message the job died in.
LETTER_ORIGINAL_MESSAGE_ID: Final = "originalMessageId"
#: When it died: ISO 8601, UTC.
LETTER_DEAD_AT: Final = "deadAt"


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


@dataclass(frozen=True)
class LetterAttributes:
    """What a dead-letter message's attributes say, as :func:`decode_letter_attributes` reads them.

    Each field is ``None`` when the message does not carry it: a message SQS moved itself
    (``maxReceiveCount``) carries none, one of a malformed body no ``jobId`` or ``jobType``. ``reason``
    stays the text the message holds, so a reader shows a reason this runtime does not know.
    """

    job_id: str | None = None
    job_type: str | None = None
    reason: str | None = None
    error_type: str | None = None
    error: str | None = None
    attempts: int | None = None
    original_message_id: str | None = None
    dead_at: str | None = None


def encode_letter_attributes(dead: DeadJob) -> dict[str, dict[str, str]]:
    """The SQS message attributes of a dead job (empty values are left out: SQS refuses them).

    Examples
    --------
    >>> dead = DeadJob("j-1", "apply_patch", "PermanentJobError", "no diff", 1, "m-1", 0)
    >>> encode_letter_attributes(dead)["reason"]
    {'DataType': 'String', 'StringValue': 'PERMANENT'}
    >>> decode_letter_attributes(encode_letter_attributes(dead)).attempts
    1
    """
    values: dict[str, tuple[str, str]] = {
        LETTER_JOB_ID: ("String", dead.job_id or ""),
        LETTER_JOB_TYPE: ("String", dead.job_type or ""),
        LETTER_REASON: ("String", dead.reason.value),
        LETTER_ERROR_TYPE: ("String", dead.error_type),
        LETTER_ERROR: ("String", truncate_error(dead.error)),
        LETTER_ATTEMPTS: ("Number", str(dead.attempts)),
        LETTER_ORIGINAL_MESSAGE_ID: ("String", dead.message_id),
        LETTER_DEAD_AT: ("String", datetime.fromtimestamp(dead.at_ms / 1000, tz=UTC).isoformat()),
    }
    return {
        name: {"DataType": data_type, "StringValue": value}
        for name, (data_type, value) in values.items()
        if value
    }


def decode_letter_attributes(message_attributes: Mapping[str, Mapping[str, Any]]) -> LetterAttributes:
    """The attributes of a received dead-letter message (its ``MessageAttributes``, as SQS returns them).

    Raises
    ------
    ValueError
        ``attempts`` is there but not a whole number.

    Examples
    --------
    >>> read = decode_letter_attributes({"reason": {"DataType": "String", "StringValue": "MALFORMED"}})
    >>> read.reason, read.job_id, read.attempts
    ('MALFORMED', None, None)
    """

    def text(name: str) -> str | None:
        value = (message_attributes.get(name) or {}).get("StringValue")
        return None if value is None else str(value)

    attempts = text(LETTER_ATTEMPTS)
    return LetterAttributes(
        job_id=text(LETTER_JOB_ID),
        job_type=text(LETTER_JOB_TYPE),
        reason=text(LETTER_REASON),
        error_type=text(LETTER_ERROR_TYPE),
        error=text(LETTER_ERROR),
        attempts=None if attempts is None else int(attempts),
        original_message_id=text(LETTER_ORIGINAL_MESSAGE_ID),
        dead_at=text(LETTER_DEAD_AT),
    )


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
            "MessageAttributes": encode_letter_attributes(letter.dead),
        }
        response = self._client.send_message(**params)
        return str(response.get("MessageId", ""))
