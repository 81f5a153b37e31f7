"""State mode's PARK policy on moto: a group stops at its dead job, keeps what follows, resumes in order."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from constructs_fifo.runtime.constants import DeadJobPolicy
from constructs_fifo.runtime.dead_jobs.parking import wake_up_message
from constructs_fifo.runtime.dead_jobs.record import encode_dead_job
from constructs_fifo.runtime.exceptions import PermanentJobError
from constructs_fifo.runtime.job import Job

from .fifo_model import Crash
from .runtime_harness import DynamoCallCounter, make_record, receive_records
from .state_harness import StateHarness, job_record

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient


@pytest.fixture
def parked(dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str) -> StateHarness:
    return StateHarness(dynamodb, sqs, queue_url, dlq_url, policy=DeadJobPolicy.PARK)


@pytest.fixture
def calls(dynamodb: DynamoDBClient) -> Iterator[DynamoCallCounter]:
    counter = DynamoCallCounter(dynamodb)
    yield counter
    counter.close()


def poison(job: Job) -> None:
    raise PermanentJobError(f"{job.id} can never apply")


def test_a_dead_job_parks_its_group_with_the_state_in_one_transaction(
    parked: StateHarness, calls: DynamoCallCounter
) -> None:
    # GIVEN p dies (permanent) between a and b of ws#1, with a job of ws#2 in the batch
    parked.behaviour["p"] = poison
    records = [job_record("a", 0), job_record("p", 1), job_record("x", group="ws#2"), job_record("b", 2)]
    # WHEN processed under PARK
    response = parked.run(*records)
    # THEN ws#1's state, park header and kept records were written in one transaction (ws#2: a PutItem)
    assert calls.calls == ["BatchGetItem", "TransactWriteItems", "PutItem"]
    # AND a is applied; p and b are kept in order; ws#2 goes on; nothing stays on the queue
    assert response == {"batchItemFailures": []}
    assert parked.log() == ["a"] and parked.log("ws#2") == ["x"]
    assert parked.kept_ids() == ["p", "b"]
    header = parked.header()
    assert header is not None and header.status == "PARKED"
    assert {
        k: encode_dead_job(header.dead)[k] for k in ("jobId", "reason", "errorType", "attempts", "messageId")
    } == {
        "jobId": "p",
        "reason": "PERMANENT",
        "errorType": "PermanentJobError",
        "attempts": 1,
        "messageId": records[1]["messageId"],
    }
    book = parked.group_state().book
    assert book.parked is not None and (book.parked.job_id, book.last_seq) == ("p", 0)
    # AND nothing went to the DLQ; the lines count one parked group and two kept jobs
    assert parked.dead_letters() == []
    lines = parked.outcome_lines()
    assert [(line["jobId"], line["status"]) for line in lines] == [
        ("a", "SUCCEEDED"),
        ("p", "PARKED"),
        ("b", "KEPT"),
        ("x", "SUCCEEDED"),
    ]
    assert (sum(line["GroupsParked"] for line in lines), sum(line["JobsKept"] for line in lines)) == (1, 2)


def test_records_arriving_while_parked_are_kept_without_running(
    parked: StateHarness, calls: DynamoCallCounter
) -> None:
    # GIVEN ws#1 is parked at p
    parked.behaviour["p"] = poison
    parked.run(job_record("p", 0))
    parked.runs.clear()
    calls.reset()
    # WHEN later jobs of ws#1 arrive
    response = parked.run(job_record("c", 1), job_record("d", 2))
    # THEN one read and one transaction (the header and the records)
    assert calls.calls == ["BatchGetItem", "TransactWriteItems"]
    # AND they are kept behind p, not run
    assert response == {"batchItemFailures": []}
    assert parked.runs == []
    assert parked.kept_ids() == ["p", "c", "d"]


def test_resume_retrying_the_fixed_dead_job_replays_everything_in_order_before_later_jobs(
    parked: StateHarness,
) -> None:
    # GIVEN ws#1 parked at p with b kept behind it; p's cause is then fixed
    parked.behaviour["p"] = poison
    parked.send(("a", 0), ("p", 1), ("b", 2))
    parked.drain()
    assert (parked.log(), parked.kept_ids()) == (["a"], ["p", "b"])
    del parked.behaviour["p"]
    # WHEN an operator resumes the group (no claim table in state mode), and c is sent after it
    result = parked.operator().resume("ws#1")
    parked.send(("c", 3))
    parked.drain()
    # THEN the runtime forgot p's death and applied p, b, then c, each once and in order
    assert result.claim_reset is False and result.skipped_job_id is None
    assert parked.log() == ["a", "p", "b", "c"]
    assert parked.runs.count("p") == 2  # its first (dead) run, and the retry
    # AND the group is live again: no header, nothing kept, nothing on the queue
    assert parked.header() is None and parked.kept_ids() == []
    assert parked.group_state().book.parked is None
    assert receive_records(parked.sqs, parked.queue_url) == []


def test_resume_skipping_the_dead_job_sends_it_to_the_dlq_and_consumes_its_seq(parked: StateHarness) -> None:
    # GIVEN ws#1 parked at p (seq 1) with b (seq 2) kept
    parked.behaviour["p"] = poison
    parked.send(("a", 0), ("p", 1), ("b", 2))
    parked.drain()
    # WHEN an operator resumes it skipping the dead job
    result = parked.operator().resume("ws#1", skip_dead=True)
    parked.drain()
    # THEN p is in the DLQ with its triage attributes, b is applied after a, and seq 1 counts as consumed
    assert result.skipped_job_id == "p"
    assert [(j, a["reason"], a["group"]) for j, a in parked.dead_letters()] == [("p", "PERMANENT", "ws#1")]
    assert parked.log() == ["a", "b"]
    book = parked.group_state().book
    assert (book.last_seq, book.parked) == (2, None)
    assert parked.header() is None
    # AND a late copy of p is a copy of a dead job, never applied
    parked.run(job_record("p", 1))
    assert parked.log() == ["a", "b"]
    assert [(j, a["reason"]) for j, a in parked.dead_letters()] == [("p", "COPY_OF_DEAD_JOB")]


def test_a_dead_jobs_own_message_delivered_again_is_not_kept_twice_and_dies_as_it_died_after_a_skip(
    parked: StateHarness,
) -> None:
    # GIVEN ws#1 parked at p (seq 1) with b (seq 2) kept
    parked.behaviour["p"] = poison
    records = [job_record("a", 0), job_record("p", 1), job_record("b", 2)]
    parked.run(*records)
    parked.forget_lines()
    # WHEN p's message is delivered again while parked (the worker crashed after the park's commit,
    # before the record was deleted)
    parked.run(records[1])
    # THEN it is not kept a second time: its outcome line says so
    assert parked.kept_ids() == ["p", "b"]
    assert [(line["status"], line["jobId"]) for line in parked.outcome_lines()] == [("DUPLICATE", "p")]
    # WHEN an operator resumes it skipping p, and the group replays
    parked.operator().resume("ws#1", skip_dead=True)
    parked.forget_lines()
    parked.drain()
    # THEN b is applied, and p's own message is dead-lettered once, with the reason p died for
    assert parked.log() == ["a", "b"] and parked.header() is None
    assert [(j, a["reason"]) for j, a in parked.dead_letters()] == [("p", "PERMANENT")]


def test_a_dead_jobs_copy_in_another_message_is_kept_and_dead_lettered_as_a_copy_after_a_skip(
    parked: StateHarness,
) -> None:
    # GIVEN ws#1 parked at p (seq 1) with b (seq 2) kept, and a copy of p in another message (a producer
    # resend with a new deduplication id) kept behind them
    parked.behaviour["p"] = poison
    parked.run(job_record("a", 0), job_record("p", 1), job_record("b", 2))
    parked.run(job_record("p", 1))
    assert parked.kept_ids() == ["p", "b", "p"]
    # WHEN an operator resumes it skipping p, and the group replays
    parked.operator().resume("ws#1", skip_dead=True)
    parked.forget_lines()
    parked.drain()
    # THEN b is applied; p is in the dead-letter queue for the reason it died for, and its copy as a copy
    assert parked.log() == ["a", "b"] and parked.header() is None
    assert sorted((j, a["reason"]) for j, a in parked.dead_letters()) == [
        ("p", "COPY_OF_DEAD_JOB"),
        ("p", "PERMANENT"),
    ]


def test_a_kept_job_failing_during_replay_waits_for_its_backoff_then_goes_on(parked: StateHarness) -> None:
    # GIVEN ws#1 parked at p with b kept; p is fixed, b will fail once when replayed
    parked.behaviour["p"] = poison
    parked.run(job_record("p", 0), job_record("b", 1))
    failures = [True]

    def once(job: Job) -> None:
        if failures and failures.pop():
            raise RuntimeError("b flaked")

    parked.behaviour = {"b": once}
    parked.operator().resume("ws#1")
    # WHEN the wake-up message is processed
    (wake_up,) = receive_records(parked.sqs, parked.queue_url)
    response = parked.run(wake_up)
    # THEN p is applied, b failed and stays kept; the wake-up comes back after b's backoff (2 s)
    assert parked.log() == ["p"] and parked.kept_ids() == ["b"]
    assert response["batchItemFailures"] == [{"itemIdentifier": wake_up["messageId"]}]
    header = parked.header()
    assert header is not None
    assert (header.status, header.retry_at_ms) == ("RESUMING", int(parked.clock() * 1000) + 2000)
    # WHEN it comes back before the backoff has passed THEN nothing runs
    parked.runs.clear()
    parked.run(wake_up)
    assert parked.runs == []
    # WHEN it comes back after the backoff
    parked.clock.advance(3)
    parked.run(wake_up)
    # THEN b runs as its attempt 2 and the group is live
    assert parked.log() == ["p", "b"] and parked.header() is None


def test_a_kept_job_that_dies_during_replay_parks_the_group_again_at_it(parked: StateHarness) -> None:
    # GIVEN ws#1 parked at p with b and c kept; p is fixed but b is poison too
    parked.behaviour["p"] = poison
    parked.run(job_record("p", 0), job_record("b", 1), job_record("c", 2))
    parked.behaviour = {"b": poison}
    # WHEN the group is resumed
    parked.operator().resume("ws#1")
    parked.drain()
    # THEN p was applied, b parked the group again at itself, c still kept behind it
    assert parked.log() == ["p"]
    header = parked.header()
    assert header is not None and (header.status, header.dead.job_id, header.skip_dead) == (
        "PARKED",
        "b",
        False,
    )
    assert parked.kept_ids() == ["b", "c"]
    book = parked.group_state().book
    assert book.parked is not None and book.parked.job_id == "b"


def test_a_kept_job_that_crashes_its_worker_during_replay_dies_of_its_attempts_and_parks_the_group(
    parked: StateHarness,
) -> None:
    # GIVEN ws#1 parked at p with c and b kept; p is fixed, but c stops its worker every time
    parked.behaviour["p"] = poison
    parked.run(job_record("p", 0), job_record("c", 1), job_record("b", 2))

    def crash(job: Job) -> None:
        raise Crash(f"{job.id} stopped its worker")

    parked.behaviour = {"c": crash}
    # WHEN the group is resumed and the queue drains (each crash returns the wake-up message)
    parked.operator().resume("ws#1")
    parked.drain()
    # THEN c ran 4 times (its first crash, under a whole page's marker, is not counted) and parked the
    # group again at itself, dead of its attempts; p is applied once, b still kept behind c
    assert parked.runs.count("c") == 4
    assert parked.log() == ["p"]
    header = parked.header()
    assert header is not None and (header.status, header.dead.job_id, header.dead.reason) == (
        "PARKED",
        "c",
        "ATTEMPTS_EXHAUSTED",
    )
    assert parked.kept_ids() == ["c", "b"]


def test_a_malformed_record_parks_its_group_at_itself_and_a_skip_drops_it(parked: StateHarness) -> None:
    # GIVEN a record that is not a job, between a and b
    bad = make_record("not json", group="ws#1")
    # WHEN processed under PARK
    parked.run(job_record("a"), bad, job_record("b"))
    # THEN the group is parked at it (in the header: the state has no death to record), b kept behind it
    assert parked.log() == ["a"] and parked.kept_ids() == ["not json", "b"]
    header = parked.header()
    assert header is not None and (header.dead.reason, header.dead.message_id) == (
        "MALFORMED",
        bad["messageId"],
    )
    assert parked.group_state().book.parked is None
    # WHEN an operator resumes it skipping the dead record
    result = parked.operator().resume("ws#1", skip_dead=True)
    parked.drain()
    # THEN the result says which message was skipped (it has no job id)
    assert (result.skipped_job_id, result.skipped_message_id) == (None, bad["messageId"])
    # AND it is in the DLQ and b is applied
    assert [(j, a["reason"]) for j, a in parked.dead_letters()] == [("not json", "MALFORMED")]
    assert parked.log() == ["a", "b"] and parked.header() is None


def test_a_buffered_job_that_dies_parks_the_group_without_a_record_and_resumes_from_the_buffer(
    parked: StateHarness,
) -> None:
    # GIVEN seq 2 waits in the buffer, and will die when its gap closes
    parked.behaviour["s2"] = poison
    parked.run(job_record("s0", 0), job_record("s2", 2))
    # WHEN seq 1 arrives, closing the gap
    response = parked.run(job_record("s1", 1))
    # THEN s1 is applied, s2 dies in the buffer and parks the group: a header records it, nothing is kept
    assert response == {"batchItemFailures": []}
    assert parked.log() == ["s0", "s1"] and parked.kept_ids() == []
    header = parked.header()
    assert header is not None and (header.status, header.dead.job_id) == ("PARKED", "s2")
    parked_lines = [line for line in parked.lines() if line.get("GroupsParked")]
    assert [line["parkedAt"]["jobId"] for line in parked_lines] == ["s2"]
    # WHEN s2 is fixed and the group resumed (retry), with s3 arriving meanwhile
    del parked.behaviour["s2"]
    parked.run(job_record("s3", 3))
    parked.operator().resume("ws#1")
    parked.drain()
    # THEN s2 is applied out of the buffer, then s3, and the group is live
    assert parked.log() == ["s0", "s1", "s2", "s3"]
    assert parked.header() is None and parked.group_state().book.buffer == ()


def test_skipping_a_dead_job_that_waits_in_the_buffer_sends_it_to_the_dlq_from_its_body(
    parked: StateHarness,
) -> None:
    # GIVEN the group parked at s2, which died in the reorder buffer
    parked.behaviour["s2"] = poison
    parked.run(job_record("s0", 0), job_record("s2", 2))
    parked.run(job_record("s1", 1), job_record("s3", 3))
    assert parked.kept_ids() == ["s3"]
    # WHEN an operator resumes it skipping the dead job
    parked.operator().resume("ws#1", skip_dead=True)
    parked.drain()
    # THEN the runtime sent s2 to the DLQ from the buffer, consumed its seq and applied s3
    assert [(j, a["reason"], a["jobId"]) for j, a in parked.dead_letters()] == [("s2", "PERMANENT", "s2")]
    assert parked.log() == ["s0", "s1", "s3"]
    assert parked.header() is None and parked.group_state().book.last_seq == 3


def test_a_wake_up_message_of_a_live_group_is_deleted(parked: StateHarness) -> None:
    # GIVEN a stray wake-up message of a group that is not parked
    parked.sqs.send_message(**wake_up_message(parked.queue_url, "ws#9"))
    (record,) = receive_records(parked.sqs, parked.queue_url)
    # WHEN processed THEN it is not reported, and nothing runs or is written
    assert parked.run(record) == {"batchItemFailures": []}
    assert parked.runs == [] and parked.group_state("ws#9").version == 0


def test_a_kept_job_that_dies_during_replay_under_continue_is_dead_lettered_after_its_death_commits(
    parked: StateHarness,
) -> None:
    # GIVEN ws#1 parked at p with b and c kept, the policy now CONTINUE, p fixed and b poison
    parked.behaviour["p"] = poison
    parked.run(job_record("p", 0), job_record("b", 1), job_record("c", 2))
    parked.policy = DeadJobPolicy.CONTINUE
    parked.behaviour = {"b": poison}
    parked.operator().resume("ws#1")
    # WHEN the wake-up message is processed
    (wake_up,) = receive_records(parked.sqs, parked.queue_url)
    parked.forget_lines()
    parked.run(wake_up)
    # THEN b is dead-lettered once, as it died, counted failed once; p and c applied; the group is live
    assert [(j, a["reason"]) for j, a in parked.dead_letters()] == [("b", "PERMANENT")]
    assert parked.log() == ["p", "c"] and parked.header() is None and parked.kept_ids() == []
    (line,) = [line for line in parked.outcome_lines() if line["jobId"] == "b"]
    assert (line["status"], line["JobsFailed"]) == ("DEAD_LETTERED", 1)


def test_a_kept_job_that_dies_in_a_replay_page_that_crashed_before_its_commit_is_not_dead_lettered(
    parked: StateHarness,
) -> None:
    # GIVEN ws#1 parked at p with b kept, the policy now CONTINUE, b poison, and the worker stops
    # dead at the page's commit
    parked.behaviour["p"] = poison
    parked.run(job_record("p", 0), job_record("b", 1))
    parked.policy = DeadJobPolicy.CONTINUE
    parked.behaviour = {"b": poison}
    parked.operator().resume("ws#1")
    (wake_up,) = receive_records(parked.sqs, parked.queue_url)

    def die(**_: object) -> None:
        raise Crash

    parked.dynamodb.meta.events.register("before-call.dynamodb.TransactWriteItems", die)
    try:
        with pytest.raises(Crash):
            parked.run(wake_up)
    finally:
        parked.dynamodb.meta.events.unregister("before-call.dynamodb.TransactWriteItems", die)
    # THEN nothing reached the dead-letter queue
    assert parked.dead_letters() == []
    # WHEN the wake-up comes back and b's cause is gone
    parked.behaviour = {}
    wake_up["attributes"]["ApproximateReceiveCount"] = "2"
    parked.run(wake_up)
    # THEN b is applied, and only applied
    assert parked.log() == ["p", "b"] and parked.header() is None
    assert parked.dead_letters() == []
