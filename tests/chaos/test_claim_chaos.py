"""Claim mode under chaos: several workers, faults at any call, crashes, stale workers, copies.

Hypothesis draws the world (policy, attempts, batch size, timeouts, workers, fault rate), the jobs
and their sends (:mod:`.workload`), then every step of the schedule: which worker goes on and with
which fault, new invocations, sends, the clock moving on, operators resuming parked groups. The
world then settles without faults, every parked group is resumed, and :mod:`.claim_invariants`
checks what happened against what was sent.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from moto import mock_aws

from . import claim_invariants
from .claim_world import ClaimWorld
from .scenario import play_and_check
from .strategies import budget, configs
from .workload import Workload, workloads
from .world import WorldConfig


@budget(ci_examples=20)
@given(config=configs(), workload=workloads(), data=st.data())
def test_claim_mode_keeps_order_runs_once_outside_the_window_and_loses_nothing(
    config: WorldConfig, workload: Workload, data: st.DataObject
) -> None:
    with mock_aws():
        # GIVEN a world in claim mode and the jobs its producers send
        world = ClaimWorld(config, workload)
        # WHEN Hypothesis plays a schedule of workers, faults, sends and time, and the world settles
        # THEN every job is done, dead-lettered, or kept while its group is parked; and once operators
        # resumed every parked group, no invariant of claim mode is violated
        play_and_check(
            world,
            data.draw,
            name="claim",
            while_parked=claim_invariants.while_parked,
            check=claim_invariants.check,
        )
