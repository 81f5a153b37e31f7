"""On the emulator: an MCP-like server steers the tool calls it queued (issue 30's end-to-end test).

The session's sample deployment holds the ``Notifications`` queue (claim mode, PARK, the notifier).
An MCP-like producer queues four sessions of six tool calls, one group per session:

* session 0 runs untouched: every call succeeds;
* session 1's client sends ``notifications/cancelled`` for its last three calls before they run: they
  are cancelled, never run, and the first three succeed;
* session 2 is held before its calls arrive, so nothing of it runs; released, its calls run in order;
* session 3 is held, its calls kept, the whole session cancelled (the client disconnected), then
  released: none of them runs, and a call sent after the cancel runs.

Every outcome is read through ``JobOutcomes`` and must match what ran: the notifier's store holds a
notification for exactly the calls that succeeded. Each run uses its own session ids.
"""

from __future__ import annotations

import uuid

import pytest

from constructs_fifo.client import (
    CancelOutcome,
    HoldOutcome,
    JobMessage,
    JobOutcomes,
    JobProducer,
    JobStatus,
    JobSteering,
)
from constructs_fifo.demo.sample_app import NOTIFICATION_TYPE, group_of
from constructs_fifo.local.event_source.runner import EventSourceRunner
from constructs_fifo.stacks.deployed import DeployedQueue

from .conftest import Deployment, drain

pytestmark = pytest.mark.e2e

SESSIONS = 4
CALLS = 6
DRAIN_LIMIT_SECONDS = 60.0
WAIT_SECONDS = 10.0


def _calls(run: str, session: int, first: int = 0, count: int = CALLS) -> list[JobMessage]:
    group = group_of(f"mcp-{run}-s{session}")
    return [
        JobMessage(
            f"mcp-{run}-s{session}-call{n}",
            NOTIFICATION_TYPE,
            {"channel": "mcp", "text": f"tools/call {n}"},
            group=group,
        )
        for n in range(first, first + count)
    ]


def test_an_mcp_server_cancels_holds_and_releases_sessions_and_every_outcome_matches_what_ran(
    deployment: Deployment, notifications: DeployedQueue, runner: EventSourceRunner
) -> None:
    # GIVEN an MCP-like server's producer, steering client and outcome reader on the deployed queue
    run = uuid.uuid4().hex[:8]
    dynamodb, sqs = deployment.target.client("dynamodb"), deployment.target.client("sqs")
    producer = JobProducer(notifications.queue_url, sqs_client=sqs)
    steering = JobSteering(
        claim_table=notifications.claim_table,
        group_table=notifications.group_table,
        dynamodb=dynamodb,
        sqs=sqs,
        queue_url=notifications.queue_url,
    )
    outcomes = JobOutcomes(
        claim_table=notifications.claim_table, group_table=notifications.group_table, dynamodb=dynamodb
    )
    sessions = {s: _calls(run, s) for s in range(SESSIONS)}
    groups = {s: calls[0].group for s, calls in sessions.items()}

    # WHEN sessions 2 and 3 are held before their calls arrive, all four sessions' calls are sent,
    # and session 1's client cancels its last three calls before any runs
    assert steering.hold(groups[2], reason="user is looking").outcome is HoldOutcome.HELD
    assert steering.hold(groups[3]).outcome is HoldOutcome.HELD
    producer.send_batch([call for calls in sessions.values() for call in calls])
    cancelled = [
        steering.cancel(call.job_id, group=call.group, reason="notifications/cancelled", by="mcp")
        for call in sessions[1][3:]
    ]
    drain(runner, DRAIN_LIMIT_SECONDS)

    # THEN session 0 succeeded; session 1's first three succeeded, its last three never ran
    def status(call: JobMessage) -> JobStatus:
        # a default wait goes on through `held` (the job may run after a release) until its timeout;
        # stopping there reads a held job's status at once, and any other status as the wait gives it
        seen = outcomes.wait(call.job_id, WAIT_SECONDS, group=call.group, sent=True, stop_at_parked=True)
        return seen.status

    assert [r.outcome for r in cancelled] == [CancelOutcome.NOT_STARTED] * 3
    assert [status(c) for c in sessions[0]] == [JobStatus.SUCCEEDED] * CALLS
    assert [status(c) for c in sessions[1]] == [JobStatus.SUCCEEDED] * 3 + [JobStatus.CANCELLED] * 3
    assert all(outcomes.get(c.job_id).result is None for c in sessions[1][3:])
    # AND nothing of the held sessions ran
    assert [status(c) for s in (2, 3) for c in sessions[s]] == [JobStatus.HELD] * (2 * CALLS)

    # WHEN session 3's client disconnects (its kept calls are cancelled), a new call is sent to it,
    # and both sessions are released
    group_cancel = steering.cancel_group(groups[3], reason="client disconnected")
    after = _calls(run, 3, first=CALLS, count=1)
    producer.send_batch(after)
    assert steering.release(groups[2]).outcome is HoldOutcome.RELEASED
    assert steering.release(groups[3]).outcome is HoldOutcome.RELEASED
    drain(runner, DRAIN_LIMIT_SECONDS)

    # THEN session 2's calls all ran, in the order sent; session 3's kept calls never ran, the call
    # sent after the cancel did; no group of the test is held or parked
    assert group_cancel.cancelled == CALLS
    assert [status(c) for c in sessions[2]] == [JobStatus.SUCCEEDED] * CALLS
    finished = [outcomes.get(c.job_id).updated_at_ms or 0 for c in sessions[2]]
    assert finished == sorted(finished)
    assert [status(c) for c in sessions[3]] == [JobStatus.CANCELLED] * CALLS
    assert status(after[0]) is JobStatus.SUCCEEDED
    assert all(steering.release(groups[s]).outcome is HoldOutcome.NOT_HELD for s in (2, 3))
