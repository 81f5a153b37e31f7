"""What a drain reports: one :class:`InvocationReport` per invocation and the :class:`DrainStats` totals.

The runner (:mod:`~constructs_fifo.local.event_source.runner`) fills them: its polling slots report
concurrently, so :meth:`DrainStats.add` takes a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["DrainStats", "InvocationReport"]


@dataclass(frozen=True, slots=True)
class InvocationReport:
    """One invocation, as passed to ``drain(on_batch=...)``.

    Attributes
    ----------
    slot:
        The concurrency slot (worker) that ran it.
    message_ids:
        The records' message ids, in batch order.
    groups:
        The records' message group ids, in batch order.
    deleted:
        Message ids deleted from the queue (succeeded).
    failed:
        Message ids left on the queue: reported failed, or every record on a handler error/timeout.
    error:
        ``None``, or what went wrong with the invocation (``"Timeout"``, the exception's type and
        message, or ``"InvalidResponse: ..."``).
    duration_seconds:
        Time in the handler.
    cold_start:
        Whether this invocation started its worker.
    """

    slot: int
    message_ids: tuple[str, ...]
    groups: tuple[str, ...]
    deleted: tuple[str, ...]
    failed: tuple[str, ...]
    error: str | None
    duration_seconds: float
    cold_start: bool


@dataclass(slots=True)
class DrainStats:
    """Totals of one ``drain``.

    Attributes
    ----------
    batches:
        Invocations.
    records:
        Records delivered (a record received twice counts twice).
    succeeded:
        Records deleted after the handler returned.
    failed_reported:
        Records listed in ``batchItemFailures`` (left on the queue).
    handler_errors:
        Invocations that raised, returned an invalid response, or timed out (their whole batch left).
    timeouts:
        Invocations killed at the function timeout (also counted in ``handler_errors``).
    cold_starts:
        Worker processes started.
    delete_failures:
        Records whose delete SQS refused (e.g. the receipt handle expired after a long invocation).
    elapsed_seconds:
        Wall time of the drain.
    skipped:
        Why nothing was drained (a disabled mapping), else ``None``.
    aws_calls:
        AWS API calls the function made, summed over every invocation: ``{"dynamodb.PutItem claims": n}``
        (see :class:`~constructs_fifo.local.event_source.pool.Invocation`).
    """

    batches: int = 0
    records: int = 0
    succeeded: int = 0
    failed_reported: int = 0
    handler_errors: int = 0
    timeouts: int = 0
    cold_starts: int = 0
    delete_failures: int = 0
    elapsed_seconds: float = 0.0
    skipped: str | None = None
    aws_calls: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, *, aws_calls: Mapping[str, int] | None = None, **counts: int) -> None:
        """Add to counters and to the AWS call counts (thread-safe: slots report concurrently)."""
        with self._lock:
            for name, value in counts.items():
                setattr(self, name, getattr(self, name) + value)
            for key, value in (aws_calls or {}).items():
                self.aws_calls[key] = self.aws_calls.get(key, 0) + value

    def as_dict(self) -> dict[str, float | int | str | dict[str, int]]:
        """The totals as a plain dict (for JSON reports)."""
        return {
            "batches": self.batches,
            "records": self.records,
            "succeeded": self.succeeded,
            "failed_reported": self.failed_reported,
            "handler_errors": self.handler_errors,
            "timeouts": self.timeouts,
            "cold_starts": self.cold_starts,
            "delete_failures": self.delete_failures,
            "elapsed_seconds": round(self.elapsed_seconds, 3),
            "aws_calls": dict(sorted(self.aws_calls.items())),
            **({"skipped": self.skipped} if self.skipped else {}),
        }
