"""One group's records through state mode's core: malformed records split out, one result per record.

Pure, without I/O: :class:`~constructs_fifo.runtime.state.processor.StateBatchProcessor` reads the
group, calls :func:`run_group` (for a batch's records, or a page of a resuming group's kept records)
and commits what it returns in one write.

Rules (the core's are in :mod:`constructs_fifo.runtime.state.core`):

1. **Malformed records never reach the core.** A body that is not a job envelope is dead at once
   (parsing is deterministic). The group's records are split at malformed ones into segments, and
   :func:`~constructs_fifo.runtime.state.core.apply_batch_with` runs on each non-empty segment in
   order, carrying the state from one to the next (the caller commits once, at the end).
2. **A malformed record in its place.** Behind a job that stopped the group (``FAILED``, ``BLOCKED``,
   ``CARRIER``, or a buffered job that failed and waits at the head of the buffer) it is ``RETRY``
   (``BLOCKED``), and so is every later record: the core is not called again after a stop, since it
   would run the failed buffered job a second time in one invocation. In a parked group it is
   ``KEEP``. Otherwise it is ``DEAD`` (go-on policy) or, with ``park_on_dead``, parks the group at
   itself: ``KEEP`` with its dead entry, and every later record ``KEEP``.
3. **One result per record**, as the core's :class:`~constructs_fifo.runtime.state.records.JobResult`;
   a malformed record's dead entry has reason ``MALFORMED``, no type, and its ``jobId`` when usable.
4. **A tick.** Without records the core runs once with no jobs: it drains what the buffer can apply
   and applies the gap policy (the processor ticks a live group when its wake-up message comes).
5. **Stalled.** When the run ends with a buffered job that failed waiting at the head of the buffer
   (:func:`stalled_on`), only a record of the group coming back brings it another attempt. The core
   reports a committed record for that (``CARRIER``), but when every record of the run is dead there
   is none: :attr:`GroupRun.stalled_on` tells the processor to send a wake-up message instead.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.constants import DeadReason
from constructs_fifo.runtime.error_text import cut_error
from constructs_fifo.runtime.exceptions import MalformedJobError
from constructs_fifo.runtime.job import Job, parse_record, record_message_id
from constructs_fifo.runtime.state.core import apply_batch_with
from constructs_fifo.runtime.state.engine import Transition, next_seq
from constructs_fifo.runtime.state.records import (
    BatchSettings,
    BufferedJob,
    DeadEntry,
    GroupState,
    JobResult,
    Outcome,
    RetryReason,
    SkippedRange,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.types import SQSRecord

__all__ = ["GroupRun", "RecordingTransition", "run_group", "stalled_on"]


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
        started = time.perf_counter()
        try:
            return self._transition(job, state)
        except Exception as exc:
            self.errors[job.id] = exc
            raise
        finally:
            self.durations_ms[job.id] = (time.perf_counter() - started) * 1000


@dataclass(frozen=True)
class GroupRun:
    """What :func:`run_group` decided for one group's records.

    Attributes
    ----------
    group_state : GroupState
        The state to commit (its ``version`` is still the one read).
    changed : bool
        Whether it differs from the state read (nothing to write when not).
    results : tuple of JobResult
        One per record, in record order.
    jobs : tuple of (Job or None)
        The parsed job of each record (``None``: malformed).
    applied : tuple of str
        Job ids applied in this run, in the order their transitions were folded.
    record_job_ids : frozenset of str
        The job ids of the run's records (a job of the buffer that ran is not one of them).
    from_buffer : tuple of BufferedJob
        Buffered jobs of earlier batches applied here (no record in this run).
    dead_buffered : tuple of (BufferedJob, DeadEntry)
        Buffered jobs of earlier batches that died here (go-on policy): owed, sent after the commit.
    parked_by : DeadEntry or None
        The dead job that parked the group in this run (its state's ``parked``, or a malformed record
        under ``park_on_dead``), ``None`` when the group did not park here.
    skipped : tuple of SkippedRange
        Ranges ``SKIP_GAP`` gave up in this run.
    gap_open_ms : int or None
        How long the open sequence gap has been open at the end (from the last core call).
    gap_timed_out : bool
        Whether that gap is older than the gap timeout.
    stalled_on : tuple of (str, int) or None
        Rule 5: the job id and attempt of a buffered job that failed and waits at the head of the
        buffer at the end of the run.
    """

    group_state: GroupState
    changed: bool
    results: tuple[JobResult, ...]
    jobs: tuple[Job | None, ...]
    applied: tuple[str, ...] = ()
    record_job_ids: frozenset[str] = frozenset()
    from_buffer: tuple[BufferedJob, ...] = ()
    dead_buffered: tuple[tuple[BufferedJob, DeadEntry], ...] = ()
    parked_by: DeadEntry | None = None
    skipped: tuple[SkippedRange, ...] = ()
    gap_open_ms: int | None = None
    gap_timed_out: bool = False
    stalled_on: tuple[str, int] | None = None


def stalled_on(group_state: GroupState, first_seq: int) -> tuple[str, int] | None:
    """Rule 5: (job id, attempt) of a buffered job that failed and waits at the head of the buffer.

    Its ``seq`` is the next one, yet it was not applied: only a failure (or parking, excluded here)
    leaves it there, since the core applies what follows contiguously at the end of every step.
    """
    book = group_state.book
    head = book.buffer[0] if book.buffer and book.parked is None else None
    if head is None or head.seq != next_seq(book.last_seq, first_seq):
        return None
    return head.job_id, book.attempts.get(head.job_id, 1)


@dataclass
class _Run:
    """The working copy of :func:`run_group`."""

    state: GroupState
    settings: BatchSettings
    now_ms: int
    results: list[JobResult | None]
    changed: bool = False
    stop: tuple[str, int] | None = None  # (job id, attempt) of the job that stopped the group
    parked_by: DeadEntry | None = None
    applied: list[str] = field(default_factory=list)
    from_buffer: list[BufferedJob] = field(default_factory=list)
    dead_buffered: list[tuple[BufferedJob, DeadEntry]] = field(default_factory=list)
    skipped: list[SkippedRange] = field(default_factory=list)
    gap_open_ms: int | None = None
    gap_timed_out: bool = False

    @property
    def parked(self) -> bool:
        return self.parked_by is not None or self.state.book.parked is not None

    def blocked(self, job_id: str, message_id: str) -> JobResult:
        blocker, attempt = self.stop or ("", 1)
        return JobResult(
            job_id, message_id, Outcome.RETRY, reason=RetryReason.BLOCKED, attempt=attempt, blocked_by=blocker
        )


def run_group(
    group_state: GroupState,
    records: list[SQSRecord],
    transition: Transition,
    settings: BatchSettings,
    *,
    now_ms: int,
) -> GroupRun:
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
    run = _Run(group_state, settings, now_ms, [None] * len(records))
    segment: list[int] = []
    for index, job in enumerate(jobs):
        if job is not None:
            segment.append(index)
            continue
        _segment(run, segment, jobs, transition)
        segment = []
        _malformed(run, index, records[index], errors[index])
    _segment(run, segment, jobs, transition, tick=not records)
    results = tuple(r for r in run.results if r is not None)
    assert len(results) == len(records), "every record gets a result"
    parked_by = run.parked_by
    if parked_by is None and run.state.book.parked != group_state.book.parked:
        parked_by = run.state.book.parked  # the core parked the group at one of its jobs
    return GroupRun(
        group_state=run.state,
        changed=run.changed,
        results=results,
        jobs=tuple(jobs),
        applied=tuple(run.applied),
        record_job_ids=frozenset(result.job_id for result in results),
        from_buffer=tuple(run.from_buffer),
        dead_buffered=tuple(run.dead_buffered),
        parked_by=parked_by,
        skipped=tuple(run.skipped),
        gap_open_ms=run.gap_open_ms,
        gap_timed_out=run.gap_timed_out,
        stalled_on=stalled_on(run.state, settings.first_seq),
    )


def _segment(
    run: _Run, indexes: list[int], jobs: list[Job | None], transition: Transition, *, tick: bool = False
) -> None:
    """Rule 1: one core call for the jobs of one segment (none after a stop or in a parked group)."""
    if not indexes and not tick:
        return
    segment = [job for job in (jobs[index] for index in indexes) if job is not None]
    if run.stop is not None or run.parked:
        for index, job in zip(indexes, segment, strict=True):
            kept = JobResult(job.id, job.message_id, Outcome.KEEP)
            run.results[index] = run.blocked(job.id, job.message_id) if run.stop is not None else kept
        return
    before = {entry.job_id: entry for entry in run.state.book.buffer}
    result = apply_batch_with(run.state, segment, transition, run.settings, now_ms=run.now_ms)
    for index, job_result in zip(indexes, result.results, strict=True):
        run.results[index] = job_result
        if job_result.stops_group:
            run.stop = run.stop or (job_result.blocked_by or job_result.job_id, job_result.attempt or 1)
    run.state = result.group_state
    run.changed = run.changed or result.changed
    run.applied += result.applied
    run.from_buffer += [before[job_id] for job_id in result.from_buffer if job_id in before]
    run.dead_buffered += result.dead_buffered
    run.skipped += result.skipped
    run.gap_open_ms, run.gap_timed_out = result.gap_open_ms, result.gap_timed_out
    run.stop = run.stop or stalled_on(run.state, run.settings.first_seq)


def _malformed(run: _Run, index: int, record: SQSRecord, exc: MalformedJobError) -> None:
    """Rule 2: a malformed record's result in its place."""
    job_id, message_id = exc.job_id or "", record_message_id(record)
    if run.stop is not None:
        run.results[index] = run.blocked(job_id, message_id)
        return
    if run.parked:
        run.results[index] = JobResult(job_id, message_id, Outcome.KEEP)
        return
    text = cut_error(str(exc))
    dead = DeadEntry(
        job_id, "", type(exc).__name__, text, 0, message_id, run.now_ms, None, DeadReason.MALFORMED
    )
    if run.settings.park_on_dead:
        run.parked_by = dead
        run.results[index] = JobResult(job_id, message_id, Outcome.KEEP, dead=dead)
    else:
        run.results[index] = JobResult(job_id, message_id, Outcome.DEAD, dead=dead)
