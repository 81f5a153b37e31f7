"""Pure parts of the runner: Lambda SQS records, reading batch responses, concurrency."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path
from typing import Any

import pytest

from constructs_fifo.local.runner import (
    DEFAULT_CONCURRENCY,
    EventSourceRunner,
    FunctionSettings,
    MappingSettings,
    QueueSettings,
    build_event,
    fetch_function_code,
    parse_batch_response,
)

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


def _runner(max_concurrency: int | None, reserved: int | None, tmp_path: Path) -> EventSourceRunner:
    function = FunctionSettings("fn", "arn:fn", "h.handle", 3, 128, {}, reserved, tmp_path)
    mapping = MappingSettings("u", ARN, 10, max_concurrency, True, True)
    queue = QueueSettings("http://q/jobs.fifo", ARN, 18, 5, None)
    return EventSourceRunner(
        function,
        mapping,
        queue,
        sqs_client=None,  # type: ignore[arg-type]
        region="eu-west-1",
        log_path=tmp_path / "log",
    )


@pytest.mark.parametrize(
    ("max_concurrency", "reserved", "expected"),
    [(None, None, DEFAULT_CONCURRENCY), (3, None, 3), (None, 4, 4), (3, 4, 3), (8, 2, 2)],
)
def test_concurrency_is_the_smaller_deployed_limit(
    max_concurrency: int | None, reserved: int | None, expected: int, tmp_path: Path
) -> None:
    # GIVEN a mapping and function limit WHEN a runner is built THEN it runs that many slots
    runner = _runner(max_concurrency, reserved, tmp_path)
    try:
        assert runner.concurrency == expected
    finally:
        runner.close()


def test_worker_environment_is_the_functions_not_this_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a variable of this process and a function environment
    monkeypatch.setenv("SOMETHING_PRIVATE", "1")
    function = FunctionSettings("fn", "arn:fn", "h.handle", 3, 512, {"TABLE": "claims"}, None, tmp_path)
    mapping = MappingSettings("u", ARN, 10, None, True, True)
    queue = QueueSettings("http://q/jobs.fifo", ARN, 18, 5, None)
    runner = EventSourceRunner(
        function,
        mapping,
        queue,
        sqs_client=None,  # type: ignore[arg-type]
        region="eu-west-1",
        endpoint_url="http://localhost:1",
        log_path=tmp_path / "log",
    )

    # WHEN the worker environment is built
    env = runner.worker_environment()
    runner.close()

    # THEN it has the function's variables, Lambda's, the endpoint and fake credentials; not ours
    assert env["TABLE"] == "claims"
    assert env["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] == "512"
    assert env["AWS_ENDPOINT_URL"] == "http://localhost:1"
    assert env["AWS_REGION"] == "eu-west-1"
    assert env["AWS_ACCESS_KEY_ID"] == "testing"
    assert "SOMETHING_PRIVATE" not in env


class _NoGetFunction:
    """A Lambda client that fails the test if GetFunction is called."""

    def get_function(self, **_: object) -> dict[str, Any]:
        raise AssertionError("GetFunction was called although the location was given")


class _Buckets:
    """An S3 client holding one asset zip in a CDK bootstrap bucket (after another bucket)."""

    def __init__(self, archive: bytes) -> None:
        self.archive = archive
        self.asked: list[str] = []

    def list_buckets(self) -> dict[str, Any]:
        return {"Buckets": [{"Name": "aaa-other"}, {"Name": "cdk-hnb659fds-assets"}]}

    def get_object(self, *, Bucket: str, Key: str) -> dict[str, Any]:  # noqa: N803 - boto3's names
        self.asked.append(f"{Bucket}/{Key}")
        return {"Body": io.BytesIO(self.archive)}


def test_fetch_function_code_with_a_known_location_reads_the_asset_without_get_function(
    tmp_path: Path,
) -> None:
    # GIVEN the function's code location (from a GetFunction response already read) and its asset in S3
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("handler.py", "def handle(event, context):\n    return None\n")
    s3 = _Buckets(buffer.getvalue())

    # WHEN the code is fetched from an emulator endpoint with that location
    code = fetch_function_code(
        "fn",
        tmp_path / "code",
        lambda_client=_NoGetFunction(),  # type: ignore[arg-type]
        s3_client=s3,
        endpoint_url="http://localhost:1",
        location="https://awslambda-us-east-1-tasks.s3.us-east-1.amazonaws.com/abc123.zip",
    )

    # THEN the CDK bucket is asked first for the key and the code is extracted; GetFunction was not called
    assert s3.asked == ["cdk-hnb659fds-assets/abc123.zip"]
    assert (code / "handler.py").read_text().startswith("def handle")
