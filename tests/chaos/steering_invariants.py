"""What steering promises under chaos (docs/steering.md), checked on a settled, released world.

- **Not started never runs.** A job a cancel reported ``NOT_STARTED`` has no run at all (state mode:
  is never applied).
- **A succeeded job is never cancelled.** A job whose claim was ever SUCCEEDED (state mode: that
  was applied) has no report that says it stands cancelled; and a job reported cancelled ends
  CANCELLED (the cancel stands).
- **A hold stops its group at the batch boundary.** Between a hold and its release, a job of the group
  starts only in a batch that read the group's header before the hold (at most that batch); state
  mode: nothing of the group is applied.
- **A group cancel splits the group at the call.** A job first sent after a ``cancel_group`` of its
  group returned (and not cancelled since: no later group cancel of its group, no one-job cancel of
  it) is never cancelled: it runs once, in order (each mode's invariants). A job sent before a live
  group's cancel runs after the cancel returned only in a batch that read the group's header before
  it (claim mode: at most the batch in flight); state mode: it is never applied after the cancel
  returned. Once settled, no group is left ``CANCELLING`` (its marker passed: it is live again).
- **The newest wins, never loses.** The newest job sent with a (group, key) is never superseded,
  and no older job of the key starts after a newer one of it started; state mode: no older job of a
  key is applied once a newer one was sent before its commit.
- **Nothing steered is dead-lettered.** No job whose claim ends CANCELLED is in the dead-letter queue
  (but a malformed body: the runtime cannot read the job id that was cancelled, and dead-letters it).

Order among the jobs that run and nothing lost are claim mode's (:mod:`.claim_invariants`, where a
CANCELLED job is finished with).
"""

from __future__ import annotations

from constructs_fifo.client.steering import CancelOutcome
from constructs_fifo.runtime.dead_jobs.park_records import CANCELLING as CANCELLING_STATUS
from constructs_fifo.runtime.steering.names import ATTR_CANCELLED_BY, SUPERSEDED_BY

from .claim_invariants import CANCELLED, SUCCEEDED
from .claim_world import ClaimWorld
from .history import Run
from .state_world import StateWorld
from .steering_world import GroupCancel, Steered, SteeredStateWorld


def check(world: Steered) -> list[str]:
    """Every violation of the module's invariants."""
    return [
        *not_started(world),
        *succeeded(world),
        *holds(world),
        *group_cancels(world),
        *supersedes(world),
        *dead_letters(world),
    ]


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
            read = _last_read(world, run)
            if read is None or read > held.held_at:
                found.append(
                    f"{run.job_id} started at {run.start} by {run.worker} while {held.group} was held "
                    f"(from {held.held_at}), its batch having read the group at {read}"
                )
    return found


def _cancelled(world: Steered) -> set[str]:
    """The jobs that stand cancelled: claim mode, a CANCELLED claim; state mode, a state item's entry."""
    if isinstance(world, ClaimWorld):
        return {spec.job_id for spec in world.workload.specs if world.claim_status(spec.job_id) == CANCELLED}
    return world.cancelled_ids()


def _first_applied(world: Steered, job_id: str) -> int | None:
    """State mode: the logical time of the first commit whose log holds ``job_id``."""
    return next((state.time for state in world.history.states if job_id in state.log), None)


def group_cancels(world: Steered) -> list[str]:
    found: list[str] = []
    cancelled = _cancelled(world)
    cancelled -= {job_id for sent in world.keyed.values() for job_id in sent[:-1]}  # superseded, maybe
    for spec in world.workload.specs:
        sent = world.sent_at.get(spec.job_id)
        if sent is None:
            continue
        mine = [c for c in world.group_cancels if c.group == spec.group]
        after = [c for c in mine if c.returned < sent]
        before = [c for c in mine if c.called > sent]
        if after and not before and spec.job_id not in world.cancel_targets and spec.job_id in cancelled:
            found.append(
                f"{spec.job_id} was sent at {sent}, after {spec.group}'s cancel returned at "
                f"{after[-1].returned}, and was cancelled"
            )
        for cancel in (c for c in before if c.marker_id is not None):
            found += _ran_after_live_cancel(world, spec.job_id, sent, cancel)
    for group in world.workload.groups():
        header = world.operators().get(group) if world.holds_groups else None
        if header is not None and header.status == CANCELLING_STATUS:
            found.append(f"{group} is still CANCELLING once settled (its marker never passed)")
    return found


def _ran_after_live_cancel(world: Steered, job_id: str, sent: int, cancel: GroupCancel) -> list[str]:
    """A job sent before a live group's cancel: claim mode, no run after the cancel returned but in a
    batch that read the header before it; state mode, never applied after it returned."""
    if isinstance(world, StateWorld):
        applied = _first_applied(world, job_id)
        if applied is not None and applied > cancel.returned:
            return [
                f"{job_id} was sent at {sent}, before {cancel.group}'s live cancel (returned at "
                f"{cancel.returned}), and was applied at {applied}"
            ]
        return []
    found: list[str] = []
    for run in world.history.runs_of(job_id):
        if run.start < cancel.returned:
            continue
        read = _last_read(world, run)
        if read is None or read > cancel.returned:
            found.append(
                f"{job_id} was sent at {sent}, before {cancel.group}'s live cancel (returned at "
                f"{cancel.returned}), and started at {run.start} by {run.worker}, its batch having read "
                f"the group at {read}"
            )
    return found


def _last_read(world: Steered, run: Run) -> int | None:
    """When the run's worker last read the group table before the run started (``None``: never)."""
    return max((time for time in world.group_reads.get(run.worker, []) if time < run.start), default=None)


def supersedes(world: Steered) -> list[str]:
    found: list[str] = []
    if isinstance(world, SteeredStateWorld):
        return _state_supersedes(world)
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


def _state_supersedes(world: SteeredStateWorld) -> list[str]:
    """State mode: the newest of a key is never superseded; no older job of a key is applied once a
    newer one was sent before its commit (its order is :mod:`.state_invariants`' fold)."""
    found: list[str] = []
    by = world.cancelled_by()
    for (group, key), sent in world.keyed.items():
        if by.get(sent[-1]) == SUPERSEDED_BY:
            found.append(f"{sent[-1]}, the newest job of {group}/{key}, was superseded")
        for index, older in enumerate(sent[:-1]):
            applied = _first_applied(world, older)
            newer = [job_id for job_id in sent[index + 1 :] if world.sent_at[job_id] < (applied or 0)]
            if applied is not None and newer:
                found.append(
                    f"{older} of {group}/{key} was applied at {applied}, after {newer[0]} was sent at "
                    f"{world.sent_at[newer[0]]}"
                )
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
