"""The chaos world steered: cancels, holds, releases, group cancels and supersede sends among the faults.

Claim mode, on the function (:class:`SteeredClaimWorld`) or on container workers of several slots
(:class:`SteeredWorkerWorld`), and state mode on the function (:class:`SteeredStateWorld`). An
operator (the test's thread, between any two scheduling points of the workers, so a control races
every call of the runtime) drives the real client,
:class:`constructs_fifo.client.steering.JobSteering`, against the world's tables and queue:

- ``cancel``: one job, any time (before it is sent, queued, running, failed, kept, done);
- ``hold`` / ``release`` a group (claim mode under the PARK policy, state mode always: the group table
  carries the hold);
- ``cancel_group`` of a held (or parked) group: every job it keeps; of a live one: its ``CANCELLING``
  header and a marker message sent through the group (every job sent before it is cancelled as it
  arrives, up to the marker);
- the jobs of a workload with ``supersede`` keys are sent with
  :meth:`~constructs_fifo.client.steering.JobSteering.send_superseding` through a real
  :class:`~constructs_fifo.client.producer.JobProducer` (its marker first, then the message), in
  either mode.

A property may narrow the operator's controls (:attr:`Steered.controls`: say, live group cancels
alone).

The last control, a ``pace`` limit, is the queue's, not an operator's: :mod:`.pace_world` paces each of
these worlds (and :mod:`.pace_invariants` checks it).

Each report is recorded with its logical time, and every read of the group table with its reader,
for :mod:`.steering_invariants`. At the end (:meth:`SteeringWorld.release_all`) every held group is
released and the world settles.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from constructs_fifo.client.errors import SteeringQueryError, SteeringWriteError
from constructs_fifo.client.producer import JobMessage, JobProducer
from constructs_fifo.client.steering import CancelReport, HoldOutcome, JobSteering
from constructs_fifo.runtime.constants import DeadJobPolicy
from constructs_fifo.runtime.dead_jobs.parking import HELD
from constructs_fifo.runtime.state.storage.store import decode_item
from constructs_fifo.runtime.steering.names import ATTR_CANCELLED_BY, SUPERSEDED_BY

from .calls import Point
from .claim_world import ClaimWorld
from .state_world import StateWorld
from .worker_world import WorkerWorld
from .workload import Send
from .world import CLAIMS, GROUPS, ChaosWorld

__all__ = [
    "MAX_CONTROLS",
    "GroupCancel",
    "Held",
    "Steered",
    "SteeredClaimWorld",
    "SteeredStateWorld",
    "SteeredWorkerWorld",
    "SteeringWorld",
]

#: An operator's controls in one schedule, at most (more would cancel most jobs before they run).
MAX_CONTROLS = 5


@dataclass(frozen=True)
class GroupCancel:
    """One ``cancel_group`` call: its group, the logical times it was called and returned, and the
    marker it sent (``None``: the group was held or parked, its kept jobs were cancelled at once)."""

    group: str
    called: int
    returned: int
    marker_id: str | None


@dataclass
class Held:
    """One hold that took (``HELD``) and the release that ended it (``None``: not yet)."""

    group: str
    held_at: int
    released_at: int | None = None


class Steered(ChaosWorld):
    """An operator steering either mode's world (a mixin: the mode is the other base); see the module
    docstring."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Claim mode needs the PARK policy (its group table) to hold; state mode always has one.
        self.holds_groups = self.config.policy is DeadJobPolicy.PARK or not self.has_claims
        self.steering = JobSteering(
            claim_table=CLAIMS if self.has_claims else None,
            group_table=GROUPS if self.holds_groups else None,
            dynamodb=self.dynamodb,
            claim_ttl_seconds=86_400,
            clock=self.clock,
            sqs=self.sqs,
            queue_url=self.model.url,
        )
        self.producer = JobProducer(self.model.url, sqs_client=self.sqs, sleep=lambda _: None)
        #: (logical time, report) of every cancel, a group cancel's included.
        self.cancels: list[tuple[int, CancelReport]] = []
        self.holds: list[Held] = []
        #: (group, key) -> the job ids sent with the key, in send order.
        self.keyed: dict[tuple[str, str], list[str]] = {}
        #: worker -> logical times of its reads of the group table.
        self.group_reads: dict[str, list[int]] = {}
        #: job id -> the logical time its first (original) send returned.
        self.sent_at: dict[str, int] = {}
        self.group_cancels: list[GroupCancel] = []
        #: the jobs a one-job cancel targeted (whatever it reported).
        self.cancel_targets: set[str] = set()
        #: the operator's controls to draw from (``None``: every one the world allows).
        self.controls: tuple[str, ...] | None = None
        self.controls_played = 0

    # --- the operator's controls ---------------------------------------------------------------------

    def cancel(self, job_id: str) -> None:
        spec = self.workload.spec(job_id)
        self.cancel_targets.add(job_id)
        report = self.steering.cancel(job_id, group=spec.group, seq=spec.seq, reason="chaos", by="operator")
        self.cancels.append((self.history.tick(), report))
        self.history.events[f"cancels {report.outcome.value}{' (running)' if report.running else ''}"] += 1
        self._note(
            f"operator cancels {job_id}: {report.outcome.value}{' (running)' if report.running else ''}"
        )

    def hold(self, group: str) -> None:
        report = self.steering.hold(group, reason="chaos", by="operator")
        self.history.events[f"holds {report.outcome.value}"] += 1
        if report.outcome is HoldOutcome.HELD:
            self.holds.append(Held(group, self.history.tick()))
        self._note(f"operator holds {group}: {report.outcome.value}")

    def release(self, group: str) -> None:
        report = self.steering.release(group)
        self.history.events[f"releases {report.outcome.value}"] += 1
        if report.outcome is HoldOutcome.RELEASED:
            for held in self.holds:
                if held.group == group and held.released_at is None:
                    held.released_at = self.history.tick()
        self._note(f"operator releases {group}: {report.outcome.value}")

    def cancel_group(self, group: str) -> None:
        called = self.history.tick()
        try:
            report = self.steering.cancel_group(group, reason="chaos", by="operator")
        except (SteeringQueryError, SteeringWriteError) as exc:  # no group table; a race with a hold
            self._note(f"operator cancels group {group}: refused ({exc})")
            return
        now = self.history.tick()
        self.group_cancels.append(GroupCancel(group, called, now, report.marker_id))
        self.cancels += [(now, job) for job in report.jobs]
        live = "a live group (marker)" if report.marker_id else "a held or parked group"
        self.history.events[f"group cancels of {live}"] += 1
        self.history.events["jobs cancelled by a group cancel"] += report.cancelled
        self._note(
            f"operator cancels group {group} ({report.status}, marker {report.marker_id}): "
            f"{[(j.job_id, j.outcome.value) for j in report.jobs]}"
        )

    def release_all(self, *, rounds: int = 10) -> None:
        """Release every held group and let the world settle, until none is held."""
        for _ in range(rounds):
            held = [h.group for h in self.operators().list_groups() if h.status == HELD]
            if not held:
                return
            for group in held:
                self.release(group)
            self.settle(max_steps=20_000)
        raise AssertionError(f"groups still held after {rounds} rounds of release")

    def cancelled_ids(self) -> set[str]:
        """The jobs a cancel reported cancelled, and each malformed job sent before a live cancel of its
        group: the runtime deletes every record before the marker, one it cannot read too (no id to
        keep), in either mode."""
        reported = {report.job_id for _, report in self.cancels if report.outcome.cancelled}
        unread = {
            spec.job_id
            for spec in self.workload.specs
            if spec.kind == "malformed"
            and any(
                cancel.marker_id is not None
                and cancel.group == spec.group
                and self.sent_at.get(spec.job_id, cancel.called) < cancel.called
                for cancel in self.group_cancels
            )
        }
        return reported | unread

    def tally(self) -> None:
        """Count, for the session's summary, the keyed jobs a newer one of their key superseded."""
        for cancel in self.group_cancels:
            if cancel.marker_id is not None:
                self.history.events["jobs sent before a live group cancel"] += sum(
                    self.workload.spec(job_id).group == cancel.group and sent < cancel.called
                    for job_id, sent in self.sent_at.items()
                )
        keyed = [job_id for sent in self.keyed.values() for job_id in sent]
        if not keyed:
            return
        self.history.events["keyed jobs sent (send_superseding)"] += len(keyed)
        self.history.events["jobs superseded by a newer one of their key"] += sum(
            self.cancelled_by_of(job_id) == SUPERSEDED_BY for job_id in keyed
        )

    def cancelled_by_of(self, job_id: str) -> str | None:
        """Who cancelled ``job_id`` (``supersede``: a newer job of its key), ``None``: not cancelled."""
        value = self._claim(job_id).get(ATTR_CANCELLED_BY, {}).get("S")
        return None if value is None else str(value)

    # --- the schedule -------------------------------------------------------------------------------

    def more_actions(self) -> list[str]:
        steer = ["steer"] if self.controls_played < MAX_CONTROLS else []
        return [*super().more_actions(), *steer]

    def act(self, action: str, draw: Callable[[st.SearchStrategy[Any]], Any]) -> None:
        if action != "steer":
            super().act(action, draw)
            return
        self.controls_played += 1
        every = ("cancel", "hold", "release", "cancel_group") if self.holds_groups else ("cancel",)
        control = draw(st.sampled_from(self.controls or every))
        if control == "cancel":
            self.cancel(draw(st.sampled_from(self._cancel_targets(draw))))
        else:
            getattr(self, control)(draw(st.sampled_from(self.workload.groups())))

    def deliver(self, send: Send) -> str | None:
        message_id = self._deliver(send)
        if send.copy is None:
            self.sent_at.setdefault(send.spec.job_id, self.history.tick())
        return message_id

    def _deliver(self, send: Send) -> str | None:
        spec = send.spec
        if spec.supersede is None:
            return super().deliver(send)
        self.keyed.setdefault((spec.group, spec.supersede), []).append(spec.job_id)
        job = JobMessage(
            spec.job_id,
            "apply_patch",
            spec.payload(),
            spec.group,
            deduplication_id=send.dedup_id,
            supersede=spec.supersede,
        )
        sent = self.steering.send_superseding(self.producer, job)
        return None if sent.message_id == "deduplicated" else sent.message_id

    def _cancel_targets(self, draw: Callable[[st.SearchStrategy[Any]], Any]) -> list[str]:
        """The jobs a cancel picks from: the running ones, the ones that ran, or any (the races a cancel
        must win or lose cleanly: before a claim, mid-run, after the last write)."""
        every = [spec.job_id for spec in self.workload.specs]
        running = [run.job_id for run in self.history.runs if run.end is None]
        ran = list(dict.fromkeys(run.job_id for run in self.history.runs))
        chosen = draw(st.sampled_from((running, ran, every)))
        return chosen or every

    def _claim(self, job_id: str) -> dict[str, Any]:
        item = self.reader.get_item(TableName=CLAIMS, Key={"id": {"S": job_id}}, ConsistentRead=True)
        return dict(item.get("Item", {}))

    def observe_read(self, point: Point, worker: str) -> None:
        if GROUPS in point.target.split(","):
            self.group_reads.setdefault(worker, []).append(self.history.tick())


class SteeringWorld(Steered, ClaimWorld):
    """Claim mode, steered."""


class SteeredClaimWorld(SteeringWorld):
    """Claim mode steered, on the function."""


class SteeredWorkerWorld(SteeringWorld, WorkerWorld):
    """Claim mode steered, on container workers of several slots."""


class SteeredStateWorld(Steered, StateWorld):
    """State mode steered, on the function."""

    def cancelled_by(self) -> dict[str, str]:
        """Job id -> who cancelled it, as the groups' state items keep it (an operator, a live group's
        cancel as its records arrived, or the supersede rule)."""
        found: dict[str, str] = {}
        for group in self.workload.groups():
            item = self._state_item(group)
            if item is not None:
                found |= {entry.job_id: entry.by for entry in decode_item(item).cancelled}
        return found

    def cancelled_ids(self) -> set[str]:
        """The cancels the state items keep too (an operator's, a live group's cancel as its records
        arrived, the supersede rule)."""
        return super().cancelled_ids() | set(self.cancelled_by())

    def cancelled_by_of(self, job_id: str) -> str | None:
        return self.cancelled_by().get(job_id)
