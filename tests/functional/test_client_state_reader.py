"""GroupStateReader on moto: other services read what state mode committed, without the layout."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import boto3
import pytest

from constructs_fifo.client.errors import ProducerError
from constructs_fifo.client.state_reader import GroupSnapshot, GroupStateReader, StateReadError
from constructs_fifo.runtime.exceptions import PermanentJobError
from constructs_fifo.runtime.job import Job
from constructs_fifo.runtime.state.core import apply_batch
from constructs_fifo.runtime.state.records import GroupState
from constructs_fifo.runtime.state.store import StateStore

from .runtime_harness import GROUP_TABLE_NAME as GROUP_TABLE
from .runtime_harness import REGION, FakeClock, create_group_table

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient


@pytest.fixture
def dynamodb(aws: None) -> DynamoDBClient:
    client = boto3.client("dynamodb", region_name=REGION)
    create_group_table(client)
    return client


def job(job_id: str, seq: int | None = None) -> Job:
    body: dict[str, Any] = {"jobId": job_id, "type": "t", "payload": {}}
    if seq is not None:
        body["seq"] = seq
    return Job(job_id, "ws#1", "t", {}, 1, f"m-{job_id}", body)


def commit(dynamodb: DynamoDBClient, jobs: list[Job], *, park: bool = False) -> GroupState:
    def transition(job: Job, state: dict[str, Any] | None) -> dict[str, Any]:
        if job.id == "poison":
            raise PermanentJobError("poison")
        return {"applied": [*(state or {}).get("applied", []), job.id], "ratio": 0.1}

    store = StateStore(GROUP_TABLE, dynamodb, clock=FakeClock())
    read = store.load(["ws#1"])["ws#1"]
    result = apply_batch(read, jobs, transition, now_ms=store.now_ms(), max_attempts=3, park_on_dead=park)
    assert store.commit("ws#1", result.group_state, read.version)
    return result.group_state


def test_a_group_without_an_item_has_no_state_and_version_0(dynamodb: DynamoDBClient) -> None:
    reader = GroupStateReader(GROUP_TABLE, dynamodb)
    assert reader.get("ws#1") is None and reader.version("ws#1") == 0
    assert reader.snapshot("ws#1") == GroupSnapshot("ws#1", None, 0, None, None, 0, None, None)


def test_the_reader_returns_the_committed_state_exactly_as_the_transition_returned_it(
    dynamodb: DynamoDBClient,
) -> None:
    commit(dynamodb, [job("a", 0), job("c", 2)])
    commit(dynamodb, [job("b", 1), job("e", 4)])
    reader = GroupStateReader(GROUP_TABLE, dynamodb)
    assert reader.get("ws#1") == {"applied": ["a", "b", "c"], "ratio": 0.1}  # a float, not a Decimal
    assert reader.version("ws#1", consistent_read=False) == 2
    snapshot = reader.snapshot("ws#1")
    assert (snapshot.last_seq, snapshot.buffered, snapshot.parked_job_id) == (2, 1, None)
    assert snapshot.gap_open_since_ms == 1_700_000_000_000 == snapshot.updated_at_ms


def test_the_snapshot_says_which_job_a_parked_group_waits_on(dynamodb: DynamoDBClient) -> None:
    commit(dynamodb, [job("a"), job("poison"), job("b")], park=True)
    snapshot = GroupStateReader(GROUP_TABLE, dynamodb).snapshot("ws#1")
    assert snapshot.parked_job_id == "poison" and snapshot.state == {"applied": ["a"], "ratio": 0.1}


def test_a_missing_table_is_a_state_read_error_naming_table_group_and_fix(dynamodb: DynamoDBClient) -> None:
    reader = GroupStateReader("no-such-table", dynamodb)
    with pytest.raises(StateReadError) as caught:
        reader.get("ws#1")
    message = str(caught.value)
    assert "group 'ws#1' from table 'no-such-table' failed: ResourceNotFoundException" in message
    assert "state_table.table_name" in message
    assert isinstance(caught.value, ProducerError)  # the client's one base class


def test_an_item_the_reader_cannot_decode_is_a_state_read_error(dynamodb: DynamoDBClient) -> None:
    dynamodb.put_item(
        TableName=GROUP_TABLE,
        Item={"group": {"S": "ws#1"}, "sk": {"S": "state"}, "book": {"S": "not json"}, "version": {"N": "1"}},
    )
    with pytest.raises(StateReadError, match="table 'groups': the state item of group 'ws#1' cannot be read"):
        GroupStateReader(GROUP_TABLE, dynamodb).get("ws#1")


def test_the_reader_makes_its_own_client_when_none_is_given(dynamodb: DynamoDBClient) -> None:
    commit(dynamodb, [job("a")])
    assert GroupStateReader(GROUP_TABLE).version("ws#1") == 1
