"""Unit tests of the demo's pure pieces: child environments, the report, the divergence verdict."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from constructs_fifo.local.credentials import FAKE_CREDENTIALS
from constructs_fifo.local.demo import (
    DemoError,
    DemoOptions,
    DemoResult,
    check_fresh,
    check_outputs,
    scoped_environ,
    wait_until_empty,
)
from constructs_fifo.local.deploy import child_environment
from constructs_fifo.local.divergence import DivergenceResult, WorkspaceOutcome, outcome_state, plan
from constructs_fifo.local.verify import Violation
from constructs_fifo.local.workload import WorkloadSpec, generate_workload


def test_fake_credentials_cut_children_off_from_user_config() -> None:
    # GIVEN a user environment with a real profile and keys
    base = {"AWS_PROFILE": "prod", "AWS_ACCESS_KEY_ID": "AKIAREAL", "PATH": "/bin"}
    # WHEN the demo builds a child environment for its own emulator
    env = child_environment(
        endpoint_url="http://localhost:5000", region="eu-west-1", fake_credentials=True, env=base
    )
    # THEN the child gets the fake keys, the endpoint and region, and no way to the user's config
    assert env["AWS_ACCESS_KEY_ID"] == FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"]
    assert "AWS_PROFILE" not in env
    assert env["AWS_CONFIG_FILE"] == os.devnull
    assert env["AWS_SHARED_CREDENTIALS_FILE"] == os.devnull
    assert env["AWS_ENDPOINT_URL"] == "http://localhost:5000"
    assert env["AWS_REGION"] == env["AWS_DEFAULT_REGION"] == "eu-west-1"
    # AND the base mapping was not changed
    assert base == {"AWS_PROFILE": "prod", "AWS_ACCESS_KEY_ID": "AKIAREAL", "PATH": "/bin"}


def test_real_aws_children_keep_the_user_credentials() -> None:
    # GIVEN a user environment WHEN the child is for real AWS THEN credentials and profile stay
    env = child_environment(region="us-east-1", fake_credentials=False, env={"AWS_PROFILE": "prod"})
    assert env["AWS_PROFILE"] == "prod"
    assert "AWS_ENDPOINT_URL" not in env
    assert "AWS_ACCESS_KEY_ID" not in env


def test_scoped_environ_restores_set_and_unset_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN one variable set and one unset
    monkeypatch.setenv("CF_TEST_SET", "before")
    monkeypatch.delenv("CF_TEST_UNSET", raising=False)
    # WHEN both are overridden in a block that raises
    with pytest.raises(RuntimeError), scoped_environ({"CF_TEST_SET": "during", "CF_TEST_UNSET": "x"}):
        assert os.environ["CF_TEST_SET"] == "during"
        raise RuntimeError("boom")
    # THEN both are back as they were
    assert os.environ["CF_TEST_SET"] == "before"
    assert "CF_TEST_UNSET" not in os.environ


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


def _outcome(name: str, sent: tuple[str, ...], applied: tuple[str, ...], tested: bool) -> WorkspaceOutcome:
    return WorkspaceOutcome(
        workspace=name,
        sent=sent,
        sent_types=("apply_patch", "run_tests", "open_pr"),
        applied=applied,
        state={"patches": ["p"], "prs": [{"head": 1, "tested": tested}]},
    )


def test_divergence_is_shown_only_when_both_were_delivered_faithfully_and_differ() -> None:
    # GIVEN two faithful deliveries with different PR outcomes
    ids = ("a", "b", "c")
    shown = DivergenceResult(_outcome("in", ids, ids, True), _outcome("sh", ids, ids, False))
    # THEN divergence is shown and names the differing state
    assert shown.diverged
    assert shown.differing_keys == ["prs"]
    assert "prs" in shown.verdict()
    # GIVEN the same outcome THEN nothing is shown
    same = DivergenceResult(_outcome("in", ids, ids, True), _outcome("sh", ids, ids, True))
    assert not same.diverged
    # GIVEN a reordered delivery THEN it is not counted as the producer's lesson
    unfaithful = DivergenceResult(_outcome("in", ids, ids, True), _outcome("sh", ids, ("a", "c", "b"), False))
    assert not unfaithful.diverged
    assert "did not apply its jobs in the order" in unfaithful.verdict()


def test_outcome_state_ignores_bookkeeping_and_job_ids() -> None:
    # GIVEN two workspace items that differ only in ids, version and the applied list
    first = {"workspaceId": "a", "version": 3, "applied": ["a-1"], "prs": [{"jobId": "a-pr", "tested": True}]}
    second = {
        "workspaceId": "b",
        "version": 4,
        "applied": ["b-1"],
        "prs": [{"jobId": "b-pr", "tested": True}],
    }
    # WHEN their comparable states are taken THEN they are equal: no false divergence
    assert outcome_state(first) == outcome_state(second) == {"prs": [{"tested": True}]}


def test_divergence_plan_sends_the_same_events_in_two_orders() -> None:
    # GIVEN the plan for a seed
    (first, in_order), (second, shuffled) = plan(3)
    # THEN both workspaces get the same event types, one in order and one shuffled, in their own groups
    assert [m.job_type for m in in_order] == ["apply_patch", "run_tests", "open_pr"]
    assert [m.job_type for m in shuffled] == ["apply_patch", "open_pr", "run_tests"]
    assert {m.group for m in in_order} == {f"ws#{first}"}
    assert {m.group for m in shuffled} == {f"ws#{second}"}
    assert [m.payload for m in sorted(in_order, key=lambda m: m.job_type)] == [
        m.payload for m in sorted(shuffled, key=lambda m: m.job_type)
    ]


class _Queue:
    """A stand-in SQS client whose queue depth follows a script."""

    def __init__(self, depths: list[int]) -> None:
        self.depths = depths

    def get_queue_attributes(self, **_: object) -> dict[str, dict[str, str]]:
        depth = self.depths.pop(0) if len(self.depths) > 1 else self.depths[0]
        return {"Attributes": {"ApproximateNumberOfMessages": str(depth)}}


def test_waiting_for_the_deployed_function_reports_progress_until_quiet() -> None:
    # GIVEN a queue another consumer drains: 4, 2, then empty
    queue = _Queue([4, 2, 0])
    seen: list[tuple[int, int]] = []
    # WHEN the demo waits for it
    wait_until_empty(
        queue,  # type: ignore[arg-type]
        "q.fifo",
        total=4,
        timeout=5,
        progress=lambda done, total: seen.append((done, total)),
        quiet_seconds=0,
        poll_seconds=0,
    )
    # THEN progress went 0 -> 2 -> 4 of 4
    assert seen[:3] == [(0, 4), (2, 4), (4, 4)]


def test_waiting_gives_up_with_a_fix_when_the_queue_never_empties() -> None:
    # GIVEN a queue nobody drains WHEN the demo waits THEN it stops with a DemoError naming the queue
    with pytest.raises(DemoError, match=r"the queue q\.fifo still holds messages") as caught:
        wait_until_empty(_Queue([3]), "q.fifo", total=3, timeout=0.05, poll_seconds=0.01)  # type: ignore[arg-type]
    assert "event source mapping" in caught.value.fix


class _Table:
    """A stand-in DynamoDB client holding some workspace items."""

    def __init__(self, existing: set[str]) -> None:
        self.existing = existing

    def get_item(self, *, Key: dict[str, dict[str, str]], **_: object) -> dict[str, object]:  # noqa: N803
        workspace = Key["workspaceId"]["S"]
        return {"Item": {"workspaceId": {"S": workspace}}} if workspace in self.existing else {}


OUTPUTS = {
    "QueueUrl": "q.fifo",
    "DeadLetterQueueUrl": "dlq.fifo",
    "ClaimTableName": "claims",
    "WorkspaceTableName": "workspaces",
}


def test_a_seed_already_run_against_the_deployment_is_refused_with_the_next_seed() -> None:
    # GIVEN a deployment that already holds a workspace of seed 5
    workload = generate_workload(WorkloadSpec(workspaces=3, jobs=9, seed=5))
    table = _Table({workload.workspace_ids[0]})
    # WHEN the demo checks it THEN it refuses, naming the workspace, and suggests --seed 6
    with pytest.raises(DemoError, match=f"workspace {workload.workspace_ids[0]} already exists") as caught:
        check_fresh(workload, outputs=OUTPUTS, dynamodb=table)  # type: ignore[arg-type]
    assert "--seed 6" in caught.value.fix
    # AND a fresh deployment passes
    check_fresh(workload, outputs=OUTPUTS, dynamodb=_Table(set()))  # type: ignore[arg-type]


def test_missing_stack_outputs_are_named() -> None:
    # GIVEN outputs without the workspace table WHEN checked THEN the error names it and what exists
    partial = {k: v for k, v in OUTPUTS.items() if k != "WorkspaceTableName"}
    with pytest.raises(DemoError, match="has no output WorkspaceTableName"):
        check_outputs("AgentJobs", partial)
    check_outputs("AgentJobs", OUTPUTS)
