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
    }
    assert document["groups_parked"] == 1
