"""Pacing under chaos: a paced key's tokens taken while workers crash, go stale, throttle and race.

Hypothesis draws the world (claim mode on the function or on container workers of two or three slots,
state mode on the function; :mod:`.pace_world`), the limit (one job per 30 s with a burst of 1 or 2,
two per 61 s, three per 100 s) and its key (the group, or the tenant in the payload that two groups
share), whether the function's process is warm, the jobs (state mode: groups with ``seq`` sent in any
order), then every step of the schedule: the chaos suite's (workers, faults at any call, the pace
store's own included, crashes, stale workers, copies, the clock moving 1 to 121 s) and an operator's
controls. The world settles without faults (a paced record comes back when its visibility ends),
every held group is released and every parked one resumed; then :mod:`.pace_invariants` checks what
pacing promises (no window holds more than ``burst + jobs / per × T`` takes of a key, no run without
its token, a wait costs no attempt), and the mode's invariants and steering's the rest (order, nothing
lost, once, SQS's own rule at 1000 never fired).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from moto import mock_aws

from constructs_fifo.runtime.steering.pace import KEY_GROUP, PaceLimit

from . import claim_invariants, pace_invariants, state_invariants, steering_invariants, worker_invariants
from .pace_world import TENANT_KEY, Paced, PacedClaimWorld, PacedStateWorld, PacedWorkerWorld, limits
from .scenario import play_and_check
from .strategies import budget, configs
from .worker_world import worker_config
from .workload import JobSpec, Send, Workload, workloads
from .world import WorldConfig


@budget(ci_examples=3)
@given(
    config=configs(),
    mode=st.sampled_from(("claim", "workers", "state")),
    key=st.sampled_from((KEY_GROUP, TENANT_KEY)),
    warm=st.booleans(),
    data=st.data(),
)
def test_a_paced_key_never_runs_faster_than_its_limit_under_crashes_stale_workers_and_copies(
    config: WorldConfig, mode: str, key: str, warm: bool, data: st.DataObject
) -> None:
    with mock_aws():
        # GIVEN a paced world in either mode (claim mode on the function or on workers of several
        # slots), its limit on the group or on a tenant two groups share, and its jobs
        limit = data.draw(limits(key))
        workload = data.draw(workloads(max_jobs=4, max_times=3, seq=mode == "state", tenants=True))
        world = paced_world(config, mode, workload, limit, warm=warm)
        # WHEN Hypothesis plays a schedule of workers, faults, sends, time and an operator's controls,
        # and the world settles
        # THEN no window between two takes of a key holds more than burst + jobs / per x T tokens, no
        # run started without its token, a wait cost no attempt, SQS's own rule never fired; and the
        # mode's and steering's invariants hold
        play(world, data, f"pace ({mode})")


@pytest.mark.parametrize("mode", ["claim", "state"])
@pytest.mark.parametrize("control", ["unpaced", "loose"])
def test_the_pace_invariants_catch_a_runtime_that_does_not_pace_or_paces_too_loosely(
    mode: str, control: str
) -> None:
    with mock_aws():
        # GIVEN a group of three jobs on a queue paced at one job per 30 s (burst 1), its runtime given
        # no pace store, or one whose burst is 3
        limit = PaceLimit(jobs=1, period_seconds=30, burst=1)
        specs = tuple(JobSpec(f"g0j{j}", "ws#0", tenant="t0") for j in range(3))
        world = paced_world(
            WorldConfig(), mode, Workload(specs, tuple(Send(s, s.job_id) for s in specs)), limit, warm=False
        )
        world.paced = control != "unpaced"
        world.store_limit = replace(limit, burst=3)
        try:
            # WHEN the world settles (one invocation runs the three at once)
            world.settle()
            found = pace_invariants.check(world)
        finally:
            world.close()
        # THEN the unpaced runs have no token; the loose store's takes break the bound
        expected = "no token" if control == "unpaced" else "more than burst 1"
        assert found and all(expected in violation for violation in found), found


def paced_world(config: WorldConfig, mode: str, workload: Workload, limit: PaceLimit, *, warm: bool) -> Paced:
    """A paced, steered world of ``mode``: ``claim``, ``workers`` (two slots; three when ``warm``: a
    worker slot's store is always warm), ``state``."""
    if mode == "state":
        return PacedStateWorld(config, workload, limit, warm=warm)
    if mode == "workers":
        return PacedWorkerWorld(worker_config(config, 2 + int(warm)), workload, limit)
    return PacedClaimWorld(config, workload, limit, warm=warm)


def play(world: Paced, data: st.DataObject, name: str) -> None:
    """Play, settle and check a paced world with pacing's invariants, steering's and its mode's."""
    if isinstance(world, PacedStateWorld):
        play_and_check(
            world,
            data.draw,
            name=name,
            while_parked=state_invariants.while_parked,
            check=lambda w: (
                state_invariants.check(w) + steering_invariants.check(w) + pace_invariants.check(w)
            ),
            settle_steps=20_000,
        )
        return
    assert isinstance(world, PacedClaimWorld | PacedWorkerWorld)
    play_and_check(
        world,
        data.draw,
        name=name,
        while_parked=claim_invariants.while_parked,
        check=lambda w: _claim_invariants(w) + steering_invariants.check(w) + pace_invariants.check(w),
        settle_steps=20_000,
    )


def _claim_invariants(world: PacedClaimWorld | PacedWorkerWorld) -> list[str]:
    if isinstance(world, PacedWorkerWorld):
        return worker_invariants.check(world)
    return claim_invariants.check(world)
