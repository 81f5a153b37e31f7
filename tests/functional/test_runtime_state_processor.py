"""State mode's batch processor on moto: each rule of ``state.processor``, seen from outside.

What is observed: the response, the committed state and bookkeeping, the park header and kept
records, the dead-letter queue, the outcome and metric lines, and the DynamoDB calls made.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from constructs_fifo.runtime.constants import STATE_ATTR_RUN, DeadJobPolicy
from constructs_fifo.runtime.exceptions import PermanentJobError
from constructs_fifo.runtime.job import Job
from constructs_fifo.runtime.state.core.records import GapPolicy

from .fifo_model import Crash
from .runtime_harness import (
    GROUP_TABLE_NAME,
    DynamoCallCounter,
    FakeContext,
    event,
    failed_ids,
    make_record,
    receive_records,
)
from .state_harness import StateHarness, job_record

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient

    from constructs_fifo.runtime.types import SQSRecord


@pytest.fixture
def state(dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str) -> StateHarness:
    return StateHarness(dynamodb, sqs, queue_url, dlq_url)


@pytest.fixture
def calls(dynamodb: DynamoDBClient) -> Iterator[DynamoCallCounter]:
    counter = DynamoCallCounter(dynamodb)
    yield counter
    counter.close()


def poison(job: Job) -> None:
    raise PermanentJobError(f"{job.id} can never apply")


def flaky(times: int) -> Any:
    """A behaviour that fails transiently on the job's first ``times`` attempts."""

    def behaviour(job: Job) -> None:
        if job.attempt <= times:
            raise RuntimeError(f"{job.id} flaked on attempt {job.attempt}")

    return behaviour


def metric_lines(harness: StateHarness) -> list[dict[str, Any]]:
    return [line for line in harness.lines() if "_aws" in line and "status" not in line]


# --- the call budget -----------------------------------------------------------------------------


def test_a_groups_batch_of_ten_costs_one_batch_get_and_one_put(
    state: StateHarness, calls: DynamoCallCounter
) -> None:
    # GIVEN ten new jobs of one group, the producer's seq slightly shuffled
    records = [job_record(f"j{n}", n) for n in (1, 0, 2, 3, 5, 4, 6, 7, 9, 8)]
    # WHEN processed in one batch
    response = state.run(*records)
    # THEN 2 DynamoDB calls in all (0.2 per job): one consistent read, one conditional write
    assert calls.calls == ["BatchGetItem", "PutItem"]
    # AND every job was applied once, in seq order; no record is reported
    assert response == {"batchItemFailures": []}
    assert state.log() == [f"j{n}" for n in range(10)]
    assert state.outcomes() == [(f"j{n}", "SUCCEEDED") for n in (1, 0, 2, 3, 5, 4, 6, 7, 9, 8)]


def test_a_mixed_batch_costs_one_read_and_one_write_per_group_that_changed(
    state: StateHarness, calls: DynamoCallCounter
) -> None:
    # GIVEN a batch of ten records over three groups, interleaved
    groups = ["ws#1", "ws#2", "ws#1", "ws#3", "ws#2", "ws#1", "ws#3", "ws#1", "ws#2", "ws#1"]
    records = [job_record(f"j{n}", group=group) for n, group in enumerate(groups)]
    # WHEN processed
    state.run(*records)
    # THEN one read and one write per group: 4 calls for 10 jobs
    assert calls.calls == ["BatchGetItem", "PutItem", "PutItem", "PutItem"]
    assert state.log("ws#1") == ["j0", "j2", "j5", "j7", "j9"]
    # WHEN the same batch is delivered again
    calls.reset()
    state.run(*records)
    # THEN only the read: every job is a duplicate and nothing changed, so nothing is written
    assert calls.calls == ["BatchGetItem"]


# --- duplicates and sequences --------------------------------------------------------------------


def test_duplicates_are_skipped_at_any_time_by_job_id_and_by_seq(state: StateHarness) -> None:
    # GIVEN a group that applied a (no seq) and b (seq 0)
    state.run(job_record("a"), job_record("b", 0))
    state.runs.clear()
    # WHEN a day later (far past SQS's 5 minutes of deduplication) copies arrive in new messages:
    # a by its id, b by its id and seq, and another job id carrying b's seq
    state.clock.advance(86_400)
    response = state.run(job_record("a"), job_record("b", 0), job_record("b-again", 0))
    # THEN none of them ran, all are deleted and counted as duplicates
    assert state.runs == []
    assert response == {"batchItemFailures": []}
    assert state.outcomes()[-3:] == [("a", "DUPLICATE"), ("b", "DUPLICATE"), ("b-again", "DUPLICATE")]
    assert sum(line["DuplicatesSkipped"] for line in state.outcome_lines()) == 3
    assert state.log() == ["a", "b"]


def test_a_seq_gap_filled_later_is_buffered_then_applied_in_order(state: StateHarness) -> None:
    # GIVEN seq 0, 2 and 3 arrive; 1 is late
    first = state.run(job_record("s0", 0), job_record("s2", 2), job_record("s3", 3))
    # THEN 0 is applied, 2 and 3 wait in the committed reorder buffer: their records are deleted
    # (never held in the queue, where they would block the group in front of seq 1)
    assert first == {"batchItemFailures": []}
    assert state.log() == ["s0"]
    assert [entry.seq for entry in state.group_state().book.buffer] == [2, 3]
    assert state.outcomes() == [("s0", "SUCCEEDED"), ("s2", "BUFFERED"), ("s3", "BUFFERED")]
    (gap,) = metric_lines(state)
    assert (gap["SequenceGapOpenSeconds"], gap["group"], gap["gapTimedOut"]) == (0, "ws#1", False)
    # WHEN seq 1 arrives 30 seconds later
    state.clock.advance(30)
    state.forget_lines()
    second = state.run(job_record("s1", 1))
    # THEN 1, 2 and 3 are applied in seq order; the buffered ones get their SUCCEEDED lines now
    assert second == {"batchItemFailures": []}
    assert state.log() == ["s0", "s1", "s2", "s3"]
    assert state.group_state().book.buffer == ()
    assert state.outcomes() == [("s2", "SUCCEEDED"), ("s3", "SUCCEEDED"), ("s1", "SUCCEEDED")]
    assert [line.get("fromBuffer", False) for line in state.outcome_lines()] == [True, True, False]
    assert metric_lines(state) == []  # the gap is closed
    # AND over both batches every job counted once as succeeded and twice as buffered
    assert sum(line["JobsSucceeded"] for line in state.outcome_lines()) == 3


def test_a_gap_that_never_closes_waits_under_wait_and_the_metric_shows_its_age(state: StateHarness) -> None:
    # GIVEN the WAIT policy, a reorder buffer of 2 jobs and a gap timeout of 60 s
    state.options.update(reorder_limit=2, gap_policy=GapPolicy.WAIT, gap_timeout_seconds=60)
    # WHEN seq 0 arrives, then 2, 3 and 4 (seq 1 never does)
    response = state.run(
        job_record("s0", 0), job_record("s2", 2), job_record("s3", 3), job_record("s4", 4, attempt=3)
    )
    # THEN 2 and 3 are buffered, 4 cannot be: it is reported with the backoff of its receive count
    s4 = state.outcomes()[-1]
    assert s4 == ("s4", "BUFFER_FULL")
    assert len(failed_ids(response)) == 1
    assert [line.get("visibilityTimeout") for line in state.outcome_lines() if line["jobId"] == "s4"] == [8]
    # WHEN it comes back two minutes later, with the gap still open
    state.clock.advance(120)
    state.run(job_record("s4", 4, attempt=4))
    # THEN it waits again, nothing beyond seq 0 was applied, and the gap metric says it timed out
    assert state.log() == ["s0"]
    gap = metric_lines(state)[-1]
    assert (gap["SequenceGapOpenSeconds"], gap["gapTimedOut"]) == (120, True)


def test_a_gap_that_never_closes_is_skipped_and_recorded_under_skip_gap(state: StateHarness) -> None:
    # GIVEN the SKIP_GAP policy with a gap timeout of 60 s, and seq 0 and 2 applied / buffered
    state.options.update(gap_policy=GapPolicy.SKIP_GAP, gap_timeout_seconds=60)
    state.run(job_record("s0", 0), job_record("s2", 2))
    assert state.log() == ["s0"]
    # WHEN seq 3 arrives after the timeout, seq 1 never having come
    state.clock.advance(61)
    state.run(job_record("s3", 3))
    # THEN seq 1 is given up and recorded, and 2 and 3 are applied in order
    assert state.log() == ["s0", "s2", "s3"]
    (skipped,) = state.group_state().book.skipped
    assert (skipped.first, skipped.last) == (1, 1)
    gap = metric_lines(state)[-1]
    assert (gap["SequenceGapsSkipped"], gap["SequenceJobsSkipped"], gap["skippedSeqs"]) == (1, 1, [[1, 1]])
    # AND a late seq 1 is a duplicate (its seq has passed), never applied out of order
    state.run(job_record("s1", 1))
    assert state.outcomes()[-1] == ("s1", "DUPLICATE")
    assert state.log() == ["s0", "s2", "s3"]


def test_a_buffered_job_that_fails_keeps_a_committed_record_on_the_queue_to_bring_its_group_back(
    state: StateHarness,
) -> None:
    # GIVEN seq 2 waits in the buffer and will fail once when its gap closes
    state.behaviour["s2"] = flaky(1)
    state.run(job_record("s0", 0), job_record("s2", 2))
    # WHEN seq 1 arrives alone
    s1 = job_record("s1", 1)
    response = state.run(s1)
    # THEN s1 is applied and committed, s2 failed in the buffer; s1's record is reported all the same
    # (the carrier: nothing else would bring the group back), with s2's backoff
    assert state.log() == ["s0", "s1"]
    assert failed_ids(response) == [s1["messageId"]]
    lines = state.outcome_lines()[-2:]
    assert [(line["jobId"], line["status"], line.get("fromBuffer")) for line in lines] == [
        ("s2", "FAILED", True),
        ("s1", "SUCCEEDED", None),
    ]
    assert (lines[1]["carrier"], lines[1]["visibilityTimeout"]) == (True, 2)
    # WHEN the carrier comes back
    state.run(job_record("s1", 1, message_id=s1["messageId"], attempt=2))
    # THEN it is a duplicate, and s2 is applied first (attempt 2); every job counted once as succeeded
    assert state.log() == ["s0", "s1", "s2"]
    assert state.outcomes()[-2:] == [("s2", "SUCCEEDED"), ("s1", "DUPLICATE")]
    lines = state.outcome_lines()
    assert (sum(line["JobsSucceeded"] for line in lines), sum(line["JobsFailed"] for line in lines)) == (3, 1)


def test_a_buffered_job_failing_behind_a_dead_job_gets_a_wake_up_message_to_bring_its_group_back(
    state: StateHarness,
) -> None:
    # GIVEN seq 1 and 2 wait in the buffer; 1 will fail once; seq 0 will die (CONTINUE)
    state.behaviour.update({"s0": poison, "s1": flaky(1)})
    state.run(job_record("s1", 1), job_record("s2", 2))
    # WHEN seq 0 arrives: it dies (its seq is consumed), and s1 fails out of the buffer
    response = state.run(job_record("s0", 0))
    # THEN no record is left to bring the group back (the dead one is in the DLQ), so a wake-up
    # message is sent in the group
    assert response == {"batchItemFailures": []}
    assert [j for j, _ in state.dead_letters()] == ["s0"]
    (wake_up,) = receive_records(state.sqs, state.queue_url)
    assert wake_up["attributes"]["MessageGroupId"] == "ws#1"
    # WHEN it is received the first time THEN it waits out s1's backoff (2 s): reported, nothing runs
    state.runs.clear()
    first = state.run(wake_up)
    assert failed_ids(first) == [wake_up["messageId"]] and state.runs == []
    # WHEN it comes back THEN the group ticks: s1 (attempt 2) and s2 are applied, the wake-up deleted
    again = wake_up | {"attributes": {**wake_up["attributes"], "ApproximateReceiveCount": "2"}}
    assert state.run(again) == {"batchItemFailures": []}
    assert state.log() == ["s1", "s2"]
    assert state.outcomes()[-2:] == [("s1", "SUCCEEDED"), ("s2", "SUCCEEDED")]


# --- races and crashes ---------------------------------------------------------------------------


def test_a_stale_worker_loses_the_race_commits_nothing_and_succeeds_on_retry_from_the_winners_state(
    state: StateHarness,
) -> None:
    # GIVEN two workers with the same batch of ws#1; the first (stale) one is overtaken while it runs
    records = [job_record("a", 0), job_record("b", 1), job_record("c", 2)]
    winner = state.processor()
    overtaken: list[bool] = []

    def overtake(job: Job) -> None:
        if not overtaken:  # the winner reads, applies and commits while the stale worker is in b
            overtaken.append(True)
            winner_response = winner.process(event(*records), FakeContext())
            assert winner_response == {"batchItemFailures": []}

    state.behaviour["b"] = overtake
    # WHEN the stale worker finishes its batch
    response = state.processor().process(event(*records), FakeContext())
    # THEN its commit lost the race: every record of the group is reported, nothing of it is committed
    assert failed_ids(response) == [record["messageId"] for record in records]
    assert state.outcomes()[-3:] == [("a", "FENCED"), ("b", "FENCED"), ("c", "FENCED")]
    assert state.log() == ["a", "b", "c"] and state.group_state().version == 1
    # WHEN its records come back
    state.runs.clear()
    retry = state.run(*records)
    # THEN they are duplicates of the winner's state: nothing runs or is written twice
    assert retry == {"batchItemFailures": []}
    assert state.runs == []
    assert state.outcomes()[-3:] == [("a", "DUPLICATE"), ("b", "DUPLICATE"), ("c", "DUPLICATE")]
    assert state.log() == ["a", "b", "c"] and state.group_state().version == 1


def test_a_crash_after_the_transitions_and_before_the_commit_reapplies_once_from_the_old_state(
    state: StateHarness,
) -> None:
    # GIVEN the worker dies (a BaseException, not an Exception) in c, after a's and b's transitions
    records = [job_record("a", 0), job_record("b", 1), job_record("c", 2)]
    crashes = [True]

    def crash(job: Job) -> None:
        if crashes and crashes.pop():
            raise Crash

    state.behaviour["c"] = crash
    # WHEN the batch runs
    with pytest.raises(Crash):
        state.run(*records)
    # THEN nothing was committed
    assert state.group_state().version == 0
    # WHEN Lambda delivers the batch again
    assert state.run(*records) == {"batchItemFailures": []}
    # THEN every transition is applied once, from the old state: a and b ran twice, committed once
    assert state.runs == ["a", "b", "c", "a", "b", "c"]
    assert state.log() == ["a", "b", "c"] and state.group_state().version == 1


def test_a_crash_at_the_commit_itself_reapplies_once_from_the_old_state(
    state: StateHarness, dynamodb: DynamoDBClient
) -> None:
    # GIVEN the worker dies just as it sends its one write
    def die(**_: Any) -> None:
        raise Crash

    dynamodb.meta.events.register("before-call.dynamodb.PutItem", die)
    records = [job_record("a"), job_record("b")]
    try:
        with pytest.raises(Crash):
            state.run(*records)
    finally:
        dynamodb.meta.events.unregister("before-call.dynamodb.PutItem", die)
    # WHEN the batch is delivered again
    state.run(*records)
    # THEN each job is in the state once
    assert state.runs == ["a", "b", "a", "b"]
    assert state.log() == ["a", "b"]


def test_a_failed_write_reports_every_record_of_the_group_and_only_that_group(
    state: StateHarness, dynamodb: DynamoDBClient
) -> None:
    # GIVEN ws#1's write fails (throttled), ws#2's does not
    def throttle(params: dict[str, Any], **_: Any) -> None:
        if params["Item"]["group"]["S"] == "ws#1":
            raise RuntimeError("ProvisionedThroughputExceededException")

    dynamodb.meta.events.register("before-parameter-build.dynamodb.PutItem", throttle)
    records = [job_record("a"), job_record("b"), job_record("x", group="ws#2")]
    try:
        response = state.run(*records)
    finally:
        dynamodb.meta.events.unregister("before-parameter-build.dynamodb.PutItem", throttle)
    # THEN ws#1's records are reported (ERROR, the first backoff), ws#2 is committed
    assert failed_ids(response) == [records[0]["messageId"], records[1]["messageId"]]
    assert state.outcomes() == [("a", "ERROR"), ("b", "ERROR"), ("x", "SUCCEEDED")]
    assert (state.log("ws#1"), state.log("ws#2")) == ([], ["x"])


# --- failures ----------------------------------------------------------------------------------


def test_a_transient_failure_stops_the_group_with_the_jobs_before_it_committed(state: StateHarness) -> None:
    # GIVEN b fails once, in a group [a, b, c, d], with another group's job in the batch
    state.behaviour["b"] = flaky(1)
    records = [job_record(j) for j in "abcd"] + [job_record("x", group="ws#2")]
    # WHEN processed
    response = state.run(*records)
    # THEN a is committed; b and everything behind it are reported with b's backoff (2 s); ws#2 goes on
    assert state.log() == ["a"] and state.log("ws#2") == ["x"]
    assert failed_ids(response) == [r["messageId"] for r in records[1:4]]
    assert state.outcomes() == [
        ("a", "SUCCEEDED"),
        ("b", "FAILED"),
        ("c", "SKIPPED"),
        ("d", "SKIPPED"),
        ("x", "SUCCEEDED"),
    ]
    assert {line["jobId"]: line.get("visibilityTimeout") for line in state.outcome_lines()} == {
        "a": None,
        "b": 2,
        "c": 2,
        "d": 2,
        "x": None,
    }
    failed = next(line for line in state.outcome_lines() if line["status"] == "FAILED")
    assert failed["error"] == "RuntimeError: b flaked on attempt 1" and failed["JobsFailed"] == 1
    # WHEN the reported records come back
    state.run(*records[1:4])
    # THEN b runs as its attempt 2 (the runtime's count, kept in the state) and the group goes on in order
    assert state.log() == ["a", "b", "c", "d"]
    assert state.group_state().book.attempts == {}


def test_a_dead_job_under_continue_goes_to_the_dlq_with_triage_attributes_and_the_group_goes_on(
    state: StateHarness,
) -> None:
    # GIVEN p is poison, between a and b
    state.behaviour["p"] = poison
    records = [job_record("a", 0), job_record("p", 1), job_record("b", 2)]
    # WHEN processed under CONTINUE
    response = state.run(*records)
    # THEN p alone is in the DLQ, with its triage attributes; its seq is consumed and b is applied
    assert response == {"batchItemFailures": []}
    assert state.log() == ["a", "b"]
    ((job_id, attributes),) = state.dead_letters()
    assert job_id == "p"
    assert {k: attributes[k] for k in ("jobId", "jobType", "reason", "errorType", "attempts", "group")} == {
        "jobId": "p",
        "jobType": "apply_patch",
        "reason": "PERMANENT",
        "errorType": "PermanentJobError",
        "attempts": "1",
        "group": "ws#1",
    }
    assert attributes["originalMessageId"] == records[1]["messageId"]
    assert state.outcomes()[1] == ("p", "DEAD_LETTERED")
    # WHEN a copy of p arrives later (a new message)
    state.run(job_record("p", 1))
    # THEN it does not run; it follows p into the DLQ
    assert state.runs.count("p") == 1
    assert [(j, a["reason"]) for j, a in state.dead_letters()] == [("p", "COPY_OF_DEAD_JOB")]


def test_a_dead_job_whose_dlq_send_fails_is_sent_as_it_died_on_redelivery_and_a_later_copy_as_a_copy(
    state: StateHarness, sqs: SQSClient
) -> None:
    # GIVEN the dead-letter queue cannot be reached
    from constructs_fifo.runtime.dead_jobs.letters import DeadLetterSender

    state.behaviour["p"] = poison
    records = [job_record("a"), job_record("p"), job_record("b")]
    broken = DeadLetterSender(sqs, state.dlq_url + "-missing", clock=state.clock)
    # WHEN the batch runs
    response = state.processor(dead_letters=broken).process(event(*records), FakeContext())
    # THEN the state is committed (a and b applied, p dead) and p's record alone is reported
    assert state.log() == ["a", "b"]
    assert failed_ids(response) == [records[1]["messageId"]]
    assert state.outcomes()[1] == ("p", "ERROR")
    # WHEN p's record (the same message) comes back a minute later
    state.clock.advance(60)
    state.forget_lines()
    state.run(records[1])
    # THEN it is not run again; it goes to the DLQ as it died: reason, error, attempts, its message id
    assert state.runs.count("p") == 1
    ((job_id, attributes),) = state.dead_letters()
    assert (job_id, attributes["reason"], attributes["errorType"], attributes["attempts"]) == (
        "p",
        "PERMANENT",
        "PermanentJobError",
        "1",
    )
    assert attributes["error"] == "p can never apply"
    assert attributes["originalMessageId"] == records[1]["messageId"]
    # AND its line counts it dead-lettered, not failed again (the failed send counted it)
    ((line),) = state.outcome_lines()
    assert (line["status"], line["JobsDeadLettered"], line["JobsFailed"]) == ("DEAD_LETTERED", 1, 0)
    # WHEN a copy of p arrives in a new message
    copy = job_record("p")
    state.run(copy)
    # THEN it follows p as a copy, under its own message id
    assert [(j, a["reason"], a["originalMessageId"]) for j, a in state.dead_letters()] == [
        ("p", "COPY_OF_DEAD_JOB", copy["messageId"])
    ]
    assert state.runs.count("p") == 1


def test_a_state_that_outgrows_the_item_is_dead_with_an_error_naming_size_limit_and_fix(
    state: StateHarness,
) -> None:
    # GIVEN a job whose transition would make the state 390 KB
    big = make_record('{"jobId": "big", "type": "t", "payload": {"blob": "' + "x" * 390_000 + '"}}')
    # WHEN processed between two small jobs under CONTINUE
    response = state.run(job_record("a"), big, job_record("b"))
    # THEN it is dead (not applied) and in the DLQ; the group goes on
    assert response == {"batchItemFailures": []}
    assert state.log() == ["a", "b"]
    ((job_id, attributes),) = state.dead_letters()
    assert (job_id, attributes["errorType"], attributes["reason"]) == (
        "big",
        "StateTooLargeError",
        "PERMANENT",
    )
    error = attributes["error"]
    assert "bytes, over the limit of 367232 bytes" in error
    assert "a DynamoDB item holds at most 400 KB" in error and "store a pointer" in error


# --- malformed records -----------------------------------------------------------------------------


def test_a_malformed_record_under_continue_is_dead_at_once_and_the_group_goes_on(state: StateHarness) -> None:
    # GIVEN a body that is not a job, between two jobs of ws#1
    bad = make_record("not json at all")
    # WHEN processed
    response = state.run(job_record("a", 0), bad, job_record("b", 1))
    # THEN it never reaches the transition, is in the DLQ (MALFORMED), and a and b are applied in order
    assert response == {"batchItemFailures": []}
    assert state.runs == ["a", "b"] and state.log() == ["a", "b"]
    ((body, attributes),) = state.dead_letters()
    assert (body, attributes["reason"], attributes["errorType"]) == (
        "not json at all",
        "MALFORMED",
        "MalformedJobError",
    )
    assert state.outcomes()[1] == (None, "DEAD_LETTERED")


def test_a_malformed_record_behind_a_failed_job_waits_its_turn(state: StateHarness) -> None:
    # GIVEN a fails transiently, a malformed record and b behind it
    state.behaviour["a"] = flaky(1)
    records = [job_record("a"), make_record('{"jobId": "m"}'), job_record("b")]
    # WHEN processed
    response = state.run(*records)
    # THEN the malformed record is reported with the group (not dead-lettered ahead of a)
    assert failed_ids(response) == [r["messageId"] for r in records]
    assert [status for _, status in state.outcomes()] == ["FAILED", "SKIPPED", "SKIPPED"]
    assert state.dead_letters() == []
    # WHEN they come back
    state.run(*records)
    # THEN a is applied, the malformed one is dead (with its jobId), then b
    assert state.log() == ["a", "b"]
    assert [(j, a["reason"], a["jobId"]) for j, a in state.dead_letters()] == [("m", "MALFORMED", "m")]


# --- the deadline ----------------------------------------------------------------------------------


def test_with_too_little_time_left_no_group_starts_and_its_records_come_back_at_once(
    state: StateHarness,
) -> None:
    # WHEN a batch arrives with less than the safety margin left
    records = [job_record("a"), job_record("b", group="ws#2")]
    response = state.run(*records, remaining_ms=500)
    # THEN nothing ran or was written; every record is reported with visibility 0
    assert state.runs == [] and state.group_state().version == 0
    assert failed_ids(response) == [r["messageId"] for r in records]
    assert [(line["status"], line["visibilityTimeout"]) for line in state.outcome_lines()] == [
        ("DEADLINE", 0)
    ] * 2


# --- a crash of the worker counts as an attempt (crash_watch) ----------------------------------------


def crashing(job: Job) -> None:
    raise Crash(f"{job.id} stopped its worker")


def delivery(records: list[SQSRecord], receive_count: int) -> list[SQSRecord]:
    """The same records (same message ids) as SQS delivers them the ``receive_count``-th time."""
    again = copy.deepcopy(records)
    for record in again:
        record["attributes"]["ApproximateReceiveCount"] = str(receive_count)
    return again


def deliver_until_done(state: StateHarness, records: list[SQSRecord], *, most: int = 20) -> int:
    """Deliver ``records`` again and again (the invocation crashing or not) until one returns; its count."""
    for receive_count in range(1, most + 1):
        try:
            state.run(*delivery(records, receive_count))
        except Crash:
            continue
        return receive_count
    raise AssertionError(f"the batch still crashed its worker after {most} deliveries")


def test_a_redelivered_groups_batch_costs_one_write_more_for_its_run_marker(
    state: StateHarness, calls: DynamoCallCounter
) -> None:
    # GIVEN a group's batch of ten, received before (its first invocation crashed outside the jobs)
    records = delivery([job_record(f"j{i}", i) for i in range(10)], 2)
    # WHEN it is processed
    assert state.run(*records) == {"batchItemFailures": []}
    # THEN one read, the marker's write (the group's run item, not the state), the commit, which
    # passed the marker: the state item is at version 1 and carries none, the run item is over version 0
    assert calls.calls == ["BatchGetItem", "PutItem", "PutItem"]
    assert state.log() == [f"j{i}" for i in range(10)] and state.group_state().version == 1
    key = {"group": {"S": "ws#1"}, "sk": {"S": "state"}}
    item = state.dynamodb.get_item(TableName=GROUP_TABLE_NAME, Key=key)
    assert STATE_ATTR_RUN not in item["Item"]
    run_key = {"group": {"S": "ws#1"}, "sk": {"S": "run"}}
    run_item = state.dynamodb.get_item(TableName=GROUP_TABLE_NAME, Key=run_key)["Item"]
    assert (run_item["run"]["S"], run_item["of"]["N"]) == ("{}", "0")


def test_a_redelivered_batch_of_duplicates_writes_no_marker(
    state: StateHarness, calls: DynamoCallCounter
) -> None:
    # GIVEN a group's batch committed, then delivered again (its invocation's response was lost)
    records = [job_record(f"j{i}", i) for i in range(10)]
    state.run(*records)
    calls.reset()
    # WHEN the batch comes back
    state.run(*delivery(records, 2))
    # THEN one read and nothing written: no transition runs, so no marker is needed
    assert calls.calls == ["BatchGetItem"]


@pytest.mark.parametrize("seq", [True, False], ids=["seq", "no-seq"])
def test_a_transition_that_always_crashes_its_worker_dies_of_its_attempts_and_its_batch_mates_apply(
    state: StateHarness, seq: bool
) -> None:
    # GIVEN a new group [a, c, b] whose c stops its worker every time (max_attempts 3)
    records = [job_record(job_id, index if seq else None) for index, job_id in enumerate("acb")]
    state.behaviour["c"] = crashing
    # WHEN SQS delivers the batch again after every crash
    done_at = deliver_until_done(state, records)
    # THEN c ran 5 times (its first two crashes are not counted: the first delivery is not watched, the
    # second's marker names the group), and was dead on the 6th delivery without running again
    assert (done_at, state.runs.count("c")) == (6, 5)
    # AND a and b are applied once each, with no attempt counted against them
    assert state.log() == ["a", "b"]
    assert dict(state.group_state().book.attempts) == {}
    ((job_id, attributes),) = state.dead_letters()
    assert (job_id, attributes["reason"], attributes["errorType"], attributes["attempts"]) == (
        "c",
        "ATTEMPTS_EXHAUSTED",
        "WorkerCrashedError",
        "3",
    )
    assert "stopped its worker on attempt 3 of 3" in attributes["error"]
    # AND each counted crash was logged, naming the job and its attempt
    counted = [
        (line["jobId"], line["attempt"])
        for line in state.lines()
        if line.get("event") == "worker_crash_counted"
    ]
    assert counted == [("c", 1), ("c", 2), ("c", 3)]


def test_a_crash_counted_under_park_parks_the_group_at_the_crashing_job(state: StateHarness) -> None:
    # GIVEN the PARK policy and a group [a, c, b] whose c stops its worker every time
    state.policy = DeadJobPolicy.PARK
    records = [job_record("a"), job_record("c"), job_record("b")]
    state.behaviour["c"] = crashing
    # WHEN SQS delivers the batch again after every crash
    deliver_until_done(state, records)
    # THEN the group is parked at c (dead of its attempts), b is kept behind it, a is applied
    header = state.header()
    assert header is not None and header.dead.job_id == "c"
    assert header.dead.reason == "ATTEMPTS_EXHAUSTED"
    assert state.kept_ids() == ["c", "b"] and state.log() == ["a"]


def test_a_job_that_crashes_below_its_limit_is_applied_and_sees_its_counted_attempt(
    state: StateHarness,
) -> None:
    # GIVEN c stops its worker on its first three runs, then works
    records = [job_record("a"), job_record("c"), job_record("b")]
    seen: list[int] = []

    def crash_thrice(job: Job) -> None:
        seen.append(job.attempt)
        if len(seen) <= 3:
            raise Crash

    state.behaviour["c"] = crash_thrice
    # WHEN SQS delivers the batch again after every crash
    deliver_until_done(state, records)
    # THEN c is applied; its fourth run saw attempt 2 (its one crash under its own marker counted)
    assert state.log() == ["a", "c", "b"]
    assert seen == [1, 1, 1, 2]
    assert state.dead_letters() == []


def test_a_marker_of_a_worker_still_running_isolates_the_group_and_the_stale_worker_commits_nothing(
    state: StateHarness,
) -> None:
    # GIVEN worker A runs a redelivered batch [a, b] and is still in b when its visibility ends
    records = delivery([job_record("a"), job_record("b")], 2)
    overtaken: list[dict[str, Any]] = []
    started: list[bool] = []

    def overtake(job: Job) -> None:
        if not started:  # worker B receives the batch again while A is in b
            started.append(True)
            overtaken.append(dict(state.run(*delivery(records, 3))))

    state.behaviour["b"] = overtake
    # WHEN A finishes
    response = state.run(*records)
    # THEN B found A's marker (a group's: no job blamed), ran and committed the group first
    assert overtaken == [{"batchItemFailures": []}]
    assert state.log() == ["a", "b"]
    # AND A's commit lost the race: its records are reported, nothing of it is committed
    assert failed_ids(response) == [record["messageId"] for record in records]
    assert dict(state.group_state().book.attempts) == {}


def test_a_buffered_job_that_dies_in_a_run_that_crashed_before_its_commit_is_not_dead_lettered(
    state: StateHarness, dynamodb: DynamoDBClient
) -> None:
    # GIVEN s2 waits in the buffer and dies (permanent) when s1 arrives, and the worker stops dead at
    # the group's commit
    state.run(job_record("s0", 0), job_record("s2", 2))
    state.behaviour["s2"] = poison
    late = job_record("s1", 1)

    def die(**_: Any) -> None:
        raise Crash

    dynamodb.meta.events.register("before-call.dynamodb.PutItem", die)
    try:
        with pytest.raises(Crash):
            state.run(late)
    finally:
        dynamodb.meta.events.unregister("before-call.dynamodb.PutItem", die)
    # THEN nothing reached the dead-letter queue: s2 is sent after the commit that records it dead
    assert state.dead_letters() == []
    # WHEN s1 comes back and s2's cause is gone (transient after all, or fixed)
    del state.behaviour["s2"]
    state.run(*delivery([late], 2))
    # THEN s2 is applied, and only applied (found by the chaos suite: dead-lettered and applied)
    assert state.log() == ["s0", "s1", "s2"]
    assert state.dead_letters() == []


def _dlq_down(sqs: SQSClient, dlq_url: str) -> Any:
    """A hook making every ``SendMessage`` to the dead-letter queue fail (throttled)."""

    def refuse(params: dict[str, Any], **_: Any) -> None:
        if params.get("QueueUrl") == dlq_url:
            raise RuntimeError("the dead-letter queue is throttled")

    sqs.meta.events.register("before-parameter-build.sqs.SendMessage", refuse)
    return refuse


def test_a_buffered_job_that_dies_is_committed_dead_before_it_is_dead_lettered_once(
    state: StateHarness, dynamodb: DynamoDBClient
) -> None:
    # GIVEN s2 waits in the buffer and will die (permanent) when s1 arrives
    state.run(job_record("s0", 0), job_record("s2", 2))
    state.behaviour["s2"] = poison
    calls: list[str] = []
    dynamodb.meta.events.register("before-call.dynamodb.*", lambda model, **_: calls.append(model.name))
    # WHEN s1 arrives
    response = state.run(job_record("s1", 1))
    made = list(calls)
    # THEN s2 is dead-lettered once, as it died, nothing is reported, and nothing is left owed
    assert [(j, a["reason"]) for j, a in state.dead_letters()] == [("s2", "PERMANENT")]
    assert failed_ids(response) == []
    assert state.log() == ["s0", "s1"]
    assert state.group_state().book.owed == ()
    # AND it cost the read, the commit and the one write that clears what was owed
    assert made == ["BatchGetItem", "PutItem", "PutItem"]


def test_a_buffered_job_whose_dead_letter_send_fails_after_the_commit_is_sent_on_the_groups_next_run(
    state: StateHarness, sqs: SQSClient
) -> None:
    # GIVEN s2 waits in the buffer and dies when s1 arrives, while the dead-letter queue is down
    state.run(job_record("s0", 0), job_record("s2", 2))
    state.behaviour["s2"] = poison
    late = job_record("s1", 1)
    refuse = _dlq_down(sqs, state.dlq_url)
    try:
        response = state.run(late)
    finally:
        sqs.meta.events.unregister("before-parameter-build.sqs.SendMessage", refuse)
    # THEN s2 is dead in the state and owed, and s1's record is reported so that the group comes back
    assert state.log() == ["s0", "s1"]
    assert [entry.job_id for entry, _ in state.group_state().book.owed] == ["s2"]
    assert failed_ids(response) == [late["messageId"]]
    assert state.dead_letters() == []
    # WHEN s1 comes back (the dead-letter queue is up again)
    state.clock.advance(60)
    response = state.run(*delivery([late], 2))
    # THEN s2 goes to the dead-letter queue as it died, is never run again, and is no longer owed
    assert [(j, a["reason"]) for j, a in state.dead_letters()] == [("s2", "PERMANENT")]
    assert failed_ids(response) == []
    assert state.runs.count("s2") == 1
    assert state.group_state().book.owed == ()
    assert state.log() == ["s0", "s1"]


def test_a_buffered_job_dead_when_its_worker_crashed_after_the_commit_is_sent_on_redelivery_once(
    state: StateHarness, sqs: SQSClient
) -> None:
    # GIVEN s2 waits in the buffer and dies when s1 arrives, and the worker stops dead after the
    # commit, at the dead-letter send
    state.run(job_record("s0", 0), job_record("s2", 2))
    state.behaviour["s2"] = poison
    late = job_record("s1", 1)

    def die(params: dict[str, Any], **_: Any) -> None:
        if params.get("QueueUrl") == state.dlq_url:
            raise Crash

    sqs.meta.events.register("before-parameter-build.sqs.SendMessage", die)
    try:
        with pytest.raises(Crash):
            state.run(late)
    finally:
        sqs.meta.events.unregister("before-parameter-build.sqs.SendMessage", die)
    assert [entry.job_id for entry, _ in state.group_state().book.owed] == ["s2"]
    # WHEN s1 is redelivered, and again (a send went through whose clearing write was lost)
    state.run(*delivery([late], 2))
    state.run(*delivery([late], 3))
    # THEN s2 is in the dead-letter queue once, never applied, and nothing is owed
    assert [(j, a["reason"]) for j, a in state.dead_letters()] == [("s2", "PERMANENT")]
    assert state.log() == ["s0", "s1"]
    assert state.group_state().book.owed == ()


def test_an_owed_dead_letter_sent_twice_within_the_dedup_window_is_one_dlq_message(
    state: StateHarness, dynamodb: DynamoDBClient
) -> None:
    # GIVEN s2 dies in the buffer and is sent, but the write clearing what is owed fails
    state.run(job_record("s0", 0), job_record("s2", 2))
    state.behaviour["s2"] = poison
    late = job_record("s1", 1)
    puts: list[int] = []

    def fail_second_put(**_: Any) -> None:
        puts.append(1)
        if len(puts) == 2:
            raise RuntimeError("throttled")

    dynamodb.meta.events.register("before-call.dynamodb.PutItem", fail_second_put)
    try:
        response = state.run(late)
    finally:
        dynamodb.meta.events.unregister("before-call.dynamodb.PutItem", fail_second_put)
    assert failed_ids(response) == []
    assert [entry.job_id for entry, _ in state.group_state().book.owed] == ["s2"]
    # WHEN the group's next job runs a minute later (it sends what is owed again, first)
    state.clock.advance(60)
    state.run(job_record("s3", 3))
    # THEN the dead-letter queue holds s2 once, and nothing is owed any more
    assert [j for j, _ in state.dead_letters()] == ["s2"]
    assert state.group_state().book.owed == ()
    assert state.log() == ["s0", "s1", "s3"]


#: A group's state item as the runtime before the dead-job codec stored it (bookkeeping format 1): job
#: ``p`` died (PERMANENT) in message ``m-p``; ``b``, a buffered job that died, is still owed.
ITEM_BEFORE_THE_CODEC = {
    "group": {"S": "ws#1"},
    "sk": {"S": "state"},
    "state": {"S": '{"log":["a"]}'},
    "version": {"N": "4"},
    "updated_at": {"N": "1700000000000"},
    "book": {
        "S": '{"f":1,"seq":3,"dead":["p","b"],"deadWhy":[["p","m-p","PERMANENT","PermanentJobError",'
        '"p can never apply",1,1700000000000,"apply_patch",3],["b","m-b","ATTEMPTS_EXHAUSTED","ValueError",'
        '"boom",5,1700000000002,"apply_patch",5]],"owed":[[5,"m-b",1699999999000,{"jobId":"b","type":'
        '"apply_patch","payload":{},"seq":5},["b","m-b","ATTEMPTS_EXHAUSTED","ValueError","boom",5,'
        '1700000000002,"apply_patch",5]]]}'
    },
}


def test_a_state_item_written_before_the_dead_job_codec_is_read_and_carried_on(state: StateHarness) -> None:
    # GIVEN the group's item exactly as the runtime before the codec wrote it
    state.dynamodb.put_item(TableName=GROUP_TABLE_NAME, Item=copy.deepcopy(ITEM_BEFORE_THE_CODEC))
    # WHEN the message p died in comes back, with the next job behind it
    response = state.run(job_record("p", 3, message_id="m-p"), job_record("c", 4))
    # THEN the owed letter is paid first, p is sent again as it died, and c applies
    assert failed_ids(response) == []
    letters = {job_id: (a["reason"], a["error"], a["attempts"]) for job_id, a in state.dead_letters()}
    assert letters == {
        "b": ("ATTEMPTS_EXHAUSTED", "boom", "5"),
        "p": ("PERMANENT", "p can never apply", "1"),
    }
    assert state.log() == ["a", "c"]
    # AND the item is written in the new format, with nothing owed and p's entry kept
    book = state.group_state().book
    assert book.owed == () and [entry.job_id for entry in book.dead_entries] == ["p", "b"]
    stored = state.dynamodb.get_item(
        TableName=GROUP_TABLE_NAME, Key={"group": {"S": "ws#1"}, "sk": {"S": "state"}}
    )
    assert '"f":3' in stored["Item"]["book"]["S"]


def test_a_group_whose_first_job_is_not_seq_0_waits_for_it_and_each_such_line_warns(
    state: StateHarness,
) -> None:
    # GIVEN a fresh group / WHEN its first jobs arrive with seq 1 and 2 (a producer starting at 1)
    state.run(job_record("s1", 1), job_record("s2", 2))
    # THEN nothing is applied: both wait in the buffer for seq 0, and each line warns, naming the group
    assert state.log() == []
    lines = state.outcome_lines()
    assert [line["status"] for line in lines] == ["BUFFERED", "BUFFERED"]
    assert all(line["level"] == "WARNING" for line in lines)
    assert all("has applied no seq yet, so it waits for seq 0" in line["firstSeq"] for line in lines)
    # WHEN seq 0 arrives / THEN all three are applied in order, and the lines after it do not warn
    state.run(job_record("s0", 0))
    assert state.log() == ["s0", "s1", "s2"]
    assert [line for line in state.outcome_lines()[2:] if "firstSeq" in line] == []
    # AND once a seq was applied, a later gap is an ordinary gap: no first-seq warning
    state.run(job_record("s4", 4))
    assert state.outcomes()[-1] == ("s4", "BUFFERED") and "firstSeq" not in state.outcome_lines()[-1]
