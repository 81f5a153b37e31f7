"""Functional tests of OrderedBatchProcessor on moto: order, claims, fencing, poison, backoff."""

from __future__ import annotations

from typing import Any

import pytest

from constructs_fifo.runtime.claim.store import ClaimStore
from constructs_fifo.runtime.exceptions import PermanentJobError
from constructs_fifo.runtime.job import Job

from .runtime_harness import (
    TABLE_NAME,
    DynamoCallCounter,
    FakeContext,
    Harness,
    body,
    event,
    failed_ids,
    make_record,
    receive_records,
)


def transient(job: Job) -> None:
    raise RuntimeError(f"tests flaked for {job.id}")


def poison(job: Job) -> None:
    raise PermanentJobError(f"{job.id} can never apply")


def visibility_requests(harness: Harness) -> list[list[dict[str, Any]]]:
    """Capture the Entries of every ChangeMessageVisibilityBatch call made from now on."""
    captured: list[list[dict[str, Any]]] = []

    def capture(params: dict[str, Any], **_: Any) -> None:
        captured.append(list(params["Entries"]))

    harness.sqs.meta.events.register("provide-client-params.sqs.ChangeMessageVisibilityBatch", capture)
    return captured


def outcome_lines(harness: Harness) -> list[dict[str, Any]]:
    """The outcome lines only (fake receipt handles also make visibility-warning lines)."""
    return [line for line in harness.lines() if "status" in line]


# --- order ------------------------------------------------------------------------------------


def test_mixed_groups_run_in_batch_order_and_all_succeed(harness: Harness) -> None:
    # GIVEN a batch interleaving three groups
    records = [
        make_record(body("a1"), group="ws#a"),
        make_record(body("b1"), group="ws#b"),
        make_record(body("a2"), group="ws#a"),
        make_record(body("c1"), group="ws#c"),
        make_record(body("b2"), group="ws#b"),
    ]
    # WHEN it is processed
    response = harness.run(*records)
    # THEN every job ran once in batch order, nothing is reported and every claim is SUCCEEDED
    assert harness.ran == ["a1", "b1", "a2", "c1", "b2"]
    assert response == {"batchItemFailures": []}
    assert {harness.claim_item(j)["status"]["S"] for j in harness.ran} == {"SUCCEEDED"}


def test_transient_failure_skips_rest_of_its_group_while_other_groups_go_on(harness: Harness) -> None:
    # GIVEN a2 fails transiently, with later records of ws#a and of ws#b in the batch
    harness.behaviour["a2"] = transient
    records = [
        make_record(body("a1"), group="ws#a"),
        make_record(body("a2"), group="ws#a"),
        make_record(body("b1"), group="ws#b"),
        make_record(body("a3"), group="ws#a"),
        make_record(body("b2"), group="ws#b"),
    ]
    # WHEN the batch is processed
    response = harness.run(*records)
    # THEN a3 never ran, a2 and a3 are reported in order, ws#b went on
    assert harness.ran == ["a1", "a2", "b1", "b2"]
    assert failed_ids(response) == [records[1]["messageId"], records[3]["messageId"]]
    assert harness.outcomes() == [
        ("a1", "SUCCEEDED"),
        ("a2", "FAILED"),
        ("b1", "SUCCEEDED"),
        ("a3", "SKIPPED"),
        ("b2", "SUCCEEDED"),
    ]
    # AND a2's claim is FAILED (transient) with its error; a3 was never claimed
    item = harness.claim_item("a2")
    assert item["status"]["S"] == "FAILED"
    assert item["error"]["S"] == "tests flaked for a2"
    assert item["error_type"]["S"] == "RuntimeError"
    assert harness.claim_item("a3") == {}


def test_transient_failure_is_claimed_again_and_succeeds_on_retry(harness: Harness) -> None:
    # GIVEN a job that failed transiently on its first delivery
    harness.behaviour["j1"] = transient
    harness.run(make_record(body("j1"), attempt=1))
    del harness.behaviour["j1"]
    # WHEN it is delivered again
    response = harness.run(make_record(body("j1"), attempt=2))
    # THEN it runs again at once (no lease to wait for) and its claim counts the second run
    assert harness.ran == ["j1", "j1"]
    assert response == {"batchItemFailures": []}
    item = harness.claim_item("j1")
    assert item["status"]["S"] == "SUCCEEDED"
    assert item["attempts"]["N"] == "2"
    assert "error" not in item
    assert "lease_expires_at" not in item


def test_every_failed_record_is_returned_and_nothing_raises_when_all_fail(harness: Harness) -> None:
    # GIVEN a batch whose every record fails transiently, in several groups
    harness.behaviour.update({"a1": transient, "b1": transient, "c1": transient})
    records = [
        make_record(body("a1"), group="ws#a"),
        make_record(body("b1"), group="ws#b"),
        make_record(body("c1"), group="ws#c"),
        make_record(body("a2"), group="ws#a"),
    ]
    # WHEN it is processed
    response = harness.run(*records)
    # THEN the response lists every record, in batch order
    assert failed_ids(response) == [r["messageId"] for r in records]


# --- claims -----------------------------------------------------------------------------------


def test_duplicate_of_a_succeeded_job_is_skipped_and_not_reported(harness: Harness) -> None:
    # GIVEN j1 already succeeded
    harness.run(make_record(body("j1")))
    # WHEN j1 arrives again in another message (a producer retry)
    response = harness.run(make_record(body("j1")), make_record(body("j2")))
    # THEN it is not run and not reported (Lambda deletes it), and the duplicate is counted
    assert harness.ran == ["j1", "j2"]
    assert response == {"batchItemFailures": []}
    duplicate = [line for line in harness.lines() if line.get("status") == "DUPLICATE"]
    assert len(duplicate) == 1
    assert duplicate[0]["DuplicatesSkipped"] == 1


def test_live_in_flight_claim_is_reported_not_run_and_blocks_its_group(harness: Harness) -> None:
    # GIVEN another worker holds j1 under a lease that ends in 30 s
    other = make_record(body("j1"))
    from constructs_fifo.runtime.job import parse_record

    assert harness.store.claim(parse_record(other), lease_ms=30_000).owner
    captured = visibility_requests(harness)
    records = [
        make_record(body("j1"), group="ws#1"),
        make_record(body("j2"), group="ws#1"),
        make_record(body("k1"), group="ws#2"),
    ]
    # WHEN our worker gets j1 with a later record of its group and another group
    response = harness.run(*records)
    # THEN j1 and j2 are reported without running, k1 runs
    assert harness.ran == ["k1"]
    assert failed_ids(response) == [records[0]["messageId"], records[1]["messageId"]]
    assert harness.outcomes()[:2] == [("j1", "CONFLICT"), ("j2", "SKIPPED")]
    assert harness.lines()[0]["ClaimConflicts"] == 1
    # AND both wait until the other worker's lease has expired (30 s > backoff 2 s)
    assert [(e["ReceiptHandle"], e["VisibilityTimeout"]) for e in captured[0]] == [
        (records[0]["receiptHandle"], 30),
        (records[1]["receiptHandle"], 30),
    ]


def test_expired_lease_is_taken_over(harness: Harness) -> None:
    # GIVEN a worker claimed j1 with a 5 s lease and vanished
    from constructs_fifo.runtime.job import parse_record

    first = harness.store.claim(parse_record(make_record(body("j1"))), lease_ms=5_000)
    # WHEN the lease has expired and the retry arrives
    harness.clock.advance(10)
    response = harness.run(make_record(body("j1"), attempt=2))
    # THEN the retry takes the claim over, runs the job and completes it under its own owner
    assert harness.ran == ["j1"]
    assert response == {"batchItemFailures": []}
    item = harness.claim_item("j1")
    assert item["status"]["S"] == "SUCCEEDED"
    assert item["owner"]["S"] != first.owner


def test_stale_worker_cannot_overwrite_the_new_owners_success(harness: Harness) -> None:
    # GIVEN worker A runs j1 with a 1 s lease and stalls past it; meanwhile worker B takes over
    # and completes j1
    stale_record = make_record(body("j1"))
    fresh_record = make_record(body("j1"), attempt=2)
    owners: list[str] = []

    def stall_then_let_b_finish(job: Job) -> None:
        owners.append(harness.claim_item("j1")["owner"]["S"])
        harness.clock.advance(5)
        harness.behaviour["j1"] = lambda job: owners.append(harness.claim_item("j1")["owner"]["S"])
        assert harness.run(fresh_record) == {"batchItemFailures": []}

    harness.behaviour["j1"] = stall_then_let_b_finish
    # WHEN worker A finishes after B
    response = harness.processor().process(event(stale_record), FakeContext(remaining_ms=1_000))
    # THEN A's record is reported failed (FENCED) and B's SUCCEEDED claim stands under B's owner
    assert failed_ids(response) == [stale_record["messageId"]]
    assert ("j1", "FENCED") in harness.outcomes()
    item = harness.claim_item("j1")
    assert item["status"]["S"] == "SUCCEEDED"
    assert item["owner"]["S"] == owners[1] != owners[0]
    # AND when A's record comes back it is a duplicate: deleted, not run a third time
    assert harness.run(make_record(body("j1"), attempt=2)) == {"batchItemFailures": []}
    assert harness.ran == ["j1", "j1"]


def test_stale_worker_cannot_overwrite_the_new_owner_with_a_failure(harness: Harness) -> None:
    # GIVEN worker A's job fails after B took over and succeeded
    def stall_then_fail(job: Job) -> None:
        harness.clock.advance(5)
        harness.behaviour["j1"] = lambda job: None
        harness.run(make_record(body("j1"), attempt=2))
        raise RuntimeError("late failure")

    harness.behaviour["j1"] = stall_then_fail
    # WHEN A records its failure
    response = harness.processor().process(event(make_record(body("j1"))), FakeContext(remaining_ms=1_000))
    # THEN the record is reported, the line notes the refused write, and B's SUCCEEDED stands
    assert len(failed_ids(response)) == 1
    failed = next(line for line in harness.lines() if line.get("status") == "FAILED")
    assert failed["claimWriteError"] == "fenced: another worker owns the claim now"
    assert harness.claim_item("j1")["status"]["S"] == "SUCCEEDED"


def test_claim_past_its_ttl_expiration_can_be_claimed_again(harness: Harness) -> None:
    # GIVEN j1 succeeded and its claim's TTL (3600 s) has passed but TTL has not deleted it yet
    harness.run(make_record(body("j1")))
    harness.clock.advance(3601)
    assert harness.claim_item("j1")["status"]["S"] == "SUCCEEDED"
    # WHEN j1 is sent again
    response = harness.run(make_record(body("j1")))
    # THEN it is claimed and run again, as a new job
    assert harness.ran == ["j1", "j1"]
    assert response == {"batchItemFailures": []}


# --- dead jobs (CONTINUE policy: the harness default) ---------------------------------------------


def dlq_attributes(message: dict[str, Any]) -> dict[str, str]:
    return {name: value["StringValue"] for name, value in message.get("MessageAttributes", {}).items()}


def test_permanent_failure_is_dead_at_once_and_sent_to_the_dlq_while_its_group_goes_on(
    harness: Harness,
) -> None:
    # GIVEN p1 raises PermanentJobError, followed by a record of its group and one of another
    harness.behaviour["p1"] = poison
    records = [
        make_record(body("p1"), group="ws#1"),
        make_record(body("a2"), group="ws#1"),
        make_record(body("b1"), group="ws#2"),
    ]
    # WHEN processed
    response = harness.run(*records)
    # THEN p1 ran once, went to the DLQ itself, and nothing is reported: the group went on
    assert harness.ran == ["p1", "a2", "b1"]
    assert response == {"batchItemFailures": []}
    # AND the claim is DEAD with the error, kept for triage and never expiring
    item = harness.claim_item("p1")
    assert item["status"]["S"] == "DEAD"
    assert item["dead_reason"]["S"] == "PERMANENT"
    assert item["error"]["S"] == "p1 can never apply"
    assert item["error_type"]["S"] == "PermanentJobError"
    assert item["message_id"]["S"] == records[0]["messageId"]
    assert "expiration" not in item
    # AND the DLQ holds p1 in its own group, body unchanged, with triage attributes
    (message,) = harness.dead_letters()
    assert message["Body"] == records[0]["body"]
    assert message["Attributes"]["MessageGroupId"] == "ws#1"
    assert dlq_attributes(message) == {
        "jobId": "p1",
        "jobType": "apply_patch",
        "reason": "PERMANENT",
        "errorType": "PermanentJobError",
        "error": "p1 can never apply",
        "attempts": "1",
        "originalMessageId": records[0]["messageId"],
        "deadAt": "2023-11-14T22:13:20+00:00",
    }
    line = outcome_lines(harness)[0]
    assert (line["status"], line["reason"], line["JobsFailed"], line["JobsDeadLettered"]) == (
        "DEAD_LETTERED",
        "PERMANENT",
        1,
        1,
    )


def test_transient_failure_on_the_last_attempt_is_dead(harness: Harness) -> None:
    # GIVEN a job that fails every time, and max_attempts 3
    harness.max_attempts = 3
    harness.behaviour["j1"] = transient
    # WHEN it is delivered three times (receive counts far above its attempts: it was skipped often)
    responses = [harness.run(make_record(body("j1"), attempt=receive)) for receive in (4, 9, 17)]
    # THEN the first two runs are retried, the third is dead and in the DLQ with attempts 3
    assert [len(r["batchItemFailures"]) for r in responses] == [1, 1, 0]
    assert [line["attempt"] for line in outcome_lines(harness)] == [1, 2, 3]
    (message,) = harness.dead_letters()
    assert dlq_attributes(message)["reason"] == "ATTEMPTS_EXHAUSTED"
    assert dlq_attributes(message)["attempts"] == "3"
    assert harness.claim_item("j1")["status"]["S"] == "DEAD"


def test_job_attempt_is_the_runtimes_count_of_runs_not_the_receive_count(harness: Harness) -> None:
    # GIVEN a job function that records the attempt it sees
    seen: list[int] = []
    harness.behaviour["j1"] = lambda job: seen.append(job.attempt)
    # WHEN the job first runs on its 7th receive (it was skipped behind a failing job six times)
    harness.run(make_record(body("j1"), attempt=7))
    # THEN it sees attempt 1
    assert seen == [1]


def test_a_crash_on_the_last_attempt_makes_the_job_dead_without_running_it_again(harness: Harness) -> None:
    # GIVEN max_attempts 2 and a job claimed twice by workers that crashed (leases of 5 s expired)
    from constructs_fifo.runtime.job import parse_record

    harness.max_attempts = 2
    job = parse_record(make_record(body("j1")))
    assert harness.store.claim(job, lease_ms=5_000).attempt == 1
    harness.clock.advance(10)
    assert harness.store.claim(job, lease_ms=5_000).attempt == 2
    harness.clock.advance(10)
    # WHEN the message comes back
    response = harness.run(make_record(body("j1"), attempt=3))
    # THEN it does not run; it is dead (attempts exhausted) and in the DLQ
    assert harness.ran == []
    assert response == {"batchItemFailures": []}
    (message,) = harness.dead_letters()
    assert dlq_attributes(message)["reason"] == "ATTEMPTS_EXHAUSTED"
    assert dlq_attributes(message)["errorType"] == "WorkerCrashedError"


def test_a_copy_of_a_dead_job_follows_it_to_the_dlq_without_running(harness: Harness) -> None:
    # GIVEN p1 died, and the producer sent it again with a new deduplication id (new message)
    harness.behaviour["p1"] = poison
    harness.run(make_record(body("p1"), group="ws#1"))
    harness.ran.clear()
    # WHEN the copy arrives, with a healthy job behind it
    copy = make_record(body("p1"), group="ws#1")
    response = harness.run(copy, make_record(body("a2"), group="ws#1"))
    # THEN the copy is not run, goes to the DLQ beside the first one, and the group goes on
    assert harness.ran == ["a2"]
    assert response == {"batchItemFailures": []}
    reasons = [dlq_attributes(m)["reason"] for m in harness.dead_letters()]
    assert reasons == ["PERMANENT", "COPY_OF_DEAD_JOB"]


def test_a_reset_claim_lets_a_dead_job_run_again(harness: Harness) -> None:
    # GIVEN p1 died, was fixed, and an operator reset its claim
    harness.behaviour["p1"] = poison
    harness.run(make_record(body("p1")))
    del harness.behaviour["p1"]
    assert harness.store.reset("p1") is True
    # WHEN the job is sent again (a redrive: new messageId)
    response = harness.run(make_record(body("p1")))
    # THEN it runs and succeeds, counted as a first attempt after the one before the reset
    assert harness.ran == ["p1", "p1"]
    assert response == {"batchItemFailures": []}
    item = harness.claim_item("p1")
    history = (item["status"]["S"], item["attempts"]["N"], item["earlier_attempts"]["N"])
    assert history == ("SUCCEEDED", "1", "1")
    # AND resetting a claim that is not DEAD does nothing
    assert harness.store.reset("p1") is False


def test_the_runbooks_claim_reset_works_as_written(harness: Harness) -> None:
    # GIVEN p1 died, and an operator with only the claim table's name and the default credentials
    harness.behaviour["p1"] = poison
    harness.run(make_record(body("p1")))
    # WHEN they reset its claim as docs/runbook.md writes it
    reset = ClaimStore(TABLE_NAME).reset("p1")
    # THEN the claim is no longer DEAD: FAILED with no attempt used, so the job may run again, and its
    # run so far is kept as its history
    assert reset is True
    item = harness.dynamodb.get_item(TableName=TABLE_NAME, Key={"id": {"S": "p1"}})["Item"]
    assert (item["status"]["S"], item["attempts"]["N"], item["earlier_attempts"]["N"]) == ("FAILED", "0", "1")


def test_a_dlq_send_failure_keeps_the_record_and_the_next_delivery_sends_it(harness: Harness) -> None:
    # GIVEN a DLQ that does not exist (the send fails), and p1 that dies
    from constructs_fifo.runtime.dead_jobs.letters import DeadLetterSender

    harness.behaviour["p1"] = poison
    broken = DeadLetterSender(harness.sqs, harness.dlq_url + "-missing")
    records = [make_record(body("p1"), group="ws#1"), make_record(body("a2"), group="ws#1")]
    # WHEN processed
    response = harness.processor(dead_letters=broken).process(event(*records), FakeContext())
    # THEN p1 and the record behind it stay on the queue (nothing lost), p1's claim is DEAD
    assert failed_ids(response) == [r["messageId"] for r in records]
    assert harness.ran == ["p1"]
    assert harness.claim_item("p1")["status"]["S"] == "DEAD"
    # WHEN the same message comes back and the DLQ works
    again = make_record(body("p1"), group="ws#1", message_id=records[0]["messageId"])
    response = harness.run(again, make_record(body("a2"), group="ws#1", message_id=records[1]["messageId"]))
    # THEN it is sent without running again, keeping its own reason, and a2 runs
    assert harness.ran == ["p1", "a2"]
    assert response == {"batchItemFailures": []}
    assert [dlq_attributes(m)["reason"] for m in harness.dead_letters()] == ["PERMANENT"]


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("not json", "is not JSON"),
        ("[1, 2]", "body is a JSON list, not an object"),
        ('{"type": "run_tests"}', "jobId is None, it must be a non-empty string"),
        ('{"jobId": 7, "type": "run_tests"}', "jobId is 7, it must be a non-empty string"),
        ('{"jobId": "", "type": "run_tests"}', "jobId is '', it must be a non-empty string"),
        ('{"jobId": "j9"}', "type is None, it must be a non-empty string"),
        ('{"jobId": "j9", "type": 3}', "type is 3, it must be a non-empty string"),
    ],
)
def test_malformed_body_is_dead_at_once_and_its_group_goes_on(
    harness: Harness, raw: str, reason: str
) -> None:
    # GIVEN a malformed record first seen, followed by a record of its group
    bad = make_record(raw, group="ws#1")
    after = make_record(body("a2"), group="ws#1")
    # WHEN processed
    response = harness.run(bad, after)
    # THEN the malformed record is in the DLQ (parsing is deterministic: no retry), a2 runs
    assert response == {"batchItemFailures": []}
    assert harness.ran == ["a2"]
    (message,) = harness.dead_letters()
    assert message["Body"] == raw
    assert dlq_attributes(message)["reason"] == "MALFORMED"
    malformed = outcome_lines(harness)[0]
    assert (malformed["status"], malformed["JobsFailed"]) == ("DEAD_LETTERED", 1)
    assert reason in malformed["error"]


@pytest.mark.parametrize("raw", ["not json", "[1, 2]", '{"type": "run_tests"}', '{"jobId": 7, "type": "t"}'])
def test_malformed_body_without_a_usable_job_id_writes_no_claim(harness: Harness, raw: str) -> None:
    # GIVEN a malformed body with no string jobId
    counter = DynamoCallCounter(harness.dynamodb)
    try:
        # WHEN processed
        harness.run(make_record(raw))
        # THEN the claim table is not touched at all and the line has no jobId
        assert counter.calls == []
    finally:
        counter.close()
    (line,) = outcome_lines(harness)
    assert line["jobId"] is None


def test_malformed_body_with_a_job_id_writes_a_dead_claim_in_one_call(harness: Harness) -> None:
    # GIVEN a JSON object with a jobId but no type
    bad = make_record('{"jobId": "j9", "payload": {}}', group="ws#9")
    counter = DynamoCallCounter(harness.dynamodb)
    try:
        # WHEN processed
        harness.run(bad)
        # THEN it cost exactly one PutItem
        assert counter.calls == ["PutItem"]
    finally:
        counter.close()
    # AND the claim is DEAD (malformed) with the error, so copies of j9 follow it
    item = harness.claim_item("j9")
    assert item["status"]["S"] == "DEAD"
    assert item["dead_reason"]["S"] == "MALFORMED"
    assert item["error_type"]["S"] == "MalformedJobError"
    assert "type is None, it must be a non-empty string" in item["error"]["S"]
    assert (item["message_id"]["S"], item["group"]["S"]) == (bad["messageId"], "ws#9")
    assert "expiration" not in item
    # AND a well-formed copy of j9 arriving later is not run
    harness.run(make_record(body("j9"), group="ws#9"))
    assert harness.ran == []


def test_malformed_body_never_overwrites_a_succeeded_job(harness: Harness) -> None:
    # GIVEN j1 already succeeded
    harness.run(make_record(body("j1")))
    before = harness.claim_item("j1")
    # WHEN a malformed body with the same jobId arrives
    bad = make_record('{"jobId": "j1", "type": ""}')
    response = harness.run(bad)
    # THEN the malformed message is still dead-lettered, and the SUCCEEDED item is untouched
    assert response == {"batchItemFailures": []}
    assert harness.claim_item("j1") == before
    assert before["status"]["S"] == "SUCCEEDED"
    assert [dlq_attributes(m)["reason"] for m in harness.dead_letters()] == ["MALFORMED"]


def test_malformed_body_never_overwrites_another_workers_live_lease(harness: Harness) -> None:
    # GIVEN another worker holds j1 under a live lease
    from constructs_fifo.runtime.job import parse_record

    held = harness.store.claim(parse_record(make_record(body("j1"))), lease_ms=30_000)
    before = harness.claim_item("j1")
    # WHEN a malformed body with the same jobId arrives
    harness.run(make_record('{"jobId": "j1"}'))
    # THEN the lease stands (the other worker can still complete)
    assert harness.claim_item("j1") == before
    assert harness.store.complete("j1", held.owner or "")


def test_malformed_body_takes_over_an_expired_lease(harness: Harness) -> None:
    # GIVEN a worker claimed j1 with a 5 s lease and vanished
    from constructs_fifo.runtime.job import parse_record

    stale = harness.store.claim(parse_record(make_record(body("j1"))), lease_ms=5_000)
    harness.clock.advance(10)
    # WHEN a malformed body with the same jobId arrives after the lease expired
    harness.run(make_record('{"jobId": "j1"}'))
    # THEN the claim is DEAD and the stale worker is fenced out
    assert harness.claim_item("j1")["status"]["S"] == "DEAD"
    assert not harness.store.complete("j1", stale.owner or "")


def test_a_claim_write_error_on_a_malformed_body_is_logged_and_the_record_still_dead_lettered(
    harness: Harness,
) -> None:
    # GIVEN a processor whose claim table does not exist
    from constructs_fifo.runtime.claim.store import ClaimStore

    broken = ClaimStore("no-such-table", harness.dynamodb, ttl_seconds=60, clock=harness.clock)
    bad = make_record('{"jobId": "j9"}', group="ws#1")
    # WHEN a malformed body with a jobId is processed
    response = harness.processor(claims=broken).process(event(bad), FakeContext())
    # THEN the message is dead-lettered anyway and the failed write is a warning line
    assert response == {"batchItemFailures": []}
    assert len(harness.dead_letters()) == 1
    warning = next(line for line in harness.lines() if line.get("event") == "dead_claim_write_failed")
    assert "ResourceNotFoundException" in warning["error"]


def test_a_malformed_record_behind_a_retried_one_waits_its_turn(harness: Harness) -> None:
    # GIVEN a1 fails transiently and a malformed record of its group follows
    harness.behaviour["a1"] = transient
    records = [make_record(body("a1"), group="ws#1"), make_record("not json", group="ws#1")]
    # WHEN processed
    response = harness.run(*records)
    # THEN the malformed record is skipped (kept in order), not dead-lettered ahead of a1
    assert failed_ids(response) == [r["messageId"] for r in records]
    assert harness.dead_letters() == []


# --- time, errors and visibility ---------------------------------------------------------------


def test_no_job_starts_when_the_invocation_is_nearly_out_of_time(harness: Harness) -> None:
    # GIVEN only 500 ms left (below the 1 s safety margin)
    captured = visibility_requests(harness)
    records = [make_record(body("a1"), group="ws#a"), make_record(body("b1"), group="ws#b")]
    # WHEN the batch is processed
    response = harness.run(*records, remaining_ms=500)
    # THEN nothing runs, every record is reported and made visible again at once
    assert harness.ran == []
    assert failed_ids(response) == [r["messageId"] for r in records]
    assert [e["VisibilityTimeout"] for e in captured[0]] == [0, 0]
    assert {status for _, status in harness.outcomes()} == {"DEADLINE"}


def test_a_claim_store_error_reports_the_record_and_blocks_its_group(harness: Harness) -> None:
    # GIVEN a processor whose claim table does not exist
    from constructs_fifo.runtime.claim.store import ClaimStore

    broken = ClaimStore("no-such-table", harness.dynamodb, ttl_seconds=60, clock=harness.clock)
    records = [
        make_record(body("a1"), group="ws#a"),
        make_record(body("a2"), group="ws#a"),
    ]
    # WHEN the batch is processed
    response = harness.processor(claims=broken).process(event(*records), FakeContext())
    # THEN nothing ran, nothing was lost, and the error is logged
    assert harness.ran == []
    assert failed_ids(response) == [r["messageId"] for r in records]
    assert [status for _, status in harness.outcomes()] == ["ERROR", "SKIPPED"]
    assert "ResourceNotFoundException" in harness.lines()[0]["error"]


def test_a_failed_visibility_change_is_logged_not_raised(harness: Harness) -> None:
    # GIVEN a queue URL that does not exist and a failing job
    from constructs_fifo.runtime.backoff import VisibilityChanger
    from constructs_fifo.runtime.observability import JobLogger

    harness.behaviour["a1"] = transient
    logger = JobLogger("Test", stream=harness.stream)
    changer = VisibilityChanger(harness.sqs, harness.queue_url + "-missing", on_error=logger.event)
    record = make_record(body("a1"))
    # WHEN processed
    response = harness.processor(visibility=changer, logger=logger).process(event(record), FakeContext())
    # THEN the record is still reported and the failure is a warning line
    assert failed_ids(response) == [record["messageId"]]
    warning = harness.lines()[-1]
    assert warning["event"] == "visibility_change_failed"
    assert warning["messageIds"] == [record["messageId"]]


def test_a_refused_visibility_entry_is_logged_under_its_own_message_id(harness: Harness) -> None:
    # GIVEN two failing records in one batch: one received from the queue (a real receipt handle),
    # one whose receipt handle SQS will refuse
    harness.behaviour.update({"real": transient, "stale": transient})
    harness.sqs.send_message(
        QueueUrl=harness.queue_url, MessageBody=body("real"), MessageGroupId="g1", MessageDeduplicationId="r"
    )
    (real,) = receive_records(harness.sqs, harness.queue_url)
    stale = make_record(body("stale"), group="g2")
    # WHEN the batch is processed (stale first, so the refused entry is not the last one)
    response = harness.run(stale, real)
    # THEN both are reported, and the only warning names the stale record, with SQS's reason
    assert failed_ids(response) == [stale["messageId"], real["messageId"]]
    warnings = [line for line in harness.lines() if line.get("event") == "visibility_change_failed"]
    assert [(w["messageIds"], w["error"].split(":")[0]) for w in warnings] == [
        ([stale["messageId"]], "ReceiptHandleIsInvalid")
    ]


def test_transient_backoff_doubles_with_the_attempt_and_is_capped(harness: Harness) -> None:
    # GIVEN jobs whose claims already counted 0, 2 and 8 failed runs (cap: the 120 s visibility timeout)
    from constructs_fifo.runtime.job import parse_record

    harness.max_attempts = 20
    harness.behaviour.update({"a": transient, "b": transient, "c": transient})
    for job_id, runs in (("b", 2), ("c", 8)):
        job = parse_record(make_record(body(job_id)))
        for _ in range(runs):
            claim = harness.store.claim(job, lease_ms=1_000)
            harness.store.fail(job_id, claim.owner or "", error="earlier", error_type="RuntimeError")
    captured = visibility_requests(harness)
    records = [
        make_record(body("a"), group="g1"),
        make_record(body("a-next"), group="g1"),
        make_record(body("b"), group="g2"),
        make_record(body("c"), group="g3"),
    ]
    # WHEN processed (attempts 1, 3 and 9)
    harness.run(*records)
    # THEN one ChangeMessageVisibilityBatch call holds base * 2**(attempt-1) per record, capped,
    # and the skipped record gets its blocker's delay
    assert len(captured) == 1
    assert [e["VisibilityTimeout"] for e in captured[0]] == [2, 2, 8, 120]


# --- budget and logs --------------------------------------------------------------------------


def test_dynamodb_calls_are_two_for_a_new_job_and_one_for_a_duplicate(harness: Harness) -> None:
    counter = DynamoCallCounter(harness.dynamodb)
    try:
        # GIVEN / WHEN a new job succeeds
        harness.run(make_record(body("j1")))
        # THEN it cost a PutItem and an UpdateItem
        assert counter.calls == ["PutItem", "UpdateItem"]
        # GIVEN / WHEN its duplicate arrives
        counter.reset()
        harness.run(make_record(body("j1")))
        # THEN it cost one PutItem
        assert counter.calls == ["PutItem"]
    finally:
        counter.close()


def test_outcome_line_is_an_emf_document(harness: Harness) -> None:
    # GIVEN / WHEN one job succeeds on its first run (third receive)
    record = make_record(body("j1", "run_tests"), group="ws#7", attempt=3)
    harness.run(record)
    # THEN its one line carries the job fields and a valid EMF block for the queue
    (line,) = harness.lines()
    assert line["_aws"] == {
        "Timestamp": int(harness.clock() * 1000),
        "CloudWatchMetrics": [
            {
                "Namespace": "Test",
                "Dimensions": [["QueueName"]],
                "Metrics": [
                    {"Name": "JobsSucceeded", "Unit": "Count"},
                    {"Name": "JobsFailed", "Unit": "Count"},
                    {"Name": "DuplicatesSkipped", "Unit": "Count"},
                    {"Name": "ClaimConflicts", "Unit": "Count"},
                    {"Name": "JobsDeadLettered", "Unit": "Count"},
                    {"Name": "GroupsParked", "Unit": "Count"},
                    {"Name": "JobsKept", "Unit": "Count"},
                    {"Name": "JobsBuffered", "Unit": "Count"},
                    {"Name": "JobDuration", "Unit": "Milliseconds"},
                ],
            }
        ],
    }
    assert line["QueueName"] == "jobs.fifo"
    assert (line["JobsSucceeded"], line["JobsFailed"], line["DuplicatesSkipped"], line["ClaimConflicts"]) == (
        1,
        0,
        0,
        0,
    )
    assert line["JobDuration"] == line["duration_ms"] >= 0
    assert {k: line[k] for k in ("jobId", "group", "type", "status", "attempt", "messageId")} == {
        "jobId": "j1",
        "group": "ws#7",
        "type": "run_tests",
        "status": "SUCCEEDED",
        "attempt": 1,
        "messageId": record["messageId"],
    }
    assert line["receiveCount"] == 3
    assert "error" not in line


#: A DEAD claim as the runtime before the dead-job codec stored it: job p died (PERMANENT) in message m-p.
DEAD_CLAIM_BEFORE_THE_CODEC = {
    "id": {"S": "p"},
    "status": {"S": "DEAD"},
    "group": {"S": "ws#1"},
    "type": {"S": "apply_patch"},
    "owner": {"S": "0b7c3c1e-0000-4000-8000-000000000000"},
    "lease_expires_at": {"N": "1700000060000"},
    "attempts": {"N": "2"},
    "updated_at": {"N": "1700000001000"},
    "message_id": {"S": "m-p"},
    "error": {"S": "p can never apply"},
    "error_type": {"S": "PermanentJobError"},
    "dead_reason": {"S": "PERMANENT"},
}


def test_a_dead_claim_written_before_the_dead_job_codec_is_read_as_it_died(harness: Harness) -> None:
    # GIVEN job p's DEAD claim exactly as the runtime before the codec wrote it
    harness.dynamodb.put_item(TableName=TABLE_NAME, Item=dict(DEAD_CLAIM_BEFORE_THE_CODEC))
    # WHEN the message it died in comes back, then a copy of it in another message
    harness.run(make_record(body("p"), group="ws#1", message_id="m-p"))
    harness.run(make_record(body("p"), group="ws#1", message_id="m-copy"))
    # THEN neither runs; the first is dead-lettered as it died, the copy follows it
    assert harness.ran == []
    letters = [dlq_attributes(m) for m in harness.dead_letters()]
    assert [(a["reason"], a["errorType"], a["error"], a["attempts"]) for a in letters] == [
        ("PERMANENT", "PermanentJobError", "p can never apply", "2"),
        ("COPY_OF_DEAD_JOB", "PermanentJobError", "p can never apply", "2"),
    ]
