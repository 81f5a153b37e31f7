"""On the emulator: 100 jobs sent, each outcome read through the client API (issue 23's Done-when).

The session's sample deployment (``local serve`` + ``deploy`` with the real CDK CLI) holds the
``Notifications`` queue: claim mode under the default PARK policy, running ``notifier.handle``, which
returns ``notification_result(job id)``; claim mode stores it with the job's SUCCEEDED claim. Ten
workspaces get ten ``notify`` jobs each, through ``JobProducer``; the fifth job of one workspace is
poison (``PermanentJobError``), so it dies at once and parks its group, keeping the five jobs behind it.
The deployed mapping drains the queue (``EventSourceRunner``, what ``constructs-fifo drain`` runs).
Then ``JobOutcomes.wait`` for every job: 94 succeeded with their results, the poison dead with its
reason and error, its group parked at it, and the five behind it parked behind it (and kept, in order).
Resuming the group, skipping the dead job, lets the five run: their outcomes turn to succeeded, and
the queue is left with no parked group of this test.

``send_and_wait`` is then called while a drain runs in a background thread, as an MCP server would
wait on a queue whose mapping is live: it returns succeeded with the job's result.

Each run uses its own workspace ids (the session's queue is shared with the other e2e tests).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

import pytest

from constructs_fifo.client import (
    JobMessage,
    JobOutcome,
    JobOutcomes,
    JobProducer,
    JobStatus,
    ParkedGroups,
    QueueClient,
)
from constructs_fifo.demo.sample_app import (
    NOTIFICATION_TYPE,
    group_of,
    notification_result,
    poison,
)
from constructs_fifo.local.event_source.runner import EventSourceRunner
from constructs_fifo.runtime.constants import DeadReason
from constructs_fifo.stacks.deployed import DeployedQueue

from .conftest import Deployment, drain, draining_in_background

pytestmark = pytest.mark.e2e

WORKSPACES = 10
JOBS_PER_WORKSPACE = 10
#: The workspace whose job dies, and that job's place in it: the jobs after it are parked behind it.
DYING_WORKSPACE, DYING_PLACE = 3, 4
#: A drain's bound: 100 jobs take a few seconds; one that does not end waits on a message not of this test.
DRAIN_LIMIT_SECONDS = 60.0
#: How long a settled job's outcome may take to read (each is settled when the drain ends: one read).
WAIT_SECONDS = 10.0
#: How long ``send_and_wait`` waits for a job the background drain runs.
SEND_AND_WAIT_SECONDS = 30.0


@dataclass(frozen=True)
class Sent:
    """The test's 100 jobs, and which one dies."""

    run: str
    jobs: list[JobMessage]

    @property
    def dying(self) -> JobMessage:
        return self.jobs[DYING_WORKSPACE * JOBS_PER_WORKSPACE + DYING_PLACE]

    @property
    def behind(self) -> list[JobMessage]:
        """The jobs of the dying job's workspace after it, in send order."""
        start = DYING_WORKSPACE * JOBS_PER_WORKSPACE + DYING_PLACE + 1
        return self.jobs[start : (DYING_WORKSPACE + 1) * JOBS_PER_WORKSPACE]

    @property
    def succeeding(self) -> list[JobMessage]:
        settled_otherwise = {self.dying.job_id, *(job.job_id for job in self.behind)}
        return [job for job in self.jobs if job.job_id not in settled_otherwise]


def _jobs(run: str) -> list[JobMessage]:
    """Ten workspaces of ten ``notify`` jobs, workspace after workspace; one job is poison."""
    jobs = []
    for w in range(WORKSPACES):
        workspace = f"ws-oe-{run}-{w}"
        for k in range(JOBS_PER_WORKSPACE):
            job_id = f"{workspace}-n{k}"
            payload: dict[str, Any] = {"channel": "outcomes", "text": f"job {job_id}"}
            if (w, k) == (DYING_WORKSPACE, DYING_PLACE):
                payload.update(poison())
            jobs.append(JobMessage(job_id, NOTIFICATION_TYPE, payload, group=group_of(workspace)))
    return jobs


@pytest.fixture(scope="module")
def outcomes(queue: QueueClient) -> JobOutcomes:
    return queue.outcomes


def test_the_queue_client_found_by_name_is_the_deployed_queue(
    queue: QueueClient, notifications: DeployedQueue
) -> None:
    # GIVEN the client found by the stack's and the queue's names, and the queue the CLI resolves
    # THEN both name the same queue (account and name: the emulator's CloudFormation writes AWS's host
    # in the output, which boto3 sends to the client's endpoint all the same), dead-letter queue and tables
    def path(url: str | None) -> list[str]:
        return str(url).rsplit("/", 2)[-2:]

    assert path(queue.address.queue_url) == path(notifications.queue_url)
    assert path(queue.address.dead_letter_queue_url) == path(notifications.dead_letter_queue_url)
    assert (queue.address.claim_table, queue.address.group_table) == (
        notifications.claim_table,
        notifications.group_table,
    )


def _parked_groups(deployment: Deployment, queue: DeployedQueue) -> ParkedGroups:
    assert queue.group_table is not None and queue.dead_letter_queue_url is not None
    return ParkedGroups(
        group_table=queue.group_table,
        claim_table=queue.claim_table,
        queue_url=queue.queue_url,
        dead_letter_queue_url=queue.dead_letter_queue_url,
        dynamodb=deployment.target.client("dynamodb"),
        sqs=deployment.target.client("sqs"),
    )


def _wait_all(outcomes: JobOutcomes, jobs: list[JobMessage]) -> dict[str, JobOutcome]:
    """Every job's outcome, waited for together (one read request a poll), stopping at parked."""
    return outcomes.wait_many(jobs, WAIT_SECONDS, sent=True, stop_at_parked=True)


def test_100_jobs_through_the_emulator_succeed_with_results_die_and_park(
    deployment: Deployment,
    notifications: DeployedQueue,
    runner: EventSourceRunner,
    outcomes: JobOutcomes,
) -> None:
    # GIVEN 100 notify jobs in ten workspaces sent through the producer, one of them poison
    run = uuid.uuid4().hex[:8]
    sent = Sent(run, _jobs(run))
    JobProducer(notifications.queue_url, sqs_client=deployment.target.client("sqs")).send_batch(sent.jobs)
    # WHEN the deployed mapping drains the queue, then every job's outcome is waited for
    drain(runner, DRAIN_LIMIT_SECONDS)
    seen = _wait_all(outcomes, sent.jobs)
    # THEN 94 succeeded, each with the result its run of the notifier returned
    expected = {job.job_id: JobStatus.SUCCEEDED for job in sent.succeeding}
    expected[sent.dying.job_id] = JobStatus.DEAD
    expected.update({job.job_id: JobStatus.PARKED for job in sent.behind})
    assert {job_id: outcome.status for job_id, outcome in seen.items()} == expected
    assert len(sent.succeeding) == 94
    assert {job.job_id: seen[job.job_id].result for job in sent.succeeding} == {
        job.job_id: notification_result(job.job_id) for job in sent.succeeding
    }
    # AND the poison is dead at once, with its reason and error, its group parked at it
    dead = seen[sent.dying.job_id]
    assert (dead.dead_reason, dead.error_type, dead.parked_group, dead.attempt) == (
        DeadReason.PERMANENT.value,
        "PermanentJobError",
        sent.dying.group,
        1,
    )
    assert dead.error is not None and "is poison" in dead.error
    assert dead.result is None
    # AND the five after it are parked behind it, in its group, with no result
    assert [(seen[j.job_id].parked_behind, seen[j.job_id].parked_group) for j in sent.behind] == [
        (sent.dying.job_id, sent.dying.group)
    ] * 5
    assert all(seen[job.job_id].result is None for job in sent.behind)
    # AND the group keeps the dead job and those five, in send order, outside the queue
    parked = _parked_groups(deployment, notifications)
    kept = [json.loads(k.record["body"])["jobId"] for k in parked.kept(sent.dying.group, limit=100)]
    assert kept == [sent.dying.job_id, *(job.job_id for job in sent.behind)]

    # WHEN an operator resumes the group skipping the dead job, and the queue drains again
    assert parked.resume(sent.dying.group, skip_dead=True).skipped_job_id == sent.dying.job_id
    drain(runner, DRAIN_LIMIT_SECONDS)
    # THEN the five behind it succeeded with their results; the dead job stays dead; no group of the
    # test is parked
    after = _wait_all(outcomes, [sent.dying, *sent.behind])
    assert {job_id: (o.status, o.result) for job_id, o in after.items()} == {
        sent.dying.job_id: (JobStatus.DEAD, None),
        **{job.job_id: (JobStatus.SUCCEEDED, notification_result(job.job_id)) for job in sent.behind},
    }
    assert parked.get(sent.dying.group) is None


def test_send_and_wait_returns_the_result_while_the_mapping_runs(
    deployment: Deployment,
    notifications: DeployedQueue,
    runner: EventSourceRunner,
    queue: QueueClient,
) -> None:
    # GIVEN the deployed mapping running in a background thread, as a live event source mapping
    job_id = f"ws-oe-{uuid.uuid4().hex[:8]}-call"
    with draining_in_background(runner, DRAIN_LIMIT_SECONDS):
        # WHEN a caller sends a job and waits for its outcome in one call
        outcome = queue.send_and_wait(
            job_id,
            NOTIFICATION_TYPE,
            {"channel": "outcomes", "text": "send and wait"},
            group=group_of(f"ws-oe-{job_id}"),
            timeout_seconds=SEND_AND_WAIT_SECONDS,
        )
    # THEN it returns once the job succeeded, with the result the notifier returned
    assert (outcome.status, outcome.result, outcome.attempt) == (
        JobStatus.SUCCEEDED,
        notification_result(job_id),
        1,
    )
