"""On the emulator: real ``constructs-fifo worker`` processes run the sample's long ``Builds`` jobs.

The session's sample deployment holds the ``Builds`` queue: claim mode under PARK on container
workers, visibility timeout 5 s, heartbeats every 2 s. Four workspaces get two ``run_tests`` jobs each,
every job three times the visibility timeout (15 s), so a job lives only while its worker's heartbeats
keep its records hidden and its claim held. Worker processes run the way the tasks would
(``constructs-fifo worker --stack AgentJobs --queue Builds --code-dir lambda``): three at first,
started one after the other until each runs jobs (the first two of two slots: between them they run
every workspace's first job); then, in the middle of their jobs, the first is killed with SIGKILL (its
jobs come back after the visibility timeout and run again on another worker, alone, as the same
attempt: a crash of a two-slot worker names no culprit, so it costs none of them an attempt) and the
second is stopped with SIGTERM (its running jobs finish within the grace period, it exits 0); two
replacements start, as the service would replace the tasks.

The workload is as small as these promises need (each job runs alone after the kill, so every job
more of the killed worker's is up to a job's time more): every workspace's first job on the killed or
the stopped worker, and a second job behind each, which must wait for it across the kill or the stop.

Then every job has succeeded, its result stored once, naming it; the workers' logs hold one
``SUCCEEDED`` run per job, none run by two workers; the second job of each workspace started after the
first finished; no job spent an attempt on the kill or the stop.

Each run uses its own workspace ids (the session's queue is shared with the other e2e tests).
"""

from __future__ import annotations

import signal
import subprocess
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.workers import WorkerProcess, start_worker

from constructs_fifo.client import JobMessage, JobOutcome, JobOutcomes, JobProducer, JobStatus
from constructs_fifo.demo.sample_app import (
    BUILD_PASSED,
    BUILD_QUEUE,
    BUILD_STARTED,
    BUILD_TYPE,
    BUILD_VISIBILITY_TIMEOUT_SECONDS,
    STACK_NAME,
    build_payload,
    group_of,
)
from constructs_fifo.stacks.deployed import resolve_queue

from .conftest import ROOT, Deployment

pytestmark = pytest.mark.e2e

#: Slots of the first two workers (so that each is seen running jobs before the next starts), and of the rest.
FIRST_SLOTS, LATER_SLOTS = 2, 8
#: One workspace per slot of the first two workers: the kill and the stop each land on a workspace's
#: first job, with its second queued behind it.
WORKSPACES = 2 * FIRST_SLOTS
JOBS_PER_WORKSPACE = 2
#: Three visibility timeouts: the job outlives its records' visibility unless heartbeats renew it.
JOB_SECONDS = 3 * BUILD_VISIBILITY_TIMEOUT_SECONDS
#: After SIGTERM, how long running jobs may finish: more than a job, so the stopped worker finishes its own.
GRACE_SECONDS = 2 * JOB_SECONDS
#: The bound of every wait: the whole run takes under a minute; one past this is a hang.
LIMIT_SECONDS = 150.0
POLL_SECONDS = 0.5


@pytest.fixture
def workers(deployment: Deployment, tmp_path: Path) -> Iterator[list[WorkerProcess]]:
    """The started workers; each still running at the end is stopped (SIGTERM, then SIGKILL)."""
    started: list[WorkerProcess] = []
    yield started
    for worker in started:
        if worker.process.poll() is None:
            worker.process.send_signal(signal.SIGTERM)
    for worker in started:
        try:
            worker.process.wait(timeout=GRACE_SECONDS + 10)
        except subprocess.TimeoutExpired:
            worker.process.kill()
            worker.process.wait(timeout=10)


def _start(deployment: Deployment, tmp_path: Path, name: str, slots: int) -> WorkerProcess:
    return start_worker(
        deployment,
        tmp_path,
        name,
        stack=STACK_NAME,
        queue=BUILD_QUEUE,
        code_dir=ROOT / "lambda",
        slots=slots,
        grace_seconds=GRACE_SECONDS,
    )


def _outcomes(reader: JobOutcomes, jobs: list[JobMessage]) -> dict[str, JobOutcome]:
    return {job.job_id: reader.get(job.job_id, job.group, sent=True) for job in jobs}


def _wait_running(
    reader: JobOutcomes, jobs: list[JobMessage], at_least: int, workers: list[WorkerProcess]
) -> None:
    deadline = time.monotonic() + LIMIT_SECONDS
    while time.monotonic() < deadline:
        running = [o for o in _outcomes(reader, jobs).values() if o.status is JobStatus.RUNNING]
        if len(running) >= at_least:
            return
        for worker in workers:
            assert worker.process.poll() is None, f"{worker.name} exited: {worker.log.read_text()[-2000:]}"
        time.sleep(POLL_SECONDS)
    raise AssertionError(f"fewer than {at_least} jobs ran within {LIMIT_SECONDS} s")


def test_workers_keep_long_jobs_once_and_in_order_through_a_kill_and_a_stop(
    deployment: Deployment, workers: list[WorkerProcess], tmp_path: Path
) -> None:
    # GIVEN the sample's build queue and two long jobs in each of four workspaces of this run
    started = time.monotonic()
    queue = resolve_queue(STACK_NAME, target=deployment.target, queue=BUILD_QUEUE)
    assert queue.is_container and queue.claim_table
    sqs, dynamodb = deployment.target.client("sqs"), deployment.target.client("dynamodb")
    run = uuid.uuid4().hex[:8]
    jobs = [
        JobMessage(
            f"build-{run}-{w:02d}-{j}", BUILD_TYPE, build_payload(JOB_SECONDS), group_of(f"e2e-{run}-{w:02d}")
        )
        for w in range(WORKSPACES)
        for j in range(JOBS_PER_WORKSPACE)
    ]
    JobProducer(queue.queue_url, sqs_client=sqs).send_batch(jobs)
    reader = JobOutcomes(claim_table=queue.claim_table, group_table=queue.group_table, dynamodb=dynamodb)
    # WHEN three workers start, each seen running jobs before the next starts
    killed = _start(deployment, tmp_path, "killed", FIRST_SLOTS)
    workers.append(killed)
    _wait_running(reader, jobs, FIRST_SLOTS, workers)
    stopped = _start(deployment, tmp_path, "stopped", FIRST_SLOTS)
    workers.append(stopped)
    _wait_running(reader, jobs, 2 * FIRST_SLOTS, workers)
    workers.append(_start(deployment, tmp_path, "third", LATER_SLOTS))
    # AND, in the middle of their jobs, the first is killed and the second stopped; two replace them
    killed.process.send_signal(signal.SIGKILL)
    stopped.process.send_signal(signal.SIGTERM)
    workers.append(_start(deployment, tmp_path, "fourth", LATER_SLOTS))
    workers.append(_start(deployment, tmp_path, "fifth", LATER_SLOTS))
    # THEN every job succeeds
    outcomes: dict[str, JobOutcome] = {}
    for job in jobs:
        left = max(1.0, LIMIT_SECONDS - (time.monotonic() - started))
        outcomes[job.job_id] = reader.wait(job.job_id, left, group=job.group)
    assert {o.status for o in outcomes.values()} == {JobStatus.SUCCEEDED}, [
        (o.job_id, o.status, o.detail) for o in outcomes.values() if o.status is not JobStatus.SUCCEEDED
    ]
    # AND the stopped worker exited 0 after finishing its running jobs; the killed one died of SIGKILL
    assert stopped.process.wait(timeout=GRACE_SECONDS + 10) == 0, stopped.log.read_text()[-2000:]
    assert killed.process.wait(timeout=10) == -signal.SIGKILL
    # AND each job's result is stored once, naming it, and one run of each succeeded, on one worker
    assert all(o.result and o.result[BUILD_PASSED] == job_id for job_id, o in outcomes.items())
    for worker in workers[2:]:  # the rest stop now, so their logs are whole
        worker.process.send_signal(signal.SIGTERM)
        assert worker.process.wait(timeout=GRACE_SECONDS + 10) == 0, worker.log.read_text()[-2000:]
    runs = Counter(job_id for worker in workers for job_id in worker.succeeded() if job_id in outcomes)
    assert runs == Counter(dict.fromkeys(outcomes, 1))
    # AND in each workspace the second job started after the first had finished
    for first, second in zip(jobs[::2], jobs[1::2], strict=True):
        first_done = outcomes[first.job_id].updated_at_ms
        assert first_done is not None
        assert outcomes[second.job_id].result[BUILD_STARTED] >= first_done
    # AND the killed worker's jobs ran again without losing an attempt (their runs shared the process:
    # the crash is counted against none of them); the stopped worker's finished on their first
    assert killed.succeeded() == []
    assert {o.attempt for o in outcomes.values()} == {1}
    stopped_jobs = [job_id for job_id in stopped.succeeded() if job_id in outcomes]
    assert stopped_jobs
    assert all(outcomes[job_id].attempt == 1 for job_id in stopped_jobs)
    print(f"workers e2e: {len(jobs)} jobs of {JOB_SECONDS} s in {time.monotonic() - started:.1f} s")
