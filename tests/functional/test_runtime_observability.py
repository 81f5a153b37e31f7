"""Functional tests of the two outcome-line levels on real batches: same metrics, fewer lines."""

from __future__ import annotations

import io
import json
from collections import Counter
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.aws_limits import EMF_MAX_VALUES_PER_METRIC as EMF_MAX_VALUES
from constructs_fifo.runtime.constants import OutcomeLines
from constructs_fifo.runtime.exceptions import PermanentJobError
from constructs_fifo.runtime.observability import JobLogger, OutcomeStatus

from .runtime_harness import Harness, body, make_record

if TYPE_CHECKING:
    from constructs_fifo.runtime.job import Job


def _poison(job: Job) -> None:
    raise PermanentJobError(f"{job.id} can never apply")


def _transient(job: Job) -> None:
    raise RuntimeError(f"{job.id} flaked")


def _run_batches(harness: Harness, level: OutcomeLines, prefix: str) -> list[dict[str, Any]]:
    """Two batches: successes, a transient failure, a dead job; then the first jobs again (duplicates)."""
    harness.stream = io.StringIO()
    harness.behaviour[f"{prefix}-flaky"] = _transient
    harness.behaviour[f"{prefix}-poison"] = _poison
    names = ["a", "b", "flaky", "c", "poison", "d"]
    groups = ["ws#1", "ws#2", "ws#3", "ws#3", "ws#4", "ws#5"]
    first = [
        make_record(body(f"{prefix}-{n}"), group=f"{prefix}{g}") for n, g in zip(names, groups, strict=True)
    ]
    again = [
        make_record(body(f"{prefix}-{n}"), group=f"{prefix}{g}") for n, g in (("a", "ws#1"), ("b", "ws#2"))
    ]
    logger = JobLogger("Test", stream=harness.stream, clock=harness.clock, outcome_lines=level)
    for records in (first, again):
        harness.processor(logger=logger).process({"Records": records}, None)
    return [json.loads(line) for line in harness.stream.getvalue().splitlines()]


def _metric_totals(lines: list[dict[str, Any]]) -> tuple[Counter[str], Counter[str]]:
    """Per metric: the sum of its values and the number of its values, over every EMF line."""
    sums: Counter[str] = Counter()
    samples: Counter[str] = Counter()
    for line in lines:
        for directive in line.get("_aws", {}).get("CloudWatchMetrics", []):
            for metric in directive["Metrics"]:
                value = line[metric["Name"]]
                values = value if isinstance(value, list) else [value]
                sums[metric["Name"]] += round(sum(values), 3)
                samples[metric["Name"]] += len(values)
    return sums, samples


def test_the_batch_level_keeps_every_metric_sum_and_folds_successes_into_the_batch_line(
    harness: Harness,
) -> None:
    # GIVEN the same two batches (successes, a transient failure, a dead job, then duplicates) run once
    # with a line per outcome and once with successes summarized per batch
    job_lines = _run_batches(harness, OutcomeLines.JOB, "j")
    batch_lines = _run_batches(harness, OutcomeLines.BATCH, "b")
    # WHEN the metrics of each run are added up as CloudWatch would
    job_sums, job_samples = _metric_totals(job_lines)
    batch_sums, batch_samples = _metric_totals(batch_lines)
    # THEN every counter's sum is the same, and JobDuration has the same number of values
    assert job_sums["JobsSucceeded"] == 3
    assert job_sums["DuplicatesSkipped"] == 2
    assert {k: v for k, v in job_sums.items() if k not in {"JobDuration", "CapacityUnitsConsumed"}} == {
        k: v for k, v in batch_sums.items() if k not in {"JobDuration", "CapacityUnitsConsumed"}
    }
    assert job_samples["JobDuration"] == batch_samples["JobDuration"] == 5
    # AND at the batch level the failure and the dead job keep their own lines, the successes and
    # duplicates are named in their batch's line, and fewer bytes were written
    own = [line["status"] for line in batch_lines if "status" in line]
    assert own == ["FAILED", "SKIPPED", "DEAD_LETTERED"]
    first_batch, second_batch = (line for line in batch_lines if line.get("event") == "batch")
    assert [job[:3] for job in first_batch["jobs"]] == [
        ["b-a", "bws#1", "SUCCEEDED"],
        ["b-b", "bws#2", "SUCCEEDED"],
        ["b-d", "bws#5", "SUCCEEDED"],
    ]
    assert [job[2] for job in second_batch["jobs"]] == ["DUPLICATE", "DUPLICATE"]
    assert len("\n".join(map(json.dumps, batch_lines))) < 0.75 * len("\n".join(map(json.dumps, job_lines)))


def test_a_summary_longer_than_an_emf_array_is_written_in_parts() -> None:
    # GIVEN the batch level and more successes than one EMF array may hold
    out = io.StringIO()
    logger = JobLogger("Test", stream=out, outcome_lines=OutcomeLines.BATCH)
    for index in range(EMF_MAX_VALUES + 5):
        logger.outcome(
            OutcomeStatus.SUCCEEDED,
            queue_name="jobs.fifo",
            job_id=f"j{index}",
            group="g",
            job_type="t",
            attempt=1,
            message_id=f"m{index}",
            duration_ms=1.0,
        )
    # WHEN the batch ends
    logger.batch(queue_name="jobs.fifo", records=EMF_MAX_VALUES + 5)
    # THEN a full summary line was written early and the batch line holds the rest; no array passes
    # EMF's limit and the counts add up
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["event"] for line in lines] == ["summary", "batch"]
    assert [len(line["JobDuration"]) for line in lines] == [EMF_MAX_VALUES, 5]
    assert sum(line["JobsSucceeded"] for line in lines) == EMF_MAX_VALUES + 5
