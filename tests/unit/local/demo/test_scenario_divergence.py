"""The divergence scenario's pure pieces: the verdict, the comparable state, the plan."""

from __future__ import annotations

from constructs_fifo.local.demo.scenario_divergence import (
    DivergenceResult,
    WorkspaceOutcome,
    outcome_state,
    plan,
)


def _outcome(name: str, sent: tuple[str, ...], applied: tuple[str, ...], tested: bool) -> WorkspaceOutcome:
    return WorkspaceOutcome(
        workspace=name,
        sent=sent,
        sent_types=("apply_patch", "run_tests", "open_pr"),
        applied=applied,
        state={"patches": ["p"], "prs": [{"head": 1, "tested": tested}]},
    )


def test_divergence_is_shown_only_when_both_were_delivered_faithfully_and_differ() -> None:
    # GIVEN two faithful deliveries with different PR outcomes
    ids = ("a", "b", "c")
    shown = DivergenceResult(_outcome("in", ids, ids, True), _outcome("sh", ids, ids, False))
    # THEN divergence is shown and names the differing state
    assert shown.diverged
    assert shown.differing_keys == ["prs"]
    assert "prs" in shown.verdict()
    # GIVEN the same outcome THEN nothing is shown
    same = DivergenceResult(_outcome("in", ids, ids, True), _outcome("sh", ids, ids, True))
    assert not same.diverged
    # GIVEN a reordered delivery THEN it is not counted as the producer's lesson
    unfaithful = DivergenceResult(_outcome("in", ids, ids, True), _outcome("sh", ids, ("a", "c", "b"), False))
    assert not unfaithful.diverged
    assert "did not apply its jobs in the order" in unfaithful.verdict()


def test_outcome_state_ignores_bookkeeping_and_job_ids() -> None:
    # GIVEN two workspace items that differ only in ids, version and the applied list
    first = {"workspaceId": "a", "version": 3, "applied": ["a-1"], "prs": [{"jobId": "a-pr", "tested": True}]}
    second = {
        "workspaceId": "b",
        "version": 4,
        "applied": ["b-1"],
        "prs": [{"jobId": "b-pr", "tested": True}],
    }
    # WHEN their comparable states are taken THEN they are equal: no false divergence
    assert outcome_state(first) == outcome_state(second) == {"prs": [{"tested": True}]}


def test_divergence_plan_sends_the_same_events_in_two_orders() -> None:
    # GIVEN the plan for a seed
    (first, in_order), (second, shuffled) = plan(3)
    # THEN both workspaces get the same event types, one in order and one shuffled, in their own groups
    assert [m.job_type for m in in_order] == ["apply_patch", "run_tests", "open_pr"]
    assert [m.job_type for m in shuffled] == ["apply_patch", "open_pr", "run_tests"]
    assert {m.group for m in in_order} == {f"ws#{first}"}
    assert {m.group for m in shuffled} == {f"ws#{second}"}
    assert [m.payload for m in sorted(in_order, key=lambda m: m.job_type)] == [
        m.payload for m in sorted(shuffled, key=lambda m: m.job_type)
    ]
