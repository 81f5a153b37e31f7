"""What steering promises under chaos (docs/steering.md), checked on a settled, released world.

- **Not started never runs.** A job a cancel reported ``NOT_STARTED`` has no run at all (state mode:
  is never applied).
- **A succeeded job is never cancelled.** A job whose claim was ever SUCCEEDED (state mode: that
  was applied) has no report that says it stands cancelled; and a job reported cancelled ends
  CANCELLED (the cancel stands).
- **A hold stops its group at the batch boundary.** Between a hold and its release, a job of the group
  starts only in a batch that read the group's header before the hold (at most that batch); state
  mode: nothing of the group is applied.
- **The newest wins, never loses.** The newest job sent with a (group, key) is never superseded,
  and no older job of the key starts after a newer one of it started.
- **Nothing steered is dead-lettered.** No job whose claim ends CANCELLED is in the dead-letter queue
  (but a malformed body: the runtime cannot read the job id that was cancelled, and dead-letters it).

Order among the jobs that run and nothing lost are claim mode's (:mod:`.claim_invariants`, where a
CANCELLED job is finished with).
"""

from __future__ import annotations

from constructs_fifo.client.steering import CancelOutcome
from constructs_fifo.runtime.steering.names import ATTR_CANCELLED_BY, SUPERSEDED_BY

from .claim_invariants import CANCELLED, SUCCEEDED
from .claim_world import ClaimWorld
from .state_world import StateWorld
from .steering_world import Steered


def check(world: Steered) -> list[str]:
    """Every violation of the module's invariants."""
    return [*not_started(world), *succeeded(world), *holds(world), *supersedes(world), *dead_letters(world)]


def _applied(world: Steered) -> set[str]:
    """The jobs that took effect: claim mode, a SUCCEEDED claim ever seen; state mode, in a committed log."""
    if isinstance(world, StateWorld):
        return {job_id for state in world.history.states for job_id in state.log}
    return {seen.job_id for seen in world.history.claims if seen.status == SUCCEEDED}


def not_started(world: Steered) -> list[str]:
    """Claim mode: no run at all. State mode: never applied (a batch that read the group before the
    cancel may call the transition; its commit is refused)."""
    applied = _applied(world)
    found: list[str] = []
    for time, report in world.cancels:
        if report.outcome is not CancelOutcome.NOT_STARTED:
            continue
        runs = world.history.runs_of(report.job_id)
        if report.job_id in applied or (runs and not isinstance(world, StateWorld)):
            found.append(
                f"{report.job_id} was reported NOT_STARTED at {time} and ran at {[r.start for r in runs]}"
                f"{' and was applied' if report.job_id in applied else ''}"
            )
    return found


def succeeded(world: Steered) -> list[str]:
    found: list[str] = []
    applied = _applied(world)
    for time, report in world.cancels:
        if not report.outcome.cancelled:
            continue
        if report.job_id in applied:
            found.append(f"{report.job_id} succeeded and was reported {report.outcome.value} at {time}")
        elif isinstance(world, ClaimWorld) and world.claim_status(report.job_id) != CANCELLED:
            found.append(
                f"{report.job_id} was reported {report.outcome.value} at {time} and ended "
                f"{world.claim_status(report.job_id)}"
            )
    return found


def holds(world: Steered) -> list[str]:
    """Claim mode: a job of a held group starts only in a batch that read the group before the hold.
    State mode: nothing of the group is applied between the hold and its release."""
    found: list[str] = []
    for held in world.holds:
        end = held.released_at if held.released_at is not None else float("inf")
        if isinstance(world, StateWorld):
            seen = [state for state in world.history.states if state.group == held.group]
            before = [state.log for state in seen if state.time < held.held_at][-1:] or [()]
            found += [
                f"{held.group} was held at {held.held_at} and committed {list(state.log)} at {state.time} "
                f"(it held {list(before[0])})"
                for state in seen
                if held.held_at < state.time < end and state.log != before[0]
            ]
            continue
        for run in world.history.runs:
            if run.group != held.group or not held.held_at < run.start < end:
                continue
            reads = [time for time in world.group_reads.get(run.worker, []) if time < run.start]
            if not reads or reads[-1] > held.held_at:
                found.append(
                    f"{run.job_id} started at {run.start} by {run.worker} while {held.group} was held "
                    f"(from {held.held_at}), its batch having read the group at {reads[-1:]}"
                )
    return found


def supersedes(world: Steered) -> list[str]:
    found: list[str] = []
    if not isinstance(world, ClaimWorld):
        return found
    for (group, key), sent in world.keyed.items():
        newest = sent[-1]
        item = world.claim_item(newest)
        if item.get(ATTR_CANCELLED_BY, {}).get("S") == SUPERSEDED_BY:
            found.append(f"{newest}, the newest job of {group}/{key}, was superseded")
        for older_index, older in enumerate(sent):
            for newer in sent[older_index + 1 :]:
                newer_runs = world.history.runs_of(newer)
                if not newer_runs:
                    continue
                late = [run for run in world.history.runs_of(older) if run.start > newer_runs[0].start]
                if late:
                    found.append(f"{older} of {group}/{key} started at {late[0].start}, after {newer} did")
    return found


def dead_letters(world: Steered) -> list[str]:
    cancelled = world.cancelled_ids()
    if isinstance(world, ClaimWorld):
        cancelled |= {
            spec.job_id for spec in world.workload.specs if world.claim_status(spec.job_id) == CANCELLED
        }
    return [
        f"{job_id} is cancelled and in the dead-letter queue ({reason})"
        for job_id, reason in world.dead_letters()
        if job_id in cancelled and world.workload.spec(job_id).kind != "malformed"
    ]
