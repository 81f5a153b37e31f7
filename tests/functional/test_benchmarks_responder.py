"""The benchmark's in-memory DynamoDB and SQS responder, through real boto3 clients."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from benchmarks.responder import Responder, TableSpec

REGION = "us-east-1"


@pytest.fixture
def clients(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, Any, Responder, list[float]]]:
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    slept: list[float] = []
    dynamodb = boto3.client("dynamodb", region_name=REGION)
    sqs = boto3.client("sqs", region_name=REGION)
    responder = Responder(
        [TableSpec("claims", "id"), TableSpec("events", "group", "seq")],
        delay_seconds=0.005,
        sleep=slept.append,
    )
    responder.attach(dynamodb, sqs)
    yield dynamodb, sqs, responder, slept
    responder.detach()


def test_a_conditional_put_succeeds_on_an_absent_item_and_returns_the_present_one_when_refused(
    clients: tuple[Any, Any, Responder, list[float]],
) -> None:
    dynamodb, _, responder, slept = clients
    # GIVEN a claim written under attribute_not_exists
    item = {"id": {"S": "job-1"}, "status": {"S": "SUCCEEDED"}}
    dynamodb.put_item(TableName="claims", Item=item, ConditionExpression="attribute_not_exists(id)")
    # WHEN the same put comes again, asking for ALL_OLD
    with pytest.raises(dynamodb.exceptions.ConditionalCheckFailedException) as refused:
        dynamodb.put_item(
            TableName="claims",
            Item={"id": {"S": "job-1"}, "status": {"S": "IN_FLIGHT"}},
            ConditionExpression="attribute_not_exists(id)",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    # THEN it is refused with the stored item, which is unchanged; each call slept the delay once
    assert refused.value.response["Item"] == item
    assert responder.items("claims") == [item]
    assert slept == [0.005, 0.005]
    assert responder.calls["dynamodb.PutItem"] == 2


def test_a_version_conditioned_update_of_a_present_item_succeeds_and_a_stale_one_is_refused(
    clients: tuple[Any, Any, Responder, list[float]],
) -> None:
    dynamodb, _, _, _ = clients
    # GIVEN a state item at version 1
    dynamodb.put_item(TableName="claims", Item={"id": {"S": "ws#1"}, "version": {"N": "1"}})
    update = {
        "TableName": "claims",
        "Key": {"id": {"S": "ws#1"}},
        "UpdateExpression": "SET version = version + :one, #s = :s REMOVE gone",
        "ConditionExpression": "version = :expected",
        "ExpressionAttributeNames": {"#s": "state"},
    }
    # WHEN it is updated expecting version 1, then again expecting version 1 (stale)
    fresh = dynamodb.update_item(
        **update,
        ExpressionAttributeValues={":one": {"N": "1"}, ":s": {"S": "x"}, ":expected": {"N": "1"}},
        ReturnValues="ALL_NEW",
    )
    with pytest.raises(dynamodb.exceptions.ConditionalCheckFailedException):
        dynamodb.update_item(
            **update,
            ExpressionAttributeValues={":one": {"N": "1"}, ":s": {"S": "y"}, ":expected": {"N": "1"}},
        )
    # THEN the first applied, the stale one did not
    assert fresh["Attributes"] == {"id": {"S": "ws#1"}, "version": {"N": "2"}, "state": {"S": "x"}}


def test_a_transaction_with_one_failing_condition_writes_nothing_and_says_which_failed(
    clients: tuple[Any, Any, Responder, list[float]],
) -> None:
    dynamodb, _, responder, _ = clients
    # GIVEN an existing item
    dynamodb.put_item(TableName="claims", Item={"id": {"S": "a"}})
    # WHEN a transaction puts a new item and puts "a" only if absent
    with pytest.raises(dynamodb.exceptions.TransactionCanceledException) as cancelled:
        dynamodb.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": "claims", "Item": {"id": {"S": "b"}}}},
                {
                    "Put": {
                        "TableName": "claims",
                        "Item": {"id": {"S": "a"}},
                        "ConditionExpression": "attribute_not_exists(id)",
                    }
                },
            ]
        )
    # THEN nothing was written and the reasons name the second entry
    assert [reason["Code"] for reason in cancelled.value.response["CancellationReasons"]] == [
        "None",
        "ConditionalCheckFailed",
    ]
    assert responder.items("claims") == [{"id": {"S": "a"}}]


def test_reads_batches_and_query_answer_from_the_same_items(
    clients: tuple[Any, Any, Responder, list[float]],
) -> None:
    dynamodb, _, _, _ = clients
    # GIVEN three events of one group written in one batch, and one deleted again
    dynamodb.batch_write_item(
        RequestItems={
            "events": [
                {"PutRequest": {"Item": {"group": {"S": "g"}, "seq": {"S": s}}}} for s in ("3", "1", "2")
            ]
        }
    )
    dynamodb.delete_item(TableName="events", Key={"group": {"S": "g"}, "seq": {"S": "2"}})
    # WHEN they are read back by key, in a batch and by query
    got = dynamodb.get_item(TableName="events", Key={"group": {"S": "g"}, "seq": {"S": "1"}})
    batch = dynamodb.batch_get_item(
        RequestItems={"events": {"Keys": [{"group": {"S": "g"}, "seq": {"S": s}} for s in ("1", "2")]}}
    )
    query = dynamodb.query(
        TableName="events",
        KeyConditionExpression="#g = :g AND seq >= :low",
        ExpressionAttributeNames={"#g": "group"},
        ExpressionAttributeValues={":g": {"S": "g"}, ":low": {"S": "1"}},
        ScanIndexForward=False,
    )
    # THEN each sees the two remaining items, the query newest first
    assert got["Item"]["seq"] == {"S": "1"}
    assert [item["seq"]["S"] for item in batch["Responses"]["events"]] == ["1"]
    assert [item["seq"]["S"] for item in query["Items"]] == ["3", "1"]


def test_sqs_calls_succeed_at_once_without_the_dynamodb_delay(
    clients: tuple[Any, Any, Responder, list[float]],
) -> None:
    _, sqs, responder, slept = clients
    url = "https://sqs.us-east-1.amazonaws.com/123456789012/jobs.fifo"
    # WHEN the runtime's visibility change and a send are made
    changed = sqs.change_message_visibility_batch(
        QueueUrl=url, Entries=[{"Id": "0", "ReceiptHandle": "rh", "VisibilityTimeout": 4}]
    )
    sent = sqs.send_message(QueueUrl=url, MessageBody="{}", MessageGroupId="g", MessageDeduplicationId="d")
    # THEN both succeed, and nothing slept (the delay is per DynamoDB call)
    assert changed["Successful"] == [{"Id": "0"}] and changed["Failed"] == []
    assert sent["MessageId"]
    assert slept == []
    assert responder.errors == []


def test_a_request_outside_the_model_is_answered_with_an_error_and_recorded(
    clients: tuple[Any, Any, Responder, list[float]],
) -> None:
    dynamodb, _, responder, _ = clients
    # WHEN a scan and a condition with an unmodelled function are sent
    with pytest.raises(dynamodb.exceptions.ClientError):
        dynamodb.scan(TableName="claims")
    with pytest.raises(dynamodb.exceptions.ClientError):
        dynamodb.put_item(
            TableName="claims", Item={"id": {"S": "x"}}, ConditionExpression="contains(id, :p)",
            ExpressionAttributeValues={":p": {"S": "x"}},
        )  # fmt: skip
    # THEN both are recorded, so the benchmark can refuse the run
    assert len(responder.errors) == 2
    assert "Scan is not modelled" in responder.errors[0]
    assert "contains" in responder.errors[1]
    # AND begins_with, which a group's kept records are read with, is modelled
    dynamodb.put_item(
        TableName="claims", Item={"id": {"S": "kept#1"}}, ConditionExpression="NOT begins_with(id, :p)",
        ExpressionAttributeValues={":p": {"S": "kept#"}},
    )  # fmt: skip
    assert len(responder.errors) == 2
