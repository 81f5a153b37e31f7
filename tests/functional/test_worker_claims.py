"""The worker's own claim writes on moto: isolating a run after a crash (its crash then counted), and
giving a stopped run back (not counted)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from constructs_fifo.runtime.claim.store import ClaimOutcome, ClaimStore
from constructs_fifo.runtime.job import Job
from constructs_fifo.worker.claims import give_back, isolate

from .runtime_harness import TABLE_NAME, FakeClock

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient


def _job(job_id: str) -> Job:
    return Job(id=job_id, type="t", payload={}, group="g", message_id=f"m-{job_id}", attempt=1, body={})


def test_an_isolated_runs_crash_is_counted_and_exhausts_the_job(dynamodb: DynamoDBClient) -> None:
    # GIVEN a shared run retaken after a crash and isolated (run alone) by its worker, max_attempts 2
    clock = FakeClock()
    store = ClaimStore(TABLE_NAME, dynamodb, clock=clock, max_attempts=2, shared_runs=True)
    store.claim(_job("j1"), lease_ms=1000)
    clock.advance(2)
    alone = store.claim(_job("j1"), lease_ms=1000)
    assert isolate(store, "j1", alone.owner or "")
    # WHEN it crashes too (its lease runs out), then again after another isolated run
    clock.advance(2)
    second = store.claim(_job("j1"), lease_ms=1000)
    assert isolate(store, "j1", second.owner or "")
    clock.advance(2)
    third = store.claim(_job("j1"), lease_ms=1000)
    # THEN each crash alone was counted: attempt 2, then no attempts left
    assert (alone.attempt, second.attempt) == (1, 2)
    assert third.outcome is ClaimOutcome.EXHAUSTED


def test_isolate_is_refused_to_a_run_that_lost_its_claim(dynamodb: DynamoDBClient) -> None:
    # GIVEN a run whose lease ran out and another worker retook the claim
    clock = FakeClock()
    store = ClaimStore(TABLE_NAME, dynamodb, clock=clock, shared_runs=True)
    stale = store.claim(_job("j1"), lease_ms=1000)
    clock.advance(2)
    store.claim(_job("j1"), lease_ms=1000)
    # WHEN the stale run asks to be isolated / THEN it is refused
    assert isolate(store, "j1", stale.owner or "") is False


def test_a_run_given_back_by_its_stopping_worker_runs_again_as_the_same_attempt(
    dynamodb: DynamoDBClient,
) -> None:
    # GIVEN a live run on attempt 1
    store = ClaimStore(TABLE_NAME, dynamodb, clock=FakeClock())
    first = store.claim(_job("j1"), lease_ms=60_000)
    # WHEN its worker stops and gives it back / THEN the retake is attempt 1 again
    assert give_back(store, "j1", first.owner or "")
    retake = store.claim(_job("j1"), lease_ms=60_000)
    assert (retake.outcome, retake.attempt, retake.after_crash) == (ClaimOutcome.ACQUIRED, 1, False)
    # AND a stale owner cannot give it back
    assert give_back(store, "j1", first.owner or "") is False
