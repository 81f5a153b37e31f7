"""The demo's shared steps: waiting for the deployed function, and what a sample queue must offer."""

from __future__ import annotations

from dataclasses import replace

import pytest

from constructs_fifo.local.demo.steps import sample_resources, wait_until_empty
from constructs_fifo.local.errors import DemoError
from constructs_fifo.local.stack import DeployedQueue


class _Queue:
    """A stand-in SQS client whose queue depth follows a script."""

    def __init__(self, depths: list[int]) -> None:
        self.depths = depths

    def get_queue_attributes(self, **_: object) -> dict[str, dict[str, str]]:
        depth = self.depths.pop(0) if len(self.depths) > 1 else self.depths[0]
        return {"Attributes": {"ApproximateNumberOfMessages": str(depth)}}


def test_waiting_for_the_deployed_function_reports_progress_until_quiet() -> None:
    # GIVEN a queue another consumer drains: 4, 2, then empty
    queue = _Queue([4, 2, 0])
    seen: list[tuple[int, int]] = []
    # WHEN the demo waits for it
    wait_until_empty(
        queue,  # type: ignore[arg-type]
        "q.fifo",
        total=4,
        timeout=5,
        progress=lambda done, total: seen.append((done, total)),
        quiet_seconds=0,
        poll_seconds=0,
    )
    # THEN progress went 0 -> 2 -> 4 of 4
    assert seen[:3] == [(0, 4), (2, 4), (4, 4)]


def test_waiting_gives_up_with_a_fix_when_the_queue_never_empties() -> None:
    # GIVEN a queue nobody drains WHEN the demo waits THEN it stops with a DemoError naming the queue
    with pytest.raises(DemoError, match=r"the queue q\.fifo still holds messages") as caught:
        wait_until_empty(_Queue([3]), "q.fifo", total=3, timeout=0.05, poll_seconds=0.01)  # type: ignore[arg-type]
    assert "event source mapping" in caught.value.fix


QUEUE = DeployedQueue(
    stack="AgentJobs",
    construct_path="AgentJobs/Jobs",
    queue_name="AgentJobs-1.fifo",
    queue_url="http://localhost:1/123456789012/AgentJobs-1.fifo",
    queue_arn="arn:aws:sqs:us-east-1:123456789012:AgentJobs-1.fifo",
    function_name="fn",
    function_environment={"CONSTRUCTS_FIFO_CLAIM_TABLE": "claims", "WORKSPACE_TABLE_NAME": "workspaces"},
    dead_letter_queue_url="http://localhost:1/123456789012/AgentJobs-1-dlq.fifo",
)


def test_a_sample_queue_gives_its_queue_dead_letter_queue_and_tables() -> None:
    # GIVEN the sample app's queue WHEN the demo reads it THEN it gets all four resources
    resources = sample_resources(QUEUE)
    assert resources.queue_url.endswith("AgentJobs-1.fifo")
    assert resources.dead_letter_queue_url.endswith("AgentJobs-1-dlq.fifo")
    assert (resources.claim_table, resources.workspace_table) == ("claims", "workspaces")


def test_a_queue_that_is_not_the_sample_apps_is_named_with_what_it_lacks() -> None:
    # GIVEN a queue whose function has no workspace table and which has no DLQ
    other = replace(QUEUE, function_environment={}, dead_letter_queue_url=None)
    # WHEN the demo reads it THEN the error names the queue and every missing piece
    with pytest.raises(DemoError) as caught:
        sample_resources(other)
    assert caught.value.message == (
        "queue AgentJobs/Jobs (queue AgentJobs-1.fifo) of stack AgentJobs has no dead-letter queue, no claim "
        "table, no WORKSPACE_TABLE_NAME in its function's environment; the demo needs a queue of the "
        "sample app"
    )
    assert "--queue" in caught.value.fix
