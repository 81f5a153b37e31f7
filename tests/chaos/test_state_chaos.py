"""State mode under chaos: several workers, faults at any call, crashes, stale workers, copies, seq.

Hypothesis draws the world, the jobs (a group may carry ``seq``, and then its producer sends them in
any order) and every step of the schedule, as in claim mode; the world settles without faults,
every parked group is resumed, and :mod:`.state_invariants` checks the committed states against
the fold of what was sent.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from moto import mock_aws

from . import state_invariants
from .scenario import play_and_check
from .state_world import StateWorld
from .strategies import budget, configs
from .workload import Workload, workloads
from .world import WorldConfig


@budget(ci_examples=20)
@given(config=configs(), workload=workloads(seq=True, max_times=3), data=st.data())
def test_state_mode_applies_every_transition_once_in_sequence_and_loses_nothing(
    config: WorldConfig, workload: Workload, data: st.DataObject
) -> None:
    with mock_aws():
        # GIVEN a world in state mode and the jobs its producers send (in any order, with seq)
        world = StateWorld(config, workload)
        # WHEN Hypothesis plays a schedule of workers, faults, sends and time, and the world settles
        # THEN every job is done, dead-lettered, or kept while its group is parked; and once operators
        # resumed every parked group, no invariant of state mode is violated
        play_and_check(
            world,
            data.draw,
            name="state",
            while_parked=state_invariants.while_parked,
            check=state_invariants.check,
        )
