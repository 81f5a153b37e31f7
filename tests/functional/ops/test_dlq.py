"""dlq.py: redrive keeps each group's order, never loses a message, never duplicates one; drop; peek.

On in-process moto with the emulator's fidelity patches (5-minute deduplication that survives a
delete, FIFO receive order, StartMessageMoveTask).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from constructs_fifo.ops.dead_letters import Peek
from constructs_fifo.ops.dlq import list_dead_letters, move_tasks, plan_drop, plan_redrive
from constructs_fifo.ops.errors import OperationRefusedError
from constructs_fifo.runtime.claim.store import ClaimStore
from constructs_fifo.runtime.constants import DeadJobPolicy
from constructs_fifo.runtime.exceptions import PermanentJobError
from constructs_fifo.runtime.job import Job
from constructs_fifo.stacks.counters import queue_counts

from ..ops_world import World, world
from ..runtime_harness import TABLE_NAME


@pytest.fixture
def claim_world() -> Iterator[World]:
    yield from world(claim_mode=True)


@pytest.fixture
def state_world() -> Iterator[World]:
    yield from world(claim_mode=False)


def _poison(job: Job) -> None:
    raise PermanentJobError(f"job {job.id} cannot apply")


def _dead_letters(ops: World) -> None:
    for job_id in ("g1", "g2", "g3"):
        ops.send_dead("ws#g", job_id)
    ops.send_dead("ws#h", "h1")


def test_a_group_redrive_sends_its_jobs_in_order_and_leaves_the_others(claim_world: World) -> None:
    # GIVEN three dead jobs of ws#g and one of ws#h in the DLQ
    _dead_letters(claim_world)
    # WHEN ws#g is redriven
    plan = plan_redrive(claim_world.ops(), group="ws#g")
    try:
        plan.apply()
    finally:
        plan.close()
    # THEN its jobs are on the queue in their order and group; ws#h's job is in the DLQ, visible again
    assert claim_world.queued() == [("ws#g", "g1"), ("ws#g", "g2"), ("ws#g", "g3")]
    assert [m.job_id for m in list_dead_letters(claim_world.ops()).letters] == ["h1"]
    assert queue_counts(claim_world.sqs, claim_world.dlq_url).visible == 1


def test_a_crash_between_send_and_delete_neither_loses_nor_duplicates(
    claim_world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a dead job, and a redrive whose DLQ delete fails after its send (a crash between them)
    claim_world.send_dead("ws#g", "g1")

    def crash(self: Peek, letter: object) -> None:
        raise RuntimeError("crashed before the delete")

    monkeypatch.setattr(Peek, "delete", crash)
    plan = plan_redrive(claim_world.ops(), job="g1")
    with pytest.raises(RuntimeError):
        try:
            plan.apply()
        finally:
            plan.close()
    monkeypatch.undo()
    # THEN the job is still in the DLQ (nothing lost)
    assert [m.job_id for m in list_dead_letters(claim_world.ops()).letters] == ["g1"]

    # WHEN the redrive runs again THEN SQS collapses the second send (same deduplication id): one copy
    plan = plan_redrive(claim_world.ops(), job="g1")
    try:
        plan.apply()
    finally:
        plan.close()
    assert claim_world.queued() == [("ws#g", "g1")]
    assert list_dead_letters(claim_world.ops()).letters == []


def test_a_whole_dlq_redrive_is_a_move_task(state_world: World) -> None:
    # GIVEN dead jobs of two groups
    _dead_letters(state_world)
    # WHEN the whole DLQ is redriven
    plan = plan_redrive(state_world.ops())
    try:
        done = plan.apply()
    finally:
        plan.close()
    # THEN a move task moved every message, each group in order
    assert "message move task" in done[-1]
    assert "taskHandle" in plan.details
    deadline = time.monotonic() + 10
    while move_tasks(state_world.ops())[0]["Status"] == "RUNNING" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert move_tasks(state_world.ops())[0]["Status"] == "COMPLETED"
    moved = state_world.queued()
    assert [job for group, job in moved if group == "ws#g"] == ["g1", "g2", "g3"]
    assert sorted(moved) == [("ws#g", "g1"), ("ws#g", "g2"), ("ws#g", "g3"), ("ws#h", "h1")]
    assert queue_counts(state_world.sqs, state_world.dlq_url).total == 0


def test_a_succeeded_job_is_refused_unless_forced(claim_world: World) -> None:
    # GIVEN a DLQ message of a job whose claim SUCCEEDED
    claim_world.send_dead("ws#g", "g1")
    store = ClaimStore(TABLE_NAME, claim_world.dynamodb)
    claim = store.claim(
        Job(id="g1", group="ws#g", type="t", payload={}, attempt=1, message_id="m", body={}), lease_ms=60_000
    )
    assert claim.owner is not None and store.complete("g1", claim.owner)
    # WHEN it is redriven THEN it is refused, and the DLQ message is visible again
    with pytest.raises(OperationRefusedError, match="SUCCEEDED claim"):
        plan_redrive(claim_world.ops(), job="g1", reset=True)
    assert queue_counts(claim_world.sqs, claim_world.dlq_url).visible == 1
    # WHEN forced THEN it goes, with a note that it will be skipped
    plan = plan_redrive(claim_world.ops(), job="g1", force=True)
    try:
        plan.apply()
    finally:
        plan.close()
    assert any("skipped as a duplicate" in note for note in plan.notes)
    assert claim_world.queued() == [("ws#g", "g1")]


def test_state_mode_refuses_to_forget_a_job_whose_seq_was_given_up(state_world: World) -> None:
    # GIVEN a state-mode group that died at seq 1 under CONTINUE and went on to seq 2
    state_world.harness.policy = DeadJobPolicy.CONTINUE
    state_world.harness.behaviour["s1"] = _poison
    state_world.send_seq("ws#s", ("s0", 0), ("s1", 1), ("s2", 2))
    state_world.drain()
    # WHEN its dead job is redriven with --reset THEN it is refused: its seq was given up
    with pytest.raises(OperationRefusedError, match="at or below group 'ws#s'"):
        plan_redrive(state_world.ops(), job="s1", reset=True)


def test_drop_deletes_only_that_jobs_messages(claim_world: World) -> None:
    # GIVEN dead jobs of two groups WHEN one job is dropped
    _dead_letters(claim_world)
    plan = plan_drop(claim_world.ops(), "g2")
    try:
        plan.apply()
    finally:
        plan.close()
    # THEN only its message is gone
    assert sorted(m.job_id or "" for m in list_dead_letters(claim_world.ops()).letters) == ["g1", "g3", "h1"]
    with pytest.raises(OperationRefusedError, match="holds no message of job 'g2'"):
        plan_drop(claim_world.ops(), "g2")
