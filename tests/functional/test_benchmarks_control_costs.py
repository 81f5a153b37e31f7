"""Figure 9's controls (``benchmarks/control_costs.py``): each case plays its control through the runtime
and the steering client, and its calls and units per job are what the controls' rules say
(docs/steering.md's costs); the responder's calls are moto's (checked on moto where a test says so: each
play on moto is a second run). No timing is asserted."""

from __future__ import annotations

import pytest

from benchmarks.control_costs import CONTROL_CASES, UNCONTROLLED, ControlCase, ControlCost, measure_control

pytestmark = pytest.mark.usefixtures("bench_environment")


def _case(control: str, consumer: str, case: str = "") -> ControlCase:
    return next(
        c for c in CONTROL_CASES if (c.control, c.consumer) == (control, consumer) and c.case.startswith(case)
    )


def _per_job(cost: ControlCost) -> tuple[float, float, float]:
    return (cost.per_job(cost.dynamodb_calls), cost.per_job(cost.read_units), cost.per_job(cost.write_units))


def test_every_case_names_its_consumer_and_each_consumer_has_its_uncontrolled_baseline() -> None:
    # GIVEN the cases THEN each consumer of a control is measured uncontrolled too, and labels are unique
    consumers = {case.consumer for case in CONTROL_CASES}
    assert {case.consumer for case in CONTROL_CASES if case.control == UNCONTROLLED} == consumers
    labels = [(case.label, case.consumer) for case in CONTROL_CASES]
    assert len(labels) == len(set(labels))


def test_a_cancel_before_the_job_starts_costs_what_a_run_costs_and_the_job_never_runs() -> None:
    # GIVEN / WHEN claim mode's uncontrolled jobs and jobs cancelled before they start (responder, moto)
    plain = measure_control(_case(UNCONTROLLED, "claim"), on_moto=False)
    cancelled = measure_control(_case("cancel", "claim", "before"))
    # THEN an uncontrolled job is figure 1's default path: its claim and its completion
    assert _per_job(plain) == (2.0, 0.0, 2.0)
    assert plain.executed == plain.jobs == 10
    # AND a cancelled job pays the cancel's PutItem and the runtime's refused claim, and never runs
    assert _per_job(cancelled) == (2.0, 0.0, 2.0)
    assert cancelled.calls_by_operation == {"PutItem": 20, "sqs.SendMessageBatch": 1}
    assert (cancelled.executed, cancelled.failures) == (0, 0)
    # AND moto saw the same calls
    assert cancelled.moto_calls_by_operation == {"PutItem": 20}


def test_a_cancel_of_a_running_job_finds_its_claim_and_the_refused_completion_reads_it_once() -> None:
    # GIVEN / WHEN each job cancels itself while it runs (as an MCP client's notifications/cancelled)
    cost = measure_control(_case("cancel", "claim", "while"))
    # THEN per job: the claim, the cancel's refused PutItem and its UpdateItem, the refused completion
    # (UpdateItem) and the runtime's read of the claim it lost
    assert cost.calls_by_operation == {
        "PutItem": 20,
        "UpdateItem": 20,
        "GetItem": 10,
        "sqs.SendMessageBatch": 1,
    }
    assert _per_job(cost) == (5.0, 1.0, 4.0)
    assert cost.executed == 10 and cost.failures == 0
    assert cost.moto_calls_by_operation == {"PutItem": 20, "UpdateItem": 20, "GetItem": 10}


def test_supersede_reads_the_marker_once_per_job_and_a_superseded_job_is_cancelled_unrun() -> None:
    # GIVEN / WHEN jobs sent with a key of their own (each runs), and older jobs of keys sent again
    runs = measure_control(_case("supersede", "claim", "a job sent"), on_moto=False)
    skipped = measure_control(_case("supersede", "claim", "a job superseded"))
    # THEN a job that runs pays its marker (UpdateItem), the runtime's marker read, its claim and completion
    assert runs.calls_by_operation == {
        "PutItem": 10,
        "GetItem": 10,
        "UpdateItem": 20,
        "sqs.SendMessageBatch": 10,
    }
    assert _per_job(runs) == (4.0, 1.0, 3.0)
    # AND a superseded one its marker, the read and the runtime's cancel of it; only the newer jobs ran
    assert skipped.calls_by_operation == {
        "UpdateItem": 10,
        "GetItem": 10,
        "PutItem": 10,
        "sqs.SendMessageBatch": 10,
    }
    assert _per_job(skipped) == (3.0, 1.0, 2.0)
    assert skipped.executed == 10
    assert skipped.moto_calls_by_operation == {"UpdateItem": 10, "GetItem": 10, "PutItem": 10}


def test_a_hold_and_release_keeps_and_replays_the_group_its_fixed_part_shared_by_its_kept_jobs() -> None:
    # GIVEN / WHEN a group held, 10 (then 1) jobs sent and kept, released and replayed (claim mode, PARK)
    ten = measure_control(_case("hold + release", "claim-park", "a group of 10"))
    one = measure_control(_case("hold + release", "claim-park", "a group of 1 "), on_moto=False)
    # THEN every kept job ran once, after the release, and the release sent the group's wake-up message
    assert (ten.executed, one.executed, ten.failures, one.failures) == (10, 1, 0, 0)
    assert ten.calls_by_operation["sqs.SendMessage"] == 1
    # AND the hold, the keeping, the release and the replay are the same calls whatever the group keeps:
    # only the claims and completions grow with it
    fixed = {name: n for name, n in ten.calls_by_operation.items() if name not in ("PutItem", "UpdateItem")}
    assert fixed == {
        name: n for name, n in one.calls_by_operation.items() if name not in ("PutItem", "UpdateItem")
    }
    assert (ten.calls_by_operation["PutItem"], one.calls_by_operation["PutItem"]) == (10, 1)
    assert ten.per_job(ten.dynamodb_calls) < one.per_job(one.dynamodb_calls)
    assert ten.moto_calls_by_operation == {n: c for n, c in ten.calls_by_operation.items() if "sqs." not in n}


def test_run_first_and_a_state_mode_cancel_run_as_their_rules_say() -> None:
    # GIVEN / WHEN a job put ahead of a held group, and state mode's jobs cancelled before they start
    first = measure_control(_case("run first", "claim-park"), on_moto=False)
    state = measure_control(_case("cancel", "state"))
    # THEN the job put first ran once, at the release
    assert (first.jobs, first.executed, first.failures) == (1, 1, 0)
    # AND a state-mode cancel is a GetItem and an UpdateItem of the state item; the batch's read and its
    # one commit stay the group's, and no cancelled job is applied
    assert state.calls_by_operation == {
        "GetItem": 10,
        "UpdateItem": 10,
        "BatchGetItem": 1,
        "PutItem": 1,
        "sqs.SendMessageBatch": 1,
    }
    assert state.executed == 0
    assert state.moto_calls_by_operation == {"GetItem": 10, "UpdateItem": 10, "BatchGetItem": 1, "PutItem": 1}


def test_a_paced_job_takes_one_token_write_before_its_claim_and_a_paced_delivery_waits_unrun() -> None:
    # GIVEN / WHEN a paced claim-mode queue whose 10 jobs of one group are under the limit, and one whose
    # group's bucket another process emptied (responder, and moto)
    runs = measure_control(_case("pace", "claim", "a paced job"))
    waits = measure_control(_case("pace", "claim", "a delivery that waits"))
    # THEN each job that runs pays its bucket's UpdateItem before its claim and completion (3 calls, 3
    # write units), and the process reads the override once (one eventually consistent GetItem)
    assert runs.calls_by_operation == {
        "GetItem": 1,
        "UpdateItem": 20,
        "PutItem": 10,
        "sqs.SendMessageBatch": 1,
    }
    assert _per_job(runs) == (3.1, 0.05, 3.0)
    assert (runs.executed, runs.failures) == (10, 0)
    # AND a delivery without a token is the first record's refused UpdateItem (and the override's read):
    # no claim written, nothing run, the whole batch returned in its order
    assert waits.calls_by_operation == {"GetItem": 1, "UpdateItem": 1, "sqs.ChangeMessageVisibilityBatch": 1}
    assert (waits.executed, waits.failures) == (0, 10)
    # AND moto saw the same calls
    assert runs.moto_calls_by_operation == {"GetItem": 1, "UpdateItem": 20, "PutItem": 10}
    assert waits.moto_calls_by_operation == {"GetItem": 1, "UpdateItem": 1}


def test_a_paced_state_mode_batch_takes_its_tokens_in_one_write_per_group_run_and_key() -> None:
    # GIVEN / WHEN a paced state-mode queue: a batch of 10 jobs of one group and key under the limit, and
    # one whose bucket another process emptied
    runs = measure_control(_case("pace", "state", "a paced job"))
    waits = measure_control(_case("pace", "state", "a delivery that waits"), on_moto=False)
    # THEN the batch's 10 tokens are one UpdateItem beside the batch's read and its one commit
    assert runs.calls_by_operation == {
        "BatchGetItem": 1,
        "GetItem": 1,
        "UpdateItem": 1,
        "PutItem": 1,
        "sqs.SendMessageBatch": 1,
    }
    assert runs.executed == 10 and runs.failures == 0
    assert runs.moto_calls_by_operation == {"BatchGetItem": 1, "GetItem": 1, "UpdateItem": 1, "PutItem": 1}
    # AND a batch without a token commits nothing: the read, the refused UpdateItem, every record waits
    assert waits.calls_by_operation == {
        "BatchGetItem": 1,
        "GetItem": 1,
        "UpdateItem": 1,
        "sqs.ChangeMessageVisibilityBatch": 1,
    }
    assert (waits.executed, waits.failures) == (0, 10)
