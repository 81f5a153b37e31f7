"""The demo's long jobs: the sample's ``Builds`` queue run by local ``constructs-fifo worker`` processes.

The build queue's consumer is an ECS Fargate service; locally its tasks are processes started as a
task would start them (``constructs-fifo worker --stack AgentJobs --queue Builds --code-dir lambda``).
:func:`run_builds` sends a few ``run_tests`` jobs, each three times the queue's visibility timeout, one
per workspace, and shows what the workers promise:

- a job that outlives its visibility timeout finishes once (the heartbeats keep it hidden and claimed);
- a worker killed with SIGKILL in the middle of its jobs: they come back after the visibility timeout
  and run again on another worker, counted as an attempt, their result stored once;
- a worker stopped with SIGTERM: it receives nothing more, finishes its running jobs within its grace
  period and exits 0: nothing lost, nothing run twice.

The first two workers start one after the other, each seen running its jobs (their claims are
``running``) before the next starts, so the kill and the stop both land in the middle of jobs; a third
takes over, as the service would replace the tasks. Violations are the verifier's
(:class:`~constructs_fifo.demo.verify.Violation`).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from constructs_fifo.client import JobMessage, JobOutcome, JobOutcomes, JobProducer, JobStatus
from constructs_fifo.demo.sample_app import (
    BUILD_PASSED,
    BUILD_QUEUE,
    BUILD_TYPE,
    BUILD_VISIBILITY_TIMEOUT_SECONDS,
    build_payload,
    group_of,
)
from constructs_fifo.demo.steps import DemoOptions, Reporter
from constructs_fifo.demo.verify import Violation
from constructs_fifo.stacks.aws import AwsTarget
from constructs_fifo.stacks.deployed import DeployedQueue, find_queues

__all__ = ["BUILD_JOB_SECONDS", "BuildsResult", "Built", "run_builds", "start_builds"]

#: Each build job lasts three visibility timeouts: only the heartbeats keep it from a second worker.
BUILD_JOB_SECONDS: Final = 3 * BUILD_VISIBILITY_TIMEOUT_SECONDS
#: Slots of each of the first two workers, so 2 x this many jobs (one per workspace) run at once.
_FIRST_SLOTS: Final = 2
_BUILDS: Final = 2 * _FIRST_SLOTS + 2
#: After SIGTERM, how long the stopped worker's running jobs may finish: more than one job.
_GRACE_SECONDS: Final = 2 * BUILD_JOB_SECONDS
#: The bound of every wait (the whole run takes about three jobs' time).
_LIMIT_SECONDS: Final = 120.0
_POLL_SECONDS: Final = 0.5


@dataclass
class BuildsResult:
    """What the long-job run measured: per-job outcomes, the workers' exits, the violations."""

    jobs: int = 0
    succeeded: int = 0
    retried_after_kill: int = 0
    finished_by_stopped_worker: int = 0
    seconds: float = 0.0
    violations: list[Violation] = field(default_factory=list)
    exits: dict[str, int | None] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The report's ``builds`` section."""
        return {
            **self.counts(),
            "job_seconds": BUILD_JOB_SECONDS,
            "visibility_timeout_seconds": BUILD_VISIBILITY_TIMEOUT_SECONDS,
            "seconds": self.seconds,
            "worker_exits": self.exits,
        }

    def counts(self) -> dict[str, int]:
        """The report's ``builds_*`` counts."""
        return {
            "builds": self.jobs,
            "builds_succeeded": self.succeeded,
            "builds_retried_after_sigkill": self.retried_after_kill,
            "builds_finished_after_sigterm": self.finished_by_stopped_worker,
        }


@dataclass
class _Worker:
    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def succeeded(self) -> list[str]:
        found: list[str] = []
        for line in self.log.read_text(errors="replace").splitlines():
            if line.startswith("{"):
                try:
                    entry: Any = json.loads(line)
                except ValueError:
                    continue
                if isinstance(entry, dict) and entry.get("status") == "SUCCEEDED" and "jobId" in entry:
                    found.append(str(entry["jobId"]))
        return found


def _start(
    name: str, queue: DeployedQueue, *, target: AwsTarget, code_dir: Path, logs: Path, slots: int
) -> _Worker:
    log = logs / f"{name}.log"
    endpoint = ["--endpoint-url", target.endpoint_url] if target.endpoint_url else []
    command = [
        sys.executable,
        "-m",
        "constructs_fifo.cli",
        "worker",
        *endpoint,
        "--region",
        target.region,
        "--stack",
        queue.stack,
        "--queue",
        queue.label,
        "--code-dir",
        str(code_dir),
        "--slots",
        str(slots),
        "--batch-size",
        "1",
        "--wait-time-seconds",
        "1",
        "--grace-seconds",
        str(_GRACE_SECONDS),
        "--log-format",
        "json",  # the demo reads the lines: a container's, whatever the terminal
    ]
    env = {**target.child_environment(), "PYTHONUNBUFFERED": "1"}
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    return _Worker(name, process, log)


def _wait_running(
    reader: JobOutcomes, jobs: list[JobMessage], at_least: int, cancel: threading.Event
) -> None:
    deadline = time.monotonic() + _LIMIT_SECONDS
    while time.monotonic() < deadline and not cancel.is_set():
        outcomes = [reader.get(job.job_id, job.group, sent=True) for job in jobs]
        if sum(1 for outcome in outcomes if outcome.status is JobStatus.RUNNING) >= at_least:
            return
        time.sleep(_POLL_SECONDS)


def run_builds(
    queue: DeployedQueue,
    *,
    target: AwsTarget,
    code_dir: Path,
    run_id: str,
    sqs: Any,
    dynamodb: Any,
    say: Reporter = print,
    cancel: threading.Event | None = None,
) -> BuildsResult:
    """Send the long jobs, run the workers through a SIGKILL and a SIGTERM, and verify the outcomes.

    ``cancel`` (set when the rest of the demo failed or was interrupted) ends every wait at once and
    kills the workers, so the demo's emulator can stop.
    """
    cancel = cancel or threading.Event()
    result = BuildsResult()
    jobs = [
        JobMessage(
            f"build-{run_id}-{n}", BUILD_TYPE, build_payload(BUILD_JOB_SECONDS), group_of(f"b-{run_id}-{n}")
        )
        for n in range(_BUILDS)
    ]
    result.jobs = len(jobs)
    say(
        f"sending {len(jobs)} run_tests jobs of {BUILD_JOB_SECONDS} s to {queue.label} "
        f"(visibility timeout {BUILD_VISIBILITY_TIMEOUT_SECONDS} s) and starting its workers ..."
    )
    JobProducer(queue.queue_url, sqs_client=sqs).send_batch(jobs)
    assert queue.claim_table is not None  # claim mode (the contract)
    reader = JobOutcomes(claim_table=queue.claim_table, group_table=queue.group_table, dynamodb=dynamodb)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="constructs-fifo-builds-") as scratch:
        logs = Path(scratch)
        workers: list[_Worker] = []
        try:
            killed = _start("killed", queue, target=target, code_dir=code_dir, logs=logs, slots=_FIRST_SLOTS)
            workers.append(killed)
            _wait_running(reader, jobs, _FIRST_SLOTS, cancel)
            stopped = _start(
                "stopped", queue, target=target, code_dir=code_dir, logs=logs, slots=_FIRST_SLOTS
            )
            workers.append(stopped)
            _wait_running(reader, jobs, 2 * _FIRST_SLOTS, cancel)
            say(f"{BUILD_QUEUE}: SIGKILL to one worker and SIGTERM to another, in the middle of their jobs")
            running_at_kill = {
                job.job_id
                for job in jobs
                if reader.get(job.job_id, job.group, sent=True).status is JobStatus.RUNNING
            }
            killed.process.send_signal(signal.SIGKILL)
            stopped.process.send_signal(signal.SIGTERM)
            workers.append(
                _start(
                    "replacement", queue, target=target, code_dir=code_dir, logs=logs, slots=2 * _FIRST_SLOTS
                )
            )
            outcomes: dict[str, JobOutcome] = {}
            for job in jobs:
                while True:  # in short waits, so that a cancel ends it
                    left = _LIMIT_SECONDS - (time.monotonic() - started)
                    outcome = reader.wait(job.job_id, max(0.1, min(_POLL_SECONDS * 4, left)), group=job.group)
                    if outcome.status.settled or left <= 0 or cancel.is_set():
                        break
                outcomes[job.job_id] = outcome
        finally:
            for worker in workers:
                if worker.process.poll() is None:
                    worker.process.send_signal(signal.SIGKILL if cancel.is_set() else signal.SIGTERM)
            for worker in workers:
                try:
                    result.exits[worker.name] = worker.process.wait(timeout=_GRACE_SECONDS + 10)
                except subprocess.TimeoutExpired:
                    worker.process.kill()
                    result.exits[worker.name] = worker.process.wait(timeout=10)
        runs: dict[str, int] = {}
        for worker in workers:
            for job_id in worker.succeeded():
                runs[job_id] = runs.get(job_id, 0) + 1
        stopped_jobs = [job_id for job_id in stopped.succeeded() if job_id in outcomes]
    result.seconds = round(time.monotonic() - started, 3)
    _verify(result, jobs, outcomes, runs, stopped_jobs, running_at_kill=running_at_kill)
    say(
        f"{BUILD_QUEUE}: {result.succeeded}/{len(jobs)} long jobs succeeded once; "
        f"{result.retried_after_kill} ran again after the SIGKILL (no attempt lost to it), "
        f"{result.finished_by_stopped_worker} finished on the SIGTERM-stopped worker, which exited "
        f"{result.exits.get('stopped')}"
    )
    return result


def _verify(
    result: BuildsResult,
    jobs: list[JobMessage],
    outcomes: dict[str, JobOutcome],
    runs: dict[str, int],
    stopped_jobs: list[str],
    *,
    running_at_kill: set[str],
) -> None:
    violations = result.violations
    for job in jobs:
        outcome = outcomes[job.job_id]
        passed = outcome.result.get(BUILD_PASSED) if isinstance(outcome.result, dict) else None
        if outcome.status is not JobStatus.SUCCEEDED or passed != job.job_id:
            violations.append(
                Violation(
                    "build_not_succeeded",
                    "a long job did not succeed with its result",
                    job_id=job.job_id,
                    expected="succeeded",
                    actual=f"{outcome.status.value}: {outcome.detail}",
                )
            )
            continue
        result.succeeded += 1
        if runs.get(job.job_id, 0) != 1:
            violations.append(
                Violation(
                    "build_run_twice",
                    "a long job's run succeeded other than once across the workers",
                    job_id=job.job_id,
                    expected=1,
                    actual=runs.get(job.job_id, 0),
                )
            )
        if job.job_id in running_at_kill and job.job_id not in stopped_jobs:
            # running when the workers were signalled, and not finished by the stopped one: it was the
            # killed worker's, and its one successful run came after the kill (a crash of a worker of
            # several slots costs none of its jobs an attempt: docs/architecture.md)
            result.retried_after_kill += 1
    result.finished_by_stopped_worker = len(stopped_jobs)
    if result.retried_after_kill == 0:
        violations.append(
            Violation(
                "build_not_retried",
                "no job of the SIGKILLed worker ran again after the kill",
                expected=">= 1",
                actual=0,
            )
        )
    twice = [job_id for job_id in stopped_jobs if (outcomes[job_id].attempt or 0) != 1]
    if result.exits.get("stopped") != 0 or not stopped_jobs or twice:
        violations.append(
            Violation(
                "worker_stop_lost_work",
                "the SIGTERM-stopped worker did not finish its running jobs on "
                "their first attempt and exit 0",
                expected="exit 0, its jobs on attempt 1",
                actual={"exit": result.exits.get("stopped"), "finished": stopped_jobs, "not_first": twice},
            )
        )


@dataclass(frozen=True)
class Built:
    """The build queue and what its long-job run measured."""

    queue: DeployedQueue
    result: BuildsResult


def start_builds(
    pool: ThreadPoolExecutor,
    options: DemoOptions,
    target: AwsTarget,
    *,
    say: Reporter,
    cancel: threading.Event,
) -> Future[Built] | None:
    """Run the long jobs on local workers in ``pool``; ``None`` when there is no build queue to run."""
    if not options.drain:
        say(f"{BUILD_QUEUE}: not run locally (the deployed service's tasks run its jobs)")
        return None
    queues = find_queues(options.stack, target=target)
    found = [queue for queue in queues if queue.is_container and queue.matches(BUILD_QUEUE)]
    if not found:
        say(f"{BUILD_QUEUE}: stack {options.stack} holds no such container queue: long jobs not shown")
        return None
    [queue] = found

    def run() -> Built:
        built = run_builds(
            queue,
            target=target,
            code_dir=options.app_dir / "lambda",
            run_id=uuid.uuid4().hex[:8],
            sqs=target.client("sqs"),
            dynamodb=target.client("dynamodb"),
            say=say,
            cancel=cancel,
        )
        return Built(queue, built)

    return pool.submit(run)
