"""A job's status and outcome, and what the tables' items mean as one (pure: no I/O).

:class:`~constructs_fifo.client.outcomes.JobOutcomes` reads the items and returns what
:func:`claim_outcome` (claim mode) and :func:`state_outcome` (state mode) make of them; that module's
docstring says what each status can and cannot tell apart.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.claim.result import result_not_stored, stored_result
from constructs_fifo.runtime.constants import (
    ATTR_ATTEMPTS,
    ATTR_DEAD_REASON,
    ATTR_EARLIER_ATTEMPTS,
    ATTR_ERROR,
    ATTR_ERROR_TYPE,
    ATTR_GROUP,
    ATTR_LEASE_EXPIRES_AT,
    ATTR_PERMANENT,
    ATTR_STATUS,
    ATTR_UPDATED_AT,
    STATUS_DEAD,
    STATUS_FAILED,
    STATUS_IN_FLIGHT,
    STATUS_SUCCEEDED,
    DeadReason,
)
from constructs_fifo.runtime.dead_jobs.parking import CANCELLING, HELD, RESUMING
from constructs_fifo.runtime.payloads.pointer import ATTR_RESULT_POINTER
from constructs_fifo.runtime.steering.names import (
    ATTR_CANCEL_REASON,
    ATTR_CANCELLED_BY,
    ATTR_CANCELLED_RUNNING,
    STATUS_CANCELLED,
    SUPERSEDED_BY,
    SUPERSEDED_REASON_PREFIX,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.client.state_reader import JobSighting
    from constructs_fifo.runtime.dead_jobs.parking import ParkHeader

__all__ = [
    "SETTLED_STATUSES",
    "JobOutcome",
    "JobStatus",
    "claim_outcome",
    "ends_wait",
    "is_dead_claim",
    "state_outcome",
]


class JobStatus(enum.StrEnum):
    """A job's status as :class:`JobOutcomes` reads it (the module docstring says what each means)."""

    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    DEAD = "dead"
    PARKED = "parked"
    CANCELLED = "cancelled"
    SUPERSEDED = "superseded"
    HELD = "held"
    UNKNOWN = "unknown"

    @property
    def settled(self) -> bool:
        """Whether the job is settled (:data:`SETTLED_STATUSES`): a default wait ends there."""
        return self in SETTLED_STATUSES


#: The statuses a job ends in: it ran to success, it died, it was cancelled, or a newer job of its
#: supersede key made it pointless (docs/steering.md). ``parked`` and ``held`` are not: such a job has
#: not run, and runs when an operator resumes or releases its group, so a default wait goes on through it.
SETTLED_STATUSES: frozenset[JobStatus] = frozenset(
    {JobStatus.SUCCEEDED, JobStatus.DEAD, JobStatus.CANCELLED, JobStatus.SUPERSEDED}
)


def ends_wait(status: JobStatus, *, stop_at_parked: bool = False) -> bool:
    """Whether a wait returns at ``status``: settled, or ``parked``/``held`` when the caller asked to stop
    there.

    Examples
    --------
    >>> ends_wait(JobStatus.PARKED), ends_wait(JobStatus.PARKED, stop_at_parked=True)
    (False, True)
    """
    return status.settled or (stop_at_parked and status in (JobStatus.PARKED, JobStatus.HELD))


@dataclass(frozen=True)
class JobOutcome:
    """What became of one job.

    Attributes
    ----------
    job_id, status:
        The job and its :class:`JobStatus`.
    group:
        Its group, when known (the claim's, or the one asked about).
    attempt:
        Runs started (claim mode), or the next run (state mode, after failed runs); 0 when unknown.
    earlier_attempts:
        Claim mode: runs the job used before an operator reset its DEAD claim (``groups resume``,
        ``claims reset``); ``attempt`` counts the runs since. 0 when never reset.
    lease_expires_at_ms:
        ``running`` in claim mode: the lease's end (epoch ms); ``None`` between attempts.
    lease_released:
        ``running`` in claim mode, its lease over: ``True`` when the worker released it (a stopping
        worker's release sets the lease to the moment it wrote, ``lease_expires_at == updated_at``),
        ``False`` when it ran out (a crash or a timeout: the lease was set ahead of that write);
        ``None`` otherwise.
    result:
        ``succeeded`` in claim mode: the job function's return value (``None`` when none is stored).
    result_pointer:
        ``succeeded`` with a result over 64 KiB (``large_payloads``): the pointer to it in the payload
        bucket, which :class:`~constructs_fifo.client.outcomes.JobOutcomes` reads into ``result``.
    result_not_stored:
        ``succeeded`` in claim mode: why the job's return value was not stored (not JSON, too large),
        ``None`` when it was (or the job returned ``None``): a dropped result is never silent.
    state_version:
        ``succeeded`` in state mode: a version of the group's state that includes the job.
    dead_reason, error_type, error:
        ``dead``: why (a ``DeadReason`` value), and the error; ``running``: the last failure's error.
    parked_behind, parked_group:
        ``parked``: the dead job its group is parked at, and the group; ``dead``: ``parked_group``
        when its group is parked at this job.
    updated_at_ms:
        When the claim was last written (claim mode; a cancelled job's: when it was cancelled).
    superseded_by:
        ``superseded``: the newer job of its group and supersede key that was sent after it.
    cancel_reason, cancelled_by, cancelled_while_running:
        ``cancelled``: why and who (as the canceller gave them), and, claim mode, whether an attempt was
        running at the cancel (its result was not recorded; its effect may have happened).
    detail:
        One sentence for a person: what the status means for this job.
    """

    job_id: str
    status: JobStatus
    group: str | None = None
    attempt: int = 0
    earlier_attempts: int = 0
    lease_expires_at_ms: int | None = None
    lease_released: bool | None = None
    result: Any = None
    result_not_stored: str | None = None
    result_pointer: str | None = field(default=None, repr=False)
    state_version: int | None = None
    dead_reason: str | None = None
    error_type: str | None = None
    error: str | None = None
    parked_behind: str | None = None
    parked_group: str | None = None
    updated_at_ms: int | None = None
    cancel_reason: str | None = None
    cancelled_by: str | None = None
    cancelled_while_running: bool | None = None
    superseded_by: str | None = None
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        """The outcome as plain values (``status`` as its string; ``result_pointer`` left out: ``result``
        holds what it points to once read)."""
        values = {**asdict(self), "status": self.status.value}
        values.pop("result_pointer")
        return values


def claim_outcome(
    job_id: str,
    item: Mapping[str, Any] | None,
    header: ParkHeader | None,
    *,
    group: str | None,
    now_ms: int,
    sent: bool,
) -> JobOutcome:
    """The outcome a decoded claim item means (``None``: no claim), with its group's park header.

    ``header`` is the header of ``group`` when there is no claim, of the claim's group when it is DEAD
    (``None`` otherwise, or when the queue has no group table).
    """
    if item is None:
        if header is not None and group:
            if header.dead_job_id == job_id:  # its claim is gone: reset for a retry, or expired
                return _from_header(job_id, group, header)
            return _parked(job_id, group, header)
        return _nothing(job_id, group, sent=sent)
    status = item.get(ATTR_STATUS)
    found = JobOutcome(
        job_id,
        JobStatus.UNKNOWN,
        group=str(item.get(ATTR_GROUP) or group or "") or None,
        attempt=_int(item.get(ATTR_ATTEMPTS)) or 0,
        earlier_attempts=_int(item.get(ATTR_EARLIER_ATTEMPTS)) or 0,
        updated_at_ms=_int(item.get(ATTR_UPDATED_AT)),
    )
    if status == STATUS_SUCCEEDED:
        why = result_not_stored(dict(item))
        return replace(
            found,
            status=JobStatus.SUCCEEDED,
            result=stored_result(dict(item)),
            result_not_stored=why,
            result_pointer=_text(item.get(ATTR_RESULT_POINTER)),
            detail="the job succeeded" + (f"; its return value was not stored: {why}" if why else ""),
        )
    if status == STATUS_CANCELLED and item.get(ATTR_CANCELLED_BY) == SUPERSEDED_BY:
        reason = str(item.get(ATTR_CANCEL_REASON) or "")
        newer = reason.removeprefix(SUPERSEDED_REASON_PREFIX) or None
        return replace(
            found,
            status=JobStatus.SUPERSEDED,
            superseded_by=newer,
            cancel_reason=reason or None,
            cancelled_by=SUPERSEDED_BY,
            cancelled_while_running=item.get(ATTR_CANCELLED_RUNNING) is True,
            detail=f"superseded: job {newer!r} of its group and key was sent after it; it will not run",
        )
    if status == STATUS_CANCELLED:
        running = item.get(ATTR_CANCELLED_RUNNING) is True
        return replace(
            found,
            status=JobStatus.CANCELLED,
            cancel_reason=_text(item.get(ATTR_CANCEL_REASON)),
            cancelled_by=_text(item.get(ATTR_CANCELLED_BY)),
            cancelled_while_running=running,
            detail="cancelled while an attempt ran: its result was not recorded, its effect may have happened"
            if running
            else "cancelled: it will not run",
        )
    if is_dead_claim(item):
        parked = header is not None and header.dead_job_id == job_id
        return replace(
            found,
            status=JobStatus.DEAD,
            dead_reason=str(item.get(ATTR_DEAD_REASON) or DeadReason.PERMANENT.value),
            error_type=_text(item.get(ATTR_ERROR_TYPE)),
            error=_text(item.get(ATTR_ERROR)),
            parked_group=found.group if parked else None,
            detail="the job is dead"
            + (f"; its group {found.group!r} is parked at it (resume it to go on)" if parked else ""),
        )
    if status == STATUS_IN_FLIGHT:
        return _in_flight(found, _int(item.get(ATTR_LEASE_EXPIRES_AT)), now_ms=now_ms)
    if status == STATUS_FAILED and found.attempt == 0 and found.earlier_attempts:
        return replace(
            found,
            status=JobStatus.PENDING,
            error_type=_text(item.get(ATTR_ERROR_TYPE)),
            error=_text(item.get(ATTR_ERROR)),
            detail=f"an operator reset it after {found.earlier_attempts} attempt(s) (its last error is "
            "kept): its next delivery runs it again",
        )
    if status == STATUS_FAILED:
        return replace(
            found,
            status=JobStatus.RUNNING,
            error_type=_text(item.get(ATTR_ERROR_TYPE)),
            error=_text(item.get(ATTR_ERROR)),
            detail=f"attempt {found.attempt} failed; it is retried after its backoff",
        )
    return replace(found, detail=f"the claim's status {status!r} is not one this client knows")


def _in_flight(found: JobOutcome, lease: int | None, *, now_ms: int) -> JobOutcome:
    """An IN_FLIGHT claim: a live lease, a lease its worker released, or one that ran out.

    A release (a stopping worker's ``renew(lease_ms=0)``) writes the lease and ``updated_at`` with one
    clock reading, so the lease ends when it was written; a claim or a renewal sets it ahead of the
    write. A lease at or before the claim's last write was released, whatever the clock says now.
    """
    running = replace(found, status=JobStatus.RUNNING, lease_expires_at_ms=lease)
    if lease is not None and found.updated_at_ms is not None and lease <= found.updated_at_ms:
        return replace(
            running,
            lease_released=True,
            detail=f"attempt {found.attempt} was stopped: its worker released the lease (a worker "
            "stopping, or a run past its bound); the next delivery retries it",
        )
    if lease is not None and lease >= now_ms:
        return replace(running, detail=f"attempt {found.attempt} is running")
    return replace(
        running,
        lease_released=False,
        detail=f"attempt {found.attempt}'s lease expired (its worker crashed or timed out); "
        "the next delivery retries it",
    )


def is_dead_claim(item: Mapping[str, Any]) -> bool:
    """Whether a decoded claim item says the job is dead (a FAILED ``permanent`` item: runtime 0.1)."""
    status = item.get(ATTR_STATUS)
    return status == STATUS_DEAD or (status == STATUS_FAILED and item.get(ATTR_PERMANENT) is True)


def state_outcome(seen: JobSighting, *, sent: bool) -> JobOutcome:
    """The outcome a state-mode sighting (:meth:`GroupStateReader.find_job`) means."""
    found = JobOutcome(seen.job_id, JobStatus.UNKNOWN, group=seen.group)
    if seen.cancelled_at_ms is not None and seen.cancelled_by == SUPERSEDED_BY:
        newer = (seen.cancel_reason or "").removeprefix(SUPERSEDED_REASON_PREFIX) or None
        return replace(
            found,
            status=JobStatus.SUPERSEDED,
            updated_at_ms=seen.cancelled_at_ms,
            superseded_by=newer,
            cancel_reason=seen.cancel_reason,
            cancelled_by=SUPERSEDED_BY,
            cancelled_while_running=False,
            detail=f"superseded: job {newer!r} of its group and key was sent after it; it is never applied",
        )
    if seen.cancelled_at_ms is not None:
        return replace(
            found,
            status=JobStatus.CANCELLED,
            updated_at_ms=seen.cancelled_at_ms,
            cancel_reason=seen.cancel_reason,
            cancelled_by=seen.cancelled_by,
            cancelled_while_running=False,
            detail="cancelled: it is never applied",
        )
    if seen.applied:
        return replace(
            found,
            status=JobStatus.SUCCEEDED,
            state_version=seen.version,
            detail=f"applied: state version {seen.version} includes it",
        )
    if seen.dead_reason is not None:
        parked = seen.parked_at_job_id == seen.job_id
        return replace(
            found,
            status=JobStatus.DEAD,
            dead_reason=seen.dead_reason or None,
            error_type=seen.dead_error_type,
            error=seen.dead_error,
            parked_group=seen.group if parked else None,
            detail="the job is dead" + ("; its group is parked at it (resume it to go on)" if parked else ""),
        )
    if seen.seq_given_up:
        return replace(found, detail="its seq was given up by the SKIP_GAP policy: it will never be applied")
    if seen.buffered:
        return replace(
            found, status=JobStatus.PENDING, detail="buffered: it waits for an earlier seq of its group"
        )
    if seen.park_status is not None:
        if seen.park_status == HELD:
            return _held(seen.job_id, seen.group)
        if seen.park_status == RESUMING:
            return replace(found, status=JobStatus.PENDING, detail="its group is resuming: kept jobs replay")
        return replace(
            found,
            status=JobStatus.PARKED,
            parked_behind=seen.parked_at_job_id,
            parked_group=seen.group,
            detail=f"its group is parked at job {seen.parked_at_job_id!r}; resume the group to go on",
        )
    if seen.failed_runs:
        return replace(
            found,
            status=JobStatus.RUNNING,
            attempt=seen.failed_runs + 1,
            detail=f"{seen.failed_runs} run(s) failed; it is retried after its backoff",
        )
    return _nothing(seen.job_id, seen.group, sent=sent)


def _parked(job_id: str, group: str, header: ParkHeader) -> JobOutcome:
    if header.status == HELD:
        return _held(job_id, group)
    if header.status == RESUMING:
        return JobOutcome(
            job_id, JobStatus.PENDING, group=group, detail="its group is resuming: kept jobs replay in order"
        )
    if header.status == CANCELLING:
        return JobOutcome(
            job_id,
            JobStatus.PENDING,
            group=group,
            detail="its group's queued jobs are being cancelled: a job sent before the cancel will read "
            "cancelled when it arrives, one sent after runs",
        )
    return JobOutcome(
        job_id,
        JobStatus.PARKED,
        group=group,
        parked_behind=header.dead_job_id,
        parked_group=group,
        detail=f"its group is parked at job {header.dead_job_id!r}; resume the group to go on",
    )


def _held(job_id: str, group: str) -> JobOutcome:
    return JobOutcome(
        job_id,
        JobStatus.HELD,
        group=group,
        detail="its group is held: nothing of it starts until it is released (groups release)",
    )


def _from_header(job_id: str, group: str, header: ParkHeader) -> JobOutcome:
    if header.status == RESUMING:
        return JobOutcome(
            job_id, JobStatus.PENDING, group=group, detail="its group is resuming: it is retried first"
        )
    dead = header.dead
    return JobOutcome(
        job_id,
        JobStatus.DEAD,
        group=group,
        attempt=dead.attempts,
        dead_reason=dead.reason.value,
        error_type=dead.error_type,
        error=dead.error,
        parked_group=group,
        detail="the job is dead; its group is parked at it (resume it to go on)",
    )


def _nothing(job_id: str, group: str | None, *, sent: bool) -> JobOutcome:
    if sent:
        return JobOutcome(job_id, JobStatus.PENDING, group=group, detail="sent; not taken yet")
    return JobOutcome(
        job_id,
        JobStatus.UNKNOWN,
        group=group,
        detail="nothing recorded: not taken yet, never sent (with this id and group), or expired",
    )


def _int(value: object) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _text(value: object) -> str | None:
    return str(value) if value not in (None, "") else None
