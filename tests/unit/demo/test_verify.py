"""Unit tests of the demo verifier: each violation kind is caught and described, a clean run passes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from constructs_fifo.demo.verify import (
    Expectations,
    Observed,
    ObservedDeadLetter,
    expectations_of,
    verify,
)
from constructs_fifo.demo.workload import WorkloadSpec, generate_workload

WS, NS = "AgentJobs/Workspaces", "AgentJobs/Notifications"
EXPECTED = Expectations(
    order={"ws-a": ["a1", "a2", "a3"], "ws-b": ["b1", "b3"]},
    poison={"b2": "ws-b"},
    last_attempt={"a2": "ws-a"},
    notifications={"a3-n": "ws-a"},
)
CLEAN = Observed(
    applied={"ws-a": ["a1", "a2", "a3"], "ws-b": ["b1", "b3"]},
    dead_letters=[
        ObservedDeadLetter(WS, "b2", "ws#ws-b", "PERMANENT"),
        ObservedDeadLetter(WS, "b2", "ws#ws-b", "COPY_OF_DEAD_JOB"),
    ],
    parked={WS: [], NS: []},
    notifications={"a3-n": 0},
    queue_depths={WS: (0, 0), NS: (0, 0)},
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
        (replace(CLEAN, applied={**CLEAN.applied, "ws-b": ["b1"]}), "order", "expected b3, got <end>"),
        (replace(CLEAN, applied={"ws-b": ["b1", "b3"]}), "order", "3 jobs expected, 0 applied"),
        (
            replace(CLEAN, applied={**CLEAN.applied, "ws-a": ["a1", "a2", "a2", "a3"]}),
            "applied_twice",
            "job a2 applied 2 times",
        ),
        (
            replace(CLEAN, applied={**CLEAN.applied, "ws-b": ["b1", "b2", "b3"]}),
            "poison_applied",
            "poison job b2 was applied",
        ),
        (
            replace(CLEAN, applied={**CLEAN.applied, "ws-a": ["a1", "a3"]}),
            "last_attempt_not_applied",
            "job a2, which fails every attempt but its last, was not applied",
        ),
        (
            replace(CLEAN, dead_letters=[]),
            "poison_not_dead_lettered",
            "poison job b2 (sent twice) must be in the dead-letter queue once as COPY_OF_DEAD_JOB and once "
            "as PERMANENT; found nothing",
        ),
        (
            replace(CLEAN, dead_letters=CLEAN.dead_letters[:1]),
            "poison_not_dead_lettered",
            "found ['PERMANENT']",
        ),
        (
            replace(
                CLEAN,
                dead_letters=[*CLEAN.dead_letters, ObservedDeadLetter(WS, "a3", "ws#ws-a", "PERMANENT")],
            ),
            "unexpected_dead_letter",
            "job a3 of group ws#ws-a is in the dead-letter queue of AgentJobs/Workspaces (reason PERMANENT) "
            "but is not a poison job",
        ),
        (
            replace(
                CLEAN,
                dead_letters=[*CLEAN.dead_letters, ObservedDeadLetter(NS, None, "ws#ws-a", "MALFORMED")],
            ),
            "unexpected_dead_letter",
            "job <no jobId> of group ws#ws-a",
        ),
        (
            replace(CLEAN, parked={WS: ["ws#ws-b"], NS: []}),
            "group_parked",
            "group ws#ws-b is still parked on AgentJobs/Workspaces",
        ),
        (replace(CLEAN, notifications={}), "notification_missing", "notification a3-n was not recorded"),
        (
            replace(CLEAN, notifications={"a3-n": 1}),
            "duplicate_reached_job",
            "notification a3-n ran 1 more time(s) after it was recorded",
        ),
        (
            replace(CLEAN, notifications={"a3-n": 0, "zz-n": 0}),
            "notification_unexpected",
            "notification zz-n was recorded for a workspace of this run but was never sent",
        ),
        (
            replace(CLEAN, queue_depths={WS: (2, 1), NS: (0, 0)}),
            "queue_not_empty",
            "queue AgentJobs/Workspaces still holds 3 messages (2 visible, 1 in flight)",
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


def test_what_other_runs_left_is_ignored() -> None:
    # GIVEN a DLQ message and a parked group of an earlier run (job and group this run never sent)
    observed = replace(
        CLEAN,
        dead_letters=[*CLEAN.dead_letters, ObservedDeadLetter(WS, "s7-w02-j000", "ws#ws-s7-02", "PERMANENT")],
        parked={WS: ["ws#ws-s7-02"], NS: []},
    )
    # WHEN verified THEN neither is this run's violation
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


def test_expectations_of_a_workload_come_from_what_was_sent() -> None:
    # GIVEN a generated workload with poison, a last-attempt job and notifications
    workload = generate_workload(WorkloadSpec(workspaces=3, jobs=36, poison=1, last_attempt=1, seed=1))
    # WHEN its expectations are built
    expectations = expectations_of(workload)
    # THEN poison jobs are expected in the DLQ and nowhere in the applied orders
    assert set(expectations.poison) == {job.job_id for job in workload.poison_jobs}
    applied = {job_id for order in expectations.order.values() for job_id in order}
    assert applied.isdisjoint(expectations.poison)
    assert len(applied) == 35
    # AND the last-attempt job is expected applied, every notification recorded
    assert set(expectations.last_attempt) <= applied
    assert set(expectations.notifications) == {n.job_id for n in workload.notifications}
