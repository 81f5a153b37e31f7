"""End to end: serve, deploy with the real CDK CLI, run the demo, prove the verifier bites.

Marked ``e2e``: one emulator and one deployment for the whole module (see ``conftest.py``).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from constructs_fifo.cli import EXIT_OK, main
from constructs_fifo.local.demo.sample_app import OUTPUT_DEAD_LETTER_QUEUE_URL, OUTPUT_QUEUE_URL, OUTPUTS
from constructs_fifo.local.demo.scenario_verify import send_workload
from constructs_fifo.local.demo.steps import make_clients, sample_resources
from constructs_fifo.local.demo.verify import expectations_of, observe, verify
from constructs_fifo.local.demo.workload import WorkloadSpec, generate_workload
from constructs_fifo.local.event_source.runner import EventSourceRunner
from constructs_fifo.local.stack import resolve_queue

from .conftest import ROOT, Deployment

pytestmark = pytest.mark.e2e


def test_serve_and_deploy_give_the_sample_stack(deployment: Deployment) -> None:
    # GIVEN `local serve` and `deploy` ran (session fixture)
    outputs = deployment.outputs
    # THEN every output of the sample app's contract is there and the queues are FIFO
    assert set(OUTPUTS) <= set(outputs)
    assert outputs[OUTPUT_QUEUE_URL].endswith(".fifo")
    assert outputs[OUTPUT_DEAD_LETTER_QUEUE_URL].endswith(".fifo")
    # AND the stack's one queue is found at its construct path, with what the demo reads
    queue = resolve_queue("AgentJobs", target=deployment.target)
    assert queue.construct_path == "AgentJobs/Jobs"
    resources = sample_resources(queue)
    assert (
        resources.dead_letter_queue_url.rsplit("/", 1)[-1]
        == outputs[OUTPUT_DEAD_LETTER_QUEUE_URL].rsplit("/", 1)[-1]
    )
    # AND the emulator answers for them
    sqs = deployment.target.client("sqs")
    attributes = sqs.get_queue_attributes(QueueUrl=outputs["QueueUrl"], AttributeNames=["FifoQueue"])
    assert attributes["Attributes"]["FifoQueue"] == "true"


def test_demo_small_workload_verifies(deployment: Deployment, tmp_path: Path) -> None:
    # GIVEN the deployed stack and a small workload with every kind of trouble
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
            "4",
            "--jobs",
            "40",
            "--duplicate-rate",
            "0.2",
            "--failure-rate",
            "0.2",
            "--poison",
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
    assert counts["applied"] == 39
    assert counts["poison_dead_lettered"] == 1
    assert counts["collapsed_by_sqs"] == counts["duplicates_same_dedup_id"] == 4
    assert counts["skipped_by_claims"] == counts["duplicates_new_dedup_id"] == 4
    assert counts["transient_failures"] == 8


def test_divergence_scenario_shows_different_outcomes(
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
    # THEN it exits 0 and says the outcomes diverged although FIFO delivered both as sent
    out = capsys.readouterr().out
    assert code == EXIT_OK, out
    assert "Divergence shown" in out
    assert "prs" in out


def test_verifier_catches_a_consumer_that_keeps_going_after_a_failure(
    deployment: Deployment, tmp_path: Path
) -> None:
    # GIVEN a workload where many jobs fail transiently (no poison, no duplicates)
    workload = generate_workload(
        WorkloadSpec(workspaces=2, jobs=16, duplicate_rate=0.0, failure_rate=0.5, poison=0, seed=103)
    )
    target = deployment.target
    clients = make_clients(target)
    resources = sample_resources(resolve_queue("AgentJobs", target=target))
    send_workload(workload, resources.queue_url, sqs_client=clients.sqs, target=target)
    # AND the deployed mapping run with a naive handler that does not stop a group at its failure
    with EventSourceRunner.from_stack("AgentJobs", target=target) as runner:
        shutil.copy(Path(__file__).with_name("naive_consumer.py"), runner.function.code_dir)
        runner.function = dataclasses.replace(runner.function, handler="naive_consumer.handler")
        # WHEN the queue drains
        runner.drain(until_empty=True, for_seconds=15)  # failed ones wait out visibility
    # THEN the verifier reports the reordered workspaces, with expected and actual orders
    observed = observe(
        workload.workspace_ids,
        resources=resources,
        sqs_client=clients.sqs,
        dynamodb_client=clients.dynamodb,
    )
    violations = verify(expectations_of(workload), observed)
    order = [v for v in violations if v.kind == "order"]
    assert order, violations
    # AND what they describe is real: a job applied before an earlier job of its workspace was
    assert any(_overtaken(v.expected, v.actual) for v in order), order


def _overtaken(expected: list[str], actual: list[str]) -> bool:
    """True when some job ran while a job sent before it (same workspace) had not run yet."""
    position = {job_id: index for index, job_id in enumerate(actual)}
    return any(
        later in position and (earlier not in position or position[earlier] > position[later])
        for i, earlier in enumerate(expected)
        for later in expected[i + 1 :]
    )
