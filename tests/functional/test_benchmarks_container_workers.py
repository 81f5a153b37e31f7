"""Figure 11 (``python -m benchmarks --only 11``) at a tiny size: the worker's heartbeats are counted and
metered through a job on a fake clock, both CPU paths run every job once, a worker with slots runs every
job once, and the dollars follow from the counts and the prices. No timing is asserted."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from benchmarks import report
from benchmarks.container_workers import (
    CPU_PATHS,
    HEARTBEAT_JOB_MINUTES,
    IN_PROCESS,
    dollars_per_million,
    measure_cpu,
    measure_heartbeat,
    measure_slots,
)
from benchmarks.prices import DYNAMODB_WRITE, FARGATE_GB_HOUR, FARGATE_VCPU_HOUR, SQS_FIFO_REQUEST

pytestmark = pytest.mark.usefixtures("bench_environment")


@pytest.mark.parametrize(("interval_s", "ticks"), [(30, 20), (60, 10)])
def test_each_heartbeat_of_a_ten_minute_job_is_one_visibility_request_and_one_write_unit(
    interval_s: int, ticks: int
) -> None:
    # GIVEN a batch of 10 records whose first job holds its claim for 10 minutes of a fake clock
    # WHEN the worker's heartbeat is ticked once an interval
    cost = measure_heartbeat(interval_s)
    # THEN every tick sent one ChangeMessageVisibilityBatch for the whole batch and renewed the claim
    # with one UpdateItem of one write unit (the claim item is under 1 KB); the run never went stale
    assert (cost.job_minutes, cost.ticks, cost.stale) == (HEARTBEAT_JOB_MINUTES, ticks, False)
    assert (cost.sqs_requests, cost.dynamodb_calls, cost.write_units) == (ticks, ticks, float(ticks))
    assert cost.sqs_per_minute == cost.write_units_per_minute == 60 / interval_s


def test_the_lambda_and_worker_paths_run_every_job_once_on_the_same_responder() -> None:
    # GIVEN / WHEN 20 new jobs a path, twice, alternating between the Lambda handler, a worker slot and
    # the slot's processor alone
    cpu = measure_cpu(jobs=20, groups=4, repeats=2)
    # THEN each path ran every job once and none failed (the CPU figures themselves are not asserted)
    assert cpu.jobs == 40
    assert cpu.ran == dict.fromkeys(CPU_PATHS, 40)
    assert cpu.failures == dict.fromkeys(CPU_PATHS, 0)
    assert set(cpu.us_per_job) == set(CPU_PATHS)


def test_a_worker_with_slots_runs_every_job_once() -> None:
    # GIVEN / WHEN one worker with 4 slots runs 24 jobs over the figure's groups on moto
    [run] = measure_slots([4], jobs=24, backend=IN_PROCESS)
    # THEN every job ran, each once
    assert (run.slots, run.jobs, run.done, run.runs) == (4, 24, 24, 24)


def test_the_dollars_of_a_ten_minute_job_follow_from_the_task_size_the_slots_and_the_counted_heartbeats() -> (
    None
):
    # GIVEN the heartbeats of a 10-minute job at the default interval (20 requests, 20 write units)
    beat = measure_heartbeat(30)
    # WHEN its dollars per million jobs are priced
    priced = {cost.subject: cost for cost in dollars_per_million(beat)}
    # THEN a 1 vCPU / 2 GB task is billed a sixth of an hour per job, shared by its slots, and the
    # heartbeats add what their counts cost; Lambda is billed 600 s at its memory plus one request
    task_hour = FARGATE_VCPU_HOUR.dollars + 2 * FARGATE_GB_HOUR.dollars
    one, four = (
        priced["Fargate 1 vCPU 2 GB, 1 slot per task"],
        priced["Fargate 1 vCPU 2 GB, 4 slots per task"],
    )
    assert math.isclose(one.parts["Fargate"], task_hour / 6 * 1e6)
    assert math.isclose(four.parts["Fargate"], one.parts["Fargate"] / 4)
    assert math.isclose(one.parts["heartbeat SQS"], 20 * SQS_FIFO_REQUEST.dollars)
    assert math.isclose(one.parts["heartbeat DynamoDB"], 20 * DYNAMODB_WRITE.dollars)
    small = priced["Lambda 256 MB, one job per invocation"]
    assert math.isclose(small.parts["Lambda duration"], 600 * 0.25 * 0.0000166667 * 1e6)
    assert math.isclose(small.parts["Lambda requests"], 0.20)


def test_only_11_runs_figure_11_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN / WHEN a run asks for figure 11 alone, with one CPU run and no slot runs
    status = report.main(
        ["--only", "11", "--cpu-repeats", "1", "--worker-jobs", "0", "--json", "--out", str(tmp_path)]
    )
    data = json.loads(capsys.readouterr().out)
    # THEN only figure 11 has rows: the counted heartbeats, the CPU against Lambda's, the skipped slot
    # runs and the dollars; and the run names the figures it did not run
    assert status == 0
    assert data["problems"] == []
    assert [number for number, figure in data["figures"].items() if figure["rows"]] == ["11"]
    rows = data["figures"]["11"]["rows"]
    per_minute = {(row["unit"], row["case"]): row["value"] for row in rows if row["unit"].endswith("/min")}
    assert per_minute == {
        ("requests/min", "10-minute job, 10 records, every 30 s"): 2.0,
        ("WCU/min", "10-minute job, 10 records, every 30 s"): 2.0,
        ("requests/min", "10-minute job, 10 records, every 60 s"): 1.0,
        ("WCU/min", "10-minute job, 10 records, every 60 s"): 1.0,
    }
    cpu = [(row["subject"], row["baseline"], row["target"]) for row in rows if row["unit"] == "us/job"]
    assert cpu == [
        ("worker slot (Worker.run_batch)", "Lambda handler (processor.process)", "<= 1.1x"),
        (
            "worker slot's processor alone (run_batch less its delete)",
            "Lambda handler (processor.process)",
            None,
        ),
    ]
    assert any(row["unit"] == "jobs/s" and row["note"] == "skipped (--worker-jobs 0)" for row in rows)
    assert sum(row["unit"] == "$/M jobs" for row in rows) == 4
    assert data["notes"] == ["figures 1, 2, 3, 4, 5, 6, 7, 8, 9, 10: not run (--only 11)"]
