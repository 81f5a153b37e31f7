"""What SQS refuses or ignores in a request, as observed on AWS; one test per behaviour.

Runs against the emulator and unchanged against real AWS with ``--aws``.
"""

from __future__ import annotations

import contextlib
import time
import urllib.request
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from botocore.auth import SigV4Auth, SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.exceptions import ClientError

from .support import QueueFactory, Target, Timing, drain_bodies, receive, send

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient

EXPIRED = "The receipt handle has expired."


def test_delete_with_an_expired_receipt_handle_is_refused_and_the_message_comes_back(
    sqs: SQSClient, fifo_queue: QueueFactory
) -> None:
    """AWS: API_DeleteMessage (the most recent receipt handle) and the observation on AWS: on a FIFO
    queue a receipt handle whose visibility timeout ended is refused, and the message stays."""
    # GIVEN a message received with a 1-second visibility timeout, which then ends
    queue = fifo_queue("expired")
    send(sqs, queue, "m", "g")
    (message,) = receive(sqs, queue, visibility=1)
    time.sleep(1.3)
    # WHEN it is deleted with that receipt handle
    with pytest.raises(ClientError) as caught:
        sqs.delete_message(QueueUrl=queue.url, ReceiptHandle=message["ReceiptHandle"])
    # THEN SQS refuses: InvalidParameterValue, the receipt handle has expired
    assert caught.value.response["Error"]["Code"] == "InvalidParameterValue"
    assert caught.value.response["Error"]["Message"] == EXPIRED
    # AND the message is received again, its second receive counted
    again = receive(sqs, queue, wait=2, visibility=30)
    assert [(m["Body"], m["Attributes"]["ApproximateReceiveCount"]) for m in again] == [("m", "2")]


def test_delete_batch_reports_an_expired_receipt_handle_in_its_entry(
    sqs: SQSClient, fifo_queue: QueueFactory
) -> None:
    """AWS: API_DeleteMessageBatch (each entry succeeds or fails on its own) with the refusal above:
    what the local event source mapping sees when an invocation outlived its records' timeout."""
    # GIVEN a message received with a 1-second visibility timeout, which then ends
    queue = fifo_queue("expiredbatch")
    send(sqs, queue, "m", "g")
    (message,) = receive(sqs, queue, visibility=1)
    time.sleep(1.3)
    # WHEN DeleteMessageBatch is given its receipt handle
    response = sqs.delete_message_batch(
        QueueUrl=queue.url, Entries=[{"Id": "0", "ReceiptHandle": message["ReceiptHandle"]}]
    )
    # THEN the entry fails as DeleteMessage does, and the message stays
    assert response.get("Successful", []) == []
    assert [(f["Id"], f["Code"]) for f in response["Failed"]] == [("0", "InvalidParameterValue")]
    assert [m["Body"] for m in receive(sqs, queue, wait=2)] == ["m"]


def test_purge_forgets_deduplication_ids(sqs: SQSClient, fifo_queue: QueueFactory, timing: Timing) -> None:
    """AWS: API_PurgeQueue and the observation on AWS: a resend after a purge is delivered (the
    emulator's own deduplication records kept the id: a regression of its patches)."""
    # GIVEN a message sent, then the queue purged
    queue = fifo_queue("purge")
    send(sqs, queue, "job-1", "g")
    sqs.purge_queue(QueueUrl=queue.url)
    time.sleep(timing.purge_wait)
    # WHEN the same deduplication id is sent again
    send(sqs, queue, "job-1", "g")
    # THEN it is delivered
    assert drain_bodies(sqs, queue, expected=1, timeout=timing.settle + 5) == ["job-1"]


def test_delay_seconds_zero_on_a_fifo_send_keeps_the_queues_delay(
    sqs: SQSClient, fifo_queue: QueueFactory
) -> None:
    """AWS: API_SendMessage (DelaySeconds: FIFO queues have no per-message delay, only the queue's)
    and the observation on AWS: DelaySeconds=0 does not override the queue's delay."""
    # GIVEN a FIFO queue with a 2-second delay
    queue = fifo_queue("delay", DelaySeconds="2")
    # WHEN a message is sent with DelaySeconds=0
    started = time.monotonic()
    sqs.send_message(
        QueueUrl=queue.url, MessageBody="m", MessageGroupId="g", MessageDeduplicationId="m", DelaySeconds=0
    )
    # THEN it is not receivable at once, and arrives after the queue's delay
    assert receive(sqs, queue, wait=0) == []
    bodies = drain_bodies(sqs, queue, expected=1, timeout=10)
    assert bodies == ["m"]
    assert time.monotonic() - started >= 1.5


def test_switching_to_message_group_scope_keeps_deduplicating_ids_seen_before(
    sqs: SQSClient, fifo_queue: QueueFactory, timing: Timing
) -> None:
    """AWS: enable-high-throughput-fifo (DeduplicationScope) and the observation on AWS: after an
    existing queue is switched to messageGroup, an id seen before the switch is still deduplicated
    in every group."""
    # GIVEN a FIFO queue (deduplication scope: queue) that accepted id X in group g1
    queue = fifo_queue("switch")
    send(sqs, queue, "in-g1", "g1", dedup="X")
    # WHEN it is switched to DeduplicationScope=messageGroup and X is sent in group g2
    sqs.set_queue_attributes(QueueUrl=queue.url, Attributes={"DeduplicationScope": "messageGroup"})
    send(sqs, queue, "in-g2", "g2", dedup="X")
    # THEN the second send was deduplicated: only the first is delivered
    assert drain_bodies(sqs, queue, expected=2, timeout=timing.settle, wait=timing.empty_wait) == ["in-g1"]


@pytest.fixture
def standard_queue_name(target: Target, sqs: SQSClient, request: pytest.FixtureRequest) -> Iterator[str]:
    """A name for a standard queue; whatever a test manages to create under it is deleted."""
    name = f"cfconf-{target.run_id}-std-{abs(hash(request.node.name)) % 10**8}"
    yield name
    for candidate in (name, f"{name}.fifo"):
        with contextlib.suppress(ClientError):  # nothing was created under this name
            sqs.delete_queue(QueueUrl=sqs.get_queue_url(QueueName=candidate)["QueueUrl"])


@pytest.mark.parametrize(
    ("suffix", "attributes", "code"),
    [
        ("", {"FifoQueue": "false"}, "InvalidAttributeName"),
        ("", {"ContentBasedDeduplication": "true"}, "InvalidAttributeName"),
        ("", {"DeduplicationScope": "messageGroup"}, "InvalidAttributeName"),
        ("", {"FifoThroughputLimit": "perMessageGroupId"}, "InvalidAttributeName"),
        (".fifo", {}, "InvalidParameterValue"),
    ],
    ids=["fifo-queue-false", "content-based", "dedup-scope", "throughput-limit", "fifo-name"],
)
def test_a_standard_queue_with_fifo_attributes_or_a_fifo_name_is_refused(
    sqs: SQSClient, standard_queue_name: str, suffix: str, attributes: dict[str, str], code: str
) -> None:
    """AWS: API_CreateQueue (FIFO queue attributes; a FIFO queue's name ends in .fifo) and the
    observation on AWS: a standard queue given them is refused."""
    # WHEN a standard queue is created with a FIFO attribute or a .fifo name
    with pytest.raises(ClientError) as caught:
        sqs.create_queue(QueueName=standard_queue_name + suffix, Attributes=attributes)  # type: ignore[arg-type]
    # THEN SQS refuses it
    assert caught.value.response["Error"]["Code"] == code


def test_set_queue_attributes_refuses_fifo_attributes_on_a_standard_queue(
    sqs: SQSClient, standard_queue_name: str
) -> None:
    """AWS: API_SetQueueAttributes (the FIFO attributes apply to FIFO queues) and the observation on
    AWS: InvalidAttributeName."""
    # GIVEN a standard queue
    url = sqs.create_queue(QueueName=standard_queue_name)["QueueUrl"]
    # WHEN it is given a FIFO-only attribute THEN SQS refuses it
    with pytest.raises(ClientError) as caught:
        sqs.set_queue_attributes(QueueUrl=url, Attributes={"ContentBasedDeduplication": "true"})
    assert caught.value.response["Error"]["Code"] == "InvalidAttributeName"


@pytest.mark.parametrize("signing", ["header", "query-string"])
def test_a_signed_get_request_reads_a_fifo_queues_attributes(
    target: Target, fifo_queue: QueueFactory, signing: str
) -> None:
    """AWS: sqs-making-api-requests (the query API: GET with an Action parameter) and
    sigv4-query-string-auth (the signature in the header or in the query string)."""
    # GIVEN a FIFO queue and a GET Action=GetQueueAttributes to its URL, signed with SigV4
    queue = fifo_queue("get")
    credentials = target.session.get_credentials()
    assert credentials is not None
    region = target.session.region_name or "us-east-1"
    request = AWSRequest(
        method="GET",
        url=queue.url,
        params={"Action": "GetQueueAttributes", "AttributeName.1": "All", "Version": "2012-11-05"},
    )
    signer: Any = (
        SigV4Auth(credentials, "sqs", region)
        if signing == "header"
        else SigV4QueryAuth(credentials, "sqs", region, expires=300)
    )
    signer.add_auth(request)
    prepared = request.prepare()
    # WHEN it is sent
    with urllib.request.urlopen(
        urllib.request.Request(prepared.url, headers=dict(prepared.headers), method="GET"), timeout=30
    ) as response:
        status, body = response.status, response.read().decode()
    # THEN SQS answers with the queue's attributes
    assert status == 200
    assert "<Name>FifoQueue</Name><Value>true</Value>" in body
    assert queue.arn in body


@pytest.mark.parametrize(
    ("parameter", "value"),
    [("MessageGroupId", "g" * 129), ("MessageGroupId", "ws 1"), ("MessageDeduplicationId", "d" * 200)],
    ids=["group-too-long", "group-space", "dedup-too-long"],
)
def test_an_invalid_id_is_refused_with_aws_text(
    sqs: SQSClient, fifo_queue: QueueFactory, parameter: str, value: str
) -> None:
    """AWS: quotas-messages (ids: 1 to 128 alphanumerics and punctuation) and the observation on AWS
    of the error text: the whole value, and no count of characters."""
    # GIVEN a FIFO queue and an id that breaks the rule
    queue = fifo_queue("idtext")
    ids = {"MessageGroupId": "g", "MessageDeduplicationId": "d", parameter: value}
    # WHEN it is sent THEN SQS answers InvalidParameterValue with AWS's text
    with pytest.raises(ClientError) as caught:
        sqs.send_message(QueueUrl=queue.url, MessageBody="x", **ids)  # type: ignore[arg-type]
    assert caught.value.response["Error"]["Code"] == "InvalidParameterValue"
    assert caught.value.response["Error"]["Message"] == (
        f"Value {value} for parameter {parameter} is invalid. Reason: {parameter} can only include "
        "alphanumeric and punctuation characters. 1 to 128 in length."
    )


def test_a_batch_entry_without_a_group_id_fails_the_request(
    sqs: SQSClient, fifo_queue: QueueFactory, timing: Timing
) -> None:
    """AWS: API_SendMessageBatch and the observation on AWS: InvalidParameterValue (SendMessage's own
    answer is MissingParameter)."""
    # GIVEN a FIFO queue and a batch whose second entry has no MessageGroupId
    queue = fifo_queue("batchgroup")
    entries: list[dict[str, Any]] = [
        {"Id": "a", "MessageBody": "a", "MessageGroupId": "g", "MessageDeduplicationId": "a"},
        {"Id": "b", "MessageBody": "b", "MessageDeduplicationId": "b"},
    ]
    # WHEN it is sent THEN the request fails with InvalidParameterValue and nothing is delivered
    with pytest.raises(ClientError) as caught:
        sqs.send_message_batch(QueueUrl=queue.url, Entries=entries)  # type: ignore[arg-type]
    assert caught.value.response["Error"]["Code"] == "InvalidParameterValue"
    assert "MessageGroupId" in caught.value.response["Error"]["Message"]
    assert receive(sqs, queue, wait=timing.empty_wait) == []


NOT_FOR_THIS_QUEUE_TYPE = "The request include parameter that is not valid for this queue type"


def _refused(call: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as caught:
        call()
    return caught.value.response["Error"]["Code"], caught.value.response["Error"]["Message"]


def test_a_standard_queue_refuses_a_deduplication_id_and_takes_a_group_id(
    sqs: SQSClient, standard_queue_name: str
) -> None:
    """AWS: API_SendMessage (MessageDeduplicationId applies only to FIFO queues; MessageGroupId on a
    standard queue enables fair queues) and the observation on AWS of the text."""
    # GIVEN a standard queue
    url = sqs.create_queue(QueueName=standard_queue_name)["QueueUrl"]
    # WHEN a message carries a MessageDeduplicationId THEN InvalidParameterValue naming the value
    code, message = _refused(
        lambda: sqs.send_message(QueueUrl=url, MessageBody="x", MessageDeduplicationId="d1")
    )
    assert (code, message) == (
        "InvalidParameterValue",
        f"Value d1 for parameter MessageDeduplicationId is invalid. Reason: {NOT_FOR_THIS_QUEUE_TYPE}.",
    )
    # AND a message with a MessageGroupId (a fair queue's tenant) is accepted
    assert sqs.send_message(QueueUrl=url, MessageBody="y", MessageGroupId="tenant-1")["MessageId"]


def test_a_standard_queue_batch_entry_with_a_deduplication_id_fails_on_its_own(
    sqs: SQSClient, standard_queue_name: str
) -> None:
    """AWS: API_SendMessageBatch (each entry succeeds or fails on its own, BatchResultErrorEntry) and
    the observation on AWS of the entry's code and text (SenderFault true)."""
    # GIVEN a standard queue and a batch whose second entry carries a MessageDeduplicationId
    url = sqs.create_queue(QueueName=standard_queue_name)["QueueUrl"]
    entries: list[dict[str, Any]] = [
        {"Id": "a", "MessageBody": "a"},
        {"Id": "b", "MessageBody": "b", "MessageDeduplicationId": "b"},
    ]
    # WHEN it is sent
    response = sqs.send_message_batch(QueueUrl=url, Entries=entries)  # type: ignore[arg-type]
    # THEN the first entry is sent and the second fails, the sender's fault, with AWS's code and text
    assert [entry["Id"] for entry in response["Successful"]] == ["a"]
    assert [
        (entry["Id"], entry["SenderFault"], entry["Code"], entry["Message"]) for entry in response["Failed"]
    ] == [("b", True, "InvalidParameterValue", NOT_FOR_THIS_QUEUE_TYPE)]


@pytest.mark.parametrize(
    ("attribute", "value"),
    [
        ("ContentBasedDeduplication", "true"),
        ("DeduplicationScope", "messageGroup"),
        ("VisibilityTimeout", "99"),
    ],
)
def test_create_queue_of_an_existing_fifo_queue_with_a_different_attribute_names_it(
    sqs: SQSClient, fifo_queue: QueueFactory, attribute: str, value: str
) -> None:
    """AWS: API_CreateQueue (QueueNameExists: only when a given attribute's value differs) and the
    observation on AWS of the text; the same attributes again return the queue's URL."""
    # GIVEN a FIFO queue with default attributes
    queue = fifo_queue("exists")
    name = queue.url.rsplit("/", 1)[-1]
    # WHEN it is created again with the same attributes THEN its URL comes back
    assert sqs.create_queue(QueueName=name, Attributes={"FifoQueue": "true"})["QueueUrl"] == queue.url
    # WHEN it is created again with one attribute different THEN QueueAlreadyExists names it
    attributes: Any = {"FifoQueue": "true", attribute: value}
    code, message = _refused(lambda: sqs.create_queue(QueueName=name, Attributes=attributes))
    assert (code, message) == (
        "QueueAlreadyExists",
        f"A queue already exists with the same name and a different value for attribute {attribute}",
    )


def test_a_fifo_queue_stays_fifo(sqs: SQSClient, fifo_queue: QueueFactory) -> None:
    """AWS: API_CreateQueue (FifoQueue: the queue type cannot change after creation) and
    API_SetQueueAttributes (FifoQueue is not one of its attributes): InvalidAttributeName."""
    # GIVEN a FIFO queue
    queue = fifo_queue("staysfifo")
    # WHEN SetQueueAttributes is given FifoQueue=false THEN it is refused
    code, _ = _refused(
        lambda: sqs.set_queue_attributes(QueueUrl=queue.url, Attributes={"FifoQueue": "false"})
    )
    assert code == "InvalidAttributeName"
    # AND the queue is still FIFO
    attributes = sqs.get_queue_attributes(QueueUrl=queue.url, AttributeNames=["FifoQueue"])["Attributes"]
    assert attributes["FifoQueue"] == "true"


@pytest.mark.parametrize(
    ("entry", "code", "message"),
    [
        (
            {"MessageDeduplicationId": "d"},
            "MissingParameter",
            "The request must contain the parameter MessageGroupId.",
        ),
        (
            {"MessageGroupId": "g"},
            "InvalidParameterValue",
            "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId "
            "provided explicitly",
        ),
        (
            {"MessageGroupId": "g", "MessageDeduplicationId": "d", "DelaySeconds": 5},
            "InvalidParameterValue",
            f"Value 5 for parameter DelaySeconds is invalid. Reason: {NOT_FOR_THIS_QUEUE_TYPE}.",
        ),
    ],
    ids=["no-group", "no-dedup", "per-message-delay"],
)
def test_a_fifo_send_missing_an_id_or_with_a_delay_is_refused_with_aws_text(
    sqs: SQSClient, fifo_queue: QueueFactory, entry: dict[str, Any], code: str, message: str
) -> None:
    """AWS: API_SendMessage (MessageGroupId required on FIFO; a deduplication id unless content-based
    deduplication; "FIFO queues don't support per-message delays") and the observation on AWS of
    each text. Right on moto 5.2.5 already; pinned because producers report these texts."""
    # GIVEN a FIFO queue without content-based deduplication
    queue = fifo_queue("sendrules")
    # WHEN a message breaks one rule THEN SQS refuses it with AWS's code and text
    assert _refused(lambda: sqs.send_message(QueueUrl=queue.url, MessageBody="x", **entry)) == (code, message)


def test_a_fifo_queue_switches_to_high_throughput_after_creation(
    sqs: SQSClient, fifo_queue: QueueFactory, timing: Timing
) -> None:
    """AWS: enable-high-throughput-fifo (DeduplicationScope and FifoThroughputLimit can be set on an
    existing queue with SetQueueAttributes). Right on moto 5.2.5 already; pinned because the
    construct's queues are high-throughput."""
    # GIVEN a FIFO queue created with the default scope and limit
    queue = fifo_queue("switch")
    # WHEN it is switched to high throughput
    sqs.set_queue_attributes(
        QueueUrl=queue.url,
        Attributes={"DeduplicationScope": "messageGroup", "FifoThroughputLimit": "perMessageGroupId"},
    )
    # THEN the queue reports both
    names: Any = ["DeduplicationScope", "FifoThroughputLimit"]
    attributes = sqs.get_queue_attributes(QueueUrl=queue.url, AttributeNames=names)["Attributes"]
    assert attributes == {"DeduplicationScope": "messageGroup", "FifoThroughputLimit": "perMessageGroupId"}
    # AND one deduplication id, new since the switch, is delivered once per group
    send(sqs, queue, "in-g1", "g1", dedup="same")
    send(sqs, queue, "in-g2", "g2", dedup="same")
    assert sorted(drain_bodies(sqs, queue, expected=2, wait=max(timing.empty_wait, 1))) == ["in-g1", "in-g2"]
