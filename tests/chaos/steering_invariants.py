"""What steering promises under chaos (docs/steering.md), checked on a settled, released world.

- **Not started never runs.** A job a cancel reported ``NOT_STARTED`` has no run at all.
- **A succeeded job is never cancelled.** A job whose claim was ever SUCCEEDED has no report that
  says it stands cancelled; and a job reported cancelled ends CANCELLED (the cancel stands).
- **A hold stops its group at the batch boundary.** Between a hold and its release, a job of the group
  starts only in a batch that read the group's header before the hold (at most that batch).
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
from .steering_world import SteeringWorld


def check(world: SteeringWorld) -> list[str]:
    """Every violation of the module's invariants."""
    return [*not_started(world), *succeeded(world), *holds(world), *supersedes(world), *dead_letters(world)]


def not_started(world: SteeringWorld) -> list[str]:
    return [
        f"{report.job_id} was reported NOT_STARTED at {time} and ran at {[run.start for run in runs]}"
        for time, report in world.cancels
        if report.outcome is CancelOutcome.NOT_STARTED and (runs := world.history.runs_of(report.job_id))
    ]


def succeeded(world: SteeringWorld) -> list[str]:
    found: list[str] = []
    ever_succeeded = {seen.job_id for seen in world.history.claims if seen.status == SUCCEEDED}
    for time, report in world.cancels:
        if not report.outcome.cancelled:
            continue
        if report.job_id in ever_succeeded:
            found.append(f"{report.job_id} succeeded and was reported {report.outcome.value} at {time}")
        elif world.claim_status(report.job_id) != CANCELLED:
            found.append(
                f"{report.job_id} was reported {report.outcome.value} at {time} and ended "
                f"{world.claim_status(report.job_id)}"
            )
    return found


def holds(world: SteeringWorld) -> list[str]:
    found: list[str] = []
    for held in world.holds:
        end = held.released_at if held.released_at is not None else float("inf")
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


def supersedes(world: SteeringWorld) -> list[str]:
    found: list[str] = []
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


def dead_letters(world: SteeringWorld) -> list[str]:
    return [
        f"{job_id} is CANCELLED and in the dead-letter queue ({reason})"
        for job_id, reason in world.dead_letters()
        if world.claim_status(job_id) == CANCELLED and world.workload.spec(job_id).kind != "malformed"
    ]
