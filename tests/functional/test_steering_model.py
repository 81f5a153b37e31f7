"""Model tests of the steering controls: Hypothesis chooses where a cancel lands among the runtime's
own DynamoDB calls (before a claim, between a job's start and its end, after its last write, between
deliveries), and the real runtime and the real canceller run on moto.

Properties, in both modes:

* a job reported "will not run" (``NOT_STARTED``) never runs (claim mode: its function is never
  called; state mode: it is never applied);
* a job that succeeded (applied) is never reported cancelled, and a cancel that stands leaves the job
  cancelled, never succeeded;
* after a cancel that stands no attempt of the job starts;
* the jobs that do run run once each, in their group's order, and nothing reaches the dead-letter
  queue but jobs that died themselves.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import boto3
from hypothesis import given, settings
from hypothesis import strategies as st
from moto import mock_aws

from constructs_fifo.client import CancelOutcome, JobMessage, JobProducer, JobSteering
from constructs_fifo.runtime.claim.store import ClaimStore
from constructs_fifo.runtime.constants import DeadJobPolicy
from constructs_fifo.runtime.job import Job
from constructs_fifo.runtime.types import SQSRecord

from .runtime_harness import (
    DLQ_NAME,
    GROUP_TABLE_NAME,
    QUEUE_NAME,
    REGION,
    TABLE_NAME,
    FakeClock,
    Harness,
    body,
    create_tables,
    failed_ids,
    make_record,
    receive_records,
)
from .state_harness import StateHarness, job_record

#: Deliveries of the batch at most: every job ends (succeeds, dies or is cancelled) well within.
_ROUNDS = 12
#: A third of the profile's examples (CONSTRUCTS_FIFO_EXAMPLES; `make chaos` runs more): each example
#: starts moto afresh, and the three properties share one xdist worker in `make test`.
_EXAMPLES = settings(max_examples=max(5, settings().max_examples // 3))


@dataclass(frozen=True)
class Schedule:
    """What Hypothesis chose: the group's jobs and their attempts, which one is cancelled, and where."""

    jobs: int
    failures: tuple[int, ...]  # per job: attempts that fail before it succeeds
    target: int
    cancel_at_call: int  # the runtime's DynamoDB call before which the cancel runs


@st.composite
def schedules(draw: st.DrawFn) -> Schedule:
    jobs = draw(st.integers(1, 4))
    failures = tuple(draw(st.lists(st.integers(0, 2), min_size=jobs, max_size=jobs)))
    return Schedule(jobs, failures, draw(st.integers(0, jobs - 1)), draw(st.integers(0, 16)))


class CancelAtCall:
    """Runs one cancel before the runtime's DynamoDB call number ``at`` (0-based), once."""

    def __init__(self, client: Any, at: int, cancel: Any) -> None:
        self.calls = 0
        self.at = at
        self.report: Any = None
        self.ran_before: list[str] = []
        self._cancel = cancel
        client.meta.events.register("before-call.dynamodb", self._before)

    def _before(self, **_: Any) -> None:
        if self.calls == self.at and self.report is None:
            self.report = self._cancel()
        self.calls += 1


def _clients() -> tuple[Any, Any, str, str]:
    dynamodb = boto3.client("dynamodb", region_name=REGION)
    sqs = boto3.client("sqs", region_name=REGION)
    create_tables(dynamodb)
    queue_url = sqs.create_queue(QueueName=QUEUE_NAME, Attributes={"FifoQueue": "true"})["QueueUrl"]
    dlq_url = sqs.create_queue(QueueName=DLQ_NAME, Attributes={"FifoQueue": "true"})["QueueUrl"]
    return dynamodb, sqs, queue_url, dlq_url


def _deliver(harness: Harness | StateHarness, records: list[SQSRecord], clock: FakeClock) -> None:
    """Deliver the batch again and again (the failed records, in order) until none is reported."""
    for _ in range(_ROUNDS):
        if not records:
            return
        failed = set(failed_ids(harness.run(*records)))
        records = [record for record in records if record["messageId"] in failed]
        clock.advance(3600)  # past any backoff and lease
    raise AssertionError(f"records left after {_ROUNDS} deliveries: {records}")


@_EXAMPLES
@given(schedules())
def test_claim_mode_a_cancel_anywhere_among_the_runtimes_calls_keeps_its_word(schedule: Schedule) -> None:
    with mock_aws():
        # GIVEN a group of jobs, some failing before they succeed, and one cancel placed by Hypothesis
        dynamodb, sqs, queue_url, dlq_url = _clients()
        clock = FakeClock()
        harness = Harness(dynamodb=dynamodb, sqs=sqs, queue_url=queue_url, dlq_url=dlq_url, clock=clock)
        attempts: dict[str, int] = {}
        starts_after_cancel: list[str] = []

        def handle(job: Job) -> None:
            if hook.report is not None:
                starts_after_cancel.append(job.id)
            attempts[job.id] = attempts.get(job.id, 0) + 1
            if attempts[job.id] <= schedule.failures[int(job.id[1:])]:
                raise RuntimeError("flaky")

        ids = [f"j{n}" for n in range(schedule.jobs)]
        for job_id in ids:
            harness.behaviour[job_id] = handle
        target = ids[schedule.target]
        canceller = JobSteering(
            claim_table=TABLE_NAME, dynamodb=boto3.client("dynamodb", region_name=REGION), clock=clock
        )
        hook = CancelAtCall(dynamodb, schedule.cancel_at_call, lambda: canceller.cancel(target, reason="x"))

        # WHEN the batch is delivered until every job ended (the cancel lands where it was placed)
        _deliver(harness, [make_record(body(job_id)) for job_id in ids], clock)
        report = hook.report or canceller.cancel(target, reason="x")  # placed after the last call
        final = ClaimStore(TABLE_NAME, dynamodb).get(target) or {}

        # THEN a job reported "will not run" never ran
        if report.outcome is CancelOutcome.NOT_STARTED:
            assert target not in harness.ran
        # AND a succeeded job is never reported cancelled; a cancel that stands leaves it cancelled
        if report.outcome.cancelled:
            assert final["status"] == "CANCELLED"
            assert target not in starts_after_cancel
            assert (target, "SUCCEEDED") not in harness.outcomes()
        else:
            assert report.outcome is CancelOutcome.SUCCEEDED
            assert final["status"] == "SUCCEEDED"
        # AND the others ran in order, each succeeding once; nothing was dead-lettered
        succeeded = [job_id for job_id, status in harness.outcomes() if status == "SUCCEEDED"]
        assert succeeded == [job_id for job_id in ids if job_id != target or not report.outcome.cancelled]
        assert harness.dead_letters() == []


@dataclass(frozen=True)
class StateSchedule:
    jobs: int
    with_seq: bool
    order: tuple[int, ...]  # the delivery order of the jobs (by seq, when they carry one)
    target: int
    cancel_at_call: int


@st.composite
def state_schedules(draw: st.DrawFn) -> StateSchedule:
    jobs = draw(st.integers(1, 4))
    with_seq = draw(st.booleans())
    order = tuple(draw(st.permutations(range(jobs)))) if with_seq else tuple(range(jobs))
    return StateSchedule(jobs, with_seq, order, draw(st.integers(0, jobs - 1)), draw(st.integers(0, 10)))


@_EXAMPLES
@given(state_schedules())
def test_state_mode_a_cancel_anywhere_is_never_applied_and_never_holds_the_group(
    schedule: StateSchedule,
) -> None:
    with mock_aws():
        # GIVEN a group's jobs (with seqs, delivered out of order, or without) and one cancel placed
        dynamodb, sqs, queue_url, dlq_url = _clients()
        clock = FakeClock()
        harness = StateHarness(dynamodb, sqs, queue_url, dlq_url, clock=clock)
        ids = [f"s{n}" for n in range(schedule.jobs)]
        target = schedule.target
        canceller = JobSteering(
            group_table=GROUP_TABLE_NAME, dynamodb=boto3.client("dynamodb", region_name=REGION), clock=clock
        )
        seq = target if schedule.with_seq else None

        def cancel() -> Any:
            return canceller.cancel(ids[target], group="ws#1", seq=seq)

        hook = CancelAtCall(dynamodb, schedule.cancel_at_call, cancel)

        # WHEN the jobs are delivered one batch each, in the chosen order, until none is reported
        for n in schedule.order:
            _deliver(harness, [job_record(ids[n], n if schedule.with_seq else None)], clock)
        report = hook.report or cancel()
        log = harness.log()

        # THEN a cancel that stands means the job was never applied; a refused one, that it was
        if report.outcome.cancelled:
            assert ids[target] not in log
            assert (ids[target], "CANCELLED") in harness.outcomes()
        else:
            assert report.outcome is CancelOutcome.SUCCEEDED
            assert ids[target] in log
        # AND every other job was applied once, in seq order (or delivery order), none waiting
        expected = [job_id for n, job_id in enumerate(ids) if n != target or not report.outcome.cancelled]
        assert log == expected
        assert harness.group_state().book.buffer == ()


# --- hold ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HoldSchedule:
    jobs: int
    hold_at_call: int
    state_mode: bool


@st.composite
def hold_schedules(draw: st.DrawFn) -> HoldSchedule:
    return HoldSchedule(draw(st.integers(1, 5)), draw(st.integers(0, 12)), draw(st.booleans()))


@_EXAMPLES
@given(hold_schedules())
def test_a_hold_anywhere_lets_no_later_batch_start_a_job_and_release_runs_all_once_in_order(
    schedule: HoldSchedule,
) -> None:
    with mock_aws():
        # GIVEN a group's jobs delivered one per batch, a hold placed among the runtime's calls
        dynamodb, sqs, queue_url, dlq_url = _clients()
        clock = FakeClock()
        harness: Harness | StateHarness
        if schedule.state_mode:
            harness = StateHarness(dynamodb, sqs, queue_url, dlq_url, clock=clock)
        else:
            harness = Harness(dynamodb=dynamodb, sqs=sqs, queue_url=queue_url, dlq_url=dlq_url, clock=clock)
            harness.policy = DeadJobPolicy.PARK
        steering = JobSteering(
            claim_table=None if schedule.state_mode else TABLE_NAME,
            group_table=GROUP_TABLE_NAME,
            dynamodb=boto3.client("dynamodb", region_name=REGION),
            clock=clock,
            sqs=sqs,
            queue_url=queue_url,
        )
        ids = [f"j{n}" for n in range(schedule.jobs)]
        batch = [0]
        held_in: list[int] = []

        def hold() -> Any:
            held_in.append(batch[0])
            return steering.hold("ws#1")

        hook = CancelAtCall(dynamodb, schedule.hold_at_call, hold)
        started_after: list[tuple[int, str]] = []

        def started(job: Job) -> None:
            if hook.report is not None:
                started_after.append((batch[0], job.id))

        for job_id in ids:
            harness.behaviour[job_id] = started

        # WHEN the jobs are delivered one batch each (kept ones stay kept), then the group is released
        for n, job_id in enumerate(ids):
            batch[0] = n
            record = make_record(body(job_id)) if not schedule.state_mode else job_record(job_id)
            _deliver(harness, [record], clock)
        batch[0] = len(ids)
        if hook.report is None:
            hook.report = hold()
        steering.release("ws#1")
        _drain_queue(harness, clock)

        # THEN after the hold, a job started only in the batch that was running when it landed, until
        # the release (state mode: that batch's commit was refused, so none of it was applied then)
        assert all(n <= held_in[0] for n, _ in started_after if n < len(ids))
        # AND after the release every job ran (was applied) once, in order; the group is live again
        done = harness.log() if isinstance(harness, StateHarness) else _succeeded(harness)
        assert done == ids
        assert harness.parking.header("ws#1") is None


def _succeeded(harness: Harness) -> list[str]:
    return [job_id or "" for job_id, status in harness.outcomes() if status == "SUCCEEDED"]


def _drain_queue(harness: Harness | StateHarness, clock: FakeClock) -> None:
    """Deliver what the queue holds (the release's wake-up message) until it is empty."""
    for _ in range(_ROUNDS):
        records = receive_records(harness.sqs, harness.queue_url)
        if not records:
            return
        failed = set(failed_ids(harness.run(*records)))
        for record in records:
            if record["messageId"] in failed:
                harness.sqs.change_message_visibility(
                    QueueUrl=harness.queue_url, ReceiptHandle=record["receiptHandle"], VisibilityTimeout=0
                )
            else:
                harness.sqs.delete_message(QueueUrl=harness.queue_url, ReceiptHandle=record["receiptHandle"])
        clock.advance(3600)
    raise AssertionError("the queue did not drain")


# --- the newest wins -------------------------------------------------------------------------------


@st.composite
def supersede_schedules(draw: st.DrawFn) -> list[tuple[str, str | None]]:
    """Steps: ("send", key or None) or ("deliver", None): a key's sends interleaved with deliveries."""
    steps: list[tuple[str, str | None]] = []
    for _ in range(draw(st.integers(1, 7))):
        if draw(st.booleans()):
            steps.append(("send", draw(st.sampled_from(["run_tests", "lint", None]))))
        else:
            steps.append(("deliver", None))
    return steps


@_EXAMPLES
@given(supersede_schedules())
def test_supersede_never_skips_the_newest_nor_runs_an_older_after_a_newer(
    steps: list[tuple[str, str | None]],
) -> None:
    with mock_aws():
        # GIVEN a session's jobs, some with a supersede key, sent and delivered in the chosen order
        dynamodb, sqs, queue_url, dlq_url = _clients()
        clock = FakeClock()
        harness = Harness(dynamodb=dynamodb, sqs=sqs, queue_url=queue_url, dlq_url=dlq_url, clock=clock)
        steering = JobSteering(claim_table=TABLE_NAME, dynamodb=dynamodb, clock=clock)
        producer = JobProducer(queue_url, sqs_client=sqs)
        sent: list[tuple[str, str | None]] = []
        newer_sent_before_run: dict[str, bool] = {}

        def handle(job: Job) -> None:
            key = next(k for j, k in sent if j == job.id)
            later = [j for j, k in sent[[j for j, _ in sent].index(job.id) + 1 :] if k == key and key]
            newer_sent_before_run[job.id] = bool(later)

        # WHEN each step runs: a send (marked first when it has a key), or a delivery of what is queued
        for step, key in [*steps, ("deliver", None)]:
            if step == "send":
                job_id = f"j{len(sent)}"
                sent.append((job_id, key))
                harness.behaviour[job_id] = handle
                message = JobMessage(job_id, "t", {}, group="ws#1", supersede=key)
                if key is None:
                    producer.send_batch([message])
                else:
                    steering.send_superseding(producer, message)
            else:
                _drain_queue(harness, clock)

        # THEN every job ran or was superseded, once; the newest of each key ran; a job ran only when no
        # newer job of its key had been sent before it started; the runs kept the send order
        ran = harness.ran
        superseded = [j or "" for j, status in harness.outcomes() if status == "SUPERSEDED"]
        assert sorted(ran + superseded) == sorted(j for j, _ in sent)
        for key in {k for _, k in sent if k}:
            newest = [j for j, k in sent if k == key][-1]
            assert newest in ran
        assert not any(newer_sent_before_run.values())
        order = [j for j, _ in sent]
        assert ran == sorted(ran, key=order.index)


def _deliver_recording(harness: StateHarness, timeline: list[tuple[str, Any]]) -> None:
    """Deliver what the queue holds until it is empty, noting after each batch what is committed."""
    for _ in range(_ROUNDS):
        records = receive_records(harness.sqs, harness.queue_url)
        if not records:
            return
        failed = set(failed_ids(harness.run(*records)))
        timeline.append(("committed", tuple(harness.log())))
        for record in records:
            handle = record["receiptHandle"]
            if record["messageId"] in failed:
                harness.sqs.change_message_visibility(
                    QueueUrl=harness.queue_url, ReceiptHandle=handle, VisibilityTimeout=0
                )
            else:
                harness.sqs.delete_message(QueueUrl=harness.queue_url, ReceiptHandle=handle)
        harness.clock.advance(3600)
    raise AssertionError("the queue did not drain")


@st.composite
def state_supersede_schedules(draw: st.DrawFn) -> list[tuple[str, str | None]]:
    """Steps: ("send", key), ("send_in_run", key): sent while the next transition runs (its batch read
    the group before the mark), or ("deliver", None)."""
    steps: list[tuple[str, str | None]] = []
    for _ in range(draw(st.integers(1, 7))):
        kind = draw(st.sampled_from(["send", "send_in_run", "deliver"]))
        key = draw(st.sampled_from(["run_tests", "lint", None])) if kind != "deliver" else None
        steps.append((kind, key))
    return steps


@_EXAMPLES
@given(state_supersede_schedules())
def test_state_supersede_never_skips_the_newest_nor_applies_an_older_after_a_newer_was_sent(
    steps: list[tuple[str, str | None]],
) -> None:
    with mock_aws():
        # GIVEN a state-mode session's jobs, some with a supersede key, sent between deliveries or while a
        # transition runs (its batch read the group before the mark)
        dynamodb, sqs, queue_url, dlq_url = _clients()
        clock = FakeClock()
        harness = StateHarness(dynamodb, sqs, queue_url, dlq_url, clock=clock)
        steering = JobSteering(group_table=GROUP_TABLE_NAME, dynamodb=dynamodb, clock=clock)
        producer = JobProducer(queue_url, sqs_client=sqs)
        sent: list[tuple[str, str | None]] = []
        timeline: list[tuple[str, Any]] = []  # ("sent", job id) | ("committed", applied ids)
        in_run: list[str | None] = []

        def send(key: str | None) -> None:
            job_id = f"j{len(sent)}"
            sent.append((job_id, key))
            timeline.append(("sent", job_id))
            harness.behaviour[job_id] = during
            message = JobMessage(job_id, "t", {}, group="ws#1", supersede=key)
            if key is None:
                producer.send_batch([message])
            else:
                steering.send_superseding(producer, message)

        def during(job: Job) -> None:
            while in_run:
                send(in_run.pop(0))

        # WHEN each step runs
        for step, key in [*steps, ("deliver", None)]:
            if step == "send":
                send(key)
            elif step == "send_in_run":
                in_run.append(key)
            else:
                _deliver_recording(harness, timeline)
        while in_run:  # marks left for a transition that never came: sent now, then delivered
            send(in_run.pop(0))
            _deliver_recording(harness, timeline)

        # THEN every job was applied or superseded, once; the newest of each key was applied
        applied = harness.log()
        superseded = [j or "" for j, status in harness.outcomes() if status == "SUPERSEDED"]
        assert sorted(applied + superseded) == sorted(j for j, _ in sent)
        assert len(set(applied)) == len(applied)
        for key in {k for _, k in sent if k}:
            assert [j for j, k in sent if k == key][-1] in applied
        # AND no job was applied once a newer job of its key had been sent (marked) before its commit
        order = [j for j, _ in sent]
        for job_id in applied:
            key = dict(sent)[job_id]
            commit = next(
                n for n, (kind, value) in enumerate(timeline) if kind == "committed" and job_id in value
            )
            newer = {j for j, k in sent[order.index(job_id) + 1 :] if k == key and key}
            assert not newer & {value for kind, value in timeline[:commit] if kind == "sent"}
        # AND the applied jobs kept the send order; nothing was dead-lettered
        assert applied == sorted(applied, key=order.index)
        assert harness.dead_letters() == []


# --- cancel a live group -----------------------------------------------------------------------------


@dataclass(frozen=True)
class GroupCancelSchedule:
    steps: tuple[str, ...]  # "send", "deliver", "cancel" (between batches), "cancel_in_run"
    state_mode: bool


@st.composite
def group_cancel_schedules(draw: st.DrawFn) -> GroupCancelSchedule:
    kinds = st.sampled_from(["send", "send", "deliver", "cancel", "cancel_in_run"])
    return GroupCancelSchedule(tuple(draw(st.lists(kinds, min_size=1, max_size=8))), draw(st.booleans()))


@_EXAMPLES
@given(group_cancel_schedules())
def test_a_live_group_cancel_never_skips_a_job_sent_after_it_and_stops_what_was_queued(
    schedule: GroupCancelSchedule,
) -> None:
    with mock_aws():
        # GIVEN a live group's jobs sent between deliveries, and group cancels placed between batches or
        # while a job runs (its batch read the group before the cancel); the clock starts at SQS's
        dynamodb, sqs, queue_url, dlq_url = _clients()
        clock = FakeClock(time.time())
        harness: Harness | StateHarness
        if schedule.state_mode:
            harness = StateHarness(dynamodb, sqs, queue_url, dlq_url, clock=clock)
        else:
            harness = Harness(dynamodb=dynamodb, sqs=sqs, queue_url=queue_url, dlq_url=dlq_url, clock=clock)
            harness.policy = DeadJobPolicy.PARK
        steering = JobSteering(
            claim_table=None if schedule.state_mode else TABLE_NAME,
            group_table=GROUP_TABLE_NAME,
            dynamodb=dynamodb,
            clock=clock,
            sqs=sqs,
            queue_url=queue_url,
        )
        sent: list[str] = []
        cancels: list[Cut] = []
        in_run: list[bool] = []
        started_in: dict[str, int] = {}  # job id -> the delivery (batch) its first run started in
        delivery = [0]

        def cancel(*, during: bool) -> None:
            # what had run (claim mode: started; state mode: committed) when the cancel was written
            ran = harness.log() if isinstance(harness, StateHarness) else list(started_in)
            cancels.append(Cut(len(sent), during, frozenset(ran), delivery[0]))
            steering.cancel_group("ws#1")

        def started(job: Job) -> None:
            started_in.setdefault(job.id, delivery[0])
            if in_run:
                in_run.pop()
                cancel(during=True)

        # WHEN each step runs, then the queue is drained
        for step in [*schedule.steps, "deliver"]:
            if step == "send":
                job_id = f"j{len(sent)}"
                sent.append(job_id)
                harness.behaviour[job_id] = started
                _send_one(harness, job_id, state_mode=schedule.state_mode)
            elif step == "cancel":
                cancel(during=False)
            elif step == "cancel_in_run":
                in_run.append(True)
            else:
                _deliver_counting(harness, delivery, clock)

        # THEN a job sent after every cancel ran (was applied), once
        done = harness.log() if isinstance(harness, StateHarness) else _succeeded(harness)
        last = max((cut.sent for cut in cancels), default=0)
        assert [j for j in done if sent.index(j) >= last] == sent[last:]
        # AND a job sent before a cancel, not run when it was written, never ran (claim mode, a cancel
        # during a run: the rest of that batch may still run, at most a batch)
        cancelled = {j or "" for j, status in harness.outcomes() if status == "CANCELLED"}
        for cut in cancels:
            for job_id in sent[: cut.sent]:
                if job_id in cut.ran:
                    continue
                if cut.during and not schedule.state_mode and started_in.get(job_id) == cut.delivery:
                    continue
                assert job_id not in done
                assert job_id in cancelled
        # AND every job ran once or was cancelled, the runs in send order; nothing dead-lettered; live
        assert len(done) == len(set(done))
        assert set(done) | cancelled >= set(sent)
        assert done == sorted(done, key=sent.index)
        assert harness.dead_letters() == []
        assert harness.parking.header("ws#1") is None


@dataclass(frozen=True)
class Cut:
    """One group cancel: jobs sent before it, whether it landed during a run, what had run, the batch."""

    sent: int
    during: bool
    ran: frozenset[str]
    delivery: int


def _deliver_counting(harness: Harness | StateHarness, delivery: list[int], clock: FakeClock) -> None:
    """Deliver what the queue holds until it is empty, counting the batches in ``delivery``."""
    for _ in range(_ROUNDS):
        records = receive_records(harness.sqs, harness.queue_url)
        if not records:
            return
        delivery[0] += 1
        failed = set(failed_ids(harness.run(*records)))
        for record in records:
            handle = record["receiptHandle"]
            if record["messageId"] in failed:
                harness.sqs.change_message_visibility(
                    QueueUrl=harness.queue_url, ReceiptHandle=handle, VisibilityTimeout=0
                )
            else:
                harness.sqs.delete_message(QueueUrl=harness.queue_url, ReceiptHandle=handle)
        clock.advance(60)
    raise AssertionError("the queue did not drain")


def _send_one(harness: Harness | StateHarness, job_id: str, *, state_mode: bool) -> None:
    envelope = body(job_id) if not state_mode else json.dumps({"jobId": job_id, "type": "t", "payload": {}})
    harness.sqs.send_message(
        QueueUrl=harness.queue_url, MessageBody=envelope, MessageGroupId="ws#1", MessageDeduplicationId=job_id
    )
