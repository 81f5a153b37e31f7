"""SQS FIFO behaviours constructs-fifo relies on; one test per behaviour, each naming its AWS page.

Runs against the local emulator by default and unchanged against real AWS with ``--aws``.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

import pytest
from botocore.exceptions import ClientError

from .support import QueueFactory, Timing, drain_bodies, receive, redrive_policy, send

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient


def test_messages_of_a_group_arrive_in_send_order(sqs: SQSClient, fifo_queue: QueueFactory) -> None:
    """AWS: FIFO-key-terms (message group: messages are received in the order they were sent)."""
    # GIVEN two groups sent interleaved
    queue = fifo_queue("order")
    sent = [("a", "a1"), ("b", "b1"), ("a", "a2"), ("b", "b2"), ("a", "a3"), ("b", "b3")]
    for group, body in sent:
        send(sqs, queue, body, group)
    # WHEN everything is received and deleted
    bodies = drain_bodies(sqs, queue, expected=len(sent))
    # THEN each group's messages came in the order they were sent
    assert [b for b in bodies if b.startswith("a")] == ["a1", "a2", "a3"]
    assert [b for b in bodies if b.startswith("b")] == ["b1", "b2", "b3"]


def test_a_group_with_a_message_in_flight_returns_nothing_more(
    sqs: SQSClient, fifo_queue: QueueFactory
) -> None:
    """AWS: knowledge-center sqs-fifo-messages-not-returned (in-flight message blocks its group)."""
    # GIVEN a1 a2 in group a and b1 in group b, with a1 received and not deleted
    queue = fifo_queue("blocked")
    for group, body in [("a", "a1"), ("a", "a2"), ("b", "b1")]:
        send(sqs, queue, body, group)
    first = receive(sqs, queue, max_messages=1, visibility=30)
    assert [m["Body"] for m in first] == ["a1"]
    # WHEN the queue is received again
    second = receive(sqs, queue, visibility=30)
    # THEN only the other group's message comes; a2 waits for a1
    assert [m["Body"] for m in second] == ["b1"]
    # WHEN a1 is deleted THEN a2 comes
    sqs.delete_message(QueueUrl=queue.url, ReceiptHandle=first[0]["ReceiptHandle"])
    assert [m["Body"] for m in receive(sqs, queue)] == ["a2"]


def test_receive_fills_a_batch_from_one_group_first(sqs: SQSClient, fifo_queue: QueueFactory) -> None:
    """AWS: knowledge-center sqs-fifo-messages-not-returned ("as many messages with the same
    message group ID as possible")."""
    # GIVEN a1, b1, a2, a3 sent in that order
    queue = fifo_queue("onegroup")
    for group, body in [("a", "a1"), ("b", "b1"), ("a", "a2"), ("a", "a3")]:
        send(sqs, queue, body, group)
    # WHEN one receive asks for 10
    bodies = [m["Body"] for m in receive(sqs, queue)]
    # THEN group a's messages come together, before group b's
    assert bodies == ["a1", "a2", "a3", "b1"]


def test_redelivered_messages_of_a_group_come_back_in_order(sqs: SQSClient, fifo_queue: QueueFactory) -> None:
    """AWS: FIFO-key-terms and sqs-configure-lambda-function-trigger: a record left undeleted comes
    back after its visibility timeout; a group's order holds across redelivery."""
    # GIVEN m0 m1 m2 of one group received together
    queue = fifo_queue("redeliver")
    for body in ["m0", "m1", "m2"]:
        send(sqs, queue, body, "g")
    received = receive(sqs, queue, visibility=30)
    assert [m["Body"] for m in received] == ["m0", "m1", "m2"]
    # WHEN m0 is deleted and m1, m2 get a 1-second backoff (ChangeMessageVisibility), as the
    # runtime does for a failed record and the records after it
    sqs.delete_message(QueueUrl=queue.url, ReceiptHandle=received[0]["ReceiptHandle"])
    for message in received[1:]:
        sqs.change_message_visibility(
            QueueUrl=queue.url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=1
        )
    time.sleep(1.2)
    # THEN the next receive gives m1 first, never m2 alone
    again = receive(sqs, queue, wait=2)
    assert [m["Body"] for m in again][:1] == ["m1"]
    assert [m["Body"] for m in again] in (["m1"], ["m1", "m2"])


def test_change_visibility_zero_makes_a_message_visible_at_once(
    sqs: SQSClient, fifo_queue: QueueFactory
) -> None:
    """AWS: API_ChangeMessageVisibility (VisibilityTimeout 0 makes the message visible immediately)."""
    # GIVEN a message received with a 30-second visibility timeout
    queue = fifo_queue("vis0")
    send(sqs, queue, "m", "g")
    (message,) = receive(sqs, queue, visibility=30)
    # WHEN its visibility is set to 0
    sqs.change_message_visibility(
        QueueUrl=queue.url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
    )
    # THEN it is received again at once, second receive counted
    again = receive(sqs, queue, wait=2)
    assert [m["Body"] for m in again] == ["m"]
    assert again[0]["Attributes"]["ApproximateReceiveCount"] == "2"


def test_duplicate_send_succeeds_with_the_same_message_id_and_is_not_delivered(
    sqs: SQSClient, fifo_queue: QueueFactory, timing: Timing
) -> None:
    """AWS: FIFO-key-terms (a deduplicated send is accepted but not delivered) and
    using-messagededuplicationid-property."""
    # GIVEN a message sent
    queue = fifo_queue("dup")
    original = send(sqs, queue, "job-1", "g", dedup="job-1")
    # WHEN the same deduplication id is sent again (another body, as a retrying producer might)
    duplicate = send(sqs, queue, "job-1-retry", "g", dedup="job-1")
    # THEN the send succeeds with the original's MessageId, and only the original is delivered
    assert duplicate["MessageId"] == original["MessageId"]
    assert drain_bodies(sqs, queue, expected=2, timeout=timing.settle, wait=timing.empty_wait) == ["job-1"]


def test_deduplication_id_is_remembered_after_the_message_was_deleted(
    sqs: SQSClient, fifo_queue: QueueFactory, timing: Timing
) -> None:
    """AWS: FIFO-key-terms ("SQS continues to keep track of the message deduplication ID even after
    the message is received and deleted", 5-minute interval)."""
    # GIVEN a message sent, received and deleted
    queue = fifo_queue("dedupdel")
    send(sqs, queue, "job-1", "g")
    assert drain_bodies(sqs, queue, expected=1) == ["job-1"]
    # WHEN it is sent again within the deduplication interval
    response = send(sqs, queue, "job-1", "g")
    # THEN the send succeeds and nothing is delivered
    assert response["MessageId"]
    assert receive(sqs, queue, wait=timing.empty_wait) == []


def test_deduplication_scope_message_group_keys_by_group(
    sqs: SQSClient, fifo_queue: QueueFactory, timing: Timing
) -> None:
    """AWS: enable-high-throughput-fifo (DeduplicationScope=messageGroup: deduplication per group)."""
    # GIVEN a high-throughput FIFO queue
    queue = fifo_queue("scope", DeduplicationScope="messageGroup", FifoThroughputLimit="perMessageGroupId")
    # WHEN one deduplication id is used in two groups, and again in the first group
    send(sqs, queue, "in-g1", "g1", dedup="same")
    send(sqs, queue, "in-g2", "g2", dedup="same")
    send(sqs, queue, "again-in-g1", "g1", dedup="same")
    # THEN each group delivers its first message and the repeat in g1 is dropped
    assert sorted(drain_bodies(sqs, queue, expected=3, timeout=timing.settle, wait=timing.empty_wait)) == [
        "in-g1",
        "in-g2",
    ]


def test_sequence_numbers_increase(sqs: SQSClient, fifo_queue: QueueFactory) -> None:
    """AWS: API_SendMessage (SequenceNumber: large, non-consecutive, increasing per message group)."""
    # GIVEN a FIFO queue
    queue = fifo_queue("seq")
    # WHEN five messages are sent to one group
    numbers = [send(sqs, queue, f"m{i}", "g")["SequenceNumber"] for i in range(5)]
    # THEN every SequenceNumber is 20 digits and each is larger than the one before
    assert all(n.isdigit() and len(n) == 20 for n in numbers), numbers
    assert [int(n) for n in numbers] == sorted(int(n) for n in numbers)
    assert len(set(numbers)) == 5


def _exhaust_receives(sqs: SQSClient, queue_url: str, wait: int) -> None:
    """Receive with visibility 0 until the queue returns nothing (the move happens on receive)."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        got = sqs.receive_message(QueueUrl=queue_url, WaitTimeSeconds=wait, VisibilityTimeout=0)
        if not got.get("Messages"):
            return


def test_max_receive_count_moves_a_message_to_the_fifo_dlq_keeping_its_group(
    sqs: SQSClient, fifo_queue: QueueFactory, timing: Timing
) -> None:
    """AWS: sqs-dead-letter-queues (after maxReceiveCount receives the message moves to the DLQ;
    a FIFO queue's DLQ is FIFO; the message keeps its body and MessageGroupId)."""
    # GIVEN a source queue with maxReceiveCount 2 and a FIFO DLQ
    dlq = fifo_queue("dlq")
    source = fifo_queue("src", RedrivePolicy=redrive_policy(dlq, 2))
    send(sqs, source, "poison", "ws#1")
    # WHEN the message is received (and never deleted) until the source returns nothing
    _exhaust_receives(sqs, source.url, timing.empty_wait)
    # THEN it is in the DLQ with its body and group
    moved = receive(sqs, dlq, wait=2)
    assert [(m["Body"], m["Attributes"]["MessageGroupId"]) for m in moved] == [("poison", "ws#1")]


def test_a_move_to_the_dlq_is_not_deduplicated_by_the_dlq(
    sqs: SQSClient, fifo_queue: QueueFactory, timing: Timing
) -> None:
    """AWS: sqs-dead-letter-queues (moving to the DLQ is not a send; nothing is dropped on the way)."""
    # GIVEN a FIFO DLQ that recently accepted a message with deduplication id "job-7"
    dlq = fifo_queue("dlq")
    source = fifo_queue("src", RedrivePolicy=redrive_policy(dlq, 1))
    send(sqs, dlq, "earlier", "ws#1", dedup="job-7")
    # WHEN a message with the same deduplication id exceeds maxReceiveCount in the source
    send(sqs, source, "poison", "ws#1", dedup="job-7")
    _exhaust_receives(sqs, source.url, timing.empty_wait)
    # THEN the DLQ holds both
    assert sorted(drain_bodies(sqs, dlq, expected=2, timeout=timing.settle + 5)) == ["earlier", "poison"]


@pytest.mark.parametrize(
    ("parameter", "value"),
    [
        ("MessageGroupId", "g" * 129),
        ("MessageGroupId", "ws 1"),
        ("MessageGroupId", "ws#é"),
        ("MessageDeduplicationId", "d" * 129),
        ("MessageDeduplicationId", "job\n1"),
    ],
    ids=["group-too-long", "group-space", "group-non-ascii", "dedup-too-long", "dedup-newline"],
)
def test_invalid_group_or_deduplication_id_is_rejected(
    sqs: SQSClient, fifo_queue: QueueFactory, parameter: str, value: str
) -> None:
    """AWS: quotas-messages (MessageGroupId, MessageDeduplicationId: at most 128 characters,
    alphanumerics and punctuation)."""
    # GIVEN a FIFO queue and an id that breaks the rule
    queue = fifo_queue("ids")
    ids = {"MessageGroupId": "g", "MessageDeduplicationId": "d", parameter: value}
    # WHEN it is sent THEN SQS rejects it with InvalidParameterValue naming the parameter
    with pytest.raises(ClientError) as caught:
        sqs.send_message(QueueUrl=queue.url, MessageBody="x", **ids)  # type: ignore[arg-type]
    assert caught.value.response["Error"]["Code"] == "InvalidParameterValue"
    assert parameter in caught.value.response["Error"]["Message"]


def test_the_longest_valid_ids_are_accepted(sqs: SQSClient, fifo_queue: QueueFactory) -> None:
    """AWS: quotas-messages (128 characters of alphanumerics and punctuation are allowed)."""
    # GIVEN ids of exactly 128 characters using punctuation
    queue = fifo_queue("ids-ok")
    group = ("ws#" + "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~" * 4)[:128]
    # WHEN sent THEN accepted and delivered with the same group
    send(sqs, queue, "x", group, dedup="d" * 128)
    assert [m["Attributes"]["MessageGroupId"] for m in receive(sqs, queue)] == [group]


def test_send_message_batch_rejects_more_than_ten_entries(
    sqs: SQSClient, fifo_queue: QueueFactory, timing: Timing
) -> None:
    """AWS: quotas-messages (SendMessageBatch: at most 10 entries)."""
    # GIVEN 11 entries
    queue = fifo_queue("batch")
    entries = [
        {"Id": f"e{i}", "MessageBody": f"m{i}", "MessageGroupId": "g", "MessageDeduplicationId": f"m{i}"}
        for i in range(11)
    ]
    # WHEN sent as one batch THEN the request fails and nothing is delivered
    with pytest.raises(ClientError) as caught:
        sqs.send_message_batch(QueueUrl=queue.url, Entries=entries)  # type: ignore[arg-type]
    assert "TooManyEntriesInBatchRequest" in caught.value.response["Error"]["Code"]
    assert receive(sqs, queue, wait=timing.empty_wait) == []


def test_redrive_allow_policy_is_kept(sqs: SQSClient, fifo_queue: QueueFactory) -> None:
    """AWS: API_SetQueueAttributes (RedriveAllowPolicy byQueue, returned by GetQueueAttributes)."""
    # GIVEN a DLQ whose RedriveAllowPolicy names one source queue
    policy = {
        "redrivePermission": "byQueue",
        "sourceQueueArns": ["arn:aws:sqs:us-east-1:123456789012:s.fifo"],
    }
    dlq = fifo_queue("allow", RedriveAllowPolicy=json.dumps(policy))
    # WHEN its attributes are read
    attributes = sqs.get_queue_attributes(QueueUrl=dlq.url, AttributeNames=["All"])["Attributes"]
    # THEN the policy is there as given
    assert json.loads(attributes["RedriveAllowPolicy"]) == policy


def test_concurrent_receives_never_share_a_group(sqs: SQSClient, fifo_queue: QueueFactory) -> None:
    """AWS: FIFO-key-terms / knowledge-center sqs-fifo-messages-not-returned (while a group has a
    message in flight, no other receive gets that group), also for receives at the same moment."""
    from concurrent.futures import ThreadPoolExecutor

    # GIVEN 20 messages of one group
    queue = fifo_queue("concurrent")
    sqs.send_message_batch(
        QueueUrl=queue.url,
        Entries=[
            {
                "Id": f"e{i}",
                "MessageBody": f"m{i:02d}",
                "MessageGroupId": "g",
                "MessageDeduplicationId": f"m{i}",
            }
            for i in range(10)
        ],
    )
    sqs.send_message_batch(
        QueueUrl=queue.url,
        Entries=[
            {
                "Id": f"e{i}",
                "MessageBody": f"m{i:02d}",
                "MessageGroupId": "g",
                "MessageDeduplicationId": f"m{i}",
            }
            for i in range(10, 20)
        ],
    )
    # WHEN eight consumers receive at once
    with ThreadPoolExecutor(max_workers=8) as pool:
        batches = list(pool.map(lambda _: receive(sqs, queue, wait=1, visibility=30), range(8)))
    # THEN exactly one consumer got messages, the head of the group in order
    non_empty = [[m["Body"] for m in batch] for batch in batches if batch]
    assert len(non_empty) == 1
    assert non_empty[0] == [f"m{i:02d}" for i in range(len(non_empty[0]))]
