"""One JSON line per job outcome, which is also a CloudWatch embedded-metric-format (EMF) document.

Hand-written on purpose: Powertools' Logger and Metrics would do this, but they are a third-party
package the function's asset would have to ship (the Lambda Python runtime has boto3, not Powertools),
and importing them adds about 13 ms of cold start on top of boto3 (about 95 ms without it; measured
here with Powertools 3.37). Lambda sends stdout to CloudWatch Logs, and CloudWatch extracts the
metrics from the ``_aws`` block.

Every outcome line declares the same eight counters (JobsSucceeded, JobsFailed, DuplicatesSkipped,
ClaimConflicts, JobsDeadLettered, GroupsParked, JobsKept, JobsBuffered; 0 or 1) so that sums over any
period are exact, and JobDuration when the job ran. Other metrics (state mode's sequence gaps) go in
lines of their own (:meth:`JobLogger.metrics`).
"""

from __future__ import annotations

import enum
import json
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TextIO

from constructs_fifo.runtime.clock import Clock, epoch_ms, system_clock
from constructs_fifo.runtime.constants import (
    METRIC_CLAIM_CONFLICTS,
    METRIC_DIMENSION_QUEUE,
    METRIC_DUPLICATES_SKIPPED,
    METRIC_GROUPS_PARKED,
    METRIC_JOB_DURATION,
    METRIC_JOBS_BUFFERED,
    METRIC_JOBS_DEAD_LETTERED,
    METRIC_JOBS_FAILED,
    METRIC_JOBS_KEPT,
    METRIC_JOBS_SUCCEEDED,
)
from constructs_fifo.runtime.job import record_attempt, record_group, record_message_id

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.job import Job
    from constructs_fifo.runtime.types import SQSRecord

__all__ = ["RETRY_ACTION", "JobLogger", "OutcomeStatus", "OutcomeWriter", "queue_name_from_arn"]

#: The ``action`` of an outcome line whose record is reported failed.
RETRY_ACTION = "reported failed; retried after the visibility delay"


class OutcomeStatus(enum.Enum):
    """The ``status`` field of an outcome line."""

    #: The job ran and its SUCCEEDED claim was written: the record is deleted.
    SUCCEEDED = "SUCCEEDED"
    #: The job raised a transient error with attempts left: retried after a backoff.
    FAILED = "FAILED"
    #: The job is dead (``reason`` says why) and was sent to the dead-letter queue: the record is deleted.
    DEAD_LETTERED = "DEAD_LETTERED"
    #: The job is dead and its group is now parked at it (PARK policy): the record is kept, not lost.
    PARKED = "PARKED"
    #: The record's group is parked: the record is kept in order behind the dead job, not run.
    KEPT = "KEPT"
    #: The job already SUCCEEDED: not run, the record is deleted.
    DUPLICATE = "DUPLICATE"
    #: Another worker holds a live lease on the job: not run, retried after the lease.
    CONFLICT = "CONFLICT"
    #: An earlier record of the group failed in this batch: not run, retried in order.
    SKIPPED = "SKIPPED"
    #: The job ran but another worker took the claim over: its state stands, the record is retried.
    FENCED = "FENCED"
    #: Too little time left in the invocation to start the job: not run, retried.
    DEADLINE = "DEADLINE"
    #: The runtime itself failed on this record (DynamoDB or another dependency): retried.
    ERROR = "ERROR"
    #: State mode: the job waits in the group's reorder buffer for its ``seq``, committed with the
    #: state; the record is deleted (the job's SUCCEEDED line comes when it is applied).
    BUFFERED = "BUFFERED"
    #: State mode, gap policy WAIT: the reorder buffer cannot take the job (full, or the item would
    #: pass its size): not run, retried; the sequence gap metric shows the wait.
    BUFFER_FULL = "BUFFER_FULL"


# ERROR counts as a failed attempt too: a claim write throttled by DynamoDB must show on JobsFailed,
# not only in the logs. A dead job counts when its own run failed in this invocation (the caller
# says so with ``attempt_failed``). SKIPPED, DEADLINE and KEPT did not run the job: no attempt failed.
_FAILED_STATUSES = frozenset({OutcomeStatus.FAILED, OutcomeStatus.FENCED, OutcomeStatus.ERROR})
_STATUS_COUNTERS: dict[OutcomeStatus, tuple[str, ...]] = {
    OutcomeStatus.SUCCEEDED: (METRIC_JOBS_SUCCEEDED,),
    OutcomeStatus.DUPLICATE: (METRIC_DUPLICATES_SKIPPED,),
    OutcomeStatus.CONFLICT: (METRIC_CLAIM_CONFLICTS,),
    OutcomeStatus.DEAD_LETTERED: (METRIC_JOBS_DEAD_LETTERED,),
    OutcomeStatus.PARKED: (METRIC_GROUPS_PARKED, METRIC_JOBS_KEPT),
    OutcomeStatus.KEPT: (METRIC_JOBS_KEPT,),
    OutcomeStatus.BUFFERED: (METRIC_JOBS_BUFFERED,),
}
_COUNTERS = (
    METRIC_JOBS_SUCCEEDED,
    METRIC_JOBS_FAILED,
    METRIC_DUPLICATES_SKIPPED,
    METRIC_CLAIM_CONFLICTS,
    METRIC_JOBS_DEAD_LETTERED,
    METRIC_GROUPS_PARKED,
    METRIC_JOBS_KEPT,
    METRIC_JOBS_BUFFERED,
)


def queue_name_from_arn(arn: str) -> str:
    """Return the queue name of an SQS ARN (``arn:aws:sqs:region:account:name``) or URL."""
    return arn.rstrip("/").rsplit(":", 1)[-1].rsplit("/", 1)[-1]


class JobLogger:
    """Writes outcome lines (EMF) and plain runtime events as JSON, one per line, flushed.

    Parameters
    ----------
    namespace : str
        CloudWatch namespace of the metrics.
    stream : TextIO, optional
        Where lines go (default ``sys.stdout`` at write time).
    clock : Callable[[], float]
        Epoch seconds, for the EMF timestamp.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> JobLogger("Demo", stream=out).outcome(
    ...     OutcomeStatus.DUPLICATE, queue_name="jobs.fifo", job_id="j1", group="ws#1", job_type="t",
    ...     attempt=1, message_id="m1", duration_ms=None)
    >>> json.loads(out.getvalue())["DuplicatesSkipped"]
    1
    """

    def __init__(
        self,
        namespace: str,
        *,
        stream: TextIO | None = None,
        clock: Clock = system_clock,
    ) -> None:
        self.namespace = namespace
        self._stream = stream
        self._clock = clock

    def outcome(
        self,
        status: OutcomeStatus,
        *,
        queue_name: str,
        job_id: str | None,
        group: str,
        job_type: str | None,
        attempt: int,
        message_id: str,
        duration_ms: float | None,
        error: str | None = None,
        attempt_failed: bool = False,
        **fields: Any,
    ) -> None:
        """Write the outcome line of one record.

        Parameters
        ----------
        status : OutcomeStatus
            What happened.
        queue_name : str
            Value of the QueueName dimension.
        job_id, group, job_type, attempt, message_id
            The record's identity (``job_id``/``job_type`` are ``None`` for a malformed body).
        duration_ms : float or None
            Time in the user's function; ``None`` when it did not run.
        error : str, optional
            The error, for failed outcomes.
        attempt_failed : bool
            The job ran (or was parsed) in this invocation and failed, although the status is not a
            failure status (a job that died on this attempt): counts on JobsFailed.
        **fields
            Extra fields (``action``, ``visibilityTimeout``, ...).
        """
        counters = dict.fromkeys(_COUNTERS, 0)
        for name in _STATUS_COUNTERS.get(status, ()):
            counters[name] = 1
        if status in _FAILED_STATUSES or attempt_failed:
            counters[METRIC_JOBS_FAILED] = 1
        definitions: list[dict[str, str]] = [{"Name": name, "Unit": "Count"} for name in _COUNTERS]
        metrics: dict[str, float] = dict(counters)
        if duration_ms is not None:
            definitions.append({"Name": METRIC_JOB_DURATION, "Unit": "Milliseconds"})
            metrics[METRIC_JOB_DURATION] = round(duration_ms, 3)
        line: dict[str, Any] = {
            **self._emf(queue_name, definitions, metrics),
            "jobId": job_id,
            "group": group,
            "type": job_type,
            "status": status.value,
            "attempt": attempt,
            "duration_ms": None if duration_ms is None else round(duration_ms, 3),
            "messageId": message_id,
        }
        if error is not None:
            line["error"] = error
        line.update(fields)
        self._write(line)

    def metrics(self, *, queue_name: str, values: Mapping[str, tuple[float, str]], **fields: Any) -> None:
        """Write one line of metrics other than the outcome counters, e.g. a group's sequence gap.

        Parameters
        ----------
        queue_name : str
            Value of the QueueName dimension.
        values : Mapping[str, tuple[float, str]]
            Metric name -> (value, CloudWatch unit), e.g. ``{"SequenceGapOpenSeconds": (12.5, "Seconds")}``.
        **fields
            Extra fields (``group``, ...).
        """
        definitions = [{"Name": name, "Unit": unit} for name, (_, unit) in values.items()]
        numbers = {name: value for name, (value, _) in values.items()}
        self._write({**self._emf(queue_name, definitions, numbers), **fields})

    def _emf(
        self, queue_name: str, definitions: list[dict[str, str]], values: Mapping[str, float]
    ) -> dict[str, Any]:
        """The EMF part of a line: the ``_aws`` block, the dimension and the metric values."""
        return {
            "_aws": {
                "Timestamp": epoch_ms(self._clock),
                "CloudWatchMetrics": [
                    {
                        "Namespace": self.namespace,
                        "Dimensions": [[METRIC_DIMENSION_QUEUE]],
                        "Metrics": definitions,
                    }
                ],
            },
            METRIC_DIMENSION_QUEUE: queue_name,
            **values,
        }

    def event(self, fields: dict[str, Any]) -> None:
        """Write a plain JSON line (no metrics), e.g. a failed visibility change."""
        self._write({"level": "WARNING", **fields})

    def _write(self, line: dict[str, Any]) -> None:
        stream = self._stream if self._stream is not None else sys.stdout
        stream.write(json.dumps(line, default=str, separators=(",", ":")) + "\n")
        stream.flush()


class OutcomeWriter:
    """Writes a record's outcome line with its identity filled in (queue, group, ids, counts)."""

    def __init__(self, logger: JobLogger, queue_name: str) -> None:
        self.logger = logger
        self._queue_name = queue_name

    def write(
        self,
        status: OutcomeStatus,
        record: SQSRecord,
        *,
        job: Job | None = None,
        job_id: str | None = None,
        job_type: str | None = None,
        attempt: int = 0,
        duration_ms: float | None = None,
        error: str | None = None,
        attempt_failed: bool = False,
        **fields: Any,
    ) -> None:
        """Write one line; ``job`` (when parsed) gives the id, type and attempt, else the arguments do."""
        arn = str(record.get("eventSourceARN", ""))
        self.logger.outcome(
            status,
            queue_name=queue_name_from_arn(arn) if arn else self._queue_name,
            job_id=job.id if job else job_id,
            group=record_group(record),
            job_type=job.type if job else job_type,
            attempt=job.attempt if job else attempt,
            message_id=record_message_id(record),
            duration_ms=duration_ms,
            error=error,
            attempt_failed=attempt_failed,
            receiveCount=record_attempt(record),
            **fields,
        )
