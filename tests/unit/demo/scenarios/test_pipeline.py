"""The verify scenario's pure pieces: the report, refusing a seed already run, counting DynamoDB calls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from constructs_fifo.demo.errors import DemoError
from constructs_fifo.demo.sample_app import SampleQueue, SampleResources
from constructs_fifo.demo.scenarios.pipeline import DemoResult, Resumed, check_fresh, dynamodb_calls
from constructs_fifo.demo.steps import DemoOptions
from constructs_fifo.demo.verify import Violation
from constructs_fifo.demo.workload import WorkloadSpec, generate_workload

RESOURCES = SampleResources(
    workspaces=SampleQueue("AgentJobs/Workspaces", "q.fifo", "dlq.fifo", "states"),
    notifications=SampleQueue("AgentJobs/Notifications", "n.fifo", "ndlq.fifo", "groups"),
    notification_table="notes",
)


def test_report_json_carries_counts_calls_resumes_timings_and_violations(tmp_path: Path) -> None:
    # GIVEN a result with one violation, one resumed group and measured calls
    result = DemoResult(options=DemoOptions())
    result.counts = {"jobs": 10, "violations": 1}
    result.timings.seconds = {"deploy": 30.0, "drain": 12.5}
    result.violations = [Violation("order", "workspace w: ...", "w", None, ["a", "b"], ["b", "a"])]
    result.resumed = [Resumed("AgentJobs/Workspaces", "ws#w", "p1", "PERMANENT", 12)]
    result.calls_per_job = {"workspaces": {"jobs": 10, "runtime": 0.3, "job_code": 0.0}}
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
    assert report["workload"]["last_attempt"] == 1
    assert report["resumed"] == [
        {
            "queue": "AgentJobs/Workspaces",
            "group": "ws#w",
            "deadJobId": "p1",
            "reason": "PERMANENT",
            "kept": 12,
            "keptBehind": 11,
        }
    ]
    assert report["dynamodb_calls_per_job"]["workspaces"]["runtime"] == 0.3
    assert report["queues"] == {}  # no queue was reached


def test_the_resume_line_names_the_group_the_call_and_what_is_replayed() -> None:
    line = Resumed("AgentJobs/Workspaces", "ws#w", "p1", "PERMANENT", 12).describe()
    assert line == (
        "resumed ws#w on AgentJobs/Workspaces: ParkedGroups.resume(group, skip_dead=True) sent dead job p1 "
        "(PERMANENT) to the dead-letter queue; replaying the 11 kept jobs behind it in order (12 kept, the "
        "dead job's included)"
    )
    # AND a group whose dead job died in the reorder buffer (not kept) replays every kept job
    line = Resumed("AgentJobs/Workspaces", "ws#w", "p1", "PERMANENT", 1, dead_was_kept=False).describe()
    assert line.endswith("replaying the 1 kept job behind it in order (1 kept)")


def test_dynamodb_calls_are_split_between_the_runtimes_tables_and_the_job_codes() -> None:
    # GIVEN a drain's AWS calls: the runtime's tables, the notifier's table, and SQS
    calls = {
        "dynamodb.BatchGetItem groups": 3,
        "dynamodb.PutItem claims": 16,
        "dynamodb.UpdateItem claims": 14,
        "dynamodb.TransactWriteItems claims,groups": 1,
        "dynamodb.PutItem notes": 12,
        "sqs.ChangeMessageVisibilityBatch": 2,
    }
    # WHEN split by the queue's own tables THEN SQS is left out and the rest is the job code's
    assert dynamodb_calls(calls, {"claims", "groups"}) == (34, 12)


class _States:
    """A stand-in DynamoDB client holding some workspace states (version 1)."""

    def __init__(self, existing: set[str]) -> None:
        self.existing = existing

    def get_item(self, *, Key: dict[str, dict[str, str]], **_: object) -> dict[str, object]:  # noqa: N803
        group = Key["group"]["S"]
        if group not in self.existing:
            return {}
        return {
            "Item": {
                "group": {"S": group},
                "sk": {"S": "state"},
                "version": {"N": "1"},
                "state": {"S": "{}"},
                "book": {"S": '{"f": 1}'},
                "updated_at": {"N": "1"},
            }
        }


def test_a_seed_already_run_against_the_deployment_is_refused_with_the_next_seed() -> None:
    # GIVEN a deployment that already holds a workspace state of seed 5
    workload = generate_workload(WorkloadSpec(workspaces=3, jobs=9, poison=0, last_attempt=0, seed=5))
    table = _States({f"ws#{workload.workspace_ids[0]}"})
    # WHEN the demo checks it THEN it refuses, naming the workspace, and suggests --seed 6
    with pytest.raises(
        DemoError, match=f"workspace {workload.workspace_ids[0]} already has a state"
    ) as caught:
        check_fresh(workload, resources=RESOURCES, dynamodb=table)  # type: ignore[arg-type]
    assert "--seed 6" in caught.value.fix
    # AND a fresh deployment passes
    check_fresh(workload, resources=RESOURCES, dynamodb=_States(set()))  # type: ignore[arg-type]
