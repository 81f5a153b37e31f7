"""Lambda's SQS event shapes and how a batch response is read."""

from __future__ import annotations

import hashlib

import pytest

from constructs_fifo.local.event_source.events import build_event, parse_batch_response

ARN = "arn:aws:sqs:eu-west-1:123456789012:jobs.fifo"
MESSAGE = {
    "MessageId": "m-1",
    "ReceiptHandle": "rh-1",
    "Body": '{"jobId":"j-1"}',
    "MD5OfBody": hashlib.md5(b'{"jobId":"j-1"}').hexdigest(),
    "Attributes": {"MessageGroupId": "ws#1", "ApproximateReceiveCount": "2", "SequenceNumber": "1"},
    "MessageAttributes": {
        "trace": {"StringValue": "abc", "DataType": "String"},
        "blob": {"BinaryValue": b"\x00\x01", "DataType": "Binary"},
    },
    "MD5OfMessageAttributes": "00ff",
}


def test_build_event_makes_lambda_sqs_records() -> None:
    # GIVEN a received message WHEN it becomes an event
    event = build_event([MESSAGE], queue_arn=ARN, region="eu-west-1")

    # THEN the record has Lambda's field names and shapes
    [record] = event["Records"]
    assert record == {
        "messageId": "m-1",
        "receiptHandle": "rh-1",
        "body": '{"jobId":"j-1"}',
        "attributes": {"MessageGroupId": "ws#1", "ApproximateReceiveCount": "2", "SequenceNumber": "1"},
        "messageAttributes": {
            "trace": {
                "stringValue": "abc",
                "binaryValue": None,
                "stringListValues": [],
                "binaryListValues": [],
                "dataType": "String",
            },
            "blob": {
                "stringValue": None,
                "binaryValue": "AAE=",
                "stringListValues": [],
                "binaryListValues": [],
                "dataType": "Binary",
            },
        },
        "md5OfBody": MESSAGE["MD5OfBody"],
        "md5OfMessageAttributes": "00ff",
        "eventSource": "aws:sqs",
        "eventSourceARN": ARN,
        "awsRegion": "eu-west-1",
    }


def test_build_event_computes_md5_of_body_when_missing() -> None:
    # GIVEN a message without MD5OfBody WHEN it becomes a record THEN the digest is computed
    message = {k: v for k, v in MESSAGE.items() if k not in {"MD5OfBody", "MD5OfMessageAttributes"}}
    [record] = build_event([message], queue_arn=ARN, region="eu-west-1")["Records"]
    assert record["md5OfBody"] == MESSAGE["MD5OfBody"]
    assert "md5OfMessageAttributes" not in record


IDS = ["m-1", "m-2", "m-3"]


@pytest.mark.parametrize("response", [None, {}, "", {"batchItemFailures": []}, {"batchItemFailures": None}])
def test_empty_responses_mean_complete_success(response: object) -> None:
    # GIVEN a response Lambda reads as success WHEN it is parsed THEN nothing failed
    assert parse_batch_response(response, IDS) == (set(), None)


def test_listed_items_fail() -> None:
    # GIVEN two listed records WHEN parsed THEN exactly those failed
    response = {"batchItemFailures": [{"itemIdentifier": "m-2"}, {"itemIdentifier": "m-3"}]}
    assert parse_batch_response(response, IDS) == ({"m-2", "m-3"}, None)


@pytest.mark.parametrize(
    ("response", "reason"),
    [
        (
            {"batchItemFailures": [{"itemIdentifier": "zz"}]},
            "InvalidResponse: itemIdentifier 'zz' is not a record",
        ),
        (
            {"batchItemFailures": [{"itemIdentifier": ""}]},
            "InvalidResponse: itemIdentifier '' is not a record",
        ),
        ({"batchItemFailures": [{}]}, "InvalidResponse: itemIdentifier None is not a record"),
        ({"batchItemFailures": "m-1"}, "InvalidResponse: batchItemFailures is not a list"),
        ([1, 2], "InvalidResponse: the response is a list, not an object"),
    ],
)
def test_invalid_responses_fail_the_whole_batch(response: object, reason: str) -> None:
    # GIVEN a response Lambda cannot read WHEN parsed THEN every record failed, with the reason
    failed, error = parse_batch_response(response, IDS)
    assert failed == set(IDS)
    assert error is not None
    assert error.startswith(reason)
