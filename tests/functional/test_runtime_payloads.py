"""``large_payloads`` end to end on moto (in-process): the producer puts a large body in the payload
bucket and sends the SQS Extended Client's pointer, the claim processor reads it (runtime/payloads/),
puts a large result there, and ``JobOutcomes`` reads it back; without a bucket both are refused clearly."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import boto3
import pytest

from constructs_fifo.client import InvalidJobError, JobOutcomes, JobProducer, QueueClient
from constructs_fifo.runtime.job import Job
from constructs_fifo.runtime.payloads.pointer import (
    ATTR_RESULT_POINTER,
    ENV_PAYLOAD_BUCKET,
    LEGACY_POINTER_CLASS,
    POINTER_CLASS,
    SIZE_ATTRIBUTE,
    parse_pointer,
)
from constructs_fifo.runtime.payloads.store import PayloadStore

from .runtime_harness import REGION, TABLE_NAME, Harness, receive_records

if TYPE_CHECKING:
    S3Client = Any  # no mypy-boto3-s3 stubs in the dev dependencies

BUCKET = "payloads"
MIB = 1024 * 1024


@pytest.fixture
def s3(aws: None) -> S3Client:
    client = boto3.client("s3", region_name=REGION)
    client.create_bucket(Bucket=BUCKET)
    return client


def _returning(value: Any, seen: list[Job]) -> Any:
    def handle(job: Job, context: object) -> Any:
        seen.append(job)
        return value

    return handle


def test_a_2_mib_payload_and_a_1_mib_result_round_trip_through_the_bucket(
    harness: Harness, s3: S3Client
) -> None:
    # GIVEN a producer and a processor with the payload bucket, and a job function returning 1 MiB
    producer = JobProducer(harness.queue_url, sqs_client=harness.sqs, payload_bucket=BUCKET, s3_client=s3)
    payload = {"diff": "x" * (2 * MIB)}
    seen: list[Job] = []
    result = {"log": "y" * MIB}
    # WHEN a 2 MiB job is sent, received and run
    producer.send("big-1", "apply_patch", payload, group="ws#1")
    records = receive_records(harness.sqs, harness.queue_url)
    store = PayloadStore(BUCKET, s3)
    response = harness.processor(handler=_returning(result, seen), payloads=store).process(
        {"Records": records}, _context()
    )
    # THEN the message was the Extended Client's pointer with the body's size, in the bucket
    [record] = records
    assert parse_pointer(record["body"]) is not None
    assert json.loads(record["body"])[0] == POINTER_CLASS
    assert int(record["messageAttributes"][SIZE_ATTRIBUTE]["stringValue"]) > 2 * MIB
    # AND the job ran once with the whole payload, and succeeded
    assert response == {"batchItemFailures": []}
    assert [(job.id, job.payload) for job in seen] == [("big-1", payload)]
    # AND its claim holds a pointer, not the 1 MiB (the item stays small)
    item = harness.claim_item("big-1")
    assert item["status"]["S"] == "SUCCEEDED" and "result" not in item
    assert parse_pointer(item[ATTR_RESULT_POINTER]["S"]) is not None
    # AND a waiter reads the result back transparently
    outcome = JobOutcomes(claim_table=TABLE_NAME, dynamodb=harness.dynamodb, s3=s3).get("big-1")
    assert outcome.status == "succeeded"
    assert outcome.result == result
    assert outcome.result_not_stored is None


def test_without_a_bucket_a_large_payload_is_refused_with_the_fix(harness: Harness) -> None:
    # GIVEN a producer of a queue without large_payloads
    producer = JobProducer(harness.queue_url, sqs_client=harness.sqs)
    # WHEN a 2 MiB job is sent THEN it is refused, naming the limit and large_payloads=True
    with pytest.raises(InvalidJobError, match=r"1 MiB.*large_payloads=True"):
        producer.send("big-1", "apply_patch", {"diff": "x" * (2 * MIB)}, group="ws#1")
    # AND nothing was sent
    assert receive_records(harness.sqs, harness.queue_url) == []


def test_without_a_bucket_a_large_result_is_not_stored_and_the_outcome_says_why(harness: Harness) -> None:
    # GIVEN a processor without a payload bucket and a job returning 1 MiB
    harness.sqs.send_message(
        QueueUrl=harness.queue_url,
        MessageBody=json.dumps({"jobId": "r-1", "type": "t", "payload": {}}),
        MessageGroupId="g",
        MessageDeduplicationId="r-1",
    )
    records = receive_records(harness.sqs, harness.queue_url)
    # WHEN it runs
    harness.processor(handler=_returning("z" * MIB, []), payloads=PayloadStore(None)).process(
        {"Records": records}, _context()
    )
    # THEN it succeeded and its outcome says the value was too large to store
    outcome = JobOutcomes(claim_table=TABLE_NAME, dynamodb=harness.dynamodb).get("r-1")
    assert outcome.status == "succeeded" and outcome.result is None
    assert outcome.result_not_stored is not None and "bytes of JSON, more than" in outcome.result_not_stored


@pytest.mark.parametrize("pointer_class", [POINTER_CLASS, LEGACY_POINTER_CLASS])
def test_a_pointer_the_extended_client_wrote_is_read(
    harness: Harness, s3: S3Client, pointer_class: str
) -> None:
    # GIVEN a body put and sent as amazon-sqs-extended-client's _store_message_in_s3 does it: the object
    # keyed by a uuid, the body json.dumps([class, {"s3BucketName", "s3Key"}]) with default separators,
    # and the ExtendedPayloadSize attribute
    envelope = json.dumps({"jobId": "ext-1", "type": "summarize", "payload": {"text": "w" * 300_000}})
    key = "0b9f2d7e-4a6c-4f7b-9a53-0d6f2b1f7c11"
    s3.put_object(Body=envelope.encode("utf-8"), Bucket=BUCKET, Key=key)
    harness.sqs.send_message(
        QueueUrl=harness.queue_url,
        MessageBody=json.dumps([pointer_class, {"s3BucketName": BUCKET, "s3Key": key}]),
        MessageGroupId="g",
        MessageDeduplicationId="ext-1",
        MessageAttributes={"ExtendedPayloadSize": {"DataType": "Number", "StringValue": str(len(envelope))}},
    )
    seen: list[Job] = []
    # WHEN the processor runs it (its own store names no bucket: the pointer names one)
    harness.processor(handler=_returning(None, seen), payloads=PayloadStore(None, s3)).process(
        {"Records": receive_records(harness.sqs, harness.queue_url)}, _context()
    )
    # THEN the job is the envelope the object holds
    assert [(job.id, job.type, len(job.payload["text"])) for job in seen] == [("ext-1", "summarize", 300_000)]


def test_a_pointer_to_a_missing_object_is_a_permanent_failure_naming_it(
    harness: Harness, s3: S3Client
) -> None:
    # GIVEN a pointer to an object that is not there (expired, deleted)
    harness.sqs.send_message(
        QueueUrl=harness.queue_url,
        MessageBody=json.dumps([POINTER_CLASS, {"s3BucketName": BUCKET, "s3Key": "gone"}]),
        MessageGroupId="g",
        MessageDeduplicationId="gone-1",
    )
    seen: list[Job] = []
    # WHEN the processor meets it
    response = harness.processor(handler=_returning(None, seen), payloads=PayloadStore(BUCKET, s3)).process(
        {"Records": receive_records(harness.sqs, harness.queue_url)}, _context()
    )
    # THEN nothing ran, the record is not retried, and it went to the dead-letter queue with the reason
    assert seen == []
    assert response == {"batchItemFailures": []}
    [dead] = harness.dead_letters()
    assert parse_pointer(dead["Body"]) == (BUCKET, "gone")
    lines = [line for line in harness.lines() if "s3://payloads/gone" in json.dumps(line)]
    assert lines, harness.lines()


def _context() -> Any:
    from .runtime_harness import FakeContext

    return FakeContext()


def test_a_queue_without_pointers_makes_no_s3_client(harness: Harness) -> None:
    # GIVEN a store whose S3 client cannot be made, and plain envelopes with small results
    def no_client() -> Any:
        raise AssertionError("an S3 client was made for a queue without pointers")

    for index in range(3):
        harness.sqs.send_message(
            QueueUrl=harness.queue_url,
            MessageBody=json.dumps({"jobId": f"s-{index}", "type": "t", "payload": {}}),
            MessageGroupId="g",
            MessageDeduplicationId=f"s-{index}",
        )
    store = PayloadStore(BUCKET, make_s3=no_client)
    # WHEN they run THEN all succeed and no client was made (figure 1: no S3 call per job)
    response = harness.processor(handler=_returning({"ok": True}, []), payloads=store).process(
        {"Records": receive_records(harness.sqs, harness.queue_url)}, _context()
    )
    assert response == {"batchItemFailures": []}
    assert [status for _, status in harness.outcomes()] == ["SUCCEEDED"] * 3


def test_a_queue_client_from_the_environment_sends_through_its_bucket(harness: Harness, s3: S3Client) -> None:
    # GIVEN the variables grant_client sets on a client of a queue with large_payloads
    environ = {"CONSTRUCTS_FIFO_QUEUE_URL": harness.queue_url, ENV_PAYLOAD_BUCKET: BUCKET}
    client = QueueClient.from_environment(environ=environ, sqs=harness.sqs, s3=s3)
    # WHEN it sends a 2 MiB job
    client.producer.send("big-2", "apply_patch", {"diff": "x" * (2 * MIB)}, group="ws#2")
    # THEN the message is a pointer into that bucket
    [record] = receive_records(harness.sqs, harness.queue_url)
    assert client.address.payload_bucket == BUCKET
    pointer = parse_pointer(record["body"])
    assert pointer is not None and pointer[0] == BUCKET
