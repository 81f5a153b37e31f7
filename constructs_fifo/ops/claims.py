"""``claims show``, ``claims release``, ``claims reset``: one job's claim (claim mode).

Through :class:`~constructs_fifo.runtime.claim.store.ClaimStore`, the runtime's own store, so the rules are
the runtime's:

* ``release`` ends an ``IN_FLIGHT`` claim whose lease expired (a crashed worker) as ``FAILED``, with
  the store's fenced write on the owner read: the next delivery retakes it and counts the attempt, as
  rule 2 of the claim table would once it noticed. A live lease is refused unless ``--force``: its
  worker may still be running, and a second run of a job with an outside effect is what claims exist
  to prevent. If the old worker does finish, its fenced ``SUCCEEDED`` still lands (same owner).
* ``reset`` resets a ``DEAD`` claim (:meth:`ClaimStore.reset`), nothing else: it becomes FAILED with
  no attempt used, its runs kept as ``earlier_attempts``, and the next copy of the job runs as
  attempt 1. Send it again (``dlq redrive --job J``) or resume its parked group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from constructs_fifo.ops.errors import OperationRefusedError
from constructs_fifo.ops.plan import Plan, command
from constructs_fifo.runtime.constants import STATUS_DEAD, STATUS_IN_FLIGHT

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.ops.target import OpsQueue

__all__ = ["RELEASED_ERROR_TYPE", "plan_release", "plan_reset", "show_claim"]

#: ``error_type`` a released claim carries (its ``error`` says who released it and why).
RELEASED_ERROR_TYPE = "ReleasedByOperator"


def show_claim(ops: OpsQueue, job: str) -> dict[str, Any]:
    """The claim item, decoded, with the lease's remaining time (negative: expired).

    Raises
    ------
    OperationError
        State mode (no claim table).
    OperationRefusedError
        The job has no claim.
    """
    store = ops.require_claim_mode("claims show", job=job)
    claim = store.get(job)
    if claim is None:
        raise OperationRefusedError(
            f"job {job!r} has no claim in {store.table_name!r}: it never ran, its claim "
            "expired (TTL), or it was reset",
            f"check the job id ({command('dlq', 'list')} shows the dead ones)",
        )
    lease = claim.get("lease_expires_at")
    remaining = None if not isinstance(lease, int | float) else round((lease - ops.now_ms()) / 1000, 1)
    return {"jobId": job, "table": store.table_name, "leaseRemainingSeconds": remaining, "claim": claim}


def plan_release(ops: OpsQueue, job: str, *, force: bool = False) -> Plan:
    """The steps of ``claims release`` (see the module docstring).

    Raises
    ------
    OperationRefusedError
        No claim, not IN_FLIGHT, or a live lease without ``force``.
    """
    shown = show_claim(ops, job)
    claim = shown["claim"]
    store = ops.require_claim_mode("claims release", job=job)
    status = claim.get("status")
    if status != STATUS_IN_FLIGHT:
        raise OperationRefusedError(
            f"job {job!r}'s claim is {status}, not IN_FLIGHT: there is no lease to release",
            f"a DEAD claim is reset with {command('claims', 'reset', job)}; FAILED is retried by itself",
        )
    remaining = shown["leaseRemainingSeconds"]
    live = remaining is not None and remaining >= 0
    if live and not force:
        raise OperationRefusedError(
            f"job {job!r}'s lease is live for {remaining} s more (owner "
            f"{claim.get('owner')}): its worker may "
            "still be running, and releasing it lets a second run start",
            "wait for the lease to end (it is the function's remaining time), or pass --force if you know "
            "the worker is gone",
        )
    owner = str(claim.get("owner", ""))
    plan = Plan(
        "claims release",
        argv=["claims", "release", job, *(["--force"] if force else [])],
        details={"jobId": job, "owner": owner, "leaseRemainingSeconds": remaining},
    )
    if live:
        plan.notes.append(f"the lease is live ({remaining} s left): --force releases it anyway")
    why = "released by an operator (constructs-fifo claims release" + (" --force" if live else "") + ")"

    def release() -> str:
        if not store.fail(job, owner, error=why, error_type=RELEASED_ERROR_TYPE):
            raise OperationRefusedError(
                f"job {job!r}'s claim changed while it was being released (another worker took it over)",
                f"look again: {command('claims', 'show', job)}",
            )
        attempts = claim.get("attempts", 0)
        return (
            f"released job {job}'s claim: FAILED, the next delivery retakes it (attempt {attempts} counted)"
        )

    plan.add(
        f"mark job {job}'s IN_FLIGHT claim FAILED (owner {owner}), so the next delivery retakes it", release
    )
    return plan


def plan_reset(ops: OpsQueue, job: str) -> Plan:
    """The steps of ``claims reset``: reset a DEAD claim (:meth:`ClaimStore.reset`).

    Raises
    ------
    OperationRefusedError
        No claim, or not DEAD.
    """
    claim = show_claim(ops, job)["claim"]
    store = ops.require_claim_mode("claims reset", job=job)
    if claim.get("status") != STATUS_DEAD:
        raise OperationRefusedError(
            f"job {job!r}'s claim is {claim.get('status')}, not DEAD: only a dead job is reset",
            f"an IN_FLIGHT claim with an expired lease is released with {command('claims', 'release', job)}",
        )
    plan = Plan("claims reset", argv=["claims", "reset", job], details={"jobId": job})
    plan.notes.append(
        f"the reset alone runs nothing: redrive the job ({command('dlq', 'redrive', '--job', job)}) or "
        "resume its group"
    )

    def reset() -> str:
        if not store.reset(job):
            raise OperationRefusedError(
                f"job {job!r}'s claim was no longer DEAD", f"look again: {command('claims', 'show', job)}"
            )
        return f"reset job {job}'s DEAD claim: its next copy runs"

    plan.add(f"delete job {job}'s DEAD claim (it may run again)", reset)
    return plan
