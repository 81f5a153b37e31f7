"""Errors of the constructs-fifo runtime: one base class, narrow subclasses."""

from __future__ import annotations

__all__ = [
    "ConfigurationError",
    "ConstructsFifoRuntimeError",
    "MalformedJobError",
    "ParkConflictError",
    "PermanentJobError",
    "RecordTooLargeToKeepError",
]


class ConstructsFifoRuntimeError(Exception):
    """Base class of every error the runtime raises."""


class ConfigurationError(ConstructsFifoRuntimeError):
    """The function's environment is missing or wrong (handler, table name, numbers)."""


class PermanentJobError(ConstructsFifoRuntimeError):
    """Raise from a job function when retrying cannot help.

    The job is dead at once: its claim is marked ``DEAD`` with the error and, by the queue's dead-job
    policy, it is sent to the dead-letter queue (``CONTINUE``) or its group is parked at it (``PARK``).

    Examples
    --------
    >>> from constructs_fifo.runtime import PermanentJobError
    >>> def handle(job, context):
    ...     if "diff" not in job.payload:
    ...         raise PermanentJobError("apply_patch needs payload.diff")
    """


class MalformedJobError(PermanentJobError):
    """The record's body is not a JSON object with a string ``jobId`` (and ``type``).

    Parameters
    ----------
    message : str
        What is wrong and what is expected.
    job_id : str, optional
        The body's ``jobId`` when it is a usable (non-empty string) one although the rest of the
        envelope is not: the runtime then records a permanent ``FAILED`` claim under it.
    """

    def __init__(self, message: str, *, job_id: str | None = None) -> None:
        super().__init__(message)
        self.job_id = job_id


class ParkConflictError(ConstructsFifoRuntimeError):
    """A parked group's header changed between read and write (another worker or an operator wrote).

    Nothing was written; the runtime reports the group's records failed and they come back.
    """


class RecordTooLargeToKeepError(ConstructsFifoRuntimeError):
    """A record cannot be kept in a parked group: it does not fit in a DynamoDB item even compressed.

    The message names the size and the fix (keep large payloads in S3 and send a pointer).
    """
