"""What the chaos suite found, each kept as a regular example (played step by step, no Hypothesis).

1. **A resumed group's wake-up message was dead-lettered by SQS** when the replay of its kept jobs
   crashed the worker a few times in a row (found by ``test_claim_mode_...``: PARK, batch size 1,
   ``max_attempts`` 3, kept jobs that crash their worker; SQS's rule at the least allowed value, 6).
   The wake-up was replaced by a fresh one only at the end of a batch, which a crashed invocation
   never reaches, so every crash of the replay cost it a receive, and the group was left RESUMING
   with no trigger and its last kept job never run. Fixed: a worn wake-up is replaced before
   anything runs.
"""

from __future__ import annotations

import pytest
from moto import mock_aws

from constructs_fifo.runtime.constants import DeadJobPolicy

from .claim_world import ClaimWorld
from .state_world import StateWorld
from .workload import JobSpec, Send, Workload
from .world import ChaosWorld, WorldConfig


def _workload(*specs: JobSpec) -> Workload:
    return Workload(specs, tuple(Send(spec, spec.job_id) for spec in specs))


class _CountedCrashStateWorld(StateWorld):
    """State mode with SQS's rule at the least value, however often the invocations crash."""

    crashes_count = True


@pytest.mark.parametrize("world_class", [ClaimWorld, _CountedCrashStateWorld], ids=["claim", "state"])
def test_a_replay_that_crashes_its_worker_again_and_again_keeps_its_wake_up_message(
    world_class: type[ChaosWorld],
) -> None:
    with mock_aws():
        # GIVEN group ws#1 parked at P (permanent), with three kept jobs that each crash their worker
        # twice, batch size 1 and max_attempts 3 (SQS's rule at the least allowed value: 6 receives)
        specs = [JobSpec("P", "ws#1", "permanent")] + [JobSpec(f"K{i}", "ws#1", "crash", 2) for i in range(3)]
        config = WorldConfig(policy=DeadJobPolicy.PARK, batch_size=1, max_attempts=3)
        world = world_class(config, _workload(*specs))
        try:
            world.settle()
            assert world.parked_groups() == ["ws#1"]
            # WHEN an operator fixes P and resumes the group, and the queue drains
            world.resume("ws#1")
            world.settle()
            # THEN SQS dead-lettered nothing, no group is parked or resuming, and every job is done
            assert world.sqs_dead() == []
            assert world.operators().list_groups() == []
            done = {run.job_id for run in world.history.runs if run.completed}
            assert done == {"P", "K0", "K1", "K2"}
        finally:
            world.close()
