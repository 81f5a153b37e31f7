"""QueueClient on moto: one object for a queue, found by name (stack outputs, environment), sync and asyncio,
with the steering controls (cancel, hold, cancel a held group, release).

The real processors run the jobs: in the sync tests in the waiter's pauses (``outcome_world.Waiter``),
in the asyncio tests in a task of their own while the waits pause.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

import boto3
import pytest

from constructs_fifo.client import (
    CancelOutcome,
    HoldOutcome,
    JobMessage,
    JobStatus,
    OutcomeQueryError,
    QueueClient,
    QueueLookupError,
)
from constructs_fifo.runtime.constants import DeadJobPolicy
from constructs_fifo.runtime.settings.addresses import OUTPUT_DESCRIPTION_PREFIX, client_variables

from .outcome_world import ReturningHarness, Waiter
from .runtime_harness import GROUP_TABLE_NAME, REGION, TABLE_NAME, Harness

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient


@pytest.fixture
def claim_mode(dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str) -> Harness:
    return ReturningHarness(
        dynamodb=dynamodb, sqs=sqs, queue_url=queue_url, dlq_url=dlq_url, policy=DeadJobPolicy.PARK
    )


@pytest.fixture
def environ(queue_url: str, dlq_url: str) -> dict[str, str]:
    """What ``queue.grant_client(fn, name="tools")`` sets in ``fn``'s environment."""
    variables = client_variables("tools")
    values = {
        "queue_url": queue_url,
        "dead_letter_queue_url": dlq_url,
        "claim_table": TABLE_NAME,
        "group_table": GROUP_TABLE_NAME,
    }
    return {variables[field]: value for field, value in values.items()}


def test_a_client_from_the_environment_sends_waits_and_reads_parked_groups(
    claim_mode: Harness, environ: dict[str, str]
) -> None:
    # GIVEN a client built from what grant_client set, its waits driving the processors
    waiter = Waiter(claim_mode)
    queue = QueueClient.from_environment(
        "tools", environ=environ, clock=claim_mode.clock, monotonic=waiter.monotonic, sleep=waiter.sleep
    )
    # WHEN it sends a job and waits, and sends two more and waits for both
    outcome = queue.send_and_wait("call-1", "run_tests", {"n": 1}, group="s#1", timeout_seconds=30)
    queue.send_batch([JobMessage(f"call-{n}", "run_tests", {"n": n}, group="s#1") for n in (2, 3)])
    both = queue.wait_many(["call-2", "call-3"], 30, sent=True)
    # THEN each has its result, and the queue's parts are there: parked groups, and no states (claim mode)
    assert (outcome.status, outcome.result) == (JobStatus.SUCCEEDED, {"passed": True, "n": 1})
    assert [o.result for o in both.values()] == [{"passed": True, "n": 2}, {"passed": True, "n": 3}]
    assert (queue.mode, queue.parked.list_groups()) == ("claim", [])
    with pytest.raises(OutcomeQueryError, match="claim mode and keeps no group states"):
        _ = queue.states


def test_a_client_without_its_environment_names_the_variable_and_the_grant() -> None:
    # GIVEN no variables; WHEN a client is built from them THEN the error names the variable and the fix
    with pytest.raises(QueueLookupError) as raised:
        QueueClient.from_environment("tools", environ={})
    assert str(raised.value).startswith("CONSTRUCTS_FIFO_TOOLS_QUEUE_URL is not set")
    assert "queue.grant_client(fn, name='tools')" in str(raised.value)


def test_a_client_from_a_stacks_outputs_and_a_missing_stack(aws: None, queue_url: str) -> None:
    # GIVEN a deployed stack whose outputs are the construct's (as its queue McpTools/FastTools writes them)
    cloudformation = boto3.client("cloudformation", region_name=REGION)
    described = f"{OUTPUT_DESCRIPTION_PREFIX}McpTools/FastTools: the "
    template = {
        "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {
            "FastToolsOutputsQueueUrl": {"Value": queue_url, "Description": described + "job queue's URL."},
            "FastToolsOutputsClaimTableName": {
                "Value": TABLE_NAME,
                "Description": described + "claim table.",
            },
        },
    }
    cloudformation.create_stack(StackName="McpTools", TemplateBody=json.dumps(template))
    # WHEN a client is built by the stack's and the queue's names THEN it has the queue's address
    queue = QueueClient.from_stack("McpTools", "FastTools", cloudformation=cloudformation)
    assert (queue.address.queue_url, queue.address.claim_table, queue.mode) == (
        queue_url,
        TABLE_NAME,
        "claim",
    )
    # AND a stack that is not there is the client's error with the fix
    with pytest.raises(QueueLookupError, match="check the stack's name and the region"):
        QueueClient.from_stack("Nowhere", cloudformation=cloudformation)


def test_the_async_forms_wait_without_blocking_the_event_loop(
    claim_mode: Harness, sqs: SQSClient, dynamodb: DynamoDBClient, queue_url: str
) -> None:
    # GIVEN a client, and processors that run only in a task of their own once started
    queue = QueueClient(
        queue_url=queue_url, claim_table=TABLE_NAME, group_table=GROUP_TABLE_NAME, sqs=sqs, dynamodb=dynamodb
    )
    waiter = Waiter(claim_mode)

    async def scenario() -> tuple[int, object, dict[str, object]]:
        ticks = 0
        sent = [JobMessage(f"a-{n}", "run_tests", {"n": n}, group=f"s#{n % 2}") for n in range(4)]
        await queue.send_batch_async(sent)
        one = asyncio.create_task(
            queue.send_and_wait_async("a-9", "run_tests", {"n": 9}, group="s#9", timeout_seconds=30)
        )
        many = asyncio.create_task(queue.wait_many_async(sent, 30, sent=True))
        # WHEN the loop ticks while they wait, and only then the processors run
        while ticks < 5:
            await asyncio.sleep(0.05)
            ticks += 1
        assert not one.done() and not many.done()  # nothing ran yet: still waiting, the loop free
        while not (one.done() and many.done()):
            await asyncio.to_thread(waiter.sleep, 0)
        return ticks, (await one), {job_id: o.result for job_id, o in (await many).items()}

    ticks, one, results = asyncio.run(scenario())
    # THEN the loop ticked while both waited, and both returned the jobs' results
    assert ticks == 5
    assert (one.status, one.result) == (JobStatus.SUCCEEDED, {"passed": True, "n": 9})  # type: ignore[attr-defined]
    assert results == {f"a-{n}": {"passed": True, "n": n} for n in range(4)}


def test_the_client_cancels_a_job_before_it_runs_and_a_held_groups_kept_jobs(
    claim_mode: Harness, environ: dict[str, str]
) -> None:
    # GIVEN a client from the environment (grant_client + grant_steer), its waits driving the processors
    waiter = Waiter(claim_mode)
    queue = QueueClient.from_environment(
        "tools", environ=environ, clock=claim_mode.clock, monotonic=waiter.monotonic, sleep=waiter.sleep
    )
    # WHEN it sends three calls of a session and cancels the second before anything runs
    queue.send_batch([JobMessage(f"c-{n}", "run_tests", {"n": n}, group="s#1") for n in (1, 2, 3)])
    report = queue.cancel("c-2", group="s#1", reason="notifications/cancelled", by="mcp")
    outcomes = queue.wait_many(["c-1", "c-2", "c-3"], 30, sent=True)
    # THEN the second never ran and reads cancelled (who and why); the others ran in order with results
    assert report.outcome is CancelOutcome.NOT_STARTED
    assert claim_mode.ran == ["c-1", "c-3"]
    cancelled = outcomes["c-2"]
    assert (cancelled.status, cancelled.result, cancelled.cancel_reason, cancelled.cancelled_by) == (
        JobStatus.CANCELLED,
        None,
        "notifications/cancelled",
        "mcp",
    )
    ran = [outcomes[job_id].result for job_id in ("c-1", "c-3")]
    assert ran == [{"passed": True, "n": 1}, {"passed": True, "n": 3}]

    # WHEN another session is held, its calls kept, then its kept calls cancelled and the group released
    assert queue.hold("s#2", reason="client gone").outcome is HoldOutcome.HELD
    queue.send_batch([JobMessage(f"h-{n}", "run_tests", {"n": n}, group="s#2") for n in (1, 2)])
    waiter.sleep(0)  # one batch: the held group's calls are kept, not run
    group_report = queue.cancel_group("s#2", reason="client gone", by="mcp")
    assert queue.release("s#2").outcome is HoldOutcome.RELEASED
    waiter.sleep(0)  # the replay
    queue.send("h-3", "run_tests", {"n": 3}, group="s#2")
    after = queue.wait_many(["h-1", "h-2", "h-3"], 30, sent=True)
    # THEN the kept calls never ran and read cancelled; the call sent after the release ran
    assert (group_report.cancelled, [r.job_id for r in group_report.jobs]) == (2, ["h-1", "h-2"])
    assert claim_mode.ran == ["c-1", "c-3", "h-3"]
    assert {j: o.status for j, o in after.items()} == {
        "h-1": JobStatus.CANCELLED,
        "h-2": JobStatus.CANCELLED,
        "h-3": JobStatus.SUCCEEDED,
    }


def test_cancel_async_cancels_a_pending_job_without_blocking_the_event_loop(
    claim_mode: Harness, sqs: SQSClient, dynamodb: DynamoDBClient, queue_url: str
) -> None:
    # GIVEN a client and a sent job whose processors have not run
    queue = QueueClient(
        queue_url=queue_url, claim_table=TABLE_NAME, group_table=GROUP_TABLE_NAME, sqs=sqs, dynamodb=dynamodb
    )
    waiter = Waiter(claim_mode)

    async def scenario() -> tuple[CancelOutcome, JobStatus]:
        await queue.send_async("a-1", "run_tests", {"n": 1}, group="s#1")
        waiting = asyncio.create_task(queue.wait_async("a-1", 30, group="s#1", sent=True))
        # WHEN it is cancelled from the event loop, and only then the processors run
        report = await queue.cancel_async("a-1", group="s#1", reason="notifications/cancelled")
        await asyncio.to_thread(waiter.sleep, 0)
        return report.outcome, (await waiting).status

    # THEN the cancel found it not started, the waiter sees cancelled, and the job never ran
    assert asyncio.run(scenario()) == (CancelOutcome.NOT_STARTED, JobStatus.CANCELLED)
    assert claim_mode.ran == []


def test_send_superseding_and_its_async_form_run_only_the_newest_job_of_a_key(
    claim_mode: Harness, environ: dict[str, str]
) -> None:
    # GIVEN a client from the environment (grant_client + grant_steer), its waits driving the processors
    waiter = Waiter(claim_mode)
    queue = QueueClient.from_environment(
        "tools", environ=environ, clock=claim_mode.clock, monotonic=waiter.monotonic, sleep=waiter.sleep
    )

    def run_tests(job_id: str) -> JobMessage:
        return JobMessage(job_id, "run_tests", {"n": 1}, group="s#1", supersede="run_tests")

    # WHEN two run_tests of one session are sent superseding, then a third from the event loop
    queue.send_superseding(run_tests("t-1"))
    queue.send_superseding(run_tests("t-2"))
    asyncio.run(queue.send_superseding_async(run_tests("t-3")))
    outcomes = queue.wait_many(["t-1", "t-2", "t-3"], 30, sent=True)

    # THEN only the newest ran; the older ones read superseded, naming it
    assert claim_mode.ran == ["t-3"]
    assert {j: (o.status, o.superseded_by) for j, o in outcomes.items()} == {
        "t-1": (JobStatus.SUPERSEDED, "t-3"),
        "t-2": (JobStatus.SUPERSEDED, "t-3"),
        "t-3": (JobStatus.SUCCEEDED, None),
    }
