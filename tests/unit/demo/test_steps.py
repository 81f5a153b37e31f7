"""The demo's shared steps: waiting for the deployed function, and what the sample app's queues must offer."""

from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest

from constructs_fifo.demo.errors import DemoError
from constructs_fifo.demo.steps import Prepared, results_or_cancel, sample_resources, wait_until_empty
from constructs_fifo.stacks.deployed import DeployedQueue


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
    seen: list[tuple[str, int, int]] = []
    # WHEN the demo waits for it
    wait_until_empty(
        queue,  # type: ignore[arg-type]
        "q.fifo",
        total=4,
        timeout=5,
        progress=lambda label, done, total: seen.append((label, done, total)),
        quiet_seconds=0,
        poll_seconds=0,
    )
    # THEN progress went 0 -> 2 -> 4 of 4, under the queue's name
    assert seen[:3] == [("q.fifo", 0, 4), ("q.fifo", 2, 4), ("q.fifo", 4, 4)]


def test_waiting_gives_up_with_a_fix_when_the_queue_never_empties() -> None:
    # GIVEN a queue nobody drains WHEN the demo waits THEN it stops with a DemoError naming the queue
    with pytest.raises(DemoError, match=r"the queue q\.fifo still holds messages") as caught:
        wait_until_empty(_Queue([3]), "q.fifo", total=3, timeout=0.05, poll_seconds=0.01)  # type: ignore[arg-type]
    assert "event source mapping" in caught.value.fix


def _queue(name: str, mode: str, **environment: str) -> DeployedQueue:
    return DeployedQueue(
        stack="AgentJobs",
        construct_path=f"AgentJobs/{name}",
        queue_name=f"AgentJobs-{name}.fifo",
        queue_url=f"http://localhost:1/123456789012/AgentJobs-{name}.fifo",
        queue_arn=f"arn:aws:sqs:us-east-1:123456789012:AgentJobs-{name}.fifo",
        function_name=f"fn-{name}",
        function_environment={"CONSTRUCTS_FIFO_MODE": mode, "CONSTRUCTS_FIFO_GROUP_TABLE": f"{name}-groups"}
        | environment,
        dead_letter_queue_url=f"http://localhost:1/123456789012/AgentJobs-{name}-dlq.fifo",
    )


WORKSPACES = _queue("Workspaces", "STATE", CONSTRUCTS_FIFO_MAX_ATTEMPTS="7")
NOTIFICATIONS = _queue(
    "Notifications", "CLAIM", CONSTRUCTS_FIFO_CLAIM_TABLE="claims", NOTIFICATION_TABLE_NAME="notes"
)


def test_the_sample_apps_queues_give_their_queues_dead_letter_queues_and_tables() -> None:
    # GIVEN the sample app's two queues WHEN the demo reads them THEN it gets what it sends to and reads
    resources = sample_resources(WORKSPACES, NOTIFICATIONS)
    assert resources.workspaces.label == "AgentJobs/Workspaces"
    assert resources.workspaces.queue_url.endswith("AgentJobs-Workspaces.fifo")
    assert resources.workspaces.dead_letter_queue_url.endswith("AgentJobs-Workspaces-dlq.fifo")
    assert resources.workspaces.group_table == "Workspaces-groups"
    assert resources.notifications.group_table == "Notifications-groups"
    assert resources.notification_table == "notes"
    # AND the workload learns the deployed max_attempts
    assert Prepared(WORKSPACES, NOTIFICATIONS, resources).max_attempts == 7


def test_queues_that_are_not_the_sample_apps_are_named_with_what_they_lack() -> None:
    # GIVEN a workspace queue in claim mode without a DLQ, and a notifier not told its table
    claim_mode = replace(
        WORKSPACES, function_environment={"CONSTRUCTS_FIFO_MODE": "CLAIM"}, dead_letter_queue_url=None
    )
    environment = {
        k: v for k, v in NOTIFICATIONS.function_environment.items() if k != "NOTIFICATION_TABLE_NAME"
    }
    no_table = replace(NOTIFICATIONS, function_environment=environment)
    # WHEN the demo reads them THEN the error names each queue and every missing piece
    with pytest.raises(DemoError) as caught:
        sample_resources(claim_mode, no_table)
    assert caught.value.message == (
        "stack AgentJobs is not the sample app: AgentJobs/Workspaces (queue AgentJobs-Workspaces.fifo) has "
        "no dead-letter queue, no group table (PARK policy or state mode), mode CLAIM instead of STATE; "
        "AgentJobs/Notifications (queue AgentJobs-Notifications.fifo) has no NOTIFICATION_TABLE_NAME in "
        "its function's environment; the demo needs the sample app's two queues"
    )
    assert "--stack" in caught.value.fix


@pytest.mark.usefixtures("ctrl_c_raises")
def test_ctrl_c_while_waiting_for_drains_on_other_threads_stops_them_all() -> None:
    # GIVEN two "drains" on other threads that run until cancelled (at most 20 s)
    cancel = threading.Event()

    def drain() -> str:
        return "cancelled" if cancel.wait(20) else "ran to the end"

    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {"a": pool.submit(drain), "b": pool.submit(drain)}
        # WHEN the main thread, waiting for their results, gets a Ctrl-C
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()  # this process only
        began = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            results_or_cancel(futures, cancel)
        # THEN both were told to stop, had stopped when it re-raised, and it took no time
        assert cancel.is_set()
        assert [f.result(timeout=0) for f in futures.values()] == ["cancelled", "cancelled"]
        assert time.monotonic() - began < 5


def test_results_of_drains_that_end_by_themselves_are_returned_by_key() -> None:
    # GIVEN two finished drains WHEN gathered THEN their results come back by key, nothing cancelled
    cancel = threading.Event()
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {"a": pool.submit(lambda: 1), "b": pool.submit(lambda: 2)}
        assert results_or_cancel(futures, cancel) == {"a": 1, "b": 2}
    assert not cancel.is_set()


def test_waiting_for_the_deployed_function_ends_when_cancelled() -> None:
    # GIVEN a queue nobody drains, and a cancel already set WHEN the demo waits THEN it returns at once
    cancel = threading.Event()
    cancel.set()
    began = time.monotonic()
    wait_until_empty(_Queue([3]), "q.fifo", total=3, timeout=60, poll_seconds=5, cancel=cancel)  # type: ignore[arg-type]
    assert time.monotonic() - began < 1
