"""Regular examples of what the chaos suite checks at random, played step by step.

1. Powertools' stale-lease overwrite (its idempotency layer writes success with an
   UpdateItem and failure with a DeleteItem, both without a condition, so a worker whose lease
   expired overwrites or deletes the record of the worker that took over) cannot happen in claim
   mode: every write after the claim is fenced on the owner token. A negative control plays the
   same schedule with an unfenced store and shows the invariants catch the overwrite.
2. A lost state race never commits a half-applied batch: the worker that lost commits nothing, not
   even the jobs of its batch that did apply, and not the park items of its transaction.
3. AWS's FIFO rule (``constructs_fifo/local/emulator/fifo_rule.py``): a group's front received again
   while a later record of it is still in flight (here a visibility change that applied to the front
   only) is run again alone; the later record runs after it, once, in order.
4. A container worker of two slots running a poison job beside a healthy one of another group, round
   after round, each round a new process: the healthy job loses no attempt and succeeds; the poison
   dies of its own crashes (``WorkerCrashedError``). A negative control plays the same rounds on
   workers without the run gate (every claim counted, as before the crash rule) and shows the
   invariants catch the healthy job dead-lettered beside the poison.
5. Steering on a worker of two slots: a cancel of a running job (``STOPPED``, running) reaches its run
   at the next heartbeat (``context.cancelled``), its SUCCEEDED write is refused, its record deleted,
   nothing dead-lettered; the job beside it in the other slot is untouched.
6. A hold between a batch's read of its group and its job's start (claim mode, PARK): that batch's
   jobs may still start, none sent after it does until the release; then it runs, in order.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from moto import mock_aws

from constructs_fifo.runtime.claim.store import ClaimStore
from constructs_fifo.runtime.constants import DeadJobPolicy

from . import claim_invariants, state_invariants, steering_invariants, worker_invariants
from .claim_world import ClaimWorld
from .faults import Fault
from .state_world import StateWorld
from .steering_world import SteeredClaimWorld, SteeredWorkerWorld
from .worker_world import GATE_POINT, WorkerWorld
from .workload import POISON_TIMES, JobSpec, Send, Workload
from .world import CLAIMS, GROUPS, WorldConfig

#: Visibility 120 s, function timeout 20 s: past 121 s the message is back and every lease is over.
CONFIG = WorldConfig(timeout_s=20, visibility_s=120, max_workers=2)
PAST_VISIBILITY = CONFIG.visibility_s + 1


def _workload(*specs: JobSpec) -> Workload:
    return Workload(specs, tuple(Send(spec, spec.job_id) for spec in specs))


def _refused(world: ClaimWorld | StateWorld, worker: str, table: str) -> list[str]:
    """The calls of ``worker`` on ``table`` that the table refused (a failed condition)."""
    return [r.point.label for r in world.history.refused if r.worker == worker and r.point.target == table]


# --- 1. the stale lease ----------------------------------------------------------------------------


def _stale_worker_then_takeover(world: ClaimWorld, stop_stale_at: str) -> tuple[Any, Any]:
    """Worker A takes job j and stops at ``stop_stale_at``; its lease and j's visibility expire; worker
    B receives j again and stops after its claim. Returns (A, B)."""
    world.send_next()
    stale = world.invoke()
    assert stale is not None
    world.advance(stale, stop_stale_at)
    world.clock.advance(PAST_VISIBILITY)
    takeover = world.invoke()
    assert takeover is not None
    world.advance(takeover, "job.start")
    return stale, takeover


def test_a_stale_worker_cannot_overwrite_the_success_of_the_worker_that_took_over() -> None:
    with mock_aws():
        # GIVEN worker A ran job j and stopped before its SUCCEEDED write; its lease expired, and
        # worker B received j again, took the claim over, ran it and committed
        world = ClaimWorld(CONFIG, _workload(JobSpec("j", "ws#1")))
        try:
            stale, takeover = _stale_worker_then_takeover(world, "job.end")
            world.finish(takeover)
            took_over = world.claim_item("j")
            # WHEN A goes on and writes SUCCEEDED
            world.finish(stale)
            # THEN A's write was refused and B's record stands as B wrote it; j's effect ran twice
            # (the documented window: A's run was never committed) and every invariant holds
            assert _refused(world, stale.name, CLAIMS) == ["dynamodb.UpdateItem"]
            assert world.claim_item("j") == took_over
            assert took_over["status"]["S"] == "SUCCEEDED"
            assert [(run.worker, run.completed) for run in world.history.runs_of("j")] == [
                (stale.name, True),
                (takeover.name, True),
            ]
            world.settle()
            assert claim_invariants.check(world) == []
        finally:
            world.close()


@pytest.mark.parametrize(("kind", "times"), [("transient", 1), ("permanent", 0)])
def test_a_stale_worker_whose_job_fails_cannot_touch_the_claim_of_the_worker_that_took_over(
    kind: str, times: int
) -> None:
    with mock_aws():
        # GIVEN worker A claimed job j and stopped before running it; its lease expired, and worker B
        # received j again and holds a live claim on it (j fails on A's run: transiently, or for good)
        world = ClaimWorld(CONFIG, _workload(JobSpec("j", "ws#1", kind, times)))
        try:
            stale, _ = _stale_worker_then_takeover(world, "job.start")
            in_flight = world.claim_item("j")
            # WHEN A runs j, which fails, and A writes FAILED (or DEAD)
            world.finish(stale)
            # THEN A's write was refused and B's live claim is untouched (Powertools would delete it)
            assert _refused(world, stale.name, CLAIMS) == ["dynamodb.UpdateItem"]
            assert world.claim_item("j") == in_flight
            assert in_flight["owner"] != {} and in_flight["status"]["S"] == "IN_FLIGHT"
            world.settle()
            assert claim_invariants.check(world) == []
        finally:
            world.close()


class UnfencedClaimWorld(ClaimWorld):
    """A negative control: its SUCCEEDED write has no condition, as Powertools' has none."""

    def claim_store(self) -> ClaimStore:
        return UnfencedClaimStore(CLAIMS, self.dynamodb, ttl_seconds=86_400, clock=self.clock)


class UnfencedClaimStore(ClaimStore):
    def __init__(self, table_name: str, client: Any, **options: Any) -> None:
        super().__init__(table_name, client, **options)
        self._unfenced_client = client

    def complete(
        self,
        job_id: str,
        owner: str,
        *,
        result_json: str | None = None,
        result_not_stored: str | None = None,
        result_pointer: str | None = None,
    ) -> bool:
        self._unfenced_client.update_item(
            TableName=self.table_name,
            Key={"id": {"S": job_id}},
            UpdateExpression="SET #status = :succeeded, #owner = :owner",
            ExpressionAttributeNames={"#status": "status", "#owner": "owner"},
            ExpressionAttributeValues={":succeeded": {"S": "SUCCEEDED"}, ":owner": {"S": owner}},
        )
        return True


def test_negative_control_an_unfenced_success_write_overwrites_the_takeover_and_the_invariants_say_so() -> (
    None
):
    with mock_aws():
        # GIVEN the schedule of the first test, with a SUCCEEDED write that has no condition
        world = UnfencedClaimWorld(CONFIG, _workload(JobSpec("j", "ws#1")))
        try:
            stale, takeover = _stale_worker_then_takeover(world, "job.end")
            world.finish(takeover)
            took_over = world.claim_item("j")
            # WHEN A goes on and writes SUCCEEDED
            world.finish(stale)
            world.settle()
            # THEN A overwrote B's record, and the invariants report the job committed twice
            assert world.claim_item("j")["owner"] != took_over["owner"]
            assert any("committed 2 times" in violation for violation in claim_invariants.check(world))
        finally:
            world.close()


# --- 2. the lost state race ------------------------------------------------------------------------


def test_a_worker_that_lost_the_state_race_commits_nothing_of_its_half_applied_batch() -> None:
    with mock_aws():
        # GIVEN group ws#1 = [a, b, c], c failing on its first run; worker A read the group, applied
        # a and b, c failed, and A stopped before its commit of [a, b]; the batch's visibility
        # expired and worker B received it again
        specs = (JobSpec("a", "ws#1"), JobSpec("b", "ws#1"), JobSpec("c", "ws#1", "transient", 1))
        world = StateWorld(CONFIG, _workload(*specs))
        try:
            for _ in specs:
                world.send_next()
            stale = world.invoke()
            assert stale is not None
            world.advance(stale, "dynamodb.PutItem", GROUPS)
            world.clock.advance(PAST_VISIBILITY)
            takeover = world.invoke()
            assert takeover is not None
            # WHEN B applies [a, b, c] and commits, then A tries to commit
            world.finish(takeover)
            world.finish(stale)
            # THEN A's write was refused: the only version ever committed is B's whole batch (B's run
            # marker, its records having been received before, went to the group's run item)
            assert _refused(world, stale.name, GROUPS) == ["dynamodb.PutItem"]
            assert [(s.version, s.log, s.worker) for s in world.history.states] == [
                (1, ("a", "b", "c"), takeover.name),
            ]
            world.settle()
            assert world.committed_log("ws#1") == ["a", "b", "c"]
            assert state_invariants.check(world) == []
        finally:
            world.close()


def test_a_worker_that_lost_the_state_race_keeps_none_of_the_records_of_the_group_it_would_park() -> None:
    with mock_aws():
        # GIVEN group ws#1 = [a, P, c] under PARK, P permanent; worker A applied a, P died, and A
        # stopped before its one transaction (state, park header, kept P and c); worker B received
        # the batch again
        specs = (JobSpec("a", "ws#1"), JobSpec("P", "ws#1", "permanent"), JobSpec("c", "ws#1"))
        world = StateWorld(
            WorldConfig(policy=DeadJobPolicy.PARK, timeout_s=20, visibility_s=120), _workload(*specs)
        )
        try:
            for _ in specs:
                world.send_next()
            stale = world.invoke()
            assert stale is not None
            world.advance(stale, "dynamodb.TransactWriteItems", GROUPS)
            world.clock.advance(PAST_VISIBILITY)
            takeover = world.invoke()
            assert takeover is not None
            # WHEN B parks the group first, then A tries its transaction
            world.finish(takeover)
            world.finish(stale)
            # THEN A's transaction was cancelled whole: P and c are kept once (B's), the state is B's
            # commit (its run marker went to the group's run item)
            assert _refused(world, stale.name, GROUPS) == ["dynamodb.TransactWriteItems"]
            operators = world.operators()
            assert [k.record["body"] for k in operators.kept("ws#1")] == [specs[1].body(), specs[2].body()]
            assert [(s.version, s.log) for s in world.history.states] == [(1, ("a",))]
            # AND once the group is resumed (P fixed), every job is applied once, in order
            world.settle()
            world.resume_all()
            assert world.committed_log("ws#1") == ["a", "P", "c"]
            assert state_invariants.check(world) == []
        finally:
            world.close()


# --- 3. AWS's FIFO rule: a group's front comes back while a later record is still in flight ---------


@pytest.mark.parametrize("world_class", [ClaimWorld, StateWorld], ids=["claim", "state"])
def test_a_groups_front_received_again_while_a_later_record_is_in_flight_keeps_order_and_runs_once(
    world_class: type[ClaimWorld] | type[StateWorld],
) -> None:
    with mock_aws():
        # GIVEN group ws#1 = [a (fails once), b] received together by worker A, which reports both
        # with a backoff; the visibility change applies to a only (a partial failure), so b stays in
        # flight for the queue's whole visibility timeout while a comes back after its backoff
        specs = (JobSpec("a", "ws#1", "transient", 1), JobSpec("b", "ws#1"))
        world = world_class(CONFIG, _workload(*specs))
        try:
            world.send_next()
            world.send_next()
            first = world.invoke()
            assert first is not None
            world.advance(first, "sqs.ChangeMessageVisibilityBatch")
            world.step(first, Fault.PARTIAL_FAILURE)
            world.finish(first)
            # WHEN the backoff has passed and the queue is received again
            world.clock.advance(10)
            second = world.invoke()
            # THEN AWS's rule returns the group's front alone (the stricter rule returned nothing)
            assert second is not None
            assert [_body_id(m.body) for m in second.meta["batch"]] == ["a"]
            assert (
                world.history.events["fronts received while a later record of the group was in flight"] == 1
            )
            # AND once everything drains, a and b ran once each, in order, and no invariant broke
            world.finish(second)
            world.settle()
            completed = [run.job_id for run in world.history.runs if run.completed]
            assert completed == ["a", "b"]
            violations = (
                claim_invariants.check(world)
                if isinstance(world, ClaimWorld)
                else state_invariants.check(world)
            )
            assert violations == []
        finally:
            world.close()


def _body_id(body: str) -> str:
    return str(json.loads(body)["jobId"])


# --- 4. a crash of a worker of several slots --------------------------------------------------------


class UngatedWorkerWorld(WorkerWorld):
    """A negative control: the worker before the crash rule (no run gate, no shared claims)."""

    gated = False


def _poison_beside_a_healthy_job(world: WorkerWorld, rounds: int) -> None:
    """Round after round a new two-slot process runs both groups side by side until the poison crashes
    it (a slot waiting at the gate waits), then a visibility timeout passes."""
    for _ in range(rounds):
        process = world.new_process()
        for _slot in range(2):
            world.start(process)
        while waiting := world.scheduler.waiting():
            poison = [w for w in waiting if w.point is not None and w.point.target == "P"]
            ready = [
                w for w in waiting if w.point is not None and w.point.label not in ("job.start", GATE_POINT)
            ]
            world.step(poison[0] if poison and not ready else (ready or waiting)[0])
        world.clock.advance(PAST_VISIBILITY)


@pytest.mark.parametrize(
    ("world_class", "healthy_dead"),
    [(WorkerWorld, False), (UngatedWorkerWorld, True)],
    ids=["gated", "ungated"],
)
def test_a_poison_job_on_a_worker_of_two_slots_kills_no_healthy_job_beside_it(
    world_class: type[WorkerWorld], healthy_dead: bool
) -> None:
    with mock_aws():
        # GIVEN a poison job P (it kills its worker on every run) and a healthy job H of another group,
        # received together by workers of two slots, max_attempts 2
        specs = (JobSpec("P", "ws#1", "crash", POISON_TIMES), JobSpec("H", "ws#2"))
        config = WorldConfig(max_attempts=2, timeout_s=20, visibility_s=120, max_workers=1, slots=2)
        world = world_class(config, _workload(*specs))
        try:
            world.send_next()
            world.send_next()
            # WHEN P crashes its process four times, H running beside it when the rule lets it
            _poison_beside_a_healthy_job(world, rounds=4)
            world.settle(max_steps=20_000)
            # THEN P is dead of its own crashes; H succeeded on its first counted attempt (gated), or
            # was dead-lettered beside P, and the invariants say so (ungated)
            assert ("P", "ATTEMPTS_EXHAUSTED") in world.dead_letters()
            assert world.dead_letter_error_types["P"] == ["WorkerCrashedError"]
            violations = worker_invariants.healthy_deaths(world)
            if healthy_dead:
                assert ("H", "ATTEMPTS_EXHAUSTED") in world.dead_letters()
                assert violations != []
            else:
                assert world.claim_status("H") == "SUCCEEDED"
                assert world.claim_item("H")["attempts"] == {"N": "1"}
                assert worker_invariants.check(world) == []
        finally:
            world.close()


# --- 5. and 6. steering ------------------------------------------------------------------------------


def test_a_cancel_of_a_job_running_on_a_worker_reaches_its_run_and_leaves_its_slot_mate_alone() -> None:
    with mock_aws():
        # GIVEN a worker of two slots running job a (ws#1) and job b (ws#2), each at its start
        config = WorldConfig(timeout_s=20, visibility_s=120, max_workers=1, slots=2)
        world = SteeredWorkerWorld(config, _workload(JobSpec("a", "ws#1"), JobSpec("b", "ws#2")))
        try:
            world.send_next()
            world.send_next()
            process = world.new_process()
            first, second = world.start(process), world.start(process)
            assert first is not None and second is not None
            world.advance(first, "job.start")
            world.advance(second, "job.start")
            # WHEN an operator cancels a, and the worker's heartbeat beats
            world.cancel("a")
            world.beat(process)
            # THEN the cancel said a was running, a's run is told (its heartbeat stale), b's is not
            assert [(r.job_id, r.outcome.value, r.running) for _, r in world.cancels] == [
                ("a", "STOPPED", True)
            ]
            assert [heartbeat.stale() for heartbeat in process.heartbeats] == [True, False]
            # AND when both finish, a stands cancelled (its success refused), b succeeded, nothing is
            # dead-lettered, and every invariant holds
            world.settle()
            assert (world.claim_status("a"), world.claim_status("b")) == ("CANCELLED", "SUCCEEDED")
            assert world.dead_letters() == []
            assert worker_invariants.check(world) + steering_invariants.check(world) == []
        finally:
            world.close()


def test_a_hold_lets_the_batch_that_read_its_group_finish_and_starts_nothing_after_it() -> None:
    with mock_aws():
        # GIVEN claim mode under PARK, group ws#1's jobs a and b received in one batch, whose worker read
        # the group's header and waits at a's start
        config = WorldConfig(policy=DeadJobPolicy.PARK, timeout_s=20, visibility_s=120)
        specs = (JobSpec("a", "ws#1"), JobSpec("b", "ws#1"), JobSpec("c", "ws#1"))
        world = SteeredClaimWorld(config, _workload(*specs))
        try:
            world.send_next()
            world.send_next()
            batch = world.invoke()
            assert batch is not None
            world.advance(batch, "job.start")
            # WHEN an operator holds ws#1, the batch finishes, c is sent and the queue drains
            world.hold("ws#1")
            world.finish(batch)
            world.settle()
            # THEN a and b ran (the batch that read the group before the hold), c did not: it is kept
            assert [run.job_id for run in world.history.runs] == ["a", "b"]
            assert world.kept_job_ids("ws#1") == ["c"]
            # AND once released, c runs after them, and every invariant holds
            world.release_all()
            assert [run.job_id for run in world.history.runs] == ["a", "b", "c"]
            assert claim_invariants.check(world) + steering_invariants.check(world) == []
        finally:
            world.close()
