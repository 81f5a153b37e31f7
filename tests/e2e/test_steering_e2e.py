"""On the emulator: an MCP-like server steers the tool calls it queued (issue 30's end-to-end test).

The session's sample deployment holds the ``Notifications`` queue (claim mode, PARK, the notifier).
An MCP-like producer queues four sessions of six tool calls, one group per session:

* session 0 runs untouched: every call succeeds;
* session 1's client sends ``notifications/cancelled`` for its last three calls before they run: they
  are cancelled, never run, and the first three succeed;
* session 2 is held before its calls arrive, so nothing of it runs; released, its calls run in order;
* session 3 is held, its calls kept, the whole session cancelled (the client disconnected), then
  released: none of them runs, and a call sent after the cancel runs.

A second server steers live sessions (nothing held):

* a live session is cancelled mid-way (``cancel_group``: a marker through the group): its calls that
  ran before stay succeeded, the calls sent before the cancel never run, the calls sent after it run;
* a session's ``run_tests`` call is superseded twice (``send_superseding``): the two older runs are
  skipped (``superseded``, naming the newest), the newest runs, the session's other calls run in order;
* one tenant's calls spread over three sessions are paced across them by the queue's ``pace``
  (``NOTIFICATION_PACE_*``, key ``body:payload.tenant``): in any window of ``T`` no more than
  ``burst + rate * T`` of them ran (the runtime's own finish times, with a margin for a run's length),
  and each ran once, in order per session.

Every outcome is read through ``JobOutcomes`` and must match what ran: the notifier's store holds a
notification, never replayed, for exactly the calls that succeeded. Each run uses its own session ids.
"""

from __future__ import annotations

import uuid
from typing import Any

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
from constructs_fifo.demo.sample_app import (
    NOTIFICATION_KEY,
    NOTIFICATION_PACE_BURST,
    NOTIFICATION_PACE_JOBS,
    NOTIFICATION_PACE_PER_SECONDS,
    NOTIFICATION_TYPE,
    OUTPUT_NOTIFICATION_TABLE_NAME,
    REPLAYS_ATTRIBUTE,
    group_of,
    notification_result,
)
from constructs_fifo.local.event_source.runner import EventSourceRunner
from constructs_fifo.stacks.deployed import DeployedQueue

from .conftest import Deployment, drain

pytestmark = pytest.mark.e2e

SESSIONS = 4
CALLS = 6
DRAIN_LIMIT_SECONDS = 60.0
WAIT_SECONDS = 10.0
#: The paced tenant's sessions and calls per session.
TENANT_SESSIONS = 3
TENANT_CALLS = 3
#: How long before its recorded finish (its claim's SUCCEEDED write) a call's token may have been taken:
#: the run and the write, on a loaded emulator; generous, so it only loosens the bound.
RUN_MARGIN_MS = 1000


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


def _mcp_server(
    deployment: Deployment, notifications: DeployedQueue
) -> tuple[JobProducer, JobSteering, JobOutcomes]:
    """An MCP-like server's producer, steering client and outcome reader on the deployed queue."""
    dynamodb, sqs = deployment.target.client("dynamodb"), deployment.target.client("sqs")
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
    return JobProducer(notifications.queue_url, sqs_client=sqs), steering, outcomes


def test_an_mcp_server_cancels_holds_and_releases_sessions_and_every_outcome_matches_what_ran(
    deployment: Deployment, notifications: DeployedQueue, runner: EventSourceRunner
) -> None:
    # GIVEN an MCP-like server's producer, steering client and outcome reader on the deployed queue
    run = uuid.uuid4().hex[:8]
    producer, steering, outcomes = _mcp_server(deployment, notifications)
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


def _call(
    run: str, session: str, n: int, *, tenant: str | None = None, supersede: str | None = None
) -> JobMessage:
    payload: dict[str, Any] = {"channel": "mcp", "text": f"tools/call {n}"}
    if tenant is not None:
        payload["tenant"] = tenant
    return JobMessage(
        f"mcp-{run}-{session}-call{n}",
        NOTIFICATION_TYPE,
        payload,
        group=group_of(f"mcp-{run}-{session}"),
        supersede=supersede,
    )


def _most_in_a_window(finished_ms: list[int], interval_ms: float) -> list[tuple[int, float]]:
    """For every window between two finishes: how many finished in it, and the pace's bound on it."""
    ordered = sorted(finished_ms)
    return [
        (j - i + 1, NOTIFICATION_PACE_BURST + (ordered[j] - ordered[i] + RUN_MARGIN_MS) / interval_ms)
        for i in range(len(ordered))
        for j in range(i, len(ordered))
    ]


def test_an_mcp_server_cancels_a_live_session_midway_supersedes_a_run_and_paces_a_tenant(
    deployment: Deployment, notifications: DeployedQueue, runner: EventSourceRunner
) -> None:
    # GIVEN an MCP-like server's producer, steering client and outcome reader on the deployed (paced) queue
    run = uuid.uuid4().hex[:8]
    producer, steering, outcomes = _mcp_server(deployment, notifications)
    dynamodb = deployment.target.client("dynamodb")  # the notifier's store

    live = [_call(run, "live", n) for n in range(8)]
    tenant = f"tenant-{run}"
    paced = {
        s: [_call(run, f"t{s}", n, tenant=tenant) for n in range(TENANT_CALLS)]
        for s in range(TENANT_SESSIONS)
    }
    tests = [_call(run, "tests", n, supersede="run_tests" if n % 2 else None) for n in range(7)]
    runs = tests[1::2]

    # WHEN the live session's first three calls, the tenant's sessions (interleaved) and the tests
    # session (its run_tests sent superseding, three times) are sent, and the queue drained
    producer.send_batch(
        live[:3] + [call for n in range(TENANT_CALLS) for call in (c[n] for c in paced.values())]
    )
    for call in tests:
        if call.supersede:
            steering.send_superseding(producer, call)
        else:
            producer.send_batch([call])
    first = drain(runner, DRAIN_LIMIT_SECONDS)
    # AND the live session's next three calls are sent, the session cancelled mid-way (it is live: a
    # marker goes through it), two more calls sent after the cancel, and the queue drained
    producer.send_batch(live[3:6])
    group_cancel = steering.cancel_group(live[0].group, reason="notifications/cancelled", by="mcp")
    producer.send_batch(live[6:])
    second = drain(runner, DRAIN_LIMIT_SECONDS)

    every = live + tests + [c for calls in paced.values() for c in calls]
    seen = {c.job_id: outcomes.wait(c.job_id, WAIT_SECONDS, group=c.group, sent=True) for c in every}

    # THEN the live session's calls before the cancel that had run stay succeeded, those sent before it
    # never ran, those sent after it ran, in order
    assert group_cancel.marker_id
    assert [seen[c.job_id].status for c in live] == (
        [JobStatus.SUCCEEDED] * 3 + [JobStatus.CANCELLED] * 3 + [JobStatus.SUCCEEDED] * 2
    )
    # AND the older runs were skipped, naming the newest, which ran after the calls sent before it
    assert [(seen[r.job_id].status, seen[r.job_id].superseded_by) for r in runs[:-1]] == [
        (JobStatus.SUPERSEDED, runs[-1].job_id)
    ] * (len(runs) - 1)
    ran_tests = [c for c in tests if c not in runs[:-1]]
    assert [seen[c.job_id].status for c in ran_tests] == [JobStatus.SUCCEEDED] * len(ran_tests)
    # AND every tenant call ran, in order per session, never faster than the pace
    tenant_calls = every[len(live) + len(tests) :]
    assert [seen[c.job_id].status for c in tenant_calls] == [JobStatus.SUCCEEDED] * len(tenant_calls)
    finished = {job_id: outcome.updated_at_ms or 0 for job_id, outcome in seen.items()}
    for session in [live[:3], live[6:], ran_tests, *paced.values()]:
        assert [finished[c.job_id] for c in session] == sorted(finished[c.job_id] for c in session)
    interval_ms = NOTIFICATION_PACE_PER_SECONDS * 1000 / NOTIFICATION_PACE_JOBS
    windows = _most_in_a_window([finished[c.job_id] for c in tenant_calls], interval_ms)
    assert all(count <= bound for count, bound in windows), windows
    # (and they were paced: of n tokens the last came (n - burst) intervals after the first)
    span_ms = max(finished[c.job_id] for c in tenant_calls) - min(finished[c.job_id] for c in tenant_calls)
    assert span_ms >= (len(tenant_calls) - NOTIFICATION_PACE_BURST) * interval_ms - RUN_MARGIN_MS
    # AND every outcome matches what ran: a notification, never replayed, for exactly the succeeded calls
    table = deployment.outputs[OUTPUT_NOTIFICATION_TABLE_NAME]
    for call in every:
        outcome = seen[call.job_id]
        item = dynamodb.get_item(
            TableName=table, Key={NOTIFICATION_KEY: {"S": call.job_id}}, ConsistentRead=True
        )
        succeeded = outcome.status is JobStatus.SUCCEEDED
        assert ("Item" in item) is succeeded, call.job_id
        assert outcome.result == (notification_result(call.job_id) if succeeded else None)
        assert REPLAYS_ATTRIBUTE not in item.get("Item", {})
    assert first.outcomes.get("dead", 0) == second.outcomes.get("dead", 0) == 0
