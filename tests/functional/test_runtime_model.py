"""Model tests of failure isolation: Hypothesis chooses the schedule, the real runtime runs it on moto.

A simulated FIFO queue (:mod:`.fifo_model`: receive counts, visibility, batch filling and SQS's own
``maxReceiveCount`` rule, set to the least value the construct allows) feeds the real
``OrderedBatchProcessor``, claim store and park store on moto. Hypothesis chooses the groups, the
jobs, each job's failure pattern (transient n times, permanent, malformed, crashing n times), copies
of jobs (same deduplication id soon or after 5 minutes, or a new one) and how sends interleave with
invocations. The invariants are checked against an independent expectation of what each job's
pattern means:

- no job reaches the dead-letter queue that did not itself die, and SQS's own rule never fires;
- CONTINUE: every job that did not die is applied once, in its group's order;
- PARK: every group's applied jobs are a prefix of its jobs up to its first dead job, the rest kept
  in order; after operators resume (retrying a fixed job, skipping a malformed one), every job is
  applied once and in order;
- nothing is lost: every job ends applied, dead-lettered itself, or kept in a parked group.

Run with more examples: ``CONSTRUCTS_FIFO_HYPOTHESIS_PROFILE=chaos`` (``make chaos``).
"""

from __future__ import annotations

import io
import json
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

import boto3
from hypothesis import given
from hypothesis import strategies as st
from moto import mock_aws
from support.budget import slow_property

from constructs_fifo.client.parked import ParkedGroups
from constructs_fifo.construct.settings.defaults import min_receive_count_for
from constructs_fifo.runtime.claim.processor import OrderedBatchProcessor
from constructs_fifo.runtime.claim.store import ClaimStore
from constructs_fifo.runtime.constants import DeadJobPolicy
from constructs_fifo.runtime.dead_jobs.letters import DeadLetterSender
from constructs_fifo.runtime.dead_jobs.parking import ParkStore
from constructs_fifo.runtime.exceptions import PermanentJobError
from constructs_fifo.runtime.job import Job
from constructs_fifo.runtime.observability import JobLogger
from constructs_fifo.runtime.settings.config import RuntimeConfig

from .fifo_model import Crash, FifoModel, ModelSqs, assert_skipped_every_message, play, run_steps
from .runtime_harness import DLQ_NAME, GROUP_TABLE_NAME, REGION, TABLE_NAME, FakeClock, create_tables

MAX_ATTEMPTS = 3
BATCH_SIZE = 10
KINDS = ("ok", "transient", "permanent", "malformed", "crash")


@dataclass(frozen=True)
class JobSpec:
    """One job of the schedule: its group, what it does when run, and whether it is sent twice."""

    job_id: str
    group: str
    kind: str = "ok"
    times: int = 0
    copy: str | None = None  # None, "same-soon", "same-late" (after the 5-minute window) or "new"

    @property
    def dies(self) -> bool:
        """The independent expectation: does this job die on its own (with MAX_ATTEMPTS)?"""
        if self.kind in {"permanent", "malformed"}:
            return True
        return self.kind in {"transient", "crash"} and self.times >= MAX_ATTEMPTS

    def body(self) -> str:
        if self.kind == "malformed":
            return f"not json #{self.job_id}"
        return json.dumps({"jobId": self.job_id, "type": "apply_patch", "payload": {}})


@dataclass
class World:
    """The real runtime on moto, fed by the model queue; records what the job function applied."""

    policy: DeadJobPolicy
    specs: dict[str, JobSpec]
    max_attempts: int = MAX_ATTEMPTS
    clock: FakeClock = field(default_factory=FakeClock)
    runs: Counter[str] = field(default_factory=Counter)
    applied: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    healed: set[str] = field(default_factory=set)
    delivered: Counter[str] = field(default_factory=Counter)
    dlq_seen: list[tuple[str, str]] = field(default_factory=list)
    job_seconds: float = 0.0

    def __post_init__(self) -> None:
        self.model = FifoModel(
            self.clock, max_receive_count=min_receive_count_for(BATCH_SIZE, self.max_attempts)
        )
        self.dynamodb = boto3.client("dynamodb", region_name=REGION)
        real_sqs = boto3.client("sqs", region_name=REGION)
        create_tables(self.dynamodb)
        self.dlq_url = real_sqs.create_queue(QueueName=DLQ_NAME, Attributes={"FifoQueue": "true"})["QueueUrl"]
        self.real_sqs = real_sqs
        self.sqs = ModelSqs(self.model, real_sqs)

    def handle(self, job: Job, context: object) -> None:
        spec = self.specs[job.id]
        self.runs[job.id] += 1
        self.clock.advance(self.job_seconds)
        if job.id not in self.healed:
            if spec.kind == "permanent":
                raise PermanentJobError(f"{job.id} can never apply")
            if spec.kind == "transient" and self.runs[job.id] <= spec.times:
                raise RuntimeError(f"{job.id} flaked")
            if spec.kind == "crash" and self.runs[job.id] <= spec.times:
                raise Crash
        self.applied[job.group].append(job.id)

    def processor(self) -> OrderedBatchProcessor:
        logger = JobLogger("Model", stream=io.StringIO(), clock=self.clock)
        return OrderedBatchProcessor(
            settings=RuntimeConfig(
                TABLE_NAME,
                self.model.url,
                on_dead_job=self.policy,
                visibility_timeout_seconds=self.model.visibility_timeout_seconds,
            ),
            handler=self.handle,
            claims=ClaimStore(
                TABLE_NAME,
                self.dynamodb,
                ttl_seconds=86_400,
                max_attempts=self.max_attempts,
                clock=self.clock,
            ),
            visibility=self.model,
            logger=logger,
            dead_letters=DeadLetterSender(self.real_sqs, self.dlq_url, clock=self.clock),
            parking=ParkStore(GROUP_TABLE_NAME, self.dynamodb, clock=self.clock),
            sqs=self.sqs,  # type: ignore[arg-type]
        )

    def operators(self) -> ParkedGroups:
        return ParkedGroups(
            group_table=GROUP_TABLE_NAME,
            claim_table=TABLE_NAME,
            queue_url=self.model.url,
            dead_letter_queue_url=self.dlq_url,
            dynamodb=self.dynamodb,
            sqs=self.sqs,  # type: ignore[arg-type]
            clock=self.clock,
        )

    def send(self, spec: JobSpec, *, dedup_id: str | None = None) -> None:
        """Send a job's message; count it when SQS delivers it (not deduplicated)."""
        if self.model.send(spec.group, spec.body(), dedup_id or spec.job_id) is not None:
            self.delivered[spec.job_id] += 1

    def dead_lettered(self) -> list[tuple[str, str]]:
        """(job id, reason) of every message the runtime sent to the dead-letter queue so far.

        Each message is deleted once read (a FIFO queue returns nothing more of a group while some of
        it is in flight), and remembered.
        """
        while True:
            response = self.real_sqs.receive_message(
                QueueUrl=self.dlq_url, MaxNumberOfMessages=10, MessageAttributeNames=["All"]
            )
            if not response.get("Messages"):
                return list(self.dlq_seen)
            for message in response["Messages"]:
                attributes = {k: v["StringValue"] for k, v in message.get("MessageAttributes", {}).items()}
                job_id = attributes.get("jobId") or message["Body"].rsplit("#", 1)[-1]
                self.dlq_seen.append((job_id, attributes["reason"]))
                self.real_sqs.delete_message(QueueUrl=self.dlq_url, ReceiptHandle=message["ReceiptHandle"])


# --- the schedule ------------------------------------------------------------------------------------


@st.composite
def schedules(draw: st.DrawFn) -> tuple[list[JobSpec], list[tuple[str, object]]]:
    """Jobs over 1-3 groups, and the steps: sends (originals in group order, copies later) and runs."""
    specs: list[JobSpec] = []
    for group_index in range(draw(st.integers(1, 3))):
        for job_index in range(draw(st.integers(1, 6))):
            kind = draw(st.sampled_from(KINDS))
            times = draw(st.integers(1, MAX_ATTEMPTS + 1)) if kind in {"transient", "crash"} else 0
            copy = draw(st.sampled_from([None, None, None, "same-soon", "same-late", "new"]))
            specs.append(JobSpec(f"g{group_index}j{job_index}", f"ws#{group_index}", kind, times, copy))
    order = draw(st.permutations(specs))
    # Originals keep their group's order: the n-th send of a group is the group's n-th job.
    by_group: dict[str, Iterator[JobSpec]] = {
        group: iter([s for s in specs if s.group == group]) for group in {s.group for s in specs}
    }
    steps: list[tuple[str, object]] = []
    for picked in order:
        spec = next(by_group[picked.group])
        steps.append(("send", spec))
        steps += [draw(run_steps()) for _ in range(draw(st.integers(0, 2)))]
    for spec in specs:
        if spec.copy is not None:
            position = draw(st.integers(steps.index(("send", spec)) + 1, len(steps)))
            steps.insert(position, ("copy", spec))
    return specs, steps


# --- the properties ----------------------------------------------------------------------------------

#: Half the profile's examples under `make test`, all under `make chaos` (tests/support/budget.py).
_SLOW = slow_property(2)


@_SLOW
@given(schedules())
def test_continue_policy_dead_letters_only_jobs_that_died_and_applies_the_rest_in_order(
    schedule: tuple[list[JobSpec], list[tuple[str, object]]],
) -> None:
    specs, steps = schedule
    with mock_aws():
        # GIVEN the CONTINUE policy and the schedule Hypothesis chose
        world = World(DeadJobPolicy.CONTINUE, {s.job_id: s for s in specs})
        # WHEN it is played until the queue is empty
        play(world, steps)
        # THEN SQS's own dead-letter rule never fired: the runtime decided every death
        assert world.model.sqs_dead == []
        # AND the dead-letter queue holds exactly the jobs that died themselves (and their copies)
        dead = world.dead_lettered()
        assert {job_id for job_id, _ in dead} == {s.job_id for s in specs if s.dies}
        # AND every other job was applied once, in its group's order; nothing is left on the queue
        for group in {s.group for s in specs}:
            assert world.applied[group] == [s.job_id for s in specs if s.group == group and not s.dies]
        assert world.model.messages == []


@_SLOW
@given(schedules())
def test_park_policy_keeps_a_group_at_its_dead_job_and_resume_applies_everything_in_order(
    schedule: tuple[list[JobSpec], list[tuple[str, object]]],
) -> None:
    specs, steps = schedule
    with mock_aws():
        # GIVEN the PARK policy and the schedule Hypothesis chose
        world = World(DeadJobPolicy.PARK, {s.job_id: s for s in specs})
        # WHEN it is played until the queue is empty
        play(world, steps)
        # THEN SQS never dead-lettered anything, and neither did the runtime (groups are parked instead)
        assert world.model.sqs_dead == []
        assert world.dead_lettered() == []
        # AND each group applied exactly the prefix before its first dead job, and keeps the rest in order
        # (with any late copy of a job already applied, which replay will skip as a duplicate)
        parking = ParkStore(GROUP_TABLE_NAME, world.dynamodb, clock=world.clock)
        for group in {s.group for s in specs}:
            jobs = [s for s in specs if s.group == group]
            first_dead = next((i for i, s in enumerate(jobs) if s.dies), len(jobs))
            prefix = [s.job_id for s in jobs[:first_dead]]
            assert world.applied[group] == prefix
            kept = [_kept_id(k.record.get("body", "")) for k in parking.kept(group, limit=1000)]
            assert list(dict.fromkeys(k for k in kept if k not in prefix)) == [
                s.job_id for s in jobs[first_dead:]
            ]
            assert (parking.header(group) is not None) == (first_dead < len(jobs))
        # WHEN operators resume every parked group until none is left (fixing a failed job and retrying
        # it; skipping a malformed one, which no fix can run)
        operators = world.operators()
        skipped: list[str] = []
        for _ in range(4 * len(specs) + 2):
            headers = operators.list_groups()
            if not headers:
                break
            for header in headers:
                dead_id = _kept_id(operators.kept(header.group, limit=1)[0].record.get("body", ""))
                is_malformed = world.specs[dead_id].kind == "malformed"
                world.healed.add(dead_id)
                operators.resume(header.group, skip_dead=is_malformed)
                skipped += [dead_id] if is_malformed else []
            world.model.run_until_quiet(world.processor)
        # THEN no group is parked, every job but the skipped malformed ones was applied once and in
        # order, the skipped ones (every copy of them) are in the DLQ, and SQS still dead-lettered nothing
        assert operators.list_groups() == []
        for group in {s.group for s in specs}:
            assert world.applied[group] == [
                s.job_id for s in specs if s.group == group and s.kind != "malformed"
            ]
        malformed = [
            s.job_id for s in specs if s.kind == "malformed" for _ in range(world.delivered[s.job_id])
        ]
        assert_skipped_every_message(skipped, malformed)
        dead = [job_id for job_id, _ in world.dead_lettered()]
        assert_skipped_every_message(dead, malformed)
        assert world.model.sqs_dead == []


def _kept_id(body: str) -> str:
    try:
        return str(json.loads(body)["jobId"])
    except ValueError:
        return body.rsplit("#", 1)[-1]


# --- two traces of healthy jobs that followed a failing one into the DLQ, kept as examples ----------


def _group(*specs: JobSpec) -> list[tuple[str, object]]:
    return [("send", spec) for spec in specs]


def _healthy(*numbers: int) -> list[JobSpec]:
    return [JobSpec(f"H{n:02d}", "ws#1") for n in numbers]


def test_trace_a_job_failing_transiently_five_times_drags_no_healthy_job_along() -> None:
    # GIVEN group [H00, F, H02 ... H13], F failing transiently 5 times, max_attempts 5, batch 10, and
    # maxReceiveCount at the least value the construct allows (50): the trace that dead-lettered
    # H02 ... H09 when maxReceiveCount 5 was the only dead-letter rule
    failing = JobSpec("F", "ws#1", "transient", times=5)
    specs = [*_healthy(0), failing, *_healthy(*range(2, 14))]
    for policy in DeadJobPolicy:
        with mock_aws():
            world = World(policy, {s.job_id: s for s in specs}, max_attempts=5)
            # WHEN the group is drained
            play(world, _group(*specs))
            # THEN SQS dead-lettered nothing; F alone died, on its fifth attempt
            assert world.model.sqs_dead == []
            assert world.runs["F"] == 5
            healthy_after = [f"H{n:02d}" for n in range(2, 14)]
            if policy is DeadJobPolicy.CONTINUE:
                # AND under CONTINUE it is the only job in the DLQ; every healthy job ran, in order
                assert world.dead_lettered() == [("F", "ATTEMPTS_EXHAUSTED")]
                assert world.applied["ws#1"] == ["H00", *healthy_after]
            else:
                # AND under PARK nothing is in the DLQ: F and everything behind it is kept, in order
                assert world.dead_lettered() == []
                assert world.applied["ws#1"] == ["H00"]
                kept = ParkStore(GROUP_TABLE_NAME, world.dynamodb).kept("ws#1", limit=100)
                assert [_kept_id(k.record.get("body", "")) for k in kept] == ["F", *healthy_after]


def test_trace_a_poison_job_sent_twice_neither_runs_twice_nor_drags_healthy_jobs_along() -> None:
    # GIVEN group [H00, P, H02, H03, P (a second copy, new deduplication id), H05 ... H13]
    poison = JobSpec("P", "ws#1", "permanent")
    steps = [
        *_group(*_healthy(0), poison, *_healthy(2, 3)),
        ("copy", JobSpec("P", "ws#1", "permanent", copy="new")),
        *_group(*_healthy(*range(5, 14))),
    ]
    specs = {s.job_id: s for s in [*_healthy(0, 2, 3, *range(5, 14)), poison]}
    healthy = [f"H{n:02d}" for n in (0, 2, 3, *range(5, 14))]
    with mock_aws():
        world = World(DeadJobPolicy.CONTINUE, specs)
        # WHEN drained under CONTINUE
        play(world, steps)
        # THEN P ran once; both copies are in the DLQ (the second follows the first); every healthy job ran
        assert world.runs["P"] == 1
        assert world.dead_lettered() == [("P", "PERMANENT"), ("P", "COPY_OF_DEAD_JOB")]
        assert world.applied["ws#1"] == healthy
        assert world.model.sqs_dead == []
    with mock_aws():
        world = World(DeadJobPolicy.PARK, specs)
        # WHEN drained under PARK, then resumed skipping P
        play(world, steps)
        assert world.applied["ws#1"] == ["H00"]
        world.operators().resume("ws#1", skip_dead=True)
        world.model.run_until_quiet(world.processor)
        # THEN P ran once, both copies are in the DLQ, and every healthy job ran once, in order
        assert world.runs["P"] == 1
        assert world.dead_lettered() == [("P", "PERMANENT"), ("P", "COPY_OF_DEAD_JOB")]
        assert world.applied["ws#1"] == healthy
        assert world.model.sqs_dead == []
