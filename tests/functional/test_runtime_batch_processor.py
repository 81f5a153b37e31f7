"""The batch skeleton both modes share (``runtime.batch_processor``), seen through each mode on moto.

What is observed: the response, the outcome lines, and what a heartbeat (the seam a caller other
than Lambda lends the skeleton) was told while the batch ran.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pytest

from constructs_fifo.runtime.constants import DeadJobPolicy
from constructs_fifo.runtime.dead_jobs.parking import ParkStore
from constructs_fifo.runtime.job import Job, record_message_id
from constructs_fifo.runtime.state.storage.store import StateStore

from .runtime_harness import FakeContext, Harness, ProcessorHarness, body, event, failed_ids, make_record
from .state_harness import StateHarness, job_record

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient

    from constructs_fifo.runtime.types import SQSRecord


class RecordingHeartbeat:
    """A caller's heartbeat: records what it was asked to hold, and goes stale when told to."""

    def __init__(self) -> None:
        self.held: list[str] = []
        self.holding = False
        self.went_stale = False

    @contextlib.contextmanager
    def running(self, records: Sequence[SQSRecord]) -> Iterator[None]:
        self.held = [record_message_id(record) for record in records]
        self.holding = True
        try:
            yield
        finally:
            self.holding = False

    def stale(self) -> bool:
        return self.went_stale

    def admit(self, *, alone: bool) -> contextlib.AbstractContextManager[object]:
        return contextlib.nullcontext()


@pytest.fixture
def claim(harness: Harness) -> Harness:
    return harness


@pytest.fixture
def state(dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str) -> StateHarness:
    return StateHarness(dynamodb, sqs, queue_url, dlq_url)


def _three_groups(harness: ProcessorHarness) -> list[SQSRecord]:
    if isinstance(harness, StateHarness):
        return [job_record(f"j{n}", 0, group=f"ws#{n}") for n in range(3)]
    return [make_record(body(f"j{n}"), group=f"ws#{n}") for n in range(3)]


def _ran(harness: ProcessorHarness) -> list[str]:
    """The job ids the job function (claim mode) or the transition (state mode) ran, in order."""
    return (
        harness.ran
        if isinstance(harness, Harness)
        else harness.runs
        if isinstance(harness, StateHarness)
        else []
    )


@pytest.mark.parametrize("mode", ["claim", "state"])
def test_a_batch_that_goes_stale_starts_nothing_more(mode: str, request: pytest.FixtureRequest) -> None:
    # GIVEN a processor lent a heartbeat that goes stale while the first group's job runs
    harness: ProcessorHarness = request.getfixturevalue(mode)
    heartbeat = RecordingHeartbeat()
    seen_holding: list[bool] = []

    def go_stale(job: Job) -> None:
        seen_holding.append(heartbeat.holding)
        heartbeat.went_stale = True

    harness.behaviour["j0"] = go_stale
    records = _three_groups(harness)
    processor: Any = harness.processor(heartbeat=heartbeat)
    # WHEN a caller hands it the records it received itself
    response = processor.process_batch(records, FakeContext())
    # THEN the heartbeat held the whole batch while the first job ran, and let go at the end
    assert heartbeat.held == [record_message_id(record) for record in records]
    assert seen_holding == [True]
    assert not heartbeat.holding
    # AND the two groups not started are reported at once, saying why, and did not run
    later = [record_message_id(record) for record in records[1:]]
    assert failed_ids(response) == later
    deadline = [line for line in harness.outcome_lines() if line["status"] == "DEADLINE"]
    assert [line["messageId"] for line in deadline] == later
    assert all(line["visibilityTimeout"] == 0 for line in deadline)
    assert all("the batch went stale" in line["action"] for line in deadline)
    assert _ran(harness) == ["j0"]


@pytest.mark.parametrize("mode", ["claim", "state"])
def test_without_a_heartbeat_a_batch_runs_whole(mode: str, request: pytest.FixtureRequest) -> None:
    # GIVEN a processor built without a heartbeat (Lambda's)
    harness: ProcessorHarness = request.getfixturevalue(mode)
    records = _three_groups(harness)
    # WHEN a caller hands it its records
    response = harness.processor().process_batch(records, FakeContext())  # type: ignore[attr-defined]
    # THEN every group runs and nothing is reported
    assert failed_ids(response) == []
    assert [line["status"] for line in harness.outcome_lines()] == ["SUCCEEDED"] * 3


@pytest.mark.parametrize("mode", ["claim", "state"])
def test_an_unreadable_batch_reports_every_record_with_its_error_and_traceback(
    mode: str, request: pytest.FixtureRequest
) -> None:
    # GIVEN a processor whose group table does not exist, so the batch's one read fails
    harness: ProcessorHarness = request.getfixturevalue(mode)
    harness.policy = DeadJobPolicy.PARK
    missing = ParkStore("no-such-table", harness.dynamodb, clock=harness.clock)
    stores: dict[str, Any] = {"parking": missing}
    if mode == "state":
        stores["states"] = StateStore("no-such-table", harness.dynamodb, clock=harness.clock)
    records = _three_groups(harness)
    # WHEN the batch is processed
    response = harness.processor(**stores).process(event(*records), FakeContext())
    # THEN every record comes back, none ran, each ERROR line naming the error and its own traceback
    assert failed_ids(response) == [record_message_id(record) for record in records]
    errors = harness.outcome_lines()
    assert [line["status"] for line in errors] == ["ERROR"] * 3
    assert all(line["error"].startswith("ResourceNotFoundException: ") for line in errors)
    assert all("ResourceNotFoundException" in line["traceback"].splitlines()[-1] for line in errors)
    assert all("could not be read" in line["action"] for line in errors)
    assert _ran(harness) == []
