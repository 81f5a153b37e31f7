"""State mode on moto: the group table's store with the pure core, as the processor will drive them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

import boto3
import pytest

from constructs_fifo.runtime.dead_jobs.parking import ParkStore
from constructs_fifo.runtime.dead_jobs.record import DeadJob
from constructs_fifo.runtime.exceptions import (
    ConstructsFifoRuntimeError,
    PermanentJobError,
    StateTooLargeError,
)
from constructs_fifo.runtime.job import Job
from constructs_fifo.runtime.state.core.apply import apply_batch
from constructs_fifo.runtime.state.core.records import (
    BatchResult,
    Bookkeeping,
    BufferedJob,
    GroupState,
    Outcome,
)
from constructs_fifo.runtime.state.storage.book import decode_book, encode_book
from constructs_fifo.runtime.state.storage.runs import GROUP_RUN, FoundRun, RunMarker
from constructs_fifo.runtime.state.storage.store import StateStore, decode_item, item_size

from .runtime_harness import GROUP_TABLE_NAME as GROUP_TABLE
from .runtime_harness import REGION, FakeClock, create_group_table

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_dynamodb.type_defs import PutTypeDef

State = dict[str, Any] | None


@pytest.fixture
def groups_table(aws: None) -> DynamoDBClient:
    client = boto3.client("dynamodb", region_name=REGION)
    create_group_table(client)
    return client


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(groups_table: DynamoDBClient, clock: FakeClock) -> StateStore:
    return StateStore(GROUP_TABLE, groups_table, clock=clock)


class Calls:
    """Counts the API calls of one client with botocore's ``before-call`` hook."""

    def __init__(self, client: DynamoDBClient) -> None:
        self.names: list[str] = []
        self._client = client
        client.meta.events.register("before-call.dynamodb", self._count)

    def _count(self, model: Any, **_: Any) -> None:
        self.names.append(model.name)

    def close(self) -> None:
        self._client.meta.events.unregister("before-call.dynamodb", self._count)


@pytest.fixture
def calls(groups_table: DynamoDBClient) -> Iterator[Calls]:
    counter = Calls(groups_table)
    yield counter
    counter.close()


DEAD_P = DeadJob("p", "apply_patch", "PermanentJobError", "no diff", 1, "m-p", 0)


def job(job_id: str, seq: int | None = None, group: str = "ws#1", **payload: Any) -> Job:
    body: dict[str, Any] = {"jobId": job_id, "type": "apply_patch", "payload": payload}
    if seq is not None:
        body["seq"] = seq
    return Job(job_id, group, "apply_patch", payload, 1, f"m-{job_id}", body)


class Counting:
    """The reference transition (append the job id to ``log``), counting its runs per job."""

    def __init__(self) -> None:
        self.runs: list[str] = []

    def __call__(self, job: Job, state: State) -> dict[str, Any]:
        self.runs.append(job.id)
        blob = job.payload.get("blob", "") if isinstance(job.payload, dict) else ""
        return {"log": [*(state or {}).get("log", []), job.id], "blob": (state or {}).get("blob", "") + blob}


def batch(
    store: StateStore, read: GroupState, jobs: list[Job], transition: Counting, **options: Any
) -> BatchResult:
    defaults: dict[str, Any] = {"max_attempts": 3, "park_on_dead": False, "size_of": store.item_size}
    return apply_batch(read, jobs, transition, now_ms=store.now_ms(), **{**defaults, **options})


def test_first_write_then_load_round_trips_the_state_and_the_bookkeeping(
    store: StateStore, groups_table: DynamoDBClient
) -> None:
    # GIVEN a group without an item
    read = store.load(["ws#1"])["ws#1"]
    assert (read.state, read.version) == (None, 0)
    # WHEN a batch with a buffered job is committed
    result = batch(store, read, [job("a", 0, text="é"), job("c", 2)], Counting())
    assert store.commit("ws#1", result.group_state, read.version)
    # THEN the item has the documented layout and loads back equal
    item = groups_table.get_item(TableName=GROUP_TABLE, Key={"group": {"S": "ws#1"}, "sk": {"S": "state"}})[
        "Item"
    ]
    assert set(item) == {"group", "sk", "state", "book", "version", "updated_at"}
    assert json.loads(item["state"]["S"]) == {"log": ["a"], "blob": ""}
    assert item["version"] == {"N": "1"} and item["updated_at"] == {"N": "1700000000000"}
    loaded = store.load(["ws#1"])["ws#1"]
    assert loaded == GroupState("ws#1", result.group_state.state, 1, result.group_state.book)
    assert loaded.book.buffer[0].body["seq"] == 2 and loaded.book.last_seq == 0


def test_load_reads_every_group_of_a_batch_in_one_consistent_batch_get(
    store: StateStore, calls: Calls
) -> None:
    for group in ("ws#1", "ws#2"):
        read = GroupState(group)
        assert store.commit(group, batch(store, read, [job("a", group=group)], Counting()).group_state, 0)
    calls.names.clear()
    loaded = store.load(["ws#1", "ws#2", "ws#3", "ws#1"])
    assert calls.names == ["BatchGetItem"]
    assert {g: s.version for g, s in loaded.items()} == {"ws#1": 1, "ws#2": 1, "ws#3": 0}


def test_a_groups_batch_of_ten_costs_one_batch_get_and_one_put(store: StateStore, calls: Calls) -> None:
    transition = Counting()
    read = store.load(["ws#1"])["ws#1"]
    jobs = [job(f"j{n}", n) for n in (1, 0, 2, 3, 5, 4, 6, 7, 9, 8)]  # out of order: buffered in-batch
    result = batch(store, read, jobs, transition)
    assert store.commit("ws#1", result.group_state, read.version)
    assert calls.names == ["BatchGetItem", "PutItem"]
    assert [r.outcome for r in result.results] == [Outcome.APPLIED] * 10
    assert result.group_state.state is not None
    assert result.group_state.state["log"] == [f"j{n}" for n in range(10)]


def test_two_commits_at_the_same_version_exactly_one_wins_and_the_loser_retries_from_it(
    store: StateStore,
) -> None:
    transition = Counting()
    base = store.load(["ws#1"])["ws#1"]
    first = batch(store, base, [job("a", 0)], transition)
    assert store.commit("ws#1", first.group_state, base.version)
    read = store.load(["ws#1"])["ws#1"]
    # GIVEN two workers that read version 1 (the second is a stale worker that got the same batch)
    mine = batch(store, read, [job("b", 1), job("c", 2)], transition)
    stale = batch(store, read, [job("b", 1), job("c", 2)], transition)
    assert store.commit("ws#1", mine.group_state, read.version) is True
    assert store.commit("ws#1", stale.group_state, read.version) is False
    # THEN the loser's retry finds its jobs applied: nothing is applied twice
    again = batch(store, store.load(["ws#1"])["ws#1"], [job("b", 1), job("c", 2)], transition)
    assert [r.outcome for r in again.results] == [Outcome.DUPLICATE, Outcome.DUPLICATE]
    assert not again.changed
    final = store.load(["ws#1"])["ws#1"]
    assert final.version == 2 and final.state is not None and final.state["log"] == ["a", "b", "c"]


def test_two_first_writes_exactly_one_wins(store: StateStore) -> None:
    read = store.load(["ws#1"])["ws#1"]
    one = batch(store, read, [job("a")], Counting())
    other = batch(store, read, [job("b")], Counting())
    assert [store.commit("ws#1", one.group_state, 0), store.commit("ws#1", other.group_state, 0)] == [
        True,
        False,
    ]
    final = store.load(["ws#1"])["ws#1"]
    assert final.state == {"log": ["a"], "blob": ""} and final.version == 1


def test_a_crash_after_the_transition_and_before_the_commit_reapplies_once_from_the_old_state(
    store: StateStore,
) -> None:
    transition = Counting()
    read = store.load(["ws#1"])["ws#1"]
    batch(store, read, [job("a", 0), job("b", 1)], transition)  # the worker dies here: no commit
    retry_read = store.load(["ws#1"])["ws#1"]
    assert retry_read.version == 0
    retried = batch(store, retry_read, [job("a", 0), job("b", 1)], transition)
    assert store.commit("ws#1", retried.group_state, retry_read.version)
    # a later redelivery of both is a duplicate and runs nothing
    late = batch(store, store.load(["ws#1"])["ws#1"], [job("a", 0), job("b", 1)], transition)
    assert transition.runs == ["a", "b", "a", "b"]
    assert [r.outcome for r in late.results] == [Outcome.DUPLICATE, Outcome.DUPLICATE]
    assert store.load(["ws#1"])["ws#1"].state == {"log": ["a", "b"], "blob": ""}


def test_a_transition_that_outgrows_the_item_dies_and_the_rest_of_the_group_goes_on(
    store: StateStore,
) -> None:
    read = store.load(["ws#1"])["ws#1"]
    big = job("big", blob="x" * 390_000)
    result = batch(store, read, [job("a"), big, job("b")], Counting())
    assert [r.outcome for r in result.results] == [Outcome.APPLIED, Outcome.DEAD, Outcome.APPLIED]
    dead = result.results[1].dead
    assert dead is not None and dead.error_type == "StateTooLargeError"
    assert "over the limit of 367232 bytes" in dead.error and "store a pointer" in dead.error
    assert store.commit("ws#1", result.group_state, read.version)
    assert store.load(["ws#1"])["ws#1"].state == {"log": ["a", "b"], "blob": ""}


def test_put_request_refuses_an_item_over_400_kb_naming_size_limit_and_fix(store: StateStore) -> None:
    huge = GroupState("ws#1", {"blob": "x" * 400_000})
    with pytest.raises(StateTooLargeError) as caught:
        store.put_request("ws#1", huge, 0)
    message = str(caught.value)
    assert f"{caught.value.size_bytes} bytes, over the limit of 400000 bytes" in message
    assert "Keep large blobs elsewhere (for example in S3) and store a pointer" in message


def test_an_item_at_the_limit_by_our_count_is_written_and_one_byte_more_is_refused(store: StateStore) -> None:
    # GIVEN a state sized so that the item is exactly at the limit by our count
    overhead = store.item_size(GroupState("ws#1", {"blob": ""}))
    fitting = GroupState("ws#1", {"blob": "x" * (400_000 - overhead)})
    assert store.item_size(fitting) == 400_000
    assert store.commit("ws#1", fitting, 0)  # moto applies its own count and limit: it agrees
    with pytest.raises(StateTooLargeError, match="400001 bytes"):
        store.put_request("ws#1", GroupState("ws#1", {"blob": "x" * (400_001 - overhead)}), 1)


def test_the_put_request_also_commits_inside_a_transaction(
    store: StateStore, groups_table: DynamoDBClient
) -> None:
    result = batch(store, GroupState("ws#1"), [job("a")], Counting())
    put = cast("PutTypeDef", store.put_request("ws#1", result.group_state, 0))
    groups_table.transact_write_items(TransactItems=[{"Put": put}])
    with pytest.raises(groups_table.exceptions.TransactionCanceledException):
        groups_table.transact_write_items(TransactItems=[{"Put": put}])  # the same write again: refused
    assert store.load(["ws#1"])["ws#1"].version == 1


def test_put_request_refuses_a_state_of_another_group(store: StateStore) -> None:
    with pytest.raises(ValueError, match="got the state of 'ws#2'"):
        store.put_request("ws#1", GroupState("ws#2"), 0)


class _Throttled:
    """A client whose BatchGetItem leaves every key unprocessed ``times`` times, then answers."""

    def __init__(self, real: DynamoDBClient, times: int) -> None:
        self.real, self.times, self.requests = real, times, 0

    def batch_get_item(self, **kwargs: Any) -> dict[str, Any]:
        self.requests += 1
        if self.requests <= self.times:
            return {"Responses": {GROUP_TABLE: []}, "UnprocessedKeys": kwargs["RequestItems"]}
        return dict(self.real.batch_get_item(**kwargs))


def test_load_retries_unprocessed_keys_and_gives_up_with_a_clear_error(groups_table: DynamoDBClient) -> None:
    slept: list[float] = []
    flaky = _Throttled(groups_table, times=2)
    store = StateStore(GROUP_TABLE, flaky, sleep=slept.append)  # type: ignore[arg-type]
    assert store.load(["ws#1"])["ws#1"].version == 0
    assert flaky.requests == 3 and slept == [0.05, 0.1]

    stuck = StateStore(GROUP_TABLE, _Throttled(groups_table, 99), sleep=slept.append, max_read_retries=2)  # type: ignore[arg-type]
    with pytest.raises(ConstructsFifoRuntimeError, match="left 1 key\\(s\\) unprocessed after 2 retries"):
        stuck.load(["ws#1"])


def test_an_item_the_runtime_cannot_read_is_named() -> None:
    with pytest.raises(ConstructsFifoRuntimeError, match="state item of group 'ws#1' cannot be read"):
        decode_item(
            {"group": {"S": "ws#1"}, "sk": {"S": "state"}, "book": {"S": '{"f": 9}'}, "version": {"N": "1"}}
        )
    assert item_size({"ab": {"S": "é"}, "n": {"N": "-12.50"}}) == 2 + 2 + 1 + 3


def test_a_parked_groups_dead_entry_round_trips_with_its_reason(store: StateStore) -> None:
    # GIVEN a group parked at a job that failed on its last attempt
    def flaky(job: Job, state: State) -> dict[str, Any]:
        raise RuntimeError(f"{job.id} flaked")

    result = apply_batch(
        GroupState("ws#1"), [job("a", 0)], flaky, now_ms=store.now_ms(), max_attempts=1, park_on_dead=True
    )
    # WHEN committed and loaded back
    assert store.commit("ws#1", result.group_state, 0)
    parked = store.load(["ws#1"])["ws#1"].book.parked
    # THEN the dead entry is the same, its reason included
    assert parked == result.group_state.book.parked
    assert parked is not None and (parked.reason.value, parked.seq, parked.attempts) == (
        "ATTEMPTS_EXHAUSTED",
        0,
        1,
    )


def test_dead_entries_round_trip_and_a_book_with_dead_ids_only_reads_as_before(store: StateStore) -> None:
    # GIVEN p died (permanent) in message m-p, committed
    def poison(job: Job, state: State) -> dict[str, Any]:
        raise PermanentJobError(f"{job.id} can never apply")

    died = apply_batch(
        GroupState("ws#1"), [job("p")], poison, now_ms=store.now_ms(), max_attempts=3, park_on_dead=False
    )
    assert store.commit("ws#1", died.group_state, 0)
    # WHEN loaded back
    loaded = store.load(["ws#1"])["ws#1"]
    # THEN its entry is there as it was written
    assert loaded.book.dead_entries == died.group_state.book.dead_entries != ()
    # WHEN a book written by a runtime that kept dead ids only is read
    old = decode_book('{"f": 1, "dead": ["p"]}')
    # THEN p is dead without an entry: even its own message comes back as a copy, as before
    (result,) = apply_batch(
        GroupState("ws#1", book=old), [job("p")], poison, now_ms=0, max_attempts=3, park_on_dead=False
    ).results
    assert old.dead == ("p",) and old.dead_entries == ()
    assert (result.outcome, result.dead) == (Outcome.DEAD_COPY, None)


def test_dead_letters_owed_round_trip_and_a_book_without_them_owes_nothing(store: StateStore) -> None:
    # GIVEN a committed book owing s2's dead letter (its buffered body and why it died)
    dead = DeadJob("s2", "t", "PermanentJobError", "never", 1, "m-s2", 5, seq=2)
    owed = ((BufferedJob(2, "m-s2", 4, {"jobId": "s2", "type": "t", "seq": 2}), dead),)
    assert store.commit("ws#1", GroupState("ws#1", {"n": 1}, book=Bookkeeping(owed=owed, dead=("s2",))), 0)
    # WHEN loaded back
    loaded = store.load(["ws#1"])["ws#1"]
    # THEN it owes the same letter
    assert loaded.book.owed == owed
    # WHEN a book written before dead letters were owed (or owing none) is read
    old = decode_book('{"f": 1, "dead": ["s2"]}')
    # THEN it owes nothing, and a book owing nothing is written as before
    assert old.owed == ()
    assert "owed" not in json.loads(encode_book(replace(loaded.book, owed=())))


def test_states_and_park_headers_of_a_batch_come_in_one_consistent_batch_get(
    store: StateStore, groups_table: DynamoDBClient, clock: FakeClock, calls: Calls
) -> None:
    # GIVEN ws#1 with a state, ws#2 with a state and a park header, ws#3 with nothing
    parking = ParkStore(GROUP_TABLE, groups_table, clock=clock)
    for group in ("ws#1", "ws#2"):
        assert store.commit(
            group, batch(store, GroupState(group), [job("a", group=group)], Counting()).group_state, 0
        )
    parking.park("ws#2", [], dead=DEAD_P)
    calls.names.clear()
    # WHEN the three groups are read
    states, headers = store.load_with_park_headers(["ws#1", "ws#2", "ws#3"])
    # THEN one BatchGetItem returned both kinds of item
    assert calls.names == ["BatchGetItem"]
    assert {group: state.version for group, state in states.items()} == {"ws#1": 1, "ws#2": 1, "ws#3": 0}
    assert list(headers) == ["ws#2"] and headers["ws#2"].dead == DEAD_P


def test_a_commit_with_park_items_writes_both_in_one_transaction_or_nothing(
    store: StateStore, groups_table: DynamoDBClient, clock: FakeClock, calls: Calls
) -> None:
    parking = ParkStore(GROUP_TABLE, groups_table, clock=clock)
    result = batch(store, GroupState("ws#1"), [job("a")], Counting())
    header, items = parking.park_items("ws#1", [], dead=DEAD_P)
    calls.names.clear()
    # WHEN the state is committed with a park header
    assert store.commit("ws#1", result.group_state, 0, with_items=items)
    # THEN one TransactWriteItems wrote both
    assert calls.names == ["TransactWriteItems"]
    assert parking.header("ws#1") == header and store.load(["ws#1"])["ws#1"].version == 1
    # WHEN a second commit's state is current but its header condition fails (the header exists)
    again = batch(store, store.load(["ws#1"])["ws#1"], [job("b")], Counting())
    assert store.commit("ws#1", again.group_state, 1, with_items=items) is False
    # THEN nothing of it was written
    assert store.load(["ws#1"])["ws#1"].version == 1


def test_a_state_item_carries_a_run_marker_until_the_next_commit(
    store: StateStore, groups_table: DynamoDBClient
) -> None:
    # GIVEN a new group whose first write carries a group's run marker (an isolated run that stopped)
    assert store.commit("ws#1", GroupState("ws#1"), 0, run=GROUP_RUN)
    # WHEN it is read THEN the marker comes back with the state, whether or not the run item is read
    states, _, runs = store.load_for_batch(["ws#1", "ws#2"])
    assert (states["ws#1"].version, runs["ws#1"].marker, runs["ws#2"].marker) == (1, GROUP_RUN, None)
    assert store.load_for_batch(["ws#1"], runs_of=["ws#1"])[2]["ws#1"] == FoundRun(GROUP_RUN, None, read=True)
    # WHEN the group commits without a marker THEN it is gone
    assert store.commit("ws#1", batch(store, states["ws#1"], [job("a")], Counting()).group_state, 1)
    assert store.load_for_batch(["ws#1"])[2]["ws#1"].marker is None


def test_a_run_item_holds_the_marker_beside_the_state_fenced_by_its_token_and_passed_by_a_commit(
    store: StateStore, groups_table: DynamoDBClient
) -> None:
    # GIVEN a group at version 1
    assert store.commit("ws#1", GroupState("ws#1"), 0)
    # WHEN a redelivered run marks it (no run item yet) THEN the run item holds the marker over version
    # 1, the state item is untouched, and a read of the run item finds it with its token
    token = store.mark_run("ws#1", 1, GROUP_RUN, replaces=None, read=True)
    assert token is not None
    states, _, runs = store.load_for_batch(["ws#1"], runs_of=["ws#1"])
    assert (states["ws#1"].version, runs["ws#1"]) == (1, FoundRun(GROUP_RUN, token, read=True))
    # AND a read that does not ask for it does not see it (a first delivery)
    assert store.load_for_batch(["ws#1"])[2]["ws#1"] == FoundRun(None, None, read=False)
    # WHEN a job's marker replaces it with the token read THEN it is the marker in force
    second = store.mark_run("ws#1", 1, RunMarker("a", 2), replaces=token, read=True)
    assert second is not None
    assert store.load_for_batch(["ws#1"], runs_of=["ws#1"])[2]["ws#1"].marker == RunMarker("a", 2)
    # AND writes by a worker that read the group before it are refused, writing nothing: with the old
    # token, as "no run item", or without reading it, over the same version
    assert store.mark_run("ws#1", 1, RunMarker("b", 1), replaces=token, read=True) is None
    assert store.mark_run("ws#1", 1, RunMarker("b", 1), replaces=None, read=True) is None
    assert store.mark_run("ws#1", 1, RunMarker("b", 1), replaces=None, read=False) is None
    assert store.load_for_batch(["ws#1"], runs_of=["ws#1"])[2]["ws#1"].marker == RunMarker("a", 2)
    # WHEN the group commits over version 1 THEN the run item is passed: no marker is in force
    assert store.commit("ws#1", batch(store, states["ws#1"], [job("a")], Counting()).group_state, 1)
    found = store.load_for_batch(["ws#1"], runs_of=["ws#1"])[2]["ws#1"]
    assert (found.marker, found.token) == (None, second)
    # AND a worker that did not read the run item may now write over it (it is over an older version)
    assert store.mark_run("ws#1", 2, GROUP_RUN, replaces=None, read=False) is not None


def test_a_run_marker_this_runtime_did_not_write_is_refused_with_the_fix(
    store: StateStore, groups_table: DynamoDBClient
) -> None:
    # GIVEN a state item whose run attribute is not a marker
    store.commit("ws#1", GroupState("ws#1"), 0)
    groups_table.update_item(
        TableName=GROUP_TABLE,
        Key={"group": {"S": "ws#1"}, "sk": {"S": "state"}},
        UpdateExpression="SET #run = :run",
        ExpressionAttributeNames={"#run": "run"},
        ExpressionAttributeValues={":run": {"S": "[1]"}},
    )
    # WHEN the group is read THEN the error names the attribute and how to clear it
    with pytest.raises(ConstructsFifoRuntimeError, match="remove the item's 'run' attribute"):
        store.load_for_batch(["ws#1"])


@pytest.mark.parametrize("old_format", [1, 2])
def test_an_item_of_an_older_format_still_recognises_its_duplicates_and_is_rewritten_smaller(
    store: StateStore, groups_table: DynamoDBClient, old_format: int
) -> None:
    # GIVEN an item as the runtime wrote it before remembered ids became keys: uuid-long ids, in the
    # bookkeeping's JSON, format 1 or 2
    ids = [f"{n:08d}-0000-4000-8000-000000000000" for n in range(100)]
    old_book = json.dumps({"f": old_format, "ids": ids}, separators=(",", ":"))
    old_item = {
        "group": {"S": "ws#1"},
        "sk": {"S": "state"},
        "state": {"S": '{"n":100}'},
        "book": {"S": old_book},
        "version": {"N": "7"},
        "updated_at": {"N": "1700000000000"},
    }
    groups_table.put_item(TableName=GROUP_TABLE, Item=old_item)
    read = store.load(["ws#1"])["ws#1"]
    # WHEN the oldest and the newest remembered jobs come again, with a new one
    count = lambda job, state: {"n": (state or {}).get("n", 0) + 1}  # noqa: E731
    result = apply_batch(
        read, [job(ids[0]), job(ids[-1]), job("new")], count, now_ms=0, max_attempts=3, park_on_dead=False
    )
    # THEN the copies are duplicates, the new job is applied once
    assert [r.outcome for r in result.results] == [Outcome.DUPLICATE, Outcome.DUPLICATE, Outcome.APPLIED]
    # WHEN committed
    assert store.commit("ws#1", result.group_state, read.version)
    written = groups_table.get_item(TableName=GROUP_TABLE, Key={"group": {"S": "ws#1"}, "sk": {"S": "state"}})
    item = cast("dict[str, Any]", written["Item"])
    # THEN the item is in format 3: 100 keys of 8 bytes in the binary ids attribute (800 bytes, the bound),
    # nothing else in the bookkeeping, under 900 bytes besides the state where it was over 3.9 KB
    assert json.loads(item["book"]["S"]) == {"f": 3}
    assert len(item["ids"]["B"]) == 800
    assert item_size(old_item) - len(old_item["state"]["S"]) > 3900
    assert item_size(item) - len(item["state"]["S"]) < 900
    # AND the ones still remembered are still recognised after the rewrite; the oldest was pushed out
    again = apply_batch(
        store.load(["ws#1"])["ws#1"],
        [job(ids[1]), job("new"), job(ids[0])],
        count,
        now_ms=0,
        max_attempts=3,
        park_on_dead=False,
    )
    assert [r.outcome for r in again.results] == [Outcome.DUPLICATE, Outcome.DUPLICATE, Outcome.APPLIED]


def test_a_bookkeeping_of_a_newer_format_is_refused_not_half_read() -> None:
    # GIVEN / WHEN a bookkeeping written by a runtime of a later format
    # THEN it is refused with the formats this runtime reads (so no remembered id is silently lost)
    with pytest.raises(ValueError, match=r"bookkeeping format 4; this runtime reads formats \[1, 2, 3\]"):
        decode_book('{"f": 4}')
