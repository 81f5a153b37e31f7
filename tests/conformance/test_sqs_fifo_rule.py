"""The FIFO receive rule as observed on AWS: the front of a group, and the order of groups.

``constructs_fifo/local/emulator/fifo_rule.py`` states the rule every model of SQS in the project
follows; these tests pin the observations it rests on. They run against the emulator and unchanged
against real AWS with ``--aws``.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from .support import QueueFactory, receive, send

if TYPE_CHECKING:
    from collections.abc import Sequence

    from mypy_boto3_sqs.client import SQSClient
    from mypy_boto3_sqs.type_defs import MessageTypeDef


def _bodies(messages: Sequence[MessageTypeDef]) -> list[str]:
    return [m["Body"] for m in messages]


def test_a_groups_front_made_visible_again_is_returned_while_a_later_message_is_in_flight(
    sqs: SQSClient, fifo_queue: QueueFactory
) -> None:
    """AWS: knowledge-center sqs-fifo-messages-not-returned ("Inflight messages block delivery of
    available messages within the same message group") read with the observation on AWS: an
    in-flight message blocks the messages behind it, not its group's front."""
    # GIVEN g1-m1 and g1-m2 received together, then g2-m1 sent
    queue = fifo_queue("front")
    send(sqs, queue, "g1-m1", "g1")
    send(sqs, queue, "g1-m2", "g1")
    first = receive(sqs, queue, visibility=30)
    assert _bodies(first) == ["g1-m1", "g1-m2"]
    send(sqs, queue, "g2-m1", "g2")
    # WHEN g1-m1 is made visible again while g1-m2 stays in flight
    sqs.change_message_visibility(
        QueueUrl=queue.url, ReceiptHandle=first[0]["ReceiptHandle"], VisibilityTimeout=0
    )
    # THEN the next receive returns g2-m1 and g1-m1 (the group's front), and never g1-m2
    assert _bodies(receive(sqs, queue, visibility=30)) == ["g2-m1", "g1-m1"]


def test_a_group_is_served_up_to_its_first_message_in_flight(
    sqs: SQSClient, fifo_queue: QueueFactory
) -> None:
    """AWS: FIFO-queues-understanding-logic (strict order within a group) and the observation on
    AWS: with one message's visibility extended, the group's visible front is returned."""
    # GIVEN m1 m2 m3 of one group received with a 1-second visibility timeout
    queue = fifo_queue("upto")
    for body in ["m1", "m2", "m3"]:
        send(sqs, queue, body, "g")
    received = receive(sqs, queue, visibility=1)
    assert _bodies(received) == ["m1", "m2", "m3"]
    # WHEN m3's visibility is extended and the others' timeout ends
    sqs.change_message_visibility(
        QueueUrl=queue.url, ReceiptHandle=received[2]["ReceiptHandle"], VisibilityTimeout=30
    )
    time.sleep(1.2)
    # THEN the group is served from its front up to m3, in order, and m3 is not returned
    again = _bodies(receive(sqs, queue, wait=2, visibility=30))
    assert again in (["m1"], ["m1", "m2"])
    assert "m3" not in again


@pytest.mark.parametrize("visibility", [1, 0], ids=["timeout-1s", "timeout-0"])
def test_a_group_received_again_comes_after_the_groups_that_waited(
    sqs: SQSClient, fifo_queue: QueueFactory, visibility: int
) -> None:
    """AWS: knowledge-center sqs-fifo-messages-not-returned ("as many messages with the same message
    group ID as possible", then other groups) and the observation on AWS of the order of groups:
    a group ranks by when it last became available, so groups received again come after a group
    that waited all along (``fifo_rule``, rule 3)."""
    # GIVEN g1 (4 messages), g2 and g3 sent in that order, and a receive that got g1 and g2 only
    queue = fifo_queue(f"rank{visibility}")
    sent = [
        ("g1", "g1-m1"),
        ("g1", "g1-m2"),
        ("g1", "g1-m3"),
        ("g1", "g1-m4"),
        ("g2", "g2-m1"),
        ("g3", "g3-m1"),
    ]
    for group, body in sent:
        send(sqs, queue, body, group)
    first = receive(sqs, queue, max_messages=5, visibility=visibility)
    assert _bodies(first) == ["g1-m1", "g1-m2", "g1-m3", "g1-m4", "g2-m1"]
    # WHEN their visibility timeout ends and the queue is received again
    time.sleep(visibility + 0.2)
    again = receive(sqs, queue, wait=2, visibility=30)
    # THEN g3, which waited all along, comes first, then g1 and g2 in their old order
    assert _bodies(again) == ["g3-m1", "g1-m1", "g1-m2", "g1-m3", "g1-m4", "g2-m1"]
