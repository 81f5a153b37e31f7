"""The producer client against moto's SQS (in-process) and botocore's Stubber."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws

from constructs_fifo.client import (
    BatchSendError,
    CredentialsNotFoundError,
    EndpointNotReachableError,
    InvalidJobError,
    JobMessage,
    JobProducer,
    RegionNotSetError,
    SendFailedError,
)
from constructs_fifo.client.producer import FIRST_SEQ, message_attributes
from constructs_fifo.runtime.settings.spec import SETTINGS
from constructs_fifo.runtime.state.core.records import BatchSettings

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient

REGION = "us-east-1"


@pytest.fixture
def sqs() -> Iterator[SQSClient]:
    with mock_aws():
        yield boto3.client("sqs", region_name=REGION)


@pytest.fixture
def queue_url(sqs: SQSClient) -> str:
    return sqs.create_queue(QueueName="jobs.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]


def _receive_all(sqs: SQSClient, queue_url: str) -> list[dict[str, Any]]:
    """Receive and delete every message, in receive order."""
    messages: list[dict[str, Any]] = []
    while True:
        got = sqs.receive_message(
            QueueUrl=queue_url, MaxNumberOfMessages=10, MessageSystemAttributeNames=["All"]
        ).get("Messages", [])
        if not got:
            return messages
        for m in got:
            messages.append(dict(m))
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=m["ReceiptHandle"])


def _count_calls(sqs: SQSClient, operation: str) -> list[int]:
    """Record the number of entries of every call of ``operation``."""
    sizes: list[int] = []

    def hook(params: dict[str, Any], **_: Any) -> None:
        sizes.append(len(params.get("Entries", [None])))

    sqs.meta.events.register(f"provide-client-params.sqs.{operation}", hook)
    return sizes


def test_send_writes_the_envelope_group_and_job_id_as_deduplication_id(
    sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN a producer on a FIFO queue
    producer = JobProducer(queue_url, sqs_client=sqs)

    # WHEN one job is sent without a deduplication id
    result = producer.send("job-1", "apply_patch", {"diff": "+x"}, group="ws#1")

    # THEN the message carries the runtime's envelope, the group, and the job id as deduplication id
    [message] = _receive_all(sqs, queue_url)
    assert json.loads(message["Body"]) == {"jobId": "job-1", "type": "apply_patch", "payload": {"diff": "+x"}}
    assert message["Attributes"]["MessageGroupId"] == "ws#1"
    assert message["Attributes"]["MessageDeduplicationId"] == "job-1"
    assert result.job_id == "job-1"
    assert result.message_id == message["MessageId"]
    assert result.sequence_number


def test_send_uses_an_explicit_deduplication_id(sqs: SQSClient, queue_url: str) -> None:
    # GIVEN a producer
    producer = JobProducer(queue_url, sqs_client=sqs)

    # WHEN a job is sent with its own deduplication id
    producer.send("job-1", "run_tests", None, group="ws#1", deduplication_id="job-1@v2")

    # THEN that id is used
    [message] = _receive_all(sqs, queue_url)
    assert message["Attributes"]["MessageDeduplicationId"] == "job-1@v2"


def test_send_batch_chunks_by_ten_and_keeps_order(sqs: SQSClient, queue_url: str) -> None:
    # GIVEN 25 jobs of one group
    producer = JobProducer(queue_url, sqs_client=sqs)
    calls = _count_calls(sqs, "SendMessageBatch")
    jobs = [JobMessage(f"job-{i:02d}", "run_tests", {"i": i}, group="ws#1") for i in range(25)]

    # WHEN they are sent as a batch
    results = producer.send_batch(jobs)

    # THEN three SendMessageBatch calls of 10, 10 and 5 sent them, results and queue in job order
    assert calls == [10, 10, 5]
    assert [r.job_id for r in results] == [j.job_id for j in jobs]
    bodies = [json.loads(m["Body"])["jobId"] for m in _receive_all(sqs, queue_url)]
    assert bodies == [j.job_id for j in jobs]


def test_send_batch_chunks_by_total_size(sqs: SQSClient, queue_url: str) -> None:
    # GIVEN three jobs of 400 KiB each: two fit in one 1 MiB request, three do not
    producer = JobProducer(queue_url, sqs_client=sqs)
    calls = _count_calls(sqs, "SendMessageBatch")
    jobs = [JobMessage(f"big-{i}", "apply_patch", {"diff": "x" * 400 * 1024}, group="ws#1") for i in range(3)]

    # WHEN they are sent
    producer.send_batch(jobs)

    # THEN two requests carried them
    assert calls == [2, 1]


@pytest.mark.parametrize(
    ("job", "message"),
    [
        (
            JobMessage("j-1", "run_tests", {}, group="ws 1"),
            "job 'j-1': group 'ws 1' contains ' '; SQS allows 1 to 128 characters, each a letter, a digit or "
            "one of !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~. Fix: replace those characters (spaces and non-ASCII "
            "letters are not allowed).",
        ),
        (
            JobMessage("j-1", "run_tests", {}, group="g" * 129),
            "job 'j-1': group 'gggggggggggggggggggggggggggggggggggggggg'... is 129 characters long; "
            "SQS allows 1 to 128 characters, each a letter, a digit or one of "
            "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~. "
            "Fix: shorten it, e.g. to a hash of the value.",
        ),
        (
            JobMessage("j-1", "run_tests", {}, group=""),
            "job 'j-1': group '' is not allowed: it must be a non-empty string of 1 to 128 characters, "
            "each a letter, a digit or one of !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~. "
            "Fix: pass a non-empty group.",
        ),
        (
            JobMessage("j-é", "run_tests", {}, group="ws#1"),
            "job_id 'j-é' contains 'é'; SQS allows 1 to 128 characters, each a letter, "
            "a digit or one of !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ for a job id, since it is the message's "
            "deduplication id unless deduplication_id is passed. Fix: replace those characters (spaces and "
            "non-ASCII letters are not allowed).",
        ),
        (
            JobMessage("j" * 200, "run_tests", {}, group="ws#1"),
            "job_id 'jjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjj'... is 200 characters long; SQS allows 1 to "
            "128 characters, each a letter, a digit or one of !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ for a job "
            "id, since it is the message's deduplication id unless deduplication_id is passed. Fix: shorten "
            "it, e.g. to a hash of the value.",
        ),
        (
            JobMessage("j-1", "run_tests", {}, group="ws#1", deduplication_id="d" * 129),
            "job 'j-1': deduplication_id 'dddddddddddddddddddddddddddddddddddddddd'... is 129 characters "
            "long; SQS allows 1 to 128 characters, each a letter, a digit or one of "
            "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~. Fix: shorten it, e.g. to a hash of the value.",
        ),
        (
            JobMessage("", "run_tests", {}, group="ws#1"),
            "job_id '' is not allowed: it must be a non-empty string. "
            "Fix: give every job a unique, stable id.",
        ),
        (
            JobMessage("j-1", "", {}, group="ws#1"),
            "job 'j-1': job_type '' is not allowed: it must be a non-empty string. Fix: name what the job "
            "does, e.g. 'apply_patch'.",
        ),
        (
            JobMessage("j-1", "apply_patch", {"diff": "x" * (1024 * 1024)}, group="ws#1"),
            "job 'j-1': body and attributes are 1048687 bytes; SQS allows at most 1048576 bytes (1 MiB), "
            "and this producer has no payload bucket. Fix: build the queue with large_payloads=True and "
            "send with its bucket (QueueClient.from_stack or from_environment reads it; "
            "JobProducer(..., payload_bucket=...)), or store the large part elsewhere and send a reference "
            "to it in the payload.",
        ),
        (
            JobMessage("j-1", "apply_patch", {"when": object()}, group="ws#1"),
            "job 'j-1': payload is not JSON-serialisable (Object of type object is not JSON serializable); "
            "the body must be JSON. Fix: pass only dicts, lists, strings, numbers, booleans and None "
            "(finite numbers).",
        ),
    ],
)
def test_invalid_jobs_are_refused_before_anything_is_sent(
    sqs: SQSClient, queue_url: str, job: JobMessage, message: str
) -> None:
    # GIVEN a batch whose second job breaks a rule
    producer = JobProducer(queue_url, sqs_client=sqs)
    jobs = [JobMessage("ok-1", "run_tests", {}, group="ws#1"), job]

    # WHEN it is sent
    with pytest.raises(InvalidJobError) as caught:
        producer.send_batch(jobs)

    # THEN the error names the value, the rule and the fix, and nothing was sent
    assert str(caught.value) == message
    assert _receive_all(sqs, queue_url) == []


def test_a_message_of_exactly_one_mebibyte_is_accepted(sqs: SQSClient, queue_url: str) -> None:
    # GIVEN a job whose body and attributes are exactly 1 MiB (attributes count towards the size)
    producer = JobProducer(queue_url, sqs_client=sqs)
    attributes = message_attributes(JobMessage("j-1", "t", "", "ws#1"))
    attribute_bytes = sum(len(k) + len(v["DataType"]) + len(v["StringValue"]) for k, v in attributes.items())
    overhead = len('{"jobId":"j-1","type":"t","payload":""}') + attribute_bytes
    job = JobMessage("j-1", "t", "x" * (1024 * 1024 - overhead), group="ws#1")

    # WHEN it is sent THEN SQS (and the validation) accept it
    [result] = producer.send_batch([job])
    assert result.job_id == "j-1"


def test_a_non_fifo_queue_url_is_refused() -> None:
    # GIVEN a standard queue URL WHEN a producer is built THEN it is refused with the fix
    with pytest.raises(InvalidJobError, match=r"is not a FIFO queue: its name must end in '\.fifo'"):
        JobProducer(
            "https://sqs.us-east-1.amazonaws.com/123456789012/jobs", sqs_client=boto3.client("sqs", REGION)
        )


def _stubbed(queue_url: str) -> tuple[JobProducer, Stubber, list[float]]:
    client = boto3.client("sqs", region_name=REGION, aws_access_key_id="x", aws_secret_access_key="x")
    sleeps: list[float] = []
    return JobProducer(queue_url, sqs_client=client, sleep=sleeps.append), Stubber(client), sleeps


URL = "https://sqs.us-east-1.amazonaws.com/123456789012/jobs.fifo"


def _entry(i: int, group: str = "ws#1") -> dict[str, Any]:
    body = json.dumps({"jobId": f"j-{i}", "type": "t", "payload": {}}, separators=(",", ":"))
    return {
        "Id": str(i),
        "MessageBody": body,
        "MessageGroupId": group,
        "MessageDeduplicationId": f"j-{i}",
        "MessageAttributes": message_attributes(JobMessage(f"j-{i}", "t", {}, group)),
    }


def test_send_batch_retries_only_the_entries_that_failed_retryably() -> None:
    # GIVEN SQS throttles entry 1 of 3 once
    producer, stub, sleeps = _stubbed(URL)
    stub.add_response(
        "send_message_batch",
        {
            "Successful": [
                {"Id": "0", "MessageId": "m0", "MD5OfMessageBody": "x", "SequenceNumber": "1"},
                {"Id": "2", "MessageId": "m2", "MD5OfMessageBody": "x", "SequenceNumber": "3"},
            ],
            "Failed": [{"Id": "1", "SenderFault": False, "Code": "InternalError", "Message": "try again"}],
        },
        {"QueueUrl": URL, "Entries": [_entry(0), _entry(1), _entry(2)]},
    )
    stub.add_response(
        "send_message_batch",
        {
            "Successful": [{"Id": "1", "MessageId": "m1", "MD5OfMessageBody": "x", "SequenceNumber": "4"}],
            "Failed": [],
        },
        {"QueueUrl": URL, "Entries": [_entry(1)]},
    )

    # WHEN the batch is sent
    with stub:
        results = producer.send_batch([JobMessage(f"j-{i}", "t", {}, group="ws#1") for i in range(3)])

    # THEN only entry 1 was sent again, after one backoff, and every job has its result in order
    stub.assert_no_pending_responses()
    assert [(r.job_id, r.message_id) for r in results] == [("j-0", "m0"), ("j-1", "m1"), ("j-2", "m2")]
    assert sleeps == [0.1]


def test_send_batch_raises_naming_entries_that_failed_for_good() -> None:
    # GIVEN SQS refuses entry 0 with a sender fault, in the first of two chunks
    producer, stub, _ = _stubbed(URL)
    stub.add_response(
        "send_message_batch",
        {
            "Successful": [
                {"Id": str(i), "MessageId": f"m{i}", "MD5OfMessageBody": "x"} for i in range(1, 10)
            ],
            "Failed": [{"Id": "0", "SenderFault": True, "Code": "InvalidParameterValue", "Message": "bad"}],
        },
    )
    jobs = [JobMessage(f"j-{i}", "t", {}, group="ws#1") for i in range(12)]

    # WHEN the batch is sent
    with stub, pytest.raises(BatchSendError) as caught:
        producer.send_batch(jobs)

    # THEN the error lists the refused job and the jobs not attempted after it, and what was sent
    error = caught.value
    assert [(f.job_id, f.code) for f in error.failed] == [
        ("j-0", "InvalidParameterValue"),
        ("j-10", "NotAttempted"),
        ("j-11", "NotAttempted"),
    ]
    assert [r.job_id for r in error.succeeded] == [f"j-{i}" for i in range(1, 10)]
    assert str(error).startswith("3 job(s) were not sent: 'j-0': InvalidParameterValue: bad;")


def test_send_batch_gives_up_after_max_attempts() -> None:
    # GIVEN SQS keeps failing one entry with a retryable error
    producer, stub, sleeps = _stubbed(URL)
    failing = {
        "Successful": [],
        "Failed": [{"Id": "0", "SenderFault": False, "Code": "ServiceUnavailable", "Message": "down"}],
    }
    for _ in range(5):
        stub.add_response("send_message_batch", failing)

    # WHEN the job is sent
    with stub, pytest.raises(BatchSendError) as caught:
        producer.send_batch([JobMessage("j-0", "t", {}, group="ws#1")])

    # THEN it was tried 5 times with doubling backoffs and then reported, not dropped
    assert sleeps == [0.1, 0.2, 0.4, 0.8]
    assert [(f.job_id, f.code) for f in caught.value.failed] == [("j-0", "ServiceUnavailable")]


def test_send_wraps_client_errors() -> None:
    # GIVEN SQS refuses the call
    producer, stub, _ = _stubbed(URL)
    stub.add_client_error(
        "send_message", "AWS.SimpleQueueService.NonExistentQueue", "The specified queue does not exist."
    )

    # WHEN a job is sent THEN the error names the job and the queue and chains the cause
    with stub, pytest.raises(SendFailedError, match=r"job 'j-1' was not sent to https://") as caught:
        producer.send("j-1", "t", {}, group="ws#1")
    assert caught.value.__cause__ is not None
    # AND AWS's own period does not double the sentence's
    assert "does not exist. Fix the cause" in str(caught.value)


def _attributes(message: dict[str, Any]) -> dict[str, str]:
    return {name: value["StringValue"] for name, value in message.get("MessageAttributes", {}).items()}


def test_every_message_carries_job_id_type_and_group_as_attributes_for_triage(
    sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN a producer / WHEN one job is sent alone and two in a batch
    producer = JobProducer(queue_url, sqs_client=sqs)
    producer.send("job-1", "apply_patch", {}, group="ws#1")
    producer.send_batch(
        [JobMessage("job-2", "run_tests", {}, "ws#1"), JobMessage("job-3", "open_pr", {}, "ws#2")]
    )
    # THEN each message names its job, type and group without its body being parsed
    messages = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, MessageAttributeNames=["All"])
    got = sorted(_attributes(dict(m)).items() for m in messages["Messages"])
    assert [dict(g) for g in got] == [
        {"group": "ws#1", "jobId": "job-1", "jobType": "apply_patch"},
        {"group": "ws#1", "jobId": "job-2", "jobType": "run_tests"},
        {"group": "ws#2", "jobId": "job-3", "jobType": "open_pr"},
    ]


def test_seq_is_sent_in_the_envelope_when_given(sqs: SQSClient, queue_url: str) -> None:
    # GIVEN a producer / WHEN a job is sent with its group's sequence number
    JobProducer(queue_url, sqs_client=sqs).send("job-7", "apply_patch", {}, group="ws#1", seq=7)
    # THEN the body carries it for the runtime
    [message] = _receive_all(sqs, queue_url)
    assert json.loads(message["Body"])["seq"] == 7


@pytest.mark.parametrize("seq", [-1, 1.5, True, "3"])
def test_a_seq_that_is_not_a_non_negative_integer_is_refused_with_the_fix(
    sqs: SQSClient, queue_url: str, seq: Any
) -> None:
    with pytest.raises(
        InvalidJobError, match=r"seq .* must be a non-negative integer.*Fix: pass the aggregate"
    ):
        JobProducer(queue_url, sqs_client=sqs).send("job-7", "apply_patch", {}, group="ws#1", seq=seq)
    assert _receive_all(sqs, queue_url) == []


def test_the_producer_and_the_runtime_start_a_groups_sequence_at_the_same_seq(
    sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN the producer's first seq, the settings spec's and the state engine's default
    assert (
        FIRST_SEQ
        == SETTINGS["first_seq"].default
        == BatchSettings(max_attempts=1, park_on_dead=False).first_seq
        == 0
    )
    # WHEN a group's first job is sent with it / THEN it is accepted, and the one below it is refused
    JobProducer(queue_url, sqs_client=sqs).send("job-0", "apply_patch", {}, group="ws#1", seq=FIRST_SEQ)
    with pytest.raises(InvalidJobError, match="which starts at 0"):
        JobProducer(queue_url, sqs_client=sqs).send(
            "job-x", "apply_patch", {}, group="ws#1", seq=FIRST_SEQ - 1
        )


# --- the environment: region, credentials, endpoint ----------------------------------------------------

NOWHERE = "http://localhost:1/123456789012/jobs.fifo"  # nothing listens on port 1


def test_no_region_is_the_producers_error_with_the_fix(bare_environment: None) -> None:
    # GIVEN no region anywhere WHEN a producer is made with the default client
    with pytest.raises(RegionNotSetError) as raised:
        JobProducer(NOWHERE)
    # THEN its own error, saying which variables are read and how to pass one
    assert "set AWS_REGION or AWS_DEFAULT_REGION" in str(raised.value)
    assert "region_name" in str(raised.value)
    assert type(raised.value.__cause__).__name__ == "NoRegionError"


def test_aws_region_alone_is_read_as_constructs_fifo_reads_it(
    bare_environment: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN only AWS_REGION (which boto3 itself does not read; the CLI and Lambda do)
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    # WHEN a producer is made THEN no region error, neither made nor sending
    producer = JobProducer(NOWHERE)
    with pytest.raises(CredentialsNotFoundError):  # no credentials: the region was found
        producer.send("j-1", "t", {}, group="g")


def test_no_credentials_is_the_producers_error_with_the_fix(
    bare_environment: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    producer = JobProducer(NOWHERE)
    # WHEN a job is sent with no credentials THEN its own error naming the job, the queue and the fix
    with pytest.raises(CredentialsNotFoundError) as raised:
        producer.send("j-1", "t", {}, group="g")
    message = str(raised.value)
    assert message.startswith(
        f"job 'j-1' was not sent to {NOWHERE}: no usable AWS credentials (NoCredentialsError"
    )
    assert "AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing" in message
    assert type(raised.value.__cause__).__name__ == "NoCredentialsError"


def test_an_unreachable_endpoint_is_the_producers_error_with_the_fix(
    bare_environment: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://localhost:1")
    producer = JobProducer(NOWHERE)
    # WHEN a job is sent, and a batch THEN its own error: where it could not connect and the fix
    with pytest.raises(EndpointNotReachableError) as raised:
        producer.send("j-1", "t", {}, group="g")
    assert "could not connect to http://localhost:1/ (EndpointConnectionError)" in str(raised.value)
    assert "`constructs-fifo local serve`" in str(raised.value)
    with pytest.raises(EndpointNotReachableError) as batch:
        producer.send_batch([JobMessage(f"j-{i}", "t", {}, group="g") for i in range(3)])
    assert str(batch.value).startswith(f"3 of 3 job(s) were not sent to {NOWHERE}: could not connect")
    assert batch.value.succeeded == []
