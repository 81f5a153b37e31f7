"""The records of state mode: a group's committed state, its bookkeeping, and what a batch did.

The rules on values (what a ``seq`` may be, what a state may hold) are in
:mod:`constructs_fifo.runtime.state.core.values`. Pure, without I/O:
:func:`constructs_fifo.runtime.state.core.apply.apply_batch` computes these records and
:class:`constructs_fifo.runtime.state.storage.store.StateStore` stores them (its module docstring gives
the item layout). Every class here is frozen; a batch returns new ones.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.constants import (
    DEFAULT_FIRST_SEQ,
    DEFAULT_GAP_TIMEOUT_SECONDS,
    DEFAULT_REMEMBERED_JOB_IDS,
    DEFAULT_REORDER_LIMIT,
    JOB_KEY_BYTES,
    MAX_DEAD_ENTRIES_BYTES,
    MAX_ITEM_BYTES,
)
from constructs_fifo.runtime.dead_jobs.record import DeadJob, encode_dead_job
from constructs_fifo.runtime.settings.choices import GapPolicy
from constructs_fifo.runtime.settings.spec import SETTINGS
from constructs_fifo.runtime.state.core.values import compact_json

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.job import Job

__all__ = [
    "BOOKKEEPING_RESERVE_BYTES",
    "BatchResult",
    "BatchSettings",
    "Bookkeeping",
    "BufferedJob",
    "CancelEntry",
    "GapPolicy",
    "GroupState",
    "JobResult",
    "Outcome",
    "RetryReason",
    "SizeFunction",
    "SkippedRange",
    "job_key",
    "remember_dead_entry",
]


class Outcome(enum.Enum):
    """What :func:`~constructs_fifo.runtime.state.core.apply.apply_batch` decided for one job."""

    #: Applied in this batch (directly, or out of the buffer once its gap closed): delete the record.
    APPLIED = "APPLIED"
    #: Already applied, already buffered, or ``seq`` already passed: skip, delete, count.
    DUPLICATE = "DUPLICATE"
    #: In the reorder buffer, committed with the state (never held in the queue): delete the record.
    BUFFERED = "BUFFERED"
    #: Report the record failed so it comes back; :class:`RetryReason` says why.
    RETRY = "RETRY"
    #: The job is dead (``dead`` says why): send it to the DLQ, then delete it.
    DEAD = "DEAD"
    #: A job that died before, delivered again: never applied; send it to the DLQ. ``dead`` is set when
    #: it is the message the job died in (sent as it died), else it is a copy (``COPY_OF_DEAD_JOB``).
    DEAD_COPY = "DEAD_COPY"
    #: The group is parked: keep the job, in order, outside the queue (``dead`` set on the dead one).
    KEEP = "KEEP"


class RetryReason(enum.Enum):
    """Why a job is ``RETRY``; ``JobResult.attempt`` is the attempt to base the backoff on."""

    #: Its own transition raised a transient error (``attempt`` is its count, below ``max_attempts``).
    FAILED = "FAILED"
    #: An earlier job of the group stopped the group (``blocked_by``, with its ``attempt``).
    BLOCKED = "BLOCKED"
    #: ``GapPolicy.WAIT``: the reorder buffer cannot take it (full, or the item would pass its size).
    BUFFER_FULL = "BUFFER_FULL"
    #: Its effect is committed, but a buffered job (``blocked_by``) failed and no other record of the
    #: batch would bring the group back: this one is kept to do it, and is a duplicate when it returns.
    CARRIER = "CARRIER"

    @property
    def stops_group(self) -> bool:
        """Whether a RETRY for this reason means the group stopped (``BUFFER_FULL`` does not stop it).

        Examples
        --------
        >>> [reason.value for reason in RetryReason if reason.stops_group]
        ['FAILED', 'BLOCKED', 'CARRIER']
        """
        return self is not RetryReason.BUFFER_FULL


#: The item size of a group state as DynamoDB counts it (the store's ``item_size``).
SizeFunction = Callable[["GroupState"], int]

#: Item bytes kept free for bookkeeping that grows without a size check. With uuid job ids: 100 dead ids
#: (~4 KB), their entries (at most ``MAX_DEAD_ENTRIES_BYTES``, 16 KB), 100 attempt counts (~4.5 KB), 20
#: skipped ranges (~1 KB) and the parked entry (~1.5 KB with a 1024-character error): about 27 KB.
BOOKKEEPING_RESERVE_BYTES = 32 * 1024


@dataclass(frozen=True)
class BatchSettings:
    """The queue's state-mode settings (see ``apply_batch`` for each); checked once, when built."""

    max_attempts: int
    park_on_dead: bool
    reorder_limit: int = DEFAULT_REORDER_LIMIT
    gap_policy: GapPolicy = GapPolicy.WAIT
    gap_timeout_ms: int = DEFAULT_GAP_TIMEOUT_SECONDS * 1000
    first_seq: int = DEFAULT_FIRST_SEQ
    remember_job_ids: int = DEFAULT_REMEMBERED_JOB_IDS
    size_of: SizeFunction | None = None
    max_item_bytes: int = MAX_ITEM_BYTES

    def __post_init__(self) -> None:
        # The limits are the settings spec's rows: the ones the construct and RuntimeConfig check.
        gap_rule = SETTINGS["gap_timeout"].violation(self.gap_timeout_ms / 1000)
        checks: tuple[tuple[str, int, str | None], ...] = (
            ("max_attempts", self.max_attempts, SETTINGS["max_attempts"].violation(self.max_attempts)),
            (
                "remember_job_ids",
                self.remember_job_ids,
                SETTINGS["remember_job_ids"].violation(self.remember_job_ids),
            ),
            ("reorder_limit", self.reorder_limit, SETTINGS["reorder_limit"].violation(self.reorder_limit)),
            ("gap_timeout_ms", self.gap_timeout_ms, f"{gap_rule} of seconds, x 1000" if gap_rule else None),
            ("first_seq", self.first_seq, SETTINGS["first_seq"].violation(self.first_seq)),
            (
                "max_item_bytes",
                self.max_item_bytes,
                None
                if self.max_item_bytes > BOOKKEEPING_RESERVE_BYTES
                else f"above {BOOKKEEPING_RESERVE_BYTES}",
            ),
        )
        problems = [f"{name}={value} must be {rule}" for name, value, rule in checks if rule is not None]
        if problems:
            raise ValueError("invalid state-mode settings: " + "; ".join(problems))

    @property
    def size_limit(self) -> int:
        """What ``size_of`` is checked against: the item limit less the bookkeeping's reserve."""
        return self.max_item_bytes - BOOKKEEPING_RESERVE_BYTES


@dataclass(frozen=True)
class BufferedJob:
    """A job waiting in the reorder buffer for its ``seq`` to come next; its record was deleted.

    Attributes
    ----------
    seq : int
        The job's sequence number.
    message_id : str
        The ``messageId`` of the delivery that was buffered.
    buffered_at_ms : int
        When it was buffered (epoch ms): the open gap's age is measured from the oldest entry.
    body : dict
        The job's whole body, from which the job is rebuilt when it is applied.
    body_text : str or None
        The body exactly as it was sent, when that differs from :func:`compact_json` of ``body``
        (``None`` otherwise, and for a job buffered by a runtime that kept the decoded body only).
        :attr:`text` is what goes to the dead-letter queue.
    """

    seq: int
    message_id: str
    buffered_at_ms: int
    body: dict[str, Any]
    body_text: str | None = field(default=None, compare=False)

    @property
    def text(self) -> str:
        """The body as it was sent, byte for byte (the compact encoding when only that is known)."""
        return self.body_text if self.body_text is not None else compact_json(self.body)

    @property
    def job_id(self) -> str:
        """The body's ``jobId``."""
        return str(self.body.get("jobId", ""))

    @property
    def job_type(self) -> str:
        """The body's ``type``."""
        return str(self.body.get("type", ""))


@dataclass(frozen=True)
class SkippedRange:
    """Sequence numbers ``first`` to ``last`` (inclusive) given up by ``GapPolicy.SKIP_GAP``."""

    first: int
    last: int
    at_ms: int

    @property
    def count(self) -> int:
        """How many ``seq`` values the range gave up."""
        return self.last - self.first + 1


@dataclass(frozen=True)
class Bookkeeping:
    """The runtime's record of a group, committed in the same item and write as the state.

    Attributes
    ----------
    applied : tuple of str
        Keys (:func:`job_key`) of the last applied jobs *without* ``seq``, oldest first (bounded by
        count; jobs with ``seq`` are recognised by ``last_seq`` forever and are not listed). Stored as
        ``JOB_KEY_BYTES`` bytes each: 800 bytes for the default 100, whatever the ids' length.
    last_seq : int or None
        The last ``seq`` applied, skipped or consumed by a dead job; ``None`` before any.
    buffer : tuple of BufferedJob
        The reorder buffer, by ``seq``.
    attempts : Mapping[str, int]
        Failed runs so far per job id, for jobs not yet applied or dead.
    dead : tuple of str
        Ids of the last dead jobs, oldest first (bounded by count): their copies are ``DEAD_COPY``.
    dead_entries : tuple of DeadJob
        Why the newest of those died, oldest first, one per job id (bounded by their encoded size,
        ``MAX_DEAD_ENTRIES_BYTES``; see :func:`remember_dead_entry`): a redelivery of the message a job
        died in is dead-lettered with its entry, as it died. A dead id without an entry (pushed out,
        or written by a runtime that kept ids only) has every delivery sent as a copy.
    parked : DeadJob or None
        Set when the group is parked at a dead job.
    skipped : tuple of SkippedRange
        The last ranges given up by ``SKIP_GAP``, oldest first (bounded).
    gap_since_ms : int or None
        When the open sequence gap opened (the oldest buffered job's time), ``None`` without a gap.
    owed : tuple of (BufferedJob, DeadJob)
        Dead letters owed: buffered jobs that died (they have no record of their own) and were
        committed dead before their dead-letter message is known sent (at most one run's buffer:
        a run sends what is owed before anything else, or commits nothing).
    """

    applied: tuple[str, ...] = ()
    last_seq: int | None = None
    buffer: tuple[BufferedJob, ...] = ()
    attempts: Mapping[str, int] = field(default_factory=dict)
    dead: tuple[str, ...] = ()
    dead_entries: tuple[DeadJob, ...] = ()
    parked: DeadJob | None = None
    skipped: tuple[SkippedRange, ...] = ()
    gap_since_ms: int | None = None
    owed: tuple[tuple[BufferedJob, DeadJob], ...] = ()


def job_key(job_id: str) -> str:
    """The remembered form of a job id: the first ``JOB_KEY_BYTES`` bytes of its SHA-256, in hex.

    Fixed-size whatever the id (a uuid is 36 characters): the bookkeeping's remembered ids take
    ``JOB_KEY_BYTES`` bytes each in the item. Two ids share a key with probability 2**-64.

    Examples
    --------
    >>> job_key("j1") == job_key("j1") != job_key("j2"), len(job_key("j1"))
    (True, 16)
    """
    return hashlib.sha256(job_id.encode("utf-8")).digest()[:JOB_KEY_BYTES].hex()


@dataclass(frozen=True)
class GroupState:
    """A group's committed state: the user's state, its version and the runtime's bookkeeping.

    Attributes
    ----------
    group : str
        The ``MessageGroupId``.
    state : dict or None
        The user's state; ``None`` until a transition was applied.
    version : int
        The version this was read at; 0 when the group has no item yet. Every write of the item
        (a commit, a run marker, the clearing of dead letters owed) writes ``version + 1`` on
        condition that the item is still at ``version``: a redelivered batch adds two.
    book : Bookkeeping
        The runtime's record.
    """

    group: str
    state: dict[str, Any] | None = None
    version: int = 0
    book: Bookkeeping = field(default_factory=Bookkeeping)
    #: The group's cancelled jobs (:mod:`~constructs_fifo.runtime.state.storage.cancels`), oldest first:
    #: a cancelled job is never applied; when it arrives it closes its place (its ``seq``, or its id)
    #: with the state unchanged, and its line says ``CANCELLED``.
    cancelled: tuple[CancelEntry, ...] = ()
    #: The group's supersede markers (:mod:`~constructs_fifo.runtime.state.storage.supersede`): per key,
    #: the newest job marked and not applied yet; an older job of the key arriving is not applied
    #: (``SUPERSEDED``: cancelled by the runtime, its place closed as a cancelled job's).
    newest: dict[str, str] = field(default_factory=dict)

    @property
    def cancelled_ids(self) -> frozenset[str]:
        """The ids of :attr:`cancelled`."""
        return frozenset(entry.job_id for entry in self.cancelled)

    @property
    def parked(self) -> bool:
        """Whether the group is parked at a dead job."""
        return self.book.parked is not None


@dataclass(frozen=True)
class CancelEntry:
    """One cancelled job of a group: who cancelled it, why and when (the outcome shows them)."""

    job_id: str
    at_ms: int
    reason: str = ""
    by: str = ""


@dataclass(frozen=True)
class JobResult:
    """The outcome of one job of the batch.

    Attributes
    ----------
    job_id, message_id : str
        The job and its delivery.
    outcome : Outcome
        What was decided.
    reason : RetryReason or None
        Set when ``outcome`` is ``RETRY``.
    attempt : int or None
        For ``RETRY``: the attempt to base the backoff on (its own, or the blocking job's).
    blocked_by : str or None
        For ``BLOCKED`` and ``CARRIER``: the job id that stopped the group.
    dead : DeadJob or None
        For ``DEAD``, and for the ``KEEP`` of the job that parked the group. For a ``DEAD_COPY`` that
        is the very message the job died in (its dead-letter send failed, or its commit's delete was
        lost): the remembered entry, so it is dead-lettered as it died; ``None`` for a copy in another
        message (or a job whose entry is no longer remembered): it follows as ``COPY_OF_DEAD_JOB``.
    """

    job_id: str
    message_id: str
    outcome: Outcome
    reason: RetryReason | None = None
    attempt: int | None = None
    blocked_by: str | None = None
    dead: DeadJob | None = None

    @property
    def stops_group(self) -> bool:
        """Whether this is a RETRY that stopped its group (see :attr:`RetryReason.stops_group`)."""
        return self.outcome is Outcome.RETRY and self.reason is not None and self.reason.stops_group


@dataclass(frozen=True)
class BatchResult:
    """What the core returns for one group: :func:`~constructs_fifo.runtime.state.core.apply.apply_batch`
    for its jobs, :func:`~constructs_fifo.runtime.state.core.apply.run_group` for its records (the same type:
    a run of records is its steps' results folded with :meth:`then`).

    Attributes
    ----------
    group_state : GroupState
        The state to commit (its ``version`` is still the one read: the commit writes ``version + 1``).
    results : tuple of JobResult
        One per input job (or record), in input order.
    applied : tuple of str
        Job ids applied in this batch, in the order their transitions were folded.
    from_buffer : tuple of BufferedJob
        Those of ``applied`` that had been buffered by an earlier batch (no record in this batch).
    dead_buffered : tuple of (BufferedJob, DeadJob)
        Buffered jobs of earlier batches that died here (``park_on_dead=False``): send each to the
        DLQ from its body, since it has no record in this batch.
    skipped : tuple of SkippedRange
        Ranges ``SKIP_GAP`` gave up in this batch.
    gap_open_ms : int or None
        How long the open sequence gap has been open at the end of the batch (for the gap metric).
    gap_timed_out : bool
        Whether that gap is older than ``gap_timeout_ms`` (under ``WAIT``: what the alarm is for).
    changed : bool
        Whether ``group_state`` differs from the state read; when not, there is nothing to write.
    jobs : tuple of (Job or None)
        The job of each result (``None``: a malformed record).
    parked_by : DeadJob or None
        The dead job that parked the group in this batch (``None`` when it did not park here).
    stalled_on : tuple of (str, int) or None
        The job id and attempt of a buffered job that failed and waits at the head of the buffer at
        the end (see :func:`~constructs_fifo.runtime.state.core.engine.stalled_on`).
    """

    group_state: GroupState
    results: tuple[JobResult, ...]
    applied: tuple[str, ...] = ()
    from_buffer: tuple[BufferedJob, ...] = ()
    dead_buffered: tuple[tuple[BufferedJob, DeadJob], ...] = ()
    skipped: tuple[SkippedRange, ...] = ()
    gap_open_ms: int | None = None
    gap_timed_out: bool = False
    changed: bool = False
    jobs: tuple[Job | None, ...] = ()
    parked_by: DeadJob | None = None
    stalled_on: tuple[str, int] | None = None

    @property
    def record_job_ids(self) -> frozenset[str]:
        """The job ids of the results (a buffered job applied here is not one of them)."""
        return frozenset(result.job_id for result in self.results)

    def then(self, later: BatchResult) -> BatchResult:
        """This result followed by ``later``, a result of the same group that started from this one's
        state: its state and gap, both results' records, effects and changes."""
        return replace(
            later,
            results=self.results + later.results,
            applied=self.applied + later.applied,
            from_buffer=self.from_buffer + later.from_buffer,
            dead_buffered=self.dead_buffered + later.dead_buffered,
            skipped=self.skipped + later.skipped,
            changed=self.changed or later.changed,
            jobs=self.jobs + later.jobs,
            parked_by=self.parked_by or later.parked_by,
        )


def remember_dead_entry(
    entries: tuple[DeadJob, ...], entry: DeadJob, *, dead_ids: tuple[str, ...]
) -> tuple[DeadJob, ...]:
    """``entries`` with ``entry`` newest, keeping one per job id and only ids still in ``dead_ids``.

    The oldest entries are dropped while the encoded list is over ``MAX_DEAD_ENTRIES_BYTES`` (an
    entry over it alone is not kept): the ids stay in ``dead``, so only the entries' triage is lost.
    """
    kept = [e for e in entries if e.job_id != entry.job_id and e.job_id in dead_ids]
    if entry.job_id in dead_ids:
        kept.append(entry)
    sizes = [_encoded_bytes(encode_dead_job(e)) + 1 for e in kept]  # + 1: the comma between
    total = sum(sizes)
    start = 0
    while start < len(kept) and total > MAX_DEAD_ENTRIES_BYTES:
        total -= sizes[start]
        start += 1
    return tuple(kept[start:])


def _encoded_bytes(value: object) -> int:
    return len(compact_json(value).encode("utf-8"))
