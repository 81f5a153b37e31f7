"""The MCP example (examples/mcp_tools/server.py) on the emulator, driven by the MCP SDK's own client.

The server's tool ``notify`` is a job of the sample's claim-mode ``Notifications`` queue, found by
name (``QueueClient.from_stack``); the deployed mapping runs the jobs (``EventSourceRunner``, what
``constructs-fifo drain`` runs) in a background thread while the SDK's client (``mcp.Client``, in
process) calls the tools: calls of one session come back with their jobs' results, in their order; a
call the client cancels (its ``notifications/cancelled``) has its job cancelled through the queue
(``QueueClient.cancel_async``), and the ``cancel_session`` tool cancels a session's pending calls: their
jobs' outcomes read ``cancelled`` and, when the mapping delivers their messages, none of them runs (the
function log has no outcome of theirs but ``CANCELLED``).
"""

from __future__ import annotations

import importlib.util
import json
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest

from constructs_fifo.client import CancelOutcome, JobStatus, QueueClient
from constructs_fifo.demo.sample_app import (
    NOTIFICATION_TYPE,
    notification_result,
)
from constructs_fifo.local.event_source.runner import EventSourceRunner

from .conftest import BackgroundDrain, draining_in_background

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
def draining(runner: EventSourceRunner) -> Iterator[BackgroundDrain]:
    """The queue's mapping draining in a background thread for the module, as a live mapping would."""
    with draining_in_background(runner, 4 * LIMIT_SECONDS) as background:
        yield background


def _payload(text: str) -> dict[str, Any]:
    return {"channel": "mcp", "text": text}


def _logged_statuses(function_log: str | None, job_ids: set[str]) -> dict[str, set[str]]:
    """The statuses of the function log's outcome lines of ``job_ids``."""
    assert function_log is not None
    statuses: dict[str, set[str]] = {job_id: set() for job_id in job_ids}
    for line in Path(function_log).read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("jobId") in job_ids and "status" in record:
            statuses[record["jobId"]].add(str(record["status"]))
    return statuses


def test_sessions_calls_come_back_in_order_and_cancelled_calls_never_run(
    queue: QueueClient, draining: BackgroundDrain
) -> None:
    from mcp import Client

    server = _server_module().ToolsServer(queue, {"notify": NOTIFICATION_TYPE}, timeout_seconds=LIMIT_SECONDS)
    first, second = f"s{uuid.uuid4().hex[:8]}", f"s{uuid.uuid4().hex[:8]}"
    gone = f"{first}-gone"

    async def scenario() -> tuple[list[Any], list[Any], list[Any], Any]:
        async with Client(server.mcp) as client:
            # WHEN one session calls three times in turn while another calls twice at the same time
            ordered = [
                await client.call_tool("notify", {"session": first, "arguments": _payload(f"call {n}")})
                for n in range(3)
            ]
            side: list[Any] = []

            async def call(session: str, n: int, into: list[Any]) -> None:
                into.append(
                    await client.call_tool("notify", {"session": session, "arguments": _payload(f"{n}")})
                )

            with anyio.fail_after(LIMIT_SECONDS):
                async with anyio.create_task_group() as group:
                    group.start_soon(call, second, 0, side)
                    group.start_soon(call, second, 1, side)
            # AND, the mapping stopped (nothing of what follows can start), a call the client gives up
            # on after a moment (its notifications/cancelled) while the server waits for its job
            await anyio.to_thread.run_sync(draining.stop)
            with anyio.move_on_after(1.0):
                await client.call_tool(
                    "notify", {"session": f"{first}-c", "arguments": _payload("cancel me")}
                )
            # AND a session whose two pending calls are cancelled with the cancel_session tool
            answered: list[Any] = []
            with anyio.fail_after(LIMIT_SECONDS):
                async with anyio.create_task_group() as group:
                    group.start_soon(call, gone, 0, answered)
                    group.start_soon(call, gone, 1, answered)
                    while len(server.pending.get(gone, ())) < 2:
                        await anyio.sleep(0.05)
                    session_cancel = await client.call_tool("cancel_session", {"session": gone})
            await anyio.sleep(0.5)
        return ordered, side, answered, session_cancel

    ordered, side, answered, session_cancel = anyio.run(scenario)
    # THEN each call answered with its own job's result (the toolCallId in the job id), in call order
    results = [call.structured_content for call in ordered]
    assert [r["result"] for r in results] == [notification_result(r["jobId"]) for r in results]
    assert [r["jobId"].split(":")[0] for r in results] == [first] * 3
    ids = [int(r["jobId"].split(":")[1]) for r in results]
    assert ids == sorted(ids)
    # AND the other session's calls came back too, in its own group, with their results
    assert sorted(call.structured_content["jobId"].split(":")[0] for call in side) == [second, second]
    assert all(
        call.structured_content["result"] == notification_result(call.structured_content["jobId"])
        for call in side
    )
    assert {queue.get(r["jobId"], f"mcp#{first}").status for r in results} == {JobStatus.SUCCEEDED}
    # AND the client's cancelled call had its job cancelled before it started
    [client_cancel, *session_cancels] = server.cancelled
    assert client_cancel.job_id.startswith(f"{first}-c:")
    assert client_cancel.outcome is CancelOutcome.NOT_STARTED
    # AND cancel_session cancelled both pending calls of its session, which answered that
    assert sorted(session_cancel.structured_content["cancelled"]) == sorted(r.job_id for r in session_cancels)
    assert [r.outcome for r in session_cancels] == [CancelOutcome.NOT_STARTED] * 2
    assert [call.is_error for call in answered] == [True, True]
    assert server.pending[gone] == set()
    cancelled = {
        client_cancel.job_id: f"mcp#{first}-c",
        **{r.job_id: f"mcp#{gone}" for r in session_cancels},
    }

    # WHEN the mapping delivers their messages
    stats = draining.runner.drain(until_empty=True, for_seconds=LIMIT_SECONDS)
    assert stats.stopped is None, stats.stopped

    # THEN none of them ran: their outcomes stay cancelled, with no result, and the function log has
    # no outcome of theirs but CANCELLED
    outcomes = {job_id: queue.get(job_id, group) for job_id, group in cancelled.items()}
    assert {o.status for o in outcomes.values()} == {JobStatus.CANCELLED}
    assert [o.result for o in outcomes.values()] == [None] * 3
    assert outcomes[client_cancel.job_id].cancel_reason == "notifications/cancelled"
    assert stats.outcomes["succeeded"] == 0
    logged = _logged_statuses(stats.function_log, set(cancelled))
    assert logged == {job_id: {"CANCELLED"} for job_id in cancelled}
