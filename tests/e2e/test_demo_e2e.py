"""End to end: serve, deploy with the real CDK CLI, run the demo and the divergence, prove the verifier bites.

Marked ``e2e``: one emulator and one deployment for the whole session (see ``conftest.py``).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from constructs_fifo.cli import EXIT_OK, main
from constructs_fifo.demo.sample_app import (
    ACCOUNT_QUEUE,
    BUILD_QUEUE,
    NOTIFICATION_QUEUE,
    OUTPUT_NOTIFICATION_QUEUE_URL,
    OUTPUT_WORKSPACE_DEAD_LETTER_QUEUE_URL,
    OUTPUT_WORKSPACE_QUEUE_URL,
    OUTPUTS,
    STACK_NAME,
    WORKSPACE_QUEUE,
    SampleResources,
)
from constructs_fifo.demo.scenarios.pipeline import send_workload
from constructs_fifo.demo.steps import Clients, make_clients, sample_resources
from constructs_fifo.demo.verify import Violation, expectations_of, observe, verify
from constructs_fifo.demo.workload import Workload, WorkloadSpec, generate_workload
from constructs_fifo.local.event_source.runner import EventSourceRunner
from constructs_fifo.stacks.deployed import find_queues

from .conftest import ROOT, Deployment, draining_in_background

pytestmark = pytest.mark.e2e


def test_serve_and_deploy_give_the_sample_stack_with_a_queue_per_mode(deployment: Deployment) -> None:
    # GIVEN `local serve` and `deploy` ran (session fixture)
    outputs = deployment.outputs
    # THEN every output of the sample app's contract is there and the queues are FIFO
    assert set(OUTPUTS) <= set(outputs)
    assert outputs[OUTPUT_WORKSPACE_QUEUE_URL].endswith(".fifo")
    assert outputs[OUTPUT_WORKSPACE_DEAD_LETTER_QUEUE_URL].endswith(".fifo")
    # AND the stack's four queues are found at their construct paths, with what the demo reads (the
    # build queue's from its task definition: container workers consume it)
    queues = {queue.construct_path: queue for queue in find_queues(STACK_NAME, target=deployment.target)}
    workspaces = queues[f"{STACK_NAME}/{WORKSPACE_QUEUE}"]
    notifications = queues[f"{STACK_NAME}/{NOTIFICATION_QUEUE}"]
    accounts = queues[f"{STACK_NAME}/{ACCOUNT_QUEUE}"]
    builds = queues[f"{STACK_NAME}/{BUILD_QUEUE}"]
    assert set(queues) == {
        workspaces.construct_path,
        notifications.construct_path,
        accounts.construct_path,
        builds.construct_path,
    }
    assert builds.is_container and builds.claim_table is not None
    resources = sample_resources(workspaces, notifications)
    assert (
        resources.workspaces.dead_letter_queue_url.rsplit("/", 1)[-1]
        == (outputs[OUTPUT_WORKSPACE_DEAD_LETTER_QUEUE_URL].rsplit("/", 1)[-1])
    )
    assert notifications.claim_table is not None and workspaces.claim_table is None
    # AND the emulator answers for them
    sqs = deployment.target.client("sqs")
    attributes = sqs.get_queue_attributes(
        QueueUrl=outputs[OUTPUT_NOTIFICATION_QUEUE_URL], AttributeNames=["FifoQueue"]
    )
    assert attributes["Attributes"]["FifoQueue"] == "true"


def test_demo_small_workload_verifies_in_both_modes(deployment: Deployment, tmp_path: Path) -> None:
    # GIVEN the deployed stack and a small workload with every kind of trouble: duplicates, transient
    # failures, a poison job sent twice and a job failing until its last attempt (each with ten
    # healthy jobs behind it)
    report = tmp_path / "demo.json"
    # WHEN the demo runs against it
    code = main(
        [
            "demo",
            "--endpoint-url",
            deployment.endpoint_url,
            "--no-deploy",
            "--app-dir",
            str(ROOT),
            "--workspaces",
            "3",
            "--jobs",
            "36",
            "--duplicate-rate",
            "0.2",
            "--failure-rate",
            "0.2",
            "--poison",
            "1",
            "--last-attempt",
            "1",
            "--seed",
            "101",
            "--report",
            str(report),
        ]
    )
    # THEN it passes, and the report shows each mechanism at work
    result = json.loads(report.read_text())
    assert code == EXIT_OK, result["violations"]
    assert result["passed"] is True
    counts = result["counts"]
    assert counts["applied"] == 35
    assert counts["notifications_recorded"] == counts["notifications"] == 12
    assert (counts["poison_dead_lettered"], counts["poison_dead_letter_messages"]) == (1, 2)
    assert counts["last_attempt_applied"] == 1
    # AND the long builds on local workers: each once, the killed worker's run again, the stopped one's kept
    assert counts["builds_succeeded"] == counts["builds"] > 0
    assert counts["builds_retried_after_sigkill"] >= 1
    assert counts["builds_finished_after_sigterm"] >= 1
    # AND the one group parked was the poison job's, resumed skipping it
    spec = WorkloadSpec(workspaces=3, jobs=36, duplicate_rate=0.2, failure_rate=0.2, poison=1, seed=101)
    (poison,) = generate_workload(spec).poison_jobs
    assert [(r["group"], r["deadJobId"], r["reason"]) for r in result["resumed"]] == [
        (poison.group, poison.job_id, "PERMANENT")
    ]
    assert counts["collapsed_by_sqs"] == counts["duplicates_same_dedup_id"]
    assert counts["skipped_by_state"] + counts["skipped_by_claims"] == counts["duplicates_new_dedup_id"]
    # AND the DynamoDB calls per job were measured for both queues: the workspace transition makes none
    calls = result["dynamodb_calls_per_job"]
    assert calls["workspaces"]["job_code"] == 0
    assert 0 < calls["workspaces"]["runtime"] < calls["notifications"]["runtime"]
    assert calls["notifications"]["job_code"] >= 1


def test_divergence_scenario_diverges_without_seq_and_converges_with_it(
    deployment: Deployment, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the deployed stack WHEN the divergence scenario runs
    code = main(
        [
            "demo",
            "--scenario",
            "divergence",
            "--endpoint-url",
            deployment.endpoint_url,
            "--no-deploy",
            "--seed",
            "102",
        ]
    )
    # THEN it exits 0: the shuffled producer without seq diverged, the one with seq converged
    out = capsys.readouterr().out
    assert code == EXIT_OK, out
    assert "different in prs" in out
    assert "converged to the in-order result" in out


def test_verifier_catches_a_consumer_that_keeps_going_after_a_failure(deployment: Deployment) -> None:
    # GIVEN a workload where many jobs fail transiently (no poison, no duplicates)
    workload = generate_workload(
        WorkloadSpec(
            workspaces=2, jobs=16, duplicate_rate=0.0, failure_rate=0.5, poison=0, last_attempt=0, seed=103
        )
    )
    target = deployment.target
    clients = make_clients(target)
    queues = {queue.construct_path: queue for queue in find_queues(STACK_NAME, target=target)}
    workspaces = queues[f"{STACK_NAME}/{WORKSPACE_QUEUE}"]
    resources = sample_resources(workspaces, queues[f"{STACK_NAME}/{NOTIFICATION_QUEUE}"])
    send_workload(workload, workspaces.queue_url, sqs_client=clients.sqs, target=target, queue="workspaces")
    # AND the deployed mapping run with a naive handler that does not stop a group at its failure
    verified = functools.partial(_verified, workload, resources=resources, clients=clients)
    try:
        with EventSourceRunner.from_function(
            workspaces.function_name, target=target, queue_arn=workspaces.queue_arn
        ) as runner:
            shutil.copy(Path(__file__).with_name("naive_consumer.py"), runner.function.code_dir)
            runner.function = dataclasses.replace(runner.function, handler="naive_consumer.handler")
            # WHEN the queue drains: until a job was applied before an earlier one of its workspace, at
            # most 15 s (the failed ones wait out their visibility: the queue does not empty)
            with draining_in_background(runner, for_seconds=15) as background:
                while background.thread.is_alive() and not any(_overtaken(*o) for o in _order(verified())):
                    time.sleep(0.5)
    finally:
        # The failed ones would wait out their 12-minute visibility in the session's shared queue, and
        # hold up the next test's drain: the queue is left as this test found it.
        clients.sqs.purge_queue(QueueUrl=workspaces.queue_url)
    # THEN the verifier reports the reordered workspaces, with expected and actual orders
    violations = verified()
    order = [v for v in violations if v.kind == "order"]
    assert order, violations
    # AND what they describe is real: a job applied before an earlier job of its workspace was
    assert any(_overtaken(v.expected, v.actual) for v in order), order


def _verified(workload: Workload, *, resources: SampleResources, clients: Clients) -> list[Violation]:
    """The verifier's violations, from what the deployed resources hold now."""
    observed = observe(
        workload.workspace_ids,
        resources=resources,
        sqs_client=clients.sqs,
        dynamodb_client=clients.dynamodb,
    )
    return verify(expectations_of(workload), observed)


def _order(violations: list[Violation]) -> list[tuple[Any, Any]]:
    """The (expected, actual) orders of the order violations."""
    return [(v.expected, v.actual) for v in violations if v.kind == "order"]


def _overtaken(expected: list[str], actual: list[str]) -> bool:
    """True when some job ran while a job sent before it (same workspace) had not run yet."""
    position = {job_id: index for index, job_id in enumerate(actual)}
    return any(
        later in position and (earlier not in position or position[earlier] > position[later])
        for i, earlier in enumerate(expected)
        for later in expected[i + 1 :]
    )
