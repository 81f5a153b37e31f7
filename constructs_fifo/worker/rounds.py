"""One heartbeat round's log line: what it renewed, what was refused or failed, and what happens next.

A round (:meth:`~constructs_fifo.worker.heartbeat.WorkerHeartbeat.tick`, or the interruption at the
end of a stop's grace) writes **one** JSON line, as the runtime writes one outcome line per record:

- a round that renewed everything: ``INFO``, ``event`` ``heartbeat``, the running job (``jobId``,
  ``null`` between two jobs of the batch), how many ``records`` it held and the ``visibilityTimeout``
  it gave them, ``leaseRenewed`` (``true``; ``null`` without a claim to renew: state mode, or no job
  running);
- anything else: ``WARNING``, ``event`` the worst of what happened (:data:`_SEVERITY`: a call that
  failed, ``visibility_renewal_failed`` / ``claim_renewal_failed``; a refusal, ``heartbeat_stale``; a
  bound reached, ``job_duration_exceeded``; the grace period's end, ``run_stopped``), its ``reason`` or
  ``error``, and ``action``: what happens next. Such a line is also the EMF document of its metrics
  (``HeartbeatFailures``, one per failed call or refusal; ``JobDurationExceeded``).

Nothing is written while no batch is in flight: an idle slot's ticker is quiet.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from constructs_fifo.runtime.constants import METRIC_HEARTBEAT_FAILURES, METRIC_JOB_DURATION_EXCEEDED

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.observability import JobLogger

__all__ = ["HEARTBEAT_EVENT", "HeartbeatRound"]

#: The ``event`` of a round that renewed what it holds.
HEARTBEAT_EVENT: Final = "heartbeat"
#: A round's ``event`` is the last of these that happened in it (the worst).
_SEVERITY: Final = (
    HEARTBEAT_EVENT,
    "heartbeat_failed",
    "visibility_renewal_failed",
    "claim_renewal_failed",
    "heartbeat_stale",
    "run_stopped",
    "job_duration_exceeded",
)


class HeartbeatRound:
    """What one round did, written as one line by :meth:`write`.

    Parameters
    ----------
    job_id : str or None
        The job running when the round began.
    records : int
        The records the batch holds.
    """

    def __init__(self, job_id: str | None, records: int) -> None:
        self.fields: dict[str, Any] = {"jobId": job_id, "records": records}
        self.event = HEARTBEAT_EVENT
        self.failures = 0
        self.exceeded = False

    def renewed(self, *, visibility_timeout_seconds: int, lease_renewed: bool | None) -> None:
        """The round extended the records' visibility (and renewed the lease when ``lease_renewed``)."""
        self.fields["visibilityTimeout"] = visibility_timeout_seconds
        self.fields["leaseRenewed"] = lease_renewed

    def note(self, event: str, *, failure: bool = False, exceeded: bool = False, **fields: Any) -> None:
        """Something went wrong: ``event`` (one of :data:`_SEVERITY`) and its fields; ``failure``: counted
        as a heartbeat failure; ``exceeded``: a run's bound was reached.

        A field given twice in a round (two calls failed) keeps both, joined by ``"; "``.
        """
        if _SEVERITY.index(event) > _SEVERITY.index(self.event):
            self.event = event
        self.failures += int(failure)
        self.exceeded = self.exceeded or exceeded
        for name, value in fields.items():
            before = self.fields.get(name)
            self.fields[name] = value if before in (None, value) else f"{before}; {value}"

    def write(self, log: JobLogger, *, queue_name: str) -> None:
        """The round's one line: ``INFO`` when all went well, else ``WARNING`` with its metrics."""
        if self.event == HEARTBEAT_EVENT:
            log.event({"level": "INFO", "event": self.event, **self.fields})
            return
        values: dict[str, tuple[float, str]] = {}
        if self.failures:
            values[METRIC_HEARTBEAT_FAILURES] = (self.failures, "Count")
        if self.exceeded:
            values[METRIC_JOB_DURATION_EXCEEDED] = (1, "Count")
        line = {"level": "WARNING", "event": self.event, **self.fields}
        if values:
            log.metrics(queue_name=queue_name, values=values, **line)
        else:
            log.event(line)
