"""The fence for a job's own writes, on moto: a stale run's token is below the run that took over, and
a DynamoDB sink written through :mod:`constructs_fifo.worker.fence` refuses the stale run's late write."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from constructs_fifo.runtime.claim.store import ClaimStore
from constructs_fifo.runtime.job import Job
from constructs_fifo.worker.fence import dynamodb_condition, dynamodb_set

from .runtime_harness import TABLE_NAME, FakeClock, body, make_record
from .worker_harness import SlotHarness

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient


def _sink(dynamodb: DynamoDBClient) -> str:
    dynamodb.create_table(
        TableName="sink",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    return "sink"


def _write(dynamodb: DynamoDBClient, token: int, text: str) -> bool:
    try:
        dynamodb.put_item(
            TableName="sink",
            Item={"id": {"S": "report"}, "text": {"S": text}, **dynamodb_set(token)},
            **dynamodb_condition(token),
        )
    except dynamodb.exceptions.ConditionalCheckFailedException:
        return False
    return True


def test_a_stale_runs_late_write_through_the_fence_is_refused(dynamodb: DynamoDBClient) -> None:
    # GIVEN run A of j1, whose lease ran out (a paused worker), and run B that took the job over
    _sink(dynamodb)
    clock = FakeClock()
    store = ClaimStore(TABLE_NAME, dynamodb, clock=clock)
    job = Job(id="j1", type="t", payload={}, group="g", message_id="m", attempt=1, body={})
    stale = store.claim(job, lease_ms=1000)
    clock.advance(2)
    fresh = store.claim(job, lease_ms=1000)
    # WHEN B writes its report through the fence, then A resumes and writes its own
    written = _write(dynamodb, fresh.fence, "B")
    late = _write(dynamodb, stale.fence, "A")
    # THEN A's token is below B's, B's write stands and A's is refused
    assert stale.fence < fresh.fence
    assert (written, late) == (True, False)
    item = dynamodb.get_item(TableName="sink", Key={"id": {"S": "report"}})["Item"]
    assert item["text"] == {"S": "B"}


def test_a_retake_within_the_same_millisecond_still_gets_a_higher_token(dynamodb: DynamoDBClient) -> None:
    # GIVEN a run that failed, retaken at a clock that did not move past its token
    clock = FakeClock()
    store = ClaimStore(TABLE_NAME, dynamodb, clock=clock)
    job = Job(id="j1", type="t", payload={}, group="g", message_id="m", attempt=1, body={})
    first = store.claim(job, lease_ms=1000)
    assert store.fail("j1", first.owner or "", error="e", error_type="E")
    # WHEN it is retaken / THEN its token is above the first one's
    assert store.claim(job, lease_ms=1000).fence > first.fence


def test_a_worker_job_reads_its_token_on_its_context(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN a worker slot whose job reads context.fence
    seen: list[Any] = []
    harness = SlotHarness(dynamodb, sqs, queue_url, lambda job, context: seen.append(context.fence))
    # WHEN it runs j1
    context = harness.heartbeat.begin(harness.clock())
    harness.slot.process_batch([make_record(body("j1"))], context)
    # THEN the job saw its claim's token
    claim = ClaimStore(TABLE_NAME, dynamodb).get("j1") or {}
    assert seen == [claim["fence"]]
    assert isinstance(seen[0], int) and seen[0] > 0


pytestmark = pytest.mark.usefixtures("aws")
