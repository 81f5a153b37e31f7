"""Steering under chaos: cancels, holds, releases, group cancels and supersede sends racing the faults.

Hypothesis draws the world (claim mode, on the function or on container workers of several slots;
state mode, on the function), the jobs (claim mode: some with a ``supersede`` key, sent through the
client's ``send_superseding``; state mode: some groups with ``seq``, sent in any order) and every
step of the schedule: the chaos suite's (workers, faults at any call, crashes, stale workers, copies,
the clock) and an operator's controls through the real client (:class:`JobSteering`) at any point
between two calls of the runtime. The world settles without faults, every held group is released
and every parked one resumed; then :mod:`.steering_invariants` checks what steering promises, and
claim mode's (and workers') invariants the rest: order among the jobs that ran, nothing lost.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from moto import mock_aws

from . import claim_invariants, state_invariants, steering_invariants, worker_invariants
from .scenario import play_and_check
from .steering_world import SteeredClaimWorld, SteeredStateWorld, SteeredWorkerWorld, SteeringWorld
from .strategies import budget, configs
from .worker_world import worker_config
from .workload import Workload, workloads
from .world import WorldConfig


@budget(ci_examples=4)
@given(
    config=configs(),
    slots=st.sampled_from((0, 2, 3)),
    workload=workloads(keys=True, poison=True),
    data=st.data(),
)
def test_steering_keeps_its_promises_under_crashes_stale_workers_and_copies(
    config: WorldConfig, slots: int, workload: Workload, data: st.DataObject
) -> None:
    with mock_aws():
        # GIVEN a world in claim mode (on the function, or on workers of `slots` slots) and its jobs
        world: SteeringWorld = (
            SteeredWorkerWorld(worker_config(config, slots), workload)
            if slots
            else SteeredClaimWorld(config, workload)
        )
        # WHEN Hypothesis plays a schedule of workers, faults, sends, time and an operator's cancels,
        # holds, releases and group cancels, and the world settles
        # THEN every job is done, cancelled, dead-lettered, or kept while its group is held or parked;
        # and once operators released every held group and resumed every parked one, steering kept
        # its promises and claim mode's (workers') invariants hold
        play_and_check(
            world,
            data.draw,
            name="steering (claim)",
            while_parked=claim_invariants.while_parked,
            check=lambda w: _claim_invariants(w) + steering_invariants.check(w),
            settle_steps=20_000,
        )


@budget(ci_examples=3)
@given(config=configs(), workload=workloads(seq=True, max_times=3), data=st.data())
def test_state_mode_steering_keeps_its_promises_under_crashes_stale_workers_and_copies(
    config: WorldConfig, workload: Workload, data: st.DataObject
) -> None:
    with mock_aws():
        # GIVEN a world in state mode and its jobs (a group may carry seq, sent in any order)
        world = SteeredStateWorld(config, workload)
        # WHEN Hypothesis plays a schedule of workers, faults, sends, time and an operator's cancels,
        # holds, releases and group cancels, and the world settles
        # THEN every job is applied, cancelled, dead-lettered, kept or buffered; and once operators
        # released and resumed every group, steering kept its promises and each group's log is the
        # fold of what was sent less what died or was cancelled
        play_and_check(
            world,
            data.draw,
            name="steering (state)",
            while_parked=state_invariants.while_parked,
            check=lambda w: state_invariants.check(w) + steering_invariants.check(w),
            settle_steps=20_000,
        )


def _claim_invariants(world: SteeringWorld) -> list[str]:
    if isinstance(world, SteeredWorkerWorld):
        return worker_invariants.check(world)
    return claim_invariants.check(world)
