"""The MCP example (examples/mcp_tools/server.py) on the emulator, driven by the MCP SDK's own client.

The server's tool ``notify`` is a job of the sample's claim-mode ``Notifications`` queue, found by
name (``QueueClient.from_stack``); the deployed mapping runs the jobs (``EventSourceRunner``, what
``constructs-fifo drain`` runs) in a background thread while the SDK's client (``mcp.Client``, in
process) calls the tools: calls of one session come back with their jobs' results, in their order; a
call the client cancels (its ``notifications/cancelled``) stops the server's wait and is recorded as
cancelled. Cancelling the job itself waits for the steering branch (issue 30): until then the server
records it only, and the job runs, its result unread.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest

from constructs_fifo.client import JobStatus, QueueClient
from constructs_fifo.demo.sample_app import (
    NOTIFICATION_QUEUE,
    NOTIFICATION_TYPE,
    STACK_NAME,
    notification_result,
)
from constructs_fifo.local.event_source.runner import EventSourceRunner
from constructs_fifo.stacks.deployed import resolve_queue

from .conftest import Deployment

pytestmark = pytest.mark.e2e

SERVER = Path(__file__).resolve().parents[2] / "examples" / "mcp_tools" / "server.py"
#: The bound of every call and of the background drain: the calls take a second or two.
LIMIT_SECONDS = 60.0


def _server_module() -> ModuleType:
    """The example's server, loaded from its file (examples/ is not a package)."""
    spec = importlib.util.spec_from_file_location("mcp_tools_server", SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass reads its own module while it is built
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def queue(deployment: Deployment) -> QueueClient:
    return QueueClient.from_stack(
        STACK_NAME,
        NOTIFICATION_QUEUE,
        cloudformation=deployment.target.client("cloudformation"),
        sqs=deployment.target.client("sqs"),
        dynamodb=deployment.target.client("dynamodb"),
    )


@dataclass
class Draining:
    """The queue's mapping, draining in a background thread."""

    runner: EventSourceRunner
    thread: threading.Thread

    def stop(self) -> None:
        while self.thread.is_alive():  # a stop asked before the drain began is cleared by it: ask again
            self.runner.stop()
            self.thread.join(timeout=0.5)


@pytest.fixture(scope="module")
def draining(deployment: Deployment) -> Iterator[Draining]:
    """The queue's mapping draining in a background thread for the module, as a live mapping would."""
    deployed = resolve_queue(STACK_NAME, target=deployment.target, queue=NOTIFICATION_QUEUE)
    with EventSourceRunner.from_function(
        deployed.function_name, target=deployment.target, queue_arn=deployed.queue_arn
    ) as runner:
        thread = threading.Thread(
            target=runner.drain, kwargs={"until_empty": False, "for_seconds": 4 * LIMIT_SECONDS}
        )
        thread.start()
        running = Draining(runner, thread)
        try:
            yield running
        finally:
            running.stop()


def _payload(text: str) -> dict[str, Any]:
    return {"channel": "mcp", "text": text}


def test_sessions_calls_come_back_with_their_results_in_order_and_a_cancelled_call_stops_waiting(
    queue: QueueClient, draining: Draining
) -> None:
    from mcp import Client

    server = _server_module().ToolsServer(queue, {"notify": NOTIFICATION_TYPE}, timeout_seconds=LIMIT_SECONDS)
    first, second = f"s{uuid.uuid4().hex[:8]}", f"s{uuid.uuid4().hex[:8]}"

    async def scenario() -> tuple[list[Any], list[Any]]:
        async with Client(server.mcp) as client:
            # WHEN one session calls three times in turn while another calls twice at the same time
            ordered = [
                await client.call_tool("notify", {"session": first, "arguments": _payload(f"call {n}")})
                for n in range(3)
            ]
            side: list[Any] = []

            async def call(n: int) -> None:
                side.append(
                    await client.call_tool("notify", {"session": second, "arguments": _payload(f"{n}")})
                )

            with anyio.fail_after(LIMIT_SECONDS):
                async with anyio.create_task_group() as group:
                    group.start_soon(call, 0)
                    group.start_soon(call, 1)
            # AND a call the client gives up on after a moment (its notifications/cancelled): the queue's
            # mapping is busy with nothing of it yet, so the server is still waiting when it comes
            await anyio.to_thread.run_sync(draining.stop)
            with anyio.move_on_after(1.0):
                await client.call_tool(
                    "notify", {"session": f"{first}-c", "arguments": _payload("cancel me")}
                )
            await anyio.sleep(0.5)
        return ordered, side

    ordered, side = anyio.run(scenario)
    # THEN each call answered with its own job's result (the toolCallId in the job id), in call order
    results = [call.structured_content for call in ordered]
    assert [r["result"] for r in results] == [notification_result(r["jobId"]) for r in results]
    assert [r["jobId"].split(":")[0] for r in results] == [first] * 3
    ids = [int(r["jobId"].split(":")[1]) for r in results]
    assert ids == sorted(ids)
    # AND the other session's calls came back too, in its own group
    assert sorted(call.structured_content["jobId"].split(":")[0] for call in side) == [second, second]
    assert {queue.get(r["jobId"], f"mcp#{first}").status for r in results} == {JobStatus.SUCCEEDED}
    # AND the cancelled call stopped the server's wait and is recorded as the client's cancel
    [cancelled] = server.cancelled
    assert cancelled.startswith(f"{first}-c:")
    assert (f"mcp#{first}-c", cancelled) in server.sent
    # AND, until steering's cancel is on main, its job is still queued: the mapping runs it (and the
    # queue is left empty for the session's other tests)
    assert queue.get(cancelled, f"mcp#{first}-c", sent=True).status is JobStatus.PENDING
    stats = draining.runner.drain(until_empty=True, for_seconds=LIMIT_SECONDS)
    assert stats.stopped is None, stats.stopped
    assert queue.get(cancelled, f"mcp#{first}-c").status is JobStatus.SUCCEEDED
