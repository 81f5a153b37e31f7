"""The divergence scenario's pure pieces: the verdict, the comparable state, the plan of three runs."""

from __future__ import annotations

from constructs_fifo.demo.scenarios.divergence import (
    RUNS,
    DivergenceResult,
    WorkspaceOutcome,
    outcome_state,
    plan,
)

IN_ORDER = ("apply_patch", "run_tests", "open_pr")
SHUFFLED = ("apply_patch", "open_pr", "run_tests")


def _outcome(
    name: str, sent: tuple[str, ...], applied: tuple[str, ...], *, tested: bool, seq: bool = False
) -> WorkspaceOutcome:
    return WorkspaceOutcome(
        workspace=name,
        title=name,
        sent=tuple(f"{name}-{t}" for t in sent),
        sent_types=sent,
        applied=tuple(f"{name}-{t}" for t in applied),
        applied_types=applied,
        with_seq=seq,
        state={"patches": ["p"], "prs": [{"head": 1, "tested": tested}]},
    )


def test_both_lessons_are_shown_when_no_seq_diverges_and_seq_converges() -> None:
    # GIVEN the in-order run, the shuffled one applied as sent (PR untested), and the seq one applied in order
    result = DivergenceResult(
        _outcome("in", IN_ORDER, IN_ORDER, tested=True),
        _outcome("sh", SHUFFLED, SHUFFLED, tested=False),
        _outcome("seq", SHUFFLED, IN_ORDER, tested=True, seq=True),
    )
    # THEN divergence and convergence are shown, naming the differing state
    assert (result.diverged, result.converged, result.shown) == (True, True, True)
    assert result.differing_keys == ["prs"]
    assert "different in prs" in result.verdict()
    assert "converged to the in-order result" in result.verdict()


def test_nothing_is_shown_when_the_runs_do_not_teach_the_lesson() -> None:
    # GIVEN the seq run ending like the shuffled one THEN it did not converge
    stuck = DivergenceResult(
        _outcome("in", IN_ORDER, IN_ORDER, tested=True),
        _outcome("sh", SHUFFLED, SHUFFLED, tested=False),
        _outcome("seq", SHUFFLED, SHUFFLED, tested=False, seq=True),
    )
    assert stuck.diverged and not stuck.converged and not stuck.shown
    assert "Not converged: with seq the workspace differs from the in-order one in prs" in stuck.verdict()
    # GIVEN a shuffled run that was not applied as sent THEN it is not counted as the producer's lesson
    unfaithful = DivergenceResult(
        _outcome("in", IN_ORDER, IN_ORDER, tested=True),
        _outcome("sh", SHUFFLED, IN_ORDER, tested=False),
        _outcome("seq", SHUFFLED, IN_ORDER, tested=True, seq=True),
    )
    assert not unfaithful.diverged
    assert "was not applied in the order it was sent" in unfaithful.verdict()


def test_outcome_state_ignores_job_ids_and_the_activity() -> None:
    # GIVEN two states that differ only in job ids and their activity's ids
    first = {"activity": [{"jobId": "a-1", "type": "open_pr"}], "prs": [{"jobId": "a-pr", "tested": True}]}
    second = {"activity": [{"jobId": "b-1", "type": "open_pr"}], "prs": [{"jobId": "b-pr", "tested": True}]}
    # WHEN their comparable states are taken THEN they are equal: no false divergence
    assert outcome_state(first) == outcome_state(second) == {"prs": [{"tested": True}]}
    assert outcome_state(None) == {}


def test_the_plan_sends_the_same_events_three_ways_in_their_own_groups() -> None:
    # GIVEN the plan for a seed
    (in_order, w1, m1), (shuffled, w2, m2), (with_seq, w3, m3) = plan(3)
    assert (in_order, shuffled, with_seq) == RUNS
    # THEN the types come in order, shuffled, shuffled; only the third run carries seq (the event's position)
    assert [m.job_type for m in m1] == list(IN_ORDER)
    assert [m.job_type for m in m2] == [m.job_type for m in m3] == list(SHUFFLED)
    assert [m.seq for m in m1] == [m.seq for m in m2] == [None, None, None]
    assert [m.seq for m in m3] == [0, 2, 1]
    # AND each run has a workspace of its own, and the same payloads
    assert [{m.group for m in ms} for ms in (m1, m2, m3)] == [{f"ws#{w1}"}, {f"ws#{w2}"}, {f"ws#{w3}"}]
    payloads = [sorted((m.job_type, str(m.payload)) for m in ms) for ms in (m1, m2, m3)]
    assert payloads[0] == payloads[1] == payloads[2]
