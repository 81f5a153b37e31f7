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

from hypothesis import given, note
from hypothesis import strategies as st
from moto import mock_aws

from . import claim_invariants, state_invariants, steering_invariants, worker_invariants
from .stats import STATS
from .steering_world import SteeredClaimWorld, SteeredStateWorld, SteeredWorkerWorld, SteeringWorld
from .strategies import CHAOS_STEPS, budget, configs
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
        try:
            # WHEN Hypothesis plays a schedule of workers, faults, sends, time and an operator's
            # cancels, holds, releases and group cancels, and the world settles
            world.play(data.draw, steps=CHAOS_STEPS)
            world.settle(max_steps=20_000)
            # THEN every job is done, cancelled, dead-lettered, or kept while its group is held or parked
            violations = claim_invariants.while_parked(world)
            # WHEN operators release every held group and resume every parked one
            world.release_all()
            world.resume_all()
            # THEN steering kept its promises, and claim mode's (workers') invariants hold
            if isinstance(world, SteeredWorkerWorld):
                violations += worker_invariants.check(world)
            else:
                violations += claim_invariants.check(world)
            violations += steering_invariants.check(world)
            world.tally()
            STATS.record("steering", world)
            note("\n".join(world.trace))
            assert not violations, "\n".join(violations)
        finally:
            world.close()


@budget(ci_examples=3)
@given(config=configs(), workload=workloads(seq=True, max_times=3), data=st.data())
def test_state_mode_steering_keeps_its_promises_under_crashes_stale_workers_and_copies(
    config: WorldConfig, workload: Workload, data: st.DataObject
) -> None:
    with mock_aws():
        # GIVEN a world in state mode and its jobs (a group may carry seq, sent in any order)
        world = SteeredStateWorld(config, workload)
        try:
            # WHEN Hypothesis plays a schedule of workers, faults, sends, time and an operator's
            # cancels, holds, releases and group cancels, and the world settles
            world.play(data.draw, steps=CHAOS_STEPS)
            world.settle(max_steps=20_000)
            # THEN every job is applied, cancelled, dead-lettered, kept or buffered
            violations = state_invariants.while_parked(world)
            # WHEN operators release every held group and resume every parked one
            world.release_all()
            world.resume_all()
            # THEN steering kept its promises, and state mode's invariants hold: each group's log is
            # the fold of what was sent less what died or was cancelled
            violations += state_invariants.check(world) + steering_invariants.check(world)
            STATS.record("steering (state)", world)
            note("\n".join(world.trace))
            assert not violations, "\n".join(violations)
        finally:
            world.close()
