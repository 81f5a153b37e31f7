"""Figure 11's rows: the measures of :mod:`benchmarks.container_workers`, with their cases and notes."""

from __future__ import annotations

from benchmarks.container_workers import (
    CPU_PATHS,
    HEARTBEAT_BATCH_RECORDS,
    HEARTBEAT_INTERVALS_S,
    HEARTBEAT_JOB_MINUTES,
    PROCESSOR_PATH,
    SLOT_COUNTS,
    SLOT_GROUPS,
    SLOT_JOB_SLEEP_MS,
    dollars_per_million,
    measure_cpu,
    measure_heartbeat,
    measure_slots,
)
from benchmarks.results import Row, Target

__all__ = ["worker_rows"]


#: Figure 11's measures.
HEARTBEAT_SQS_MEASURE = "heartbeat SQS requests per job-minute (ChangeMessageVisibilityBatch, counted)"
HEARTBEAT_WCU_MEASURE = "heartbeat DynamoDB write units per job-minute (the claim's renewal, metered)"
HEARTBEAT_DOLLARS_MEASURE = "heartbeat dollars per job-hour (us-east-1 on-demand)"
CPU_MEASURE = "framework CPU per job, short jobs, DynamoDB answered instantly"
SLOTS_MEASURE = f"jobs per second of one worker on the emulator, jobs sleeping {SLOT_JOB_SLEEP_MS} ms"
DOLLARS_MEASURE = f"dollars per million {HEARTBEAT_JOB_MINUTES}-minute jobs (us-east-1 on-demand)"


def worker_rows(*, slot_jobs: int, cpu_repeats: int, problems: list[str]) -> list[Row]:
    """Figure 11's rows (see the module docstring); a mis-run measure is added to ``problems``."""
    rows: list[Row] = []
    beats = [measure_heartbeat(interval) for interval in HEARTBEAT_INTERVALS_S]
    for beat in beats:
        if beat.stale or beat.ticks != beat.sqs_requests or beat.ticks != beat.dynamodb_calls:
            problems.append(f"figure 11 heartbeat at {beat.interval_s} s: {beat}")
        case = f"{beat.job_minutes}-minute job, {HEARTBEAT_BATCH_RECORDS} records, every {beat.interval_s} s"
        note = f"{beat.ticks} ticks: {beat.sqs_requests} SQS requests, {beat.dynamodb_calls} UpdateItem"
        rows += [
            Row(11, HEARTBEAT_SQS_MEASURE, case, "worker heartbeat", beat.sqs_per_minute, "requests/min",
                note=note),
            Row(11, HEARTBEAT_WCU_MEASURE, case, "worker heartbeat", beat.write_units_per_minute, "WCU/min",
                note=note),
            Row(11, HEARTBEAT_DOLLARS_MEASURE, case, "worker heartbeat", beat.dollars_per_job_hour, "$/job-h",
                digits=6),
        ]  # fmt: skip
    cpu = measure_cpu(repeats=cpu_repeats)
    for path in CPU_PATHS:
        if cpu.ran[path] != cpu.jobs or cpu.failures[path]:
            problems.append(
                f"figure 11 CPU, {path} path: ran {cpu.ran[path]} of {cpu.jobs} jobs, "
                f"{cpu.failures[path]} failed"
            )
    lambda_path = "Lambda handler (processor.process)"
    rows += [
        Row(11, CPU_MEASURE, "claim mode, CONTINUE, every job new", "worker slot (Worker.run_batch)",
            cpu.worker_us, "us/job", lambda_path, cpu.lambda_us, Target("<=", 1.1, "ratio"),
            note=f"median of {cpu_repeats} runs, {cpu.jobs} jobs a path; includes the DeleteMessageBatch "
            "of the successes (Lambda's mapping makes it outside the function), not the receive",
            digits=0),
        Row(11, CPU_MEASURE, "claim mode, CONTINUE, every job new",
            "worker slot's processor alone (run_batch less its delete)", cpu.us_per_job[PROCESSOR_PATH],
            "us/job", lambda_path, cpu.lambda_us,
            note="the same work as the function's: the heartbeat (its slot's ticker) and claims, no delete",
            digits=0),
    ]  # fmt: skip
    if slot_jobs > 0:
        runs = measure_slots(SLOT_COUNTS, jobs=slot_jobs)
        for run in runs:
            if run.done != run.jobs:
                problems.append(f"figure 11 slots: {run.slots} slots ran {run.done} of {run.jobs} jobs")
            ceiling = run.slots * 1000 / SLOT_JOB_SLEEP_MS
            rows.append(
                Row(11, SLOTS_MEASURE, f"{run.slots} slot{'s' if run.slots > 1 else ''}", "worker",
                    run.jobs_per_second, "jobs/s", "1 slot", runs[0].jobs_per_second,
                    note=f"{run.done} jobs ({run.runs} runs) over {SLOT_GROUPS} groups in "
                    f"{run.seconds:.1f} s; the sleep alone allows {ceiling:,.0f} jobs/s", digits=1)
            )  # fmt: skip
    else:
        rows.append(Row(11, SLOTS_MEASURE, "", "worker", None, "jobs/s", note="skipped (--worker-jobs 0)"))
    priced = dollars_per_million(beats[0])
    lambda_one_vcpu = priced[-1]
    for cost in priced:
        is_fargate = cost.subject.startswith("Fargate")
        rows.append(
            Row(11, DOLLARS_MEASURE,
                "one job per slot, busy tasks" if is_fargate else "one job per invocation", cost.subject,
                cost.total, "$/M jobs",
                baseline=lambda_one_vcpu.subject if is_fargate else "",
                baseline_value=lambda_one_vcpu.total if is_fargate else None,
                note="; ".join(f"{name} {value:,.2f}" for name, value in cost.parts.items()), digits=0)
        )  # fmt: skip
    return rows
