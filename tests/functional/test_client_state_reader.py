"""GroupStateReader on moto: other services read what state mode committed, without the layout."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import boto3
import pytest

from constructs_fifo.client.errors import ProducerError
from constructs_fifo.client.state_reader import GroupSnapshot, GroupStateReader, StateReadError
from constructs_fifo.runtime.constants import DeadJobPolicy
from constructs_fifo.runtime.exceptions import PermanentJobError
from constructs_fifo.runtime.job import Job
from constructs_fifo.runtime.state.core.apply import apply_batch
from constructs_fifo.runtime.state.core.records import GroupState
from constructs_fifo.runtime.state.storage.store import StateStore

from .runtime_harness import GROUP_TABLE_NAME as GROUP_TABLE
from .runtime_harness import REGION, FakeClock, create_group_table, make_record
from .state_harness import StateHarness, job_record

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient


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


@pytest.fixture
def parking(dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str) -> StateHarness:
    """A state-mode runtime under PARK on the same table: groups parked as the runtime parks them."""
    harness = StateHarness(dynamodb, sqs, queue_url, dlq_url, policy=DeadJobPolicy.PARK)
    harness.behaviour["poison"] = _poison
    return harness


def _poison(job: Job) -> None:
    raise PermanentJobError("poison")


def _answers(parking: StateHarness) -> tuple[tuple[object, ...], tuple[object, ...]]:
    """What the reader and ParkedGroups say of ws#1: (parked, job id, message id) each."""
    snapshot = GroupStateReader(GROUP_TABLE, parking.dynamodb).snapshot("ws#1")
    listed = {header.group: header for header in parking.operator().list_groups()}.get("ws#1")
    from_list = (False, None, None) if listed is None else (True, listed.dead_job_id, listed.dead_message_id)
    return (snapshot.parked, snapshot.parked_job_id, snapshot.parked_message_id), from_list


def test_the_snapshot_says_which_job_a_parked_group_waits_on(parking: StateHarness) -> None:
    # GIVEN ws#1 parked by the runtime at a job that died when it ran
    records = [job_record("a"), job_record("poison"), job_record("b")]
    parking.run(*records)
    # WHEN it is read THEN it is parked at that job, with the state before it, as ParkedGroups says
    reader, listed = _answers(parking)
    assert reader == listed == (True, "poison", records[1]["messageId"])
    snapshot = GroupStateReader(GROUP_TABLE, parking.dynamodb).snapshot("ws#1")
    assert snapshot.park_status == "PARKED" and snapshot.state == {"log": ["a"], "blob": ""}


def test_a_group_parked_at_a_malformed_body_with_a_job_id_reads_parked_at_that_job(
    parking: StateHarness,
) -> None:
    # GIVEN ws#1 parked at a body with a usable jobId but a type that is not a string
    bad = make_record('{"jobId": "b1", "type": 7}', group="ws#1")
    parking.run(job_record("a"), bad)
    # WHEN the reader and ParkedGroups are asked THEN both say parked at b1, at that message
    reader, listed = _answers(parking)
    assert reader == listed == (True, "b1", bad["messageId"])


def test_a_group_parked_at_a_body_without_a_job_id_reads_parked_at_its_message(parking: StateHarness) -> None:
    # GIVEN ws#1 parked at a body that is not JSON, after a job that applied
    bad = make_record("not json", group="ws#1")
    parking.run(job_record("a"), bad)
    # WHEN it is read THEN it is parked, with no job id but the message id, as ParkedGroups says
    reader, listed = _answers(parking)
    assert reader == listed == (True, None, bad["messageId"])


def test_a_group_whose_first_message_is_malformed_reads_parked_without_a_state_item(
    parking: StateHarness,
) -> None:
    # GIVEN ws#1's very first message is malformed (no state item is ever written)
    bad = make_record("[1, 2]", group="ws#1")
    parking.run(bad, job_record("a"))
    # WHEN it is read THEN it has no state (version 0) and is parked at that message
    snapshot = GroupStateReader(GROUP_TABLE, parking.dynamodb).snapshot("ws#1")
    assert (snapshot.version, snapshot.state) == (0, None)
    reader, listed = _answers(parking)
    assert reader == listed == (True, None, bad["messageId"])


def test_a_resuming_group_still_reads_parked_until_its_replay_ends(parking: StateHarness) -> None:
    # GIVEN ws#1 parked at poison, then resumed by an operator (its wake-up not processed yet)
    parking.run(job_record("poison"))
    parking.operator().resume("ws#1", skip_dead=True)
    reader = GroupStateReader(GROUP_TABLE, parking.dynamodb)
    # WHEN it is read THEN it is parked, RESUMING; once the replay ran it is live
    assert (reader.snapshot("ws#1").parked, reader.snapshot("ws#1").park_status) == (True, "RESUMING")
    parking.drain()
    assert (reader.snapshot("ws#1").parked, reader.snapshot("ws#1").park_status) == (False, None)


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
