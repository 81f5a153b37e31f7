"""What the tables' items mean as a job's status: claim items and park headers, state-mode sightings."""

from __future__ import annotations

from typing import Any

import pytest

from constructs_fifo.client.job_status import (
    SETTLED_STATUSES,
    JobStatus,
    claim_outcome,
    ends_wait,
    state_outcome,
)
from constructs_fifo.client.state_reader import JobSighting
from constructs_fifo.runtime.dead_jobs.parking import PARKED, RESUMING, ParkHeader
from constructs_fifo.runtime.dead_jobs.record import DeadJob

NOW_MS = 1_700_000_000_000
DEAD = DeadJob("d1", "run_tests", "PermanentJobError", "no workspace", 1, "m-d1", NOW_MS)


def header(status: str = PARKED) -> ParkHeader:
    return ParkHeader("ws#1", status, 1, 2, DEAD)


def claim(status: str, **attributes: Any) -> dict[str, Any]:
    return {"id": "j1", "status": status, "group": "ws#1", "attempts": 2, "updated_at": NOW_MS, **attributes}


@pytest.mark.parametrize(
    ("item", "found", "status", "detail"),
    [
        (claim("SUCCEEDED", result='{"passed":true}'), None, JobStatus.SUCCEEDED, "succeeded"),
        (claim("IN_FLIGHT", lease_expires_at=NOW_MS + 1), None, JobStatus.RUNNING, "attempt 2 is running"),
        (
            claim("IN_FLIGHT", lease_expires_at=NOW_MS - 1, updated_at=NOW_MS - 60_000),
            None,
            JobStatus.RUNNING,
            "lease expired",
        ),
        (
            claim("IN_FLIGHT", lease_expires_at=NOW_MS - 5, updated_at=NOW_MS - 5),
            None,
            JobStatus.RUNNING,
            "released the lease",
        ),
        (claim("FAILED", error="boom", error_type="OSError"), None, JobStatus.RUNNING, "retried"),
        (claim("DEAD", dead_reason="ATTEMPTS_EXHAUSTED", error="boom"), None, JobStatus.DEAD, "dead"),
        (claim("FAILED", permanent=True, error="old"), None, JobStatus.DEAD, "dead"),
        (claim("WHAT"), None, JobStatus.UNKNOWN, "not one this client knows"),
        (None, None, JobStatus.UNKNOWN, "never sent"),
        (None, header(), JobStatus.PARKED, "parked at job 'd1'"),
        (None, header(RESUMING), JobStatus.PENDING, "resuming"),
    ],
    ids=[
        "succeeded",
        "running",
        "lease-expired",
        "lease-released",
        "failed-retried",
        "dead",
        "dead-0.1",
        "unknown-status",
        "no-claim",
        "parked",
        "resuming",
    ],
)
def test_a_claim_item_and_its_groups_header_map_to_one_status(
    item: dict[str, Any] | None, found: ParkHeader | None, status: JobStatus, detail: str
) -> None:
    # GIVEN a claim item (or none) and its group's header; WHEN mapped
    outcome = claim_outcome("j1", item, found, group="ws#1", now_ms=NOW_MS, sent=False)
    # THEN the status, and the sentence a person reads, say it
    assert outcome.status is status
    assert detail in outcome.detail


def test_a_succeeded_claim_carries_its_result_and_a_running_one_its_attempt_and_lease() -> None:
    # GIVEN a SUCCEEDED claim with a result and an IN_FLIGHT one
    done = claim_outcome(
        "j1", claim("SUCCEEDED", result="[1,2]"), None, group=None, now_ms=NOW_MS, sent=False
    )
    running = claim_outcome(
        "j1", claim("IN_FLIGHT", lease_expires_at=NOW_MS + 5), None, group=None, now_ms=NOW_MS, sent=False
    )
    # THEN the result is decoded; the running one has its attempt and lease, its group from the claim
    assert (done.result, done.group) == ([1, 2], "ws#1")
    assert (running.attempt, running.lease_expires_at_ms) == (2, NOW_MS + 5)


def test_a_dead_claim_says_its_group_is_parked_at_it_only_when_the_header_names_it() -> None:
    # GIVEN a DEAD claim of d1, with the header of a group parked at d1, and at another job
    item = claim(
        "DEAD", id="d1", dead_reason="PERMANENT", error="no workspace", error_type="PermanentJobError"
    )
    at_it = claim_outcome("d1", item, header(), group=None, now_ms=NOW_MS, sent=False)
    elsewhere = claim_outcome("j1", claim("DEAD"), header(), group=None, now_ms=NOW_MS, sent=False)
    # THEN only the first names the parked group
    assert (at_it.dead_reason, at_it.error_type, at_it.parked_group) == (
        "PERMANENT",
        "PermanentJobError",
        "ws#1",
    )
    assert elsewhere.parked_group is None


def test_no_claim_is_pending_once_the_caller_says_it_sent_the_job() -> None:
    # GIVEN no claim; WHEN the caller sent it THEN pending, else unknown
    assert claim_outcome("j1", None, None, group="ws#1", now_ms=NOW_MS, sent=True).status is JobStatus.PENDING
    assert (
        claim_outcome("j1", None, None, group="ws#1", now_ms=NOW_MS, sent=False).status is JobStatus.UNKNOWN
    )


def test_no_claim_of_the_job_its_group_is_parked_at_reads_the_death_from_the_header() -> None:
    # GIVEN the header of a group parked at d1 and no claim for d1 (expired)
    outcome = claim_outcome("d1", None, header(), group="ws#1", now_ms=NOW_MS, sent=False)
    # THEN it is dead as the header says, its group parked at it
    assert (outcome.status, outcome.error, outcome.parked_group) == (JobStatus.DEAD, "no workspace", "ws#1")


def sighting(**fields: Any) -> JobSighting:
    return JobSighting("ws#1", "j1", 7, **fields)


@pytest.mark.parametrize(
    ("seen", "sent", "status"),
    [
        (sighting(applied=True), False, JobStatus.SUCCEEDED),
        (sighting(dead_reason="PERMANENT", dead_error="x"), False, JobStatus.DEAD),
        (sighting(dead_reason=""), False, JobStatus.DEAD),
        (sighting(seq_given_up=True), True, JobStatus.UNKNOWN),
        (sighting(buffered=True), False, JobStatus.PENDING),
        (sighting(park_status=PARKED, parked_at_job_id="d1"), False, JobStatus.PARKED),
        (sighting(park_status=RESUMING, parked_at_job_id="d1"), False, JobStatus.PENDING),
        (sighting(failed_runs=2), False, JobStatus.RUNNING),
        (sighting(), True, JobStatus.PENDING),
        (sighting(), False, JobStatus.UNKNOWN),
    ],
    ids=[
        "applied",
        "dead",
        "dead-id-only",
        "seq-given-up",
        "buffered",
        "parked",
        "resuming",
        "failed-runs",
        "sent",
        "nothing",
    ],
)
def test_a_state_mode_sighting_maps_to_one_status(seen: JobSighting, sent: bool, status: JobStatus) -> None:
    # GIVEN what the group's items say of the job; WHEN mapped; THEN one status
    assert state_outcome(seen, sent=sent).status is status


def test_an_applied_state_mode_job_carries_the_version_read_and_a_failing_one_its_next_attempt() -> None:
    # GIVEN an applied sighting at version 7, and one with 2 failed runs
    # THEN the first names the version, the second attempt 3
    assert state_outcome(sighting(applied=True), sent=False).state_version == 7
    assert state_outcome(sighting(failed_runs=2), sent=False).attempt == 3


def test_settled_statuses_are_the_ones_a_job_ends_in_and_parked_is_not_one() -> None:
    # THEN succeeded, dead, cancelled and superseded end a default wait; parked and held (the job may
    # still run after a resume or a release) do not
    assert {status for status in JobStatus if status.settled} == {
        JobStatus.SUCCEEDED,
        JobStatus.DEAD,
        JobStatus.CANCELLED,
        JobStatus.SUPERSEDED,
    }
    assert {status for status in JobStatus if ends_wait(status)} == SETTLED_STATUSES
    # AND a caller that asks to stop at parked stops there too
    assert {status for status in JobStatus if ends_wait(status, stop_at_parked=True)} == {
        JobStatus.SUCCEEDED,
        JobStatus.DEAD,
        JobStatus.PARKED,
        JobStatus.CANCELLED,
        JobStatus.SUPERSEDED,
        JobStatus.HELD,
    }
