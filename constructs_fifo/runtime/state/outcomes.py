"""State mode's side of a group's results: its dead letters (sent, or owed by its commit), its outcome
lines and metrics, and the one write.

Shared by the group commit (:mod:`constructs_fifo.runtime.state.commit`), the batch processor
(:mod:`constructs_fifo.runtime.state.processor`) and the replay of a resuming group
(:mod:`constructs_fifo.runtime.state.replay`); the rules of a record's outcome are in their
docstrings. Every record gets one outcome line; a job applied out of the reorder buffer (its record
was deleted when it was buffered) gets its ``SUCCEEDED`` line when it is applied, so every counter is
exact.

**Dead letters owed** (:class:`OwedLetters`). A job waiting in the reorder buffer has no record of
its own (it was deleted when the job was buffered). When it dies (go-on policy), nothing could be
reported if its dead-letter send failed after the commit, and a send before the commit would leave
it in the dead-letter queue yet not dead in the state if the worker stopped before the commit (its
next run could apply it). So:

1. **Commit first.** The commit records the job dead (as every dead job) and *owed*
   (``book.owed``: its body and dead entry).
2. **Then send** (:meth:`OwedLetters.send_new`). When every send went through, one conditional write
   on the committed version clears what is owed (a lost race leaves it to the winner, which read it
   and sends it too). A send that fails leaves it owed, and the caller reports one of the group's
   records (or its wake-up message) so that the group comes back.
3. **What is owed goes first.** A run of a group that owes dead letters sends them before anything
   else (:meth:`OwedLetters.pay`) and its commit clears them; if a send fails, nothing of the run is
   committed and its records come back. So at most one run's dead buffered jobs are ever owed.

A letter sent twice (a crash between the send and the clearing write, a lost race) has the same
deduplication id (derived from the buffered job's message id): SQS collapses the copies within its
5-minute window. Nothing owed is dropped. Only a group whose buffered job died pays the extra write;
a book without ``owed`` (every other one, and those written before it existed) reads as nothing owed.
"""

from __future__ import annotations

import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.backoff import Backoff
from constructs_fifo.runtime.batch_report import job_id_of
from constructs_fifo.runtime.constants import (
    DEFAULT_FIRST_SEQ,
    METRIC_GROUPS_PARKED,
    METRIC_JOBS_FAILED,
    DeadReason,
)
from constructs_fifo.runtime.constants import METRIC_SEQ_GAP_OPEN_SECONDS as GAP_OPEN
from constructs_fifo.runtime.constants import METRIC_SEQ_GAPS_SKIPPED as GAPS_SKIPPED
from constructs_fifo.runtime.constants import METRIC_SEQ_JOBS_SKIPPED as JOBS_SKIPPED
from constructs_fifo.runtime.dead_jobs.letters import DeadLetter
from constructs_fifo.runtime.dead_jobs.record import DeadJob
from constructs_fifo.runtime.error_text import describe
from constructs_fifo.runtime.exceptions import ParkConflictError
from constructs_fifo.runtime.job import record_attempt, record_group, record_message_id
from constructs_fifo.runtime.observability import RETRY_ACTION, OutcomeStatus, queue_name_from_arn
from constructs_fifo.runtime.state.core.records import Outcome, RetryReason
from constructs_fifo.runtime.steering.metrics import write_steered
from constructs_fifo.runtime.steering.names import SUPERSEDED_BY, SUPERSEDED_REASON_PREFIX

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.batch_report import BatchReport
    from constructs_fifo.runtime.dead_jobs.letters import DeadLetterSender
    from constructs_fifo.runtime.dead_jobs.parking import ParkStore
    from constructs_fifo.runtime.job import Job
    from constructs_fifo.runtime.observability import OutcomeWriter
    from constructs_fifo.runtime.state.core.apply import RecordingTransition
    from constructs_fifo.runtime.state.core.records import BatchResult, BufferedJob, GroupState, JobResult
    from constructs_fifo.runtime.state.storage.runs import RunMarker
    from constructs_fifo.runtime.state.storage.store import StateStore
    from constructs_fifo.runtime.types import SQSRecord

__all__ = ["OwedLetters", "OwedSend", "StateOutcomes", "buffered_record", "owing"]

_LOST_RACE = (
    "the group's state changed since this batch read it (another worker committed first, and its state "
    "stands); nothing of this batch was committed"
)


def buffered_record(entry: BufferedJob, group: str, like: SQSRecord | None = None) -> SQSRecord:
    """A record standing for a buffered job (its own was deleted when it was buffered).

    ``like`` (a record of the batch) lends its ``eventSourceARN`` for the outcome line's queue name.
    Its body is the job's body as it was sent, byte for byte (:attr:`BufferedJob.text`).
    """
    record: SQSRecord = {
        "messageId": entry.message_id,
        "body": entry.text,
        "attributes": {"MessageGroupId": group},
    }
    if like is not None and like.get("eventSourceARN"):
        record["eventSourceARN"] = like["eventSourceARN"]
    return record


class StateOutcomes:
    """Writes a group's results: the commit, the dead-letter messages, the lines and the metrics.

    Parameters
    ----------
    out : OutcomeWriter
        Where outcome lines go.
    states, parking : StateStore, ParkStore
        The group table's two stores.
    dead_letters : DeadLetterSender
        Sends dead jobs to the dead-letter queue.
    max_attempts, backoff_base_seconds, cap_seconds : int
        For the ``attempt n of m`` text and the retry delays.
    queue_name : str
        QueueName dimension of the metric lines.
    """

    def __init__(
        self,
        *,
        out: OutcomeWriter,
        states: StateStore,
        parking: ParkStore,
        dead_letters: DeadLetterSender,
        max_attempts: int,
        backoff_base_seconds: int,
        cap_seconds: int,
        queue_name: str,
    ) -> None:
        self.out = out
        self._states = states
        self._parking = parking
        self._dead_letters = dead_letters
        self._max_attempts = max_attempts
        self._queue_name = queue_name
        #: The retry delay after ``attempt`` runs: ``backoff(attempt)``.
        self.backoff = Backoff(backoff_base_seconds, cap_seconds)

    # --- the write -------------------------------------------------------------------------------------

    def write(
        self,
        group: str,
        group_state: GroupState,
        expected_version: int,
        *,
        changed: bool,
        items: Sequence[Mapping[str, Any]] = (),
    ) -> bool:
        """The group's one conditional write: ``PutItem``, or one transaction with ``items``.

        Returns ``False`` when the race was lost (nothing written); raises on any other failure.
        """
        if changed:
            return self._states.commit(group, group_state, expected_version, with_items=items)
        if items:
            try:
                self._parking.transact(items, group)
            except ParkConflictError:
                return False
        return True

    # --- dead jobs ---------------------------------------------------------------------------------

    def letter(
        self,
        entry: DeadJob,
        *,
        group: str,
        body: str,
        message_id: str | None = None,
        copy: bool = False,
    ) -> DeadLetter:
        """The dead-letter message of a dead entry (``copy``: a copy, in another message, of a job that
        died before; give ``copy=result.dead is None``)."""
        dead = replace(entry, message_id=message_id or entry.message_id)
        if copy:
            error = f"job {entry.job_id!r} died before; this copy follows it to the dead-letter queue"
            dead = replace(
                dead, reason=DeadReason.COPY_OF_DEAD_JOB, error_type="DeadJob", error=error, attempts=0
            )
        return DeadLetter(body=body, group=group, dead=dead)

    def entry_of(self, result: JobResult, job: Job | None) -> DeadJob:
        """The dead entry of a result: its own (DEAD, or a DEAD_COPY of the message the job died in),
        or one standing for a copy in another message (the core gives none)."""
        if result.dead is not None:
            return result.dead
        return DeadJob(
            job_id=result.job_id,
            job_type=job.type if job is not None else "",
            error_type="DeadJob",
            error="",
            attempts=0,
            message_id=result.message_id,
            at_ms=self._dead_letters.now_ms(),
            reason=DeadReason.COPY_OF_DEAD_JOB,
        )

    def send(self, letter: DeadLetter) -> str | Exception:
        """Send one dead job; its DLQ message id, or the exception when the send failed."""
        try:
            return self._dead_letters.send(letter)
        except Exception as exc:  # the caller keeps the record (reported, or still kept)
            return exc

    def dead_line(
        self, record: SQSRecord, letter: DeadLetter, sent: str | Exception, *, ran: bool = True, **fields: Any
    ) -> None:
        """The line of a dead job sent (``DEAD_LETTERED``) or not (``ERROR``; ``action``: what then).

        ``ran``: the job died in this invocation (counts on JobsFailed; a DEAD_COPY did not, even when it
        is the message the job died in: that failure was counted when its send failed).
        """
        action, dead = fields.pop("action", RETRY_ACTION), letter.dead
        if isinstance(sent, Exception):
            self.out.write(
                OutcomeStatus.ERROR,
                record,
                job_id=dead.job_id or None,
                job_type=dead.job_type or None,
                error=describe(sent),
                action=f"the dead job could not be sent to the dead-letter queue; {action}",
                reason=dead.reason.value,
                **fields,
            )
            return
        self.out.write(
            OutcomeStatus.DEAD_LETTERED,
            record,
            job_id=dead.job_id or None,
            job_type=dead.job_type or None,
            attempt=dead.attempts,
            error=f"{dead.error_type}: {dead.error}",
            attempt_failed=ran and dead.reason is not DeadReason.COPY_OF_DEAD_JOB,
            reason=dead.reason.value,
            attempts=dead.attempts,
            action="sent to the dead-letter queue",
            dlqMessageId=sent,
            **fields,
        )

    def settle(
        self,
        group: str,
        records: list[SQSRecord],
        run: BatchResult,
        recorder: RecordingTransition,
        report: BatchReport,
    ) -> None:
        """After a live group's commit: the lines, the dead-letter sends, the reported records, the
        metrics (rule 3 of :mod:`constructs_fifo.runtime.state.processor`)."""
        like = records[0] if records else None
        self.buffer_lines(run, recorder, group, like)
        for record, job, result in zip(records, run.jobs, run.results, strict=True):
            if result.outcome in (Outcome.DEAD, Outcome.DEAD_COPY):
                dead = self.letter(
                    self.entry_of(result, job),
                    group=group,
                    body=str(record.get("body", "")),
                    message_id=result.message_id,
                    copy=result.dead is None,
                )
                sent = self.send(dead)
                self.dead_line(record, dead, sent, ran=result.outcome is Outcome.DEAD, action=RETRY_ACTION)
                if isinstance(sent, Exception):
                    report.report(record, self.backoff(1))
                continue
            self.line(record, job, result, run, recorder)
            if result.outcome is Outcome.RETRY:
                delay = self.delay(record, result)
                report.report(record, delay)
                if result.stops_group:
                    report.blocked.setdefault(group, delay)
        buffered_parker = run.parked_by is not None and not any(
            r.outcome is Outcome.KEEP and r.dead is not None for r in run.results
        )
        self.group_metrics(run, group, like, parked_without_record=buffered_parker)

    # --- lines ---------------------------------------------------------------------------------------

    def delay(self, record: SQSRecord, result: JobResult) -> int:
        """The visibility delay of a RETRY: the backoff of the attempt its reason names."""
        if result.reason is RetryReason.BUFFER_FULL:
            return self.backoff(record_attempt(record))
        return self.backoff(result.attempt or 1)

    def line(
        self,
        record: SQSRecord,
        job: Job | None,
        result: JobResult,
        run: BatchResult,
        recorder: RecordingTransition,
        *,
        retry_action: str = RETRY_ACTION,
        **fields: Any,
    ) -> None:
        """The line of a record whose outcome is not DEAD or DEAD_COPY (see :meth:`dead_line`)."""
        ids: dict[str, Any] = {
            "job_id": result.job_id or None,
            "job_type": job.type if job is not None else None,
            "attempt": recorder.attempts.get(result.job_id, 0),
        }
        if result.outcome is Outcome.BUFFERED and run.group_state.book.last_seq is None:
            fields = {**fields, **_waits_for_first_seq(record_group(record))}
        if result.outcome is Outcome.RETRY:
            self._retry_line(
                record, result, run=run, recorder=recorder, ids=ids, retry_action=retry_action, fields=fields
            )
        elif result.outcome is Outcome.KEEP:
            self._keep_line(record, result, ids, fields)
        elif result.outcome is Outcome.APPLIED and result.job_id in run.group_state.cancelled_ids:
            self._cancelled_line(record, run, ids, fields)
        else:
            self._effect_line(record, result.outcome, recorder=recorder, ids=ids, fields=fields)

    def _cancelled_line(
        self, record: SQSRecord, run: BatchResult, ids: dict[str, Any], fields: dict[str, Any]
    ) -> None:
        """A cancelled job's turn (``storage.cancels``): not applied; ``fields`` (a carrier's) win."""
        entry = next(e for e in run.group_state.cancelled if e.job_id == ids["job_id"])
        newer = entry.reason.removeprefix(SUPERSEDED_REASON_PREFIX) if entry.by == SUPERSEDED_BY else None
        steered: dict[str, Any] = {"supersededBy": newer}  # superseded: a newer job of its key was marked
        what = f"job {newer!r} of its group and key was sent after it"
        if newer is None:
            steered = {
                "cancelReason": entry.reason or None,
                "cancelledBy": entry.by or None,
                "whileRunning": False,
            }
            what = "the job was cancelled"
        status = OutcomeStatus.CANCELLED if newer is None else OutcomeStatus.SUPERSEDED
        action = f"not applied: {what}; its place in the group closed; deleted"
        line = {"action": action, "cancelledAt": entry.at_ms, **steered, **ids, **fields}
        write_steered(self.out, status, record, **line)

    def _effect_line(
        self,
        record: SQSRecord,
        effect: Outcome,
        *,
        recorder: RecordingTransition,
        ids: dict[str, Any],
        fields: dict[str, Any],
    ) -> None:
        """The line of an APPLIED, DUPLICATE or BUFFERED job (a CARRIER's effect is one of those)."""
        if effect is Outcome.APPLIED:
            duration = recorder.durations_ms.get(str(ids["job_id"]))
            self.out.write(OutcomeStatus.SUCCEEDED, record, duration_ms=duration, **ids, **fields)
        elif effect is Outcome.BUFFERED:
            action = "waits in the group's reorder buffer for its seq, committed with the state; deleted"
            self.out.write(OutcomeStatus.BUFFERED, record, **ids, **{"action": action, **fields})
        else:
            action = (
                "not applied: the group's state already holds it (same job id, or a seq at or below the "
                "last applied)"
            )
            self.out.write(OutcomeStatus.DUPLICATE, record, **ids, **{"action": action, **fields})

    def _retry_line(
        self,
        record: SQSRecord,
        result: JobResult,
        *,
        run: BatchResult,
        recorder: RecordingTransition,
        ids: dict[str, Any],
        retry_action: str,
        fields: dict[str, Any],
    ) -> None:
        delay = self.delay(record, result)
        if result.reason is RetryReason.FAILED:
            error = recorder.errors.get(result.job_id)
            self.out.write(
                OutcomeStatus.FAILED,
                record,
                duration_ms=recorder.durations_ms.get(result.job_id),
                error=describe(error) if error is not None else None,
                traceback="".join(traceback.format_exception(error, limit=5)) if error is not None else None,
                action=f"attempt {result.attempt} of {self._max_attempts}; {retry_action}",
                visibilityTimeout=delay,
                **ids,
                **fields,
            )
        elif result.reason is RetryReason.CARRIER:
            action = (
                f"its effect is committed; {retry_action} to bring the group back for buffered job "
                f"{result.blocked_by!r}, which failed (it returns as a duplicate)"
            )
            carrier = {**fields, "carrier": True, "action": action, "visibilityTimeout": delay}
            if result.job_id in run.applied:
                effect = Outcome.APPLIED
            elif any(entry.job_id == result.job_id for entry in run.group_state.book.buffer):
                effect = Outcome.BUFFERED
            else:
                effect = Outcome.DUPLICATE
            if effect is Outcome.APPLIED and result.job_id in run.group_state.cancelled_ids:
                action = (
                    f"not applied: the job was cancelled, its place in the group closed; {retry_action} to "
                    f"bring the group back for buffered job {result.blocked_by!r}, which failed (it returns "
                    "as a duplicate)"
                )
                self._cancelled_line(record, run, ids, {**carrier, "action": action})
                return
            self._effect_line(record, effect, recorder=recorder, ids=ids, fields=carrier)
        elif result.reason is RetryReason.BUFFER_FULL:
            self.out.write(
                OutcomeStatus.BUFFER_FULL,
                record,
                action=f"not applied: the reorder buffer cannot take it (gap policy WAIT); {retry_action}",
                visibilityTimeout=delay,
                **ids,
                **fields,
            )
        else:
            self.out.write(
                OutcomeStatus.SKIPPED,
                record,
                action=f"not applied: job {result.blocked_by!r} stopped group {record_group(record)!r}; "
                f"{retry_action}",
                visibilityTimeout=delay,
                **ids,
                **fields,
            )

    def _keep_line(
        self, record: SQSRecord, result: JobResult, ids: dict[str, Any], fields: dict[str, Any]
    ) -> None:
        dead = result.dead
        if dead is None:
            action = "not applied: the group is parked; kept in order behind its dead job"
            self.out.write(OutcomeStatus.KEPT, record, **ids, action=action, **fields)
            return
        self.out.write(
            OutcomeStatus.PARKED,
            record,
            **{**ids, "attempt": dead.attempts},
            error=f"{dead.error_type}: {dead.error}",
            attempt_failed=True,
            reason=dead.reason.value,
            attempts=dead.attempts,
            action="the group is parked at this dead job; kept",
            **fields,
        )

    def lost_race(self, record: SQSRecord, delay: int) -> None:
        """The line of a record of a group whose commit lost the race (it is reported)."""
        self.out.write(
            OutcomeStatus.FENCED,
            record,
            job_id=job_id_of(record),
            error=_LOST_RACE,
            action=RETRY_ACTION,
            visibilityTimeout=delay,
        )

    def buffer_lines(
        self,
        run: BatchResult,
        recorder: RecordingTransition,
        group: str,
        like: SQSRecord | None,
        **fields: Any,
    ) -> None:
        """The lines of the buffered jobs that ran without a record in this run.

        ``SUCCEEDED`` when applied; ``FAILED`` when the transition failed and the job waits at the
        head of the buffer (its group comes back by a carrier record). One that died has its
        dead-letter line (go-on policy) or its group's metric line (parked at it).
        """
        waiting = {entry.job_id: entry for entry in run.group_state.book.buffer}
        parker = run.parked_by.job_id if run.parked_by is not None else None
        for entry in run.from_buffer:
            if entry.job_id in run.group_state.cancelled_ids:
                ids = {"job_id": entry.job_id, "job_type": entry.job_type, "attempt": 0}
                fields_of = {**fields, "fromBuffer": True, "seq": entry.seq}
                self._cancelled_line(buffered_record(entry, group, like), run, ids, fields_of)
                continue
            self.out.write(
                OutcomeStatus.SUCCEEDED,
                buffered_record(entry, group, like),
                job_id=entry.job_id,
                job_type=entry.job_type,
                attempt=recorder.attempts.get(entry.job_id, 1),
                duration_ms=recorder.durations_ms.get(entry.job_id),
                action="applied out of the reorder buffer: its gap closed",
                fromBuffer=True,
                seq=entry.seq,
                **fields,
            )
        for job_id, error in recorder.errors.items():
            failed = waiting.get(job_id)
            if failed is None or job_id == parker or job_id in run.record_job_ids:
                continue
            self.out.write(
                OutcomeStatus.FAILED,
                buffered_record(failed, group, like),
                job_id=job_id,
                job_type=failed.job_type,
                attempt=recorder.attempts.get(job_id, 1),
                duration_ms=recorder.durations_ms.get(job_id),
                error=describe(error),
                action=f"attempt {recorder.attempts.get(job_id, 1)} of {self._max_attempts}; waits at the "
                "head of the reorder buffer, retried when its group comes back",
                fromBuffer=True,
                seq=failed.seq,
                **fields,
            )

    def group_metrics(
        self, run: BatchResult, group: str, like: SQSRecord | None, *, parked_without_record: bool = False
    ) -> None:
        """The group's metric line: the open gap, the ranges skipped, a group parked at a buffered job."""
        values: dict[str, tuple[float, str]] = {}
        if run.gap_open_ms is not None:
            values[GAP_OPEN] = (round(run.gap_open_ms / 1000, 3), "Seconds")
        if run.skipped:
            values[GAPS_SKIPPED] = (len(run.skipped), "Count")
            values[JOBS_SKIPPED] = (sum(skipped.count for skipped in run.skipped), "Count")
        if parked_without_record:  # the dead job's run failed here, and it has no outcome line
            values[METRIC_GROUPS_PARKED] = (1, "Count")
            values[METRIC_JOBS_FAILED] = (1, "Count")
        if not values:
            return
        fields: dict[str, Any] = {"group": group, "gapTimedOut": run.gap_timed_out}
        if run.skipped:
            fields["skippedSeqs"] = [[skipped.first, skipped.last] for skipped in run.skipped]
        if parked_without_record and run.parked_by is not None:
            fields["parkedAt"] = {"jobId": run.parked_by.job_id, "reason": run.parked_by.reason.value}
        arn = str((like or {}).get("eventSourceARN", ""))
        queue_name = queue_name_from_arn(arn) if arn else self._queue_name
        self.out.logger.metrics(queue_name=queue_name, values=values, **fields)


@dataclass(frozen=True)
class OwedSend:
    """One dead letter sent (or not): the record standing for the buffered job, its message, the
    DLQ message id or the exception."""

    record: SQSRecord
    message: DeadLetter
    sent: str | Exception

    @property
    def failed(self) -> bool:
        """Whether the send failed."""
        return isinstance(self.sent, Exception)


def owing(group_state: GroupState, dead: tuple[tuple[BufferedJob, DeadJob], ...]) -> GroupState:
    """``group_state`` owing exactly ``dead`` (what it owed before was paid before the run)."""
    return replace(group_state, book=replace(group_state.book, owed=tuple(dead)))


class OwedLetters:
    """Sends a group's dead letters owed, and clears them once sent; see the module docstring."""

    def __init__(self, outcomes: StateOutcomes, states: StateStore) -> None:
        self._outcomes = outcomes
        self._states = states

    def pay(self, read: GroupState, like: SQSRecord | None = None) -> list[OwedSend]:
        """Owed rule 3: send what ``read`` owes, before anything of the run.

        Raises
        ------
        Exception
            The first send that failed (the others were tried): commit nothing, report the records.
        """
        sends = self._send_all(read, read.book.owed, like)
        failed = next((send.sent for send in sends if isinstance(send.sent, Exception)), None)
        if failed is not None:
            for send in sends:
                self.line(send, paid=True)
            raise failed
        return sends

    def send_new(
        self,
        committed: GroupState,
        version: int,
        like: SQSRecord | None = None,
        *,
        run: RunMarker | None = None,
    ) -> tuple[list[OwedSend], bool]:
        """Owed rule 2: after the commit (the item at ``version``), send what it owes; clear it when all went.

        ``run`` is the run marker the commit kept (the clearing write keeps it too). A clearing write
        that fails, or loses its race, is logged: what stays owed is sent again by the group's next
        run. Returns the sends and whether the clearing write committed (the item is then at
        ``version + 1``).
        """
        sends = self._send_all(committed, committed.book.owed, like)
        cleared = False
        if sends and not any(send.failed for send in sends):
            try:
                cleared = self._states.commit(committed.group, owing(committed, ()), version, run=run)
            except Exception as exc:  # still owed: sent again (same deduplication id) by the next run
                self._outcomes.out.logger.event(
                    {
                        "event": "owed_dead_letters_not_cleared",
                        "group": committed.group,
                        "error": describe(exc),
                        "action": "the group's next run sends them again (SQS drops a copy within 5 minutes)",
                    }
                )
        return sends, cleared

    def come_back(self, record: SQSRecord, report: BatchReport) -> None:
        """Owed rule 2: a group still owing a dead letter after its commit comes back: ``record`` (one of
        its records, or its wake-up message; its redelivery is a duplicate) is reported, unless it is
        already."""
        if record_message_id(record) not in report.failures:
            report.report(record, self._outcomes.backoff(1))
            report.blocked.setdefault(record_group(record), self._outcomes.backoff(1))

    def line(self, send: OwedSend, *, paid: bool = False, **fields: Any) -> None:
        """The outcome line of one owed send (``paid``: a letter owed by an earlier run)."""
        fields.setdefault("fromBuffer", True)
        action = (
            "still owed in the group's state: sent again before the group's next run; the group's "
            "record is reported so that it comes back"
        )
        if paid:
            fields["owedByEarlierRun"] = True
        self._outcomes.dead_line(send.record, send.message, send.sent, ran=not paid, action=action, **fields)

    def _send_all(
        self, group_state: GroupState, owed: tuple[tuple[BufferedJob, DeadJob], ...], like: SQSRecord | None
    ) -> list[OwedSend]:
        outcomes, group = self._outcomes, group_state.group
        sends = []
        for entry, dead in owed:
            record = buffered_record(entry, group, like)
            message = outcomes.letter(dead, group=group, body=str(record.get("body", "")))
            sends.append(OwedSend(record, message, outcomes.send(message)))
        return sends


def _waits_for_first_seq(group: str) -> dict[str, Any]:
    """The warning on a job buffered while its group has applied no ``seq``: it waits for the first."""
    return {
        "level": "WARNING",
        "firstSeq": (
            f"group {group!r} has applied no seq yet, so it waits for seq {DEFAULT_FIRST_SEQ}: a group's "
            f"sequence starts at {DEFAULT_FIRST_SEQ}. A producer that starts elsewhere stalls the group "
            "under WAIT until an operator acts, and under SKIP_GAP gives the seqs below its first up after "
            f"gap_timeout; send the group's first job with seq={DEFAULT_FIRST_SEQ}"
        ),
    }
