"""SQS message move tasks (dead-letter queue redrive) as AWS runs them; each test names its AWS page.

``constructs-fifo dlq redrive`` and the runbook use StartMessageMoveTask. Runs against the local
emulator by default and unchanged against real AWS with ``--aws``. Kept fast: small counts, and rates
of 1 or 2 messages a second where time is the point.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from typing import TYPE_CHECKING, Any

import pytest
from botocore.exceptions import ClientError

from .support import (
    FifoQueue,
    QueueFactory,
    dead_letter,
    drain_bodies,
    receive,
    redrive_policy,
    send,
    visible_count,
)

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient

_FINAL = ("COMPLETED", "CANCELLED", "FAILED")


def _dlq_with(
    sqs: SQSClient, fifo_queue: QueueFactory, bodies: list[str], group: str = "ws#1"
) -> tuple[FifoQueue, FifoQueue]:
    """A source queue (maxReceiveCount 1) and its FIFO DLQ holding ``bodies`` in that order."""
    dlq = fifo_queue("dlq")
    source = fifo_queue("src", RedrivePolicy=redrive_policy(dlq, 1))
    for body in bodies:
        send(sqs, source, body, group)
    dead_letter(sqs, source, dlq, len(bodies))
    return source, dlq


def _latest_task(sqs: SQSClient, dlq: FifoQueue) -> dict[str, Any]:
    return dict(sqs.list_message_move_tasks(SourceArn=dlq.arn, MaxResults=1)["Results"][0])


def _wait_for_task(sqs: SQSClient, dlq: FifoQueue, statuses: tuple[str, ...] = _FINAL) -> dict[str, Any]:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        task = _latest_task(sqs, dlq)
        if task["Status"] in statuses:
            return task
        time.sleep(0.2)
    raise AssertionError(f"the move task is still {_latest_task(sqs, dlq)}")


def _error(caught: pytest.ExceptionInfo[ClientError]) -> tuple[str, str]:
    error = caught.value.response["Error"]
    return str(error["Code"]), str(error["Message"])


def test_start_message_move_task_redrives_a_fifo_dlq_keeping_groups(
    sqs: SQSClient, fifo_queue: QueueFactory
) -> None:
    """AWS: API_StartMessageMoveTask and sqs-dead-letter-queues (redrive FIFO to FIFO; the redriven
    message gets a new MessageId and keeps its MessageGroupId)."""
    # GIVEN a poison message moved to the DLQ
    dlq = fifo_queue("dlq")
    source = fifo_queue("src", RedrivePolicy=redrive_policy(dlq, 1))
    original_id = send(sqs, source, "poison", "ws#3")["MessageId"]
    dead_letter(sqs, source, dlq, 1)
    # WHEN the DLQ is redriven to its source and the task completes
    sqs.start_message_move_task(SourceArn=dlq.arn)
    assert _wait_for_task(sqs, dlq)["Status"] == "COMPLETED"
    # THEN the message is back in the source with its group and a new MessageId
    back = receive(sqs, source, wait=2)
    assert [(m["Body"], m["Attributes"]["MessageGroupId"]) for m in back] == [("poison", "ws#3")]
    assert back[0]["MessageId"] != original_id


def test_the_task_handle_is_base64_json_of_task_id_and_source_arn(
    sqs: SQSClient, fifo_queue: QueueFactory
) -> None:
    """AWS: API_StartMessageMoveTask (TaskHandle: "An identifier associated with a message movement
    task"; AWS's decodes to {"taskId": <uuid>, "sourceArn": <the DLQ's ARN>})."""
    # GIVEN a DLQ holding one message
    _, dlq = _dlq_with(sqs, fifo_queue, ["m0"])
    # WHEN a task starts
    handle = sqs.start_message_move_task(SourceArn=dlq.arn)["TaskHandle"]
    # THEN its handle decodes to the task id and the source ARN
    document = json.loads(base64.b64decode(handle))
    assert uuid.UUID(document["taskId"])
    assert document["sourceArn"] == dlq.arn
    _wait_for_task(sqs, dlq)


def test_a_task_moves_at_most_max_number_of_messages_per_second_oldest_first(
    sqs: SQSClient, fifo_queue: QueueFactory
) -> None:
    """AWS: API_StartMessageMoveTask (MaxNumberOfMessagesPerSecond: "the message movement rate") and
    sqs-configure-dead-letter-queue-redrive ("redrive messages in the order they are received,
    starting with the oldest message"); API_ListMessageMoveTasksResultEntry (counts and status)."""
    # GIVEN a DLQ holding four messages of one group
    source, dlq = _dlq_with(sqs, fifo_queue, ["p0", "p1", "p2", "p3"])
    # WHEN they are redriven at 2 messages a second
    started = time.monotonic()
    sqs.start_message_move_task(SourceArn=dlq.arn, MaxNumberOfMessagesPerSecond=2)
    running = _latest_task(sqs, dlq)
    bodies = drain_bodies(sqs, source, expected=4, timeout=60)
    elapsed = time.monotonic() - started
    # THEN the task was RUNNING with its handle, and moving four took at least 1.5 s (the first at once)
    assert running["Status"] == "RUNNING"
    assert running["MaxNumberOfMessagesPerSecond"] == 2
    assert "TaskHandle" in running
    assert elapsed >= 1.4, elapsed
    # AND they came oldest first, and the task ends COMPLETED having moved what it counted
    assert bodies == ["p0", "p1", "p2", "p3"]
    done = _wait_for_task(sqs, dlq)
    assert done["Status"] == "COMPLETED"
    assert (done["ApproximateNumberOfMessagesMoved"], done["ApproximateNumberOfMessagesToMove"]) == (4, 4)
    assert "TaskHandle" not in done
    assert "DestinationArn" not in done


def test_redriven_messages_interleave_with_new_traffic(sqs: SQSClient, fifo_queue: QueueFactory) -> None:
    """AWS: sqs-configure-dead-letter-queue-redrive (the destination "ingests the redriven messages,
    as well as new messages from other producers, according to the order in which it receives
    them")."""
    # GIVEN a DLQ holding three messages of group ws#1, redriven at 1 message a second
    source, dlq = _dlq_with(sqs, fifo_queue, ["p0", "p1", "p2"])
    sqs.start_message_move_task(SourceArn=dlq.arn, MaxNumberOfMessagesPerSecond=1)
    deadline = time.monotonic() + 30
    while visible_count(sqs, source) < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    # WHEN a producer sends a new message of the same group while the task runs
    send(sqs, source, "new", "ws#1")
    _wait_for_task(sqs, dlq)
    # THEN the new message lands between the redriven ones, in the order the queue received them
    bodies = drain_bodies(sqs, source, expected=4, timeout=30)
    assert [b for b in bodies if b.startswith("p")] == ["p0", "p1", "p2"]
    assert bodies[0] == "p0"
    assert bodies[-1] != "new", bodies


def test_a_cancelled_task_stops_midway_and_keeps_what_it_moved(
    sqs: SQSClient, fifo_queue: QueueFactory
) -> None:
    """AWS: API_CancelMessageMoveTask ("does not revert the messages that have already been moved";
    returns ApproximateNumberOfMessagesMoved) and API_ListMessageMoveTasksResultEntry (CANCELLED)."""
    # GIVEN ten dead messages being redriven at 1 a second
    source, dlq = _dlq_with(sqs, fifo_queue, [f"m{i}" for i in range(10)])
    handle = sqs.start_message_move_task(SourceArn=dlq.arn, MaxNumberOfMessagesPerSecond=1)["TaskHandle"]
    moved_before = drain_bodies(sqs, source, expected=2, timeout=30)
    # WHEN the task is cancelled
    moved_at_cancel = sqs.cancel_message_move_task(TaskHandle=handle)["ApproximateNumberOfMessagesMoved"]
    # THEN it ends CANCELLED, the moved ones stay moved and the rest stay in the DLQ
    done = _wait_for_task(sqs, dlq)
    assert done["Status"] == "CANCELLED"
    assert moved_before == ["m0", "m1"]
    assert isinstance(moved_at_cancel, int)
    assert 2 <= done["ApproximateNumberOfMessagesMoved"] < 10
    assert done["ApproximateNumberOfMessagesToMove"] == 10
    assert visible_count(sqs, dlq) == 10 - done["ApproximateNumberOfMessagesMoved"]


def test_only_one_active_task_per_queue(sqs: SQSClient, fifo_queue: QueueFactory) -> None:
    """AWS: API_StartMessageMoveTask ("Only one active message movement task is supported per queue
    at any given time")."""
    # GIVEN a task redriving ten messages at 1 a second
    _, dlq = _dlq_with(sqs, fifo_queue, [f"m{i}" for i in range(10)])
    handle = sqs.start_message_move_task(SourceArn=dlq.arn, MaxNumberOfMessagesPerSecond=1)["TaskHandle"]
    # WHEN a second task starts on the same DLQ THEN it is refused
    with pytest.raises(ClientError) as caught:
        sqs.start_message_move_task(SourceArn=dlq.arn)
    assert _error(caught) == (
        "InvalidParameterValue",
        "There is already a task running. Only one active task is allowed for a source queue arn at a "
        "given time.",
    )
    sqs.cancel_message_move_task(TaskHandle=handle)
    _wait_for_task(sqs, dlq)


def test_a_source_that_is_no_queues_dead_letter_queue_is_refused(
    sqs: SQSClient, fifo_queue: QueueFactory
) -> None:
    """AWS: API_StartMessageMoveTask ("only ARNs of dead-letter queues (DLQs) whose sources are other
    Amazon SQS queues are accepted")."""
    # GIVEN a queue that no queue's redrive policy names
    plain = fifo_queue("plain")
    other = fifo_queue("other")
    send(sqs, plain, "m0", "g")
    # WHEN it is the source of a move task THEN the task is refused
    with pytest.raises(ClientError) as caught:
        sqs.start_message_move_task(SourceArn=plain.arn, DestinationArn=other.arn)
    assert _error(caught) == (
        "InvalidParameterValue",
        "Source queue must be configured as a Dead Letter Queue.",
    )


def test_without_destination_each_message_returns_to_its_own_source_queue(
    sqs: SQSClient, fifo_queue: QueueFactory
) -> None:
    """AWS: API_StartMessageMoveTask (DestinationArn: "If this field is left blank, the messages will
    be redriven back to their respective original source queues"), also for a DLQ of two queues."""
    # GIVEN one DLQ shared by queues a and b, holding a message of each
    dlq = fifo_queue("dlq")
    queue_a = fifo_queue("a", RedrivePolicy=redrive_policy(dlq, 1))
    queue_b = fifo_queue("b", RedrivePolicy=redrive_policy(dlq, 1))
    send(sqs, queue_a, "from-a", "g")
    dead_letter(sqs, queue_a, dlq, 1)
    send(sqs, queue_b, "from-b", "g")
    dead_letter(sqs, queue_b, dlq, 2)
    # WHEN the DLQ is redriven without a destination
    sqs.start_message_move_task(SourceArn=dlq.arn)
    assert _wait_for_task(sqs, dlq)["Status"] == "COMPLETED"
    # THEN each message is back in the queue it came from
    assert drain_bodies(sqs, queue_a, expected=1) == ["from-a"]
    assert drain_bodies(sqs, queue_b, expected=1) == ["from-b"]
    assert visible_count(sqs, dlq) == 0


def test_a_destination_deleted_mid_task_fails_the_task(sqs: SQSClient, fifo_queue: QueueFactory) -> None:
    """AWS: API_ListMessageMoveTasksResultEntry (Status FAILED with a FailureReason)."""
    # GIVEN ten dead messages being moved to another queue at 1 a second
    _, dlq = _dlq_with(sqs, fifo_queue, [f"m{i}" for i in range(10)])
    destination = fifo_queue("dest")
    sqs.start_message_move_task(
        SourceArn=dlq.arn, DestinationArn=destination.arn, MaxNumberOfMessagesPerSecond=1
    )
    # WHEN the destination is deleted
    sqs.delete_queue(QueueUrl=destination.url)
    # THEN the task fails with a reason, and what it did not move stays in the DLQ
    done = _wait_for_task(sqs, dlq)
    assert done["Status"] == "FAILED"
    assert done["FailureReason"]
    assert done["ApproximateNumberOfMessagesMoved"] < 10
    assert visible_count(sqs, dlq) == 10 - done["ApproximateNumberOfMessagesMoved"]


def test_cancel_refuses_a_handle_that_is_not_one(sqs: SQSClient) -> None:
    """AWS: API_CancelMessageMoveTask (TaskHandle; an invalid one is InvalidParameterValue)."""
    # WHEN a task is cancelled with a made-up handle THEN the call is refused
    with pytest.raises(ClientError) as caught:
        sqs.cancel_message_move_task(TaskHandle="not-a-handle")
    assert _error(caught) == ("InvalidParameterValue", "Value for parameter TaskHandle is invalid.")


def test_cancel_of_an_unknown_task_is_not_found(sqs: SQSClient, fifo_queue: QueueFactory) -> None:
    """AWS: API_CancelMessageMoveTask (ResourceNotFoundException: "One or more specified resources
    don't exist")."""
    # GIVEN a handle of AWS's form naming an existing queue and a task that never ran
    queue = fifo_queue("q")
    document = json.dumps({"taskId": str(uuid.uuid4()), "sourceArn": queue.arn}, separators=(",", ":"))
    # WHEN it is cancelled THEN the task is not found
    with pytest.raises(ClientError) as caught:
        sqs.cancel_message_move_task(TaskHandle=base64.b64encode(document.encode()).decode())
    assert _error(caught) == ("ResourceNotFoundException", "Task does not exist.")
