"""Unit tests of the demo verifier: each violation kind is caught, a clean run passes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from constructs_fifo.local.demo.verify import Expectations, Observed, expectations_of, verify
from constructs_fifo.local.demo.workload import WorkloadSpec, generate_workload

EXPECTED = Expectations(order={"ws-a": ["a1", "a2", "a3"], "ws-b": ["b1", "b3"]}, poison={"b2": "ws-b"})
CLEAN = Observed(
    applied={"ws-a": ["a1", "a2", "a3"], "ws-b": ["b1", "b3"]},
    dead_letter_job_ids=["b2"],
    claim_status={
        "a1": "SUCCEEDED",
        "a2": "SUCCEEDED",
        "a3": "SUCCEEDED",
        "b1": "SUCCEEDED",
        "b2": "FAILED",
        "b3": "SUCCEEDED",
    },
    queue_visible=0,
    queue_in_flight=0,
)


def test_a_clean_run_has_no_violation() -> None:
    # GIVEN observations matching the expectations WHEN verified THEN nothing is reported
    assert verify(EXPECTED, CLEAN) == []


@pytest.mark.parametrize(
    ("observed", "kind", "fragment"),
    [
        (
            replace(CLEAN, applied={**CLEAN.applied, "ws-a": ["a2", "a1", "a3"]}),
            "order",
            "workspace ws-a: applied order differs at position 0: expected a1, got a2",
        ),
        (replace(CLEAN, applied={**CLEAN.applied, "ws-a": ["a1", "a2"]}), "order", "expected a3, got <end>"),
        (replace(CLEAN, applied={"ws-b": ["b1", "b3"]}), "order", "3 jobs expected, 0 applied"),
        (
            replace(CLEAN, applied={**CLEAN.applied, "ws-a": ["a1", "a2", "a2", "a3"]}),
            "applied_twice",
            "job a2 applied 2 times",
        ),
        (
            replace(CLEAN, replayed={"ws-a": ["a2"]}),
            "duplicate_reached_worker",
            "workspace ws-a: job a2 reached the worker again after it was applied",
        ),
        (
            replace(CLEAN, applied={**CLEAN.applied, "ws-b": ["b1", "b2", "b3"]}),
            "poison_applied",
            "poison job b2 was applied",
        ),
        (
            replace(CLEAN, dead_letter_job_ids=[]),
            "poison_not_dead_lettered",
            "poison job b2 is not in the dead-letter queue",
        ),
        (
            replace(CLEAN, claim_status={**CLEAN.claim_status, "b2": "IN_FLIGHT"}),
            "poison_claim_not_failed",
            "claim status IN_FLIGHT, expected FAILED",
        ),
        (
            replace(CLEAN, claim_status={k: v for k, v in CLEAN.claim_status.items() if k != "b2"}),
            "poison_claim_not_failed",
            "claim status None",
        ),
        (
            replace(CLEAN, dead_letter_job_ids=["b2", "a3"]),
            "unexpected_dead_letter",
            "job a3 is in the dead-letter queue but is not a poison job",
        ),
        (
            replace(CLEAN, claim_status={**CLEAN.claim_status, "a2": "FAILED"}),
            "claim_not_succeeded",
            "job a2 has claim status FAILED, expected SUCCEEDED",
        ),
        (
            replace(CLEAN, queue_visible=2, queue_in_flight=1),
            "queue_not_empty",
            "main queue still holds 3 messages (2 visible, 1 in flight)",
        ),
    ],
)
def test_each_violation_kind_is_caught_and_described(observed: Observed, kind: str, fragment: str) -> None:
    # GIVEN observations with one defect WHEN verified
    violations = verify(EXPECTED, observed)
    # THEN a violation of that kind describes it (workspace, expected vs actual)
    matching = [v for v in violations if v.kind == kind]
    assert matching, violations
    assert fragment in matching[0].message


def test_dead_letters_of_other_runs_are_ignored() -> None:
    # GIVEN the DLQ also holds a message of an earlier run (a job id this run never sent)
    observed = replace(CLEAN, dead_letter_job_ids=["b2", "s7-w02-j000"])
    # WHEN verified THEN it is not this run's violation
    assert verify(EXPECTED, observed) == []


def test_a_reordered_workspace_reports_expected_and_actual_lists() -> None:
    # GIVEN one workspace whose last two jobs swapped
    observed = replace(CLEAN, applied={**CLEAN.applied, "ws-a": ["a1", "a3", "a2"]})
    # WHEN verified
    (violation,) = verify(EXPECTED, observed)
    # THEN the report carries both lists and the workspace
    assert violation.workspace == "ws-a"
    assert violation.expected == ["a1", "a2", "a3"]
    assert violation.actual == ["a1", "a3", "a2"]
    assert violation.to_dict()["kind"] == "order"


def test_expectations_of_a_workload_leave_out_poison() -> None:
    # GIVEN a generated workload with poison
    workload = generate_workload(WorkloadSpec(workspaces=2, jobs=12, poison=2, seed=1))
    # WHEN its expectations are built
    expectations = expectations_of(workload)
    # THEN poison jobs are expected in the DLQ and nowhere in the applied orders
    assert set(expectations.poison) == {job.job_id for job in workload.poison_jobs}
    applied = {job_id for order in expectations.order.values() for job_id in order}
    assert applied.isdisjoint(expectations.poison)
    assert len(applied) == 10
