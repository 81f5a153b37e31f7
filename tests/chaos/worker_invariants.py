"""Container workers' invariants: claim mode's (:mod:`.claim_invariants`), and the crash rule of workers of
several slots (docs/architecture.md, *The container worker*), checked on a settled :class:`WorkerWorld`.

- **An alone run is alone.** A run whose claim was no longer ``shared`` when it started (it runs after
  a crash, isolated) shares its process with no other run: no run of another job in the same process
  overlaps it.
- **A shared run's crash costs no attempt.** Every retake of a claim whose lease ran out keeps its
  attempts when that claim was ``shared`` (the crash may have been a slot-mate's), and adds one when
  it was alone.
- **No healthy job dies for a slot-mate.** A job that never fails (kind ``ok``) is declared dead only
  after ``max_attempts`` of its claims ran out (crashes and stalls) not counting its runs that a crash
  cut short while another job ran beside it in its process: never for a slot-mate's crash. What ran
  beside what is read from the runs, not from the claims' ``shared`` marks.
- **A poison job dies of its own crashes.** A job that kills its worker on every run is declared dead
  with ``WorkerCrashedError`` (and, dead-lettered, reason ``ATTEMPTS_EXHAUSTED``), after at most
  ``max_attempts`` runs alone and one shared run.
"""

from __future__ import annotations

import itertools

from constructs_fifo.runtime.constants import DeadReason
from constructs_fifo.runtime.exceptions import WorkerCrashedError

from . import claim_invariants
from .faults import Crash
from .history import ClaimSeen, Run
from .worker_world import WorkerWorld
from .workload import POISON_TIMES

IN_FLIGHT = "IN_FLIGHT"
CRASHED = WorkerCrashedError.__name__


def check(world: WorkerWorld) -> list[str]:
    """Every violation of claim mode's invariants and of the module's."""
    return [
        *claim_invariants.check(world),
        *alone_runs(world),
        *retakes(world),
        *healthy_deaths(world),
        *poison_deaths(world),
    ]


def alone_runs(world: WorkerWorld) -> list[str]:
    found: list[str] = []
    runs = world.history.runs
    for run in runs:
        if not world.ran_alone(run):
            continue
        process = world.process_of.get(run.worker)
        for other in runs:
            if other is run or world.process_of.get(other.worker) is not process:
                continue
            if _overlap(run, other):
                found.append(
                    f"{run.job_id} ran alone in {process.name if process else '?'} from {run.start} beside "
                    f"{other.job_id} ({other.worker}, [{other.start}, {other.end}])"
                )
    return found


def retakes(world: WorkerWorld) -> list[str]:
    found: list[str] = []
    for job_id, seen in _claims_by_job(world).items():
        for before, after in itertools.pairwise(seen):
            if not (_is_take(after) and before.status == IN_FLIGHT):
                continue
            expected = before.attempts + (0 if before.shared else 1)
            if after.attempts != expected:
                found.append(
                    f"{job_id}'s claim was retaken after a {'shared' if before.shared else 'alone'} run's "
                    f"lease ran out with {after.attempts} attempts; it had {before.attempts}"
                )
    return found


def healthy_deaths(world: WorkerWorld) -> list[str]:
    found: list[str] = []
    attempts = world.config.max_attempts
    errors = {worker.name: worker.error for worker in world.scheduler.workers}
    for job_id, seen in _claims_by_job(world).items():
        if world.workload.spec(job_id).kind != "ok" or not any(s.status == "DEAD" for s in seen):
            continue
        ran_out = sum(
            1
            for before, after in itertools.pairwise(seen)
            if (_is_take(after) or after.status == "DEAD") and before.status == IN_FLIGHT
        )
        cut = [
            run
            for run in world.history.runs_of(job_id)
            if isinstance(errors.get(run.worker), Crash) and _beside(world, run)
        ]
        if ran_out - len(cut) < attempts:
            found.append(
                f"{job_id} (healthy) was declared dead after {ran_out} claims ran out, {len(cut)} of them "
                f"runs a crash cut short beside another job's: fewer than max_attempts={attempts} of its own"
            )
    return found


def poison_deaths(world: WorkerWorld) -> list[str]:
    found: list[str] = []
    attempts = world.config.max_attempts
    claims = _claims_by_job(world)
    for spec in world.workload.specs:
        if (
            spec.kind != "crash"
            or spec.times < POISON_TIMES
            or world.claim_status(spec.job_id) == "CANCELLED"
        ):
            continue  # not poison, or an operator cancelled it (steered)
        dead = [s for s in claims.get(spec.job_id, []) if s.status == "DEAD"]
        if not dead:
            found.append(f"poison {spec.job_id} was never declared dead")
            continue
        if dead[0].error_type != CRASHED:
            found.append(f"poison {spec.job_id} was declared dead with {dead[0].error_type}, not {CRASHED}")
        runs = [run for run in world.history.runs_of(spec.job_id) if run.start < dead[0].time]
        shared = [run for run in runs if not world.ran_alone(run)]
        if len(runs) > attempts + 1 or len(shared) > 1:
            found.append(
                f"poison {spec.job_id} ran {len(runs)} times ({len(shared)} shared) before it was dead; "
                f"at most max_attempts={attempts} alone and one shared"
            )
        letters = [
            error_type
            for (job_id, reason), error_type in zip(
                world.dead_letters(), _error_types_in_order(world), strict=True
            )
            if job_id == spec.job_id and reason == DeadReason.ATTEMPTS_EXHAUSTED.value
        ]
        if any(error_type != CRASHED for error_type in letters):
            found.append(f"poison {spec.job_id} was dead-lettered with error types {letters}, not {CRASHED}")
    return found


def _error_types_in_order(world: WorkerWorld) -> list[str]:
    """The ``errorType`` of each dead-letter message, in the order of :meth:`ChaosWorld.dead_letters`."""
    remaining = {job_id: list(types) for job_id, types in world.dead_letter_error_types.items()}
    return [remaining[job_id].pop(0) for job_id, _ in world.dead_letters()]


def _claims_by_job(world: WorkerWorld) -> dict[str, list[ClaimSeen]]:
    by_job: dict[str, list[ClaimSeen]] = {}
    for seen in world.history.claims:
        by_job.setdefault(seen.job_id, []).append(seen)
    return by_job


def _ran_out_alone(seen: ClaimSeen) -> bool:
    """The claim as it was when its lease ran out was an alone run's."""
    return seen.status == IN_FLIGHT and not seen.shared


def _is_take(seen: ClaimSeen) -> bool:
    return seen.operation == "PutItem" and seen.status == IN_FLIGHT


def _beside(world: WorkerWorld, run: Run) -> bool:
    """Whether another job's run overlapped ``run`` in its process."""
    process = world.process_of.get(run.worker)
    return any(
        other is not run and world.process_of.get(other.worker) is process and _overlap(run, other)
        for other in world.history.runs
    )


def _overlap(one: Run, other: Run) -> bool:
    never = float("inf")
    return one.start < (other.end or never) and other.start < (one.end or never)
