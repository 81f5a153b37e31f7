"""examples/agent_workspace on the emulator: a workspace pipeline on container workers, through a SIGKILL.

The example deploys from its own directory (the workers' image a name only: the emulator runs no task);
its workers run as the tasks would, ``constructs-fifo worker --stack AgentWorkspace --queue Pipeline
--code-dir examples/agent_workspace/jobs`` processes. Two workspaces each get ``apply_patch``,
``apply_patch``, a ``run_tests`` of two visibility timeouts and ``open_pr``; one workspace's patch
fails its tests. The first worker is killed (SIGKILL) while it runs the tests; a second worker takes the
workspaces over from the bucket, where the first left them. (After the kill each test run runs alone on
the second worker, one after the other: one more workspace is one more run's time, and proves nothing
the passing one does not.)

Then each passing workspace's HEAD is its second patch's commit, its tests ran again (a second
attempt) and passed on that commit, and its pull request was opened once, from it; the failing
workspace's ``open_pr`` is dead (no pull request) and its group parked; the jobs the second worker ran
read what the first one wrote. Last, the first patch run again (a stale run of a job whose commit is
recorded) changes nothing: the effect guard.

Marked ``e2e``: the examples' emulator (tests/examples/conftest.py), this example's stack deployed once.
"""

from __future__ import annotations

import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.workers import WorkerProcess, start_worker

from constructs_fifo.client import JobMessage, JobOutcomes, JobProducer, JobStatus
from constructs_fifo.stacks.deployed import resolve_queue

from .conftest import EXAMPLES, Deployment, Emulator, deployed_example, load_job_module

pytestmark = pytest.mark.e2e

APP_DIR = EXAMPLES / "agent_workspace"
JOBS_DIR = APP_DIR / "jobs"
STACK, QUEUE = "AgentWorkspace", "Pipeline"
VISIBILITY_TIMEOUT_SECONDS = 5  # agent_workspace_stack.VISIBILITY_TIMEOUT_SECONDS
#: Two visibility timeouts: the test run outlives its records' visibility unless heartbeats renew it.
TEST_RUN_SECONDS = 2 * VISIBILITY_TIMEOUT_SECONDS
GRACE_SECONDS = 2 * TEST_RUN_SECONDS
LIMIT_SECONDS = 120.0
POLL_SECONDS = 0.5
#: The passing workspaces (one: every check below is per passing workspace), and the failing one.
WORKSPACES = ("ws-a",)
CALC = "def add(a, b):\n    return a + b\n"
FAILING = "ws-f"


STORE = load_job_module("agent_workspace", "workspace_store")


@pytest.fixture(scope="module")
def example(examples_emulator: Emulator) -> Deployment:
    image = {"AGENT_WORKSPACE_IMAGE": "public.ecr.aws/docker/library/python:3.12-slim"}
    return deployed_example(examples_emulator, "agent_workspace", STACK, app_environment=image)


@pytest.fixture
def workers(example: Deployment) -> Iterator[list[WorkerProcess]]:
    started: list[WorkerProcess] = []
    yield started
    for worker in started:
        if worker.process.poll() is None:
            worker.process.send_signal(signal.SIGKILL)
            worker.process.wait(timeout=10)


def _start(example: Deployment, tmp_path: Path, name: str) -> WorkerProcess:
    return start_worker(
        example,
        tmp_path,
        name,
        stack=STACK,
        queue=QUEUE,
        code_dir=JOBS_DIR,
        slots=4,
        grace_seconds=GRACE_SECONDS,
        extra=("--log-format", "json"),
    )


def _pipeline(run: str, workspace: str) -> list[JobMessage]:
    group = f"ws#{workspace}"
    second = (
        "FAIL: the patch breaks a test\n" if workspace == FAILING else "def add(a, b):\n    return a + b\n"
    )
    return [
        JobMessage(f"{run}-{workspace}-patch-1", "apply_patch", {"files": {"README.md": "# calc\n"}}, group),
        JobMessage(f"{run}-{workspace}-patch-2", "apply_patch", {"files": {"calc.py": second}}, group),
        JobMessage(f"{run}-{workspace}-tests", "run_tests", {"durationSeconds": TEST_RUN_SECONDS}, group),
        JobMessage(f"{run}-{workspace}-pr", "open_pr", {"title": f"calc for {workspace}"}, group),
    ]


def test_workspace_pipelines_survive_a_killed_worker_and_commit_once(
    example: Deployment, workers: list[WorkerProcess], tmp_path: Path
) -> None:
    # GIVEN the deployed example and a pipeline for each of two workspaces (one whose patch fails tests)
    started = time.monotonic()
    target = example.target
    queue = resolve_queue(STACK, target=target, queue=QUEUE)
    assert queue.is_container and queue.claim_table
    run = uuid.uuid4().hex[:8]
    pipelines = {ws: _pipeline(run, ws) for ws in (*WORKSPACES, FAILING)}
    JobProducer(queue.queue_url, sqs_client=target.client("sqs")).send_batch(
        [job for jobs in pipelines.values() for job in jobs]
    )
    reader = JobOutcomes(
        claim_table=queue.claim_table, group_table=queue.group_table, dynamodb=target.client("dynamodb")
    )
    tests = [jobs[2] for jobs in pipelines.values()]
    # WHEN a worker runs them until every workspace's tests are running, and is then killed
    first = _start(example, tmp_path, "first")
    workers.append(first)
    deadline = time.monotonic() + LIMIT_SECONDS
    while sum(reader.get(j.job_id, j.group, sent=True).status is JobStatus.RUNNING for j in tests) < len(
        tests
    ):
        assert time.monotonic() < deadline, f"the tests never all ran: {first.log.read_text()[-2000:]}"
        assert first.process.poll() is None, first.log.read_text()[-2000:]
        time.sleep(POLL_SECONDS)
    first.process.send_signal(signal.SIGKILL)
    # AND another worker (another task: its own disk) takes over
    second = _start(example, tmp_path, "second")
    workers.append(second)
    outcomes = {}
    for job in (job for jobs in pipelines.values() for job in jobs):
        left = max(1.0, LIMIT_SECONDS - (time.monotonic() - started))
        outcomes[job.job_id] = reader.wait(job.job_id, left, group=job.group)
    # THEN every job of the passing workspaces succeeded; the tests ran again, on the second worker
    store = STORE.WorkspaceStore(example.outputs["WorkspaceBucketName"], target.client("s3"))
    for workspace in WORKSPACES:
        patch_1, patch_2, tests_job, pr = pipelines[workspace]
        assert [outcomes[j.job_id].status for j in pipelines[workspace]] == [JobStatus.SUCCEEDED] * 4
        head = store.head(workspace)
        assert head is not None and head.job_id == patch_2.job_id
        assert head.files == {"README.md": "# calc\n", "calc.py": CALC}
        assert head.parent == outcomes[patch_1.job_id].result["commit"]
        tested = outcomes[tests_job.job_id]
        assert tested.result["commit"] == head.commit and tested.result["passed"] is True
        # the killed run was the first; a crash of a worker of several slots costs none of its jobs an
        # attempt (docs/architecture.md), so the retry is still attempt 1, on the second worker
        assert tested.attempt == 1
        assert tests_job.job_id in set(second.succeeded())
        assert outcomes[pr.job_id].result == {
            "commit": head.commit,
            "title": f"calc for {workspace}",
            "replayed": False,
        }
        assert store.pull(workspace, pr.job_id) == STORE.PullRequest(
            pr.job_id, head.commit, f"calc for {workspace}"
        )
    # AND the workspace the first worker wrote is the one the second read: each job ran once to success
    # (the patches all ran before the second worker started; the tests and pull requests ran on it)
    first_ran, second_ran = set(first.succeeded()), set(second.succeeded())
    assert not {j.job_id for jobs in pipelines.values() for j in jobs[:2]} & second_ran
    assert {j.job_id for j in tests} <= second_ran and not first_ran & second_ran
    # AND the failing workspace's tests failed on its commit and its pull request never opened: dead, parked
    failed_pr = pipelines[FAILING][3]
    assert outcomes[pipelines[FAILING][2].job_id].result["passed"] is False
    assert outcomes[failed_pr.job_id].status is JobStatus.DEAD
    assert store.pull(FAILING, failed_pr.job_id) is None
    # AND a stale run of a recorded patch changes nothing: its commit is found under its job id, HEAD stays
    workspace, (patch_1, patch_2, *_) = WORKSPACES[0], pipelines[WORKSPACES[0]]
    before = store.head(workspace)
    again, made = store.apply_patch(workspace, patch_1.job_id, {"README.md": "# calc\n"})
    assert not made and again.commit == outcomes[patch_1.job_id].result["commit"]
    assert store.head(workspace) == before
    seconds = time.monotonic() - started
    print(
        f"agent_workspace e2e: serve {example.serve_seconds:.1f} s, deploy {example.deploy_seconds:.1f} s, "
        f"{len(outcomes)} jobs in {seconds:.1f} s"
    )
