"""Pacing through the real runtime on moto, both modes: over the limit a job waits in its place (no
attempt counted, never dead-lettered), its group behind it; a key spans groups; the bucket is one item."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from constructs_fifo.client import JobSteering
from constructs_fifo.client.errors import SteeringQueryError
from constructs_fifo.runtime.entrypoint import build_processor
from constructs_fifo.runtime.settings.config import RuntimeConfig
from constructs_fifo.runtime.steering.pace import PaceLimit
from constructs_fifo.runtime.steering.pace_store import PaceStore, claim_table_key, group_table_key

from .runtime_harness import (
    DLQ_NAME,
    GROUP_TABLE_NAME,
    QUEUE_NAME,
    REGION,
    TABLE_NAME,
    DynamoCallCounter,
    FakeClock,
    Harness,
    body,
    create_tables,
    failed_ids,
    make_record,
    receive_records,
)
from .state_harness import StateHarness, state_body


@pytest.fixture
def aws() -> Iterator[tuple[Any, Any, str, str]]:
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name=REGION)
        sqs = boto3.client("sqs", region_name=REGION)
        create_tables(dynamodb)
        queue_url = sqs.create_queue(QueueName=QUEUE_NAME, Attributes={"FifoQueue": "true"})["QueueUrl"]
        dlq_url = sqs.create_queue(QueueName=DLQ_NAME, Attributes={"FifoQueue": "true"})["QueueUrl"]
        yield dynamodb, sqs, queue_url, dlq_url


def _claim_pace(harness: Harness, limit: PaceLimit) -> PaceStore:
    return PaceStore(TABLE_NAME, harness.dynamodb, limit=limit, item_key=claim_table_key, clock=harness.clock)


def _metric_lines(harness: Harness | StateHarness) -> list[dict[str, Any]]:
    return [line for line in harness.lines() if "JobsPaced" in line]


def test_claim_mode_a_job_over_the_limit_waits_in_its_place_without_an_attempt(aws: Any) -> None:
    # GIVEN a claim-mode queue paced at 1 job a minute per group, and a group of three jobs
    dynamodb, sqs, queue_url, dlq_url = aws
    harness = Harness(dynamodb=dynamodb, sqs=sqs, queue_url=queue_url, dlq_url=dlq_url)
    pace = _claim_pace(harness, PaceLimit(jobs=1, period_seconds=60, burst=1))
    records = [make_record(body(f"j{n}")) for n in range(3)]

    # WHEN the batch is delivered
    response = harness.processor(pace_store=pace).process({"Records": records}, None)

    # THEN the first job ran; the second waits for its token, the third behind it, both reported
    assert harness.ran == ["j0"]
    assert failed_ids(response) == [records[1]["messageId"], records[2]["messageId"]]
    assert [status for _, status in harness.outcomes()] == ["SUCCEEDED", "PACED", "SKIPPED"]
    paced = harness.outcome_lines()[1]
    assert paced["visibilityTimeout"] == 60 and paced["paceKey"] == "ws#1"
    # AND the paced job has no claim: no attempt counted; its metrics say it waited a minute
    assert harness.claim_item("j1") == {}
    assert [(m["JobsPaced"], m["PaceDelaySeconds"]) for m in _metric_lines(harness)] == [(1, 60)]

    # WHEN the records come back a minute later, then another minute later
    harness.clock.advance(60)
    harness.processor(pace_store=pace).process({"Records": records[1:]}, None)
    harness.clock.advance(60)
    harness.processor(pace_store=pace).process({"Records": records[2:]}, None)

    # THEN every job ran once, in order, each on its first attempt, nothing dead-lettered
    assert harness.ran == ["j0", "j1", "j2"]
    assert [harness.claim_item(f"j{n}")["attempts"]["N"] for n in range(3)] == ["1", "1", "1"]
    assert harness.dead_letters() == []


def test_claim_mode_a_key_of_the_body_paces_a_tenant_across_its_groups(aws: Any) -> None:
    # GIVEN a tenant key with a burst of 2, and three groups of one tenant plus one of another
    dynamodb, sqs, queue_url, dlq_url = aws
    harness = Harness(dynamodb=dynamodb, sqs=sqs, queue_url=queue_url, dlq_url=dlq_url)
    pace = _claim_pace(harness, PaceLimit(jobs=2, period_seconds=60, burst=2, key="body:payload.tenant"))
    records = [make_record(body(f"a{n}", tenant="acme"), group=f"g{n}") for n in range(3)]
    records.append(make_record(body("b0", tenant="beta"), group="g9"))

    # WHEN the batch is delivered
    response = harness.processor(pace_store=pace).process({"Records": records}, None)

    # THEN the tenant's burst ran across two groups, its third group waits; the other tenant is not held
    assert harness.ran == ["a0", "a1", "b0"]
    assert failed_ids(response) == [records[2]["messageId"]]
    # AND each tenant's bucket is one item of the claim table
    item = dynamodb.get_item(TableName=TABLE_NAME, Key=claim_table_key("pace#acme"))["Item"]
    assert int(item["tat"]["N"]) == int(harness.clock() * 1000) + 60_000


def test_claim_mode_a_queue_without_pace_reads_and_writes_nothing_for_it(aws: Any) -> None:
    # GIVEN a queue whose settings name no pace, and one paced the same way
    dynamodb, sqs, queue_url, dlq_url = aws
    harness = Harness(dynamodb=dynamodb, sqs=sqs, queue_url=queue_url, dlq_url=dlq_url)
    counter = DynamoCallCounter(dynamodb)

    # WHEN one new job runs on each
    harness.run(make_record(body("plain")))
    plain = Counter(counter.calls)
    counter.reset()
    limit = PaceLimit(jobs=10, period_seconds=60, burst=10).to_env()
    harness.processor(pace=limit).process({"Records": [make_record(body("paced"))]}, None)
    paced = Counter(counter.calls)
    counter.close()

    # THEN the unpaced job made its claim's two calls; the paced one one UpdateItem more (its token),
    # and, as the new process's first take, the read of the limit's override (once a minute per process)
    assert plain == {"PutItem": 1, "UpdateItem": 1}
    assert paced == {"PutItem": 1, "UpdateItem": 2, "GetItem": 1}


def test_claim_mode_a_process_that_saw_the_bucket_empty_paces_without_a_call(aws: Any) -> None:
    # GIVEN a bucket this process just emptied
    dynamodb, sqs, queue_url, dlq_url = aws
    harness = Harness(dynamodb=dynamodb, sqs=sqs, queue_url=queue_url, dlq_url=dlq_url)
    pace = _claim_pace(harness, PaceLimit(jobs=1, period_seconds=60, burst=1))
    assert pace.take("k").granted == 1
    counter = DynamoCallCounter(dynamodb)

    # WHEN it asks again before the next token is due
    taken = pace.take("k")
    counter.close()

    # THEN it is refused from what it saw (the stored bucket can only be emptier), with no call
    assert (taken.granted, counter.calls) == (0, [])


def test_state_mode_a_batch_takes_its_tokens_in_one_write_and_the_rest_wait_in_order(aws: Any) -> None:
    # GIVEN a state-mode group of four jobs paced at a burst of 2 (1 a minute)
    dynamodb, sqs, queue_url, dlq_url = aws
    clock = FakeClock()
    harness = StateHarness(dynamodb, sqs, queue_url, dlq_url, clock=clock)
    limit = PaceLimit(jobs=1, period_seconds=60, burst=2)
    pace = PaceStore(GROUP_TABLE_NAME, dynamodb, limit=limit, item_key=group_table_key, clock=clock)
    records = [make_record(state_body(f"s{n}")) for n in range(4)]
    counter = DynamoCallCounter(dynamodb)

    # WHEN the batch is delivered
    response = harness.processor(pace_store=pace).process({"Records": records}, None)
    calls = Counter(counter.calls)
    counter.close()

    # THEN two are applied; the third waits for its token and the fourth behind it, reported in order
    assert harness.runs == ["s0", "s1"]
    assert failed_ids(response) == [records[2]["messageId"], records[3]["messageId"]]
    statuses = dict(harness.outcomes())
    assert statuses == {"s0": "SUCCEEDED", "s1": "SUCCEEDED", "s2": "PACED", "s3": "SKIPPED"}
    # AND the batch's tokens cost one UpdateItem beside its read and its commit (and the process's
    # first read of the override)
    assert calls == {"BatchGetItem": 1, "UpdateItem": 1, "PutItem": 1, "GetItem": 1}

    # WHEN the rest come back as their tokens come due
    clock.advance(60)
    harness.processor(pace_store=pace).process({"Records": records[2:]}, None)
    clock.advance(60)
    harness.processor(pace_store=pace).process({"Records": records[3:]}, None)

    # THEN each job was applied once, in order, and nothing was dead-lettered
    state = harness.states.load(["ws#1"])["ws#1"].state
    assert state is not None and state["log"] == ["s0", "s1", "s2", "s3"]
    assert harness.runs == ["s0", "s1", "s2", "s3"]


def test_the_runtime_reads_its_pace_from_the_setting() -> None:
    # GIVEN the variable the construct writes
    limit = PaceLimit(jobs=5, period_seconds=60, burst=5, key="attribute:tenant")
    config = RuntimeConfig.from_env(
        {
            "CONSTRUCTS_FIFO_CLAIM_TABLE": "claims",
            "CONSTRUCTS_FIFO_QUEUE_URL": "https://q",
            "CONSTRUCTS_FIFO_DEAD_LETTER_QUEUE_URL": "https://dlq",
            "CONSTRUCTS_FIFO_GROUP_TABLE": "groups",
            "CONSTRUCTS_FIFO_PACE": limit.to_env(),
        }
    )
    # THEN the configuration carries it, and reads it back as the limit
    assert config.pace is not None and PaceLimit.from_env(config.pace) == limit


@pytest.mark.parametrize("mode", ["CLAIM", "STATE"])
def test_the_entry_points_processor_paces_from_the_variable_the_construct_writes(aws: Any, mode: str) -> None:
    # GIVEN the processor the Lambda entry point and the container worker build, from the environment
    dynamodb, sqs, queue_url, dlq_url = aws
    ran: list[str] = []
    limit = PaceLimit(jobs=1, period_seconds=60, burst=1)
    config = RuntimeConfig.from_env(
        {
            "CONSTRUCTS_FIFO_MODE": mode,
            "CONSTRUCTS_FIFO_CLAIM_TABLE": TABLE_NAME,
            "CONSTRUCTS_FIFO_GROUP_TABLE": GROUP_TABLE_NAME,
            "CONSTRUCTS_FIFO_QUEUE_URL": queue_url,
            "CONSTRUCTS_FIFO_DEAD_LETTER_QUEUE_URL": dlq_url,
            "CONSTRUCTS_FIFO_ON_DEAD_JOB": "CONTINUE",
            "CONSTRUCTS_FIFO_PACE": limit.to_env(),
        }
    )

    def handle(job: Any, context_or_state: Any) -> Any:
        ran.append(job.id)
        return {}

    processor = build_processor(config, dynamodb_client=dynamodb, sqs_client=sqs, job_handler=handle)
    # WHEN two jobs of one group come in one batch
    records = [make_record(state_body(f"e{n}")) for n in range(2)]
    response = processor.process({"Records": records}, None)
    # THEN the first ran and the second waits for its token
    assert ran == ["e0"]
    assert failed_ids(response) == [records[1]["messageId"]]


def test_a_pace_set_without_a_deploy_applies_within_a_minute_and_clears(aws: Any) -> None:
    # GIVEN a claim-mode queue paced at 1 a minute, a warm process, and an operator's steering
    dynamodb, sqs, queue_url, dlq_url = aws
    harness = Harness(dynamodb=dynamodb, sqs=sqs, queue_url=queue_url, dlq_url=dlq_url)
    pace = _claim_pace(harness, PaceLimit(jobs=1, period_seconds=60, burst=1))
    steering = JobSteering(claim_table=TABLE_NAME, dynamodb=dynamodb, clock=harness.clock)
    assert pace.take("k").granted == 1 and pace.take("k").granted == 0

    # WHEN the operator raises the limit to 60 a minute, bursts of 5
    steering.set_pace(jobs=60, per_seconds=60, burst=5, by="ops")
    # THEN the process goes on with the construct's limit until its minute is up, then takes the new one
    assert pace.take("k").granted == 0
    harness.clock.advance(60)
    assert pace.take("k", 10).granted == 5
    assert steering.pace() == {
        "jobs": 60,
        "period_seconds": 60,
        "burst": 5,
        "updated_at": int((harness.clock() - 60) * 1000),
        "updated_by": "ops",
    }

    # WHEN the override is cleared, THEN the construct's limit applies again after the minute
    steering.clear_pace()
    harness.clock.advance(61)
    assert steering.pace() is None
    assert pace.take("k", 10).granted == 1


def test_a_pace_out_of_range_is_refused_with_every_problem(aws: Any) -> None:
    # GIVEN a steering of a queue / WHEN an operator sets a pace out of range
    dynamodb = aws[0]
    steering = JobSteering(claim_table=TABLE_NAME, dynamodb=dynamodb)
    with pytest.raises(SteeringQueryError) as refused:
        steering.set_pace(jobs=0, per_seconds=0)
    # THEN every problem is named, and nothing was written
    assert "jobs=0" in str(refused.value) and "period=0" in str(refused.value)
    assert steering.pace() is None


def test_state_mode_a_released_group_takes_its_kept_jobs_tokens_before_it_replays_them(aws: Any) -> None:
    # GIVEN a state-mode group paced at 1 job a minute, held while three jobs arrive (kept, no token)
    dynamodb, sqs, queue_url, dlq_url = aws
    clock = FakeClock()
    harness = StateHarness(dynamodb, sqs, queue_url, dlq_url, clock=clock)
    limit = PaceLimit(jobs=1, period_seconds=60, burst=1)
    harness.options["pace_store"] = PaceStore(
        GROUP_TABLE_NAME, dynamodb, limit=limit, item_key=group_table_key, clock=clock
    )
    steering = JobSteering(
        group_table=GROUP_TABLE_NAME, dynamodb=dynamodb, clock=clock, sqs=sqs, queue_url=queue_url
    )
    steering.hold("ws#1")
    harness.send(("s0", None), ("s1", None), ("s2", None))
    harness.drain()
    assert harness.kept_ids() == ["s0", "s1", "s2"]

    # WHEN the group is released and its wake-up message is delivered
    steering.release("ws#1")
    wake_up = receive_records(sqs, queue_url)
    response = harness.run(*wake_up)

    # THEN the replay applied the one job its token allows; the others stay kept, in order, and the
    # wake-up comes back when the next token is due (found by the chaos suite: the replay took none)
    assert harness.runs == ["s0"]
    assert harness.kept_ids() == ["s1", "s2"]
    assert failed_ids(response) == [wake_up[0]["messageId"]]

    # WHEN the wake-up comes back as the tokens come due
    handle = wake_up[0]["receiptHandle"]
    sqs.change_message_visibility(QueueUrl=queue_url, ReceiptHandle=handle, VisibilityTimeout=0)
    clock.advance(60)
    harness.drain()

    # THEN every job was applied once, in order, a minute apart at least, and nothing was dead-lettered
    assert harness.log() == ["s0", "s1", "s2"] and harness.runs == ["s0", "s1", "s2"]
    assert harness.header() is None and harness.dead_letters() == []
