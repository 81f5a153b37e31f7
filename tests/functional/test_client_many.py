"""Waiting for many jobs on moto: one BatchGetItem a poll, each job given back once, as it settles.

The real processors run the jobs in the waiter's pauses (``outcome_world.Waiter``); every DynamoDB
request the waiter makes is counted by botocore's event hooks on its own client.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import boto3
import pytest

from constructs_fifo.client import JobMessage, JobOutcomes, JobProducer, JobStatus, OutcomeQueryError
from constructs_fifo.client.waits.many import MAX_ITEMS_PER_POLL, JobRef
from constructs_fifo.runtime.constants import DeadJobPolicy

from .outcome_world import DYING_JOB, ReturningHarness, Waiter, expect, jobs, poison
from .runtime_harness import GROUP_TABLE_NAME, REGION, TABLE_NAME, Harness
from .state_harness import StateHarness

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient


class Requests:
    """Every DynamoDB request a client makes, by operation, and the items of each BatchGetItem."""

    def __init__(self, client: DynamoDBClient) -> None:
        self.calls: Counter[str] = Counter()
        self.batch_items: list[int] = []
        client.meta.events.register("provide-client-params.dynamodb.*", self._seen)

    def _seen(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        self.calls[model.name] += 1
        if model.name == "BatchGetItem":
            self.batch_items.append(sum(len(table["Keys"]) for table in params["RequestItems"].values()))


@pytest.fixture
def claim_mode(dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str) -> Harness:
    return ReturningHarness(
        dynamodb=dynamodb, sqs=sqs, queue_url=queue_url, dlq_url=dlq_url, policy=DeadJobPolicy.PARK
    )


def _outcomes(harness: Any, waiter: Waiter, *, claim_table: str | None) -> tuple[JobOutcomes, Requests]:
    client = boto3.client("dynamodb", region_name=REGION)  # the waiter's own: its requests alone counted
    requests = Requests(client)
    outcomes = JobOutcomes(
        claim_table=claim_table,
        group_table=GROUP_TABLE_NAME,
        dynamodb=client,
        clock=harness.clock,
        monotonic=waiter.monotonic,
        sleep=waiter.sleep,
    )
    return outcomes, requests


def test_a_wait_on_100_jobs_makes_one_read_request_a_poll_and_gives_each_back_once_as_it_settles(
    claim_mode: Harness, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN 100 jobs sent to a claim-mode queue under PARK, j3-4 dying and five parked behind it
    waiter = Waiter(claim_mode)
    outcomes, requests = _outcomes(claim_mode, waiter, claim_table=TABLE_NAME)
    sent = jobs()
    JobProducer(queue_url, sqs_client=sqs).send_batch(sent)
    # WHEN all are waited for together, stopping at parked, each given back as it settles
    given = list(outcomes.as_settled(sent, 600, sent=True, stop_at_parked=True))
    # THEN each came back once, with what it became (results included)
    assert sorted(o.job_id for o in given) == sorted(job.job_id for job in sent)
    assert {o.job_id: o.status for o in given} == {job.job_id: expect(job) for job in sent}
    by_id = {o.job_id: o for o in given}
    assert by_id["j0-0"].result == {"passed": True, "n": 0}
    assert (by_id[DYING_JOB].dead_reason, by_id[DYING_JOB].parked_group) == ("PERMANENT", "ws#3")
    # AND in the order they settled: the first group's first job before its last
    order = [o.job_id for o in given]
    assert order.index("j0-0") < order.index("j0-9")
    # AND every poll was one BatchGetItem of at most 100 items, no GetItem: polls = pauses + 1
    assert requests.calls == Counter({"BatchGetItem": len(waiter.pauses) + 1})
    assert max(requests.batch_items) <= MAX_ITEMS_PER_POLL
    assert requests.batch_items[0] == 100  # the first poll: the 100 claims, no room for headers
    assert requests.batch_items[-1] < 100  # settled jobs are not read again


def test_wait_many_returns_every_job_in_its_order_and_at_the_timeout_the_unsettled_ones_as_they_are(
    claim_mode: Harness, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN the 100 jobs, the dying one parking ws#3
    waiter = Waiter(claim_mode)
    outcomes, requests = _outcomes(claim_mode, waiter, claim_table=TABLE_NAME)
    sent = jobs()
    JobProducer(queue_url, sqs_client=sqs).send_batch(sent)
    # WHEN they are all waited for by default (parked is not settled) for 30 seconds
    got = outcomes.wait_many(sent, 30, sent=True)
    # THEN every job is there in its order; the five behind the dead one read parked, not settled
    assert list(got) == [job.job_id for job in sent]
    parked = {job_id for job_id, o in got.items() if o.status is JobStatus.PARKED}
    assert parked == {f"j3-{k}" for k in range(5, 10)}
    assert not any(got[job_id].status.settled for job_id in parked)
    assert all(o.status.settled for job_id, o in got.items() if job_id not in parked)
    assert sum(waiter.pauses) == pytest.approx(30)
    # AND still one request a poll
    assert requests.calls == Counter({"BatchGetItem": len(waiter.pauses) + 1})


def test_more_than_100_jobs_are_read_in_turns_still_one_request_a_poll(
    claim_mode: Harness, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN 150 jobs (15 groups of 10), none dying
    waiter = Waiter(claim_mode)
    outcomes, requests = _outcomes(claim_mode, waiter, claim_table=TABLE_NAME)
    sent = [
        JobMessage(f"k{g}-{k}", "run_tests", {"n": k}, group=f"g#{g}") for g in range(15) for k in range(10)
    ]
    for start in range(0, len(sent), 50):
        JobProducer(queue_url, sqs_client=sqs).send_batch(sent[start : start + 50])
    # WHEN all are waited for
    got = outcomes.wait_many(sent, 600, sent=True)
    # THEN all succeeded, with one request of at most 100 items a poll
    assert {o.status for o in got.values()} == {JobStatus.SUCCEEDED}
    assert requests.calls == Counter({"BatchGetItem": len(waiter.pauses) + 1})
    assert max(requests.batch_items) == MAX_ITEMS_PER_POLL


@pytest.mark.parametrize("with_seq", [False, True], ids=["no-seq", "seq"])
def test_state_mode_reads_each_groups_two_items_once_a_poll(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str, with_seq: bool
) -> None:
    # GIVEN a state-mode queue under PARK whose transition for j3-4 dies
    harness = StateHarness(dynamodb, sqs, queue_url, dlq_url, policy=DeadJobPolicy.PARK)
    harness.behaviour[DYING_JOB] = poison
    waiter = Waiter(harness)
    outcomes, requests = _outcomes(harness, waiter, claim_table=None)
    sent = jobs(with_seq=with_seq)
    JobProducer(queue_url, sqs_client=sqs).send_batch(sent)
    # WHEN all are waited for together, by their groups (and seqs)
    got = outcomes.wait_many(sent, 600, sent=True, stop_at_parked=True)
    # THEN they read as one by one, and each poll read each waited-for group's state and header once
    assert {job_id: o.status for job_id, o in got.items()} == {job.job_id: expect(job) for job in sent}
    assert requests.calls == Counter({"BatchGetItem": len(waiter.pauses) + 1})
    assert requests.batch_items[0] == 20  # 10 groups x (state item, park header)


def test_many_jobs_are_asked_as_given_or_refused_before_any_read(dynamodb: DynamoDBClient) -> None:
    # GIVEN a state-mode reader
    outcomes = JobOutcomes(group_table=GROUP_TABLE_NAME, dynamodb=dynamodb)
    # THEN a job without its group, or a job twice, is refused naming the fix
    with pytest.raises(OutcomeQueryError, match="the group is required"):
        outcomes.wait_many(["j1"], 1)
    with pytest.raises(OutcomeQueryError, match="asked for twice"):
        outcomes.wait_many([JobRef("j1", "g"), JobRef("j1", "g")], 1)
