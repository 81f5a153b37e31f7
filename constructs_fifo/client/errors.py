"""Errors of the producer client: one base class, narrow subclasses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.client.producer import SendResult

__all__ = [
    "BatchSendError",
    "FailedEntry",
    "InvalidJobError",
    "ProducerError",
    "SendFailedError",
]


class ProducerError(Exception):
    """Base class of every error the producer client raises."""


class InvalidJobError(ProducerError, ValueError):
    """A job cannot be sent as given: the message names the field, the value, the rule and the fix.

    Raised before anything is sent, so a batch with one invalid job sends nothing.
    """


class SendFailedError(ProducerError):
    """SQS refused or failed a send; the cause is chained (``__cause__``)."""


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


class BatchSendError(SendFailedError):
    """Some jobs of a batch were not accepted, even after retrying the retryable failures.

    Nothing is dropped silently: ``failed`` lists every job that was not sent and ``succeeded`` the
    results of every job that was, so the caller can retry exactly the failed ones.
    """

    def __init__(self, failed: list[FailedEntry], succeeded: list[SendResult]) -> None:
        self.failed = failed
        self.succeeded = succeeded
        shown = "; ".join(f"{f.job_id!r}: {f.code}: {f.message}" for f in failed[:5])
        more = f" (and {len(failed) - 5} more)" if len(failed) > 5 else ""
        super().__init__(
            f"{len(failed)} job(s) were not sent: {shown}{more}. {len(succeeded)} job(s) were sent. "
            "Fix the named entries and send only those again (the deduplication id keeps a resend of "
            "an already-sent job from being delivered twice within 5 minutes)."
        )
