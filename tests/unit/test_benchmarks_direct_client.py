"""The client without botocore: the responder's answers and errors as a boto3 client gives them."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from benchmarks.direct_client import DirectClient
from benchmarks.responder import Responder, TableSpec


def _client() -> DirectClient:
    return DirectClient(Responder([TableSpec("claims", "id")]), "dynamodb")


def test_a_refused_condition_raises_the_codes_client_error_carrying_the_item_found() -> None:
    # GIVEN an item, and a put conditioned on its absence that asks for the item found
    client = _client()
    client.put_item(TableName="claims", Item={"id": {"S": "j-1"}, "n": {"N": "1"}})
    # WHEN the put is refused
    with pytest.raises(client.exceptions.ConditionalCheckFailedException) as refused:
        client.put_item(
            TableName="claims",
            Item={"id": {"S": "j-1"}},
            ConditionExpression="attribute_not_exists(#id)",
            ExpressionAttributeNames={"#id": "id"},
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    # THEN it is a ClientError with the code, found on client.exceptions, carrying the item
    assert isinstance(refused.value, ClientError)
    assert refused.value.response["Error"]["Code"] == "ConditionalCheckFailedException"
    assert refused.value.response["Item"] == {"id": {"S": "j-1"}, "n": {"N": "1"}}  # type: ignore[typeddict-item]
    assert client.calls == {"PutItem": 2}


def test_binary_values_go_in_as_bytes_and_come_back_as_bytes_never_shared_with_the_model() -> None:
    # GIVEN an item with a binary and a binary set attribute
    client = _client()
    item = {"id": {"S": "j-1"}, "b": {"B": b"\x00\xff"}, "bs": {"BS": [b"a", b"b"]}}
    client.put_item(TableName="claims", Item=item)
    # WHEN it is read back and the copy read is changed
    got = client.get_item(TableName="claims", Key={"id": {"S": "j-1"}})["Item"]
    got["b"] = {"B": b"changed"}
    # THEN the values are bytes again, and the model kept its own copy
    assert got["bs"] == {"BS": [b"a", b"b"]}
    again = client.get_item(TableName="claims", Key={"id": {"S": "j-1"}})["Item"]
    assert again["b"] == {"B": b"\x00\xff"}


def test_an_operation_outside_the_model_is_an_error_the_responder_records() -> None:
    # GIVEN a client of a responder / WHEN it calls an operation the responder does not model
    responder = Responder([TableSpec("claims", "id")])
    client = DirectClient(responder, "dynamodb")
    with pytest.raises(client.exceptions.UnknownOperationException):
        client.describe_table(TableName="claims")
    # THEN the responder says so (the benchmark refuses such a run)
    assert client.calls == {"DescribeTable": 1}
    assert responder.errors == ["dynamodb DescribeTable: dynamodb DescribeTable is not modelled"]
