"""Model tests of state mode: Hypothesis chooses the schedule, the real state-mode runtime runs it on moto.

The FIFO queue model of :mod:`.fifo_model` (receive counts, visibility, batch filling, SQS's own
``maxReceiveCount`` rule at the least value the construct allows) feeds the real
``StateBatchProcessor``, state store and park store on moto. Hypothesis chooses the groups, whether a
group's jobs carry the producer's ``seq`` (then the producer also shuffles their send order), each
job's failure pattern (transient n times, permanent, malformed, crashing the worker n times), copies
(same deduplication id soon or after 5 minutes, or a new one) and how sends interleave with
invocations. The transition chains a digest over the jobs it applies, so the committed state proves
which jobs were folded into it and in which order. Invariants, against an independent expectation:

- every transition is applied exactly once and in sequence: the committed log has no repeat, its
  digest is the fold of the log, and the log is the group's jobs in queue order (without ``seq``) or
  in ``seq`` order (with it), less the jobs that died (go-on policy), up to the first dead job (park
  policy, before resume), all of them but the malformed ones (park policy, after resume);
- no job is dead-lettered for another's failure, and SQS's own rule never fires;
- nothing is lost: every job ends applied, in the dead-letter queue (itself), kept in a parked group,
  or waiting in the reorder buffer behind a ``seq`` that never came (a malformed job's: its body, and
  so its ``seq``, cannot be read; the WAIT policy's gap metric is how one hears of it).

A crash counts as an attempt only once a run marker names it (``runtime/state/crash_watch.py``: not on a
group's first delivery, nor under the marker of a whole group's run), so a job that crashes fewer
than ``MAX_ATTEMPTS`` times never dies of it: the schedule crashes at most twice, and SQS's rule is
the least value the construct allows in state mode.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import boto3
from hypothesis import given
from hypothesis import strategies as st
from moto import mock_aws
from support.budget import slow_property

from constructs_fifo.client.parked import ParkedGroups
from constructs_fifo.construct.settings.defaults import min_receive_count_for
from constructs_fifo.runtime.constants import DeadJobPolicy, JobMode
from constructs_fifo.runtime.dead_jobs.letters import DeadLetterSender
from constructs_fifo.runtime.dead_jobs.parking import ParkStore
from constructs_fifo.runtime.exceptions import PermanentJobError
from constructs_fifo.runtime.job import Job
from constructs_fifo.runtime.observability import JobLogger
from constructs_fifo.runtime.settings.config import RuntimeConfig
from constructs_fifo.runtime.state.processor import StateBatchProcessor
from constructs_fifo.runtime.state.storage.store import StateStore

from .fifo_model import Crash, FifoModel, ModelSqs, assert_skipped_every_message, play, run_steps
from .runtime_harness import DLQ_NAME, GROUP_TABLE_NAME, REGION, FakeClock, create_tables

MAX_ATTEMPTS = 3
BATCH_SIZE = 10
KINDS = ("ok", "ok", "transient", "permanent", "malformed", "crash")
MAX_CRASHING_JOBS = 2


@dataclass(frozen=True)
class JobSpec:
    """One job: its group, its ``seq`` (or none), what its transition does, and whether it is sent twice."""

    job_id: str
    group: str
    seq: int | None
    kind: str = "ok"
    times: int = 0
    copy: str | None = None  # None, "same-soon", "same-late" (after the 5-minute window) or "new"

    @property
    def dies(self) -> bool:
        """The independent expectation: does this job die on its own (two crashes never kill it)?"""
        return self.kind in {"permanent", "malformed"} or (
            self.kind == "transient" and self.times >= MAX_ATTEMPTS
        )

    def body(self) -> str:
        if self.kind == "malformed":
            return f"not json #{self.job_id}"
        body: dict[str, Any] = {"jobId": self.job_id, "type": "apply", "payload": {}}
        if self.seq is not None:
            body["seq"] = self.seq
        return json.dumps(body)


def digest_of(log: list[str]) -> str:
    digest = ""
    for job_id in log:
        digest = hashlib.sha256(f"{digest}:{job_id}".encode()).hexdigest()
    return digest


@dataclass
class World:
    """The real state-mode runtime on moto, fed by the model queue."""

    policy: DeadJobPolicy
    specs: dict[str, JobSpec]
    clock: FakeClock = field(default_factory=FakeClock)
    runs: Counter[str] = field(default_factory=Counter)
    healed: set[str] = field(default_factory=set)
    delivered: Counter[str] = field(default_factory=Counter)
    job_seconds: float = 0.0

    def __post_init__(self) -> None:
        self.model = FifoModel(
            self.clock, max_receive_count=min_receive_count_for(BATCH_SIZE, MAX_ATTEMPTS, JobMode.STATE)
        )
        self.dynamodb = boto3.client("dynamodb", region_name=REGION)
        self.real_sqs = boto3.client("sqs", region_name=REGION)
        create_tables(self.dynamodb)
        self.dlq_url = self.real_sqs.create_queue(QueueName=DLQ_NAME, Attributes={"FifoQueue": "true"})[
            "QueueUrl"
        ]
        self.sqs = ModelSqs(self.model, self.real_sqs)
        self.states = StateStore(GROUP_TABLE_NAME, self.dynamodb, clock=self.clock)
        self.parking = ParkStore(GROUP_TABLE_NAME, self.dynamodb, clock=self.clock)
        self.dead: list[tuple[str, str]] = []

    def transition(self, job: Job, state: dict[str, Any] | None) -> dict[str, Any]:
        spec = self.specs[job.id]
        self.runs[job.id] += 1
        self.clock.advance(self.job_seconds)
        if job.id not in self.healed:
            if spec.kind == "permanent":
                raise PermanentJobError(f"{job.id} can never apply")
            if spec.kind == "transient" and job.attempt <= spec.times:
                raise RuntimeError(f"{job.id} flaked")
            if spec.kind == "crash" and self.runs[job.id] <= spec.times:
                raise Crash
        log = [*(state or {}).get("log", []), job.id]
        previous = (state or {}).get("digest", "")
        return {"log": log, "digest": hashlib.sha256(f"{previous}:{job.id}".encode()).hexdigest()}

    def processor(self) -> StateBatchProcessor:
        return StateBatchProcessor(
            settings=RuntimeConfig(
                "",
                self.model.url,
                mode=JobMode.STATE,
                on_dead_job=self.policy,
                max_attempts=MAX_ATTEMPTS,
                visibility_timeout_seconds=self.model.visibility_timeout_seconds,
            ),
            transition=self.transition,
            states=self.states,
            parking=self.parking,
            visibility=self.model,
            logger=JobLogger("Model", stream=io.StringIO(), clock=self.clock),
            dead_letters=DeadLetterSender(self.real_sqs, self.dlq_url, clock=self.clock),
            sqs=self.sqs,  # type: ignore[arg-type]
        )

    def operators(self) -> ParkedGroups:
        return ParkedGroups(
            group_table=GROUP_TABLE_NAME,
            queue_url=self.model.url,
            dead_letter_queue_url=self.dlq_url,
            dynamodb=self.dynamodb,
            sqs=self.sqs,  # type: ignore[arg-type]
            clock=self.clock,
        )

    def send(self, spec: JobSpec, *, dedup_id: str | None = None) -> None:
        if self.model.send(spec.group, spec.body(), dedup_id or spec.job_id) is not None:
            self.delivered[spec.job_id] += 1

    def log(self, group: str) -> list[str]:
        state = self.states.load([group])[group].state
        if state is None:
            return []
        assert state["digest"] == digest_of(state["log"]), "the state is the fold of its log, in order"
        return list(state["log"])

    def buffered(self, group: str) -> list[str]:
        return [entry.job_id for entry in self.states.load([group])[group].book.buffer]

    def kept(self, group: str) -> list[str]:
        return [_job_id(kept.record.get("body", "")) for kept in self.parking.kept(group, limit=1000)]

    def dead_lettered(self) -> list[tuple[str, str]]:
        """(job id, reason) of every message the runtime sent to the dead-letter queue so far."""
        while True:
            response = self.real_sqs.receive_message(
                QueueUrl=self.dlq_url, MaxNumberOfMessages=10, MessageAttributeNames=["All"]
            )
            if not response.get("Messages"):
                return list(self.dead)
            for message in response["Messages"]:
                attributes = {k: v["StringValue"] for k, v in message.get("MessageAttributes", {}).items()}
                self.dead.append((_job_id(message["Body"]), attributes["reason"]))
                self.real_sqs.delete_message(QueueUrl=self.dlq_url, ReceiptHandle=message["ReceiptHandle"])


def _job_id(body: str) -> str:
    try:
        return str(json.loads(body)["jobId"])
    except ValueError:
        return body.rsplit("#", 1)[-1]


# --- the schedule ------------------------------------------------------------------------------------


@st.composite
def schedules(draw: st.DrawFn) -> tuple[list[JobSpec], list[tuple[str, object]]]:
    """Jobs over 1-3 groups (with or without seq), and the steps: sends, copies and runs."""
    specs: list[JobSpec] = []
    send_orders: dict[str, Iterator[JobSpec]] = {}
    crashing = 0
    for group_index in range(draw(st.integers(1, 3))):
        group, with_seq = f"ws#{group_index}", draw(st.booleans())
        jobs: list[JobSpec] = []
        for job_index in range(draw(st.integers(1, 6))):
            kind = draw(st.sampled_from(KINDS))
            if kind == "crash":
                crashing += 1
                kind = kind if crashing <= MAX_CRASHING_JOBS else "ok"
            times = draw(st.integers(1, MAX_ATTEMPTS + 1)) if kind == "transient" else 0
            times = draw(st.integers(1, 2)) if kind == "crash" else times
            copy = draw(st.sampled_from([None, None, None, "same-soon", "same-late", "new"]))
            seq = job_index if with_seq else None
            jobs.append(JobSpec(f"g{group_index}j{job_index}", group, seq, kind, times, copy))
        specs += jobs
        # the producer sends a group's jobs in order, or, with seq, in an order of its own
        send_orders[group] = iter(draw(st.permutations(jobs)) if with_seq else jobs)
    steps: list[tuple[str, object]] = []
    for picked in draw(st.permutations(specs)):
        steps.append(("send", next(send_orders[picked.group])))
        steps += [draw(run_steps()) for _ in range(draw(st.integers(0, 2)))]
    for spec in specs:
        if spec.copy is not None:
            position = draw(st.integers(steps.index(("send", spec)) + 1, len(steps)))
            steps.insert(position, ("copy", spec))
    return specs, steps


# --- the expectation ---------------------------------------------------------------------------------


def in_queue_order(specs: list[JobSpec], group: str) -> list[JobSpec]:
    """A group's jobs in the order they apply: queue order, or seq order with seq (the producer's)."""
    jobs = [s for s in specs if s.group == group]
    return sorted(jobs, key=lambda s: s.seq or 0) if jobs[0].seq is not None else jobs


def reachable(jobs: list[JobSpec]) -> list[JobSpec]:
    """With seq, a malformed job's seq never comes (its body cannot be read): what follows it waits."""
    if jobs[0].seq is None:
        return jobs
    first = next((i for i, s in enumerate(jobs) if s.kind == "malformed"), len(jobs))
    return jobs[: first + 1]


def check_nothing_lost(world: World, specs: list[JobSpec], dead: set[str]) -> None:
    for group in {s.group for s in specs}:
        somewhere = {*world.log(group), *world.kept(group), *world.buffered(group), *dead}
        assert {s.job_id for s in specs if s.group == group} <= somewhere, f"a job of {group} was lost"


#: Half the profile's examples under `make test`, all under `make chaos` (tests/support/budget.py).
_SLOW = slow_property(2)


@_SLOW
@given(schedules())
def test_continue_policy_applies_every_transition_once_in_sequence_and_dead_letters_only_the_dead(
    schedule: tuple[list[JobSpec], list[tuple[str, object]]],
) -> None:
    specs, steps = schedule
    with mock_aws():
        # GIVEN the CONTINUE policy and the schedule Hypothesis chose
        world = World(DeadJobPolicy.CONTINUE, {s.job_id: s for s in specs})
        # WHEN it is played until the queue is empty
        play(world, steps)
        # THEN SQS's own dead-letter rule never fired, and the queue is empty
        assert world.model.sqs_dead == []
        assert world.model.messages == []
        # AND each group's state is the fold of its reachable jobs that did not die, each once, in order
        dead = {job_id for job_id, _ in world.dead_lettered()}
        for group in {s.group for s in specs}:
            jobs = reachable(in_queue_order(specs, group))
            assert world.log(group) == [s.job_id for s in jobs if not s.dies]
        # AND the dead-letter queue holds exactly the jobs that died themselves (and copies of them)
        expected_dead = {
            s.job_id for g in {s.group for s in specs} for s in reachable(in_queue_order(specs, g))
        }
        expected_dead = {job_id for job_id in expected_dead if world.specs[job_id].dies}
        malformed = {s.job_id for s in specs if s.kind == "malformed"}
        assert dead == expected_dead | malformed
        check_nothing_lost(world, specs, dead)


@_SLOW
@given(schedules())
def test_park_policy_applies_a_prefix_then_after_resume_every_job_once_in_sequence(
    schedule: tuple[list[JobSpec], list[tuple[str, object]]],
) -> None:
    specs, steps = schedule
    with mock_aws():
        # GIVEN the PARK policy and the schedule Hypothesis chose
        world = World(DeadJobPolicy.PARK, {s.job_id: s for s in specs})
        # WHEN it is played until the queue is empty
        play(world, steps)
        # THEN SQS dead-lettered nothing, neither did the runtime (groups are parked instead)
        assert world.model.sqs_dead == []
        assert world.dead_lettered() == []
        # AND each group's state is a prefix of its jobs in order, each applied once
        for group in {s.group for s in specs}:
            order = [s.job_id for s in in_queue_order(specs, group)]
            log = world.log(group)
            assert log == order[: len(log)]
            assert not any(world.specs[job_id].dies for job_id in log)
            first_dead = next((i for i, j in enumerate(order) if world.specs[j].dies), len(order))
            assert len(log) <= first_dead
        check_nothing_lost(world, specs, set())
        # WHEN operators resume every parked group until none is left (fixing and retrying a failed
        # job; skipping a malformed one, which no fix can run)
        operators = world.operators()
        for _ in range(4 * len(specs) + 2):
            headers = operators.list_groups()
            if not headers:
                break
            for header in headers:
                skip = header.dead.reason == "MALFORMED"
                if not skip:
                    world.healed.add(str(header.dead.job_id))
                operators.resume(header.group, skip_dead=skip)
            world.model.run_until_quiet(world.processor)
        # THEN no group is parked; each group's state is the fold of every reachable job but the
        # malformed ones, once and in order; the malformed ones (every copy delivered) are in the DLQ
        assert operators.list_groups() == []
        for group in {s.group for s in specs}:
            jobs = reachable(in_queue_order(specs, group))
            assert world.log(group) == [s.job_id for s in jobs if s.kind != "malformed"]
        malformed = sorted(
            s.job_id for s in specs if s.kind == "malformed" for _ in range(world.delivered[s.job_id])
        )
        dead = [job_id for job_id, _ in world.dead_lettered()]
        assert_skipped_every_message(dead, malformed)
        assert world.model.sqs_dead == [] and world.model.messages == []
        check_nothing_lost(world, specs, set(malformed))


# --- examples kept ------------------------------------------------------------------------------------


def test_a_job_failing_transiently_to_its_last_attempt_drags_no_healthy_job_along() -> None:
    # GIVEN group [H00, F, H02 ... H13] with seq, F failing transiently 3 times (max_attempts 3)
    failing = JobSpec("F", "ws#1", 1, "transient", times=3)
    specs = [JobSpec("H00", "ws#1", 0), failing, *[JobSpec(f"H{n:02d}", "ws#1", n) for n in range(2, 14)]]
    with mock_aws():
        world = World(DeadJobPolicy.CONTINUE, {s.job_id: s for s in specs})
        # WHEN the group is drained
        play(world, [("send", spec) for spec in specs])
        # THEN F alone died, on its third attempt; SQS dead-lettered nothing; every healthy job applied
        assert world.model.sqs_dead == []
        assert world.runs["F"] == 3
        assert world.dead_lettered() == [("F", "ATTEMPTS_EXHAUSTED")]
        assert world.log("ws#1") == ["H00", *[f"H{n:02d}" for n in range(2, 14)]]
