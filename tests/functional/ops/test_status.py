"""status.py: the age of the oldest message where it can be known without CloudWatch, and why not.

On in-process moto, whose CloudWatch has no ``ApproximateAgeOfOldestMessage`` datapoint, as the
emulator: an empty queue's age is 0; a queue holding messages says why its age is unknown (and
``status`` receives nothing from it); a parked group's oldest kept job is aged from the tables.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from constructs_fifo.ops.status import AGE_UNKNOWN
from constructs_fifo.runtime.exceptions import PermanentJobError
from constructs_fifo.stacks.counters import queue_counts

from ..ops_world import World, world


@pytest.fixture
def state_world() -> Iterator[World]:
    yield from world(claim_mode=False)


def _poison(*_: Any) -> None:
    raise PermanentJobError("cannot apply")


def test_the_oldest_age_is_0_for_an_empty_queue_and_unknown_with_the_reason_otherwise(
    state_world: World,
) -> None:
    # GIVEN an empty queue WHEN status runs THEN the age is 0, from the empty queue
    empty = state_world.cli_json("status")["queues"][0]
    assert (empty["oldestMessageAgeSeconds"], empty["oldestMessageAgeSource"]) == (0.0, "empty queue")
    assert empty["oldestMessageAgeUnknownBecause"] is None
    # GIVEN two messages waiting and no CloudWatch datapoint
    state_world.send("ws#1", "a1", "a2")
    # WHEN status runs
    waiting = state_world.cli_json("status")["queues"][0]
    # THEN the age is unknown and the document says why
    assert (waiting["oldestMessageAgeSeconds"], waiting["oldestMessageAgeSource"]) == (None, None)
    assert waiting["oldestMessageAgeUnknownBecause"] == AGE_UNKNOWN
    # AND the plain lines say it too, and status received nothing (both messages still visible)
    code, out = state_world.cli("status")
    assert code == 0
    assert "oldest message age: unknown: no CloudWatch ApproximateAgeOfOldestMessage datapoint" in out
    assert queue_counts(state_world.sqs, state_world.queue_url).visible == 2


def test_a_parked_group_s_oldest_kept_job_is_aged_from_the_tables(state_world: World) -> None:
    # GIVEN a group parked at a poison job, its jobs out of the queue and kept in the group table
    state_world.harness.behaviour["bad"] = _poison
    state_world.send("ws#1", "a1", "bad", "a3")
    state_world.drain()
    # WHEN status runs
    status = state_world.cli_json("status")["queues"][0]
    # THEN the queue reads empty (age 0) while the parked job's age is known and named with its group
    assert status["oldestMessageAgeSeconds"] == 0.0
    parked = status["oldestParkedJob"]
    assert parked["group"] == "ws#1"
    assert 0 <= parked["ageSeconds"] < 600
    _, out = state_world.cli("status")
    assert "oldest parked job: " in out and "(group ws#1; not in the queue's age)" in out
