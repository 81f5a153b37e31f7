"""Claim mode's invariants, checked on a settled world against what was sent (each returns violations).

- **No overlap.** Two runs of one group's jobs overlap in time only when, as the later one started,
  one of their workers was past its deadline (its lease had expired: a stale worker).
- **Nothing runs after SUCCEEDED.** No run of a job starts after its claim was seen SUCCEEDED.
- **Runs again only in the documented window.** At most one run of a job is committed (its worker
  wrote SUCCEEDED after it); every other run whose side effect happened is explained by its worker
  crashing after it, a fault on that worker's SUCCEEDED write, or that write being refused after the
  worker's lease expired.
- **In order.** A group's job starts only after the job sent before it (by ``seq`` in state mode;
  here: send order) was finished: committed, declared dead, or cancelled.
- **Dead only because it itself died.** Every DEAD claim write is for a permanent job, or a job
  whose claim was taken ``max_attempts`` times since its last reset; every dead-letter message is a
  job that died (or a copy of one), with the reason its kind gives.
- **Nothing lost.** Every job ends SUCCEEDED after a run that completed, or in the dead-letter queue
  (under PARK, after operators resumed every group: only the malformed jobs they skipped), or
  CANCELLED (steered: :mod:`.steering_invariants`); and while groups are still parked, every job is
  SUCCEEDED, CANCELLED, dead-lettered or kept in its group (:func:`while_parked`).
"""

from __future__ import annotations

import itertools
from collections import defaultdict

from constructs_fifo.runtime.constants import DeadJobPolicy, DeadReason

from .claim_world import NO_CLAIM, ClaimWorld
from .faults import Crash, Fault
from .history import History, Run
from .invariants import common
from .world import CLAIMS

SUCCEEDED = "SUCCEEDED"
DEAD = "DEAD"
#: A job an operator cancelled (or a newer one of its key superseded): finished with, never run again.
CANCELLED = "CANCELLED"


def check(world: ClaimWorld) -> list[str]:
    """Every violation of the module's invariants in ``world`` (settled, parked groups resumed)."""
    history = world.history
    return [
        *common(world),
        *overlaps(history),
        *runs_after_success(history),
        *repeats(world),
        *order(world),
        *deaths(world),
        *outcomes(world),
    ]


def while_parked(world: ClaimWorld) -> list[str]:
    """Settled, before operators resume: every job is SUCCEEDED, dead-lettered, or kept (PARK)."""
    if world.config.policy is not DeadJobPolicy.PARK:
        return []
    dead = {job_id for job_id, _ in world.dead_letters()}
    kept = {job_id for group in world.workload.groups() for job_id in world.kept_job_ids(group)}
    return [
        f"{spec.job_id} ({spec.kind}) is lost while groups are parked: not SUCCEEDED, dead-lettered or kept"
        for spec in world.workload.specs
        if spec.job_id not in dead | kept | world.cancelled_ids()
        and (spec.kind == "malformed" or world.claim_status(spec.job_id) not in (SUCCEEDED, CANCELLED))
    ]


def overlaps(history: History) -> list[str]:
    found: list[str] = []
    by_group: dict[str, list[Run]] = defaultdict(list)
    for run in history.runs:
        by_group[run.group].append(run)
    for runs in by_group.values():
        for index, first in enumerate(runs):
            for later in runs[index + 1 :]:
                if first.end is None or later.start > first.end:
                    continue
                if later.clock_at_start > first.deadline or later.clock_at_start > later.deadline:
                    continue
                found.append(
                    f"runs overlap under live leases: {first.job_id} by {first.worker} "
                    f"[{first.start}, {first.end}] and {later.job_id} by {later.worker} from {later.start}"
                )
    return found


def _first_status(history: History, job_id: str, status: str) -> int | None:
    return next(
        (seen.time for seen in history.claims if seen.job_id == job_id and seen.status == status), None
    )


def runs_after_success(history: History) -> list[str]:
    found: list[str] = []
    for job_id in dict.fromkeys(run.job_id for run in history.runs):
        succeeded = _first_status(history, job_id, SUCCEEDED)
        if succeeded is None:
            continue
        found += [
            f"{job_id} ran again by {run.worker} at {run.start}, after its SUCCEEDED write at {succeeded}"
            for run in history.runs_of(job_id)
            if run.start > succeeded
        ]
    return found


def repeats(world: ClaimWorld) -> list[str]:
    history = world.history
    found: list[str] = []
    errors = {worker.name: worker.error for worker in world.scheduler.workers}
    for job_id in dict.fromkeys(run.job_id for run in history.runs):
        completed = [run for run in history.runs_of(job_id) if run.completed]
        committed = [run for run in completed if _committed(history, run)]
        if len(committed) > 1:
            found.append(f"{job_id}'s side effect was committed {len(committed)} times: {committed}")
        for run in completed:
            if run in committed or isinstance(errors.get(run.worker), Crash):
                continue
            if world.commit_refused_locally(run) or world.claim_status(job_id) == CANCELLED:
                continue
            if _commit_faulted(history, run) or _commit_fenced_after_lease(history, run):
                continue
            found.append(
                f"{job_id}'s run by {run.worker} completed and was never committed, without a crash, a "
                "fault on its SUCCEEDED write or an expired lease to explain it"
            )
    return found


def _committed(history: History, run: Run) -> bool:
    end = run.end or 0
    return any(
        seen.worker == run.worker
        and seen.job_id == run.job_id
        and seen.status == SUCCEEDED
        and seen.time > end
        for seen in history.claims
    )


def _claim_key(params: dict[str, object]) -> str:
    key = params.get("Key")
    return str(key.get("id", {}).get("S", "")) if isinstance(key, dict) else ""


def _commit_faulted(history: History, run: Run) -> bool:
    return any(
        given.time > (run.end or 0)
        and given.point.label == "dynamodb.UpdateItem"
        and given.point.target == CLAIMS
        and _claim_key(given.point.params) == run.job_id
        and given.fault is not Fault.LOST_RESPONSE
        for given in history.faults_of(run.worker)
    )


def _commit_fenced_after_lease(history: History, run: Run) -> bool:
    return any(
        refused.worker == run.worker
        and refused.time > (run.end or 0)
        and refused.point.label == "dynamodb.UpdateItem"
        and _claim_key(refused.point.params) == run.job_id
        and refused.clock > run.deadline
        for refused in history.refused
    )


def order(world: ClaimWorld) -> list[str]:
    """Each job's first run starts after the job before it in its group was committed or dead."""
    history = world.history
    found: list[str] = []
    for group in world.workload.groups():
        jobs = [spec for spec in world.workload.jobs_of(group) if spec.kind != "malformed"]
        for before, after in itertools.pairwise(jobs):
            runs = history.runs_of(after.job_id)
            finished = [
                _first_status(history, before.job_id, status) for status in (SUCCEEDED, DEAD, CANCELLED)
            ]
            done = min((time for time in finished if time is not None), default=None)
            if not runs:
                continue
            if done is None or runs[0].start < done:
                found.append(
                    f"{after.job_id} started at {runs[0].start} before {before.job_id}, sent before it in "
                    f"{group}, was committed or dead (at {done})"
                )
    return found


def deaths(world: ClaimWorld) -> list[str]:
    """Every DEAD claim write and every dead-letter message is a job that died of its own runs."""
    history = world.history
    found: list[str] = []
    taken: dict[str, int] = defaultdict(int)
    for seen in history.claims:
        spec = world.workload.spec(seen.job_id)
        if seen.status == NO_CLAIM:
            taken[seen.job_id] = 0
        elif seen.status == "IN_FLIGHT" and seen.operation == "PutItem":
            taken[seen.job_id] += 1
        elif (
            seen.status == DEAD
            and seen.operation == "UpdateItem"
            and spec.kind != "permanent"
            and taken[seen.job_id] < world.config.max_attempts
        ):
            found.append(
                f"{seen.job_id} ({spec.kind}) declared dead after {taken[seen.job_id]} claims of its "
                f"own, fewer than max_attempts={world.config.max_attempts}"
            )
    dead_ids = {
        job_id for job_id, reason in world.dead_letters() if reason != DeadReason.COPY_OF_DEAD_JOB.value
    }
    for job_id, reason in world.dead_letters():
        spec = world.workload.spec(job_id)
        expected = {
            DeadReason.MALFORMED.value: spec.kind == "malformed",
            DeadReason.PERMANENT.value: spec.kind == "permanent",
            DeadReason.ATTEMPTS_EXHAUSTED.value: history.claims_taken[job_id] >= world.config.max_attempts,
            DeadReason.COPY_OF_DEAD_JOB.value: job_id in dead_ids,
        }
        if not expected.get(reason, False):
            found.append(f"{job_id} ({spec.kind}) is in the dead-letter queue for {reason}")
    return found


def outcomes(world: ClaimWorld) -> list[str]:
    """Nothing lost: each job SUCCEEDED after a completed run, or dead-lettered itself."""
    history = world.history
    found: list[str] = []
    dead = {job_id for job_id, reason in world.dead_letters() if reason != DeadReason.COPY_OF_DEAD_JOB.value}
    cancelled = world.cancelled_ids()  # steered: a malformed record before a live cancel's marker too
    for spec in world.workload.specs:
        if spec.kind == "malformed" and spec.job_id in cancelled and spec.job_id not in dead:
            continue
        applied = any(run.completed for run in history.runs_of(spec.job_id))
        succeeded = spec.kind != "malformed" and world.claim_status(spec.job_id) == SUCCEEDED
        if world.config.policy is DeadJobPolicy.PARK:
            should_die = spec.kind == "malformed"
        else:
            should_die = spec.must_die(
                world.config.max_attempts, crashes_count=True, shared_runs=world.config.slots > 1
            )
        if should_die and spec.job_id not in dead and world.claim_status(spec.job_id) != CANCELLED:
            found.append(f"{spec.job_id} ({spec.kind}) should have died and is not in the dead-letter queue")
        if spec.job_id in dead:
            continue
        if world.claim_status(spec.job_id) == CANCELLED:
            continue  # steered: steering_invariants says what a cancel promises
        if not (applied and succeeded):
            found.append(
                f"{spec.job_id} ({spec.kind}) is lost: neither applied and SUCCEEDED, nor dead-lettered"
            )
    return found
