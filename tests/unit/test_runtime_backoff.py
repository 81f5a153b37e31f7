"""Unit tests of the retry delay arithmetic."""

from __future__ import annotations

import pytest

from constructs_fifo.runtime.backoff import backoff_seconds, lease_delay_seconds


@pytest.mark.parametrize(
    ("attempt", "expected"),
    [(0, 2), (1, 2), (2, 4), (3, 8), (5, 32), (6, 60), (50, 60), (10_000, 60)],
)
def test_backoff_doubles_per_attempt_and_stops_at_the_cap(attempt: int, expected: int) -> None:
    # GIVEN base 2 s and a 60 s visibility timeout / WHEN / THEN
    assert backoff_seconds(attempt, base_seconds=2, cap_seconds=60) == expected


def test_backoff_never_exceeds_the_sqs_maximum() -> None:
    # GIVEN a cap above SQS's 12-hour maximum / WHEN a late attempt / THEN 43200
    assert backoff_seconds(40, base_seconds=5, cap_seconds=10**9) == 43200


def test_backoff_base_zero_means_immediate_retry() -> None:
    assert backoff_seconds(7, base_seconds=0, cap_seconds=60) == 0


@pytest.mark.parametrize(
    ("lease_ms", "now_ms", "expected"),
    [(None, 0, 0), (1_000, 5_000, 0), (10_001, 0, 11), (30_000, 0, 30), (10**9, 0, 120)],
)
def test_lease_delay_rounds_up_and_is_capped(lease_ms: int | None, now_ms: int, expected: int) -> None:
    assert lease_delay_seconds(lease_ms, now_ms, cap_seconds=120) == expected
