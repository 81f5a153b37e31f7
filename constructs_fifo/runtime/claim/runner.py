"""Running one job under its claim: claim, run, then complete, fail or declare it dead.

The processor calls :meth:`JobRunner.run` for every job it does not skip, whether the job came from
the queue or is a kept record replayed from a parked group. The runner writes the outcome line of
every result except a dead job's, whose final status (dead-lettered or parked) the processor decides.
"""

from __future__ import annotations

import enum
import traceback
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.backoff import Backoff, lease_delay_seconds
from constructs_fifo.runtime.claim.result import offload_result
from constructs_fifo.runtime.claim.store import ClaimOutcome
from constructs_fifo.runtime.claim.supersede import Supersession
from constructs_fifo.runtime.clock import elapsed_ms, remaining_ms, started
from constructs_fifo.runtime.constants import (
    ATTR_DEAD_REASON,
    ATTR_ERROR,
    ATTR_ERROR_TYPE,
    ATTR_MESSAGE_ID,
    ATTR_STATUS,
    ATTR_UPDATED_AT,
    STATUS_IN_FLIGHT,
    DeadReason,
)
from constructs_fifo.runtime.dead_jobs.letters import DeadLetter
from constructs_fifo.runtime.dead_jobs.record import DeadJob, stored_reason
from constructs_fifo.runtime.error_text import describe, error_text
from constructs_fifo.runtime.exceptions import PermanentJobError, WorkerCrashedError
from constructs_fifo.runtime.job import Job, JobHandler
from constructs_fifo.runtime.observability import (
    RETRY_ACTION,
    OutcomeStatus,
    OutcomeWriter,
)
from constructs_fifo.runtime.payloads.store import PayloadStore, default_store
from constructs_fifo.runtime.steering.metrics import write_paced, write_steered
from constructs_fifo.runtime.steering.names import (
    ATTR_CANCEL_REASON,
    ATTR_CANCELLED_BY,
    ATTR_CANCELLED_RUNNING,
    ENVELOPE_SUPERSEDE,
    STATUS_CANCELLED,
)
from constructs_fifo.runtime.steering.pace import pace_key_of, wait_seconds
from constructs_fifo.runtime.steering.report import CancelOutcome

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.claim.store import Claim, ClaimStore
    from constructs_fifo.runtime.steering.pace_store import PaceStore
    from constructs_fifo.runtime.types import SQSRecord

__all__ = [
    "JobRunner",
    "Step",
    "StepKind",
]

_FENCED_ERROR = "the claim write was refused: another worker took the claim over after this lease expired"
_FENCED_NOTE = "fenced: another worker owns the claim now"
_CANCELLED_WHILE_RUNNING = (
    "cancelled while running: its result is not recorded and its effect may have happened; "
    "the record is deleted"
)


class StepKind(enum.Enum):
    """What running one job came to."""

    #: Finished with (SUCCEEDED, or a duplicate of a SUCCEEDED job): the record may be deleted.
    DONE = "DONE"
    #: Not finished: retry after ``delay_seconds``; the group stops behind it.
    RETRY = "RETRY"
    #: The job is dead: the processor dead-letters it or parks its group.
    DEAD = "DEAD"


@dataclass(frozen=True)
class Step:
    """The result of :meth:`JobRunner.run`.

    Attributes
    ----------
    kind : StepKind
        Done, retry or dead.
    delay_seconds : int
        RETRY: how long the record (and its group) waits.
    letter : DeadLetter or None
        DEAD: the dead job's letter to forward (or to park its group at).
    attempt_failed : bool
        DEAD: the job's own run failed in this invocation (counts on JobsFailed).
    duration_ms : float or None
        Time in the user's function, when it ran.
    """

    kind: StepKind
    delay_seconds: int = 0
    letter: DeadLetter | None = None
    attempt_failed: bool = False
    duration_ms: float | None = None

    @property
    def dead(self) -> DeadJob | None:
        """DEAD: why the job died (the letter's record)."""
        return None if self.letter is None else self.letter.dead


DONE = Step(StepKind.DONE)


class JobRunner:
    """Claims and runs one job; see :mod:`constructs_fifo.runtime.claim.store` for the claim rules.

    Parameters
    ----------
    handler : JobHandler
        The user's ``handle(job, context)``.
    claims : ClaimStore
        The claim table (it knows ``max_attempts``).
    out : OutcomeWriter
        Where outcome lines go.
    backoff_base_seconds, cap_seconds : int
        Retry delay ``base * 2**(attempt - 1)``, capped (the queue's visibility timeout).
    pace : PaceStore or None
        The queue's pace limit (``None``: not paced, nothing read or written for it).
    """

    def __init__(
        self,
        *,
        handler: JobHandler,
        claims: ClaimStore,
        out: OutcomeWriter,
        backoff_base_seconds: int,
        cap_seconds: int,
        payloads: PayloadStore | None = None,
        pace: PaceStore | None = None,
    ) -> None:
        self.claims = claims
        self._pace = pace
        self._supersession = Supersession.of(claims, ttl_seconds=claims.ttl_seconds)
        self._payloads = payloads  # None: the process's (made on the first result over 64 KiB)
        self._handler = handler
        self._out = out
        self._cap = cap_seconds
        #: The retry delay after ``attempt`` runs: ``backoff(attempt)``.
        self.backoff = Backoff(backoff_base_seconds, cap_seconds)

    def run(self, job: Job, record: SQSRecord, context: Any, **fields: Any) -> Step:
        """Claim ``job``, run it when the claim is ours, and record what happened.

        ``fields`` are added to the outcome line (the processor marks replayed records).
        """
        key = job.body.get(ENVELOPE_SUPERSEDE) if isinstance(job.body, dict) else None
        if isinstance(key, str) and key:
            superseded = self._superseded(job, record, key, fields)
            if superseded is not None:
                return superseded
        if self._pace is not None:
            paced = self._paced(self._pace, job, record, fields)
            if paced is not None:
                return paced
        claim = self.claims.claim(job, lease_ms=remaining_ms(context))
        if job.attempt != claim.attempt:
            job = replace(job, attempt=claim.attempt)
        if claim.outcome is ClaimOutcome.DUPLICATE:
            self._out.write(
                OutcomeStatus.DUPLICATE, record, job=job, action="not run: already SUCCEEDED", **fields
            )
            return DONE
        if claim.outcome is ClaimOutcome.DEAD:
            return Step(
                StepKind.DEAD,
                letter=self.letter_of_dead(job, record, claim.existing or {}, attempts=claim.attempt),
            )
        if claim.outcome is ClaimOutcome.CANCELLED:
            return self.cancelled(job, record, claim.existing or {}, fields)
        if claim.outcome is ClaimOutcome.CONFLICT:
            delay = max(
                self.backoff(claim.attempt),
                lease_delay_seconds(claim.lease_expires_at_ms, self.claims.now_ms(), cap_seconds=self._cap),
            )
            self._out.write(
                OutcomeStatus.CONFLICT,
                record,
                job=job,
                action=f"not run: another worker holds a live lease; {RETRY_ACTION}",
                leaseExpiresAt=claim.lease_expires_at_ms,
                visibilityTimeout=delay,
                **fields,
            )
            return Step(StepKind.RETRY, delay_seconds=delay)
        if claim.outcome is ClaimOutcome.EXHAUSTED:
            crashed = (claim.existing or {}).get(ATTR_STATUS) == STATUS_IN_FLIGHT
            error = (
                f"attempt {claim.attempt} of {self.claims.max_attempts} never finished (the worker crashed "
                "or timed out after claiming the job); no attempts are left; make the job fit its "
                "worker's memory and time, then resume its group (PARK) or redrive it (CONTINUE)"
            )
            # The name both modes give a job that stopped its worker on every attempt (the runbook's).
            error_type = WorkerCrashedError.__name__ if crashed else "AttemptsExhausted"
            return self._declare_dead(
                job,
                record,
                claim.owner or "",
                (DeadReason.ATTEMPTS_EXHAUSTED, error_type, error),
                fields,
                ran=False,
            )
        return self._run_claimed(job, record, context, claim, fields)

    def _run_claimed(
        self, job: Job, record: SQSRecord, context: Any, claim: Claim, fields: dict[str, Any]
    ) -> Step:
        owner = claim.owner or ""
        mark = started()
        try:
            returned = self._handler(job, context)
        except PermanentJobError as exc:
            step = self._declare_dead(job, record, owner, _cause(DeadReason.PERMANENT, exc), fields, ran=True)
            return replace(step, duration_ms=elapsed_ms(mark))
        except Exception as exc:
            duration = elapsed_ms(mark)
            if job.attempt >= self.claims.max_attempts:
                step = self._declare_dead(
                    job, record, owner, _cause(DeadReason.ATTEMPTS_EXHAUSTED, exc), fields, ran=True
                )
                return replace(step, duration_ms=duration)
            note = self._write_failure(job, owner, exc)
            if note.get("claimWriteError") == _FENCED_NOTE:
                cancelled = self._cancelled_while_running(job, record, fields, duration_ms=duration)
                if cancelled is not None:
                    return cancelled
            delay = self.backoff(job.attempt)
            self._out.write(
                OutcomeStatus.FAILED,
                record,
                job=job,
                duration_ms=duration,
                error=describe(exc),
                traceback=traceback.format_exc(limit=5),
                action=f"attempt {job.attempt} of {self.claims.max_attempts}; {RETRY_ACTION}",
                visibilityTimeout=delay,
                **note,
                **fields,
            )
            return Step(StepKind.RETRY, delay_seconds=delay)
        duration = elapsed_ms(mark)
        result_json, dropped, pointer = offload_result(
            returned, (self._payloads or default_store()).put_result
        )
        if self.claims.complete(
            job.id, owner, result_json=result_json, result_not_stored=dropped, result_pointer=pointer
        ):
            noted: dict[str, Any] = {"resultNotStored": dropped} if dropped else {}
            self._out.write(OutcomeStatus.SUCCEEDED, record, job=job, duration_ms=duration, **noted, **fields)
            return DONE
        cancelled = self._cancelled_while_running(job, record, fields, duration_ms=duration)
        if cancelled is not None:
            return cancelled
        delay = self.backoff(job.attempt)
        self._out.write(
            OutcomeStatus.FENCED,
            record,
            job=job,
            duration_ms=duration,
            error=_FENCED_ERROR,
            action=RETRY_ACTION,
            visibilityTimeout=delay,
            **fields,
        )
        return Step(StepKind.RETRY, delay_seconds=delay)

    def _declare_dead(
        self,
        job: Job,
        record: SQSRecord,
        owner: str,
        cause: tuple[DeadReason, str, str],
        fields: dict[str, Any],
        *,
        ran: bool,
    ) -> Step:
        """Write DEAD (fenced on ``owner``); a refused or failed write retries instead.

        ``cause`` is (reason, error type, error text); ``ran`` says whether the job's own run failed in
        this invocation (a crash found at claim time did not run).
        """
        reason, error_type, error = cause
        try:
            written = self.claims.mark_dead(job.id, owner, reason=reason, error=error, error_type=error_type)
        except Exception as exc:  # the job is not dead until its claim says so: retry, lose nothing
            delay = self.backoff(job.attempt)
            self._out.write(
                OutcomeStatus.ERROR,
                record,
                job=job,
                error=describe(exc),
                action=f"the DEAD claim could not be written; {RETRY_ACTION}",
                visibilityTimeout=delay,
                **fields,
            )
            return Step(StepKind.RETRY, delay_seconds=delay)
        if not written:
            cancelled = self._cancelled_while_running(job, record, fields, duration_ms=None)
            if cancelled is not None:
                return cancelled
            delay = self.backoff(job.attempt)
            self._out.write(
                OutcomeStatus.FENCED,
                record,
                job=job,
                error=_FENCED_ERROR,
                action=RETRY_ACTION,
                visibilityTimeout=delay,
                **fields,
            )
            return Step(StepKind.RETRY, delay_seconds=delay)
        dead = _dead_job(
            job, record, reason, error_type, error, attempts=job.attempt, now_ms=self.claims.now_ms()
        )
        return Step(StepKind.DEAD, letter=dead, attempt_failed=ran)

    def letter_of_dead(
        self, job: Job, record: SQSRecord, existing: dict[str, Any], *, attempts: int
    ) -> DeadLetter:
        """The letter of a record whose claim ``existing`` (decoded) is already DEAD: the same message
        again (the reason stored), or a copy that follows it (``COPY_OF_DEAD_JOB``)."""
        same_message = existing.get(ATTR_MESSAGE_ID) == job.message_id
        reason = (
            stored_reason(existing.get(ATTR_DEAD_REASON)) if same_message else DeadReason.COPY_OF_DEAD_JOB
        )
        return _dead_job(
            job,
            record,
            reason,
            str(existing.get(ATTR_ERROR_TYPE) or "DeadJob"),
            str(existing.get(ATTR_ERROR) or "the job is dead"),
            attempts=attempts,
            now_ms=self.claims.now_ms(),
        )

    def _write_failure(self, job: Job, owner: str, exc: Exception) -> dict[str, Any]:
        """Write the FAILED claim; its own failure is noted on the outcome line, never raised."""
        try:
            kept = self.claims.fail(job.id, owner, error=error_text(exc), error_type=type(exc).__name__)
        except Exception as write_error:  # the record is reported anyway; the lease will expire
            return {"claimWriteError": describe(write_error)}
        return {} if kept else {"claimWriteError": _FENCED_NOTE}

    def cancelled(self, job: Job, record: SQSRecord, item: dict[str, Any], fields: dict[str, Any]) -> Step:
        """A job whose claim is CANCELLED: its record is deleted without running (the line says why)."""
        running = item.get(ATTR_CANCELLED_RUNNING) is True
        write_steered(
            self._out,
            OutcomeStatus.CANCELLED,
            record,
            job=job,
            action="not run: the job was cancelled; the record is deleted",
            **_cancel_fields(item, running=running),
            **fields,
        )
        return DONE

    def _superseded(self, job: Job, record: SQSRecord, key: str, fields: dict[str, Any]) -> Step | None:
        """:mod:`~constructs_fifo.runtime.claim.supersede`'s rule 2: ``DONE`` when a newer job of the key
        was sent and this one is now cancelled; ``None``: run it as usual (the newest, or finished)."""
        newer = self._supersession.newest(job.group, key)
        if newer is None or newer == job.id:
            return None
        report = self._supersession.supersede(job.id, group=job.group, newer=newer)
        if report.outcome not in (CancelOutcome.NOT_STARTED, CancelOutcome.STOPPED):
            return None  # succeeded, dead or cancelled before: the claim says so
        write_steered(
            self._out,
            OutcomeStatus.SUPERSEDED,
            record,
            job=job,
            action=f"not run: job {newer!r} of the same group and key {key!r} was sent after it; deleted",
            supersededBy=newer,
            supersedeKey=key,
            **fields,
        )
        return DONE

    def _paced(self, pace: PaceStore, job: Job, record: SQSRecord, fields: dict[str, Any]) -> Step | None:
        """Take the job's token before its claim (docs/steering.md, "Pace a key"): ``None``, run it (or
        it has no key); a ``RETRY`` when the key has none now: not run, no attempt counted (the claim is
        not touched), its group waits until the token is due."""
        key = pace_key_of(pace.limit.key, record, job.body)
        if key is None:
            return None
        taken = pace.take(key)
        if taken.granted:
            return None
        delay = wait_seconds(taken.due_ms, pace.now_ms(), self._cap)
        write_paced(self._out, record, key=key, delay_seconds=delay, job=job, **fields)
        return Step(StepKind.RETRY, delay_seconds=delay)

    def _cancelled_while_running(
        self, job: Job, record: SQSRecord, fields: dict[str, Any], *, duration_ms: float | None
    ) -> Step | None:
        """A refused claim write: ``DONE`` when the claim is CANCELLED (the run was cancelled), else
        ``None`` (another worker took the claim over: the caller retries). One ``GetItem``, only here."""
        try:
            item = self.claims.get(job.id)
        except Exception:  # the caller's retry finds the claim as it is
            return None
        if not item or item.get(ATTR_STATUS) != STATUS_CANCELLED:
            return None
        write_steered(
            self._out,
            OutcomeStatus.CANCELLED,
            record,
            job=job,
            duration_ms=duration_ms,
            action=_CANCELLED_WHILE_RUNNING,
            **_cancel_fields(item, running=True),
            **fields,
        )
        return DONE


def _cancel_fields(item: dict[str, Any], *, running: bool) -> dict[str, Any]:
    """The outcome line's fields of a CANCELLED claim: who, why, when, and whether it was running."""
    return {
        "cancelReason": item.get(ATTR_CANCEL_REASON) or None,
        "cancelledBy": item.get(ATTR_CANCELLED_BY) or None,
        "cancelledAt": item.get(ATTR_UPDATED_AT),
        "whileRunning": running,
    }


def _cause(reason: DeadReason, exc: Exception) -> tuple[DeadReason, str, str]:
    return reason, type(exc).__name__, error_text(exc)


def _dead_job(
    job: Job,
    record: SQSRecord,
    reason: DeadReason,
    error_type: str,
    error: str,
    *,
    attempts: int,
    now_ms: int,
) -> DeadLetter:
    dead = DeadJob(job.id, job.type, error_type, error, attempts, job.message_id, now_ms, reason=reason)
    return DeadLetter(body=str(record.get("body", "")), group=job.group, dead=dead)
