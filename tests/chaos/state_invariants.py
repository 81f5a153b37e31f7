"""State mode's invariants, checked on a settled world against what was sent (each returns violations).

- **Exactly once, in sequence.** A group's committed log (the fold of its applied transitions) is
  its jobs in ``seq`` order (or in send order, without ``seq``), each once, less the jobs that died
  (after operators resumed every group under PARK: only the malformed ones they skipped) and the
  jobs an operator cancelled (steered).
- **Never half applied, never rolled back.** The versions of a group's state were committed one
  after the other (1, 2, 3, ...), and each version's log extends the one before: no lost race, crash
  or stale worker ever committed something the next commit had to take back.
- **Dead only because it itself died.** Every dead-letter message is a job whose kind kills it
  (permanent, malformed) with the reason its kind gives, a job run or marked (a crash counted) by at
  least ``max_attempts`` workers with ``ATTEMPTS_EXHAUSTED`` (a permanent one too, as in claim mode:
  its last allowed run may have stopped before its group committed), or a copy of one that is there
  with its reason (``COPY_OF_DEAD_JOB`` alone is not a death: a dead job whose first dead-letter send
  failed must still arrive with its reason); a job whose kind always kills it is dead.
- **Nothing lost**, SQS's own rule never fired, nothing escaped the processor, the queue is empty;
  and while groups are still parked, every job is applied, dead-lettered, kept in its group or
  waiting in its reorder buffer (:func:`while_parked`).
"""

from __future__ import annotations

import itertools
from collections import defaultdict

from constructs_fifo.runtime.constants import DeadJobPolicy, DeadReason

from .history import StateSeen
from .invariants import common
from .state_world import StateWorld


def check(world: StateWorld) -> list[str]:
    """Every violation of the module's invariants in ``world`` (settled, parked groups resumed)."""
    return [*common(world), *versions(world), *deaths(world), *folds(world)]


def while_parked(world: StateWorld) -> list[str]:
    """Settled, before operators resume: every job is applied, dead-lettered, kept or buffered (PARK)."""
    if world.config.policy is not DeadJobPolicy.PARK:
        return []
    dead = {job_id for job_id, _ in world.dead_letters()}
    held: set[str] = set()
    for group in world.workload.groups():
        held |= {*world.committed_log(group), *world.kept_job_ids(group), *world.buffered_job_ids(group)}
    held |= world.cancelled_ids()
    return [
        f"{spec.job_id} ({spec.kind}) is lost while groups are parked: not applied, dead-lettered, kept "
        "or buffered"
        for spec in world.workload.specs
        if spec.job_id not in dead | held
    ]


def versions(world: StateWorld) -> list[str]:
    found: list[str] = []
    by_group: dict[str, list[StateSeen]] = defaultdict(list)
    for state in world.history.states:
        by_group[state.group].append(state)
    for group, seen in by_group.items():
        numbers = [s.version for s in seen]
        if numbers != list(range(1, len(numbers) + 1)):
            found.append(f"{group}'s state versions were committed as {numbers}")
        for before, after in itertools.pairwise(seen):
            if after.log[: len(before.log)] != before.log:
                found.append(
                    f"{group}'s version {after.version} {list(after.log)} does not extend version "
                    f"{before.version} {list(before.log)} (by {after.worker})"
                )
        for state in seen:
            if len(set(state.log)) != len(state.log):
                found.append(f"{group}'s version {state.version} applied a job twice: {list(state.log)}")
    return found


def deaths(world: StateWorld) -> list[str]:
    found: list[str] = []
    attempts = world.config.max_attempts
    dead_ids = _dead_ids(world)
    for job_id, reason in world.dead_letters():
        spec = world.workload.spec(job_id)
        # A permanent job too: its failure is recorded by its group's commit, so a run that stopped after
        # its transition returned and before the commit (a crash, a throttled marker write) is counted
        # as its attempt (crash_watch rule 4), as claim mode counts a stop before its DEAD write.
        exhausted = (
            spec.kind in ("ok", "transient", "crash", "permanent") and len(world.tried(job_id)) >= attempts
        )
        expected = {
            DeadReason.MALFORMED.value: spec.kind == "malformed",
            DeadReason.PERMANENT.value: spec.kind == "permanent",
            DeadReason.ATTEMPTS_EXHAUSTED.value: exhausted,
            DeadReason.COPY_OF_DEAD_JOB.value: job_id in dead_ids,
        }
        if not expected.get(reason, False):
            found.append(f"{job_id} ({spec.kind} x{spec.times}) is in the dead-letter queue for {reason}")
    return found


def folds(world: StateWorld) -> list[str]:
    """Each group's committed log is the fold of what was sent, less what died; nothing is lost."""
    found: list[str] = []
    dead = _dead_ids(world)
    cancelled = world.cancelled_ids()
    park = world.config.policy is DeadJobPolicy.PARK
    for group in world.workload.groups():
        jobs = world.workload.jobs_of(group)
        log = world.committed_log(group)
        for spec in jobs:
            if spec.job_id in cancelled:
                continue  # steered: never applied (steering_invariants)
            must_die = spec.kind == "malformed" if park else spec.kind in ("permanent", "malformed")
            if must_die and spec.job_id not in dead:
                found.append(
                    f"{spec.job_id} ({spec.kind}) should have died and is not in the dead-letter queue"
                )
            if spec.job_id not in dead and spec.job_id not in log:
                found.append(
                    f"{spec.job_id} ({spec.kind}) is lost: neither in {group}'s state nor dead-lettered"
                )
        expected = [spec.job_id for spec in jobs if spec.job_id not in dead | cancelled]
        if log != expected:
            found.append(f"{group}'s committed log is {log}; the fold of what was sent is {expected}")
    return found


def _dead_ids(world: StateWorld) -> set[str]:
    """The jobs in the dead-letter queue with a reason of their own (not only as a copy)."""
    return {job_id for job_id, reason in world.dead_letters() if reason != DeadReason.COPY_OF_DEAD_JOB.value}
