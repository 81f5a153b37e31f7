"""End to end: a stack with two OrderedAgentQueues, deployed by the demo and picked with ``--queue``.

Uses the session's emulator (see ``conftest.py``); the demo deploys ``two_queues/app.py`` with the real
CDK CLI.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from constructs_fifo.cli import EXIT_ENVIRONMENT, EXIT_OK, main
from constructs_fifo.local.demo.steps import sample_resources
from constructs_fifo.local.queues import queue_counts
from constructs_fifo.local.stack import find_queues

from .conftest import ROOT, Deployment

pytestmark = pytest.mark.e2e

APP_DIR = Path(__file__).with_name("two_queues")


@pytest.fixture(scope="module")
def two_queues(deployment: Deployment, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """`constructs-fifo demo --queue Second` deploys the stack and runs on its second queue only."""
    report = tmp_path_factory.mktemp("two-queues") / "demo.json"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", str(ROOT / "node_modules" / ".bin"), prepend=os.pathsep)  # the CDK CLI, as make
        code = main(
            [
                "demo",
                "--endpoint-url",
                deployment.endpoint_url,
                "--app-dir",
                str(APP_DIR),
                "--stack",
                "TwoQueues",
                "--queue",
                "Second",
                "--workspaces",
                "2",
                "--jobs",
                "6",
                "--duplicate-rate",
                "0",
                "--failure-rate",
                "0",
                "--poison",
                "0",
                "--seed",
                "201",
                "--report",
                str(report),
            ]
        )
    return {"code": code, "report": json.loads(report.read_text())}


def test_demo_deploys_a_two_queue_stack_and_runs_on_the_queue_named(
    deployment: Deployment, two_queues: dict[str, object]
) -> None:
    # GIVEN the demo ran with --queue Second (module fixture)
    report = two_queues["report"]
    assert isinstance(report, dict)
    # THEN it passed on that queue
    assert two_queues["code"] == EXIT_OK, report["violations"]
    assert report["queue"]["constructPath"] == "TwoQueues/Second"
    assert report["counts"]["applied"] == 6
    # AND the first queue and its workspaces were not touched
    queues = {queue.construct_path: queue for queue in find_queues("TwoQueues", target=deployment.target)}
    assert set(queues) == {"TwoQueues/First", "TwoQueues/Second"}
    first = sample_resources(queues["TwoQueues/First"])
    second = sample_resources(queues["TwoQueues/Second"])
    assert first.workspace_table != second.workspace_table
    assert first.claim_table != second.claim_table
    sqs = deployment.target.client("sqs")
    assert queue_counts(sqs, first.queue_url).total == 0
    dynamodb = deployment.target.client("dynamodb")
    assert dynamodb.scan(TableName=first.workspace_table)["Count"] == 0
    assert dynamodb.scan(TableName=second.workspace_table)["Count"] == 2


def test_drain_of_the_two_queue_stack_without_queue_lists_both(
    deployment: Deployment, two_queues: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the deployed two-queue stack WHEN drained without --queue
    code = main(["drain", "--endpoint-url", deployment.endpoint_url, "--stack", "TwoQueues"])
    # THEN exit 3 and one line listing both queues and the fix
    err = capsys.readouterr().err.strip().splitlines()
    assert code == EXIT_ENVIRONMENT
    assert len(err) == 1
    assert "holds 2 queues: TwoQueues/First (queue " in err[0]
    assert "; TwoQueues/Second (queue " in err[0]
    assert "Fix: pass --queue with a construct path or queue name" in err[0]
    # AND with --queue it drains that one
    code = main(
        ["drain", "--endpoint-url", deployment.endpoint_url, "--stack", "TwoQueues", "--queue", "First"]
    )
    assert code == EXIT_OK
    assert json.loads(capsys.readouterr().out)["batches"] == 0  # nothing was sent to First
