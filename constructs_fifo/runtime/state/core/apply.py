"""State mode's pure core: one group's jobs of one batch, applied to its state once and in order.

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
3. **Duplicate.** A job whose id is in ``applied``, a ``seq`` below ``next``, or a copy (same id and
   ``seq``) of a buffered job is ``DUPLICATE``: skipped, its record deleted, counted. A different job
   with a ``seq`` already buffered is dead (``SequenceConflictError``); a ``seq`` that is not a
   non-negative integer is dead at once (``MalformedJobError``).
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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from constructs_fifo.runtime.constants import (
    DEFAULT_FIRST_SEQ,
    DEFAULT_GAP_TIMEOUT_SECONDS,
    DEFAULT_REMEMBERED_JOB_IDS,
    DEFAULT_REORDER_LIMIT,
    MAX_ITEM_BYTES,
)
from constructs_fifo.runtime.job import Job
from constructs_fifo.runtime.state.core.engine import GroupBatch, Transition, gap_since, next_seq
from constructs_fifo.runtime.state.core.records import (
    BatchResult,
    BatchSettings,
    GapPolicy,
    GroupState,
    SizeFunction,
)

__all__ = ["apply_batch", "apply_batch_with", "resume_group"]


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
