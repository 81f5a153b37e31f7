"""An MCP server whose tools are jobs of an ``OrderedAgentQueue``, on the official MCP Python SDK.

Every ``tools/call`` becomes one job of the queue and the call's answer is the job's result:

* **one group per session**: the calls of one session run one at a time, in the order they came, and
  two sessions run side by side (the group is ``mcp#<session>``). The session is named by the client
  (each tool's ``session`` argument, e.g. a uuid per conversation): with the 2026-07-28 protocol the SDK
  serves every request on its own (mcp 2.3.0 builds a new session object per request, observed), so a
  server cannot tell a client's calls apart by connection;
* **the toolCallId is the job id**: the JSON-RPC id of the ``tools/call``, unique within the client's
  session, so the job id is ``<session>:<id>``: a client that retries a call with the same id does not
  run it twice (the job id is the deduplication id, and the claim's key). A session name is for one
  client's run of ids: a client that starts its ids again takes a new session name;
* **waiting for results**: ``QueueClient.send_and_wait_async``, each AWS request in a worker thread
  and each pause an ``asyncio.sleep``, so the server's event loop serves other calls meanwhile;
* **cancelling**: on the client's ``notifications/cancelled`` the SDK cancels the call's handler; the
  server stops waiting, records the job as cancelled by the client (:attr:`ToolsServer.cancelled`)
  and asks the queue to cancel it with ``cancel_job``. **Until the steering branch's cancel
  (``JobSteering.cancel``, issue 30) is on main** the default ``cancel_job`` only records it: the job
  stays queued and runs, its result unread. Pass ``cancel_job=JobSteering(...).cancel`` wrapped for
  asyncio once it is there (see ``README.md`` here).

Run it over stdio against a deployed queue::

    python examples/mcp_tools/server.py --stack McpTools --queue FastTools --tool run_tests=run_tests
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer

from constructs_fifo.client import JobStatus, QueueClient

#: What ``cancel_job`` is called with: the job id, its group, and why.
CancelJob = Callable[[str, str, str], Awaitable[None]]
#: How long a call waits for its job before answering that it is still running.
DEFAULT_TIMEOUT_SECONDS = 60.0


async def record_only(job_id: str, group: str, reason: str) -> None:
    """The default ``cancel_job`` until steering's cancel is on main: nothing to ask the queue."""


@dataclass
class ToolsServer:
    """The MCP server (:attr:`mcp`) and what it did: the jobs it sent, and those its clients cancelled.

    Parameters
    ----------
    queue:
        The queue the jobs go to (``QueueClient.from_stack`` / ``from_environment``).
    tools:
        Tool name -> job type: each tool's arguments are its job's payload.
    timeout_seconds:
        How long a call waits for its job.
    cancel_job:
        Asked to cancel a job whose call the client cancelled (see the module docstring).
    """

    queue: QueueClient
    tools: Mapping[str, str]
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    cancel_job: CancelJob = record_only
    sent: list[tuple[str, str]] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.mcp = MCPServer("constructs-fifo-tools")
        for name, job_type in self.tools.items():
            self._add(name, job_type)

    def _add(self, name: str, job_type: str) -> None:
        async def call(session: str, arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
            return await self.run(job_type, session, arguments, ctx)

        self.mcp.add_tool(
            call,
            name=name,
            description=f"Runs a {job_type!r} job of the queue; the calls of one session run in order.",
        )

    async def run(self, job_type: str, session: str, payload: dict[str, Any], ctx: Context) -> dict[str, Any]:
        """One call: send its job in the session's group, wait for it, answer with its result."""
        group = f"mcp#{session}"
        job_id = f"{session}:{ctx.request_id}"
        self.sent.append((group, job_id))
        try:
            outcome = await self.queue.send_and_wait_async(
                job_id, job_type, payload, group=group, timeout_seconds=self.timeout_seconds
            )
        except anyio.get_cancelled_exc_class():
            self.cancelled.append(job_id)
            with anyio.CancelScope(shield=True):  # the call is cancelled; the cancel itself is not
                await self.cancel_job(job_id, group, "notifications/cancelled")
            raise
        if outcome.status is JobStatus.SUCCEEDED:
            return {"jobId": job_id, "result": outcome.result}
        raise RuntimeError(f"job {job_id} is {outcome.status.value}: {outcome.detail}")


def main() -> None:  # pragma: no cover - the stdio entry point
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", required=True)
    parser.add_argument("--queue")
    parser.add_argument("--tool", action="append", required=True, help="NAME=JOB_TYPE, once per tool")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_SECONDS)
    args = parser.parse_args()
    tools = dict(tool.split("=", 1) for tool in args.tool)
    server = ToolsServer(QueueClient.from_stack(args.stack, args.queue), tools, args.timeout)
    server.mcp.run()


if __name__ == "__main__":  # pragma: no cover
    main()
