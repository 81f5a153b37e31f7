"""Functional tests of the PARK policy on moto: a group stops at its dead job and resumes in order."""

from __future__ import annotations

import json
from typing import Any

import pytest

from constructs_fifo.client.parked import GroupNotParkedError, ParkedGroups
from constructs_fifo.runtime.constants import DeadJobPolicy
from constructs_fifo.runtime.dead_jobs.record import encode_dead_job
from constructs_fifo.runtime.exceptions import PermanentJobError
from constructs_fifo.runtime.job import Job

from .runtime_harness import (
    GROUP_TABLE_NAME,
    TABLE_NAME,
    DynamoCallCounter,
    Harness,
    body,
    make_record,
    receive_records,
)


@pytest.fixture
def parked(harness: Harness) -> Harness:
    harness.policy = DeadJobPolicy.PARK
    return harness


def poison(job: Job) -> None:
    raise PermanentJobError(f"{job.id} can never apply")


def transient(job: Job) -> None:
    raise RuntimeError(f"{job.id} flaked")


def operator(harness: Harness) -> ParkedGroups:
    return ParkedGroups(
        group_table=GROUP_TABLE_NAME,
        claim_table=TABLE_NAME,
        queue_url=harness.queue_url,
        dead_letter_queue_url=harness.dlq_url,
        dynamodb=harness.dynamodb,
        sqs=harness.sqs,
        clock=harness.clock,
    )


def send(harness: Harness, *job_ids: str, group: str = "ws#1") -> None:
    for job_id in job_ids:
        harness.sqs.send_message(
            QueueUrl=harness.queue_url,
            MessageBody=body(job_id),
            MessageGroupId=group,
            MessageDeduplicationId=job_id,
        )


def drain(harness: Harness, *, rounds: int = 10) -> list[dict[str, Any]]:
    """Run the processor on what the (moto) queue delivers until it is empty; delete what succeeded."""
    responses = []
    for _ in range(rounds):
        records = receive_records(harness.sqs, harness.queue_url)
        if not records:
            break
        response = harness.run(*records)
        failed = {failure["itemIdentifier"] for failure in response["batchItemFailures"]}
        for record in records:
            if record["messageId"] not in failed:
                harness.sqs.delete_message(QueueUrl=harness.queue_url, ReceiptHandle=record["receiptHandle"])
        responses.append(dict(response))
    return responses


def kept_ids(harness: Harness, group: str = "ws#1") -> list[str]:
    return [
        json.loads(kept.record.get("body", "{}"))["jobId"] for kept in harness.parking.kept(group, limit=100)
    ]


def test_a_dead_job_parks_its_group_and_keeps_every_later_record_in_order(parked: Harness) -> None:
    # GIVEN p dies (permanent) between a1 and a3 of ws#1, and ws#2 has a job in the same batch
    parked.behaviour["p"] = poison
    records = [
        make_record(body("a1"), group="ws#1"),
        make_record(body("p"), group="ws#1"),
        make_record(body("b1"), group="ws#2"),
        make_record(body("a3"), group="ws#1"),
    ]
    # WHEN processed
    response = parked.run(*records)
    # THEN a1 and b1 ran, p parked ws#1 and a3 was kept behind it; nothing stays on the queue
    assert parked.ran == ["a1", "p", "b1"]
    assert response == {"batchItemFailures": []}
    assert kept_ids(parked) == ["p", "a3"]
    header = parked.parking.header("ws#1")
    assert header is not None
    assert header.status == "PARKED"
    assert {k: encode_dead_job(header.dead)[k] for k in ("jobId", "reason", "errorType", "attempts")} == {
        "jobId": "p",
        "reason": "PERMANENT",
        "errorType": "PermanentJobError",
        "attempts": 1,
    }
    # AND nothing went to the DLQ, and the outcome lines count one parked group and two kept jobs
    assert parked.dead_letters() == []
    lines = [line for line in parked.lines() if "status" in line]
    assert [(line["jobId"], line["status"]) for line in lines] == [
        ("a1", "SUCCEEDED"),
        ("b1", "SUCCEEDED"),
        ("p", "PARKED"),
        ("a3", "KEPT"),
    ]
    assert sum(line["GroupsParked"] for line in lines) == 1
    assert sum(line["JobsKept"] for line in lines) == 2


def test_records_arriving_while_parked_are_kept_without_running(parked: Harness) -> None:
    # GIVEN ws#1 is parked at p
    parked.behaviour["p"] = poison
    parked.run(make_record(body("p"), group="ws#1"))
    parked.ran.clear()
    # WHEN later jobs of ws#1 arrive (with a job of another group)
    response = parked.run(
        make_record(body("a4"), group="ws#1"), make_record(body("b1"), group="ws#2"), make_record(body("a5"))
    )
    # THEN they are kept in order, not run and not left on the queue; ws#2 runs
    assert parked.ran == ["b1"]
    assert response == {"batchItemFailures": []}
    assert kept_ids(parked) == ["p", "a4", "a5"]


def test_a_record_delivered_again_while_its_group_is_parked_is_kept_once(parked: Harness) -> None:
    # GIVEN ws#1 parked at p, with a malformed record m (no job id to recognise it by) and a4 kept
    parked.behaviour["p"] = poison
    malformed = make_record("not json", group="ws#1")
    later = make_record(body("a4"), group="ws#1")
    parked.run(make_record(body("p"), group="ws#1"), malformed, later)
    assert len(parked.parking.kept("ws#1")) == 3
    before = parked.parking.header("ws#1")
    # WHEN SQS delivers m and a4 again (their delete was refused: the receipt handle had expired)
    response = parked.run(malformed, later)
    # THEN nothing is kept twice and nothing is written; both records are deleted as duplicates
    assert response == {"batchItemFailures": []}
    assert [kept.record["messageId"] for kept in parked.parking.kept("ws#1")] == [
        parked.parking.kept("ws#1")[0].record["messageId"],
        malformed["messageId"],
        later["messageId"],
    ]
    assert parked.parking.header("ws#1") == before
    lines = [line for line in parked.lines() if "status" in line]
    assert [line["status"] for line in lines[-2:]] == ["DUPLICATE", "DUPLICATE"]
    assert "keeps this message already" in lines[-1]["action"]


def test_a_parked_group_remembers_the_messages_of_its_last_twenty_kept_records(parked: Harness) -> None:
    # GIVEN ws#1 parked at p, then 25 records kept behind it, one batch at a time
    parked.behaviour["p"] = poison
    first = make_record(body("p"), group="ws#1")
    parked.run(first)
    records = [make_record(body(f"k{i}"), group="ws#1") for i in range(25)]
    for record in records:
        parked.run(record)
    # WHEN the oldest and the newest are delivered again
    parked.run(first, records[-1])
    # THEN the newest is recognised; the oldest, beyond the window of 20, is kept again (no job is
    # lost or run twice: its claim says what it is when it is replayed)
    kept = [k.record["messageId"] for k in parked.parking.kept("ws#1", limit=100)]
    assert kept.count(records[-1]["messageId"]) == 1
    assert kept.count(first["messageId"]) == 2
    header = parked.parking.header("ws#1")
    assert header is not None and len(header.recent_message_ids) == 20


def test_resume_replays_the_kept_jobs_in_order_before_anything_sent_later(parked: Harness) -> None:
    # GIVEN ws#1 parked at p with a2, a3 kept behind it; the cause of p's failure is then fixed
    parked.behaviour["p"] = poison
    send(parked, "p", "a2", "a3")
    drain(parked)
    assert kept_ids(parked) == ["p", "a2", "a3"]
    del parked.behaviour["p"]
    parked.ran.clear()
    # WHEN an operator resumes the group (retrying p), and a4 is sent after the resume
    result = operator(parked).resume("ws#1")
    send(parked, "a4")
    drain(parked)
    # THEN p's claim was reset and everything ran once, in order: kept jobs first, then a4
    assert result.claim_reset is True
    assert parked.ran == ["p", "a2", "a3", "a4"]
    # AND the group is live again: no header, nothing kept, the queue is empty
    assert parked.parking.header("ws#1") is None
    assert kept_ids(parked) == []
    assert receive_records(parked.sqs, parked.queue_url) == []


def test_resume_skipping_the_dead_job_sends_it_to_the_dlq_and_replays_the_rest(parked: Harness) -> None:
    # GIVEN ws#1 parked at p with a2 kept behind it
    parked.behaviour["p"] = poison
    send(parked, "p", "a2")
    drain(parked)
    parked.ran.clear()
    # WHEN an operator resumes it skipping the dead job
    result = operator(parked).resume("ws#1", skip_dead=True)
    drain(parked)
    # THEN p is in the DLQ with its triage attributes, a2 ran, and the group is live
    assert result.skipped_job_id == "p"
    (message,) = parked.dead_letters()
    attributes = {k: v["StringValue"] for k, v in message["MessageAttributes"].items()}
    assert (attributes["jobId"], attributes["reason"], message["Attributes"]["MessageGroupId"]) == (
        "p",
        "PERMANENT",
        "ws#1",
    )
    assert parked.ran == ["a2"]
    assert parked.parking.header("ws#1") is None


def test_a_kept_job_failing_during_replay_waits_for_its_backoff_then_goes_on(parked: Harness) -> None:
    # GIVEN ws#1 parked at p, with a2 kept; p is fixed but a2 will fail once on replay
    parked.behaviour["p"] = poison
    send(parked, "p", "a2")
    drain(parked)
    del parked.behaviour["p"]
    parked.ran.clear()
    failures = iter([True])
    parked.behaviour["a2"] = lambda job: transient(job) if next(failures, False) else None
    operator(parked).resume("ws#1")
    # WHEN the wake-up message is processed
    (wake_up,) = receive_records(parked.sqs, parked.queue_url)
    response = parked.run(wake_up)
    # THEN p ran, a2 failed, and the wake-up comes back after a2's backoff (2 s), the group still resuming
    assert parked.ran == ["p", "a2"]
    assert [f["itemIdentifier"] for f in response["batchItemFailures"]] == [wake_up["messageId"]]
    header = parked.parking.header("ws#1")
    assert header is not None
    assert (header.status, header.retry_at_ms) == ("RESUMING", int(parked.clock() * 1000) + 2000)
    assert kept_ids(parked) == ["a2"]
    # WHEN the backoff has passed and the wake-up comes back
    parked.clock.advance(3)
    parked.run(wake_up)
    # THEN a2 runs again (attempt 2) and the group is live
    assert parked.ran == ["p", "a2", "a2"]
    assert parked.parking.header("ws#1") is None


def test_a_kept_job_that_dies_during_replay_parks_the_group_again_at_it(parked: Harness) -> None:
    # GIVEN ws#1 parked at p with a2, a3 kept; p is fixed but a2 is poison too
    parked.behaviour["p"] = poison
    send(parked, "p", "a2", "a3")
    drain(parked)
    parked.behaviour = {"a2": poison}
    parked.ran.clear()
    # WHEN the group is resumed
    operator(parked).resume("ws#1")
    drain(parked)
    # THEN p ran, a2 died and parked the group again at itself, a3 still kept behind it
    assert parked.ran == ["p", "a2"]
    header = parked.parking.header("ws#1")
    assert header is not None
    assert (header.status, header.dead.job_id) == ("PARKED", "a2")
    assert kept_ids(parked) == ["a2", "a3"]


def test_a_wake_up_message_of_a_group_that_is_not_resuming_is_deleted(parked: Harness) -> None:
    # GIVEN a stray wake-up message of a live group
    from constructs_fifo.runtime.dead_jobs.parking import wake_up_message

    parked.sqs.send_message(**wake_up_message(parked.queue_url, "ws#9"))
    (record,) = receive_records(parked.sqs, parked.queue_url)
    # WHEN processed THEN it is not reported (deleted) and runs nothing
    assert parked.run(record) == {"batchItemFailures": []}
    assert parked.ran == []


def test_a_wake_up_received_too_often_is_replaced_by_a_fresh_one(parked: Harness) -> None:
    # GIVEN a resuming group whose kept job waits for a backoff, and its wake-up received 5 times
    parked.behaviour["p"] = poison
    send(parked, "p")
    drain(parked)
    operator(parked).resume("ws#1")
    header = parked.parking.header("ws#1")
    assert header is not None
    parked.parking.advance(header, done=[], retry_at_ms=int(parked.clock() * 1000) + 60_000)
    (wake_up,) = receive_records(parked.sqs, parked.queue_url)
    worn = wake_up | {"attributes": {**wake_up["attributes"], "ApproximateReceiveCount": "5"}}
    # WHEN it is processed
    response = parked.run(worn)
    # THEN the old one is not reported (deleted) and a fresh one is on the queue for the group
    assert response == {"batchItemFailures": []}
    parked.sqs.delete_message(QueueUrl=parked.queue_url, ReceiptHandle=wake_up["receiptHandle"])
    (fresh,) = receive_records(parked.sqs, parked.queue_url)
    assert fresh["messageId"] != wake_up["messageId"]
    assert fresh["attributes"]["MessageGroupId"] == "ws#1"


def test_resuming_a_live_group_is_an_error_naming_the_fix(parked: Harness) -> None:
    with pytest.raises(GroupNotParkedError, match=r"group 'ws#7' is not parked .* ParkedGroups\.list_groups"):
        operator(parked).resume("ws#7")


def test_parked_groups_are_listed_with_their_dead_job(parked: Harness) -> None:
    # GIVEN two groups parked
    parked.behaviour.update({"p1": poison, "p2": poison})
    parked.run(make_record(body("p1"), group="ws#1"), make_record(body("p2"), group="ws#2"))
    # WHEN listed THEN both, by group, with their dead job
    assert [(h.group, h.dead.job_id) for h in operator(parked).list_groups()] == [
        ("ws#1", "p1"),
        ("ws#2", "p2"),
    ]


def test_the_park_policy_costs_one_batch_read_per_batch_on_the_happy_path(parked: Harness) -> None:
    # GIVEN ten new jobs of one group in one batch
    records = [make_record(body(f"j{i}"), group="ws#1") for i in range(10)]
    counter = DynamoCallCounter(parked.dynamodb)
    try:
        # WHEN processed
        parked.run(*records)
        # THEN one BatchGetItem (are the groups parked?) and two calls per job, as with CONTINUE
        assert counter.calls == ["BatchGetItem"] + ["PutItem", "UpdateItem"] * 10
    finally:
        counter.close()
