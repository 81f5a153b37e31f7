"""The verify scenario's pure pieces: the JSON report, and refusing a seed already run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from constructs_fifo.local.demo.sample_app import SampleResources
from constructs_fifo.local.demo.scenario_verify import DemoResult, check_fresh
from constructs_fifo.local.demo.steps import DemoOptions
from constructs_fifo.local.demo.verify import Violation
from constructs_fifo.local.demo.workload import WorkloadSpec, generate_workload
from constructs_fifo.local.errors import DemoError

RESOURCES = SampleResources(
    queue_url="q.fifo", dead_letter_queue_url="dlq.fifo", claim_table="claims", workspace_table="workspaces"
)


def test_report_json_carries_counts_timings_and_violations(tmp_path: Path) -> None:
    # GIVEN a result with one violation
    result = DemoResult(options=DemoOptions())
    result.counts = {"jobs": 10, "violations": 1}
    result.timings.seconds = {"deploy": 30.0, "drain": 12.5}
    result.violations = [Violation("order", "workspace w: ...", "w", None, ["a", "b"], ["b", "a"])]
    # WHEN the report is written
    path = tmp_path / "nested" / "report.json"
    result.write_report(path)
    report = json.loads(path.read_text())
    # THEN it fails, and holds what happened
    assert report["passed"] is False
    assert report["counts"]["jobs"] == 10
    assert report["timings_seconds"]["total"] == 42.5
    assert report["violations"][0]["expected"] == ["a", "b"]
    assert report["workload"]["jobs"] == 500
    assert report["queue"] is None  # no queue was reached


class _Table:
    """A stand-in DynamoDB client holding some workspace items."""

    def __init__(self, existing: set[str]) -> None:
        self.existing = existing

    def get_item(self, *, Key: dict[str, dict[str, str]], **_: object) -> dict[str, object]:  # noqa: N803
        workspace = Key["workspaceId"]["S"]
        return {"Item": {"workspaceId": {"S": workspace}}} if workspace in self.existing else {}


def test_a_seed_already_run_against_the_deployment_is_refused_with_the_next_seed() -> None:
    # GIVEN a deployment that already holds a workspace of seed 5
    workload = generate_workload(WorkloadSpec(workspaces=3, jobs=9, seed=5))
    table = _Table({workload.workspace_ids[0]})
    # WHEN the demo checks it THEN it refuses, naming the workspace, and suggests --seed 6
    with pytest.raises(DemoError, match=f"workspace {workload.workspace_ids[0]} already exists") as caught:
        check_fresh(workload, resources=RESOURCES, dynamodb=table)  # type: ignore[arg-type]
    assert "--seed 6" in caught.value.fix
    # AND a fresh deployment passes
    check_fresh(workload, resources=RESOURCES, dynamodb=_Table(set()))  # type: ignore[arg-type]
