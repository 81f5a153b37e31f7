"""The skeleton of a batch, shared by claim mode and state mode: open, run, report.

Both processors are variants of :class:`BaseBatchProcessor`, as Powertools' ``SqsFifoPartialProcessor``
is of its ``BatchProcessor``: what every batch does lives here once, and a variant adds only its own
steps. One batch, whatever the mode:

1. **Open.** The batch's wake-up messages are set aside by group (``report.wake_ups``); then the
   variant's one read (:meth:`BaseBatchProcessor._read`: claim mode's park headers, state mode's states,
   park headers and run items). When it fails nothing may run: every record is reported (``ERROR``).
2. **Refresh** each resuming group's worn wake-up message before anything runs (``batch_report``).
3. **Run** (:meth:`BaseBatchProcessor._run`, the variant's): its units (a record in claim mode, a group
   in state mode) in batch order, each only while :meth:`~BaseBatchProcessor._out_of_time` is false;
   then every unit not started is reported (:meth:`~BaseBatchProcessor._not_reached`: ``DEADLINE``,
   visibility 0, its group blocked): the rest comes back at once, in order. A dependency that fails on
   a unit reports its records (:meth:`~BaseBatchProcessor._error`: ``ERROR``, the group blocked).
4. **Settle** each resuming group's wake-up message for its retry time (``batch_report``).
5. **Report.** Every visibility change of the batch in one applier call, the batch's line, and the
   partial-batch response (returned, never raised, when every record failed).

**The seam for a caller other than Lambda** (a container worker that receives its own records).
Lambda calls :meth:`~BaseBatchProcessor.process` with its event and context. Any other caller calls
:meth:`~BaseBatchProcessor.process_batch` with the **records** it received, in Lambda's record shape
(:class:`~constructs_fifo.runtime.types.SQSRecord`), in the order received; a **context** (what the job
function sees), whose ``get_remaining_time_in_millis()`` says how long this batch may still start work,
on the caller's own clock (its run bound; the skeleton assumes Lambda's 15 minutes without it; stores
and senders take the same clock); and a **heartbeat** (:class:`Heartbeat`, given to the processor): the
skeleton holds ``heartbeat.running(records)`` open while the batch runs (the caller renews what it
holds), asks ``heartbeat.stale()`` before each unit starts (a stale batch starts nothing more: another
worker may hold its records; what did not start is reported as not reached; a unit already running
cannot make its writes stand: claim writes are fenced on the owner token, state commits on the group
item's version), and holds ``heartbeat.admit(alone=...)`` while a unit's user code may run (a worker's
slots share a process: a crash counts only for a unit that ran alone, docs/architecture.md).

The caller then deletes every record the response does not list, as the event source mapping does
(the listed ones already have their visibility). Lambda's heartbeat is :data:`NO_HEARTBEAT`.
"""

from __future__ import annotations

import traceback
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

from constructs_fifo.runtime.backoff import Backoff
from constructs_fifo.runtime.batch_report import (
    BatchReport,
    job_id_of,
    refresh_worn_wake_ups,
    settle_wake_ups,
)
from constructs_fifo.runtime.clock import DEFAULT_SAFETY_MARGIN_MS, remaining_ms
from constructs_fifo.runtime.dead_jobs.parking import is_wake_up, kept_action
from constructs_fifo.runtime.error_text import describe
from constructs_fifo.runtime.job import record_group
from constructs_fifo.runtime.observability import (
    RETRY_ACTION,
    OutcomeStatus,
    OutcomeWriter,
    queue_name_from_arn,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_sqs.client import SQSClient

    from constructs_fifo.runtime.backoff import VisibilityApplier
    from constructs_fifo.runtime.dead_jobs.parking import ParkHeader
    from constructs_fifo.runtime.observability import JobLogger
    from constructs_fifo.runtime.settings.config import RuntimeConfig
    from constructs_fifo.runtime.types import BatchResponse, SQSRecord

    #: Each group's park header after the batch (``None``: the group is live).
    LatestHeaders = Mapping[str, ParkHeader | None]

__all__ = ["NO_HEARTBEAT", "BaseBatchProcessor", "Heartbeat", "OpenedBatch"]

ReportT = TypeVar("ReportT", bound=BatchReport)
ReadT = TypeVar("ReadT")


@dataclass(frozen=True)
class OpenedBatch(Generic[ReadT]):
    """A batch once read: its records in order, its groups' park headers, and the variant's own read."""

    records: list[SQSRecord]
    headers: Mapping[str, ParkHeader]
    read: ReadT


class Heartbeat(Protocol):
    """What a caller that may hold its records past their visibility timeout lends the skeleton."""

    def running(self, records: Sequence[SQSRecord]) -> AbstractContextManager[object]:
        """Keep ``records`` in flight (and what the caller holds for them) while the block runs."""
        ...

    def stale(self) -> bool:
        """Whether a renewal failed: another worker may hold the records, so nothing more may start."""
        ...

    def admit(self, *, alone: bool) -> AbstractContextManager[object]:
        """Hold the caller's gate while a unit's user code may run (``alone``: nothing else runs)."""
        ...


class _NoHeartbeat:
    """Lambda's: an invocation ends inside the visibility timeout and runs one unit at a time."""

    def running(self, records: Sequence[SQSRecord]) -> AbstractContextManager[object]:
        return nullcontext()

    def stale(self) -> bool:
        return False

    def admit(self, *, alone: bool) -> AbstractContextManager[object]:
        return nullcontext()


#: The heartbeat of a processor that is given none (Lambda's).
NO_HEARTBEAT: Heartbeat = _NoHeartbeat()


class BaseBatchProcessor(ABC, Generic[ReportT, ReadT]):
    """One batch's skeleton (see the module docstring); a mode overrides its read and its run.

    Parameters
    ----------
    settings : RuntimeConfig
        The runtime's settings; the skeleton reads ``queue_url``, ``backoff_base_seconds`` and
        ``visibility_timeout_seconds`` (the cap of every delay), the variant the rest of its mode's.
    logger : JobLogger
        Writes one outcome line per record and the batch's line.
    visibility : VisibilityApplier
        Applies the batch's visibility changes
        (a :class:`~constructs_fifo.runtime.backoff.VisibilityChanger`).
    sqs : SQSClient or None
        Sends and deletes wake-up messages on ``settings.queue_url``; ``None``: no group can resume.
    heartbeat : Heartbeat
        Keeps the batch's records in flight while it runs; :data:`NO_HEARTBEAT` (Lambda's) by default.
    safety_margin_ms : int
        No unit starts with less time left than this.
    """

    #: What an ``ERROR`` line says when the batch's read failed.
    read_failed_note: ClassVar[str] = "the batch's groups could not be read"

    def __init__(
        self,
        settings: RuntimeConfig,
        logger: JobLogger,
        visibility: VisibilityApplier,
        sqs: SQSClient | None,
        *,
        heartbeat: Heartbeat = NO_HEARTBEAT,
        safety_margin_ms: int = DEFAULT_SAFETY_MARGIN_MS,
    ) -> None:
        self.settings = settings
        #: QueueName dimension of a record without ``eventSourceARN``: the queue's own name.
        self._queue_name = queue_name_from_arn(settings.queue_url)
        self._out = OutcomeWriter(logger, self._queue_name)
        self._visibility = visibility
        self._sqs = sqs
        self._queue_url = settings.queue_url
        self._heartbeat = heartbeat
        self._margin_ms = safety_margin_ms
        #: The retry delay after ``attempt`` runs: ``backoff(attempt)``.
        self.backoff = Backoff(settings.backoff_base_seconds, settings.visibility_timeout_seconds)

    def process(self, event: Mapping[str, Any], context: Any) -> BatchResponse:
        """Process one Lambda batch and return the partial-batch response.

        Parameters
        ----------
        event : Mapping
            The Lambda SQS event (``{"Records": [...]}``).
        context : Any
            The Lambda context (``get_remaining_time_in_millis`` is used when present); passed on
            to the user's function.

        Returns
        -------
        BatchResponse
            ``{"batchItemFailures": [{"itemIdentifier": messageId}, ...]}``.
        """
        return self.process_batch(list(event.get("Records") or []), context)

    def process_batch(self, records: list[SQSRecord], context: Any) -> BatchResponse:
        """Process records a caller received itself (the seam of the module docstring); as :meth:`process`."""
        report = self._new_report()
        for record in records:
            if is_wake_up(record):
                report.wake_ups.setdefault(record_group(record), []).append(record)
        with self._heartbeat.running(records):
            try:
                headers, read = self._read(records)
            except Exception as exc:  # without the batch's read nothing may run
                for record in records:
                    self._error(record, exc, report, note=self.read_failed_note)
            else:
                self._refresh(records, headers, report)
                latest = self._run(OpenedBatch(records, headers, read), context, report)
                settle_wake_ups(
                    latest,
                    report,
                    now_ms=self._now_ms(),
                    sqs=self._sqs,
                    queue_url=self._queue_url,
                    on_error=self._out.logger.event,
                )
        if report.changes:
            self._visibility.apply(report.changes)
        self._out.batch(records)
        return {"batchItemFailures": [{"itemIdentifier": message_id} for message_id in report.failures]}

    # --- the variant's steps -------------------------------------------------------------------------

    @abstractmethod
    def _new_report(self) -> ReportT:
        """An empty report of the variant's kind."""

    @abstractmethod
    def _read(self, records: list[SQSRecord]) -> tuple[Mapping[str, ParkHeader], ReadT]:
        """The batch's one read: its groups' park headers and what else the variant reads (may raise)."""

    @abstractmethod
    def _run(self, opened: OpenedBatch[ReadT], context: Any, report: ReportT) -> LatestHeaders:
        """Run the batch's units in order; return each group's header after the batch (``None``: live)."""

    @abstractmethod
    def _now_ms(self) -> int:
        """The stores' clock (epoch milliseconds), for the wake-up messages' retry times."""

    # --- what both variants do --------------------------------------------------------------------

    def _refresh(self, records: list[SQSRecord], headers: Mapping[str, ParkHeader], report: ReportT) -> None:
        refresh_worn_wake_ups(
            records,
            headers,
            report,
            sqs=self._sqs,
            queue_url=self._queue_url,
            on_error=self._out.logger.event,
        )

    def _out_of_time(self, context: Any) -> bool:
        """Whether no further unit may start: less than the margin left, or the batch went stale."""
        return remaining_ms(context) < self._margin_ms or self._heartbeat.stale()

    def _not_reached(self, records: Iterable[SQSRecord], report: ReportT) -> None:
        """Report records whose unit did not start in time: back at once (visibility 0), group blocked."""
        action = (
            f"not run: the batch went stale (its records' renewal failed); {RETRY_ACTION}"
            if self._heartbeat.stale()
            else f"not run: less than {self._margin_ms} ms left in the invocation; {RETRY_ACTION}"
        )
        for record in records:
            self._out.write(
                OutcomeStatus.DEADLINE,
                record,
                job_id=job_id_of(record),
                action=action,
                visibilityTimeout=0,
            )
            report.report(record, 0)
            report.blocked.setdefault(record_group(record), 0)

    def _error(self, record: SQSRecord, exc: BaseException, report: ReportT, *, note: str = "") -> None:
        """Report a record a dependency failed on, with its group's delay, and block the group.

        The traceback is ``exc``'s own (not the exception being handled, which may be another one
        that carries ``exc``), cut to its last five frames.
        """
        group = record_group(record)
        delay = report.blocked.get(group, self.backoff(1))
        self._out.write(
            OutcomeStatus.ERROR,
            record,
            job_id=job_id_of(record),
            error=describe(exc),
            traceback="".join(traceback.format_exception(exc, limit=5)),
            action=f"{note}; {RETRY_ACTION}" if note else RETRY_ACTION,
            visibilityTimeout=delay,
        )
        report.report(record, delay)
        report.blocked.setdefault(group, delay)

    def _not_kept(self, group: str, records: Iterable[SQSRecord], exc: Exception, report: ReportT) -> None:
        """A parked group's records could not be kept: nothing was written, every one comes back, in order."""
        for record in records:
            self._error(record, exc, report, note=f"the record could not be kept in parked group {group!r}")

    def _kept_lines(self, group: str, records: Iterable[SQSRecord], repeated: set[int], *, verb: str) -> None:
        """The lines of records kept in a parked group (``repeated``: the ids of those kept before)."""
        for record in records:
            again = id(record) in repeated
            self._out.write(
                OutcomeStatus.DUPLICATE if again else OutcomeStatus.KEPT,
                record,
                job_id=job_id_of(record),
                action=kept_action(group, again=again, verb=verb),
            )
