"""The sample job code (lambda/agent_worker.py) on a moto DynamoDB table, held to the app's contract.

The worker ships in the function's asset, which holds only the runtime, so it cannot import the
sample app's contract (:mod:`constructs_fifo.local.demo.sample_app`): it keeps its own copies, and
the contract tests below hold them to it.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import boto3
import pytest
from moto import mock_aws

from constructs_fifo.local.demo.sample_app import (
    APPLIED_ATTRIBUTE,
    ENV_WORKSPACE_TABLE,
    GROUP_PREFIX,
    JOB_TYPES,
    REPLAYED_ATTRIBUTE,
    VERSION_ATTRIBUTE,
    WORKSPACE_KEY,
    group_of,
    poison,
    read_workspace,
    transient_failure,
)
from constructs_fifo.runtime import Job, PermanentJobError

WORKER_FILE = Path(__file__).resolve().parents[2] / "lambda" / "agent_worker.py"


def _load_worker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("agent_worker", WORKER_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


worker = _load_worker()


@pytest.fixture
def store() -> Iterator[Any]:
    with mock_aws():
        dynamodb = boto3.resource("dynamodb", region_name="us-east-1")
        table = dynamodb.create_table(
            TableName="workspaces",
            KeySchema=[{"AttributeName": WORKSPACE_KEY, "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": WORKSPACE_KEY, "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield worker.WorkspaceStore(table)


def _job(job_id: str, type_: str, payload: Any = None, *, group: str = "ws#w1", attempt: int = 1) -> Job:
    body = {"jobId": job_id, "type": type_, "payload": payload or {}}
    return Job(
        id=job_id, group=group, type=type_, payload=payload or {}, attempt=attempt, message_id="m", body=body
    )


def test_jobs_apply_in_order_and_pr_knows_whether_tests_ran(store: Any) -> None:
    # GIVEN patch, test, patch, PR jobs for one workspace
    jobs = [
        _job("j1", "apply_patch", {"patch": "p1"}),
        _job("j2", "run_tests"),
        _job("j3", "apply_patch"),
        _job("j4", "open_pr"),
    ]
    # WHEN they run in order
    for job in jobs:
        worker.handle(job, None, store=store)
    # THEN the state shows the order, and the PR is marked untested (a patch came after the tests)
    state, version = store.load("w1")
    assert version == 4
    assert state["applied"] == ["j1", "j2", "j3", "j4"]
    assert state["patches"] == ["p1", "j3"]
    assert state["tested_head"] == 1
    assert state["prs"] == [{"jobId": "j4", "head": 2, "tested": False}]


def test_a_job_already_applied_is_not_applied_again(store: Any) -> None:
    # GIVEN a patch that was applied
    worker.handle(_job("j1", "apply_patch"), None, store=store)
    # WHEN the same job runs again (its claim was lost)
    worker.handle(_job("j1", "apply_patch", attempt=2), None, store=store)
    # THEN the patch was not applied again, and the second delivery is recorded as a replay
    state, version = store.load("w1")
    assert (state["patches"], state["applied"], version) == (["j1"], ["j1"], 2)
    assert state[worker.REPLAYED] == ["j1"]


def test_fail_attempts_fails_only_the_first_attempts(store: Any) -> None:
    # GIVEN a job asking to fail twice
    payload = {"simulate": {"fail_attempts": 2}}
    # WHEN attempts 1 and 2 run THEN they fail transiently and change nothing
    for attempt in (1, 2):
        with pytest.raises(worker.SimulatedFailureError, match="fail_attempts=2"):
            worker.handle(_job("j1", "apply_patch", payload, attempt=attempt), None, store=store)
    assert store.load("w1") == ({}, 0)
    # AND attempt 3 applies it
    worker.handle(_job("j1", "apply_patch", payload, attempt=3), None, store=store)
    assert store.load("w1")[0]["applied"] == ["j1"]


def test_poison_raises_permanent(store: Any) -> None:
    # GIVEN a poison job WHEN it runs THEN it fails permanently
    with pytest.raises(PermanentJobError, match="poison"):
        worker.handle(_job("j1", "apply_patch", {"simulate": "poison"}), None, store=store)


@pytest.mark.parametrize("group", ["other#w1", "ws#"])
def test_group_without_workspace_is_permanent(store: Any, group: str) -> None:
    # GIVEN a job whose group names no workspace WHEN it runs THEN it fails permanently
    with pytest.raises(PermanentJobError, match="'ws#<workspaceId>'"):
        worker.handle(_job("j1", "apply_patch", group=group), None, store=store)


def test_unknown_type_is_permanent(store: Any) -> None:
    # GIVEN an unknown job type WHEN it runs THEN it fails permanently, naming the known types
    with pytest.raises(PermanentJobError, match="apply_patch, run_tests, open_pr"):
        worker.handle(_job("j1", "deploy"), None, store=store)


def test_concurrent_change_raises_conflict(store: Any) -> None:
    # GIVEN a state loaded at version 1, then changed by another writer
    worker.handle(_job("j1", "apply_patch"), None, store=store)
    state, version = store.load("w1")
    worker.handle(_job("j2", "apply_patch"), None, store=store)
    # WHEN the stale writer saves THEN the optimistic lock refuses it
    with pytest.raises(worker.WorkspaceConflictError, match="since version 1"):
        store.save("w1", state, version)
    # AND a stale first write of a new workspace is refused too
    with pytest.raises(worker.WorkspaceConflictError):
        store.save("w1", {}, 0)


def test_default_store_needs_the_table_name(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN no WORKSPACE_TABLE_NAME and no cached store
    monkeypatch.delenv("WORKSPACE_TABLE_NAME", raising=False)
    monkeypatch.setattr(worker, "_store", None)
    # WHEN a job runs without an injected store THEN the error names the variable
    with pytest.raises(RuntimeError, match="WORKSPACE_TABLE_NAME is not set"):
        worker.handle(_job("j1", "apply_patch"), None)


# --- the contract -------------------------------------------------------------------------------------


def test_the_worker_keeps_the_contracts_names() -> None:
    # GIVEN the worker's own copies WHEN compared with the contract THEN they are the same
    assert worker.ENV_WORKSPACE_TABLE == ENV_WORKSPACE_TABLE
    assert worker.GROUP_PREFIX == GROUP_PREFIX
    assert tuple(worker.JOB_TYPES) == JOB_TYPES
    assert worker.REPLAYED == REPLAYED_ATTRIBUTE
    # AND the worker does not import the contract (its asset holds only the runtime)
    assert "constructs_fifo.local" not in WORKER_FILE.read_text()


def test_the_worker_writes_workspaces_the_contract_reads(store: Any) -> None:
    # GIVEN the worker on a table keyed as the contract says (the fixture's)
    # WHEN one job of every type runs in the contract's group, and the first is delivered again
    for index, job_type in enumerate(JOB_TYPES):
        worker.handle(_job(f"j{index}", job_type, group=group_of("w1")), None, store=store)
    worker.handle(_job("j0", JOB_TYPES[0], group=group_of("w1"), attempt=2), None, store=store)
    # THEN the contract's read sees them applied in order, the replay, and the version
    item = read_workspace(boto3.client("dynamodb", region_name="us-east-1"), "workspaces", "w1")
    assert item is not None
    assert item[WORKSPACE_KEY] == "w1"
    assert item[APPLIED_ATTRIBUTE] == ["j0", "j1", "j2"]
    assert item[REPLAYED_ATTRIBUTE] == ["j0"]
    assert item[VERSION_ATTRIBUTE] == 4


def test_the_workers_failures_are_asked_for_as_the_contract_says(store: Any) -> None:
    # GIVEN a poison payload WHEN it runs THEN it fails permanently
    with pytest.raises(PermanentJobError, match="poison"):
        worker.handle(_job("p", JOB_TYPES[0], poison()), None, store=store)
    # GIVEN a payload failing twice WHEN attempts 1 to 3 run THEN only the third applies it
    for attempt in (1, 2):
        with pytest.raises(worker.SimulatedFailureError):
            worker.handle(_job("t", JOB_TYPES[0], transient_failure(2), attempt=attempt), None, store=store)
    worker.handle(_job("t", JOB_TYPES[0], transient_failure(2), attempt=3), None, store=store)
    assert store.load("w1")[0]["applied"] == ["t"]
