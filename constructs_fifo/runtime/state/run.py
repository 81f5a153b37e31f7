"""One group's records through state mode's core: malformed records split out, one result per record.

Pure, without I/O: :class:`~constructs_fifo.runtime.state.processor.StateBatchProcessor` reads the
group, calls :func:`run_group` (for a batch's records, or a page of a resuming group's kept records)
and commits what it returns in one write.

Rules (the core's are in :mod:`constructs_fifo.runtime.state.core.apply`):

1. **Malformed records never reach the core.** A body that is not a job envelope is dead at once
   (parsing is deterministic). The group's records are split at malformed ones into segments, and
   :func:`~constructs_fifo.runtime.state.core.apply.apply_batch_with` runs on each non-empty segment in
   order, carrying the state from one to the next (the caller commits once, at the end).
2. **A malformed record in its place.** Behind a job that stopped the group (``FAILED``, ``BLOCKED``,
   ``CARRIER``, or a buffered job that failed and waits at the head of the buffer) it is ``RETRY``
   (``BLOCKED``), and so is every later record: the core is not called again after a stop, since it
   would run the failed buffered job a second time in one invocation. In a parked group it is
   ``KEEP``. Otherwise it is ``DEAD`` (go-on policy) or, with ``park_on_dead``, parks the group at
   itself: ``KEEP`` with its dead entry, and every later record ``KEEP``.
3. **One result per record**, as the core's :class:`~constructs_fifo.runtime.state.core.records.JobResult`;
   a malformed record's dead entry has reason ``MALFORMED``, no type, and its ``jobId`` when usable.
   The run's result is the core's own type, :class:`~constructs_fifo.runtime.state.core.records.BatchResult`:
   each step (a segment's core call, a malformed record, a segment not run) gives one, and the run
   folds them in record order (:meth:`~constructs_fifo.runtime.state.core.records.BatchResult.then`).
4. **A tick.** Without records the core runs once with no jobs: it drains what the buffer can apply
   and applies the gap policy (the processor ticks a live group when its wake-up message comes).
5. **Stalled.** When the run ends with a buffered job that failed waiting at the head of the buffer
   (:func:`stalled_on`), only a record of the group coming back brings it another attempt. The core
   reports a committed record for that (``CARRIER``), but when every record of the run is dead there
   is none: the result's ``stalled_on`` tells the processor to send a wake-up message instead.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.clock import elapsed_ms, started
from constructs_fifo.runtime.constants import DeadReason
from constructs_fifo.runtime.dead_jobs.record import DeadJob
from constructs_fifo.runtime.error_text import cut_error
from constructs_fifo.runtime.exceptions import MalformedJobError
from constructs_fifo.runtime.job import Job, parse_record, record_message_id
from constructs_fifo.runtime.state.core.apply import apply_batch_with
from constructs_fifo.runtime.state.core.engine import Transition, stalled_on
from constructs_fifo.runtime.state.core.records import (
    BatchResult,
    BatchSettings,
    GroupState,
    JobResult,
    Outcome,
    RetryReason,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.types import SQSRecord

__all__ = ["RecordingTransition", "run_group"]


class RecordingTransition:
    """The user's transition, recording each job's last error, attempt and time (for outcome lines).

    Only ``Exception`` is recorded and re-raised; anything else (a ``BaseException`` such as a
    ``SystemExit``) passes through untouched, as a crash of the worker should.
    """

    def __init__(self, transition: Transition) -> None:
        self._transition = transition
        self.errors: dict[str, Exception] = {}
        self.attempts: dict[str, int] = {}
        self.durations_ms: dict[str, float] = {}

    def __call__(self, job: Job, state: dict[str, Any] | None) -> Any:
        self.attempts[job.id] = job.attempt
        mark = started()
        try:
            return self._transition(job, state)
        except Exception as exc:
            self.errors[job.id] = exc
            raise
        finally:
            self.durations_ms[job.id] = elapsed_ms(mark)


def run_group(
    group_state: GroupState,
    records: list[SQSRecord],
    transition: Transition,
    settings: BatchSettings,
    *,
    now_ms: int,
) -> BatchResult:
    """Run one group's records (in queue order) against its state; see the module docstring.

    Raises
    ------
    ValueError
        A record of another group than ``group_state.group``.
    """
    jobs: list[Job | None] = []
    errors: dict[int, MalformedJobError] = {}
    for index, record in enumerate(records):
        try:
            jobs.append(parse_record(record))
        except MalformedJobError as exc:
            jobs.append(None)
            errors[index] = exc
    run, ran = BatchResult(group_state, ()), False  # ran: whether the core was called in this run
    segment: list[Job] = []
    for job, record, index in zip(jobs, records, range(len(records)), strict=True):
        if job is not None:
            segment.append(job)
            continue
        run, ran = _then_segment(run, ran, segment, transition, settings, now_ms=now_ms)
        segment = []
        run = run.then(
            _malformed(run, _stop(run, ran, settings), record, errors[index], settings, now_ms=now_ms)
        )
    run, _ = _then_segment(run, ran, segment, transition, settings, now_ms=now_ms, tick=not records)
    assert len(run.results) == len(records), "every record gets a result"
    return replace(run, stalled_on=stalled_on(run.group_state, settings.first_seq))


def _stop(run: BatchResult, ran: bool, settings: BatchSettings) -> tuple[str, int] | None:
    """(job id, attempt) of the job that stopped the group in this run: a RETRY that stops it, or, once
    the core ran, a failed buffered job waiting at the head of the buffer (one that waited there
    before the run is retried by the run's first core call)."""
    for result in run.results:
        if result.stops_group:
            return result.blocked_by or result.job_id, result.attempt or 1
    return stalled_on(run.group_state, settings.first_seq) if ran else None


def _parked(run: BatchResult) -> bool:
    return run.parked_by is not None or run.group_state.book.parked is not None


def _blocked(stop: tuple[str, int], job_id: str, message_id: str) -> JobResult:
    blocker, attempt = stop
    return JobResult(
        job_id, message_id, Outcome.RETRY, reason=RetryReason.BLOCKED, attempt=attempt, blocked_by=blocker
    )


def _not_run(run: BatchResult, results: list[JobResult], jobs: list[Job | None]) -> BatchResult:
    """A step whose records did not reach the core: the state as it stands, the gap as last seen."""
    return BatchResult(
        run.group_state,
        tuple(results),
        jobs=tuple(jobs),
        gap_open_ms=run.gap_open_ms,
        gap_timed_out=run.gap_timed_out,
    )


def _then_segment(
    run: BatchResult,
    ran: bool,
    segment: list[Job],
    transition: Transition,
    settings: BatchSettings,
    *,
    now_ms: int,
    tick: bool = False,
) -> tuple[BatchResult, bool]:
    """Rule 1: ``run`` followed by one core call for the jobs of one segment (none after a stop or in
    a parked group: they are ``BLOCKED`` or ``KEEP``); and whether the core has run."""
    if not segment and not tick:
        return run, ran
    stop = _stop(run, ran, settings)
    if stop is not None:
        return run.then(
            _not_run(run, [_blocked(stop, job.id, job.message_id) for job in segment], [*segment])
        ), ran
    if _parked(run):
        kept = [JobResult(job.id, job.message_id, Outcome.KEEP) for job in segment]
        return run.then(_not_run(run, kept, [*segment])), ran
    return run.then(apply_batch_with(run.group_state, segment, transition, settings, now_ms=now_ms)), True


def _malformed(
    run: BatchResult,
    stop: tuple[str, int] | None,
    record: SQSRecord,
    exc: MalformedJobError,
    settings: BatchSettings,
    *,
    now_ms: int,
) -> BatchResult:
    """Rule 2: a malformed record's result in its place (``stop``: what stopped the group, if any)."""
    job_id, message_id = exc.job_id or "", record_message_id(record)
    if stop is not None:
        return _not_run(run, [_blocked(stop, job_id, message_id)], [None])
    if _parked(run):
        return _not_run(run, [JobResult(job_id, message_id, Outcome.KEEP)], [None])
    text = cut_error(str(exc))
    dead = DeadJob(job_id, "", type(exc).__name__, text, 0, message_id, now_ms, None, DeadReason.MALFORMED)
    if settings.park_on_dead:
        parked = _not_run(run, [JobResult(job_id, message_id, Outcome.KEEP, dead=dead)], [None])
        return replace(parked, parked_by=dead)
    return _not_run(run, [JobResult(job_id, message_id, Outcome.DEAD, dead=dead)], [None])
