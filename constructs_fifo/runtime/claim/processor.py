"""The ordered batch processor: one Lambda SQS FIFO batch, in order, with claims, dead jobs and parking.

Rules, per record and in batch order:

1. **Parked groups first.** Under the PARK policy the park headers of the batch's groups are read
   with one consistent ``BatchGetItem`` (:mod:`constructs_fifo.runtime.dead_jobs.parking`). Every record of a
   group that has a header is kept in the group table behind the group's dead job instead of
   running. A resuming group then replays its kept records, in order, before anything else of it.
2. **Group blocked?** Once a record of group G is retried in this batch, every later record of G is
   reported failed without running (``SKIPPED``), with the same visibility delay, so the group comes
   back together and in order. Other groups go on. (Checked before parsing: a malformed record
   behind a retried one waits its turn too.)
3. **Deadline.** With less than ``safety_margin_ms`` left no further job starts: every remaining
   record is reported failed (``DEADLINE``, visibility 0).
4. **Parse.** A body that is not a job envelope is dead at once: parsing is deterministic. When it
   carries a usable ``jobId`` its claim is marked DEAD, so copies of it follow it.
5. **Claim and run** (:mod:`constructs_fifo.runtime.claim.runner`). A duplicate of a SUCCEEDED job is
   deleted; a conflict with another worker's live lease, a transient failure with attempts left and
   a fenced write are retried with backoff and block the group; a job that raised
   :class:`~constructs_fifo.runtime.exceptions.PermanentJobError`, failed on its last attempt, or
   crashed on its last attempt is dead.
6. **A dead job** leaves the queue only because it itself died. Under CONTINUE it is sent to the
   dead-letter queue in its own group, with triage attributes, and deleted from the source; the group
   goes on. Under PARK its group is parked at it (rule 1 from now on). A copy of a job that is already
   dead follows it to the dead-letter queue under both policies, without running.

Attempts are the runtime's own count of runs started (in the claim), never ``ApproximateReceiveCount``:
SQS raises the receive count of every record it returns, including the records behind a failing job
that were reported without running. ``maxReceiveCount`` is only the safety net for a function that
cannot start at all; the construct keeps it at or above the most receives the runtime's own retries
can give a record that never failed itself (the rule: docs/architecture.md, rule 9).

Guarantees of the response: it lists every record that is retried, skipped or not reached (never
empty when something is retried); it is returned, not raised, when every record failed; an
unexpected exception for one record reports that record and blocks its group, so no record is lost.
All visibility changes of a batch go out in ChangeMessageVisibilityBatch calls, whose failure is
logged and never raised.
"""

from __future__ import annotations

import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.backoff import VisibilityApplier
from constructs_fifo.runtime.batch_report import (
    BatchReport,
    job_id_of,
    refresh_worn_wake_ups,
    settle_wake_ups,
)
from constructs_fifo.runtime.claim.runner import JobRunner, Step, StepKind
from constructs_fifo.runtime.clock import DEFAULT_SAFETY_MARGIN_MS, remaining_ms
from constructs_fifo.runtime.constants import (
    DEFAULT_BACKOFF_BASE_SECONDS,
    DEFAULT_ON_DEAD_JOB,
    DeadJobPolicy,
    DeadReason,
)
from constructs_fifo.runtime.dead_jobs.letters import DeadLetter
from constructs_fifo.runtime.dead_jobs.parking import (
    PARKED,
    RESUMING,
    KeptRecord,
    ParkHeader,
    is_wake_up,
    kept_action,
)
from constructs_fifo.runtime.dead_jobs.record import DeadJob
from constructs_fifo.runtime.exceptions import MalformedJobError
from constructs_fifo.runtime.job import JobHandler, parse_record, record_group, record_message_id
from constructs_fifo.runtime.observability import RETRY_ACTION, OutcomeStatus, OutcomeWriter
from constructs_fifo.runtime.settings.config import MAX_VISIBILITY_TIMEOUT_SECONDS

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_sqs.client import SQSClient

    from constructs_fifo.runtime.claim.store import ClaimStore
    from constructs_fifo.runtime.dead_jobs.letters import DeadLetterSender
    from constructs_fifo.runtime.dead_jobs.parking import ParkStore
    from constructs_fifo.runtime.observability import JobLogger
    from constructs_fifo.runtime.types import BatchResponse, SQSRecord

__all__ = ["ClaimBatchReport", "OrderedBatchProcessor"]


@dataclass
class ClaimBatchReport(BatchReport):
    """A batch's report with claim mode's parking: records to keep, and the dead job that parks a group.

    Attributes
    ----------
    keep : dict
        Group -> records to keep in its parked group.
    parking : dict
        Group -> the step of the dead job that parks it in this batch.
    """

    keep: dict[str, list[SQSRecord]] = field(default_factory=dict)
    parking: dict[str, Step] = field(default_factory=dict)


class OrderedBatchProcessor:
    """Processes Lambda SQS FIFO batches; see the module docstring for the rules.

    Parameters
    ----------
    handler : JobHandler
        The user's ``handle(job, context)``.
    claims : ClaimStore
        The claim table (with ``max_attempts``).
    visibility : VisibilityApplier
        Applies the retry delays (a :class:`~constructs_fifo.runtime.backoff.VisibilityChanger`).
    logger : JobLogger
        Writes one outcome line per record.
    dead_letters : DeadLetterSender
        Sends dead jobs to the dead-letter queue.
    policy : DeadJobPolicy
        What happens to a group after one of its jobs died; PARK by default, as the construct's.
    parking : ParkStore or None
        The group table; required by the PARK policy.
    sqs : SQSClient or None
        Sends a resumed group's fresh wake-up message (with ``queue_url``); required by PARK.
    queue_url : str
        The source queue.
    backoff_base_seconds : int
        First retry delay; doubles with every attempt.
    visibility_timeout_seconds : int
        The queue's visibility timeout: the cap of every delay.
    safety_margin_ms : int
        No job starts with less invocation time left than this.
    queue_name : str
        QueueName dimension when a record has no ``eventSourceARN``.

    Examples
    --------
    >>> processor = OrderedBatchProcessor(handler=handle, claims=store, dead_letters=dlq,  # doctest: +SKIP
    ...     visibility=VisibilityChanger(sqs, queue_url, on_error=logger.event), logger=logger,
    ...     policy=DeadJobPolicy.CONTINUE)
    >>> processor.process(event, context)  # doctest: +SKIP
    {'batchItemFailures': [{'itemIdentifier': '...'}]}
    """

    def __init__(
        self,
        *,
        handler: JobHandler,
        claims: ClaimStore,
        visibility: VisibilityApplier,
        logger: JobLogger,
        dead_letters: DeadLetterSender,
        policy: DeadJobPolicy = DEFAULT_ON_DEAD_JOB,
        parking: ParkStore | None = None,
        sqs: SQSClient | None = None,
        queue_url: str = "",
        backoff_base_seconds: int = DEFAULT_BACKOFF_BASE_SECONDS,
        visibility_timeout_seconds: int = MAX_VISIBILITY_TIMEOUT_SECONDS,
        safety_margin_ms: int = DEFAULT_SAFETY_MARGIN_MS,
        queue_name: str = "",
    ) -> None:
        if policy is DeadJobPolicy.PARK and (parking is None or sqs is None or not queue_url):
            raise ValueError(
                "the PARK policy needs parking (a ParkStore on the group table), sqs and queue_url; "
                "pass them, or use DeadJobPolicy.CONTINUE"
            )
        self._out = OutcomeWriter(logger, queue_name)
        self._runner = JobRunner(
            handler=handler,
            claims=claims,
            out=self._out,
            backoff_base_seconds=backoff_base_seconds,
            cap_seconds=visibility_timeout_seconds,
        )
        self._claims = claims
        self._visibility = visibility
        self._dead_letters = dead_letters
        self._policy = policy
        self._parking = parking
        self._sqs = sqs
        self._queue_url = queue_url
        self._margin_ms = safety_margin_ms

    def process(self, event: Mapping[str, Any], context: Any) -> BatchResponse:
        """Process one batch and return the partial-batch response.

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
        records: list[SQSRecord] = list(event.get("Records") or [])
        batch = ClaimBatchReport()
        headers = self._read_headers(records, batch)
        if headers is not None:
            refresh_worn_wake_ups(
                records,
                headers,
                batch,
                sqs=self._sqs,
                queue_url=self._queue_url,
                on_error=self._out.logger.event,
            )
            self._process_records(records, context, headers, batch)
            resumed = self._keep_and_replay(headers, context, batch)
            settle_wake_ups(
                resumed,
                batch,
                now_ms=self._parking.now_ms() if self._parking is not None else 0,
                sqs=self._sqs,
                queue_url=self._queue_url,
                on_error=self._out.logger.event,
            )
        if batch.changes:
            self._visibility.apply(batch.changes)
        self._out.batch(records)
        return {"batchItemFailures": [{"itemIdentifier": message_id} for message_id in batch.failures]}

    # --- rule 1: parked groups ----------------------------------------------------------------------

    def _read_headers(
        self, records: list[SQSRecord], batch: ClaimBatchReport
    ) -> dict[str, ParkHeader] | None:
        """The park headers of the batch's groups; ``None`` (every record reported) when unreadable."""
        if self._parking is None:
            return {}
        try:
            return self._parking.headers([record_group(record) for record in records])
        except Exception as exc:  # without knowing which groups are parked, nothing may run
            for record in records:
                self._internal_error(record, exc, batch, note="the park headers could not be read")
            return None

    def _keep_and_replay(
        self, headers: dict[str, ParkHeader], context: Any, batch: ClaimBatchReport
    ) -> dict[str, ParkHeader | None]:
        """Keep the records of parked groups, then replay resuming groups; return their last headers."""
        latest: dict[str, ParkHeader | None] = dict(headers)
        for group, records in batch.keep.items():
            latest[group] = self._keep(group, records, headers.get(group), batch)
        for group in list(latest):
            header = latest[group]
            if header is not None and header.status == RESUMING and group not in batch.blocked:
                latest[group] = self._replay_group(header, context, batch)
        return latest

    def _keep(
        self, group: str, records: list[SQSRecord], header: ParkHeader | None, batch: ClaimBatchReport
    ) -> ParkHeader | None:
        parking = self._parking
        assert parking is not None  # the PARK policy is the only way records are kept
        step = batch.parking.get(group)
        try:
            if header is None:
                dead = step.dead if step is not None else None
                assert dead is not None  # a group without a header is kept only when it parks now
                updated = parking.park(group, records, dead=dead)
            else:
                updated = parking.keep(header, records)
        except Exception as exc:  # nothing was written: every record comes back, in order
            for record in records:
                self._internal_error(
                    record, exc, batch, note=f"the record could not be kept in parked group {group!r}"
                )
            return header
        first, *rest = records
        if header is None and step is not None and step.dead is not None:
            self._log_dead(OutcomeStatus.PARKED, first, step, action="group parked at this dead job; kept")
        else:
            rest = records
        repeated = (
            set() if header is None else {id(r) for r in rest} - {id(r) for r in header.new_records(rest)}
        )
        for record in rest:
            self._out.write(
                OutcomeStatus.DUPLICATE if id(record) in repeated else OutcomeStatus.KEPT,
                record,
                job_id=job_id_of(record),
                action=kept_action(group, again=id(record) in repeated, verb="run"),
            )
        return updated

    def _replay_group(self, header: ParkHeader, context: Any, batch: ClaimBatchReport) -> ParkHeader | None:
        """Replay a resuming group's kept records in order; return its header (``None``: live again)."""
        parking = self._parking
        assert parking is not None
        if header.retry_at_ms > parking.now_ms():
            return header
        try:
            return self._replay_pages(header, parking, context)
        except Exception as exc:  # progress so far is safe: replays of finished jobs are duplicates
            self._out.logger.event(
                {"event": "replay_failed", "group": header.group, "error": f"{type(exc).__name__}: {exc}"}
            )
            batch.blocked.setdefault(header.group, self._runner.backoff(1))
            return header

    def _replay_pages(self, header: ParkHeader, parking: ParkStore, context: Any) -> ParkHeader | None:
        """Replay page after page; each page's finished records go with one header update."""
        current = header
        while True:
            page = parking.kept(current.group)
            if not page:
                parking.finish(current)
                self._out.logger.event({"level": "INFO", "event": "group_resumed", "group": current.group})
                return None
            done: list[KeptRecord] = []
            for kept in page:
                if remaining_ms(context) < self._margin_ms:
                    return parking.advance(current, done=done, retry_at_ms=parking.now_ms())
                step = self._run_record(kept.record, context, replayed=True)
                if step.kind is StepKind.DONE:
                    done.append(kept)
                    continue
                dead = step.dead
                if dead is not None and dead.reason is not DeadReason.COPY_OF_DEAD_JOB:
                    self._log_dead(
                        OutcomeStatus.PARKED, kept.record, step, action="group parked again", replayed=True
                    )
                    return parking.advance(current, done=done, status=PARKED, retry_at_ms=0, dead=dead)
                if dead is not None and self._send_dead(kept.record, step):
                    done.append(kept)  # a copy of a dead job follows it to the dead-letter queue
                    continue
                delay = step.delay_seconds if step.kind is StepKind.RETRY else self._runner.backoff(1)
                return parking.advance(current, done=done, retry_at_ms=parking.now_ms() + delay * 1000)
            current = parking.advance(current, done=done)

    # --- rules 2 to 6: records of live groups -------------------------------------------------------

    def _process_records(
        self, records: list[SQSRecord], context: Any, headers: dict[str, ParkHeader], batch: ClaimBatchReport
    ) -> None:
        out_of_time = False
        for record in records:
            group = record_group(record)
            if is_wake_up(record):
                batch.wake_ups.setdefault(group, []).append(record)
                continue
            if group in headers or group in batch.parking:
                batch.keep.setdefault(group, []).append(record)
                continue
            if group in batch.blocked:
                self._skip(record, batch.blocked[group], batch)
                continue
            if not out_of_time and remaining_ms(context) < self._margin_ms:
                out_of_time = True
            if out_of_time:
                self._out.write(
                    OutcomeStatus.DEADLINE,
                    record,
                    job_id=job_id_of(record),
                    action=f"not run: less than {self._margin_ms} ms left in the invocation; {RETRY_ACTION}",
                    visibilityTimeout=0,
                )
                batch.report(record, 0)
                batch.blocked.setdefault(group, 0)
                continue
            try:
                step = self._run_record(record, context, replayed=False)
            except Exception as exc:  # a dependency failed on this record: keep it, block its group
                self._internal_error(record, exc, batch)
                continue
            self._settle(record, step, batch)

    def _run_record(self, record: SQSRecord, context: Any, *, replayed: bool) -> Step:
        """Parse and run one record (from the queue, or a kept record replayed)."""
        fields: dict[str, Any] = {"replayed": True} if replayed else {}
        try:
            job = parse_record(record)
        except MalformedJobError as exc:
            if exc.job_id is not None:
                try:
                    self._claims.mark_malformed_dead(
                        exc.job_id,
                        group=record_group(record),
                        message_id=record_message_id(record),
                        error=str(exc),
                    )
                except Exception as write_error:  # the record is dead either way; a copy may still run
                    self._out.logger.event(
                        {
                            "event": "dead_claim_write_failed",
                            "jobId": exc.job_id,
                            "messageId": record_message_id(record),
                            "error": f"{type(write_error).__name__}: {write_error}",
                        }
                    )
            dead = DeadJob(
                job_id=exc.job_id or "",
                job_type="",
                error_type=type(exc).__name__,
                error=str(exc),
                attempts=0,
                message_id=record_message_id(record),
                at_ms=self._claims.now_ms(),
                reason=DeadReason.MALFORMED,
            )
            letter = DeadLetter(body=str(record.get("body", "")), group=record_group(record), dead=dead)
            return Step(StepKind.DEAD, letter=letter, attempt_failed=True)
        return self._runner.run(job, record, context, **fields)

    def _settle(self, record: SQSRecord, step: Step, batch: ClaimBatchReport) -> None:
        group = record_group(record)
        if step.kind is StepKind.RETRY:
            batch.report(record, step.delay_seconds)
            batch.blocked.setdefault(group, step.delay_seconds)
            return
        if step.kind is StepKind.DONE or step.dead is None:
            return
        if self._policy is DeadJobPolicy.PARK and step.dead.reason is not DeadReason.COPY_OF_DEAD_JOB:
            batch.parking[group] = step
            batch.keep.setdefault(group, []).append(record)
            return
        if not self._send_dead(record, step):
            delay = self._runner.backoff(1)
            batch.report(record, delay)
            batch.blocked.setdefault(group, delay)

    def _send_dead(self, record: SQSRecord, step: Step) -> bool:
        """Send a dead job to the dead-letter queue; ``False`` (logged) when the send failed."""
        assert step.letter is not None
        try:
            dlq_message_id = self._dead_letters.send(step.letter)
        except Exception as exc:
            self._out.write(
                OutcomeStatus.ERROR,
                record,
                job_id=step.letter.dead.job_id or None,
                error=f"{type(exc).__name__}: {exc}",
                action=f"the dead job could not be sent to the dead-letter queue; {RETRY_ACTION}",
                reason=step.letter.dead.reason.value,
            )
            return False
        self._log_dead(
            OutcomeStatus.DEAD_LETTERED,
            record,
            step,
            action="sent to the dead-letter queue",
            dlqMessageId=dlq_message_id,
        )
        return True

    # --- outcome lines ------------------------------------------------------------------------------

    def _skip(self, record: SQSRecord, delay: int, batch: ClaimBatchReport) -> None:
        group = record_group(record)
        self._out.write(
            OutcomeStatus.SKIPPED,
            record,
            job_id=job_id_of(record),
            action=f"not run: an earlier record of group {group!r} is retried; {RETRY_ACTION}",
            visibilityTimeout=delay,
        )
        batch.report(record, delay)

    def _log_dead(self, status: OutcomeStatus, record: SQSRecord, step: Step, **fields: Any) -> None:
        dead = step.dead
        assert dead is not None
        self._out.write(
            status,
            record,
            job_id=dead.job_id or None,
            job_type=dead.job_type or None,
            attempt=dead.attempts,
            duration_ms=step.duration_ms,
            error=f"{dead.error_type}: {dead.error}",
            attempt_failed=step.attempt_failed,
            reason=dead.reason.value,
            attempts=dead.attempts,
            **fields,
        )

    def _internal_error(
        self, record: SQSRecord, exc: Exception, batch: ClaimBatchReport, *, note: str = ""
    ) -> None:
        group = record_group(record)
        delay = batch.blocked.get(group, self._runner.backoff(1))
        self._out.write(
            OutcomeStatus.ERROR,
            record,
            job_id=job_id_of(record),
            error=f"{type(exc).__name__}: {exc}",
            traceback=traceback.format_exc(limit=5),
            action=f"{note + '; ' if note else ''}{RETRY_ACTION}",
            visibilityTimeout=delay,
        )
        batch.report(record, delay)
        batch.blocked.setdefault(group, delay)
