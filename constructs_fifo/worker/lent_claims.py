"""The claim store of a worker's slot, which lends each claim it takes to the slot's heartbeat.

Beside :mod:`constructs_fifo.worker.heartbeat` (the heartbeat renews what this store lends it, and
refuses the writes of a run it found stale or stopped); the run gate is
:mod:`constructs_fifo.worker.isolation`'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.claim.store import Claim, ClaimOutcome, ClaimStore
from constructs_fifo.worker.claims import isolate

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.constants import DeadReason
    from constructs_fifo.runtime.job import Job
    from constructs_fifo.worker.heartbeat import WorkerHeartbeat

__all__ = ["HeartbeatClaims"]


class HeartbeatClaims(ClaimStore):
    """The claim store of a worker's slot: lends each claim it takes to the slot's heartbeat.

    A claim is taken with the heartbeat's lease (not the run's whole bound), so a worker that dies
    leaves a lease that runs out within one visibility timeout, and the next claim sees it. The writes
    of a stale or stopped run are refused here (``False``: the runner reports the record ``FENCED``
    and retries it).

    With the heartbeat's ``gate`` (a worker of several slots, :mod:`constructs_fifo.worker.isolation`)
    its claims are ``shared`` (a lease that runs out is not counted: the crash may be a slot-mate's),
    each run enters the gate before the job's function is called and leaves it when its claim is
    written, and a job whose last run's lease ran out runs alone, its claim no longer ``shared`` (its
    next crash is its own).
    """

    def __init__(self, *args: Any, heartbeat: WorkerHeartbeat, **kwargs: Any) -> None:
        super().__init__(*args, shared_runs=heartbeat.gate is not None, **kwargs)
        self.heartbeat = heartbeat
        heartbeat.claims = self
        heartbeat.gate_leave = self.gate_leave
        self._gate = heartbeat.gate
        self._entered: bool | None = None  # in the gate: alone (True) or shared (False)

    def claim(self, job: Job, *, lease_ms: int) -> Claim:
        claim = super().claim(job, lease_ms=min(lease_ms, self.heartbeat.lease_ms))
        if claim.outcome is not ClaimOutcome.ACQUIRED or claim.owner is None:
            return claim
        self.heartbeat.job_started(job.id, claim.owner, fence=claim.fence)
        if self._gate is None:
            return claim
        alone = claim.after_crash
        self._gate.enter(alone=alone)  # may wait for the other slots' runs: the heartbeat renews the lease
        self._entered = alone
        self.heartbeat.job_started(job.id, claim.owner)  # the run's own time starts now
        if self.heartbeat.stale() or (alone and not isolate(self, job.id, claim.owner)):
            # the lease was lost while waiting (or the worker stopped): not run here, retried
            self.gate_leave()
            self.heartbeat.job_ended(job.id)
            return Claim(ClaimOutcome.CONFLICT, job.id, attempt=claim.attempt)
        return claim

    def gate_leave(self) -> None:
        """The slot's run is over (its claim written, or its batch ended): let the gate admit others."""
        entered, self._entered = self._entered, None
        if self._gate is not None and entered is not None:
            self._gate.leave(alone=entered)

    def complete(
        self,
        job_id: str,
        owner: str,
        *,
        result_json: str | None = None,
        result_not_stored: str | None = None,
        result_pointer: str | None = None,
    ) -> bool:
        try:
            with self.heartbeat.job_ending(job_id, owner) as allowed:
                return allowed and super().complete(
                    job_id,
                    owner,
                    result_json=result_json,
                    result_not_stored=result_not_stored,
                    result_pointer=result_pointer,
                )
        finally:
            self.gate_leave()

    def fail(self, job_id: str, owner: str, *, error: str, error_type: str) -> bool:
        try:
            with self.heartbeat.job_ending(job_id, owner) as allowed:
                return allowed and super().fail(job_id, owner, error=error, error_type=error_type)
        finally:
            self.gate_leave()

    def mark_dead(self, job_id: str, owner: str, *, reason: DeadReason, error: str, error_type: str) -> bool:
        try:
            with self.heartbeat.job_ending(job_id, owner) as allowed:
                return allowed and super().mark_dead(
                    job_id, owner, reason=reason, error=error, error_type=error_type
                )
        finally:
            self.gate_leave()
