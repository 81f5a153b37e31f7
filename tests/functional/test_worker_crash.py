"""The crash watch on the worker path: real ``constructs-fifo worker`` processes against moto's server,
SIGKILLed in the middle of a job. A crash is counted as the job's attempt (its claim IN_FLIGHT under a
lease that ran out), as in Lambda: the next worker runs it again (attempt 2, its effect once), and a job
that kills its worker on every attempt is declared dead without running again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto.server import ThreadedMotoServer

from constructs_fifo.runtime.constants import STATUS_DEAD, STATUS_SUCCEEDED

from .runtime_harness import REGION, body, create_tables

#: A bound on waiting for a worker (never reached when the code is right).
_PATIENCE_S = 60
VISIBILITY_S = 2

_JOB_CODE = """
import os, signal, pathlib, subprocess, time

def handle(job, context):
    root = pathlib.Path(os.environ["CRASH_TEST_DIR"])
    if job.payload.get("child"):  # starts a child, then ignores context.cancelled
        child = subprocess.Popen(["sleep", "300"])
        (root / f"{job.id}.child").write_text(str(child.pid))
        time.sleep(300)
    runs = root / f"{job.id}.runs"
    n = int(runs.read_text()) if runs.exists() else 0
    runs.write_text(str(n + 1))
    time.sleep(float(job.payload.get("sleep", 0)))
    crash = job.payload.get("crash", "first")
    if crash == "always" or (crash == "first" and n == 0):
        os.kill(os.getpid(), signal.SIGKILL)
    with open(root / f"{job.id}.effects", "a") as effects:
        effects.write("effect\\n")


def apply(job, state):
    root = pathlib.Path(os.environ["CRASH_TEST_DIR"])
    runs = root / f"{job.id}.runs"
    runs.write_text(str(int(runs.read_text()) + 1 if runs.exists() else 1))
    time.sleep(float(job.payload.get("sleep", 0)))
    if job.payload.get("crash", "always") == "always":
        os.kill(os.getpid(), signal.SIGKILL)
    return {"applied": job.id}
"""


@pytest.fixture
def endpoint() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    # moto's backends are the process's: start each test from none
    urllib.request.urlopen(urllib.request.Request(f"{url}/moto-api/reset", method="POST")).read()
    yield url
    server.stop()


def _client(service: str, endpoint: str) -> Any:
    session = boto3.session.Session(aws_access_key_id="x", aws_secret_access_key="x", region_name=REGION)
    return session.client(service, endpoint_url=endpoint)  # type: ignore[call-overload]


def _wait_for(condition: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + _PATIENCE_S
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


class _World:
    def __init__(self, endpoint: str, tmp_path: Path, *, mode: str = "CLAIM") -> None:
        self.sqs = _client("sqs", endpoint)
        self.dynamodb = _client("dynamodb", endpoint)
        create_tables(self.dynamodb)
        self.queue_url = self.sqs.create_queue(
            QueueName="jobs.fifo", Attributes={"FifoQueue": "true", "VisibilityTimeout": str(VISIBILITY_S)}
        )["QueueUrl"]
        self.dlq_url = self.sqs.create_queue(QueueName="jobs-dlq.fifo", Attributes={"FifoQueue": "true"})[
            "QueueUrl"
        ]
        self.dir = tmp_path
        (tmp_path / "crashy.py").write_text(_JOB_CODE)
        self.env = {
            **os.environ,
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_ACCESS_KEY_ID": "x",
            "AWS_SECRET_ACCESS_KEY": "x",
            "AWS_DEFAULT_REGION": REGION,
            "PYTHONPATH": str(tmp_path),
            "CRASH_TEST_DIR": str(tmp_path),
            "CONSTRUCTS_FIFO_HANDLER": "crashy.handle",
            "CONSTRUCTS_FIFO_QUEUE_URL": self.queue_url,
            "CONSTRUCTS_FIFO_DEAD_LETTER_QUEUE_URL": self.dlq_url,
            "CONSTRUCTS_FIFO_CLAIM_TABLE": "claims",
            "CONSTRUCTS_FIFO_GROUP_TABLE": "groups",
            "CONSTRUCTS_FIFO_ON_DEAD_JOB": "CONTINUE",
            "CONSTRUCTS_FIFO_MAX_ATTEMPTS": "2",
            "CONSTRUCTS_FIFO_VISIBILITY_TIMEOUT_SECONDS": str(VISIBILITY_S),
            "CONSTRUCTS_FIFO_BACKOFF_BASE_SECONDS": "1",
            "CONSTRUCTS_FIFO_MODE": mode,
        }
        if mode == "STATE":
            self.env["CONSTRUCTS_FIFO_HANDLER"] = "crashy.apply"
        self.started = 0

    def send(self, job_id: str, group: str = "ws#1", **payload: Any) -> None:
        self.sqs.send_message(
            QueueUrl=self.queue_url,
            MessageBody=body(job_id, **payload),
            MessageGroupId=group,
            MessageDeduplicationId=job_id,
        )

    def worker(self, slots: int = 1, *extra: str) -> subprocess.Popen[bytes]:
        self.started += 1
        log = (self.dir / f"worker-{self.started}.log").open("wb")
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "constructs_fifo.cli",
                "worker",
                "--slots",
                str(slots),
                "--heartbeat-interval",
                "0.5",
                "--wait-time-seconds",
                "1",
                *extra,
            ],
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )

    def runs(self, job_id: str) -> int:
        path = self.dir / f"{job_id}.runs"
        return int(path.read_text()) if path.exists() else 0

    def effects(self, job_id: str) -> int:
        path = self.dir / f"{job_id}.effects"
        return len(path.read_text().splitlines()) if path.exists() else 0

    def claim(self, job_id: str) -> dict[str, Any]:
        item = self.dynamodb.get_item(TableName="claims", Key={"id": {"S": job_id}}, ConsistentRead=True)
        return {name: next(iter(value.values())) for name, value in item.get("Item", {}).items()}


def _stop(process: subprocess.Popen[bytes]) -> int:
    process.send_signal(signal.SIGTERM)
    return process.wait(_PATIENCE_S)


def test_a_worker_killed_in_a_job_leaves_a_counted_attempt_the_next_worker_finishes(
    endpoint: str, tmp_path: Path
) -> None:
    # GIVEN a job whose first run kills its worker (SIGKILL, in the middle of the job)
    world = _World(endpoint, tmp_path)
    world.send("j1")
    first = world.worker()
    assert first.wait(_PATIENCE_S) == -signal.SIGKILL
    # WHEN a second worker runs
    second = world.worker()
    finished = _wait_for(lambda: world.claim("j1").get("status") == STATUS_SUCCEEDED)
    # THEN it ran the job as attempt 2, once, and stopped gracefully on SIGTERM
    assert _stop(second) == 0
    assert finished
    assert (world.runs("j1"), world.effects("j1")) == (2, 1)
    assert world.claim("j1")["attempts"] == "2"


def test_a_job_that_kills_its_worker_on_every_attempt_dies_without_running_again(
    endpoint: str, tmp_path: Path
) -> None:
    # GIVEN a job that kills its worker on every run, and 2 attempts
    world = _World(endpoint, tmp_path)
    world.send("j1", crash="always")
    # WHEN workers are started one after the other until the job's claim is DEAD
    for _ in range(4):
        process = world.worker()
        dead = _wait_for(
            lambda process=process: (
                process.poll() is not None  # type: ignore[misc]
                or world.claim("j1").get("status") == STATUS_DEAD
            )
        )
        assert dead
        if world.claim("j1").get("status") == STATUS_DEAD:
            assert _stop(process) == 0
            break
    # THEN the job ran twice (both crashes counted), is dead of exhausted attempts, WorkerCrashedError
    # (the name state mode gives it too, and the runbook's), and went to the DLQ
    claim = world.claim("j1")
    assert (claim["status"], claim["attempts"], claim["dead_reason"], claim["error_type"]) == (
        STATUS_DEAD,
        "2",
        "ATTEMPTS_EXHAUSTED",
        "WorkerCrashedError",
    )
    assert world.runs("j1") == 2
    letters = world.sqs.receive_message(QueueUrl=world.dlq_url, MaxNumberOfMessages=10).get("Messages", [])
    assert [json.loads(m["Body"])["jobId"] for m in letters] == ["j1"]


def test_a_job_beside_one_that_kills_its_worker_every_time_loses_no_attempt_and_is_never_dead(
    endpoint: str, tmp_path: Path
) -> None:
    # GIVEN two-slot workers, 2 attempts, a poison job (it kills its worker on every run, after 0.5 s) and
    # a healthy job of another group that runs 2 s: both in the first worker's one receive
    world = _World(endpoint, tmp_path)
    world.send("poison", group="ws#p", crash="always", sleep=0.5)
    world.send("healthy", group="ws#h", crash="never", sleep=2)
    # WHEN two-slot workers are started one after the other until both jobs are finished
    done = {STATUS_DEAD, STATUS_SUCCEEDED}
    for _ in range(6):
        process = world.worker(slots=2)
        _wait_for(
            lambda process=process: (  # type: ignore[misc]
                process.poll() is not None
                or {world.claim(j).get("status") for j in ("poison", "healthy")} <= done
            )
        )
        if process.poll() is None:
            assert _stop(process) == 0
            break
    # THEN the healthy job succeeded on its first counted attempt: its run beside the crash cost nothing
    healthy, poison = world.claim("healthy"), world.claim("poison")
    assert (healthy["status"], healthy["attempts"]) == (STATUS_SUCCEEDED, "1")
    assert (world.runs("healthy"), world.effects("healthy")) == (2, 1)
    # AND the poison job died of its own crashes: one run shared (not counted), then 2 alone, counted
    assert (poison["status"], poison["attempts"], poison["dead_reason"]) == (
        STATUS_DEAD,
        "2",
        "ATTEMPTS_EXHAUSTED",
    )
    assert world.runs("poison") == 3
    letters = world.sqs.receive_message(QueueUrl=world.dlq_url, MaxNumberOfMessages=10).get("Messages", [])
    assert [json.loads(m["Body"])["jobId"] for m in letters] == ["poison"]


def test_a_transition_that_kills_its_worker_every_time_dies_worker_crashed(
    endpoint: str, tmp_path: Path
) -> None:
    # GIVEN a state-mode queue whose transition kills its worker on every run, and 2 attempts
    world = _World(endpoint, tmp_path, mode="STATE")
    world.send("s1")

    def letters() -> list[Any]:
        return list(
            world.sqs.receive_message(
                QueueUrl=world.dlq_url,
                MaxNumberOfMessages=10,
                MessageAttributeNames=["All"],
                VisibilityTimeout=0,
            ).get("Messages", [])
        )

    # WHEN workers are started one after the other until the job is dead-lettered
    for _ in range(6):
        process = world.worker()
        _wait_for(lambda process=process: process.poll() is not None or bool(letters()))  # type: ignore[misc]
        if process.poll() is None:  # it found the job dead and sent it on: stop it
            assert _stop(process) == 0
            break
    # THEN the crash watch counted the crashes and the job died WorkerCrashedError without running again:
    # the first delivery runs unwatched and the first redelivery under a group marker (the crash watch's
    # rules 1 and 2), then each run is marked: 2 + max_attempts runs
    assert world.runs("s1") == 4
    assert [m["MessageAttributes"]["errorType"]["StringValue"] for m in letters()] == ["WorkerCrashedError"]


def test_a_transition_beside_one_that_kills_its_worker_every_time_is_applied_never_dead(
    endpoint: str, tmp_path: Path
) -> None:
    # GIVEN a state-mode queue on two-slot workers, 2 attempts, a transition that kills its worker on
    # every run (after 0.5 s) and a healthy one of another group that runs 2 s
    world = _World(endpoint, tmp_path, mode="STATE")
    world.send("poison", group="ws#p", sleep=0.5)
    world.send("healthy", group="ws#h", crash="never", sleep=2)

    def letters() -> list[Any]:
        return list(
            world.sqs.receive_message(
                QueueUrl=world.dlq_url,
                MaxNumberOfMessages=10,
                MessageAttributeNames=["All"],
                VisibilityTimeout=0,
            ).get("Messages", [])
        )

    def applied() -> bool:
        key = {"group": {"S": "ws#h"}, "sk": {"S": "state"}}
        return "Item" in world.dynamodb.get_item(TableName="groups", Key=key, ConsistentRead=True)

    # WHEN two-slot workers are started one after the other until the poison is dead-lettered
    for _ in range(8):
        process = world.worker(slots=2)
        _wait_for(lambda process=process: process.poll() is not None or (bool(letters()) and applied()))  # type: ignore[misc]
        if process.poll() is None:
            assert _stop(process) == 0
            break
    # THEN the healthy transition was applied and only the poison died, of its own crashes
    assert applied()
    dead = letters()
    assert [json.loads(m["Body"])["jobId"] for m in dead] == ["poison"]
    assert [m["MessageAttributes"]["errorType"]["StringValue"] for m in dead] == ["WorkerCrashedError"]
    assert world.runs("poison") == 4


def test_a_stop_at_the_end_of_the_grace_stops_the_jobs_child_and_costs_no_attempt(
    endpoint: str, tmp_path: Path
) -> None:
    # GIVEN a worker (0.5 s of grace) running a job that started a child process and ignores cancellation
    world = _World(endpoint, tmp_path)
    world.send("j1", child=True)
    process = world.worker(1, "--grace-seconds", "0.5")
    child_file = tmp_path / "j1.child"
    assert _wait_for(child_file.exists)
    time.sleep(0.2)
    child = int(child_file.read_text())
    # WHEN the worker is stopped (SIGTERM) and the grace period ends with the job running
    code = _stop(process)
    # THEN it exited 0 with the job's child stopped (no orphan beside the retry)
    assert code == 0
    assert (
        not Path(f"/proc/{child}").exists()
        or "Z" in Path(f"/proc/{child}/stat").read_text().split(")")[-1][:3]
    )
    # AND the run was given back without costing an attempt: the next claim is attempt 1 again
    claim = world.claim("j1")
    assert (claim["status"], claim["attempts"], claim["error_type"]) == ("FAILED", "0", "WorkerStopped")
