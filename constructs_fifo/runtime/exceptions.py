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


# === state mode (issue 7) =====================================================================
__all__ += ["SequenceConflictError", "StateTooLargeError", "TransitionResultError", "WorkerCrashedError"]


class StateTooLargeError(PermanentJobError):
    """A group's state item would pass DynamoDB's item size limit.

    Parameters
    ----------
    size_bytes : int
        The item's size as DynamoDB counts it (attribute names and values, UTF-8).
    limit_bytes : int
        The limit the item was checked against.
    detail : str
        What made it large (for example the state's and the bookkeeping's shares).
    """

    def __init__(self, size_bytes: int, limit_bytes: int, detail: str = "") -> None:
        self.size_bytes = size_bytes
        self.limit_bytes = limit_bytes
        extra = f" ({detail})" if detail else ""
        super().__init__(
            f"the group's state item would be {size_bytes} bytes, over the limit of {limit_bytes} bytes"
            f"{extra}; a DynamoDB item holds at most 400 KB, state and bookkeeping together. Keep large "
            "blobs elsewhere (for example in S3) and store a pointer to them in the state."
        )


class TransitionResultError(PermanentJobError):
    """A state transition returned something that is not a JSON object of JSON values."""


class SequenceConflictError(PermanentJobError):
    """Two different jobs of one group carry the same ``seq``."""


class WorkerCrashedError(ConstructsFifoRuntimeError):
    """A state-mode transition stopped its worker (a crash, out of memory, the function timeout).

    Not raised by a transition: the runtime records it for the attempt that never returned, found by
    its run marker (:mod:`constructs_fifo.runtime.state.crash_watch`), and counts it like a transient failure.
    """
