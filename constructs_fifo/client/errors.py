"""Errors of the producer client: one base class, narrow subclasses.

Every message names what failed and ends with the fix. This module imports only the result types,
never the producer, so the producer can import it without a cycle.
"""

from __future__ import annotations

from constructs_fifo.client.results import FailedEntry, SendResult

__all__ = [
    "BatchSendError",
    "CredentialsNotFoundError",
    "EndpointNotReachableError",
    "InvalidJobError",
    "OutcomeError",
    "OutcomeQueryError",
    "OutcomeReadError",
    "ProducerEnvironmentError",
    "ProducerError",
    "QueueLookupError",
    "RegionNotSetError",
    "SendFailedError",
    "SteeringError",
    "SteeringQueryError",
    "SteeringWriteError",
]


class ProducerError(Exception):
    """Base class of every error the producer client raises."""


class InvalidJobError(ProducerError, ValueError):
    """A job cannot be sent as given: the message names the field, the value, the rule and the fix.

    Raised before anything is sent, so a batch with one invalid job sends nothing.
    """


class SendFailedError(ProducerError):
    """SQS refused or failed a send; the cause is chained (``__cause__``)."""


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


class ProducerEnvironmentError(ProducerError):
    """The environment stopped a client class (the producer, outcomes, a state reader, parked groups)
    before AWS could answer: no region, no credentials, no connection. The message says which and the
    fix; botocore's error is chained (``__cause__``).

    ``succeeded`` holds the results of the jobs of a ``send_batch`` sent before it happened (empty
    for ``send``), so the caller can send only the rest again.
    """

    def __init__(self, message: str, succeeded: list[SendResult] | None = None) -> None:
        super().__init__(message)
        self.succeeded = list(succeeded or [])


class RegionNotSetError(ProducerEnvironmentError):
    """boto3 found no region for a client class's default client (raised when the class is built)."""


class CredentialsNotFoundError(ProducerEnvironmentError):
    """No usable AWS credentials were found to sign the send."""


class EndpointNotReachableError(ProducerEnvironmentError):
    """The SQS endpoint (AWS's, or ``AWS_ENDPOINT_URL``'s) could not be reached."""


class QueueLookupError(ProducerError, LookupError):
    """A queue could not be found by name (a stack's outputs, the environment): the message says what
    was looked for, what is there, and the fix."""


class OutcomeError(ProducerError):
    """Base class of what :class:`~constructs_fifo.client.outcomes.JobOutcomes` raises."""


class OutcomeQueryError(OutcomeError, ValueError):
    """A job's outcome cannot be asked as given (no table, no group in state mode, a bad timeout):
    the message names the value, the rule and the fix. Raised before anything is read."""


class OutcomeReadError(OutcomeError):
    """A table holding outcomes could not be read: the message names the table, the job, DynamoDB's
    error and the fix; botocore's error is chained (``__cause__``)."""


class SteeringError(ProducerError):
    """Base class of what :class:`~constructs_fifo.client.steering.JobSteering` raises."""


class SteeringQueryError(SteeringError, ValueError):
    """A control cannot be asked as given (no table, no group in state mode, an empty id): the message
    names the value, the rule and the fix. Raised before anything is read or written."""


class SteeringWriteError(SteeringError):
    """A table could not be read or written for a control: the message names the table, the job or
    group, DynamoDB's error and the fix; botocore's error is chained (``__cause__``). Nothing is
    half-done: each control is one conditional write, repeated safely."""
