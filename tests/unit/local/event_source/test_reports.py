"""What a drain counts: a job that died and parked its group is dead, and its group is counted parked."""

from __future__ import annotations

from constructs_fifo.client.job_status import JobStatus
from constructs_fifo.local.event_source.reports import DrainStats, outcomes_of
from constructs_fifo.runtime.observability import OutcomeStatus


def test_a_job_that_died_and_parked_its_group_is_dead_as_the_outcome_api_says() -> None:
    # GIVEN a batch's outcome lines: one job dead-lettered, one dead that parked its group, one kept behind
    statuses = {
        OutcomeStatus.SUCCEEDED.value: 2,
        OutcomeStatus.DEAD_LETTERED.value: 1,
        OutcomeStatus.PARKED.value: 1,
        OutcomeStatus.KEPT.value: 1,
    }
    # WHEN a drain counts them
    stats = DrainStats()
    stats.add(outcomes=outcomes_of(statuses))
    document = stats.as_dict()
    # THEN both dead jobs are dead (JobOutcomes' word for them), and the group is counted as parked
    assert document["outcomes"] == {
        "succeeded": 2,
        "duplicate": 0,
        "retried": 0,
        JobStatus.DEAD.value: 2,
        "kept": 1,
        "buffered": 0,
        "paced": 0,
        "cancelled": 0,
    }
    assert document["groups_parked"] == 1


def test_a_cancelled_superseded_or_paced_job_is_counted_as_such_not_as_a_retry() -> None:
    # GIVEN a batch's outcome lines: a job cancelled, one superseded, one paced and one skipped behind it
    statuses = {
        OutcomeStatus.CANCELLED.value: 1,
        OutcomeStatus.SUPERSEDED.value: 1,
        OutcomeStatus.PACED.value: 1,
        OutcomeStatus.SKIPPED.value: 1,
    }
    # WHEN a drain counts them
    stats = DrainStats()
    stats.add(outcomes=outcomes_of(statuses))
    outcomes = stats.outcomes
    # THEN the cancelled and superseded jobs are cancelled, the paced one paced (no attempt: not a retry)
    assert (outcomes["cancelled"], outcomes["paced"], outcomes["retried"]) == (2, 1, 1)
