"""Unit tests of the outcome lines: counters per status, error field, flushing."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from constructs_fifo.runtime.observability import JobLogger, OutcomeStatus, queue_name_from_arn


@pytest.mark.parametrize(
    ("status", "counters"),
    [
        (OutcomeStatus.SUCCEEDED, (1, 0, 0, 0, 0, 0, 0, 0)),
        (OutcomeStatus.FAILED, (0, 1, 0, 0, 0, 0, 0, 0)),
        (OutcomeStatus.FENCED, (0, 1, 0, 0, 0, 0, 0, 0)),
        (OutcomeStatus.DUPLICATE, (0, 0, 1, 0, 0, 0, 0, 0)),
        (OutcomeStatus.CONFLICT, (0, 0, 0, 1, 0, 0, 0, 0)),
        (OutcomeStatus.SKIPPED, (0, 0, 0, 0, 0, 0, 0, 0)),
        (OutcomeStatus.DEAD_LETTERED, (0, 0, 0, 0, 1, 0, 0, 0)),
        (OutcomeStatus.PARKED, (0, 0, 0, 0, 0, 1, 1, 0)),
        (OutcomeStatus.KEPT, (0, 0, 0, 0, 0, 0, 1, 0)),
        (OutcomeStatus.ERROR, (0, 1, 0, 0, 0, 0, 0, 0)),
        (OutcomeStatus.DEADLINE, (0, 0, 0, 0, 0, 0, 0, 0)),
        (OutcomeStatus.BUFFERED, (0, 0, 0, 0, 0, 0, 0, 1)),
        (OutcomeStatus.BUFFER_FULL, (0, 0, 0, 0, 0, 0, 0, 0)),
    ],
)
def test_each_status_sets_its_counter(status: OutcomeStatus, counters: tuple[int, ...]) -> None:
    # GIVEN a logger on a buffer / WHEN one outcome is written
    out = io.StringIO()
    JobLogger("NS", stream=out, clock=lambda: 1.5).outcome(
        status,
        queue_name="q.fifo",
        job_id="j",
        group="g",
        job_type="t",
        attempt=1,
        message_id="m",
        duration_ms=None,
        error="boom" if status is OutcomeStatus.FAILED else None,
    )
    # THEN exactly one line holds the eight counters, no JobDuration when the job did not run
    (raw,) = out.getvalue().splitlines()
    line = json.loads(raw)
    assert (
        line["JobsSucceeded"],
        line["JobsFailed"],
        line["DuplicatesSkipped"],
        line["ClaimConflicts"],
        line["JobsDeadLettered"],
        line["GroupsParked"],
        line["JobsKept"],
        line["JobsBuffered"],
    ) == counters
    assert "JobDuration" not in line
    assert line["_aws"]["Timestamp"] == 1500
    assert ("error" in line) is (status is OutcomeStatus.FAILED)


def test_queue_name_comes_from_an_arn_or_a_url() -> None:
    assert queue_name_from_arn("arn:aws:sqs:us-east-1:123456789012:jobs.fifo") == "jobs.fifo"
    assert queue_name_from_arn("https://sqs.us-east-1.amazonaws.com/123456789012/jobs.fifo") == "jobs.fifo"


def test_a_dead_job_whose_own_run_failed_counts_as_a_failed_attempt() -> None:
    # GIVEN / WHEN a dead-lettered job whose run failed in this invocation is logged
    out = io.StringIO()
    JobLogger("NS", stream=out).outcome(
        OutcomeStatus.DEAD_LETTERED,
        queue_name="q.fifo",
        job_id="j",
        group="g",
        job_type="t",
        attempt=5,
        message_id="m",
        duration_ms=3.0,
        attempt_failed=True,
    )
    # THEN it counts on both JobsFailed and JobsDeadLettered
    line = json.loads(out.getvalue())
    assert (line["JobsFailed"], line["JobsDeadLettered"]) == (1, 1)


def test_other_metrics_go_in_a_line_of_their_own_with_the_queue_dimension() -> None:
    # GIVEN a logger on a buffer / WHEN a group's gap metric is written
    out = io.StringIO()
    JobLogger("NS", stream=out, clock=lambda: 2.0).metrics(
        queue_name="q.fifo", values={"SequenceGapOpenSeconds": (12.5, "Seconds")}, group="ws#1"
    )
    # THEN one EMF line declares just that metric, with its value, dimension and fields
    line = json.loads(out.getvalue())
    assert line["_aws"]["CloudWatchMetrics"] == [
        {
            "Namespace": "NS",
            "Dimensions": [["QueueName"]],
            "Metrics": [{"Name": "SequenceGapOpenSeconds", "Unit": "Seconds"}],
        }
    ]
    assert (line["SequenceGapOpenSeconds"], line["QueueName"], line["group"]) == (12.5, "q.fifo", "ws#1")


def test_the_batch_line_carries_the_units_consumed_since_the_last_one_as_a_metric() -> None:
    # GIVEN a logger whose tally counted 3.5 units of a batch's calls
    out = io.StringIO()
    logger = JobLogger("Test", stream=out, clock=lambda: 1.0)
    logger.capacity.add(3.5)
    # WHEN two batches end
    logger.batch(queue_name="jobs.fifo", records=10)
    logger.batch(queue_name="jobs.fifo", records=1)
    # THEN the first line reports 3.5 units as CapacityUnitsConsumed (an EMF metric of the queue), the
    # second none: every unit is counted in one batch only
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert first["_aws"]["CloudWatchMetrics"][0]["Metrics"] == [
        {"Name": "CapacityUnitsConsumed", "Unit": "Count"}
    ]
    assert (first["QueueName"], first["event"], first["records"], first["CapacityUnitsConsumed"]) == (
        "jobs.fifo",
        "batch",
        10,
        3.5,
    )
    assert second["CapacityUnitsConsumed"] == 0.0


def test_a_record_logged_unparsed_gets_its_type_from_its_body() -> None:
    # GIVEN a kept record written with its job id only (as the processors log kept records), and a
    # malformed one
    from constructs_fifo.runtime.observability import OutcomeWriter

    out = io.StringIO()
    writer = OutcomeWriter(JobLogger("NS", stream=out, clock=lambda: 1.0), "q.fifo")
    body = json.dumps({"jobId": "j-1", "type": "apply_patch", "payload": {}})
    record: Any = {"messageId": "m-1", "body": body, "attributes": {"MessageGroupId": "ws#1"}}
    malformed: Any = {**record, "body": "{not json"}
    # WHEN their KEPT lines are written
    writer.write(OutcomeStatus.KEPT, record, job_id="j-1")
    writer.write(OutcomeStatus.KEPT, malformed, job_id=None)
    # THEN the well-formed one names its type, the malformed one none
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["type"] for line in lines if line.get("status") == "KEPT"] == ["apply_patch", None]


@pytest.mark.parametrize("duration_ms", [None, 12.34567])
def test_an_outcome_line_is_the_whole_document_encoded_in_its_order(duration_ms: float | None) -> None:
    # GIVEN a logger whose namespace needs escaping, and an outcome with extra fields
    out = io.StringIO()
    logger = JobLogger('N"S', stream=out, clock=lambda: 2.0)
    # WHEN two outcomes are written (the second reuses what the first encoded)
    for job_id in ("j1", "j2"):
        logger.outcome(
            OutcomeStatus.FAILED,
            queue_name="q.fifo",
            job_id=job_id,
            group="g",
            job_type="t",
            attempt=2,
            message_id="m",
            duration_ms=duration_ms,
            error="boom",
            action="retried",
            receiveCount=3,
        )
    # THEN each line is, byte for byte, the compact JSON of the EMF document in its declared order
    counters = {
        "JobsSucceeded": 0,
        "JobsFailed": 1,
        "DuplicatesSkipped": 0,
        "ClaimConflicts": 0,
        "JobsDeadLettered": 0,
        "GroupsParked": 0,
        "JobsKept": 0,
        "JobsBuffered": 0,
    }
    definitions = [{"Name": name, "Unit": "Count"} for name in counters]
    timing: dict[str, Any] = {}
    if duration_ms is not None:
        definitions.append({"Name": "JobDuration", "Unit": "Milliseconds"})
        timing = {"JobDuration": 12.346}
    expected = [
        {
            "_aws": {
                "Timestamp": 2000,
                "CloudWatchMetrics": [
                    {"Namespace": 'N"S', "Dimensions": [["QueueName"]], "Metrics": definitions}
                ],
            },
            "QueueName": "q.fifo",
            **counters,
            **timing,
            "jobId": job_id,
            "group": "g",
            "type": "t",
            "status": "FAILED",
            "attempt": 2,
            "duration_ms": timing.get("JobDuration"),
            "messageId": "m",
            "error": "boom",
            "action": "retried",
            "receiveCount": 3,
        }
        for job_id in ("j1", "j2")
    ]
    assert out.getvalue().splitlines() == [json.dumps(line, separators=(",", ":")) for line in expected]
