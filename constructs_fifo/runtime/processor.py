"""The ordered batch processor: runs one Lambda SQS FIFO batch with claims, fencing and backoff.

Rules, per record and in batch order:

1. **Parse.** A body that is not a job envelope is a permanent failure: the record is reported failed
   with visibility 0 so it reaches the dead-letter queue quickly. When the body still carries a usable
   ``jobId`` (a JSON object with a non-empty string ``jobId`` but no valid ``type``), a permanent
   FAILED claim with the error is written under it in one conditional PutItem, under the claim
   condition: an existing SUCCEEDED item or another worker's live lease is left untouched and the
   outcome line says so. A write error is noted on the line, never raised.
2. **Group blocked?** Once a record of group G fails in this batch, every later record of G is
   reported failed without running (status ``SKIPPED``) and gets the same visibility delay as the
   failure that blocked G, so the group comes back together and in order. Other groups go on.
3. **Deadline.** If the invocation has less than ``safety_margin_ms`` left, no further job starts:
   every remaining record is reported failed (status ``DEADLINE``, visibility 0).
4. **Claim** (one conditional PutItem, see :mod:`constructs_fifo.runtime.claims`):
   ``DUPLICATE`` (already SUCCEEDED) is skipped and *not* reported, so Lambda deletes it;
   ``CONFLICT`` (a live lease of another worker) is reported, blocks the group, and waits at least
   until that lease expires; ``KNOWN_POISON`` is reported with visibility 0 and does not block.
5. **Run** ``handle(job, context)``. Success writes SUCCEEDED fenced on our owner token; if the fence
   fails (another worker took over after our lease expired) the record is reported and the group
   blocked. :class:`~constructs_fifo.runtime.exceptions.PermanentJobError` writes a permanent FAILED
   claim, reports the record with visibility 0 and blocks the group for the rest of the batch. Any
   other exception writes a transient FAILED claim (the retry can claim again at once), reports the
   record, blocks the group and sets visibility to the backoff of its attempt.

Why a known poison record (and a malformed body seen before) does **not** block its group:
every receive raises the ApproximateReceiveCount of every record received with it. If a poison
record blocked its group on every delivery, the later records of the group would ride along until
they passed ``maxReceiveCount`` and were dead-lettered without ever having failed: data loss. So a
poison record blocks its group once, in the batch where it failed; on later deliveries it is reported
failed without running and its group goes on. A malformed body whose attempt is above 1 is treated
the same way, because parsing is deterministic: it already failed on an earlier delivery.

Guarantees of the response: it lists every record that failed, was skipped or was not reached (never
empty when something failed); it is returned, not raised, when every record failed; an unexpected
exception of the claim store for one record reports that record and blocks its group, so no record is
lost. All visibility changes of a batch are sent in one ChangeMessageVisibilityBatch call, whose
failure is logged and never raised.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.backoff import (
    VisibilityChange,
    VisibilityChanger,
    backoff_seconds,
    lease_delay_seconds,
)
from constructs_fifo.runtime.claims import ClaimOutcome
from constructs_fifo.runtime.exceptions import MalformedJobError, PermanentJobError
from constructs_fifo.runtime.job import Job, parse_record, record_attempt, record_group, record_message_id
from constructs_fifo.runtime.observability import OutcomeStatus, queue_name_from_arn

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.claims import ClaimStore
    from constructs_fifo.runtime.observability import JobLogger
    from constructs_fifo.runtime.types import BatchResponse, SQSRecord

__all__ = ["DEFAULT_SAFETY_MARGIN_MS", "JobHandler", "OrderedBatchProcessor"]

#: The user's job function: ``handle(job, context)``; its return value is ignored.
JobHandler = Callable[[Job, Any], object]

#: No job starts with less than this much invocation time left.
DEFAULT_SAFETY_MARGIN_MS = 1000

#: Lease used when the context cannot tell the remaining time: Lambda's 15-minute maximum.
_FALLBACK_REMAINING_MS = 15 * 60 * 1000

_DEAD_LETTER_ACTION = (
    "permanent failure: reported failed with no backoff; the record will go to the dead-letter queue "
    "once its receive count passes maxReceiveCount"
)
_FENCED_ERROR = "the SUCCEEDED write was refused: another worker took the claim over after this lease expired"
_RETRY_ACTION = "reported failed; retried after the visibility delay"


@dataclass(frozen=True)
class _Result:
    """What happened to one record: whether it is reported, its visibility, and the group block."""

    reported: bool
    visibility: int | None = None
    block: int | None = None  # delay to give the group's later records; None = do not block


_DONE = _Result(reported=False)


class OrderedBatchProcessor:
    """Processes Lambda SQS FIFO batches; see the module docstring for the rules.

    Parameters
    ----------
    handler : JobHandler
        The user's ``handle(job, context)``.
    claims : ClaimStore
        The claim table.
    visibility : VisibilityChanger
        Applies the retry delays.
    logger : JobLogger
        Writes one outcome line per record.
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
    >>> processor = OrderedBatchProcessor(handler=handle, claims=store,  # doctest: +SKIP
    ...     visibility=VisibilityChanger(sqs, queue_url, on_error=logger.event), logger=logger)
    >>> processor.process(event, context)  # doctest: +SKIP
    {'batchItemFailures': [{'itemIdentifier': '...'}]}
    """

    def __init__(
        self,
        *,
        handler: JobHandler,
        claims: ClaimStore,
        visibility: VisibilityChanger,
        logger: JobLogger,
        backoff_base_seconds: int = 2,
        visibility_timeout_seconds: int = 43200,
        safety_margin_ms: int = DEFAULT_SAFETY_MARGIN_MS,
        queue_name: str = "",
    ) -> None:
        self._handler = handler
        self._claims = claims
        self._visibility = visibility
        self._logger = logger
        self._backoff_base = backoff_base_seconds
        self._cap = visibility_timeout_seconds
        self._margin_ms = safety_margin_ms
        self._queue_name = queue_name

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
        blocked: dict[str, int] = {}
        failures: list[str] = []
        changes: list[VisibilityChange] = []
        out_of_time = False
        for record in records:
            message_id = record_message_id(record)
            group = record_group(record)
            if not out_of_time and _remaining_ms(context) < self._margin_ms:
                out_of_time = True
            if out_of_time:
                result = self._not_reached(record)
            else:
                try:
                    result = self._process_record(record, context, blocked)
                except Exception as exc:  # a dependency failed on this record: keep it, block its group
                    result = self._internal_error(record, exc)
            if result.block is not None and group not in blocked:
                blocked[group] = result.block
            if result.reported:
                failures.append(message_id)
                if result.visibility is not None:
                    changes.append(
                        VisibilityChange(message_id, str(record.get("receiptHandle", "")), result.visibility)
                    )
        if changes:
            self._visibility.apply(changes)
        return {"batchItemFailures": [{"itemIdentifier": message_id} for message_id in failures]}

    # --- one record -------------------------------------------------------------------------------

    def _process_record(self, record: SQSRecord, context: Any, blocked: dict[str, int]) -> _Result:
        group = record_group(record)
        attempt = record_attempt(record)
        try:
            job = parse_record(record)
        except MalformedJobError as exc:
            first_time = attempt <= 1
            claim_note = self._record_malformed(record, exc) if exc.job_id is not None else {}
            self._log(
                OutcomeStatus.MALFORMED,
                record,
                job_id=exc.job_id,
                error=str(exc),
                action=_DEAD_LETTER_ACTION,
                visibilityTimeout=0,
                blocksGroup=first_time and group not in blocked,
                **claim_note,
            )
            return _Result(reported=True, visibility=0, block=0 if first_time else None)

        if group in blocked:
            delay = blocked[group]
            self._log(
                OutcomeStatus.SKIPPED,
                record,
                job=job,
                action=f"not run: an earlier record of group {group!r} failed in this batch; {_RETRY_ACTION}",
                visibilityTimeout=delay,
            )
            return _Result(reported=True, visibility=delay)

        claim = self._claims.claim(job, lease_ms=_remaining_ms(context))
        if claim.outcome is ClaimOutcome.DUPLICATE:
            self._log(OutcomeStatus.DUPLICATE, record, job=job, action="not run: already SUCCEEDED; deleted")
            return _DONE
        if claim.outcome is ClaimOutcome.KNOWN_POISON:
            self._log(
                OutcomeStatus.DEAD_LETTERING,
                record,
                job=job,
                error=str((claim.existing or {}).get("error", "")),
                action=f"not run again: this message already failed permanently; {_DEAD_LETTER_ACTION}",
                visibilityTimeout=0,
            )
            return _Result(reported=True, visibility=0)
        if claim.outcome is ClaimOutcome.CONFLICT:
            delay = max(
                self._backoff(attempt),
                lease_delay_seconds(claim.lease_expires_at_ms, self._claims.now_ms(), cap_seconds=self._cap),
            )
            self._log(
                OutcomeStatus.CONFLICT,
                record,
                job=job,
                action=f"not run: another worker holds a live lease; {_RETRY_ACTION}",
                leaseExpiresAt=claim.lease_expires_at_ms,
                visibilityTimeout=delay,
            )
            return _Result(reported=True, visibility=delay, block=delay)

        owner = claim.owner or ""
        started = time.perf_counter()
        try:
            self._handler(job, context)
        except PermanentJobError as exc:
            duration = _elapsed_ms(started)
            claim_note = self._record_failure(job, owner, exc, permanent=True)
            self._log(
                OutcomeStatus.POISON,
                record,
                job=job,
                duration_ms=duration,
                error=_describe(exc),
                action=_DEAD_LETTER_ACTION,
                visibilityTimeout=0,
                **claim_note,
            )
            return _Result(reported=True, visibility=0, block=0)
        except Exception as exc:
            duration = _elapsed_ms(started)
            claim_note = self._record_failure(job, owner, exc, permanent=False)
            delay = self._backoff(attempt)
            self._log(
                OutcomeStatus.FAILED,
                record,
                job=job,
                duration_ms=duration,
                error=_describe(exc),
                traceback=traceback.format_exc(limit=5),
                action=_RETRY_ACTION,
                visibilityTimeout=delay,
                **claim_note,
            )
            return _Result(reported=True, visibility=delay, block=delay)

        duration = _elapsed_ms(started)
        if self._claims.complete(job.id, owner):
            self._log(OutcomeStatus.SUCCEEDED, record, job=job, duration_ms=duration)
            return _DONE
        delay = self._backoff(attempt)
        self._log(
            OutcomeStatus.FENCED,
            record,
            job=job,
            duration_ms=duration,
            error=_FENCED_ERROR,
            action=_RETRY_ACTION,
            visibilityTimeout=delay,
        )
        return _Result(reported=True, visibility=delay, block=delay)

    def _record_failure(self, job: Job, owner: str, exc: Exception, *, permanent: bool) -> dict[str, Any]:
        """Write the FAILED claim; its own failure is noted on the outcome line, never raised."""
        try:
            kept = self._claims.fail(
                job.id, owner, error=str(exc) or repr(exc), error_type=type(exc).__name__, permanent=permanent
            )
        except Exception as write_error:  # the record is reported anyway; the lease will expire
            return {"claimWriteError": _describe(write_error)}
        return {} if kept else {"claimWriteError": "fenced: another worker owns the claim now"}

    def _record_malformed(self, record: SQSRecord, exc: MalformedJobError) -> dict[str, Any]:
        """Write the permanent FAILED claim of a malformed body with a jobId; note what happened."""
        try:
            claim = self._claims.fail_malformed(
                exc.job_id or "",
                group=record_group(record),
                message_id=record_message_id(record),
                attempt=record_attempt(record),
                error=str(exc),
            )
        except Exception as write_error:  # the record is reported anyway
            return {"claimWriteError": _describe(write_error)}
        if claim.outcome is ClaimOutcome.ACQUIRED:
            return {"claim": "FAILED (permanent)"}
        status = (claim.existing or {}).get("status")
        return {"claim": f"left untouched: the table holds {status} for this jobId ({claim.outcome.value})"}

    def _not_reached(self, record: SQSRecord) -> _Result:
        self._log(
            OutcomeStatus.DEADLINE,
            record,
            action=f"not run: less than {self._margin_ms} ms left in the invocation; {_RETRY_ACTION}",
            visibilityTimeout=0,
        )
        return _Result(reported=True, visibility=0, block=0)

    def _internal_error(self, record: SQSRecord, exc: Exception) -> _Result:
        delay = self._backoff(record_attempt(record))
        self._log(
            OutcomeStatus.ERROR,
            record,
            error=_describe(exc),
            traceback=traceback.format_exc(limit=5),
            action=_RETRY_ACTION,
            visibilityTimeout=delay,
        )
        return _Result(reported=True, visibility=delay, block=delay)

    # --- helpers ----------------------------------------------------------------------------------

    def _backoff(self, attempt: int) -> int:
        return backoff_seconds(attempt, base_seconds=self._backoff_base, cap_seconds=self._cap)

    def _log(
        self,
        status: OutcomeStatus,
        record: SQSRecord,
        *,
        job: Job | None = None,
        job_id: str | None = None,
        duration_ms: float | None = None,
        error: str | None = None,
        **fields: Any,
    ) -> None:
        arn = str(record.get("eventSourceARN", ""))
        self._logger.outcome(
            status,
            queue_name=queue_name_from_arn(arn) if arn else self._queue_name,
            job_id=job.id if job else job_id,
            group=record_group(record),
            job_type=job.type if job else None,
            attempt=record_attempt(record),
            message_id=record_message_id(record),
            duration_ms=duration_ms,
            error=error,
            **fields,
        )


def _remaining_ms(context: Any) -> int:
    getter = getattr(context, "get_remaining_time_in_millis", None)
    if getter is None:
        return _FALLBACK_REMAINING_MS
    return int(getter())


def _elapsed_ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"
