"""Container workers under chaos: processes of several slots crashing at any point, poison jobs among
healthy ones, stale processes, faults at any call.

Hypothesis draws the world (claim mode; 2 or 3 slots per process, up to ``max_workers`` processes),
the jobs (poison ones among them: each kills its worker on every run) and every step of the
schedule: a slot starting a batch (a held group, or a receive split by group), a slot going on with
or without a fault, a process's heartbeat round, a process killed, sends, the clock moving on, an
operator resuming a parked group. The world settles without faults, every parked group is resumed,
and :mod:`.worker_invariants` checks claim mode's invariants and the crash rule of workers.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from moto import mock_aws

from . import claim_invariants, worker_invariants
from .scenario import play_and_check
from .strategies import budget, configs
from .worker_world import WorkerWorld, worker_config
from .workload import Workload, workloads
from .world import WorldConfig


@budget(ci_examples=4)
@given(config=configs(), slots=st.sampled_from((2, 3)), workload=workloads(poison=True), data=st.data())
def test_a_crash_of_a_worker_of_several_slots_costs_only_its_own_job_an_attempt(
    config: WorldConfig, slots: int, workload: Workload, data: st.DataObject
) -> None:
    with mock_aws():
        # GIVEN a world of container workers of several slots and the jobs its producers send
        world = WorkerWorld(worker_config(config, slots), workload)
        # WHEN Hypothesis plays a schedule of slots, heartbeats, kills, faults, sends and time
        # THEN every job is done, dead-lettered, or kept while its group is parked; and once operators
        # resumed every parked group, no healthy job died or lost an attempt for a slot-mate's crash,
        # every poison job died of its own, and claim mode's invariants hold
        play_and_check(
            world,
            data.draw,
            name="worker",
            while_parked=claim_invariants.while_parked,
            check=worker_invariants.check,
            settle_steps=20_000,
        )
