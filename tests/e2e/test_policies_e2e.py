"""End to end on the emulator: no healthy job follows a failing one into the DLQ, in both policies.

The stack ``TwoQueues`` (``two_queues/app.py``, deployed with the real CDK CLI) holds two state-mode
queues running the sample's workspace transition: ``Park`` (the default policy) and ``Continue``. To
each go the same two workspaces, every job with its ``seq``:

- ``T``: a healthy job, then a job failing every attempt but its last (it succeeds on attempt
  ``max_attempts``, as the queue's function is deployed, and is not dead), then ten healthy jobs;
- ``P``: a healthy job, a poison job, two healthy jobs, the poison job again (a new deduplication
  id, as a producer's retry), then eight more healthy jobs: ten healthy jobs behind it.

Both queues drain at once. Then: under PARK the poison's workspace is parked at it, its healthy jobs
kept in order, and resuming it (skipping the dead job) applies them all in order; under CONTINUE the
poison's copies are in the DLQ and every healthy job applied in order. In both, no healthy job is in
the DLQ. What each workspace holds is read from its state, not from the runtime's bookkeeping.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from constructs_fifo.cli import EXIT_ENVIRONMENT, EXIT_OK, main
from constructs_fifo.client import JobMessage, JobProducer, ParkedGroups
from constructs_fifo.client.state_reader import GroupStateReader
from constructs_fifo.demo.sample_app import SampleQueue, group_of, poison, transient_failure
from constructs_fifo.demo.verify import Expectations, Observed, read_dead_letters, verify
from constructs_fifo.local.event_source.runner import EventSourceRunner
from constructs_fifo.runtime.constants import ENV_MAX_ATTEMPTS, DeadReason
from constructs_fifo.stacks.counters import queue_counts
from constructs_fifo.stacks.deployed import DeployedQueue, find_queues

from .conftest import ROOT, Deployment

pytestmark = pytest.mark.e2e

APP_DIR = Path(__file__).with_name("two_queues")
STACK = "TwoQueues"


@dataclass(frozen=True)
class Workspace:
    """One workspace's jobs: every message in send order, and what it must end up applying."""

    workspace: str
    messages: list[JobMessage]
    healthy: list[str]
    special: str

    @property
    def group(self) -> str:
        return group_of(self.workspace)


def _job(workspace: str, name: str, seq: int, payload: dict[str, Any] | None = None) -> JobMessage:
    job_type = ("apply_patch", "run_tests", "open_pr")[seq % 3]
    return JobMessage(f"{workspace}-{name}", job_type, payload or {}, group=group_of(workspace), seq=seq)


def _workspaces(policy: str, queues: dict[str, DeployedQueue]) -> tuple[Workspace, Workspace]:
    """The ``T`` and ``P`` workspaces for one queue (their ids name the policy: each queue its own)."""
    t, p = f"ws-e2e6-{policy}-t", f"ws-e2e6-{policy}-p"
    max_attempts = int(queues[policy].function_environment[ENV_MAX_ATTEMPTS])  # as deployed
    last = _job(t, "last", 1, transient_failure(max_attempts - 1))
    t_jobs = [_job(t, "h00", 0), last, *(_job(t, f"h{i:02d}", i) for i in range(2, 12))]
    dead = _job(p, "poison", 1, poison())
    copy = JobMessage(
        dead.job_id, dead.job_type, dead.payload, group=dead.group, seq=1, deduplication_id="copy"
    )
    behind = [_job(p, f"h{i:02d}", i) for i in range(2, 12)]
    p_jobs = [_job(p, "h00", 0), dead, *behind[:2], copy, *behind[2:]]
    return (
        Workspace(t, t_jobs, [m.job_id for m in t_jobs], last.job_id),
        Workspace(p, p_jobs, [m.job_id for m in p_jobs if m.job_id != dead.job_id], dead.job_id),
    )


@pytest.fixture(scope="module")
def queues(deployment: Deployment) -> dict[str, DeployedQueue]:
    """``constructs-fifo deploy`` of the two-queue stack; its queues by construct id."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", str(ROOT / "node_modules" / ".bin"), prepend=os.pathsep)  # the CDK CLI, as make
        code = main(
            ["deploy", "--endpoint-url", deployment.endpoint_url, "--app-dir", str(APP_DIR), "--stack", STACK]
        )
    assert code == EXIT_OK
    return {queue.label.rsplit("/", 1)[-1]: queue for queue in find_queues(STACK, target=deployment.target)}


def _sample_queue(queue: DeployedQueue) -> SampleQueue:
    assert queue.dead_letter_queue_url is not None and queue.group_table is not None
    return SampleQueue(queue.label, queue.queue_url, queue.dead_letter_queue_url, queue.group_table)


def _drain_all(deployment: Deployment, queues: list[DeployedQueue]) -> None:
    """Drain the queues at the same time (each waits out its last-attempt job's backoff, a few seconds)."""

    def drain(queue: DeployedQueue) -> None:
        with EventSourceRunner.from_function(
            queue.function_name, target=deployment.target, queue_arn=queue.queue_arn
        ) as runner:
            runner.drain(until_empty=True)

    threads = [threading.Thread(target=drain, args=(queue,)) for queue in queues]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _observe(deployment: Deployment, queue: DeployedQueue, workspaces: tuple[Workspace, ...]) -> Observed:
    sample = _sample_queue(queue)
    dynamodb, sqs = deployment.target.client("dynamodb"), deployment.target.client("sqs")
    reader = GroupStateReader(sample.group_table, dynamodb)
    applied = {}
    for ws in workspaces:
        state = reader.get(ws.group) or {}
        applied[ws.workspace] = [entry["jobId"] for entry in state.get("activity", [])]
    parked = _parked(deployment, queue)
    counts = queue_counts(sqs, queue.queue_url)
    return Observed(
        applied=applied,
        dead_letters=read_dead_letters(sqs, sample),
        parked={queue.label: [header.group for header in parked.list_groups()]},
        queue_depths={queue.label: (counts.visible, counts.in_flight)},
    )


def _parked(deployment: Deployment, queue: DeployedQueue) -> ParkedGroups:
    sample = _sample_queue(queue)
    return ParkedGroups(
        group_table=sample.group_table,
        queue_url=sample.queue_url,
        dead_letter_queue_url=sample.dead_letter_queue_url,
        dynamodb=deployment.target.client("dynamodb"),
        sqs=deployment.target.client("sqs"),
    )


def _expectations(t: Workspace, p: Workspace) -> Expectations:
    return Expectations(
        order={t.workspace: t.healthy, p.workspace: p.healthy},
        poison={p.special: p.workspace},
        last_attempt={t.special: t.workspace},
    )


@pytest.fixture(scope="module")
def drained(deployment: Deployment, queues: dict[str, DeployedQueue]) -> Iterator[dict[str, Observed]]:
    """Both workspaces sent to both queues, both queues drained at once; what each holds right after."""
    sqs = deployment.target.client("sqs")
    for policy, queue in queues.items():
        t, p = _workspaces(policy, queues)
        JobProducer(queue.queue_url, sqs_client=sqs).send_batch([*t.messages, *p.messages])
    _drain_all(deployment, list(queues.values()))
    yield {
        policy: _observe(deployment, queue, _workspaces(policy, queues)) for policy, queue in queues.items()
    }


def test_park_stops_the_poisons_workspace_at_it_keeping_its_healthy_jobs_in_order(
    deployment: Deployment, queues: dict[str, DeployedQueue], drained: dict[str, Observed]
) -> None:
    # GIVEN both workspaces drained on the PARK queue
    t, p = _workspaces("Park", queues)
    observed = drained["Park"]
    # THEN the last-attempt job's workspace applied all twelve in order (the job was not dead)
    assert observed.applied[t.workspace] == t.healthy
    # AND the poison's workspace stopped at it: only the job before it applied, the group parked there
    assert observed.applied[p.workspace] == p.healthy[:1]
    parked = _parked(deployment, queues["Park"])
    header = parked.get(p.group)
    assert header is not None and header.dead.job_id == p.special
    assert header.dead.reason == DeadReason.PERMANENT.value
    # AND it, its copy and every healthy job behind it are kept in order, outside the queue
    kept = [json.loads(k.record["body"])["jobId"] for k in parked.kept(p.group, limit=100)]
    assert kept == [m.job_id for m in p.messages[1:]]
    # AND no job is in the DLQ yet: none of the healthy jobs followed the poison there
    assert [d for d in observed.dead_letters if d.group in {t.group, p.group}] == []


def test_park_then_resume_skipping_the_dead_job_applies_every_healthy_job_in_order(
    deployment: Deployment, queues: dict[str, DeployedQueue], drained: dict[str, Observed]
) -> None:
    # GIVEN the poison's workspace parked on the PARK queue
    t, p = _workspaces("Park", queues)
    queue = queues["Park"]
    # WHEN an operator resumes it skipping the dead job, and the queue drains again
    result = _parked(deployment, queue).resume(p.group, skip_dead=True)
    assert result.skipped_job_id == p.special
    _drain_all(deployment, [queue])
    # THEN every healthy job of both workspaces applied once and in sent order, the last-attempt job
    # included; the poison in the DLQ as PERMANENT and its copy as COPY_OF_DEAD_JOB, nothing else;
    # no group parked; the queue empty
    assert verify(_expectations(t, p), _observe(deployment, queue, (t, p))) == []


def test_continue_dead_letters_the_poisons_copies_and_applies_every_healthy_job_in_order(
    deployment: Deployment, queues: dict[str, DeployedQueue], drained: dict[str, Observed]
) -> None:
    # GIVEN both workspaces drained on the CONTINUE queue
    t, p = _workspaces("Continue", queues)
    observed = drained["Continue"]
    # THEN the same holds without any operator: every healthy job applied in order, the poison's two
    # copies (and nothing else) in the DLQ, no group parked, the queue empty
    assert verify(_expectations(t, p), observed) == []
    reasons = sorted(d.reason or "" for d in observed.dead_letters if d.job_id == p.special)
    assert reasons == [DeadReason.COPY_OF_DEAD_JOB.value, DeadReason.PERMANENT.value]


def test_drain_of_the_two_queue_stack_needs_queue_or_all(
    deployment: Deployment, drained: dict[str, Observed], capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the deployed two-queue stack WHEN drained without --queue
    code = main(["drain", "--endpoint-url", deployment.endpoint_url, "--stack", STACK])
    # THEN exit 3 and one line listing both queues and the fix
    err = capsys.readouterr().err.strip().splitlines()
    assert code == EXIT_ENVIRONMENT
    assert len(err) == 1
    assert f"holds 2 queues: {STACK}/Continue (queue " in err[0]
    assert f"; {STACK}/Park (queue " in err[0]
    assert "Fix: pass --queue with a construct path or queue name" in err[0]
    # AND with --queue it drains that one, with --all both (nothing left to do in either)
    code = main(["drain", "--endpoint-url", deployment.endpoint_url, "--stack", STACK, "--queue", "Park"])
    assert code == EXIT_OK
    assert json.loads(capsys.readouterr().out)["batches"] == 0
    code = main(["drain", "--endpoint-url", deployment.endpoint_url, "--stack", STACK, "--all"])
    assert code == EXIT_OK
    assert {label: stats["batches"] for label, stats in json.loads(capsys.readouterr().out).items()} == {
        f"{STACK}/Continue": 0,
        f"{STACK}/Park": 0,
    }
