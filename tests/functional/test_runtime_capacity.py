"""Functional tests of the capacity tally: the flag on every DynamoDB call, the units summed per batch."""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime import entrypoint
from constructs_fifo.runtime.capacity import CapacityTally, consumed_units
from constructs_fifo.runtime.constants import JobMode
from constructs_fifo.runtime.observability import JobLogger
from constructs_fifo.runtime.settings.config import RuntimeConfig

from .runtime_harness import GROUP_TABLE_NAME, TABLE_NAME, FakeContext
from .state_harness import job_record

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient


def _answers(client: Any) -> list[dict[str, Any]]:
    """Every parsed DynamoDB answer of ``client`` from now on (a spy next to the tally)."""
    seen: list[dict[str, Any]] = []
    client.meta.events.register("after-call.dynamodb", lambda parsed=None, **_: seen.append(parsed or {}))
    return seen


def test_every_call_asks_for_its_units_and_the_tally_sums_what_dynamodb_answered(
    dynamodb: DynamoDBClient,
) -> None:
    # GIVEN a tally attached (twice, which changes nothing) to a client nobody asked for units on
    tally = CapacityTally()
    tally.attach(dynamodb)
    tally.attach(dynamodb)
    answers = _answers(dynamodb)
    # WHEN the client writes, reads a batch, and makes a call that cannot report units
    dynamodb.put_item(TableName=TABLE_NAME, Item={"id": {"S": "j1"}})
    dynamodb.batch_get_item(RequestItems={TABLE_NAME: {"Keys": [{"id": {"S": "j1"}}, {"id": {"S": "j2"}}]}})
    dynamodb.describe_table(TableName=TABLE_NAME)
    # THEN the calls that take the flag were answered with their units (the flag was sent), and the
    # tally holds their sum once; the next take starts from zero
    assert "ConsumedCapacity" in answers[0] and "ConsumedCapacity" in answers[1]
    expected = sum(consumed_units(answer) for answer in answers)
    assert expected > 0
    assert tally.take() == expected
    assert tally.take() == 0.0


def test_a_callers_own_choice_of_the_flag_is_kept(dynamodb: DynamoDBClient) -> None:
    # GIVEN a tally attached to the client
    tally = CapacityTally()
    tally.attach(dynamodb)
    # WHEN a caller says it wants no units
    answer = dynamodb.get_item(TableName=TABLE_NAME, Key={"id": {"S": "j1"}}, ReturnConsumedCapacity="NONE")
    # THEN DynamoDB reports none and the tally adds none
    assert "ConsumedCapacity" not in answer
    assert tally.take() == 0.0


def test_a_state_mode_batch_line_reports_the_units_its_calls_consumed(dynamodb: DynamoDBClient) -> None:
    # GIVEN the entry point's state-mode processor on the client, a spy on DynamoDB's answers
    out = io.StringIO()
    processor = entrypoint.build_processor(
        RuntimeConfig(
            claim_table="", mode=JobMode.STATE, group_table=GROUP_TABLE_NAME, queue_url="https://q/jobs.fifo"
        ),
        dynamodb_client=dynamodb,
        sqs_client=object(),
        job_handler=lambda job, state: {"n": (state or {}).get("n", 0) + 1},
        logger=JobLogger("T", stream=out),
    )
    answers = _answers(dynamodb)
    # WHEN one batch of two groups runs
    processor.process({"Records": [job_record("a"), job_record("b", group="ws#2")]}, FakeContext())
    # THEN its last line is the batch's, whose CapacityUnitsConsumed metric is what DynamoDB reported
    batch = json.loads(out.getvalue().splitlines()[-1])
    assert (batch["event"], batch["records"]) == ("batch", 2)
    metrics = batch["_aws"]["CloudWatchMetrics"][0]["Metrics"]
    assert {"Name": "CapacityUnitsConsumed", "Unit": "Count"} in metrics
    assert batch["CapacityUnitsConsumed"] == sum(consumed_units(answer) for answer in answers) > 0
