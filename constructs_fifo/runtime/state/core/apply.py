"""State mode's pure core: one group's records of one batch, applied to its state once and in order.

Two entries, one per shape of input: :func:`run_group` takes the group's queue records (the processor's
batch, or a page of a resuming group's kept records) and splits the malformed ones out (rules 10 to 14
below); :func:`apply_batch` takes its parsed jobs (rules 1 to 9).

In state mode a job function is a transition ``apply(job, state) -> next_state`` of its group's
state. :func:`apply_batch` runs one group's jobs against the group's committed :class:`GroupState`
and returns the next one with one outcome per job. It does no I/O: the processor reads the group
once, calls this, and commits the result in one write conditioned on ``version``
(:mod:`constructs_fifo.runtime.state.storage.store`). A lost race or a crash before the commit commits
nothing: the group's records come back and run again from the state that stands, so each transition's effect
is committed exactly once. The transition gets a fresh copy of the state (decoded from its JSON), so
it cannot change what an earlier step committed.

Rules, per job in batch order (``next`` is ``last_seq + 1``, or ``first_seq`` before any):

1. **Parked.** In a group parked at the start every job is ``KEEP`` and nothing is applied.
2. **Dead copy.** A job id that died before (in ``dead``) is ``DEAD_COPY``, never applied. When it
   is the very message the job died in (its dead-letter send failed, so the record came back, or
   stayed kept) the result carries the remembered entry (``dead_entries``), and it is dead-lettered as
   it died (its reason, error and attempts); a copy in another message carries none and follows the
   dead job as ``COPY_OF_DEAD_JOB``.
3. **Duplicate.** A job whose id is in ``applied``, a ``seq`` below ``next``, or a copy of a buffered
   job (same ``seq``, and the same id, or the same type and payload: a resend under a new id, as an
   EventBridge ``PutEvents`` retry makes) is ``DUPLICATE``: skipped, its record deleted, counted. A
   different job with a ``seq`` already buffered is dead (``SequenceConflictError``); a ``seq`` that is
   not a non-negative integer is dead at once (``MalformedJobError``).
4. **In order.** The job whose ``seq`` is ``next`` is applied, then every buffered job that now
   follows contiguously, in ``seq`` order. A batch also starts by draining what already follows.
5. **Reorder buffer.** A ``seq`` beyond ``next`` is ``BUFFERED``: its body is kept in the group's
   item, committed with the state, and applied once the gap closes. It must never be held in the
   queue: SQS delivers a FIFO group in order and nothing behind a message in flight, so a held job
   stays in front of the one it waits for, which is never delivered: the group deadlocks until the
   held job is dead-lettered. The buffer holds at most ``reorder_limit`` jobs and must fit the item.
6. **Without seq.** A job without ``seq`` stands outside the sequence: it is applied where the queue
   brings it, whatever the buffer holds; it never moves ``last_seq`` and never waits. In a group that
   mixes both it lands after everything applied before it and ahead of what is still buffered, so
   send a group's jobs all with or all without ``seq`` (mix only jobs that commute with the rest).
7. **Gap policy.** A job the buffer cannot take (full, or the item would pass its size) is set aside
   for the batch and placed as soon as it can be. At the end of the batch, what is still set aside
   and a gap open longer than ``gap_timeout_ms`` (``gap_open_ms``, ``gap_timed_out``) follow
   ``gap_policy``. ``WAIT``: a job set aside is ``RETRY`` (``BUFFER_FULL``, no attempt counted); the
   job it waits for is behind it in the queue, so the group waits for an operator, and the gap
   metric's alarm is how one hears of it. ``SKIP_GAP``: the missing ``seq`` values up to the lowest
   waiting job are given up and recorded in ``skipped``, what follows is applied, and this repeats
   while a job is set aside or the gap is timed out. The gap's clock is read only when a batch runs:
   an idle group shows its gap in the item (``gap_since_ms``), and a batch without jobs (a tick)
   applies the policy to it.
8. **Failures.** The transition sees ``job.attempt`` = 1 + its failed runs so far (the runtime's
   count, kept in ``attempts``). ``PermanentJobError`` makes the job dead at once, and so does a
   result that is not a JSON object (``TransitionResultError``) or a state that would not fit the
   item (``StateTooLargeError``, checked with ``size_of`` after every step: the step is not applied).
   Any other exception counts one attempt and is ``RETRY`` (``FAILED``), or dead on attempt
   ``max_attempts``. It stops the group: everything before it is committed and every later job of
   the group is ``RETRY`` (``BLOCKED``). A buffered job that fails stays at the head of the buffer;
   if no record of the batch is left to bring the group back, the last one whose effect is committed
   is ``RETRY`` (``CARRIER``) all the same: it returns as a duplicate and its batch drains first.
9. **Dead.** A dead job's id joins ``dead`` and its entry ``dead_entries``. With
   ``park_on_dead=False`` it is ``DEAD`` (a buffered one without a record in this batch is in
   ``dead_buffered``, with its body), its ``seq`` counts as consumed and the group goes on. With
   ``park_on_dead=True`` the group parks: ``parked`` holds the dead job's info, it and every later
   job of the batch are ``KEEP`` (a buffered dead job stays in the buffer) and nothing more is
   applied until :func:`resume_group`.

Bounds. ``applied`` keeps the ids of the last ``remember_job_ids`` jobs applied without ``seq``:
bounded by count, not age, because the item's size (and every write's cost: 1 WCU per KB) depends on
the count, while a quiet group may need its ids for a long time. A copy arriving after its id was
dropped is applied again; with ``seq`` a copy is recognised forever, whatever the bound. ``dead`` and
``attempts`` keep the last 100 entries, ``skipped`` the last 20 ranges, and ``dead_entries`` the
newest that fit in :data:`~constructs_fifo.runtime.constants.MAX_DEAD_ENTRIES_BYTES` (16 KB encoded:
their error texts make them large; a dead id whose entry was pushed out has its own redelivery sent as
a copy). ``size_of`` is checked against the item limit less :data:`BOOKKEEPING_RESERVE_BYTES`, the
most those bounded records can still grow. Attempts live in the committed item; a run that kills the
process (timeout, out of memory) before the commit is counted by the processor's run marker
(:mod:`constructs_fifo.runtime.state.crash_watch`), which hands the core that attempt back.

Rules for the group's records (:func:`run_group`), around the jobs' rules:

10. **Malformed records never reach the core.** A body that is not a job envelope is dead at once
    (parsing is deterministic). The group's records are split at malformed ones into segments, and
    :func:`apply_batch_with` runs on each non-empty segment in
    order, carrying the state from one to the next (the caller commits once, at the end).
11. **A malformed record in its place.** Behind a job that stopped the group (``FAILED``, ``BLOCKED``,
    ``CARRIER``, or a buffered job that failed and waits at the head of the buffer) it is ``RETRY``
    (``BLOCKED``), and so is every later record: the core is not called again after a stop, since it
    would run the failed buffered job a second time in one invocation. In a parked group it is
    ``KEEP``. Otherwise it is ``DEAD`` (go-on policy) or, with ``park_on_dead``, parks the group at
    itself: ``KEEP`` with its dead entry, and every later record ``KEEP``.
12. **One result per record**, as the core's :class:`~constructs_fifo.runtime.state.core.records.JobResult`;
    a malformed record's dead entry has reason ``MALFORMED``, no type, and its ``jobId`` when usable.
    The run's result is the core's own type, :class:`~constructs_fifo.runtime.state.core.records.BatchResult`:
    each step (a segment's core call, a malformed record, a segment not run) gives one, and the run
    folds them in record order (:meth:`~constructs_fifo.runtime.state.core.records.BatchResult.then`).
13. **A tick.** Without records the core runs once with no jobs: it drains what the buffer can apply
    and applies the gap policy (the processor ticks a live group when its wake-up message comes).
14. **Stalled.** When the run ends with a buffered job that failed waiting at the head of the buffer
    (:func:`stalled_on`), only a record of the group coming back brings it another attempt. The core
    reports a committed record for that (``CARRIER``), but when every record of the run is dead there
    is none: the result's ``stalled_on`` tells the processor to send a wake-up message instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.clock import elapsed_ms, started
from constructs_fifo.runtime.constants import (
    DEFAULT_FIRST_SEQ,
    DEFAULT_GAP_TIMEOUT_SECONDS,
    DEFAULT_REMEMBERED_JOB_IDS,
    DEFAULT_REORDER_LIMIT,
    MAX_ITEM_BYTES,
    DeadReason,
)
from constructs_fifo.runtime.dead_jobs.record import DeadJob
from constructs_fifo.runtime.error_text import cut_error
from constructs_fifo.runtime.exceptions import MalformedJobError
from constructs_fifo.runtime.job import Job, parse_record, record_message_id
from constructs_fifo.runtime.state.core.engine import GroupBatch, Transition, gap_since, next_seq, stalled_on
from constructs_fifo.runtime.state.core.records import (
    BatchResult,
    BatchSettings,
    GapPolicy,
    GroupState,
    JobResult,
    Outcome,
    RetryReason,
    SizeFunction,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.types import SQSRecord

__all__ = ["RecordingTransition", "apply_batch", "apply_batch_with", "resume_group", "run_group"]


def apply_batch(
    group_state: GroupState,
    jobs: Sequence[Job],
    transition: Transition,
    *,
    now_ms: int,
    max_attempts: int,
    park_on_dead: bool,
    reorder_limit: int = DEFAULT_REORDER_LIMIT,
    gap_policy: GapPolicy = GapPolicy.WAIT,
    gap_timeout_ms: int = DEFAULT_GAP_TIMEOUT_SECONDS * 1000,
    first_seq: int = DEFAULT_FIRST_SEQ,
    remember_job_ids: int = DEFAULT_REMEMBERED_JOB_IDS,
    size_of: SizeFunction | None = None,
    max_item_bytes: int = MAX_ITEM_BYTES,
) -> BatchResult:
    """Apply one group's jobs of one batch to its state; see the module docstring for the rules.

    Parameters
    ----------
    group_state : GroupState
        The group's committed state, as read.
    jobs : sequence of Job
        The group's jobs of the batch, in queue order (may be empty: then only the buffer drains
        and the gap policy runs, e.g. right after :func:`resume_group`).
    transition : Transition
        The user's ``apply(job, state) -> next_state``.
    now_ms : int
        The time of the batch (epoch ms).
    max_attempts : int
        Runs a job gets; a transient failure on the last one makes it dead.
    park_on_dead : bool
        The queue's policy: park the group at a dead job (``True``) or go on (``False``).
    reorder_limit, gap_policy, gap_timeout_ms, first_seq, remember_job_ids
        The sequence settings (rules 3 to 7).
    size_of : SizeFunction, optional
        Item size of a candidate state; without it no size is checked.
    max_item_bytes : int
        The item limit ``size_of`` is checked against (less :data:`BOOKKEEPING_RESERVE_BYTES`).

    Returns
    -------
    BatchResult
        The state to commit and one outcome per job.
    """
    settings = BatchSettings(
        max_attempts=max_attempts,
        park_on_dead=park_on_dead,
        reorder_limit=reorder_limit,
        gap_policy=gap_policy,
        gap_timeout_ms=gap_timeout_ms,
        first_seq=first_seq,
        remember_job_ids=remember_job_ids,
        size_of=size_of,
        max_item_bytes=max_item_bytes,
    )
    return apply_batch_with(group_state, jobs, transition, settings, now_ms=now_ms)


def apply_batch_with(
    group_state: GroupState,
    jobs: Sequence[Job],
    transition: Transition,
    settings: BatchSettings,
    *,
    now_ms: int,
) -> BatchResult:
    """:func:`apply_batch` with the settings in one object (the processor builds it once).

    Raises
    ------
    ValueError
        A job of another group than ``group_state.group``.
    """
    strangers = sorted({job.group for job in jobs} - {group_state.group})
    if strangers:
        raise ValueError(
            f"apply_batch got jobs of groups {strangers} with the state of {group_state.group!r}"
        )
    return GroupBatch(group_state, list(jobs), transition, settings, now_ms).run()


def resume_group(
    group_state: GroupState, *, skip_dead: bool, first_seq: int = DEFAULT_FIRST_SEQ
) -> GroupState:
    """Unpark a group (pure; commit the result like a batch's, then run a batch to drain the buffer).

    Parameters
    ----------
    skip_dead : bool
        ``True`` gives the dead job up: its ``seq``, if next, counts as consumed, it leaves the buffer,
        and its copies stay ``DEAD_COPY``. ``False`` runs it again: its id leaves ``dead`` and its
        attempts restart, so a replayed copy (or its buffered entry) is applied.
    """
    book = group_state.book
    dead = book.parked
    if dead is None:
        return group_state
    last_seq, buffer = book.last_seq, book.buffer
    dead_ids, dead_entries, attempts = book.dead, book.dead_entries, dict(book.attempts)
    if skip_dead:
        if dead.seq is not None and dead.seq == next_seq(last_seq, first_seq):
            last_seq = dead.seq
            buffer = tuple(entry for entry in buffer if entry.seq != dead.seq)
    else:
        dead_ids = tuple(job_id for job_id in dead_ids if job_id != dead.job_id)
        dead_entries = tuple(entry for entry in dead_entries if entry.job_id != dead.job_id)
        attempts.pop(dead.job_id, None)
    gap = gap_since({entry.seq: entry for entry in buffer}, next_seq(last_seq, first_seq))
    new_book = replace(
        book,
        parked=None,
        last_seq=last_seq,
        buffer=buffer,
        dead=dead_ids,
        dead_entries=dead_entries,
        attempts=attempts,
        gap_since_ms=gap,
    )
    return replace(group_state, book=new_book)


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
    """Rule 10: ``run`` followed by one core call for the jobs of one segment (none after a stop or in
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
    """Rule 11: a malformed record's result in its place (``stop``: what stopped the group, if any)."""
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
