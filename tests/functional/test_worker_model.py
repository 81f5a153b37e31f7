"""Model test of the worker's heartbeats: Hypothesis chooses the schedule, the real runtime runs it.

A simulated FIFO queue (:mod:`.fifo_model`: visibility, receipt handles, FIFO receive) on a fake clock
feeds worker slots built as the worker builds them (the real processor, :class:`HeartbeatClaims` on
moto's DynamoDB, :class:`WorkerHeartbeat` renewing through the model). While a job runs, Hypothesis
chooses what happens next: its worker's heartbeat ticks, the worker pauses (its renewals lost: it may
outlive its visibility and its lease), another worker receives and runs a batch, the worker dies, the
worker stops (the end of its grace period: the run interrupted, the heartbeat closed, the job running
on), or the job returns. The first worker's slot runs batch after batch (one heartbeat for the slot's
life, as the worker keeps it), ticked between batches too; then one more long-lived slot drains the
queue. The invariants:

- **no job runs twice while its worker lives and holds the claim**: when a run of a job starts, every
  other run of it still going is dead, told it is stale (``context.cancelled``), or past its lease;
- **the fence**: a job's final SUCCEEDED claim is its last run's (no stale run wrote over a later one);
- **nothing is lost**: the queue ends empty, every job SUCCEEDED or dead-lettered;
- **order holds**: a run of a job starts only once every earlier job of its group is finished;
- **an idle heartbeat is quiet**: a tick between two batches of a slot renews nothing and writes nothing.

Run with more examples: ``CONSTRUCTS_FIFO_HYPOTHESIS_PROFILE=chaos`` (``make chaos``).
"""

from __future__ import annotations

import io
import json
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import boto3
from hypothesis import example, given
from hypothesis import strategies as st
from moto import mock_aws
from support.budget import slow_property

from constructs_fifo.runtime.claim.store import ClaimStore
from constructs_fifo.runtime.constants import STATUS_DEAD, STATUS_SUCCEEDED, DeadJobPolicy
from constructs_fifo.runtime.entrypoint import build_processor
from constructs_fifo.runtime.job import Job
from constructs_fifo.runtime.observability import JobLogger
from constructs_fifo.runtime.settings.config import RuntimeConfig
from constructs_fifo.worker.heartbeat import WorkerHeartbeat
from constructs_fifo.worker.lent_claims import HeartbeatClaims

from .fifo_model import Crash, FifoModel
from .runtime_harness import DLQ_NAME, GROUP_TABLE_NAME, REGION, TABLE_NAME, FakeClock, body, create_tables

VISIBILITY_S = 30
INTERVAL_S = 10
MAX_ATTEMPTS = 6
#: What may happen while a job runs; a pause of one visibility timeout lands on the edge where the
#: records are visible again and the lease is still live (the claim's conflict), so it is drawn often.
ACTIONS = st.sampled_from(
    [
        ("tick", 0.0),
        ("tick", 0.0),
        ("pause", INTERVAL_S),
        ("pause", VISIBILITY_S),
        ("pause", VISIBILITY_S),
        ("pause", 2.5 * VISIBILITY_S),
        ("other", 0.0),
        ("other", 0.0),
        ("die", 0.0),
        ("stop", 0.0),
        ("finish", 0.0),
    ]
)


class ModelClient:
    """The SQS client a slot gets: visibility changes go to the model (refused for a receipt that is
    not the message's latest, or no longer in flight, as SQS refuses them), sends to moto's DLQ."""

    def __init__(self, model: FifoModel, real: Any) -> None:
        self._model = model
        self._real = real

    def change_message_visibility_batch(self, *, QueueUrl: str, Entries: Sequence[Any]) -> dict[str, Any]:  # noqa: N803
        now = self._model.clock()
        failed = []
        for entry in Entries:
            held = [
                m for m in self._model.messages if m.receipt == entry["ReceiptHandle"] and m.visible_at > now
            ]
            if not held:
                failed.append({"Id": entry["Id"], "Code": "ReceiptHandleIsInvalid", "SenderFault": True})
            for message in held:
                message.visible_at = now + entry["VisibilityTimeout"]
        return {"Successful": [], "Failed": failed}

    def send_message(self, **params: Any) -> Any:
        return self._real.send_message(**params)


@dataclass
class Run:
    job_id: str
    worker: Slot
    owner: str
    context: Any
    lease_end_ms: int


@dataclass
class Slot:
    heartbeat: WorkerHeartbeat
    processor: Any
    stream: io.StringIO
    dead: bool = False
    stopped: bool = False


@dataclass
class World:
    jobs: list[tuple[str, str]]  # (group, job id) in send order
    actions: deque[tuple[str, float]]
    clock: FakeClock = field(default_factory=FakeClock)
    violations: list[str] = field(default_factory=list)
    runs: list[Run] = field(default_factory=list)
    active: list[Run] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.dynamodb = boto3.client("dynamodb", region_name=REGION)
        create_tables(self.dynamodb)
        self.sqs = boto3.client("sqs", region_name=REGION)
        self.dlq_url = self.sqs.create_queue(QueueName=DLQ_NAME, Attributes={"FifoQueue": "true"})["QueueUrl"]
        self.model = FifoModel(
            self.clock, max_receive_count=1000, batch_size=3, visibility_timeout_seconds=VISIBILITY_S
        )
        self.store = ClaimStore(TABLE_NAME, self.dynamodb, clock=self.clock)
        self.config = RuntimeConfig(
            TABLE_NAME,
            self.model.url,
            visibility_timeout_seconds=VISIBILITY_S,
            max_attempts=MAX_ATTEMPTS,
            on_dead_job=DeadJobPolicy.CONTINUE,
            group_table=GROUP_TABLE_NAME,
            dead_letter_queue_url=self.dlq_url,
            backoff_base_seconds=1,
        )
        self.contexts: dict[int, Slot] = {}
        for group, job_id in self.jobs:
            self.model.send(group, body(job_id), job_id)

    def slot(self) -> Slot:
        client: Any = ModelClient(self.model, self.sqs)
        stream = io.StringIO()
        log = JobLogger("Test", stream=stream, clock=self.clock)
        heartbeat = WorkerHeartbeat(
            client,
            self.model.url,
            visibility_timeout_seconds=VISIBILITY_S,
            interval_seconds=INTERVAL_S,
            logger=log,
            queue_name="jobs.fifo",
            clock=self.clock,
            ticker=False,
        )
        claims = HeartbeatClaims(
            TABLE_NAME, self.dynamodb, clock=self.clock, max_attempts=MAX_ATTEMPTS, heartbeat=heartbeat
        )
        processor = build_processor(
            self.config,
            dynamodb_client=self.dynamodb,
            sqs_client=client,
            job_handler=self.handle,
            logger=log,
            heartbeat=heartbeat,
            claims=claims,
        )
        return Slot(heartbeat, processor, stream)

    def idle_tick(self, slot: Slot) -> None:
        """Tick a slot's heartbeat between two of its batches: nothing may be renewed or written."""
        written = slot.stream.tell()
        slot.heartbeat.tick()
        if slot.stream.tell() != written:
            self.violations.append(f"an idle heartbeat wrote {slot.stream.getvalue()[written:]!r}")

    def invoke(self, slot: Slot) -> bool:
        """One slot receives a batch and runs it as the worker does; ``False``: nothing receivable."""
        batch = self.model.receive()
        if not batch:
            return False
        context = slot.heartbeat.begin(self.clock())
        self.contexts[id(context)] = slot
        try:
            response = slot.processor.process_batch(self.model.records(batch), context)
        except Crash:
            return True  # the worker died: nothing deleted, its records come back after their visibility
        failed = {failure["itemIdentifier"] for failure in response["batchItemFailures"]}
        for message in batch:
            if message.message_id not in failed:
                self.model.delete(message.receipt)
        return True

    def handle(self, job: Job, context: Any) -> None:
        slot = self.contexts[id(context)]
        item = self.store.get(job.id) or {}
        run = Run(job.id, slot, str(item.get("owner")), context, int(item.get("lease_expires_at", 0)))
        self._check_start(job, run)
        self.runs.append(run)
        self.active.append(run)
        try:
            self._play(slot, run)
        finally:
            self.active.remove(run)

    def _check_start(self, job: Job, run: Run) -> None:
        now_ms = int(self.clock() * 1000)
        for other in self.active:
            holds = (
                not other.worker.dead
                and not other.context.cancelled.is_set()
                and other.lease_end_ms >= now_ms
            )
            if other.job_id == job.id and holds:
                self.violations.append(f"{job.id} started while a live worker held its claim")
        for group, earlier in self.jobs:
            if earlier == job.id:
                break
            status = (self.store.get(earlier) or {}).get("status")
            if group == job.group and status not in {STATUS_SUCCEEDED, STATUS_DEAD}:
                self.violations.append(f"{job.id} started before {earlier} of its group finished ({status})")

    def _play(self, slot: Slot, run: Run) -> None:
        while self.actions:
            action, seconds = self.actions.popleft()
            if action == "finish":
                return
            if action == "tick":
                slot.heartbeat.tick()
                item = self.store.get(run.job_id) or {}
                if item.get("owner") == run.owner and not slot.heartbeat.stale():
                    run.lease_end_ms = int(item.get("lease_expires_at", 0))
            elif action == "pause":
                self.clock.advance(seconds)
            elif action == "other":
                self.invoke(self.slot())
            elif action == "stop":  # the worker's stop at the end of its grace, the job running on
                slot.heartbeat.interrupt("the grace period ended with the job running")
                slot.heartbeat.close()
                slot.stopped = True
            elif action == "die":
                slot.dead = True
                raise Crash

    def drain(self) -> None:
        """One more slot, batch after batch, until the queue is empty (the clock moved to the next visible
        message)."""
        drainer = self.slot()
        for _ in range(400):
            self.idle_tick(drainer)
            if not self.invoke(drainer):
                wake = self.model.next_visible_at()
                if wake is None:
                    return
                self.clock.now = max(self.clock.now, wake) + 0.001
            self.clock.advance(0.01)
        self.violations.append(f"the queue did not drain: {self.model.messages}")

    def dead_lettered(self) -> list[str]:
        messages = self.sqs.receive_message(QueueUrl=self.dlq_url, MaxNumberOfMessages=10).get("Messages", [])
        return [json.loads(m["Body"])["jobId"] for m in messages]


@st.composite
def schedules(draw: st.DrawFn) -> tuple[list[tuple[str, str]], list[tuple[str, float]]]:
    groups = draw(st.integers(1, 3))
    jobs = [(f"g{n % groups}", f"j{n}") for n in range(draw(st.integers(1, 6)))]
    return jobs, draw(st.lists(ACTIONS, max_size=30))


#: Half the profile's examples under `make test`, all under `make chaos` (tests/support/budget.py).
_SLOW = slow_property(2)


@_SLOW
@example(([("g0", "j0")], [("pause", VISIBILITY_S), ("other", 0.0)]))  # the conflict's edge
@example(([("g0", "j0"), ("g0", "j1")], [("stop", 0.0), ("other", 0.0), ("finish", 0.0)]))  # retaken at once
@example(([("g0", "j0"), ("g0", "j1")], [("pause", 2.5 * VISIBILITY_S), ("other", 0.0), ("tick", 0.0)]))
@given(schedules())
def test_heartbeats_keep_one_live_holder_per_job_lose_nothing_and_keep_order(
    schedule: tuple[list[tuple[str, str]], list[tuple[str, float]]],
) -> None:
    jobs, actions = schedule
    with mock_aws():
        # GIVEN the jobs and the schedule Hypothesis chose, played by a first worker and those it starts
        world = World(jobs, deque(actions))
        first = world.slot()
        while world.actions and world.invoke(first):
            if first.dead or first.stopped:  # its task died or stopped: another one takes its place
                first = world.slot()
            world.idle_tick(first)
        # WHEN fresh workers drain what is left
        world.actions.clear()
        world.drain()
        # THEN no job ran while a live worker held its claim, and each started after its group's earlier jobs
        assert world.violations == []
        # AND nothing is lost: the queue is empty, each job SUCCEEDED or dead-lettered (and only those)
        assert world.model.messages == []
        claims = {job_id: world.store.get(job_id) or {} for _, job_id in jobs}
        dead = {job_id for job_id, claim in claims.items() if claim.get("status") == STATUS_DEAD}
        assert {job_id for job_id, c in claims.items() if c.get("status") == STATUS_SUCCEEDED} | dead == {
            j for _, j in jobs
        }
        assert set(world.dead_lettered()) == dead
        # AND the fence held: each SUCCEEDED claim is its job's last run's
        for job_id, claim in claims.items():
            last = [run.owner for run in world.runs if run.job_id == job_id][-1:]
            if claim.get("status") == STATUS_SUCCEEDED:
                assert [claim["owner"]] == last, job_id
