"""One emulator and one deployment per session for the end-to-end tests.

The emulator is started the way a user starts it, ``constructs-fifo local serve``, and the sample
app is deployed with ``constructs-fifo deploy`` (the real CDK CLI). Every test then reuses that
deployment with its own seed, so workspaces and job ids never collide.

Several files run the sample's claim-mode ``Notifications`` queue (PARK, the notifier): its deployed
queue, its client and its local event source mapping are fixtures here (the mapping started once for the
session), and :func:`drain` / :func:`draining_in_background` drain it as ``constructs-fifo drain`` or a
live mapping would.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
from support.served import REGION, ROOT, Deployment, deploy, serve

from constructs_fifo.client import QueueClient
from constructs_fifo.demo.sample_app import NOTIFICATION_QUEUE, STACK_NAME
from constructs_fifo.local.event_source.reports import DrainStats
from constructs_fifo.local.event_source.runner import EventSourceRunner
from constructs_fifo.stacks.deployed import DeployedQueue, resolve_queue

__all__ = [
    "REGION",
    "ROOT",
    "BackgroundDrain",
    "Deployment",
    "deployment",
    "drain",
    "draining_in_background",
    "notifications",
    "queue",
    "runner",
]

#: What a deploy leaves behind (the CDK's assets hold copies of the package): never collected, or a second
#: run of these tests fails at collection with --doctest-modules.
collect_ignore_glob = ["*/cdk.out/*"]
#: Not collected by ``--doctest-modules``: it imports the deployed job code, present only when the
#: runner copies it next to that code.
collect_ignore = ["naive_consumer.py"]


@pytest.fixture(scope="session")
def deployment() -> Iterator[Deployment]:
    """``constructs-fifo local serve`` + ``constructs-fifo deploy``, once per session."""
    with serve() as emulator:
        yield deploy(emulator)


@pytest.fixture(scope="session")
def notifications(deployment: Deployment) -> DeployedQueue:
    """The sample's claim-mode ``Notifications`` queue, as deployed (claim mode, PARK)."""
    queue = resolve_queue(STACK_NAME, target=deployment.target, queue=NOTIFICATION_QUEUE)
    assert queue.claim_table is not None and queue.group_table is not None  # claim mode, PARK
    return queue


@pytest.fixture(scope="module")
def queue(deployment: Deployment) -> QueueClient:
    """The ``Notifications`` queue's client, found by the stack's and the queue's names (the outputs)."""
    return QueueClient.from_stack(
        STACK_NAME,
        NOTIFICATION_QUEUE,
        cloudformation=deployment.target.client("cloudformation"),
        sqs=deployment.target.client("sqs"),
        dynamodb=deployment.target.client("dynamodb"),
    )


@pytest.fixture(scope="session")
def runner(deployment: Deployment, notifications: DeployedQueue) -> Iterator[EventSourceRunner]:
    """The ``Notifications`` queue's local event source mapping, for every file that drains it: its
    workers stay warm between drains (a drain clears a stop asked after the one before it)."""
    with EventSourceRunner.from_function(
        notifications.function_name, target=deployment.target, queue_arn=notifications.queue_arn
    ) as mapping:
        yield mapping


def drain(runner: EventSourceRunner, limit_seconds: float) -> DrainStats:
    """Drain the queue until it is empty, as ``constructs-fifo drain`` does; it must end by itself."""
    stats = runner.drain(until_empty=True, for_seconds=limit_seconds)
    assert stats.stopped is None, stats.stopped
    return stats


@dataclass
class BackgroundDrain:
    """A mapping draining in a background thread, as a live event source mapping would."""

    runner: EventSourceRunner
    thread: threading.Thread

    def stop(self) -> None:
        """Stop the drain and wait for its thread (safe to call again)."""
        while self.thread.is_alive():  # a stop asked before the drain began is cleared by it: ask again
            self.runner.stop()
            self.thread.join(timeout=0.5)


@contextmanager
def draining_in_background(runner: EventSourceRunner, for_seconds: float) -> Iterator[BackgroundDrain]:
    """``runner`` draining (waiting for work, not until empty) at most ``for_seconds``; stopped on exit."""
    thread = threading.Thread(target=runner.drain, kwargs={"until_empty": False, "for_seconds": for_seconds})
    thread.start()
    background = BackgroundDrain(runner, thread)
    try:
        yield background
    finally:
        background.stop()
