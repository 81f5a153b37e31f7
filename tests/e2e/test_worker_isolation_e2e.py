"""On the emulator: real ``constructs-fifo worker`` processes keep issue 29's promises (item 7).

The session's sample deployment holds the ``Builds`` queue: claim mode under PARK on container
workers, visibility timeout 5 s, heartbeats every 2 s. Each worker here is started as its ECS task
would be: ``constructs-fifo worker`` configured by the task definition's container environment (read
from the deployed stack), running this directory's job code (``isolation_jobs.handle``: the image's
code), with ``max_attempts`` 2 and ``backoff_base`` 1 s (the settings' floors that keep the run short).

1. **A crash is counted against the job that caused it only.** A poison job that SIGKILLs its process
   on every run, sent with three groups of two healthy jobs, on two-slot workers, each replaced when
   it dies (as the service would). Its first crash takes a healthy slot-mate's run down with it. Then
   every healthy job succeeded once, in order in its group, on its first attempt; the poison job is
   dead ``WorkerCrashedError`` (reason ``ATTEMPTS_EXHAUSTED``) after ``max_attempts`` counted runs,
   having killed ``max_attempts + 1`` workers (its first, shared, run not counted).
2. **A stop, and a stale run.** A one-slot worker takes a ``fenced`` job and is SIGSTOPped in it.
   A two-slot worker receives three groups in one receive: it runs a job that waits for the test and a
   job that started a child process, and holds the third group's job. On SIGTERM the held job is
   released at once: a second worker runs it while the first job still runs; that job then finishes
   within its grace, on its first attempt. At the end of the grace the job with the child (it ignores
   ``context.cancelled``) is interrupted: its child is stopped before its worker exits (its pid is
   gone), and it runs again on its first attempt (a stop is not a failure), only once that child was
   stopped (no orphan beside the retry). Meanwhile the second worker
   took the fenced job over (the stopped run's lease ran out); once it has written through the fence,
   the stopped worker is resumed: its stale run's late write through the fence helper is refused.

Waits are polls with generous deadlines; nothing is timed. Each run uses its own job and group ids
(the session's queue is shared with the other e2e tests), and leaves nothing parked.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from constructs_fifo.client import JobMessage, JobOutcome, JobOutcomes, JobProducer, JobStatus, ParkedGroups
from constructs_fifo.demo.sample_app import BUILD_QUEUE, STACK_NAME, group_of
from constructs_fifo.runtime.constants import DeadReason
from constructs_fifo.stacks.deployed import DeployedQueue, resolve_queue

from .conftest import ROOT, Deployment
from .isolation_jobs import ENV_DIR, ENV_FENCE_TABLE, FENCE_KEY, alive, runs

pytestmark = pytest.mark.e2e

#: The floors of the settings that make a poison job's death take the fewest crashes and retry delays.
MAX_ATTEMPTS = 2
BACKOFF_BASE_SECONDS = 1
#: A healthy job's run: long enough that a slot-mate's crash lands in its middle.
HEALTHY_SECONDS = 2.0
HEALTHY_GROUPS, JOBS_PER_GROUP = 3, 2
#: After SIGTERM: time enough for the held job to run elsewhere before the test lets the running one end.
GRACE_SECONDS = 8
#: The bound of every wait (one past it is a hang, not a slow run).
LIMIT_SECONDS = 120.0
POLL_SECONDS = 0.2
HANDLER = "isolation_jobs.handle"


@dataclass
class Worker:
    """One ``constructs-fifo worker`` process and its log (JSON lines, stdout and stderr)."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def lines(self) -> list[dict[str, Any]]:
        """The log's JSON lines (a killed worker's last line may be cut: skipped)."""
        found = []
        for line in self.log.read_text(errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict):
                found.append(entry)
        return found

    def outcomes(self, status: str) -> list[dict[str, Any]]:
        """The outcome lines of ``status`` (``SUCCEEDED``...): one per run."""
        return [e for e in self.lines() if e.get("status") == status and "jobId" in e]

    def events(self, event: str) -> list[dict[str, Any]]:
        """The worker's own lines of ``event`` (``worker_started``...)."""
        return [e for e in self.lines() if e.get("event") == event]


@dataclass
class World:
    """The build queue, the test's directory and fence table, and the workers started."""

    deployment: Deployment
    queue: DeployedQueue
    fence_table: str
    root: Path
    run: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    workers: list[Worker] = field(default_factory=list)

    def __post_init__(self) -> None:
        target = self.deployment.target
        self.sqs, self.dynamodb = target.client("sqs"), target.client("dynamodb")
        assert self.queue.claim_table and self.queue.group_table
        self.outcomes = JobOutcomes(
            claim_table=self.queue.claim_table, group_table=self.queue.group_table, dynamodb=self.dynamodb
        )
        self.producer = JobProducer(self.queue.queue_url, sqs_client=self.sqs)

    def job(self, name: str, group: str, **payload: Any) -> JobMessage:
        """A job of this run (its id and group carry the run's id)."""
        return JobMessage(f"iso-{self.run}-{name}", "isolation", payload, group_of(f"iso-{self.run}-{group}"))

    def start(self, name: str, *, slots: int, batch_size: int) -> Worker:
        """A worker as its task starts it: the task definition's environment, this directory's code."""
        env = {
            **self.deployment.target.child_environment(),
            **self.queue.function_environment,
            "CONSTRUCTS_FIFO_HANDLER": HANDLER,
            "CONSTRUCTS_FIFO_MAX_ATTEMPTS": str(MAX_ATTEMPTS),
            "CONSTRUCTS_FIFO_BACKOFF_BASE_SECONDS": str(BACKOFF_BASE_SECONDS),
            "PYTHONPATH": str(Path(__file__).parent),
            "PYTHONUNBUFFERED": "1",
            ENV_DIR: str(self.root),
            ENV_FENCE_TABLE: self.fence_table,
        }
        command = [
            sys.executable,
            "-m",
            "constructs_fifo.cli",
            "worker",
            "--slots",
            str(slots),
            "--batch-size",
            str(batch_size),
            "--wait-time-seconds",
            "1",
            "--grace-seconds",
            str(GRACE_SECONDS),
        ]
        log = self.root / f"{name}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        worker = Worker(name, process, log)
        self.workers.append(worker)
        return worker

    def get(self, job: JobMessage) -> JobOutcome:
        return self.outcomes.get(job.job_id, job.group, sent=True)

    def runs(self, job: JobMessage) -> list[tuple[int, int]]:
        return runs(self.root, job.job_id)

    def file(self, job: JobMessage, suffix: str) -> Path:
        return self.root / f"{job.job_id}.{suffix}"

    def succeeded_runs(self) -> Counter[str]:
        """SUCCEEDED outcome lines by job id, over every worker's log."""
        return Counter(str(e["jobId"]) for w in self.workers for e in w.outcomes("SUCCEEDED"))

    def queue_depth(self) -> int:
        """The build queue's messages, visible or in flight."""
        counts = self.sqs.get_queue_attributes(
            QueueUrl=self.queue.queue_url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        return sum(int(count) for count in counts.values())

    def logs(self) -> str:
        return "\n".join(f"--- {w.name}\n{w.log.read_text(errors='replace')[-3000:]}" for w in self.workers)


def wait_for(what: str, condition: Callable[[], bool], world: World) -> None:
    """Poll ``condition`` until it holds; fail with the workers' logs past :data:`LIMIT_SECONDS`."""
    deadline = time.monotonic() + LIMIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {LIMIT_SECONDS} s\n{world.logs()}"
        time.sleep(POLL_SECONDS)


def stop(world: World, worker: Worker) -> int:
    """SIGTERM ``worker`` and wait for its exit code."""
    worker.process.send_signal(signal.SIGTERM)
    try:
        return worker.process.wait(timeout=LIMIT_SECONDS)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{worker.name} did not exit after SIGTERM\n{world.logs()}") from None


@pytest.fixture(scope="module")
def build_queue(deployment: Deployment) -> Iterator[tuple[DeployedQueue, str]]:
    """The build queue, and a fence table of this file's own (the fenced job's sink)."""
    queue = resolve_queue(STACK_NAME, target=deployment.target, queue=BUILD_QUEUE)
    assert queue.is_container
    fence_table = f"iso-fence-{uuid.uuid4().hex[:8]}"
    dynamodb = deployment.target.client("dynamodb")
    dynamodb.create_table(
        TableName=fence_table,
        KeySchema=[{"AttributeName": FENCE_KEY, "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": FENCE_KEY, "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    yield queue, fence_table
    dynamodb.delete_table(TableName=fence_table)


@pytest.fixture
def world(deployment: Deployment, build_queue: tuple[DeployedQueue, str], tmp_path: Path) -> Iterator[World]:
    """The build queue (empty: no earlier test left messages); at the end every worker still running is
    resumed and stopped (SIGTERM, then SIGKILL)."""
    built = World(deployment, *build_queue, root=tmp_path)
    assert built.queue_depth() == 0, (
        "the build queue holds messages before the test: an earlier test left them"
    )
    try:
        yield built
    finally:
        for worker in built.workers:
            if worker.process.poll() is None:
                worker.process.send_signal(signal.SIGCONT)
                worker.process.send_signal(signal.SIGTERM)
        for worker in built.workers:
            try:
                worker.process.wait(timeout=GRACE_SECONDS + 15)
            except subprocess.TimeoutExpired:
                worker.process.kill()
                worker.process.wait(timeout=10)


def test_a_poison_job_killing_its_two_slot_worker_dies_alone_and_costs_its_slot_mates_nothing(
    world: World,
) -> None:
    # GIVEN a poison job (it SIGKILLs its process on every run) and three groups of two healthy jobs
    poison = world.job("poison", "poison", kind="poison")
    healthy = [
        world.job(f"h{g}-{j}", f"h{g}", kind="healthy", seconds=HEALTHY_SECONDS)
        for g in range(HEALTHY_GROUPS)
        for j in range(JOBS_PER_GROUP)
    ]
    world.producer.send_batch([poison, *healthy])
    # WHEN two-slot workers run them, each replaced as soon as it dies, until every job is settled
    worker = world.start("p1", slots=2, batch_size=10)
    deaths: list[int | None] = []

    def settled() -> bool:
        nonlocal worker
        if worker.process.poll() is not None:
            deaths.append(worker.process.returncode)
            worker = world.start(f"p{len(deaths) + 1}", slots=2, batch_size=10)
        return all(world.get(job).status.settled for job in [poison, *healthy])

    wait_for("the poison and healthy jobs settled", settled, world)
    # AND the poison's group is resumed, skipping it (its wake-up run by the last worker): nothing of
    # this test stays parked
    parked = ParkedGroups(
        group_table=world.queue.group_table or "",
        claim_table=world.queue.claim_table,
        queue_url=world.queue.queue_url,
        dead_letter_queue_url=world.queue.dead_letter_queue_url or "",
        dynamodb=world.dynamodb,
        sqs=world.sqs,
    )
    assert parked.resume(poison.group, skip_dead=True).skipped_job_id == poison.job_id
    wait_for("the queue drained", lambda: world.queue_depth() == 0, world)
    assert stop(world, worker) == 0
    # THEN every worker that died was killed by the poison job, which ran once per death
    assert deaths == [-signal.SIGKILL] * (MAX_ATTEMPTS + 1), world.logs()
    assert len(world.runs(poison)) == MAX_ATTEMPTS + 1
    # AND the poison job is dead with the runbook's name, after max_attempts counted runs
    dead = world.get(poison)
    assert (dead.status, dead.dead_reason, dead.error_type, dead.attempt) == (
        JobStatus.DEAD,
        DeadReason.ATTEMPTS_EXHAUSTED,
        "WorkerCrashedError",
        MAX_ATTEMPTS,
    ), dead
    # AND every healthy job succeeded once, on its first attempt: none lost one to the crashes
    outcomes = {job.job_id: world.get(job) for job in healthy}
    assert {(o.status, o.attempt) for o in outcomes.values()} == {(JobStatus.SUCCEEDED, 1)}, outcomes
    assert all(o.result["jobId"] == job_id for job_id, o in outcomes.items())
    succeeded = world.succeeded_runs()
    assert [succeeded[job.job_id] for job in healthy] == [1] * len(healthy)
    # AND the poison's first crash took a healthy slot-mate's run down with it (that job ran again)
    assert any(len(world.runs(job)) > 1 for job in healthy), [world.runs(job) for job in healthy]
    # AND in each group the second job started after the first had finished
    for first, second in zip(healthy[::2], healthy[1::2], strict=True):
        first_done = outcomes[first.job_id].updated_at_ms
        assert first_done is not None
        assert outcomes[second.job_id].result["startedAtMs"] >= first_done


def test_a_stop_releases_what_did_not_start_stops_children_and_a_stale_runs_write_is_fenced(
    world: World,
) -> None:
    # GIVEN a one-slot worker SIGSTOPped in the middle of a fenced job (its run waits for the test)
    fenced = world.job("fenced", "d", kind="fenced")
    world.producer.send_batch([fenced])
    stale = world.start("stale", slots=1, batch_size=1)
    wait_for("the fenced job's first run started", lambda: len(world.runs(fenced)) == 1, world)
    stale.process.send_signal(signal.SIGSTOP)
    # AND a two-slot worker that received three groups in one receive: it runs a job that waits for
    # the test and a job that started a child process, and holds the third group's job
    running = world.job("running", "a", kind="release")
    child = world.job("child", "c", kind="child")
    held = world.job("held", "b", kind="healthy", seconds=0)
    world.producer.send_batch([running, child, held])
    stopped = world.start("stopped", slots=2, batch_size=10)
    wait_for(
        "the running job and the child's job started",
        lambda: bool(world.runs(running)) and world.file(child, "child").exists(),
        world,
    )
    child_pid = int(world.file(child, "child").read_text())
    # AND a second worker, idle
    other = world.start("other", slots=2, batch_size=10)
    wait_for("the second worker started", lambda: bool(other.events("worker_started")), world)
    # WHEN the first is stopped (SIGTERM)
    stopped.process.send_signal(signal.SIGTERM)
    # THEN the held job is released at once: the second worker runs it while the first job still runs
    wait_for("the held job ran elsewhere", lambda: world.get(held).status is JobStatus.SUCCEEDED, world)
    assert world.get(running).status is JobStatus.RUNNING
    assert world.runs(held)[0][0] == other.process.pid
    world.file(running, "release").touch()
    # AND the second worker took the fenced job over (the stopped run's lease ran out) and wrote through
    # the fence; resumed, the stale run writes late through the fence helper and is refused
    wait_for("the fenced job taken over", lambda: world.get(fenced).status is JobStatus.SUCCEEDED, world)
    world.file(fenced, "go").touch()
    stale.process.send_signal(signal.SIGCONT)
    fence_lines = world.file(fenced, "fence")
    wait_for(
        "the stale run's late write",
        lambda: fence_lines.exists() and len(fence_lines.read_text().splitlines()) == 2,
        world,
    )
    (taken_run, taken_token, taken), (stale_run, stale_token, late) = (
        line.split() for line in fence_lines.read_text().splitlines()
    )
    assert (taken_run, taken, stale_run, late) == ("2", "written", "1", "refused")
    assert int(stale_token) < int(taken_token)
    item = world.dynamodb.get_item(
        TableName=world.fence_table, Key={FENCE_KEY: {"S": fenced.job_id}}, ConsistentRead=True
    )["Item"]
    assert (item["run"]["N"], item["fence"]["N"]) == ("2", taken_token)
    # AND the stopped worker exits 0 at the end of its grace, its child process stopped before
    assert stop(world, stopped) == 0, stopped.log.read_text()[-3000:]
    assert not alive(child_pid)
    (stopped_line,) = stopped.events("worker_stopped")
    assert stopped_line["interrupted"] == 1 and stopped_line["childrenStopped"] >= 1, stopped_line
    assert sum(e["records"] for e in stopped.events("held_released")) >= 1
    # AND the interrupted job runs again, on its first attempt, after its first run's child was stopped
    wait_for("the child's job ran again", lambda: world.get(child).status is JobStatus.SUCCEEDED, world)
    assert world.file(child, "orphan").read_text() == "False"
    for worker in (other, stale):
        assert stop(world, worker) == 0, worker.log.read_text()[-3000:]
    # AND every job succeeded once; none spent an attempt on the stop (the stale run's was counted)
    outcomes = {job.job_id: world.get(job) for job in (running, child, held, fenced)}
    assert {job_id: (o.status, o.attempt) for job_id, o in outcomes.items()} == {
        running.job_id: (JobStatus.SUCCEEDED, 1),
        child.job_id: (JobStatus.SUCCEEDED, 1),
        held.job_id: (JobStatus.SUCCEEDED, 1),
        fenced.job_id: (JobStatus.SUCCEEDED, 2),
    }
    succeeded = world.succeeded_runs()
    assert [succeeded[job_id] for job_id in outcomes] == [1, 1, 1, 1]
    # AND the running job finished on the stopped worker, within its grace; the held one had been received
    assert [e["jobId"] for e in stopped.outcomes("SUCCEEDED")] == [running.job_id]
    (held_line,) = [e for e in other.outcomes("SUCCEEDED") if e["jobId"] == held.job_id]
    assert held_line["receiveCount"] >= 2
    assert all(worker.process.poll() is not None for worker in world.workers)
