"""The claim store's fence on moto (rule 4): a final status stays final for its own owner too."""

from __future__ import annotations

from typing import TYPE_CHECKING

from constructs_fifo.runtime.claim.store import ClaimOutcome, ClaimStore
from constructs_fifo.runtime.constants import STATUS_DEAD, STATUS_FAILED, STATUS_SUCCEEDED, DeadReason
from constructs_fifo.runtime.job import Job

from .runtime_harness import TABLE_NAME

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient


def _job(job_id: str) -> Job:
    return Job(id=job_id, type="t", payload={}, group="g", message_id=f"m-{job_id}", attempt=1, body={})


def _store(dynamodb: DynamoDBClient) -> ClaimStore:
    return ClaimStore(TABLE_NAME, dynamodb, clock=lambda: 1_700_000_000.0)


def test_a_dead_claim_refuses_its_own_owners_completion_and_failure(dynamodb: DynamoDBClient) -> None:
    # GIVEN a claim declared DEAD on its owner's token (an exhausted claim, by another worker)
    store = _store(dynamodb)
    owner = store.claim(_job("j1"), lease_ms=1000).owner or ""
    assert store.mark_dead("j1", owner, reason=DeadReason.ATTEMPTS_EXHAUSTED, error="e", error_type="E")
    # WHEN the owner, still running, completes, then fails
    completed = store.complete("j1", owner)
    failed = store.fail("j1", owner, error="late", error_type="Late")
    # THEN both are refused and the claim is still DEAD with its own error
    assert (completed, failed) == (False, False)
    claim = store.get("j1") or {}
    assert (claim["status"], claim["error"]) == (STATUS_DEAD, "e")


def test_a_succeeded_claim_refuses_its_own_owners_dead_mark_and_failure(dynamodb: DynamoDBClient) -> None:
    # GIVEN a claim its owner completed
    store = _store(dynamodb)
    owner = store.claim(_job("j1"), lease_ms=1000).owner or ""
    assert store.complete("j1", owner, result_json='{"ok":1}')
    # WHEN the same token marks it DEAD, then FAILED
    dead = store.mark_dead("j1", owner, reason=DeadReason.ATTEMPTS_EXHAUSTED, error="e", error_type="E")
    failed = store.fail("j1", owner, error="e", error_type="E")
    # THEN both are refused: SUCCEEDED is final
    assert (dead, failed) == (False, False)
    assert (store.get("j1") or {})["status"] == STATUS_SUCCEEDED


def test_a_failed_claim_still_takes_its_owners_completion_and_loses_the_error(
    dynamodb: DynamoDBClient,
) -> None:
    # GIVEN a claim marked FAILED on its owner's token (an operator released it) while the job ran on
    store = _store(dynamodb)
    owner = store.claim(_job("j1"), lease_ms=1000).owner or ""
    assert store.fail("j1", owner, error="released", error_type="Released")
    assert (store.get("j1") or {})["status"] == STATUS_FAILED
    # WHEN the job returns and its worker completes
    completed = store.complete("j1", owner)
    # THEN the completion lands: SUCCEEDED, no error left on the item
    assert completed is True
    claim = store.get("j1") or {}
    assert claim["status"] == STATUS_SUCCEEDED
    assert "error" not in claim
    assert "error_type" not in claim


class _Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_shared_runs_crash_is_not_counted_and_its_retake_says_it_crashed(dynamodb: DynamoDBClient) -> None:
    # GIVEN a worker of several slots (shared runs) whose run of j1 (its last allowed) lost its lease
    clock = _Clock()
    store = ClaimStore(TABLE_NAME, dynamodb, clock=clock, max_attempts=1, shared_runs=True)
    first = store.claim(_job("j1"), lease_ms=1000)
    clock.now += 2
    # WHEN another worker claims it
    retake = store.claim(_job("j1"), lease_ms=1000)
    # THEN it is taken at the same attempt (not counted, not EXHAUSTED), and the retake says it crashed
    assert (first.attempt, first.after_crash) == (1, False)
    assert (retake.outcome, retake.attempt, retake.after_crash) == (ClaimOutcome.ACQUIRED, 1, True)


def test_a_lambda_claim_carries_no_shared_mark_and_its_crash_counts(dynamodb: DynamoDBClient) -> None:
    # GIVEN the function's store (runs alone) and a run that lost its lease
    clock = _Clock()
    store = ClaimStore(TABLE_NAME, dynamodb, clock=clock)
    store.claim(_job("j1"), lease_ms=1000)
    item = store.get("j1") or {}
    clock.now += 2
    # WHEN it is claimed again / THEN the crash is counted, as it always was
    retake = store.claim(_job("j1"), lease_ms=1000)
    assert "shared" not in item
    assert (retake.attempt, retake.after_crash) == (2, True)
