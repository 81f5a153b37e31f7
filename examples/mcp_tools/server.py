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
* **cancelling, for real**: on the client's ``notifications/cancelled`` the SDK cancels the call's
  handler; the server stops waiting and cancels the job through the queue (``QueueClient.cancel_async``,
  i.e. ``JobSteering.cancel``): a job not started yet **never runs** (its message is deleted when it
  arrives, the session's next call goes on) and its outcome reads ``cancelled``, with who and why. A
  call already running is stopped from further attempts and its result is not recorded (a container
  worker's run is told; a function runs to its end); one that finished is left as it was. The report
  of each cancel is kept in :attr:`ToolsServer.cancelled`. The same happens for any handler cancelled
  while it waits (e.g. the SDK cancelling a client's in-flight requests when its transport closes);
* **cancelling a session**: the ``cancel_session`` tool cancels every call of a session this server
  is still waiting for, one ``cancel`` per pending job id (each pending call then answers that its job
  was cancelled). Not ``cancel_group``: that cancels only the jobs a *held or parked* group keeps
  (docs/steering.md), so it would need a hold and waiting for the session's messages to be kept;
  cancelling the known pending ids needs neither, and leaves the session's group live for the
  calls that come after.

The server's role needs the construct's ``queue.grant_client(role)`` (send, read the outcomes) **and**
``queue.grant_steer(role)`` (cancel): a producer granted only to send cannot cancel.

Run it over stdio against a deployed queue::

    python examples/mcp_tools/server.py --stack McpTools --queue FastTools --tool run_tests=run_tests
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer

from constructs_fifo.client import CancelReport, JobStatus, QueueClient

#: How long a call waits for its job before answering that it is still running.
DEFAULT_TIMEOUT_SECONDS = 60.0
#: The reason a cancelled call's job outcome carries.
CANCELLED_BY_CLIENT = "notifications/cancelled"
#: The reason the jobs cancelled by the ``cancel_session`` tool carry.
SESSION_CANCELLED = "cancel_session"


@dataclass
class ToolsServer:
    """The MCP server (:attr:`mcp`) and what it did: the jobs it sent, those it waits for, and its cancels.

    Parameters
    ----------
    queue:
        The queue the jobs go to (``QueueClient.from_stack`` / ``from_environment``), its role granted
        ``grant_client`` and ``grant_steer``.
    tools:
        Tool name -> job type: each tool's arguments are its job's payload.
    timeout_seconds:
        How long a call waits for its job.

    Attributes
    ----------
    sent:
        ``(group, job id)`` of every job sent.
    pending:
        Session -> the job ids of its calls still waiting.
    cancelled:
        The report of every cancel the server asked of the queue (``CancelReport``: the job id and
        what the cancel found: ``NOT_STARTED`` means the job never runs).
    """

    queue: QueueClient
    tools: Mapping[str, str]
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    sent: list[tuple[str, str]] = field(default_factory=list)
    pending: dict[str, set[str]] = field(default_factory=dict)
    cancelled: list[CancelReport] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.mcp = MCPServer("constructs-fifo-tools")
        for name, job_type in self.tools.items():
            self._add(name, job_type)

        async def cancel_session(session: str) -> dict[str, Any]:
            return await self.cancel_session(session)

        self.mcp.add_tool(
            cancel_session,
            name="cancel_session",
            description="Cancels every call of the session still waiting: their jobs that have not "
            "started never run.",
        )

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
        group = group_of(session)
        job_id = f"{session}:{ctx.request_id}"
        self.sent.append((group, job_id))
        waiting = self.pending.setdefault(session, set())
        waiting.add(job_id)  # before the send: a cancel during the send still finds it
        try:
            outcome = await self.queue.send_and_wait_async(
                job_id, job_type, payload, group=group, timeout_seconds=self.timeout_seconds
            )
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):  # the call is cancelled; the cancel of its job is not
                await self._cancel(job_id, session, CANCELLED_BY_CLIENT)
            raise
        finally:
            waiting.discard(job_id)
        if outcome.status is JobStatus.SUCCEEDED:
            return {"jobId": job_id, "result": outcome.result}
        raise RuntimeError(f"job {job_id} is {outcome.status.value}: {outcome.detail}")

    async def cancel_session(self, session: str) -> dict[str, Any]:
        """Cancel every call of ``session`` still waiting (each one's job by its id): answers the job
        ids whose jobs never run (``cancelled``) and the others with what their cancel found."""
        reports = [
            await self._cancel(job_id, session, SESSION_CANCELLED)
            for job_id in sorted(self.pending.get(session, ()))
        ]
        return {
            "cancelled": [r.job_id for r in reports if r.outcome.cancelled],
            "notCancelled": {r.job_id: r.outcome.value for r in reports if not r.outcome.cancelled},
        }

    async def _cancel(self, job_id: str, session: str, reason: str) -> CancelReport:
        """Cancel one job through the queue (``JobSteering.cancel``), keeping its report."""
        report = await self.queue.cancel_async(
            job_id, group=group_of(session), reason=reason, by=f"mcp session {session}"
        )
        self.cancelled.append(report)
        return report


def group_of(session: str) -> str:
    """The queue group of a session's calls."""
    return f"mcp#{session}"


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
