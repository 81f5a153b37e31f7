"""State mode's run item on moto: the marker write's parameters, what it costs, and reading it back."""

from __future__ import annotations

from typing import TYPE_CHECKING

import boto3
import pytest

from constructs_fifo.runtime.exceptions import ConstructsFifoRuntimeError
from constructs_fifo.runtime.state.core.records import GroupState
from constructs_fifo.runtime.state.storage.runs import GROUP_RUN, RunMarker, decode_run_item, run_item_put
from constructs_fifo.runtime.state.storage.store import StateStore, item_size

from .runtime_harness import GROUP_TABLE_NAME as GROUP_TABLE
from .runtime_harness import REGION, create_group_table

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient


@pytest.fixture
def groups_table(aws: None) -> DynamoDBClient:
    client = boto3.client("dynamodb", region_name=REGION)
    create_group_table(client)
    return client


def test_a_marker_write_costs_one_write_unit_whatever_the_state(
    groups_table: DynamoDBClient,
) -> None:
    # GIVEN a group whose state is 10 KB
    big = GroupState("ws#1", state={"blob": "x" * 10_000})
    assert StateStore(GROUP_TABLE, groups_table).commit("ws#1", big, 0)
    # WHEN its run is marked, with the capacity returned
    put, _ = run_item_put(GROUP_TABLE, "ws#1", 1, RunMarker("j", 1), replaces=None, read=True, now_ms=0)
    consumed = groups_table.put_item(**put, ReturnConsumedCapacity="TOTAL")["ConsumedCapacity"]
    # THEN the write cost one unit, not the state's ten
    assert consumed["CapacityUnits"] == 1.0


def test_a_run_item_reads_back_as_written() -> None:
    # GIVEN a job's marker written over version 7 WHEN its item is decoded
    put, token = run_item_put(GROUP_TABLE, "ws#1", 7, RunMarker("j", 2), replaces=None, read=False, now_ms=5)
    item = decode_run_item(put["Item"])
    # THEN it is the marker, over version 7, with the token written; live over version 7 only
    assert (item.marker, item.of_version, item.token) == (RunMarker("j", 2), 7, token)
    assert (item.live_over(7), item.live_over(8)) == (True, False)
    # AND a write that did not read the item is conditioned on none over version 7 or later
    assert put["ConditionExpression"] == "attribute_not_exists(#group) OR #of < :of"


@pytest.mark.parametrize("broken", [{}, {"run": {"S": "[1]"}, "of": {"N": "1"}, "token": {"S": "t"}}])
def test_a_run_item_this_runtime_did_not_write_is_refused_with_the_fix(broken: dict[str, object]) -> None:
    # GIVEN a run item without its attributes, or with a marker that is not one
    item = {"group": {"S": "ws#1"}, "sk": {"S": "run"}, **broken}
    # WHEN it is decoded THEN the error names the group and the fix
    with pytest.raises(ConstructsFifoRuntimeError, match=r"run item of group 'ws#1'.*delete the item"):
        decode_run_item(item)


def test_a_group_marker_item_is_small() -> None:
    # GIVEN a group marker's item WHEN its size is counted as DynamoDB does THEN it is one write unit
    put, _ = run_item_put(GROUP_TABLE, "ws#1", 1, GROUP_RUN, replaces="t" * 32, read=True, now_ms=10**12)
    assert item_size(put["Item"]) <= 1024
