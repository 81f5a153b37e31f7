"""The working copy of one group's batch in state mode: the engine behind ``apply_batch``.

The rules it implements are stated once, in :mod:`constructs_fifo.runtime.state.core.apply`; this module
is its mechanics (pure, no I/O), kept apart so that each module stays readable.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any, cast

from constructs_fifo.runtime.constants import DeadReason
from constructs_fifo.runtime.dead_jobs.record import DeadJob
from constructs_fifo.runtime.error_text import cut_error, error_text
from constructs_fifo.runtime.exceptions import (
    MalformedJobError,
    PermanentJobError,
    SequenceConflictError,
    StateTooLargeError,
    TransitionResultError,
)
from constructs_fifo.runtime.job import Job
from constructs_fifo.runtime.state.core.records import (
    BatchResult,
    BatchSettings,
    Bookkeeping,
    BufferedJob,
    CancelEntry,
    GapPolicy,
    GroupState,
    JobResult,
    Outcome,
    RetryReason,
    SkippedRange,
    job_key,
    remember_dead_entry,
)
from constructs_fifo.runtime.state.core.values import encode_state, job_seq
from constructs_fifo.runtime.steering.names import (
    ENVELOPE_SUPERSEDE,
    MAX_CANCEL_REASON_LENGTH,
    MAX_CANCELLED_IDS,
    SUPERSEDED_BY,
    SUPERSEDED_REASON_PREFIX,
)

__all__ = [
    "MAX_ATTEMPT_ENTRIES",
    "MAX_DEAD_IDS",
    "MAX_SKIPPED_RANGES",
    "GroupBatch",
    "Transition",
    "gap_since",
    "next_seq",
    "stalled_on",
]

#: The user's transition: ``apply(job, state) -> next_state`` (pure; ``state`` is ``None`` at first).
Transition = Callable[[Job, "dict[str, Any] | None"], Any]

#: Dead job ids remembered per group (their entries are bounded by bytes: ``MAX_DEAD_ENTRIES_BYTES``).
MAX_DEAD_IDS = 100
#: Attempt counts kept per group (jobs that failed and are neither applied nor dead yet).
MAX_ATTEMPT_ENTRIES = 100
#: Skipped ranges remembered per group.
MAX_SKIPPED_RANGES = 20

_KEEP_RECORD = (Outcome.APPLIED, Outcome.DUPLICATE, Outcome.BUFFERED)  # committed effect: carrier-safe


class GroupBatch:
    """The working copy of one group's batch (mutable; :meth:`run` returns frozen results)."""

    def __init__(
        self, start: GroupState, jobs: list[Job], transition: Transition, settings: BatchSettings, now_ms: int
    ) -> None:
        self.start, self.jobs, self.transition = start, jobs, transition
        self.settings, self.now_ms = settings, now_ms
        book = start.book
        self.state = start.state
        self.state_json = None if start.state is None else json.dumps(start.state, separators=(",", ":"))
        self.applied_ids = list(book.applied)
        self.last_seq = book.last_seq
        self.buffer = {entry.seq: entry for entry in book.buffer}
        self.attempts = dict(book.attempts)
        self.dead = list(book.dead)
        self.dead_entries = book.dead_entries
        self.parked = book.parked
        self.skipped = list(book.skipped)
        self.cancelled = list(start.cancelled)
        self.cancelled_ids = set(start.cancelled_ids)
        self.newest = dict(start.newest)
        self.results: list[JobResult | None] = [None] * len(jobs)
        self.pending: dict[int, int] = {}  # seq -> index: jobs of this batch now in the buffer
        self.overflow: dict[int, int] = {}  # seq -> index: jobs of this batch the buffer cannot take
        self.stop: tuple[str, int] | None = None  # (job id, attempt) of the failure that stopped the group
        self.applied: list[str] = []
        self.from_buffer: list[BufferedJob] = []
        self.dead_buffered: list[tuple[BufferedJob, DeadJob]] = []
        self.new_skips: list[SkippedRange] = []

    # --- the batch ----------------------------------------------------------------------------

    def run(self) -> BatchResult:
        if self.parked is None:
            self._drain()
        for index, job in enumerate(self.jobs):
            if self.parked is not None:
                self.results[index] = JobResult(job.id, job.message_id, Outcome.KEEP)
            elif self.stop is not None:
                self.results[index] = self._blocked(job)
            else:
                self._one(index, job)
        self._end_of_batch()
        for index in self.overflow.values():  # set aside, then the group stopped or parked
            job = self.jobs[index]
            kept = JobResult(job.id, job.message_id, Outcome.KEEP)
            self.results[index] = kept if self.parked is not None else self._blocked(job)
        self._carrier()
        return self._result()

    def _one(self, index: int, job: Job) -> None:
        if job.id in self.dead:
            died_in = self._died_in(job)
            self.results[index] = JobResult(job.id, job.message_id, Outcome.DEAD_COPY, dead=died_in)
            return
        try:
            seq = job_seq(job)
        except MalformedJobError as exc:
            self._die(job, exc, index=index, seq=None, attempts=0)
            return
        if job_key(job.id) in self.applied_ids:
            self.results[index] = JobResult(job.id, job.message_id, Outcome.DUPLICATE)
            return
        if seq is None:
            self._run(job, index=index, seq=None)
            return
        nxt = self._next_seq()
        holder = self._holder(seq)
        if seq < nxt or holder == job.id or (holder is not None and self._resent(seq, job)):
            self.results[index] = JobResult(job.id, job.message_id, Outcome.DUPLICATE)
        elif holder is not None:
            conflict = SequenceConflictError(
                f"seq {seq} of group {job.group!r} is already taken by job {holder!r}"
            )
            self._die(job, conflict, index=index, seq=seq, attempts=0)
        elif seq == nxt:
            self._run(job, index=index, seq=seq)
            self._drain()  # also after a death that consumed the seq (park_on_dead=False)
        else:
            self.overflow[seq] = index
            self._refill()

    def _end_of_batch(self) -> None:
        while self.overflow and self.parked is None and self.stop is None:
            if self.settings.gap_policy is GapPolicy.WAIT:
                for index in self.overflow.values():
                    job = self.jobs[index]
                    self.results[index] = JobResult(
                        job.id, job.message_id, Outcome.RETRY, reason=RetryReason.BUFFER_FULL
                    )
                self.overflow.clear()
                return
            self._skip_to(min([*self.buffer, *self.overflow]))
        while self.settings.gap_policy is GapPolicy.SKIP_GAP and self.parked is None and self.stop is None:
            since = gap_since(self.buffer, self._next_seq())
            if since is None or self.now_ms - since < self.settings.gap_timeout_ms:
                return
            self._skip_to(min(self.buffer))

    def _carrier(self) -> None:
        """Keep one committed record as the group's way back when a buffered job failed (rule 8)."""
        if self.stop is None or any(r is not None and r.outcome is Outcome.RETRY for r in self.results):
            return
        for index in reversed(range(len(self.results))):
            current = self.results[index]
            if current is not None and current.outcome in _KEEP_RECORD:
                failed_id, attempt = self.stop
                self.results[index] = replace(
                    current,
                    outcome=Outcome.RETRY,
                    reason=RetryReason.CARRIER,
                    attempt=attempt,
                    blocked_by=failed_id,
                )
                return

    # --- steps --------------------------------------------------------------------------------

    def _run(self, job: Job, *, index: int | None, seq: int | None, entry: BufferedJob | None = None) -> bool:
        """Run one transition; ``True`` when it was applied (a cancelled or superseded job: its place
        closed)."""
        self._supersede_if_older(job)
        if job.id in self.cancelled_ids:
            self._close_cancelled(job, seq=seq, entry=entry)
        elif not self._transition(job, index=index, seq=seq, entry=entry):
            return False
        self._forget_marker(job)
        self.applied.append(job.id)
        if entry is not None:
            self.pending.pop(entry.seq, None)
        if index is not None:
            self.results[index] = JobResult(job.id, job.message_id, Outcome.APPLIED)
        elif entry is not None:
            self.from_buffer.append(entry)
        return True

    def _supersede_if_older(self, job: Job) -> None:
        """A job whose supersede key's marker names another job (a newer one, marked before it was sent)
        is cancelled by the runtime itself (``cancelled_by = "supersede"``): never applied, its place
        closes as a cancelled job's (:mod:`~constructs_fifo.runtime.state.storage.supersede`)."""
        key = _supersede_key(job)
        newer = self.newest.get(key) if key is not None else None
        if newer is None or newer == job.id or job.id in self.cancelled_ids:
            return
        reason = f"{SUPERSEDED_REASON_PREFIX}{newer}"[:MAX_CANCEL_REASON_LENGTH]
        self.cancelled = [*self.cancelled, CancelEntry(job.id, self.now_ms, reason, SUPERSEDED_BY)]
        del self.cancelled[:-MAX_CANCELLED_IDS]
        self.cancelled_ids = {entry.job_id for entry in self.cancelled}

    def _forget_marker(self, job: Job) -> None:
        """The newest job of its key has had its turn: its marker is no longer needed (no older job of
        the key can come after it), so the state item keeps markers of pending keys only."""
        key = _supersede_key(job)
        if key is not None and self.newest.get(key) == job.id:
            del self.newest[key]

    def _close_cancelled(self, job: Job, *, seq: int | None, entry: BufferedJob | None) -> None:
        """A cancelled job's turn: its transition is not called, the state stays; its place closes as an
        applied job's would (its ``seq`` passed, or its id remembered), so nothing waits for it."""
        self.attempts.pop(job.id, None)
        if entry is not None:
            del self.buffer[entry.seq]
        if seq is None:
            self.applied_ids.append(job_key(job.id))
            del self.applied_ids[: -self.settings.remember_job_ids]
        else:
            self.last_seq = seq

    def _transition(self, job: Job, *, index: int | None, seq: int | None, entry: BufferedJob | None) -> bool:
        """Call the transition and fold its result; ``False`` when it failed or died."""
        attempt = self.attempts.get(job.id, 0) + 1
        fresh = None if self.state_json is None else json.loads(self.state_json)
        try:
            result = self.transition(replace(job, attempt=attempt), fresh)
        except PermanentJobError as exc:
            self._die(job, exc, index=index, seq=seq, attempts=attempt, entry=entry)
            return False
        except Exception as exc:
            if attempt >= self.settings.max_attempts:
                self._die(job, exc, index=index, seq=seq, attempts=attempt, entry=entry)
                return False
            _bounded_put(self.attempts, job.id, attempt)
            self.stop = (job.id, attempt)
            if index is not None and entry is None:
                self.results[index] = JobResult(
                    job.id, job.message_id, Outcome.RETRY, reason=RetryReason.FAILED, attempt=attempt
                )
            return False
        try:
            self._apply_step(job, result, seq=seq, entry=entry)
        except (TransitionResultError, StateTooLargeError) as exc:
            self._die(job, exc, index=index, seq=seq, attempts=attempt, entry=entry)
            return False
        return True

    def _apply_step(self, job: Job, result: object, *, seq: int | None, entry: BufferedJob | None) -> None:
        encoded = encode_state(result)
        saved = (self.state, self.state_json, list(self.applied_ids), self.last_seq, dict(self.buffer))
        attempts = dict(self.attempts)
        self.state, self.state_json = cast("dict[str, Any]", result), encoded
        self.attempts.pop(job.id, None)
        if entry is not None:
            del self.buffer[entry.seq]
        if seq is None:
            self.applied_ids.append(job_key(job.id))
            del self.applied_ids[: -self.settings.remember_job_ids]
        else:
            self.last_seq = seq
        size = self._size()
        if size is not None and size > self.settings.size_limit:
            self.state, self.state_json, self.applied_ids, self.last_seq, self.buffer = saved
            self.attempts = attempts
            detail = (
                f"the state alone is {len(encoded.encode('utf-8'))} bytes; {len(self.buffer)} jobs buffered"
            )
            raise StateTooLargeError(size, self.settings.size_limit, detail)

    def _drain(self) -> None:
        """Apply what follows ``last_seq`` contiguously, from the buffer or set aside in this batch."""
        while self.parked is None and self.stop is None:
            nxt = self._next_seq()
            if nxt in self.buffer:
                entry = self.buffer[nxt]
                index = self.pending.get(nxt)
                self._run(_job_of(entry, self.start.group), index=index, seq=nxt, entry=entry)
            elif nxt in self.overflow:
                index = self.overflow.pop(nxt)
                self._run(self.jobs[index], index=index, seq=nxt)
            else:
                return
            self._refill()

    def _refill(self) -> None:
        """Move jobs set aside into the buffer, lowest ``seq`` first, while it can take them."""
        for seq in sorted(self.overflow):
            if (
                self.parked is not None
                or self.stop is not None
                or len(self.buffer) >= self.settings.reorder_limit
            ):
                return
            index = self.overflow[seq]
            job = self.jobs[index]
            self.buffer[seq] = BufferedJob(seq, job.message_id, self.now_ms, job.body, job.body_text)
            size = self._size()
            if size is not None and size > self.settings.size_limit:
                del self.buffer[seq]
                return
            del self.overflow[seq]
            self.pending[seq] = index
            self.results[index] = JobResult(job.id, job.message_id, Outcome.BUFFERED)

    def _skip_to(self, target: int) -> None:
        if target > self._next_seq():
            skipped = SkippedRange(self._next_seq(), target - 1, self.now_ms)
            self.new_skips.append(skipped)
            self.skipped = [*self.skipped, skipped][-MAX_SKIPPED_RANGES:]
            self.last_seq = target - 1
        self._drain()

    def _die(
        self,
        job: Job,
        exc: BaseException,
        *,
        index: int | None,
        seq: int | None,
        attempts: int,
        entry: BufferedJob | None = None,
    ) -> None:
        text = cut_error(error_text(exc))
        kind, reason = type(exc).__name__, _reason(exc)
        info = DeadJob(job.id, job.type, kind, text, attempts, job.message_id, self.now_ms, seq, reason)
        self.dead = [*self.dead, job.id][-MAX_DEAD_IDS:]
        self._forget_marker(job)
        self.dead_entries = remember_dead_entry(self.dead_entries, info, dead_ids=tuple(self.dead))
        self.attempts.pop(job.id, None)
        if self.settings.park_on_dead:
            self.parked = info
            if index is not None and entry is None:  # a buffered dead job stays in the buffer
                self.results[index] = JobResult(job.id, job.message_id, Outcome.KEEP, dead=info)
            return
        if seq is not None and seq == self._next_seq():
            self.last_seq = seq
        if entry is not None:
            del self.buffer[entry.seq]
            self.pending.pop(entry.seq, None)
            if index is None:
                self.dead_buffered.append((entry, info))
        if index is not None:
            self.results[index] = JobResult(job.id, job.message_id, Outcome.DEAD, dead=info)

    # --- helpers ------------------------------------------------------------------------------

    def _next_seq(self) -> int:
        return next_seq(self.last_seq, self.settings.first_seq)

    def _died_in(self, job: Job) -> DeadJob | None:
        """The remembered entry of a dead job when ``job`` is the very message it died in (rule 2)."""
        for entry in self.dead_entries:
            if entry.job_id == job.id and entry.message_id == job.message_id:
                return entry
        return None

    def _holder(self, seq: int) -> str | None:
        """The job id already waiting with ``seq`` (in the buffer or set aside), if any."""
        if seq in self.buffer:
            return self.buffer[seq].job_id
        return self.jobs[self.overflow[seq]].id if seq in self.overflow else None

    def _resent(self, seq: int, job: Job) -> bool:
        """Whether ``job`` is a resend of the job waiting with ``seq``: same type and payload (rule 3).

        A producer that resends under a new id (an EventBridge ``PutEvents`` retry: a new event id)
        must not kill its group: the same ``seq`` with the same content is the same job."""
        if seq in self.buffer:
            body = self.buffer[seq].body
            return bool(body.get("type") == job.type and body.get("payload", {}) == job.payload)
        waiting = self.jobs[self.overflow[seq]]
        return waiting.type == job.type and waiting.payload == job.payload

    def _blocked(self, job: Job) -> JobResult:
        failed_id, attempt = self.stop or ("", 0)
        return JobResult(
            job.id,
            job.message_id,
            Outcome.RETRY,
            reason=RetryReason.BLOCKED,
            attempt=attempt,
            blocked_by=failed_id,
        )

    def _group_state(self) -> GroupState:
        book = Bookkeeping(
            applied=tuple(self.applied_ids),
            last_seq=self.last_seq,
            buffer=tuple(self.buffer[seq] for seq in sorted(self.buffer)),
            attempts=dict(self.attempts),
            dead=tuple(self.dead),
            dead_entries=self.dead_entries,
            parked=self.parked,
            skipped=tuple(self.skipped),
            gap_since_ms=gap_since(self.buffer, self._next_seq()),
        )
        return GroupState(
            self.start.group, self.state, self.start.version, book, tuple(self.cancelled), dict(self.newest)
        )

    def _size(self) -> int | None:
        size_of = self.settings.size_of
        return None if size_of is None else size_of(self._group_state())

    def _result(self) -> BatchResult:
        final = self._group_state()
        since = final.book.gap_since_ms
        open_ms = None if since is None else max(0, self.now_ms - since)
        results = tuple(r for r in self.results if r is not None)
        assert len(results) == len(self.jobs), "every job gets an outcome"
        return BatchResult(
            group_state=final,
            results=results,
            applied=tuple(self.applied),
            from_buffer=tuple(self.from_buffer),
            dead_buffered=tuple(self.dead_buffered),
            skipped=tuple(self.new_skips),
            gap_open_ms=open_ms,
            gap_timed_out=open_ms is not None and open_ms >= self.settings.gap_timeout_ms,
            changed=final != self.start,
            jobs=tuple(self.jobs),
            parked_by=final.book.parked if final.book.parked != self.start.book.parked else None,
            stalled_on=stalled_on(final, self.settings.first_seq),
        )


def next_seq(last_seq: int | None, first_seq: int) -> int:
    """The ``seq`` that comes next: ``first_seq`` before any, else ``last_seq + 1``."""
    return first_seq if last_seq is None else last_seq + 1


def stalled_on(group_state: GroupState, first_seq: int) -> tuple[str, int] | None:
    """(job id, attempt) of a buffered job that failed and waits at the head of the buffer.

    Its ``seq`` is the next one, yet it was not applied: only a failure (or parking, excluded here)
    leaves it there, since the core applies what follows contiguously at the end of every step.
    """
    book = group_state.book
    head = book.buffer[0] if book.buffer and book.parked is None else None
    if head is None or head.seq != next_seq(book.last_seq, first_seq):
        return None
    return head.job_id, book.attempts.get(head.job_id, 1)


def gap_since(buffer: dict[int, BufferedJob], next_value: int) -> int | None:
    """When the open gap opened: the oldest buffered entry's time, if the head is beyond ``next``."""
    if not buffer or min(buffer) <= next_value:
        return None
    return min(entry.buffered_at_ms for entry in buffer.values())


def _job_of(entry: BufferedJob, group: str) -> Job:
    body = entry.body
    payload = body.get("payload", {})
    return Job(entry.job_id, group, entry.job_type, payload, 1, entry.message_id, body, entry.text)


def _supersede_key(job: Job) -> str | None:
    """The job's supersede key (``JobMessage.supersede``), ``None`` when it has none."""
    key = job.body.get(ENVELOPE_SUPERSEDE) if isinstance(job.body, dict) else None
    return key if isinstance(key, str) and key else None


def _reason(exc: BaseException) -> DeadReason:
    if isinstance(exc, MalformedJobError):
        return DeadReason.MALFORMED
    return DeadReason.PERMANENT if isinstance(exc, PermanentJobError) else DeadReason.ATTEMPTS_EXHAUSTED


def _bounded_put(counts: dict[str, int], key: str, value: int) -> None:
    counts.pop(key, None)
    counts[key] = value
    while len(counts) > MAX_ATTEMPT_ENTRIES:
        del counts[next(iter(counts))]
