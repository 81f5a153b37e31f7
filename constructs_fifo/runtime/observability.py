"""One JSON line per job outcome, which is also a CloudWatch embedded-metric-format (EMF) document.

Hand-written on purpose: Powertools' Logger and Metrics would do this, but they are a third-party
package the function's asset would have to ship (the Lambda Python runtime has boto3, not Powertools),
and importing them adds about 13 ms of cold start on top of boto3 (about 95 ms without it; measured
here with Powertools 3.37). Lambda sends stdout to CloudWatch Logs, and CloudWatch extracts the
metrics from the ``_aws`` block.

Every outcome line declares the same eight counters (JobsSucceeded, JobsFailed, DuplicatesSkipped,
ClaimConflicts, JobsDeadLettered, GroupsParked, JobsKept, JobsBuffered; 0 or 1) so that sums over any
period are exact, plus JobDuration when the job ran; other metrics: lines of their own (``metrics``).

Every batch ends with one line of its own (:meth:`JobLogger.batch`): the batch's record count and the
DynamoDB capacity units it consumed, as the ``CapacityUnitsConsumed`` metric (summed by the logger's
:class:`~constructs_fifo.runtime.capacity.CapacityTally`, which the entry point attaches to the
DynamoDB client).

Two levels (:class:`~constructs_fifo.runtime.constants.OutcomeLines`): ``JOB`` writes every outcome
line; ``BATCH`` folds the outcomes that went well (:data:`SUMMARIZED`) into the batch's line, as one
EMF document whose counters are their sums and whose JobDuration is the array of their durations
(EMF takes up to :data:`~constructs_fifo.runtime.aws_limits.EMF_MAX_VALUES_PER_METRIC` values per
metric; past that a ``summary`` line is written early). Sums, sample counts of JobDuration and its
percentiles are the same at both levels.
"""

from __future__ import annotations

import enum
import functools
import json
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from constructs_fifo.runtime.aws_limits import EMF_MAX_VALUES_PER_METRIC
from constructs_fifo.runtime.capacity import CapacityTally
from constructs_fifo.runtime.clock import Clock, epoch_ms, system_clock
from constructs_fifo.runtime.constants import (
    DEFAULT_OUTCOME_LINES,
    METRIC_CAPACITY_UNITS_CONSUMED,
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
    OutcomeLines,
)
from constructs_fifo.runtime.exceptions import MalformedJobError
from constructs_fifo.runtime.job import parse_record, record_attempt, record_group, record_message_id

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.job import Job
    from constructs_fifo.runtime.types import SQSRecord

__all__ = [
    "RETRY_ACTION",
    "SUMMARIZED",
    "JobLogger",
    "LineStream",
    "OutcomeStatus",
    "OutcomeWriter",
    "queue_name_from_arn",
]

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
    #: Already SUCCEEDED (in a parked group: its message is kept already): not run, the record deleted.
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
    #: State mode: in the reorder buffer for its ``seq``, with the state; deleted (SUCCEEDED when applied).
    BUFFERED = "BUFFERED"
    #: State mode, WAIT: the reorder buffer cannot take it (full, or the item's size): not run, retried.
    BUFFER_FULL = "BUFFER_FULL"
    CANCELLED = "CANCELLED"  # cancelled, or superseded by a newer job of its key: not run; deleted
    SUPERSEDED = "SUPERSEDED"
    PACED = "PACED"  # its pace key had no token: not run, no attempt counted, retried when one is due


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


#: The EMF definitions of the counters, shared by every line (read, never changed, by the encoder).
_COUNTER_DEFINITIONS = tuple({"Name": name, "Unit": "Count"} for name in _COUNTERS)

_DURATION_DEFINITION = {"Name": METRIC_JOB_DURATION, "Unit": "Milliseconds"}
_SEPARATORS = (",", ":")

#: At the BATCH level these outcomes go into the batch's line instead of lines of their own.
SUMMARIZED = frozenset({OutcomeStatus.SUCCEEDED, OutcomeStatus.DUPLICATE, OutcomeStatus.BUFFERED})


@functools.lru_cache(maxsize=64)  # a function reads one or two queues' ARNs, once per record
def queue_name_from_arn(arn: str) -> str:
    """Return the queue name of an SQS ARN (``arn:aws:sqs:region:account:name``) or URL."""
    return arn.rstrip("/").rsplit(":", 1)[-1].rsplit("/", 1)[-1]


class LineStream(Protocol):
    """Where a :class:`JobLogger` writes: one ``write`` per line, then ``flush`` (stdout, a file, or a
    view that renders the lines, as ``constructs-fifo worker`` does at a terminal)."""

    def write(self, text: str, /) -> int:
        """Write ``text`` (one line and its newline)."""
        ...

    def flush(self) -> None:
        """Push what was written out."""
        ...


class JobLogger:
    """Writes outcome lines (EMF) and plain runtime events as JSON, one per line, flushed.

    Parameters
    ----------
    namespace : str
        CloudWatch namespace of the metrics.
    stream : LineStream, optional
        Where lines go (default ``sys.stdout`` at write time).
    clock : Callable[[], float]
        Epoch seconds, for the EMF timestamp.
    capacity : CapacityTally, optional
        What the batch line reports as ``CapacityUnitsConsumed`` (default: a tally of its own, which
        counts the calls of the clients it is attached to).
    outcome_lines : OutcomeLines
        ``JOB`` (default): a line per outcome; ``BATCH``: the :data:`SUMMARIZED` outcomes go into the
        batch's line (:meth:`batch`).

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
        stream: LineStream | None = None,
        clock: Clock = system_clock,
        capacity: CapacityTally | None = None,
        outcome_lines: OutcomeLines = DEFAULT_OUTCOME_LINES,
    ) -> None:
        self.namespace = namespace
        self.capacity = capacity if capacity is not None else CapacityTally()
        self.outcome_lines = OutcomeLines(outcome_lines)
        self._counts = dict.fromkeys(_COUNTERS, 0)
        self._durations: list[float] = []
        self._jobs: list[list[Any]] = []
        self._stream = stream
        self._clock = clock
        self._outcome_heads: dict[bool, str] = {}

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
        if self.outcome_lines is OutcomeLines.BATCH and status in SUMMARIZED:
            self._summarize(
                queue_name,
                counters=counters,
                status=status,
                job_id=job_id,
                group=group,
                duration_ms=duration_ms,
            )
            return
        duration = None if duration_ms is None else round(duration_ms, 3)
        line: dict[str, Any] = {METRIC_DIMENSION_QUEUE: queue_name, **counters}
        if duration is not None:
            line[METRIC_JOB_DURATION] = duration
        line.update(
            jobId=job_id,
            group=group,
            type=job_type,
            status=status.value,
            attempt=attempt,
            duration_ms=duration,
            messageId=message_id,
        )
        if error is not None:
            line["error"] = error
        line.update(fields)
        self._write_outcome(line, timed=duration is not None)

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

    def batch(self, *, queue_name: str, records: int) -> None:
        """Write the batch's line: its record count and the capacity units it consumed (a metric).

        The units are those the tally summed since the last batch line; the line's
        ``CapacityUnitsConsumed`` field is the metric's value. At the BATCH level the line also
        carries the summary of the batch's :data:`SUMMARIZED` outcomes.
        """
        units = self.capacity.take()
        definitions = [{"Name": METRIC_CAPACITY_UNITS_CONSUMED, "Unit": "Count"}]
        values: dict[str, float | list[float]] = {METRIC_CAPACITY_UNITS_CONSUMED: units}
        summary = self._take_summary(definitions, values)
        self._write(
            {**self._emf(queue_name, definitions, values), "event": "batch", "records": records, **summary}
        )

    def _summarize(
        self,
        queue_name: str,
        *,
        counters: Mapping[str, int],
        status: OutcomeStatus,
        job_id: str | None,
        group: str,
        duration_ms: float | None,
    ) -> None:
        """Fold one outcome into the batch's summary; write a ``summary`` line when EMF's array is full."""
        for name, value in counters.items():
            self._counts[name] += value
        duration = None if duration_ms is None else round(duration_ms, 3)
        if duration is not None:
            self._durations.append(duration)
        self._jobs.append([job_id, group, status.value, duration])
        if len(self._durations) >= EMF_MAX_VALUES_PER_METRIC or len(self._jobs) >= EMF_MAX_VALUES_PER_METRIC:
            definitions: list[dict[str, str]] = []
            values: dict[str, float | list[float]] = {}
            summary = self._take_summary(definitions, values)
            self._write({**self._emf(queue_name, definitions, values), "event": "summary", **summary})

    def _take_summary(
        self, definitions: list[dict[str, str]], values: dict[str, float | list[float]]
    ) -> dict[str, Any]:
        """Add the pending summary's metrics to ``definitions``/``values``; return its fields; start again."""
        if not self._jobs:
            return {}
        definitions += _COUNTER_DEFINITIONS
        values.update(self._counts)
        if self._durations:
            definitions.append(_DURATION_DEFINITION)
            values[METRIC_JOB_DURATION] = self._durations
        fields = {"jobs": self._jobs}
        self._counts, self._durations, self._jobs = dict.fromkeys(_COUNTERS, 0), [], []
        return fields

    def _emf(
        self, queue_name: str, definitions: list[dict[str, str]], values: Mapping[str, float | list[float]]
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
        self._write_text(json.dumps(line, default=str, separators=_SEPARATORS))

    def _write_outcome(self, fields: dict[str, Any], *, timed: bool) -> None:
        """Write an outcome line: the ``_aws`` block (the same on every line but its timestamp, so its
        JSON is encoded once per logger) followed by ``fields``, byte for byte what :meth:`_write` of
        the whole line writes. An outcome line is the one written per job; encoding its eleven metric
        definitions again for each was about a third of the line's cost."""
        if "_aws" in fields:  # a caller's field named like the block: the general path keeps its order
            definitions = [*_COUNTER_DEFINITIONS, *([_DURATION_DEFINITION] if timed else [])]
            self._write({**self._emf(fields.pop(METRIC_DIMENSION_QUEUE), definitions, {}), **fields})
            return
        head = self._outcome_heads.get(timed)
        if head is None:
            definitions = [*_COUNTER_DEFINITIONS, *([_DURATION_DEFINITION] if timed else [])]
            block = json.dumps(self._emf("", definitions, {})["_aws"], separators=_SEPARATORS)
            # '{"Timestamp":0,"CloudWatchMetrics":[...]}' -> ',"CloudWatchMetrics":[...]},'
            head = self._outcome_heads[timed] = block[block.index(",") :] + ","
        body = json.dumps(fields, default=str, separators=_SEPARATORS)
        self._write_text(f'{{"_aws":{{"Timestamp":{epoch_ms(self._clock)}{head}{body[1:]}')

    def _write_text(self, text: str) -> None:
        stream = self._stream if self._stream is not None else sys.stdout
        stream.write(text + "\n")
        stream.flush()


def _job_type_of(record: SQSRecord) -> str | None:
    try:
        return parse_record(record).type
    except MalformedJobError:
        return None


class OutcomeWriter:
    """Writes a record's outcome line with its identity filled in (queue, group, ids, counts)."""

    def __init__(self, logger: JobLogger, queue_name: str) -> None:
        self.logger, self.queue_name = logger, queue_name

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
        """Write one line; ``job`` (when parsed) gives the id, type and attempt, else the arguments do,
        and a type not given is read from the record's body (a kept or duplicate record is logged
        unparsed; ``None`` only for a malformed body)."""
        arn = str(record.get("eventSourceARN", ""))
        if job is None and job_type is None:
            job_type = _job_type_of(record)
        self.logger.outcome(
            status,
            queue_name=queue_name_from_arn(arn) if arn else self.queue_name,
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

    def batch(self, records: Sequence[SQSRecord]) -> None:
        """Write the batch's line (:meth:`JobLogger.batch`) after its records' lines; none for no records."""
        if not records:
            return
        arn = str(records[0].get("eventSourceARN", ""))
        self.logger.batch(
            queue_name=queue_name_from_arn(arn) if arn else self.queue_name, records=len(records)
        )
