"""Functional tests of JobSteering.cancel against the real runtime on moto, in both modes."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import pytest

from constructs_fifo.client import (
    CancelOutcome,
    HoldOutcome,
    JobMessage,
    JobOutcomes,
    JobProducer,
    JobStatus,
    JobSteering,
    ParkedGroups,
    SteeringQueryError,
    SteeringWriteError,
)
from constructs_fifo.runtime.constants import DeadJobPolicy
from constructs_fifo.runtime.exceptions import PermanentJobError
from constructs_fifo.runtime.job import Job

from .runtime_harness import (
    GROUP_TABLE_NAME,
    TABLE_NAME,
    FakeClock,
    FakeContext,
    Harness,
    body,
    event,
    failed_ids,
    make_record,
    receive_records,
)
from .state_harness import StateHarness, job_record
from .worker_harness import SlotHarness

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient


def steering_of(harness: Harness) -> JobSteering:
    return JobSteering(claim_table=TABLE_NAME, dynamodb=harness.dynamodb, clock=harness.clock)


def outcomes_of(harness: Harness) -> JobOutcomes:
    return JobOutcomes(claim_table=TABLE_NAME, dynamodb=harness.dynamodb, clock=harness.clock)


def metric_lines(harness: Harness | StateHarness, name: str) -> list[dict[str, object]]:
    return [line for line in harness.lines() if name in line and "status" not in line]


# --- claim mode ---------------------------------------------------------------------------------


def test_a_job_cancelled_before_it_starts_never_runs_and_its_group_goes_on(harness: Harness) -> None:
    # GIVEN j2 cancelled before its message arrives, between j1 and j3 of one group
    report = steering_of(harness).cancel("j2", group="ws#1", reason="notifications/cancelled", by="mcp")
    records = [make_record(body(job_id)) for job_id in ("j1", "j2", "j3")]

    # WHEN the batch runs
    response = harness.run(*records)

    # THEN j2 never ran, its record is deleted (not reported), and j3 ran after j1
    assert report.outcome is CancelOutcome.NOT_STARTED
    assert harness.ran == ["j1", "j3"]
    assert failed_ids(response) == []
    assert ("j2", "CANCELLED") in harness.outcomes()
    assert harness.dead_letters() == []
    assert [line["jobId"] for line in metric_lines(harness, "JobsCancelled")] == ["j2"]
    # AND its outcome says who and why, and wait ends on it
    outcome = outcomes_of(harness).wait("j2", timeout_seconds=0)
    assert (outcome.status, outcome.cancel_reason, outcome.cancelled_by) == (
        JobStatus.CANCELLED,
        "notifications/cancelled",
        "mcp",
    )
    assert outcome.cancelled_while_running is False


def test_a_run_cancelled_under_it_has_its_result_refused_and_is_reported_cancelled(harness: Harness) -> None:
    # GIVEN a job whose function is still running when it is cancelled (a function cannot be stopped)
    reports = []
    harness.behaviour["j1"] = lambda job: reports.append(steering_of(harness).cancel(job.id))

    # WHEN the batch runs
    response = harness.run(make_record(body("j1")), make_record(body("j2")))

    # THEN the cancel found it running, its SUCCEEDED was refused, and the record is deleted as cancelled
    assert [(r.outcome, r.running) for r in reports] == [(CancelOutcome.STOPPED, True)]
    assert failed_ids(response) == []
    assert harness.outcomes() == [("j1", "CANCELLED"), ("j2", "SUCCEEDED")]
    cancelled = harness.outcome_lines()[0]
    assert cancelled["whileRunning"] is True
    outcome = outcomes_of(harness).get("j1")
    assert (outcome.status, outcome.cancelled_while_running) == (JobStatus.CANCELLED, True)


def test_a_succeeded_job_is_refused_and_stays_succeeded(harness: Harness) -> None:
    # GIVEN a job that succeeded
    harness.run(make_record(body("j1")))

    # WHEN it is cancelled
    report = steering_of(harness).cancel("j1")

    # THEN the cancel is refused and the job's outcome is still succeeded
    assert report.outcome is CancelOutcome.SUCCEEDED
    assert not report.outcome.cancelled
    assert outcomes_of(harness).get("j1").status is JobStatus.SUCCEEDED


def test_a_dead_job_is_refused(harness: Harness) -> None:
    # GIVEN a job that died (CONTINUE: dead-lettered)
    def poison(job: Job) -> None:
        raise PermanentJobError("never")

    harness.behaviour["j1"] = poison
    harness.run(make_record(body("j1")))

    # WHEN it is cancelled
    report = steering_of(harness).cancel("j1")

    # THEN the cancel is refused, saying it is dead
    assert report.outcome is CancelOutcome.DEAD
    assert "dead" in report.detail


def test_a_job_between_failed_attempts_is_cancelled_and_never_dead_lettered(harness: Harness) -> None:
    # GIVEN a job that failed once and waits for its retry
    def flaky(job: Job) -> None:
        raise RuntimeError("flaky")

    harness.behaviour["j1"] = flaky
    record = make_record(body("j1"))
    harness.run(record)

    # WHEN it is cancelled, then its message comes back
    report = steering_of(harness).cancel("j1", reason="stale")
    response = harness.run(record)

    # THEN no further attempt ran, the record is deleted, and the dead-letter queue is empty
    assert (report.outcome, report.running, report.attempt) == (CancelOutcome.STOPPED, False, 1)
    assert harness.ran == ["j1"]
    assert failed_ids(response) == []
    assert harness.outcomes()[-1] == ("j1", "CANCELLED")
    assert harness.dead_letters() == []


def test_a_cancel_is_repeatable_and_a_dry_run_writes_nothing(harness: Harness) -> None:
    # GIVEN a steering client
    steering = steering_of(harness)

    # WHEN a dry run, then two cancels
    dry = steering.cancel("j1", dry_run=True)
    first = steering.cancel("j1")
    second = steering.cancel("j1")

    # THEN the dry run said what would happen and wrote nothing; the second cancel changed nothing
    assert (dry.outcome, dry.dry_run) == (CancelOutcome.NOT_STARTED, True)
    assert first.outcome is CancelOutcome.NOT_STARTED
    assert second.outcome is CancelOutcome.ALREADY_CANCELLED


def test_a_job_kept_behind_a_parked_group_is_cancelled_and_the_resume_does_not_run_it(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str
) -> None:
    # GIVEN a parked group (j1 dead) with j2 and j3 kept behind it
    harness = Harness(
        dynamodb=dynamodb, sqs=sqs, queue_url=queue_url, dlq_url=dlq_url, policy=DeadJobPolicy.PARK
    )

    def poison(job: Job) -> None:
        raise PermanentJobError("bad patch")

    harness.behaviour["j1"] = poison
    harness.run(*[make_record(body(job_id)) for job_id in ("j1", "j2", "j3")])
    assert harness.parking.header("ws#1") is not None

    # WHEN j2 is cancelled and the group resumed (skipping its dead job)
    assert steering_of(harness).cancel("j2").outcome is CancelOutcome.NOT_STARTED
    ParkedGroups(
        group_table=GROUP_TABLE_NAME,
        claim_table=TABLE_NAME,
        queue_url=queue_url,
        dead_letter_queue_url=dlq_url,
        dynamodb=dynamodb,
        sqs=sqs,
        clock=harness.clock,
    ).resume("ws#1", skip_dead=True)
    harness.run(*receive_records(sqs, queue_url))

    # THEN j2 was not run; j3 was, and the group is live again
    assert "j2" not in harness.ran
    assert harness.ran[-1] == "j3"
    assert harness.parking.header("ws#1") is None


# --- state mode ---------------------------------------------------------------------------------


@pytest.fixture
def state(dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str) -> StateHarness:
    return StateHarness(dynamodb, sqs, queue_url, dlq_url)


def state_steering(state: StateHarness) -> JobSteering:
    return JobSteering(group_table=GROUP_TABLE_NAME, dynamodb=state.dynamodb, clock=state.clock)


def test_state_a_cancelled_job_is_never_applied_and_its_seq_closes_its_place(state: StateHarness) -> None:
    # GIVEN s1 applied, s2 cancelled before it arrives, s3 arriving before s2
    state.run(job_record("s0", 0), job_record("s1", 1))
    report = state_steering(state).cancel("s2", group="ws#1", seq=2, reason="superseded patch")
    state.run(job_record("s3", 3))

    # WHEN s2 arrives
    response = state.run(job_record("s2", 2))

    # THEN s2 was never applied, s3 was applied after it closed its place, and nothing is reported
    assert report.outcome is CancelOutcome.NOT_STARTED
    assert state.log() == ["s0", "s1", "s3"]
    assert "s2" not in state.runs
    assert failed_ids(response) == []
    assert ("s2", "CANCELLED") in state.outcomes()
    outcomes = JobOutcomes(group_table=GROUP_TABLE_NAME, dynamodb=state.dynamodb)
    outcome = outcomes.get("s2", "ws#1", seq=2)
    assert (outcome.status, outcome.cancel_reason) == (JobStatus.CANCELLED, "superseded patch")


def test_state_an_applied_job_is_refused_and_a_seq_group_needs_the_seq(state: StateHarness) -> None:
    # GIVEN a group that applied s0 and s1
    state.run(job_record("s0", 0), job_record("s1", 1))
    steering = state_steering(state)

    # WHEN s1 is cancelled with its seq, and without it
    report = steering.cancel("s1", group="ws#1", seq=1)

    # THEN refused: applied; without the seq the cancel is refused before any write
    assert report.outcome is CancelOutcome.SUCCEEDED
    with pytest.raises(SteeringQueryError, match="pass the job's seq"):
        steering.cancel("s1", group="ws#1")


def test_state_a_cancel_between_a_runs_read_and_its_commit_wins(state: StateHarness) -> None:
    # GIVEN a transition during which the job is cancelled (the run read the group before the cancel)
    reports = []
    state.behaviour["j1"] = lambda job: reports.append(state_steering(state).cancel("j1", group="ws#1"))
    record = job_record("j1")

    # WHEN the batch runs, then its record comes back
    first = state.run(record)
    state.behaviour.clear()
    second = state.run(record)

    # THEN the run's commit lost to the cancel, and the job was never applied
    assert reports[0].outcome is CancelOutcome.NOT_STARTED
    assert failed_ids(first) == [record["messageId"]]
    assert failed_ids(second) == []
    assert state.log() == []
    assert state.outcomes()[-1] == ("j1", "CANCELLED")


def test_state_mode_needs_the_group(state: StateHarness) -> None:
    # GIVEN a state-mode steering client
    # WHEN a job is cancelled without its group
    # THEN the call is refused with the fix
    with pytest.raises(SteeringQueryError, match="pass group="):
        state_steering(state).cancel("j1")


# --- the container worker: the cancel reaches a running job through its heartbeat ---------------


def test_a_worker_run_is_told_within_one_heartbeat_and_its_result_is_refused(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN a job running on a worker slot, cancelled while it runs, then the slot's heartbeat ticks
    told: dict[str, object] = {}

    def handle(job: Job, context: Any) -> str:
        steering = JobSteering(claim_table=TABLE_NAME, dynamodb=dynamodb, clock=slot.clock)
        told["report"] = steering.cancel(job.id, reason="stop")
        slot.heartbeat.tick()
        told["cancelled"] = context.cancelled.is_set()
        return "done anyway"

    slot = SlotHarness(dynamodb, sqs, queue_url, handle)
    sqs.send_message(
        QueueUrl=queue_url, MessageBody=body("j1"), MessageGroupId="ws#1", MessageDeduplicationId="j1"
    )
    records = receive_records(sqs, queue_url)

    # WHEN the batch runs
    slot.slot.process_batch(records, slot.heartbeat.begin(slot.clock()))

    # THEN the job was told (context.cancelled) at the tick, its result was not recorded, and its
    # outcome is cancelled while running
    assert told["cancelled"] is True
    assert [(jid, status) for jid, status in slot.statuses()] == [("j1", "CANCELLED")]
    outcome = JobOutcomes(claim_table=TABLE_NAME, dynamodb=dynamodb, clock=slot.clock).get("j1")
    assert told["report"].outcome is CancelOutcome.STOPPED  # type: ignore[attr-defined]
    assert (outcome.status, outcome.cancelled_while_running, outcome.result) == (
        JobStatus.CANCELLED,
        True,
        None,
    )


# --- hold and release a group ------------------------------------------------------------------


def _parking_harness(dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str) -> Harness:
    return Harness(
        dynamodb=dynamodb, sqs=sqs, queue_url=queue_url, dlq_url=dlq_url, policy=DeadJobPolicy.PARK
    )


def _group_steering(harness: Harness | StateHarness, *, claim: bool) -> JobSteering:
    return JobSteering(
        claim_table=TABLE_NAME if claim else None,
        group_table=GROUP_TABLE_NAME,
        dynamodb=harness.dynamodb,
        clock=harness.clock,
        sqs=harness.sqs,
        queue_url=harness.queue_url,
    )


def _send(harness: Harness | StateHarness, *job_ids: str, group: str = "ws#1") -> None:
    for job_id in job_ids:
        harness.sqs.send_message(
            QueueUrl=harness.queue_url,
            MessageBody=body(job_id),
            MessageGroupId=group,
            MessageDeduplicationId=job_id,
        )


def _drain(harness: Harness | StateHarness, rounds: int = 12) -> None:
    """Deliver until the queue is empty, as the event source mapping does: records not reported are
    deleted, reported ones made visible again while the test's clock moves past any backoff."""
    for _ in range(rounds):
        records = receive_records(harness.sqs, harness.queue_url)
        if not records:
            return
        failed = set(failed_ids(harness.run(*records)))
        for record in records:
            handle = record["receiptHandle"]
            if record["messageId"] in failed:
                harness.sqs.change_message_visibility(
                    QueueUrl=harness.queue_url, ReceiptHandle=handle, VisibilityTimeout=0
                )
            else:
                harness.sqs.delete_message(QueueUrl=harness.queue_url, ReceiptHandle=handle)
        harness.clock.advance(600)
    raise AssertionError(f"the queue did not drain in {rounds} batches")


def test_claim_a_held_group_starts_nothing_until_released_then_runs_in_order(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str
) -> None:
    # GIVEN a held group (PARK policy), with jobs sent to it and to another group
    harness = _parking_harness(dynamodb, sqs, queue_url, dlq_url)
    steering = _group_steering(harness, claim=True)
    held = steering.hold("ws#1", reason="runaway session", by="oncall")
    _send(harness, "a1", "a2", "a3")
    _send(harness, "b1", group="ws#2")

    # WHEN the queue is drained
    _drain(harness)

    # THEN nothing of the held group ran, the other group did, and its jobs read held
    assert held.outcome is HoldOutcome.HELD
    assert harness.ran == ["b1"]
    assert (
        JobOutcomes(claim_table=TABLE_NAME, group_table=GROUP_TABLE_NAME, dynamodb=dynamodb)
        .get("a2", "ws#1")
        .status
        is JobStatus.HELD
    )
    assert steering.hold("ws#1").outcome is HoldOutcome.ALREADY_HELD
    # AND no GroupsParked metric was written (a hold never fires the parked-groups alarm)
    assert not any("GroupsParked" in line and line["GroupsParked"] for line in harness.lines())

    # WHEN it is released and the queue drained again
    released = steering.release("ws#1")
    _drain(harness)

    # THEN its jobs ran in order and the group is live again
    assert released.outcome is HoldOutcome.RELEASED
    assert harness.ran == ["b1", "a1", "a2", "a3"]
    assert harness.parking.header("ws#1") is None


def test_claim_a_cancel_of_a_job_kept_by_a_hold_is_never_run_after_release(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str
) -> None:
    # GIVEN a held group keeping a1..a3, and a2 cancelled while held
    harness = _parking_harness(dynamodb, sqs, queue_url, dlq_url)
    steering = _group_steering(harness, claim=True)
    steering.hold("ws#1")
    _send(harness, "a1", "a2", "a3")
    _drain(harness)
    steering.cancel("a2", group="ws#1")

    # WHEN released
    steering.release("ws#1")
    _drain(harness)

    # THEN a2 never ran; a1 and a3 ran in order
    assert harness.ran == ["a1", "a3"]


def test_hold_of_a_parked_group_is_refused_and_hold_without_a_group_table_names_the_fix(
    harness: Harness,
) -> None:
    # GIVEN a CONTINUE claim-mode queue (no group table)
    # WHEN a group is held / THEN the call says what is missing
    with pytest.raises(SteeringQueryError, match="PARK policy"):
        steering_of(harness).hold("ws#1")


def test_state_a_hold_refuses_the_commit_of_a_batch_that_read_the_group_before_it(
    state: StateHarness,
) -> None:
    # GIVEN a transition during which the group is held (the batch read the group before the hold)
    steering = _group_steering(state, claim=False)
    reports = []
    state.behaviour["j1"] = lambda job: reports.append(steering.hold("ws#1"))
    _send(state, "j1", "j2")

    # WHEN the queue is drained
    _drain(state)

    # THEN nothing was applied: the run's commit lost to the hold, and its records are kept
    assert reports[0].outcome is HoldOutcome.HELD
    assert state.log() == []
    assert state.kept_ids() == ["j1", "j2"]

    # WHEN released and drained
    state.behaviour.clear()
    steering.release("ws#1")
    _drain(state)

    # THEN both were applied, in order, once
    assert state.log() == ["j1", "j2"]
    assert state.header() is None


# --- cancel a group's kept jobs ----------------------------------------------------------------


def test_claim_cancel_group_cancels_what_the_held_group_keeps_and_never_a_job_sent_after(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str
) -> None:
    # GIVEN a held group whose backlog a1..a3 was kept
    harness = _parking_harness(dynamodb, sqs, queue_url, dlq_url)
    steering = _group_steering(harness, claim=True)
    steering.hold("ws#1")
    _send(harness, "a1", "a2", "a3")
    _drain(harness)

    # WHEN the group is cancelled, a4 is sent after, and the group released
    report = steering.cancel_group("ws#1", reason="session closed")
    _send(harness, "a4")
    steering.release("ws#1")
    _drain(harness)

    # THEN a1..a3 never ran, a4 did; nothing was dead-lettered
    assert [(r.job_id, r.outcome) for r in report.jobs] == [
        (job, CancelOutcome.NOT_STARTED) for job in ("a1", "a2", "a3")
    ]
    assert harness.ran == ["a4"]
    assert harness.dead_letters() == []


def test_state_cancel_group_closes_the_cancelled_seqs_so_the_next_one_applies(state: StateHarness) -> None:
    # GIVEN a held state-mode group whose jobs with seq 0..2 were kept
    steering = _group_steering(state, claim=False)
    steering.hold("ws#1")
    for n in range(3):
        state.sqs.send_message(
            QueueUrl=state.queue_url,
            MessageBody=json.dumps({"jobId": f"s{n}", "type": "t", "payload": {}, "seq": n}),
            MessageGroupId="ws#1",
            MessageDeduplicationId=f"s{n}",
        )
    _drain(state)

    # WHEN the group is cancelled, s3 (seq 3) is sent, and the group released
    report = steering.cancel_group("ws#1")
    state.sqs.send_message(
        QueueUrl=state.queue_url,
        MessageBody=json.dumps({"jobId": "s3", "type": "t", "payload": {}, "seq": 3}),
        MessageGroupId="ws#1",
        MessageDeduplicationId="s3",
    )
    steering.release("ws#1")
    _drain(state)

    # THEN none of s0..s2 was applied, s3 was (their places closed), and nothing waits in the buffer
    assert report.cancelled == 3
    assert state.log() == ["s3"]
    assert state.group_state().book.buffer == ()


def _live_harness(dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str) -> Harness:
    """A PARK harness whose clock starts at SQS's (moto's SentTimestamp is the real time): a live group's
    cancel compares the header's time with the records' (docs/steering.md, a lost marker)."""
    return Harness(
        dynamodb=dynamodb,
        sqs=sqs,
        queue_url=queue_url,
        dlq_url=dlq_url,
        policy=DeadJobPolicy.PARK,
        clock=FakeClock(time.time()),
    )


@pytest.fixture
def live_state(dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str) -> StateHarness:
    return StateHarness(dynamodb, sqs, queue_url, dlq_url, clock=FakeClock(time.time()))


def _live_steering(harness: Harness | StateHarness, *, claim: bool) -> JobSteering:
    return _group_steering(harness, claim=claim)


def _send_seq(state: StateHarness, job_id: str, seq: int) -> None:
    state.sqs.send_message(
        QueueUrl=state.queue_url,
        MessageBody=json.dumps({"jobId": job_id, "type": "t", "payload": {}, "seq": seq}),
        MessageGroupId="ws#1",
        MessageDeduplicationId=job_id,
    )


def test_claim_cancel_of_a_live_group_cancels_what_was_queued_and_never_a_job_sent_after(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str
) -> None:
    # GIVEN a live group with a1, a2 queued (PARK policy: the header is read per batch)
    harness = _live_harness(dynamodb, sqs, queue_url, dlq_url)
    _send(harness, "a1", "a2")

    # WHEN the group is cancelled, a3 is sent after, and the queue drained
    report = _live_steering(harness, claim=True).cancel_group("ws#1", reason="session closed", by="mcp")
    _send(harness, "a3")
    _drain(harness)

    # THEN a1 and a2 never ran and read cancelled; a3 ran; the group is live again; nothing dead-lettered
    assert (report.status, report.marker_id is not None) == ("LIVE", True)
    assert harness.ran == ["a3"]
    assert [j for j, status in harness.outcomes() if status == "CANCELLED"] == ["a1", "a2"]
    outcome = outcomes_of(harness).get("a2")
    assert (outcome.status, outcome.cancel_reason, outcome.cancelled_by) == (
        JobStatus.CANCELLED,
        "session closed",
        "mcp",
    )
    assert harness.parking.header("ws#1") is None
    assert harness.dead_letters() == []


def test_claim_a_job_that_dies_while_its_live_group_is_cancelled_is_dead_lettered_not_dropped(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str
) -> None:
    # GIVEN a live PARK group whose a1 fails permanently while an operator cancels the group (the header
    # is written between the batch's read and the park: the park is refused, a1's claim is DEAD)
    harness = _live_harness(dynamodb, sqs, queue_url, dlq_url)
    steering = _live_steering(harness, claim=True)

    def dies_under_the_cancel(job: Job) -> None:
        steering.cancel_group("ws#1", reason="stop", by="ops")
        _send(harness, "a3")  # sent after the cancel returned
        raise PermanentJobError("bad patch")

    harness.behaviour["a1"] = dies_under_the_cancel
    _send(harness, "a1", "a2")

    # WHEN the queue is drained (a3 is sent after the cancel, while a1 runs)
    _drain(harness)

    # THEN a1 is not lost: dead, and its record is in the dead-letter queue with its own reason; a2
    # (sent before the cancel) never ran; a3 ran; the group is live; nothing cancelled is dead-lettered
    assert outcomes_of(harness).get("a1").status is JobStatus.DEAD
    letters = harness.dead_letters()
    assert [(json.loads(letter["Body"])["jobId"]) for letter in letters] == ["a1"]
    assert harness.ran == ["a1", "a3"]
    assert outcomes_of(harness).get("a2").status is JobStatus.CANCELLED
    assert harness.parking.header("ws#1") is None


def test_claim_a_malformed_record_whose_park_a_live_cancel_refused_is_dead_lettered_once(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str
) -> None:
    # GIVEN a live PARK group: a1, whose run cancels the group, then m1, malformed but with a job id, in
    # the same batch (its claim is marked DEAD, its park refused by the cancel's header)
    harness = _live_harness(dynamodb, sqs, queue_url, dlq_url)
    steering = _live_steering(harness, claim=True)

    def cancels_its_group(job: Job) -> None:
        steering.cancel_group("ws#1", reason="stop")

    harness.behaviour["a1"] = cancels_its_group
    _send(harness, "a1")
    sqs.send_message(
        QueueUrl=queue_url, MessageBody='{"jobId": "m1"}', MessageGroupId="ws#1", MessageDeduplicationId="m1"
    )

    # WHEN the queue is drained
    _drain(harness)

    # THEN m1 is in the dead-letter queue once, as malformed; the cancel ended; the group is live
    letters = harness.dead_letters()
    reasons = [letter["MessageAttributes"]["reason"]["StringValue"] for letter in letters]
    assert (len(letters), reasons) == (1, ["MALFORMED"])
    assert harness.ran == ["a1"]
    assert harness.parking.header("ws#1") is None


def test_claim_two_cancels_of_a_live_group_cancel_up_to_the_later_marker(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str
) -> None:
    # GIVEN a1 queued, a cancel, a2 sent, a second cancel (its marker replaces the first), a3 sent
    harness = _live_harness(dynamodb, sqs, queue_url, dlq_url)
    steering = _live_steering(harness, claim=True)
    _send(harness, "a1")
    first = steering.cancel_group("ws#1")
    _send(harness, "a2")
    second = steering.cancel_group("ws#1")
    _send(harness, "a3")

    # WHEN the queue is drained
    _drain(harness)

    # THEN a1 and a2 (sent before the second call) never ran, a3 did; the first marker was a wake-up
    assert (first.status, second.status) == ("LIVE", "CANCELLING")
    assert harness.ran == ["a3"]
    assert harness.parking.header("ws#1") is None


def test_claim_cancel_group_running_refuses_the_result_of_the_job_running_and_a_hold_is_refused(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str
) -> None:
    # GIVEN j1 running on the function when its group is cancelled with running=True
    harness = _live_harness(dynamodb, sqs, queue_url, dlq_url)
    steering = _live_steering(harness, claim=True)
    reports: list[Any] = []

    def cancel_under_it(job: Job) -> None:
        reports.append(steering.cancel_group("ws#1", running=True))
        reports.append(steering.hold("ws#1"))

    harness.behaviour["j1"] = cancel_under_it
    _send(harness, "j1")

    # WHEN the queue is drained, then j2 sent after and drained
    _drain(harness)
    _send(harness, "j2")
    _drain(harness)

    # THEN j1 ran to its end but its result was refused (cancelled while running); the hold during the
    # cancel was refused; j2 ran
    assert [(r.job_id, r.outcome, r.running) for r in reports[0].jobs] == [
        ("j1", CancelOutcome.STOPPED, True)
    ]
    assert reports[1].outcome is HoldOutcome.CANCELLING
    assert outcomes_of(harness).get("j1").cancelled_while_running is True
    assert harness.ran == ["j1", "j2"]
    assert harness.parking.header("ws#1") is None


def test_a_live_cancel_whose_marker_cannot_be_sent_puts_the_header_back(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str
) -> None:
    # GIVEN a queue that refuses the marker message
    harness = _parking_harness(dynamodb, sqs, queue_url, dlq_url)

    class Refusing:
        def send_message(self, **_: Any) -> dict[str, Any]:
            raise RuntimeError("throttled")

    steering = JobSteering(
        claim_table=TABLE_NAME,
        group_table=GROUP_TABLE_NAME,
        dynamodb=dynamodb,
        sqs=Refusing(),  # type: ignore[arg-type]
        queue_url=queue_url,
    )

    # WHEN the group is cancelled / THEN the call fails saying nothing stands, and the group is live
    with pytest.raises(SteeringWriteError, match="its header is as it was"):
        steering.cancel_group("ws#1")
    assert harness.parking.header("ws#1") is None


def test_cancel_group_without_a_group_table_or_with_up_to_seq_in_claim_mode_names_the_fix(
    harness: Harness,
) -> None:
    # GIVEN a CONTINUE claim-mode queue (no group table) / WHEN a group is cancelled / THEN the fix
    with pytest.raises(SteeringQueryError, match="PARK policy"):
        steering_of(harness).cancel_group("ws#1")
    with pytest.raises(SteeringQueryError, match="claim mode has no seqs"):
        JobSteering(
            claim_table=TABLE_NAME, group_table=GROUP_TABLE_NAME, dynamodb=harness.dynamodb
        ).cancel_group("ws#1", up_to_seq=3)


def test_state_cancel_of_a_live_group_cancels_the_queued_and_the_buffered_jobs_and_closes_their_seqs(
    live_state: StateHarness,
) -> None:
    state = live_state
    # GIVEN s1 (seq 1) waiting in the reorder buffer for s0, and s0 queued
    _send_seq(state, "s1", 1)
    _drain(state)
    _send_seq(state, "s0", 0)

    # WHEN the group is cancelled, s2 (seq 2) sent after, and the queue drained
    report = _live_steering(state, claim=False).cancel_group("ws#1", reason="stop")
    _send_seq(state, "s2", 2)
    _drain(state)

    # THEN neither s0 nor s1 was applied, s2 was (their seqs closed), nothing waits, the group is live
    assert [(r.job_id, r.outcome) for r in report.jobs] == [("s1", CancelOutcome.NOT_STARTED)]
    assert state.log() == ["s2"]
    assert state.group_state().book.buffer == ()
    assert ("s0", "CANCELLED") in state.outcomes()
    assert state.header() is None


def test_state_a_live_group_cancel_leaves_an_applied_job_applied_when_its_late_copy_is_before_the_marker(
    live_state: StateHarness,
) -> None:
    state = live_state
    # GIVEN j1 applied, then a copy of j1 sent again (another message: past SQS's deduplication) and j2
    _send(state, "j1")
    _drain(state)
    state.sqs.send_message(
        QueueUrl=state.queue_url, MessageBody=body("j1"), MessageGroupId="ws#1", MessageDeduplicationId="j1-2"
    )
    _send(state, "j2")

    # WHEN the group is cancelled, j3 sent after, and the queue drained
    _live_steering(state, claim=False).cancel_group("ws#1", reason="stop")
    _send(state, "j3")
    _drain(state)

    # THEN j1 stays applied (once) and reads so, never cancelled; j2 was cancelled; j3 applied
    assert state.log() == ["j1", "j3"]
    outcomes = JobOutcomes(group_table=GROUP_TABLE_NAME, dynamodb=state.dynamodb)
    assert outcomes.get("j1", "ws#1").status is JobStatus.SUCCEEDED
    assert outcomes.get("j2", "ws#1").status is JobStatus.CANCELLED
    assert state.header() is None


def test_state_cancel_of_a_live_group_keeps_its_marker_when_the_batch_runs_out_of_time(
    live_state: StateHarness,
) -> None:
    state = live_state
    # GIVEN s0 queued, then the live group cancelled: its header CANCELLING, its marker sent behind s0
    _send_seq(state, "s0", 0)
    _live_steering(state, claim=False).cancel_group("ws#1", reason="stop")

    # WHEN a batch holding s0 and the marker runs out of time before the group starts
    records = receive_records(state.sqs, state.queue_url)
    failed = set(failed_ids(state.run(*records, remaining_ms=1)))

    # THEN every record of it comes back, the marker too (found by the chaos suite: the marker was
    # deleted and the header stayed CANCELLING, cancelling jobs sent after the call)
    assert len(records) == 2
    assert failed == {record["messageId"] for record in records}
    # AND once they come back s0 is cancelled, the cancel ends, and a job sent after it is applied
    for record in records:
        state.sqs.change_message_visibility(
            QueueUrl=state.queue_url, ReceiptHandle=record["receiptHandle"], VisibilityTimeout=0
        )
    _send_seq(state, "s1", 1)
    _drain(state)
    assert state.log() == ["s1"]
    assert state.header() is None


def test_state_cancel_up_to_seq_leaves_the_later_seqs_and_refuses_a_batch_in_flight(
    live_state: StateHarness,
) -> None:
    state = live_state
    # GIVEN s0..s2 queued; the group cancelled up to seq 1 while s0's transition runs (its batch read
    # the group before the cancel)
    steering = _live_steering(state, claim=False)
    for n in range(3):
        _send_seq(state, f"s{n}", n)

    # WHEN the queue is drained
    def cancel_under_it(job: Job) -> None:
        state.behaviour.clear()
        steering.cancel_group("ws#1", up_to_seq=1)

    state.behaviour["s0"] = cancel_under_it
    _drain(state)

    # THEN s0's commit was refused and it was cancelled when it came back, as s1; s2 was applied
    assert state.log() == ["s2"]
    assert [j for j, status in state.outcomes() if status == "CANCELLED"] == ["s0", "s1"]
    assert state.header() is None


# --- a fix ahead of the line ---------------------------------------------------------------------


def test_claim_a_fix_runs_first_when_a_parked_group_resumes_skipping_its_dead_job(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str
) -> None:
    # GIVEN a group parked at a1 (its patch failed), with a2 and a3 kept behind it
    harness = _parking_harness(dynamodb, sqs, queue_url, dlq_url)

    def poison(job: Job) -> None:
        raise PermanentJobError("patch does not apply")

    harness.behaviour["a1"] = poison
    _send(harness, "a1", "a2", "a3")
    _drain(harness)
    steering = _group_steering(harness, claim=True)

    # WHEN the corrected patch is put first and the group resumed, skipping the dead job
    first = steering.run_first(JobMessage("fix1", "apply_patch", {"diff": "fixed"}, group="ws#1"))
    ParkedGroups(
        group_table=GROUP_TABLE_NAME,
        claim_table=TABLE_NAME,
        queue_url=queue_url,
        dead_letter_queue_url=dlq_url,
        dynamodb=dynamodb,
        sqs=sqs,
        clock=harness.clock,
    ).resume("ws#1", skip_dead=True)
    _drain(harness)

    # THEN the fix ran before the kept jobs, in order, and the group is live again
    assert first.outcome is HoldOutcome.FIRST
    assert harness.ran == ["a1", "fix1", "a2", "a3"]
    assert harness.parking.header("ws#1") is None


def test_state_a_fix_is_applied_first_when_a_held_group_is_released(state: StateHarness) -> None:
    # GIVEN a held state-mode group keeping j1, j2, with a fix put first (a second one is refused)
    steering = _group_steering(state, claim=False)
    steering.hold("ws#1")
    _send(state, "j1", "j2")
    _drain(state)
    steering.run_first(JobMessage("fix1", "apply_patch", {}, group="ws#1"))
    with pytest.raises(SteeringQueryError, match="waiting to run first"):
        steering.run_first(JobMessage("fix2", "apply_patch", {}, group="ws#1"))

    # WHEN released
    steering.release("ws#1")
    _drain(state)

    # THEN the fix was applied first, then the kept jobs in order
    assert state.log() == ["fix1", "j1", "j2"]


class _RunningOut(FakeContext):
    """A context whose time runs out as it is asked (2 s per question): an invocation ends."""

    def get_remaining_time_in_millis(self) -> int:
        self.remaining_ms -= 2_000
        return self.remaining_ms


def test_state_a_released_group_under_continue_dead_letters_its_kept_malformed_record_and_goes_on(
    state: StateHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a held state-mode group (CONTINUE) keeping j1, a malformed record, j2 (each invocation's
    # time runs out, as a function's does)
    monkeypatch.setattr(
        state, "run", lambda *records: state.processor().process(event(*records), _RunningOut())
    )
    steering = _group_steering(state, claim=False)
    steering.hold("ws#1")
    _send(state, "j1")
    state.sqs.send_message(
        QueueUrl=state.queue_url, MessageBody="not a job", MessageGroupId="ws#1", MessageDeduplicationId="bad"
    )
    _send(state, "j2")
    _drain(state)

    # WHEN released and drained
    steering.release("ws#1")
    _drain(state, rounds=6)

    # THEN the group is live again: j1 and j2 applied in order, the malformed record dead-lettered once
    assert state.log() == ["j1", "j2"]
    assert state.header() is None
    assert [attributes.get("reason") for _, attributes in state.dead_letters()] == ["MALFORMED"]


# --- the newest wins --------------------------------------------------------------------------------


def _superseding(harness: Harness, job_id: str, key: str | None) -> None:
    producer = JobProducer(harness.queue_url, sqs_client=harness.sqs)
    message = JobMessage(job_id, "run_tests", {}, group="ws#1", supersede=key)
    if key is None:
        producer.send_batch([message])
    else:
        steering_of(harness).send_superseding(producer, message)


def test_claim_a_newer_job_of_the_same_key_supersedes_the_older_ones_not_started(harness: Harness) -> None:
    # GIVEN three run_tests of one session (patches 1, 2, 3) and an open_pr between, none run yet
    _superseding(harness, "t1", "run_tests")
    _superseding(harness, "t2", "run_tests")
    _superseding(harness, "pr", None)
    _superseding(harness, "t3", "run_tests")

    # WHEN the queue is drained
    _drain(harness)

    # THEN only the newest run_tests ran, after the open_pr (order kept); the others were superseded by it
    assert harness.ran == ["pr", "t3"]
    assert [(j, s) for j, s in harness.outcomes() if s == "SUPERSEDED"] == [
        ("t1", "SUPERSEDED"),
        ("t2", "SUPERSEDED"),
    ]
    outcome = outcomes_of(harness).get("t1")
    assert (outcome.status, outcome.superseded_by) == (JobStatus.SUPERSEDED, "t3")
    assert [line["jobId"] for line in metric_lines(harness, "JobsSuperseded")] == ["t1", "t2"]
    assert harness.dead_letters() == []


def test_claim_cancel_running_stops_the_older_job_running_on_a_worker_at_its_heartbeat(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN t1 (key run_tests) running on a worker slot when t2 of the same key is sent with
    # cancel_running, then the slot's heartbeat ticks
    told: dict[str, object] = {}
    producer = JobProducer(queue_url, sqs_client=sqs)

    def handle(job: Job, context: Any) -> str:
        steering = JobSteering(claim_table=TABLE_NAME, dynamodb=dynamodb, clock=slot.clock)
        newer = JobMessage("t2", "run_tests", {}, group="ws#1", supersede="run_tests")
        steering.send_superseding(producer, newer, cancel_running=True)
        slot.heartbeat.tick()
        told["cancelled"] = context.cancelled.is_set()
        return "done anyway"

    slot = SlotHarness(dynamodb, sqs, queue_url, handle)
    JobSteering(claim_table=TABLE_NAME, dynamodb=dynamodb, clock=slot.clock).send_superseding(
        producer, JobMessage("t1", "run_tests", {}, group="ws#1", supersede="run_tests")
    )
    records = receive_records(sqs, queue_url)

    # WHEN the batch runs
    slot.slot.process_batch(records, slot.heartbeat.begin(slot.clock()))

    # THEN t1 was told at the tick, its result was refused, and its outcome reads superseded while running
    assert told["cancelled"] is True
    assert slot.statuses() == [("t1", "CANCELLED")]
    outcome = JobOutcomes(claim_table=TABLE_NAME, dynamodb=dynamodb, clock=slot.clock).get("t1")
    assert (outcome.status, outcome.superseded_by, outcome.cancelled_while_running, outcome.result) == (
        JobStatus.SUPERSEDED,
        "t2",
        True,
        None,
    )


def test_claim_cancel_running_on_the_function_refuses_the_older_result_and_leaves_finished_ones(
    harness: Harness,
) -> None:
    # GIVEN t0 finished, t1 running on the function when t2 (same key) is sent with cancel_running
    steering = steering_of(harness)
    producer = JobProducer(harness.queue_url, sqs_client=harness.sqs)
    _superseding(harness, "t0", "run_tests")
    _drain(harness)
    _superseding(harness, "t1", "run_tests")
    newer = JobMessage("t2", "run_tests", {}, group="ws#1", supersede="run_tests")

    def supersede_under_it(job: Job) -> None:
        steering.send_superseding(producer, newer, cancel_running=True)

    harness.behaviour["t1"] = supersede_under_it

    # WHEN the queue is drained
    _drain(harness)

    # THEN t1 ran to its end but its result was refused (superseded while running); t2 ran; t0 stays
    assert harness.ran == ["t0", "t1", "t2"]
    assert ("t1", "CANCELLED") in harness.outcomes()
    assert outcomes_of(harness).get("t1").status is JobStatus.SUPERSEDED
    assert outcomes_of(harness).get("t0").status is JobStatus.SUCCEEDED


def _state_superseding(state: StateHarness, job_id: str, key: str | None, seq: int | None = None) -> None:
    producer = JobProducer(state.queue_url, sqs_client=state.sqs)
    message = JobMessage(job_id, "run_tests", {}, group="ws#1", supersede=key, seq=seq)
    if key is None:
        producer.send_batch([message])
    else:
        state_steering(state).send_superseding(producer, message)


def test_state_a_newer_job_of_the_same_key_supersedes_the_older_ones_not_applied(state: StateHarness) -> None:
    # GIVEN three run_tests of one session and an open_pr between, none applied yet
    _state_superseding(state, "t1", "run_tests")
    _state_superseding(state, "t2", "run_tests")
    _state_superseding(state, "pr", None)
    _state_superseding(state, "t3", "run_tests")

    # WHEN the queue is drained
    _drain(state)

    # THEN only the newest run_tests was applied, after the open_pr; the others were superseded by it
    assert state.log() == ["pr", "t3"]
    assert [(j, s) for j, s in state.outcomes() if s == "SUPERSEDED"] == [
        ("t1", "SUPERSEDED"),
        ("t2", "SUPERSEDED"),
    ]
    outcomes = JobOutcomes(group_table=GROUP_TABLE_NAME, dynamodb=state.dynamodb)
    outcome = outcomes.get("t1", "ws#1")
    assert (outcome.status, outcome.superseded_by) == (JobStatus.SUPERSEDED, "t3")
    assert [line["jobId"] for line in metric_lines(state, "JobsSuperseded")] == ["t1", "t2"]
    # AND the marker is gone once the newest was applied (the state item keeps pending keys only)
    assert state.group_state().newest == {}
    assert state.dead_letters() == []


def test_state_a_superseded_seq_closes_its_place_and_a_mark_fences_the_transition_in_flight(
    state: StateHarness,
) -> None:
    # GIVEN s0 (seq 0) whose transition is in flight when s1 (seq 1, same key) is marked and sent
    state.behaviour["s0"] = lambda job: _state_superseding(state, "s1", "run_tests", seq=1)
    _state_superseding(state, "s0", "run_tests", seq=0)
    state.sqs.send_message(
        QueueUrl=state.queue_url,
        MessageBody=json.dumps({"jobId": "s2", "type": "t", "payload": {}, "seq": 2}),
        MessageGroupId="ws#1",
        MessageDeduplicationId="s2",
    )

    # WHEN the queue is drained
    _drain(state)

    # THEN s0's commit was refused by the mark, and when it came back it was superseded: its seq closed,
    # so s1 and s2 were applied after it, in order, and nothing waits in the buffer
    assert state.log() == ["s1", "s2"]
    assert ("s0", "SUPERSEDED") in state.outcomes()
    assert state.group_state().book.buffer == ()


def test_cancel_group_running_tells_the_worker_run_at_its_next_heartbeat(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN j1 running on a worker slot when its group is cancelled with running=True, then a tick
    told: dict[str, Any] = {}

    def handle(job: Job, context: Any) -> str:
        steering = JobSteering(
            claim_table=TABLE_NAME,
            group_table=GROUP_TABLE_NAME,
            dynamodb=dynamodb,
            clock=slot.clock,
            sqs=sqs,
            queue_url=queue_url,
        )
        told["report"] = steering.cancel_group("ws#1", running=True, reason="user stopped the agent")
        slot.heartbeat.tick()
        told["cancelled"] = context.cancelled.is_set()
        return "done anyway"

    slot = SlotHarness(dynamodb, sqs, queue_url, handle)
    sqs.send_message(
        QueueUrl=queue_url, MessageBody=body("j1"), MessageGroupId="ws#1", MessageDeduplicationId="j1"
    )
    records = receive_records(sqs, queue_url)

    # WHEN the batch runs
    slot.slot.process_batch(records, slot.heartbeat.begin(slot.clock()))

    # THEN the run was told at the tick, its result refused; its outcome is cancelled while running
    assert told["cancelled"] is True
    assert [(r.job_id, r.running) for r in told["report"].jobs] == [("j1", True)]
    outcome = JobOutcomes(claim_table=TABLE_NAME, dynamodb=dynamodb, clock=slot.clock).get("j1")
    assert (outcome.status, outcome.cancel_reason, outcome.cancelled_while_running) == (
        JobStatus.CANCELLED,
        "user stopped the agent",
        True,
    )
