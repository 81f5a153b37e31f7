"""The ordered batch processor: one Lambda SQS FIFO batch, in order, with claims, dead jobs and parking.

Claim mode's variant of the batch skeleton (:mod:`constructs_fifo.runtime.batch_processor`: the
batch's opening, its deadline, its error path and its report are the skeleton's). Rules, per record
and in batch order:

1. **Parked groups first.** Under the PARK policy the park headers of the batch's groups are read
   with one consistent ``BatchGetItem`` (:mod:`constructs_fifo.runtime.dead_jobs.parking`). Every record of a
   group that has a header is kept in the group table behind the group's dead job instead of
   running. A resuming group then replays its kept records, in order, before anything else of it.
2. **Group blocked?** Once a record of group G is retried in this batch, every later record of G is
   reported failed without running (``SKIPPED``), with the same visibility delay, so the group comes
   back together and in order. Other groups go on. (Checked before parsing: a malformed record
   behind a retried one waits its turn too.)
3. **Deadline.** With less than ``safety_margin_ms`` left (or once the skeleton's heartbeat says the
   batch went stale) no further job starts: every remaining record is reported failed
   (``DEADLINE``, visibility 0).
4. **Parse.** A body that is not a job envelope is dead at once: parsing is deterministic. When it
   carries a usable ``jobId`` its claim is marked DEAD, so copies of it follow it.
5. **Claim and run** (:mod:`constructs_fifo.runtime.claim.runner`). With a ``pace`` limit the job
   first takes its key's token (:mod:`constructs_fifo.runtime.steering.pace_store`); none now:
   ``PACED``, retried when the token is due, blocking the group as a retry does, no attempt counted.
   A duplicate of a SUCCEEDED job is deleted; a conflict with another worker's live lease, a
   transient failure with attempts left and a fenced write are retried with backoff and block the
   group; a job that raised :class:`~constructs_fifo.runtime.exceptions.PermanentJobError`, failed
   on its last attempt, or crashed on its last attempt is dead.
   A job whose claim is ``CANCELLED`` (:mod:`constructs_fifo.runtime.claim.cancel`) is deleted without
   running, and a run whose claim was cancelled under it is deleted once it ends (its result is not
   recorded): ``CANCELLED``, never dead-lettered, the group goes on.
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

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.batch_processor import NO_HEARTBEAT, BaseBatchProcessor, Heartbeat, OpenedBatch
from constructs_fifo.runtime.batch_report import BatchReport, job_id_of
from constructs_fifo.runtime.claim.group_cancel import ClaimGroupCancel
from constructs_fifo.runtime.claim.runner import JobRunner, Step, StepKind
from constructs_fifo.runtime.claim.store import ClaimOutcome
from constructs_fifo.runtime.clock import DEFAULT_SAFETY_MARGIN_MS
from constructs_fifo.runtime.constants import ATTR_ATTEMPTS, DeadJobPolicy, DeadReason
from constructs_fifo.runtime.dead_jobs.letters import DeadLetter
from constructs_fifo.runtime.dead_jobs.parking import (
    PARKED,
    RESUMING,
    KeptRecord,
    ParkHeader,
    is_wake_up,
)
from constructs_fifo.runtime.dead_jobs.record import DeadJob
from constructs_fifo.runtime.error_text import describe
from constructs_fifo.runtime.exceptions import MalformedJobError
from constructs_fifo.runtime.job import JobHandler, parse_record, record_group, record_message_id
from constructs_fifo.runtime.observability import RETRY_ACTION, OutcomeStatus
from constructs_fifo.runtime.payloads.store import PayloadStore
from constructs_fifo.runtime.steering.group_cancel import is_cancelling
from constructs_fifo.runtime.steering.metrics import write_steered
from constructs_fifo.runtime.steering.pace_store import claim_table_key, open_pace

if TYPE_CHECKING:  # pragma: no cover - typing only
    from collections.abc import Mapping

    from mypy_boto3_sqs.client import SQSClient

    from constructs_fifo.runtime.backoff import VisibilityApplier
    from constructs_fifo.runtime.batch_processor import LatestHeaders
    from constructs_fifo.runtime.claim.store import ClaimStore
    from constructs_fifo.runtime.dead_jobs.letters import DeadLetterSender
    from constructs_fifo.runtime.dead_jobs.parking import ParkStore
    from constructs_fifo.runtime.observability import JobLogger
    from constructs_fifo.runtime.settings.config import RuntimeConfig
    from constructs_fifo.runtime.steering.pace_store import PaceStore
    from constructs_fifo.runtime.types import SQSRecord

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


class OrderedBatchProcessor(BaseBatchProcessor[ClaimBatchReport, None]):
    """Processes Lambda SQS FIFO batches in claim mode; see the module docstring for the rules.

    The batch's skeleton (opening, deadline, errors, report) is
    :class:`~constructs_fifo.runtime.batch_processor.BaseBatchProcessor`'s; this variant reads the
    park headers and runs the records one at a time under their claims.

    Parameters
    ----------
    settings : RuntimeConfig
        The runtime's settings: ``on_dead_job`` (what happens to a group after one of its jobs
        died), ``queue_url``, ``backoff_base_seconds`` and ``visibility_timeout_seconds``. The claim
        store carries ``max_attempts``.
    handler : JobHandler
        The user's ``handle(job, context)``.
    claims : ClaimStore
        The claim table (with ``max_attempts``).
    visibility, logger, sqs, heartbeat, safety_margin_ms
        As :class:`~constructs_fifo.runtime.batch_processor.BaseBatchProcessor`'s; ``sqs`` sends a
        resumed group's fresh wake-up message, required by PARK.
    dead_letters : DeadLetterSender
        Sends dead jobs to the dead-letter queue.
    parking : ParkStore or None
        The group table; required by the PARK policy.
    payloads : PayloadStore or None
        The payload bucket's reader and writer (``large_payloads``): pointer bodies, results over 64 KiB.
        ``None``: the process's own, from ``CONSTRUCTS_FIFO_PAYLOAD_BUCKET``, its client made on first need.
    pace_store : PaceStore or None
        The queue's pace limit on the claim table: a job takes its key's token before its claim;
        without one it waits in its place, no attempt counted (docs/steering.md). ``None``: the one
        ``settings.pace`` names, if any.

    Examples
    --------
    >>> processor = OrderedBatchProcessor(  # doctest: +SKIP
    ...     settings=RuntimeConfig("claims", queue_url, on_dead_job=DeadJobPolicy.CONTINUE),
    ...     handler=handle, claims=store, dead_letters=dlq, logger=logger,
    ...     visibility=VisibilityChanger(sqs, queue_url, on_error=logger.event))
    >>> processor.process(event, context)  # doctest: +SKIP
    {'batchItemFailures': [{'itemIdentifier': '...'}]}
    """

    read_failed_note = "the park headers could not be read"

    def __init__(
        self,
        *,
        settings: RuntimeConfig,
        handler: JobHandler,
        claims: ClaimStore,
        visibility: VisibilityApplier,
        logger: JobLogger,
        dead_letters: DeadLetterSender,
        parking: ParkStore | None = None,
        sqs: SQSClient | None = None,
        heartbeat: Heartbeat = NO_HEARTBEAT,
        safety_margin_ms: int = DEFAULT_SAFETY_MARGIN_MS,
        payloads: PayloadStore | None = None,
        pace_store: PaceStore | None = None,
    ) -> None:
        policy = settings.on_dead_job
        if policy is DeadJobPolicy.PARK and (parking is None or sqs is None or not settings.queue_url):
            raise ValueError(
                "the PARK policy needs parking (a ParkStore on the group table), sqs and queue_url; "
                "pass them, or use DeadJobPolicy.CONTINUE"
            )
        super().__init__(
            settings, logger, visibility, sqs, heartbeat=heartbeat, safety_margin_ms=safety_margin_ms
        )
        self._runner = JobRunner(
            handler=handler,
            claims=claims,
            out=self._out,
            backoff_base_seconds=settings.backoff_base_seconds,
            cap_seconds=settings.visibility_timeout_seconds,
            payloads=payloads,
            pace=pace_store or open_pace(settings.pace, claims.table_name, claims.client, claim_table_key),
        )
        self._payloads = payloads  # None: the process's (large_payloads; made on the first pointer)
        self._claims = claims
        self._dead_letters = dead_letters
        self._policy = policy
        self._parking = parking
        self._cancelling = ClaimGroupCancel(claims, parking, self._out, send_dead=self._send_dead_claimed)

    # --- the skeleton's steps -----------------------------------------------------------------------

    def _new_report(self) -> ClaimBatchReport:
        return ClaimBatchReport()

    def _read(self, records: list[SQSRecord]) -> tuple[Mapping[str, ParkHeader], None]:
        """Rule 1: the park headers of the batch's groups (none to read without parking)."""
        if self._parking is None:
            return {}, None
        return self._parking.headers([record_group(record) for record in records]), None

    def _run(self, opened: OpenedBatch[None], context: Any, batch: ClaimBatchReport) -> LatestHeaders:
        """Rules 2 to 6 for the records of live groups, then rule 1's keeping and replays; a cancelling
        group's records first (:mod:`~constructs_fifo.runtime.steering.group_cancel`)."""
        records, headers = opened.records, opened.headers
        cancelling = {group: header for group, header in headers.items() if is_cancelling(header)}
        latest: dict[str, ParkHeader | None] = {}
        if cancelling:
            records = [record for record in records if record_group(record) not in cancelling]
            headers = {group: header for group, header in headers.items() if group not in cancelling}
            for group, header in cancelling.items():
                of_group = [record for record in opened.records if record_group(record) == group]
                latest[group] = self._cancelling.run(header, of_group, batch, on_error=self._error)
        self._process_records(records, context, headers, batch)
        return {**self._keep_and_replay(headers, context, batch), **latest}

    def _now_ms(self) -> int:
        return self._parking.now_ms() if self._parking is not None else 0

    # --- rule 1: parked groups ----------------------------------------------------------------------

    def _keep_and_replay(
        self, headers: Mapping[str, ParkHeader], context: Any, batch: ClaimBatchReport
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
        except Exception as exc:
            self._not_kept(group, records, exc, batch)
            return header
        first, *rest = records
        if header is None and step is not None and step.dead is not None:
            self._log_dead(OutcomeStatus.PARKED, first, step, action="group parked at this dead job; kept")
        else:
            rest = records
        repeated = (
            set() if header is None else {id(r) for r in rest} - {id(r) for r in header.new_records(rest)}
        )
        self._kept_lines(group, rest, repeated, verb="run")
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
            self._out.logger.event({"event": "replay_failed", "group": header.group, "error": describe(exc)})
            batch.blocked.setdefault(header.group, self.backoff(1))
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
                if self._out_of_time(context):
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
                delay = step.delay_seconds if step.kind is StepKind.RETRY else self.backoff(1)
                return parking.advance(current, done=done, retry_at_ms=parking.now_ms() + delay * 1000)
            current = parking.advance(current, done=done)

    # --- rules 2 to 6: records of live groups -------------------------------------------------------

    def _process_records(
        self,
        records: list[SQSRecord],
        context: Any,
        headers: Mapping[str, ParkHeader],
        batch: ClaimBatchReport,
    ) -> None:
        out_of_time = False
        wake_ups = bool(batch.wake_ups)
        for record in records:
            if wake_ups and is_wake_up(record):  # set aside by the skeleton
                continue
            group = record_group(record)
            if group in headers or group in batch.parking:
                batch.keep.setdefault(group, []).append(record)
                continue
            if group in batch.blocked:
                self._skip(record, batch.blocked[group], batch)
                continue
            out_of_time = out_of_time or self._out_of_time(context)
            if out_of_time:
                self._not_reached((record,), batch)
                continue
            try:
                step = self._run_record(record, context, replayed=False)
            except Exception as exc:  # a dependency failed on this record: keep it, block its group
                self._error(record, exc, batch)
                continue
            self._settle(record, step, batch)

    def _run_record(self, record: SQSRecord, context: Any, *, replayed: bool) -> Step:
        """Parse and run one record (from the queue, or a kept record replayed)."""
        fields: dict[str, Any] = {"replayed": True} if replayed else {}
        try:
            job = parse_record(record, self._payloads)
        except MalformedJobError as exc:
            if exc.job_id is not None:
                try:
                    found = self._claims.mark_malformed_dead(
                        exc.job_id,
                        group=record_group(record),
                        message_id=record_message_id(record),
                        error=str(exc),
                    )
                    if found.outcome is ClaimOutcome.CANCELLED:  # cancelled: never dead-lettered
                        write_steered(
                            self._out,
                            OutcomeStatus.CANCELLED,
                            record,
                            job_id=exc.job_id,
                            action="not run: the job was cancelled (its body is malformed); deleted",
                            **fields,
                        )
                        return Step(StepKind.DONE)
                except Exception as write_error:  # the record is dead either way; a copy may still run
                    self._out.logger.event(
                        {
                            "event": "dead_claim_write_failed",
                            "jobId": exc.job_id,
                            "messageId": record_message_id(record),
                            "error": describe(write_error),
                        }
                    )
            return Step(StepKind.DEAD, letter=self._malformed_letter(record, exc), attempt_failed=True)
        return self._runner.run(job, record, context, **fields)

    def _malformed_letter(self, record: SQSRecord, exc: MalformedJobError) -> DeadLetter:
        """The dead letter of a record whose body is not a job (``MALFORMED``, no attempt)."""
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
        return DeadLetter(body=str(record.get("body", "")), group=record_group(record), dead=dead)

    def _settle(self, record: SQSRecord, step: Step, batch: ClaimBatchReport) -> None:
        if step.kind is StepKind.DONE:
            return
        group = record_group(record)
        if step.kind is StepKind.RETRY:
            batch.report(record, step.delay_seconds)
            batch.blocked.setdefault(group, step.delay_seconds)
            return
        if step.dead is None:
            return
        if self._policy is DeadJobPolicy.PARK and step.dead.reason is not DeadReason.COPY_OF_DEAD_JOB:
            batch.parking[group] = step
            batch.keep.setdefault(group, []).append(record)
            return
        if not self._send_dead(record, step):
            delay = self.backoff(1)
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
                error=describe(exc),
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

    def _send_dead_claimed(self, record: SQSRecord, claim: dict[str, Any]) -> bool:
        """A record whose claim ``claim`` is DEAD, met where its group cannot park (a cancelling
        group's): to the dead-letter queue, with the reason its claim stores (or as a copy)."""
        try:
            job = parse_record(record, self._payloads)
        except MalformedJobError as exc:  # a malformed body with a job id: its claim was marked DEAD
            return self._send_dead(record, Step(StepKind.DEAD, letter=self._malformed_letter(record, exc)))
        attempts = claim.get(ATTR_ATTEMPTS)
        letter = self._runner.letter_of_dead(
            job, record, claim, attempts=attempts if isinstance(attempts, int) else job.attempt
        )
        return self._send_dead(record, Step(StepKind.DEAD, letter=letter))

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
