"""A heartbeat round's one line: INFO when it renewed what it holds, else the worst of what happened."""

from __future__ import annotations

import io
import json
from typing import Any

from constructs_fifo.runtime.constants import METRIC_HEARTBEAT_FAILURES, METRIC_JOB_DURATION_EXCEEDED
from constructs_fifo.runtime.observability import JobLogger
from constructs_fifo.worker.rounds import HeartbeatRound


def _written(round_: HeartbeatRound) -> list[dict[str, Any]]:
    stream = io.StringIO()
    round_.write(JobLogger("Test", stream=stream), queue_name="jobs.fifo")
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_round_that_renewed_everything_is_one_info_line_without_metrics() -> None:
    # GIVEN a round that extended 3 records and renewed the job's lease
    round_ = HeartbeatRound("j1", 3)
    round_.renewed(visibility_timeout_seconds=300, lease_renewed=True)
    # WHEN it is written
    [line] = _written(round_)
    # THEN one INFO line says what was renewed, and carries no metric
    assert line == {
        "level": "INFO",
        "event": "heartbeat",
        "jobId": "j1",
        "records": 3,
        "visibilityTimeout": 300,
        "leaseRenewed": True,
    }


def test_a_round_with_two_failures_and_a_refusal_is_one_warning_line_of_the_worst() -> None:
    # GIVEN a round whose two calls failed and that then went stale
    round_ = HeartbeatRound("j1", 10)
    round_.note("visibility_renewal_failed", failure=True, error="timeout", action="tried again next tick")
    round_.note("claim_renewal_failed", failure=True, error="throttled", action="tried again next tick")
    round_.note("heartbeat_stale", failure=True, reason="nothing was renewed", action="the job is told")
    # WHEN it is written
    [line] = _written(round_)
    # THEN one WARNING line: the refusal's event, both errors, every action, three HeartbeatFailures
    assert (line["level"], line["event"], line["jobId"]) == ("WARNING", "heartbeat_stale", "j1")
    assert line["error"] == "timeout; throttled"
    assert line["action"] == "tried again next tick; the job is told"
    assert line[METRIC_HEARTBEAT_FAILURES] == 3
    assert METRIC_JOB_DURATION_EXCEEDED not in line


def test_a_stopped_run_is_counted_as_job_duration_exceeded() -> None:
    # GIVEN a round that stopped a run past its bound (no failure)
    round_ = HeartbeatRound("j1", 1)
    round_.note("job_duration_exceeded", exceeded=True, reason="the run passed max_job_duration (60 s)")
    # WHEN it is written
    [line] = _written(round_)
    # THEN it is the JobDurationExceeded metric, not a heartbeat failure
    assert (line["level"], line["event"], line[METRIC_JOB_DURATION_EXCEEDED]) == (
        "WARNING",
        "job_duration_exceeded",
        1,
    )
    assert METRIC_HEARTBEAT_FAILURES not in line
