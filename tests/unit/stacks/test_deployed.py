"""Picking one queue of a stack: by construct path or queue name; ambiguity lists the candidates."""

from __future__ import annotations

import pytest

from constructs_fifo.stacks.deployed import DeployedQueue, select_queue
from constructs_fifo.stacks.errors import AmbiguousQueueError, QueueNotFoundError


def _queue(path: str | None, name: str) -> DeployedQueue:
    return DeployedQueue(
        stack="TwoQueues",
        construct_path=path,
        queue_name=name,
        queue_url=f"http://localhost:1/123456789012/{name}",
        queue_arn=f"arn:aws:sqs:us-east-1:123456789012:{name}",
        function_name=f"{name}-fn",
        function_environment={"CONSTRUCTS_FIFO_CLAIM_TABLE": f"{name}-claims"},
    )


FIRST = _queue("TwoQueues/First", "TwoQueues-First-1A.fifo")
SECOND = _queue("TwoQueues/Nested/Second", "TwoQueues-Second-2B.fifo")
BOTH = [FIRST, SECOND]


def test_a_stack_with_one_queue_needs_no_queue_option() -> None:
    assert select_queue("TwoQueues", [FIRST], None) is FIRST


@pytest.mark.parametrize(
    "wanted",
    [
        "TwoQueues/Nested/Second",  # full construct path
        "Nested/Second",  # relative to the stack
        "Nested",  # a construct above it
        "/TwoQueues/Nested/Second/",
        "TwoQueues-Second-2B.fifo",  # queue name
        "TwoQueues-Second-2B",  # without .fifo
        "http://localhost:1/123456789012/TwoQueues-Second-2B.fifo",  # queue URL
    ],
)
def test_queue_option_picks_by_construct_path_or_queue_name(wanted: str) -> None:
    assert select_queue("TwoQueues", BOTH, wanted) is SECOND


def test_an_ambiguous_stack_lists_every_candidate_and_how_to_pick() -> None:
    with pytest.raises(AmbiguousQueueError) as caught:
        select_queue("TwoQueues", BOTH, None)
    assert caught.value.message == (
        "stack 'TwoQueues' holds 2 queues: TwoQueues/First (queue TwoQueues-First-1A.fifo); "
        "TwoQueues/Nested/Second (queue TwoQueues-Second-2B.fifo); the command works on one"
    )
    assert (
        caught.value.fix == "pass --queue with a construct path or queue name, e.g. --queue TwoQueues/First"
    )


def test_a_queue_option_above_both_queues_is_ambiguous_too() -> None:
    with pytest.raises(AmbiguousQueueError, match="--queue 'TwoQueues' matches 2 queues"):
        select_queue("TwoQueues", BOTH, "TwoQueues")


def test_a_queue_option_naming_nothing_lists_what_there_is() -> None:
    with pytest.raises(
        QueueNotFoundError, match=r"no queue of stack 'TwoQueues' is named 'Third'.*it holds: "
    ):
        select_queue("TwoQueues", BOTH, "Third")
    # a path segment is matched whole, never as a prefix of a name
    with pytest.raises(QueueNotFoundError):
        select_queue("TwoQueues", BOTH, "Fir")


def test_a_stack_without_queues_says_so() -> None:
    with pytest.raises(QueueNotFoundError, match="holds no queue with an SQS event source mapping"):
        select_queue("Empty", [], None)


def test_without_construct_paths_queues_are_named_by_queue_name() -> None:
    bare = _queue(None, "jobs.fifo")
    assert bare.label == "jobs.fifo"
    assert bare.matches("jobs")
    assert not bare.matches("Stack/Jobs")
    assert bare.claim_table == "jobs.fifo-claims"
