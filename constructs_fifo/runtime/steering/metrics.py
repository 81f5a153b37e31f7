"""The steering outcomes' metrics: one metrics line per cancelled or superseded record, written beside
its outcome line, so a queue that never steers pays no log bytes for them (docs/steering.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.job import record_group
from constructs_fifo.runtime.observability import OutcomeStatus, OutcomeWriter, queue_name_from_arn
from constructs_fifo.runtime.steering.names import (
    METRIC_JOBS_PACED,
    METRIC_PACE_DELAY_SECONDS,
    STEERING_METRICS,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.types import SQSRecord

__all__ = ["write_paced", "write_steered"]


def write_steered(out: OutcomeWriter, status: OutcomeStatus, record: SQSRecord, **fields: Any) -> None:
    """Write ``record``'s outcome line (``status`` ``CANCELLED`` or ``SUPERSEDED``) and its metric line
    (``JobsCancelled``, ``JobsSuperseded``); ``fields`` as :meth:`OutcomeWriter.write`'s."""
    out.write(status, record, **fields)
    job = fields.get("job")
    arn = str(record.get("eventSourceARN", ""))
    out.logger.metrics(
        queue_name=queue_name_from_arn(arn) if arn else out.queue_name,
        values={STEERING_METRICS[status.value]: (1, "Count")},
        jobId=job.id if job is not None else fields.get("job_id"),
        group=record_group(record),
    )


def write_paced(
    out: OutcomeWriter, record: SQSRecord, *, key: str, delay_seconds: int, **fields: Any
) -> None:
    """Write a paced record's outcome line (``PACED``) and its metric line (``JobsPaced``,
    ``PaceDelaySeconds``); ``fields`` as :meth:`OutcomeWriter.write`'s."""
    out.write(
        OutcomeStatus.PACED,
        record,
        action=f"not run: pace key {key!r} has no token now; retried in {delay_seconds} s, no attempt used",
        paceKey=key,
        visibilityTimeout=delay_seconds,
        **fields,
    )
    job = fields.get("job")
    arn = str(record.get("eventSourceARN", ""))
    out.logger.metrics(
        queue_name=queue_name_from_arn(arn) if arn else out.queue_name,
        values={METRIC_JOBS_PACED: (1, "Count"), METRIC_PACE_DELAY_SECONDS: (delay_seconds, "Seconds")},
        jobId=job.id if job is not None else fields.get("job_id"),
        group=record_group(record),
        paceKey=key,
    )
