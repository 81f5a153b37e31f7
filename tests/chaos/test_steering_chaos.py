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

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st
from moto import mock_aws

from constructs_fifo.runtime.constants import DeadJobPolicy

from . import claim_invariants, state_invariants, steering_invariants, worker_invariants
from .scenario import play_and_check
from .steering_world import Steered, SteeredClaimWorld, SteeredStateWorld, SteeredWorkerWorld, SteeringWorld
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
        world = _claim_world(config, slots, workload)
        # WHEN Hypothesis plays a schedule of workers, faults, sends, time and an operator's cancels,
        # holds, releases and group cancels, and the world settles
        # THEN every job is done, cancelled, dead-lettered, or kept while its group is held or parked;
        # and once operators released every held group and resumed every parked one, steering kept
        # its promises and claim mode's (workers') invariants hold
        _play(world, data, "steering (claim)")


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
        _play(world, data, "steering (state)")


@budget(ci_examples=4)
@given(config=configs(), mode=st.sampled_from(("claim", "workers", "state")), data=st.data())
def test_a_live_group_cancel_splits_its_group_at_the_call_under_crashes_stale_workers_and_copies(
    config: WorldConfig, mode: str, data: st.DataObject
) -> None:
    with mock_aws():
        # GIVEN a world in either mode (claim mode under PARK, whose group table carries the header; on
        # the function or on workers of two slots; state mode with groups of seq) and its jobs, whose
        # operator mostly cancels live groups
        workload = data.draw(workloads(seq=mode == "state", max_times=3))
        world: Steered = (
            SteeredStateWorld(config, workload)
            if mode == "state"
            else _claim_world(
                replace(config, policy=DeadJobPolicy.PARK), 2 if mode == "workers" else 0, workload
            )
        )
        world.controls = ("cancel_group", "cancel_group", "cancel")
        # WHEN Hypothesis plays a schedule of workers, faults, sends, time and the operator's group
        # cancels (a CANCELLING header and a marker through the group) and one-job cancels
        # THEN a job sent after a cancel returned is never cancelled and runs once, in order; a job sent
        # before it never runs but in a batch that read the header before it (state mode: is never
        # applied after it); the group is live again once settled; nothing cancelled is dead-lettered
        _play(world, data, "steering: live group cancels")


@budget(ci_examples=3)
@given(config=configs(), workload=workloads(keys=True, max_times=3), data=st.data())
def test_state_mode_newest_wins_under_crashes_stale_workers_and_copies(
    config: WorldConfig, workload: Workload, data: st.DataObject
) -> None:
    with mock_aws():
        # GIVEN a world in state mode whose jobs may carry the supersede key run_tests (sent through
        # send_superseding: the group's state item is marked, then the job is sent)
        world = SteeredStateWorld(config, workload)
        # WHEN Hypothesis plays a schedule of workers, faults, sends, time and an operator's controls
        # THEN the newest job of each key is never superseded, no older job of a key is applied once a
        # newer one was sent before its commit, and each group's log is the fold of what was sent less
        # what died, was cancelled or superseded (in order, once)
        _play(world, data, "steering: state mode newest wins")


def _claim_world(config: WorldConfig, slots: int, workload: Workload) -> SteeringWorld:
    """Claim mode steered: on the function, or on workers of ``slots`` slots."""
    if slots:
        return SteeredWorkerWorld(worker_config(config, slots), workload)
    return SteeredClaimWorld(config, workload)


def _play(world: Steered, data: st.DataObject, name: str) -> None:
    """Play, settle and check a steered world with its mode's invariants and steering's."""
    if isinstance(world, SteeredStateWorld):
        play_and_check(
            world,
            data.draw,
            name=name,
            while_parked=state_invariants.while_parked,
            check=lambda w: state_invariants.check(w) + steering_invariants.check(w),
            settle_steps=20_000,
        )
        return
    assert isinstance(world, SteeringWorld)
    play_and_check(
        world,
        data.draw,
        name=name,
        while_parked=claim_invariants.while_parked,
        check=lambda w: _claim_invariants(w) + steering_invariants.check(w),
        settle_steps=20_000,
    )


def _claim_invariants(world: SteeringWorld) -> list[str]:
    if isinstance(world, SteeredWorkerWorld):
        return worker_invariants.check(world)
    return claim_invariants.check(world)
