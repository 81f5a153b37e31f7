"""JobOutcomes on moto: 100 jobs sent, each outcome waited for while the real processors run them.

The processors run in-process (there is no Lambda in tests): the waiter's pause runs the next batch
the queue delivers, as the event source mapping would while a real waiter sleeps, and the waiter's
timer moves by the pause, so timeouts are exact without a clock in the assertions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from constructs_fifo.client import JobOutcomes, JobProducer, JobStatus, OutcomeQueryError
from constructs_fifo.client.parked import ParkedGroups
from constructs_fifo.runtime.constants import DeadJobPolicy

from .outcome_world import DYING_JOB, ReturningHarness, Waiter, expect, jobs, poison
from .runtime_harness import GROUP_TABLE_NAME, TABLE_NAME, Harness, receive_records
from .state_harness import StateHarness

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient


@pytest.fixture
def claim_mode(dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str) -> Harness:
    return ReturningHarness(
        dynamodb=dynamodb, sqs=sqs, queue_url=queue_url, dlq_url=dlq_url, policy=DeadJobPolicy.PARK
    )


def test_claim_mode_100_jobs_succeeded_with_results_dead_and_parked(
    claim_mode: Harness, sqs: SQSClient, dynamodb: DynamoDBClient, queue_url: str
) -> None:
    # GIVEN a claim-mode queue under PARK whose job function returns a result, and j3-4 dies
    waiter = Waiter(claim_mode)
    outcomes = JobOutcomes(
        claim_table=TABLE_NAME,
        group_table=GROUP_TABLE_NAME,
        dynamodb=dynamodb,
        clock=claim_mode.clock,
        monotonic=waiter.monotonic,
        sleep=waiter.sleep,
    )
    sent = jobs()
    JobProducer(queue_url, sqs_client=sqs).send_batch(sent)
    # WHEN each job's outcome is waited for, one after the other, stopping at parked
    seen = {
        job.job_id: outcomes.wait(job.job_id, 600, group=job.group, sent=True, stop_at_parked=True)
        for job in sent
    }
    # THEN every job settled as it went: 94 succeeded with their results, j3-4 dead, 5 parked behind it
    assert {job_id: outcome.status for job_id, outcome in seen.items()} == {
        job.job_id: expect(job) for job in sent
    }
    assert all(
        seen[job.job_id].result == {"passed": True, "n": job.payload["n"]}
        for job in sent
        if expect(job) is JobStatus.SUCCEEDED
    )
    dead = seen[DYING_JOB]
    assert (dead.dead_reason, dead.error_type, dead.parked_group) == (
        "PERMANENT",
        "PermanentJobError",
        "ws#3",
    )
    assert dead.error == "the tests cannot run: no workspace"
    assert {seen[f"j3-{k}"].parked_behind for k in range(5, 10)} == {DYING_JOB}
    # AND a job of the parked group runs once resumed: the waiter sees it succeed
    ParkedGroups(
        group_table=GROUP_TABLE_NAME,
        claim_table=TABLE_NAME,
        queue_url=queue_url,
        dead_letter_queue_url=claim_mode.dlq_url,
        dynamodb=dynamodb,
        sqs=sqs,
        clock=claim_mode.clock,
    ).resume("ws#3", skip_dead=True)
    assert outcomes.wait("j3-9", 600, group="ws#3").result == {"passed": True, "n": 309}


def test_a_default_wait_goes_on_through_parked_and_returns_what_the_job_became_after_a_resume(
    claim_mode: Harness, sqs: SQSClient, dynamodb: DynamoDBClient, queue_url: str
) -> None:
    # GIVEN group ws#3 parked at its dead j3-4, and an operator who resumes it (skip_dead) while a
    # caller waits on j3-9 behind it
    waiter = Waiter(claim_mode)
    outcomes = JobOutcomes(
        claim_table=TABLE_NAME,
        group_table=GROUP_TABLE_NAME,
        dynamodb=dynamodb,
        clock=claim_mode.clock,
        monotonic=waiter.monotonic,
        sleep=waiter.sleep,
    )
    JobProducer(queue_url, sqs_client=sqs).send_batch([job for job in jobs() if job.group == "ws#3"])
    assert outcomes.wait("j3-9", 600, group="ws#3", sent=True, stop_at_parked=True).status is JobStatus.PARKED
    groups = ParkedGroups(
        group_table=GROUP_TABLE_NAME,
        claim_table=TABLE_NAME,
        queue_url=queue_url,
        dead_letter_queue_url=claim_mode.dlq_url,
        dynamodb=dynamodb,
        sqs=sqs,
        clock=claim_mode.clock,
    )
    seen: list[JobStatus] = []
    pause = waiter.sleep

    def sleep_then_resume(seconds: float) -> None:
        seen.append(outcomes.get("j3-9", "ws#3").status)
        if len(seen) == 3:
            groups.resume("ws#3", skip_dead=True)
        pause(seconds)

    patient = JobOutcomes(
        claim_table=TABLE_NAME,
        group_table=GROUP_TABLE_NAME,
        dynamodb=dynamodb,
        clock=claim_mode.clock,
        monotonic=waiter.monotonic,
        sleep=sleep_then_resume,
    )
    # WHEN it waits by default, and a short wait elsewhere times out while the group is parked
    short = outcomes.wait("j3-9", 0.5, group="ws#3", sent=True)
    outcome = patient.wait("j3-9", 600, group="ws#3", sent=True)
    # THEN the short wait returned parked only at its timeout (not settled), and the default wait read
    # parked, went on, and returned the job's success once the group was resumed
    assert (short.status, short.status.settled) == (JobStatus.PARKED, False)
    assert seen[:3] == [JobStatus.PARKED] * 3
    assert (outcome.status, outcome.result) == (JobStatus.SUCCEEDED, {"passed": True, "n": 309})


def test_claim_mode_a_job_not_taken_is_pending_when_sent_and_unknown_otherwise(
    claim_mode: Harness, dynamodb: DynamoDBClient
) -> None:
    # GIVEN a job sent but never processed (the waiter's pause runs nothing: the queue is empty)
    waiter = Waiter(claim_mode)
    outcomes = JobOutcomes(
        claim_table=TABLE_NAME, dynamodb=dynamodb, monotonic=waiter.monotonic, sleep=waiter.sleep
    )
    # WHEN it is waited for 5 seconds
    outcome = outcomes.wait("never-taken", 5, sent=True)
    # THEN the wait returns at the timeout with it pending, having paused 0.1 s doubling to 1 s
    assert outcome.status is JobStatus.PENDING
    assert waiter.pauses[:5] == [0.1, 0.2, 0.4, 0.8, 1.0] and sum(waiter.pauses) == pytest.approx(5)
    # AND without sent=True nothing tells it from a job never sent
    assert outcomes.get("never-taken").status is JobStatus.UNKNOWN


def test_send_and_wait_returns_the_job_functions_result(
    claim_mode: Harness, sqs: SQSClient, dynamodb: DynamoDBClient, queue_url: str
) -> None:
    # GIVEN a producer wired to the queue's outcomes
    waiter = Waiter(claim_mode)
    outcomes = JobOutcomes(
        claim_table=TABLE_NAME, dynamodb=dynamodb, monotonic=waiter.monotonic, sleep=waiter.sleep
    )
    producer = JobProducer(queue_url, sqs_client=sqs, outcomes=outcomes)
    # WHEN it sends a job and waits
    outcome = producer.send_and_wait("call-1", "run_tests", {"n": 7}, group="mcp#1", timeout_seconds=30)
    # THEN it has the result; a producer without outcomes refuses before sending
    assert (outcome.status, outcome.result) == (JobStatus.SUCCEEDED, {"passed": True, "n": 7})
    with pytest.raises(OutcomeQueryError, match="outcomes=JobOutcomes"):
        JobProducer(queue_url, sqs_client=sqs).send_and_wait(
            "call-2", "run_tests", {}, group="mcp#1", timeout_seconds=1
        )
    assert receive_records(sqs, queue_url) == []


@pytest.mark.parametrize("with_seq", [False, True], ids=["no-seq", "seq"])
def test_state_mode_100_jobs_applied_dead_and_parked(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str, with_seq: bool
) -> None:
    # GIVEN a state-mode queue under PARK whose transition for j3-4 dies
    harness = StateHarness(dynamodb, sqs, queue_url, dlq_url, policy=DeadJobPolicy.PARK)
    harness.behaviour[DYING_JOB] = poison
    waiter = Waiter(harness)
    outcomes = JobOutcomes(
        group_table=GROUP_TABLE_NAME, dynamodb=dynamodb, monotonic=waiter.monotonic, sleep=waiter.sleep
    )
    sent = jobs(with_seq=with_seq)
    JobProducer(queue_url, sqs_client=sqs).send_batch(sent)
    # WHEN each job's outcome is waited for, by its group (and seq, when it carries one)
    seen = {
        job.job_id: outcomes.wait(
            job.job_id, 600, group=job.group, seq=job.seq, sent=True, stop_at_parked=True
        )
        for job in sent
    }
    # THEN they settled as in claim mode, an applied job with a state version that includes it
    assert {job_id: outcome.status for job_id, outcome in seen.items()} == {
        job.job_id: expect(job) for job in sent
    }
    for job in sent:
        outcome = seen[job.job_id]
        if outcome.status is JobStatus.SUCCEEDED:
            assert outcome.state_version is not None
            assert job.job_id in _log_at_least(harness, job.group, outcome.state_version)
    assert (seen[DYING_JOB].dead_reason, seen[DYING_JOB].parked_group) == ("PERMANENT", "ws#3")
    assert {seen[f"j3-{k}"].parked_behind for k in range(5, 10)} == {DYING_JOB}


@pytest.mark.parametrize(
    ("job_type", "why"),
    [("odd", "the return value is not JSON"), ("large", "bytes of JSON, more than the 65536 stored")],
    ids=["not-json", "too-large"],
)
def test_a_result_not_stored_leaves_the_job_succeeded_and_its_outcome_says_why(
    claim_mode: Harness, sqs: SQSClient, dynamodb: DynamoDBClient, queue_url: str, *, job_type: str, why: str
) -> None:
    # GIVEN a job function that returns a set, or a value past 64 KiB
    waiter = Waiter(claim_mode)
    outcomes = JobOutcomes(
        claim_table=TABLE_NAME, dynamodb=dynamodb, monotonic=waiter.monotonic, sleep=waiter.sleep
    )
    JobProducer(queue_url, sqs_client=sqs).send("odd-1", job_type, {}, group="ws#1")
    # WHEN its outcome is waited for
    outcome = outcomes.wait("odd-1", 30, group="ws#1", sent=True)
    # THEN it succeeded without a result, and its outcome says why (not read as a job returning None)
    assert (outcome.status, outcome.result) == (JobStatus.SUCCEEDED, None)
    assert outcome.result_not_stored is not None and why in outcome.result_not_stored
    assert f"its return value was not stored: {outcome.result_not_stored}" in outcome.detail
    # AND so does its outcome line
    [line] = [line for line in claim_mode.outcome_lines() if line["status"] == "SUCCEEDED"]
    assert why in line["resultNotStored"]


def test_state_mode_needs_the_group(dynamodb: DynamoDBClient) -> None:
    # GIVEN a state-mode reader; WHEN asked without a group; THEN it names the fix
    with pytest.raises(OutcomeQueryError, match="pass group="):
        JobOutcomes(group_table=GROUP_TABLE_NAME, dynamodb=dynamodb).get("j1")


def _log_at_least(harness: StateHarness, group: str, version: int) -> list[str]:
    state = harness.group_state(group)
    assert state.version >= version
    return list((state.state or {}).get("log", []))
