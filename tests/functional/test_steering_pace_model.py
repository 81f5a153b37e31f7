"""Model test of pacing: Hypothesis chooses the sends (groups, tenants, copies), when invocations run and
how far the clock moves, which runs crash, and whether the runtime's process is warm; the real runtime
of each mode runs on moto, fed by the FIFO model (:mod:`.fifo_model`: receive counts, visibility, SQS's
own dead-letter rule at the 1000 receives the construct sets for a paced queue).

Properties, in both modes:

* **never faster than the limit**: over every window ``[t_i, t_j]`` between two starts of one key, at most
  ``burst + jobs / period × (t_j - t_i)`` runs of that key start (a crashed run counts: its token is spent);
* each group's jobs start in the order they were sent (a crashed job runs again before the next);
* every job runs to success exactly once, nothing is dropped, nothing reaches a dead-letter queue;
* a paced wait costs no attempt (claim mode: a job's attempts are its crashes plus one).
"""

from __future__ import annotations

import io
import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import boto3
from hypothesis import given, settings
from hypothesis import strategies as st
from moto import mock_aws

from constructs_fifo.runtime.claim.processor import OrderedBatchProcessor
from constructs_fifo.runtime.claim.store import ClaimStore
from constructs_fifo.runtime.constants import DeadJobPolicy, JobMode
from constructs_fifo.runtime.dead_jobs.letters import DeadLetterSender
from constructs_fifo.runtime.dead_jobs.parking import ParkStore
from constructs_fifo.runtime.job import Job
from constructs_fifo.runtime.observability import JobLogger
from constructs_fifo.runtime.settings.config import RuntimeConfig
from constructs_fifo.runtime.state.processor import StateBatchProcessor
from constructs_fifo.runtime.state.storage.store import StateStore
from constructs_fifo.runtime.steering.pace import PaceLimit
from constructs_fifo.runtime.steering.pace_store import PaceStore, claim_table_key, group_table_key

from .fifo_model import Crash, FifoModel, ModelSqs
from .runtime_harness import DLQ_NAME, GROUP_TABLE_NAME, REGION, TABLE_NAME, FakeClock, create_tables

#: SQS's own dead-letter rule as the construct sets it for a paced queue.
MAX_RECEIVE_COUNT = 1000
_EXAMPLES = settings(max_examples=max(10, settings().max_examples // 3), deadline=None)


@dataclass(frozen=True)
class Send:
    group: int
    tenant: int
    copy: bool = False  # a copy of the group's last job (a producer's retry after the dedup window)


@dataclass(frozen=True)
class Schedule:
    limit: PaceLimit
    steps: tuple[Send | float | None, ...]  # a send, a clock move (seconds), or an invocation (None)
    crash: frozenset[int]  # jobs (by send number) whose first run crashes
    batch_size: int
    warm: bool


@st.composite
def schedules(draw: st.DrawFn) -> Schedule:
    key = draw(st.sampled_from(["group", "body:payload.tenant"]))
    limit = PaceLimit(
        jobs=draw(st.integers(1, 3)),
        period_seconds=draw(st.sampled_from([5, 30])),
        burst=draw(st.integers(1, 3)),
        key=key,
    )
    step = st.one_of(
        st.builds(
            Send,
            group=st.integers(0, 2),
            tenant=st.integers(0, 1),
            copy=st.booleans().map(lambda b: b and False),
        ),
        st.builds(Send, group=st.integers(0, 2), tenant=st.integers(0, 1), copy=st.just(True)),
        st.floats(0, 20).map(lambda s: round(s, 2)),
        st.none(),
    )
    steps = tuple(draw(st.lists(step, min_size=1, max_size=14)))
    sends = sum(isinstance(s, Send) for s in steps)
    crash = frozenset(draw(st.sets(st.integers(0, max(0, sends - 1)), max_size=2)))
    return Schedule(limit, steps, crash, draw(st.integers(1, 4)), draw(st.booleans()))


@dataclass
class World:
    """The runtime of one mode on moto, fed by the FIFO model; records every start of a run."""

    mode: JobMode
    schedule: Schedule
    clock: FakeClock = field(default_factory=FakeClock)
    starts: list[tuple[str, str, str, float]] = field(default_factory=list)  # job, group, key, time
    crashed: set[str] = field(default_factory=set)
    sent: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    tenants: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.model = FifoModel(
            self.clock, max_receive_count=MAX_RECEIVE_COUNT, batch_size=self.schedule.batch_size
        )
        self.dynamodb = boto3.client("dynamodb", region_name=REGION)
        self.real_sqs = boto3.client("sqs", region_name=REGION)
        create_tables(self.dynamodb)
        self.dlq_url = self.real_sqs.create_queue(QueueName=DLQ_NAME, Attributes={"FifoQueue": "true"})[
            "QueueUrl"
        ]
        self.sqs = ModelSqs(self.model, self.real_sqs)
        self.pace = self._pace()

    def _pace(self) -> PaceStore:
        claim = self.mode is JobMode.CLAIM
        table, key = (TABLE_NAME, claim_table_key) if claim else (GROUP_TABLE_NAME, group_table_key)
        return PaceStore(table, self.dynamodb, limit=self.schedule.limit, item_key=key, clock=self.clock)

    def _run(self, job: Job) -> None:
        key = job.group if self.schedule.limit.key == "group" else f"t{job.payload['tenant']}"
        self.starts.append((job.id, job.group, key, self.clock()))
        if int(job.id[1:]) in self.schedule.crash and job.id not in self.crashed:
            self.crashed.add(job.id)
            raise Crash

    def handle(self, job: Job, context: object) -> None:
        self._run(job)

    def transition(self, job: Job, state: Any) -> dict[str, Any]:
        self._run(job)
        return {"log": [*(state or {}).get("log", []), job.id]}

    def processor(self) -> Any:
        settings_ = RuntimeConfig(
            TABLE_NAME,
            self.model.url,
            mode=self.mode,
            group_table=GROUP_TABLE_NAME,
            visibility_timeout_seconds=self.model.visibility_timeout_seconds,
            max_attempts=5,
            on_dead_job=DeadJobPolicy.CONTINUE,
        )
        common: dict[str, Any] = {
            "settings": settings_,
            "visibility": self.model,
            "logger": JobLogger("Model", stream=io.StringIO(), clock=self.clock),
            "dead_letters": DeadLetterSender(self.real_sqs, self.dlq_url, clock=self.clock),
            "sqs": self.sqs,
            "pace_store": self.pace if self.schedule.warm else self._pace(),
        }
        if self.mode is JobMode.CLAIM:
            claims = ClaimStore(
                TABLE_NAME, self.dynamodb, ttl_seconds=86_400, max_attempts=5, clock=self.clock
            )
            return OrderedBatchProcessor(handler=self.handle, claims=claims, **common)
        return StateBatchProcessor(
            transition=self.transition,
            states=StateStore(GROUP_TABLE_NAME, self.dynamodb, clock=self.clock),
            parking=ParkStore(GROUP_TABLE_NAME, self.dynamodb, clock=self.clock),
            **common,
        )

    def send(self, send: Send, number: int) -> None:
        group = f"g{send.group}"
        if send.copy and self.sent[group]:
            job_id = self.sent[group][-1]
            body = json.dumps({"jobId": job_id, "type": "t", "payload": {"tenant": self.tenants[job_id]}})
            self.model.send(group, body, f"copy-{number}")
            return
        job_id = f"j{number}"
        self.sent[group].append(job_id)
        self.tenants[job_id] = send.tenant
        body = json.dumps({"jobId": job_id, "type": "t", "payload": {"tenant": send.tenant}})
        self.model.send(group, body, job_id)

    def play(self) -> None:
        for number, step in enumerate(self.schedule.steps):
            if isinstance(step, Send):
                self.send(step, number)
            elif step is None:
                self.model.invoke(self.processor())
            else:
                self.clock.advance(step)
        self.model.run_until_quiet(self.processor, max_steps=600)


def _assert_pace_kept(world: World) -> None:
    limit = world.schedule.limit
    rate_per_second = limit.jobs / limit.period_seconds
    by_key: dict[str, list[float]] = defaultdict(list)
    for _, _, key, at in world.starts:
        by_key[key].append(at)
    for times in by_key.values():
        times.sort()
        for i, first in enumerate(times):
            for j in range(i, len(times)):
                assert j - i + 1 <= limit.burst + rate_per_second * (times[j] - first) + 1e-6, (times, limit)


def _assert_order_and_once(world: World, succeeded: Counter[str]) -> None:
    for group, ids in world.sent.items():
        started = [job for job, g, _, _ in world.starts if g == group]
        positions = [ids.index(job) for job in started]
        assert positions == sorted(positions), (group, started)  # never reordered
    every = [job for ids in world.sent.values() for job in ids]
    assert succeeded == Counter(every)  # each job succeeded exactly once, none dropped
    assert world.model.sqs_dead == []
    assert world.real_sqs.receive_message(QueueUrl=world.dlq_url).get("Messages", []) == []


@_EXAMPLES
@given(schedules())
def test_claim_mode_a_paced_key_never_runs_faster_than_its_limit_nor_out_of_order(schedule: Schedule) -> None:
    with mock_aws():
        # GIVEN the schedule's sends, invocations, clock moves and crashes, on a paced claim-mode queue
        world = World(JobMode.CLAIM, schedule)
        # WHEN it plays, then the queue drains
        world.play()
        # THEN no key ran faster than its limit over any window, and each group kept its order
        _assert_pace_kept(world)
        claims = ClaimStore(TABLE_NAME, world.dynamodb)
        succeeded = Counter(
            job
            for ids in world.sent.values()
            for job in ids
            if (claims.get(job) or {}).get("status") == "SUCCEEDED"
        )
        _assert_order_and_once(world, succeeded)
        # AND a wait for a token cost no attempt: a job's attempts are its crashes and its success
        for job in succeeded:
            assert int((claims.get(job) or {})["attempts"]) == 1 + (job in world.crashed)


@_EXAMPLES
@given(schedules())
def test_state_mode_a_paced_key_never_runs_faster_than_its_limit_nor_out_of_order(schedule: Schedule) -> None:
    with mock_aws():
        # GIVEN the schedule on a paced state-mode queue (jobs without seq)
        world = World(JobMode.STATE, schedule)
        # WHEN it plays, then the queue drains
        world.play()
        # THEN no key ran faster than its limit, each group's state applied every job once, in order
        _assert_pace_kept(world)
        states = StateStore(GROUP_TABLE_NAME, world.dynamodb).load(list(world.sent))
        for group, ids in world.sent.items():
            state = states[group].state
            assert state is not None and state["log"] == ids
        applied = Counter(job for group in world.sent for job in (states[group].state or {}).get("log", []))
        _assert_order_and_once(world, applied)
