"""What a drain reports: one :class:`InvocationReport` per invocation and the :class:`DrainStats` totals.

The runner (:mod:`~constructs_fifo.local.event_source.runner`) fills them: its polling slots report
concurrently, so :meth:`DrainStats.add` takes a lock.

A record the mapping deleted is not a job that succeeded: the runtime deletes a duplicate, a dead
job sent to the dead-letter queue, and a job kept in its parked group too. What happened to each job
is the runtime's outcome line (its ``status``), which the workers count (``worker.py``);
:data:`OUTCOMES` names each status's outcome, and :attr:`DrainStats.outcomes` sums them.

One vocabulary with ``status``, ``jobs show`` (:class:`~constructs_fifo.client.job_status.JobStatus`)
and the runbook: a job that died is ``dead``, whether it went to the dead-letter queue or its group
parked at it; the groups it parked are counted beside the jobs (``groups_parked``), and the jobs kept
behind it are ``kept``.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from constructs_fifo.runtime.observability import OutcomeStatus

__all__ = [
    "GROUPS_PARKED",
    "OCCASIONAL_OUTCOMES",
    "OUTCOMES",
    "OUTCOME_NAMES",
    "DrainStats",
    "InvocationReport",
    "outcomes_of",
]

#: The outcome a drain counts for each status of the runtime's outcome lines.
OUTCOMES: Final[Mapping[str, str]] = {
    OutcomeStatus.SUCCEEDED.value: "succeeded",
    OutcomeStatus.DUPLICATE.value: "duplicate",
    OutcomeStatus.DEAD_LETTERED.value: "dead",
    OutcomeStatus.PARKED.value: "dead",  # dead, and its group parked at it (counted in GROUPS_PARKED too)
    OutcomeStatus.KEPT.value: "kept",
    OutcomeStatus.BUFFERED.value: "buffered",
    # Not run to the end in this invocation: the record is left on the queue and comes back.
    OutcomeStatus.FAILED.value: "retried",
    OutcomeStatus.CONFLICT.value: "retried",
    OutcomeStatus.SKIPPED.value: "retried",
    OutcomeStatus.FENCED.value: "retried",
    OutcomeStatus.DEADLINE.value: "retried",
    OutcomeStatus.ERROR.value: "retried",
    OutcomeStatus.BUFFER_FULL.value: "retried",
    # Its pace key had no token: it comes back when one is due, no attempt counted (not a retry).
    OutcomeStatus.PACED.value: "paced",
    # Not run, deleted: cancelled, or superseded by a newer job of its key.
    OutcomeStatus.CANCELLED.value: "cancelled",
    OutcomeStatus.SUPERSEDED.value: "cancelled",
}
#: The outcomes, in the order a drain shows them.
OUTCOME_NAMES: Final = ("succeeded", "duplicate", "retried", "dead", "kept", "buffered", "paced", "cancelled")
#: The outcomes a drain's summary line shows only when some occurred (a queue that never uses them).
OCCASIONAL_OUTCOMES: Final = frozenset({"buffered", "paced", "cancelled"})
#: The count, beside the outcomes, of groups a dead job parked (the runtime's ``PARKED`` lines).
GROUPS_PARKED: Final = "groups_parked"


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
        Message ids deleted from the queue (the invocation returned and did not list them).
    failed:
        Message ids left on the queue: reported failed, or every record on a handler error/timeout.
    error:
        ``None``, or what went wrong with the invocation (``"Timeout"``, the exception's type and
        message, or ``"InvalidResponse: ..."``).
    duration_seconds:
        Time in the handler.
    cold_start:
        Whether this invocation started its worker.
    outcomes:
        The runtime's outcomes of the batch's jobs, by :data:`OUTCOME_NAMES` (only those that occurred).
    """

    slot: int
    message_ids: tuple[str, ...]
    groups: tuple[str, ...]
    deleted: tuple[str, ...]
    failed: tuple[str, ...]
    error: str | None
    duration_seconds: float
    cold_start: bool
    outcomes: Mapping[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class DrainStats:
    """Totals of one ``drain``.

    Attributes
    ----------
    batches:
        Invocations.
    records:
        Records delivered (a record received twice counts twice).
    deleted:
        Records deleted after the handler returned (whatever their job's outcome).
    outcomes:
        The jobs' outcomes by :data:`OUTCOME_NAMES`, from the runtime's outcome lines: ``succeeded``,
        ``duplicate``, ``retried`` (left on the queue to run again), ``dead`` (sent to the dead-letter
        queue, or its group parked at it), ``kept`` (kept in a parked group), ``buffered`` (state mode:
        waiting for its ``seq``), ``paced`` (its pace key had no token: left on the queue, no attempt
        counted), ``cancelled`` (cancelled or superseded: not run, deleted); and :data:`GROUPS_PARKED`,
        the groups a dead job parked (``as_dict``
        puts it beside the outcomes). Empty for a handler that writes no outcome lines.
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
    function_log:
        The path of the drain's function log (set by the runner).
    stopped:
        Why the drain stopped before the queue was empty because no job could succeed (the function's
        handler cannot be imported or configured), else ``None``.
    aws_calls:
        AWS API calls the function made, summed over every invocation: ``{"dynamodb.PutItem claims": n}``
        (see :class:`~constructs_fifo.local.event_source.pool.Invocation`).
    """

    batches: int = 0
    records: int = 0
    deleted: int = 0
    failed_reported: int = 0
    handler_errors: int = 0
    timeouts: int = 0
    cold_starts: int = 0
    delete_failures: int = 0
    elapsed_seconds: float = 0.0
    skipped: str | None = None
    stopped: str | None = None
    function_log: str | None = None
    aws_calls: dict[str, int] = field(default_factory=dict)
    outcomes: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys((*OUTCOME_NAMES, GROUPS_PARKED), 0)
    )
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(
        self,
        *,
        aws_calls: Mapping[str, int] | None = None,
        outcomes: Mapping[str, int] | None = None,
        **counts: int,
    ) -> None:
        """Add to counters, the AWS call counts and the outcomes (thread-safe: slots report concurrently)."""
        with self._lock:
            for name, value in counts.items():
                setattr(self, name, getattr(self, name) + value)
            for key, value in (aws_calls or {}).items():
                self.aws_calls[key] = self.aws_calls.get(key, 0) + value
            for key, value in (outcomes or {}).items():
                self.outcomes[key] = self.outcomes.get(key, 0) + value

    def snapshot(self) -> DrainStats:
        """A copy of the totals so far (a progress line reads it while the slots add)."""
        with self._lock:
            return DrainStats(
                **{name: getattr(self, name) for name in _COUNTERS},
                elapsed_seconds=self.elapsed_seconds,
                skipped=self.skipped,
                stopped=self.stopped,
                function_log=self.function_log,
                aws_calls=dict(self.aws_calls),
                outcomes=dict(self.outcomes),
            )

    def as_dict(self) -> dict[str, float | int | str | dict[str, int]]:
        """The totals as a plain dict (for JSON reports)."""
        return {
            "batches": self.batches,
            "records": self.records,
            "deleted": self.deleted,
            "outcomes": {name: count for name, count in self.outcomes.items() if name != GROUPS_PARKED},
            GROUPS_PARKED: self.outcomes.get(GROUPS_PARKED, 0),
            "failed_reported": self.failed_reported,
            "handler_errors": self.handler_errors,
            "timeouts": self.timeouts,
            "cold_starts": self.cold_starts,
            "delete_failures": self.delete_failures,
            "elapsed_seconds": round(self.elapsed_seconds, 3),
            "aws_calls": dict(sorted(self.aws_calls.items())),
            **({"skipped": self.skipped} if self.skipped else {}),
            **({"stopped": self.stopped} if self.stopped else {}),
            **({"function_log": self.function_log} if self.function_log else {}),
        }


#: The integer counters of :class:`DrainStats`.
_COUNTERS: Final = (
    "batches",
    "records",
    "deleted",
    "failed_reported",
    "handler_errors",
    "timeouts",
    "cold_starts",
    "delete_failures",
)


def outcomes_of(statuses: Mapping[str, int]) -> dict[str, int]:
    """The outcomes (:data:`OUTCOMES`) of counts by outcome-line status; unknown statuses are left out."""
    outcomes: dict[str, int] = {}
    for status, count in statuses.items():
        if (name := OUTCOMES.get(status)) is not None:
            outcomes[name] = outcomes.get(name, 0) + count
        if status == OutcomeStatus.PARKED.value:
            outcomes[GROUPS_PARKED] = outcomes.get(GROUPS_PARKED, 0) + count
    return outcomes
