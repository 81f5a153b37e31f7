"""What SQS answered for the jobs of a send: accepted results and refused entries."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FailedEntry", "SendResult"]


@dataclass(frozen=True, slots=True)
class SendResult:
    """What SQS answered for one accepted job.

    A send that SQS deduplicated is accepted too (and not delivered a second time).
    """

    message_id: str
    sequence_number: str | None
    job_id: str


@dataclass(frozen=True, slots=True)
class FailedEntry:
    """One entry of a batch that SQS did not accept.

    Attributes
    ----------
    job_id:
        The job's id.
    code:
        The SQS error code, e.g. ``InvalidParameterValue``.
    message:
        The SQS error message.
    sender_fault:
        SQS's ``SenderFault``: ``True`` when the request itself is wrong (retrying cannot help).
    """

    job_id: str
    code: str
    message: str
    sender_fault: bool
