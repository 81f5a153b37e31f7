"""The sample app's contract against the worker that ships in the asset, and the one workspace read.

``lambda/agent_worker.py`` cannot import the contract (the function's asset holds only the runtime),
so this test holds its copies to the contract, and runs it against a moto table read back through
:func:`~constructs_fifo.local.demo.sample_app.read_workspace`.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient

WORKER_FILE = Path(__file__).resolve().parents[4] / "lambda" / "agent_worker.py"
TABLE = "workspaces"


def _load_worker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sample_agent_worker", WORKER_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


worker = _load_worker()


@pytest.fixture
def dynamodb() -> Iterator[DynamoDBClient]:
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(
            TableName=TABLE,
            KeySchema=[{"AttributeName": WORKSPACE_KEY, "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": WORKSPACE_KEY, "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield client


def _job(job_id: str, job_type: str, payload: dict[str, Any] | None = None, *, attempt: int = 1) -> Job:
    payload = payload or {}
    body = {"jobId": job_id, "type": job_type, "payload": payload}
    return Job(
        id=job_id,
        group=group_of("w1"),
        type=job_type,
        payload=payload,
        attempt=attempt,
        message_id="m",
        body=body,
    )


def test_the_worker_keeps_the_contracts_names() -> None:
    # GIVEN the worker's own copies WHEN compared with the contract THEN they are the same
    assert worker.ENV_WORKSPACE_TABLE == ENV_WORKSPACE_TABLE
    assert worker.GROUP_PREFIX == GROUP_PREFIX
    assert tuple(worker.JOB_TYPES) == JOB_TYPES
    assert worker.REPLAYED == REPLAYED_ATTRIBUTE
    # AND the worker does not import the contract (its asset holds only the runtime)
    assert "constructs_fifo.local" not in WORKER_FILE.read_text()


def test_the_worker_writes_workspaces_the_contract_reads(dynamodb: DynamoDBClient) -> None:
    # GIVEN the worker on a table keyed as the contract says
    store = worker.WorkspaceStore(boto3.resource("dynamodb", region_name="us-east-1").Table(TABLE))
    # WHEN one job of every type runs, and the first is delivered again
    for index, job_type in enumerate(JOB_TYPES):
        worker.handle(_job(f"j{index}", job_type), None, store=store)
    worker.handle(_job("j0", JOB_TYPES[0], attempt=2), None, store=store)
    # THEN the contract's read sees them applied in order, the replay, and the version
    item = read_workspace(dynamodb, TABLE, "w1")
    assert item is not None
    assert item[WORKSPACE_KEY] == "w1"
    assert item[APPLIED_ATTRIBUTE] == ["j0", "j1", "j2"]
    assert item[REPLAYED_ATTRIBUTE] == ["j0"]
    assert item[VERSION_ATTRIBUTE] == 4
    assert read_workspace(dynamodb, TABLE, "nobody") is None


def test_the_workers_failures_are_asked_for_as_the_contract_says(dynamodb: DynamoDBClient) -> None:
    store = worker.WorkspaceStore(boto3.resource("dynamodb", region_name="us-east-1").Table(TABLE))
    # GIVEN a poison payload WHEN it runs THEN it fails permanently
    with pytest.raises(PermanentJobError, match="poison"):
        worker.handle(_job("p", JOB_TYPES[0], poison()), None, store=store)
    # GIVEN a payload failing twice WHEN attempts 1 to 3 run THEN only the third applies it
    for attempt in (1, 2):
        with pytest.raises(worker.SimulatedFailureError):
            worker.handle(_job("t", JOB_TYPES[0], transient_failure(2), attempt=attempt), None, store=store)
    worker.handle(_job("t", JOB_TYPES[0], transient_failure(2), attempt=3), None, store=store)
    item = read_workspace(dynamodb, TABLE, "w1")
    assert item is not None and item[APPLIED_ATTRIBUTE] == ["t"]


def test_read_workspace_gives_plain_numbers() -> None:
    # GIVEN DynamoDB's Decimals WHEN made plain THEN whole numbers are ints, others floats
    item = {"n": {"N": "3"}, "f": {"N": "1.5"}, "l": {"L": [{"N": "2"}]}}

    class _Client:
        def get_item(self, **_: object) -> dict[str, Any]:
            return {"Item": item}

    plain = read_workspace(_Client(), TABLE, "w")  # type: ignore[arg-type]
    assert plain == {"n": 3, "f": 1.5, "l": [2]}
    assert plain is not None
    assert [type(plain[k]) for k in ("n", "f")] == [int, float]
