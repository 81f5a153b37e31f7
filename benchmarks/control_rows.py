"""Figure 9's rows of what the controls cost (:mod:`benchmarks.control_costs`): per job a control
touches, its DynamoDB calls, read and write units and SQS requests, beside the same consumer's
uncontrolled jobs; the uncontrolled rows carry figure 1's targets (the default path is unchanged)."""

from __future__ import annotations

from collections.abc import Callable

from benchmarks.control_costs import CONTROL_CASES, UNCONTROLLED, ControlCase, ControlCost, measure_control
from benchmarks.results import Row, Target

__all__ = ["CONTROL_MEASURES", "UNCONTROLLED_TARGETS", "control_rows"]

#: The measures of a control's rows: (measure, unit, value per job).
CONTROL_MEASURES: tuple[tuple[str, str, Callable[[ControlCost], float]], ...] = (
    ("control: DynamoDB calls per job", "calls/job", lambda c: c.per_job(c.dynamodb_calls)),
    ("control: DynamoDB read units per job", "RCU/job", lambda c: c.per_job(c.read_units)),
    ("control: DynamoDB write units per job", "WCU/job", lambda c: c.per_job(c.write_units)),
    (
        "control: SQS requests per job (producer, control and runtime; the mapping's not counted)",
        "requests/job",
        lambda c: c.per_job(c.sqs_requests),
    ),
)
#: Figure 1's budget of the default path, held by the uncontrolled cases (steering code present, unused).
UNCONTROLLED_TARGETS = {"claim": Target("=", 2), "state": Target("<=", 0.2)}


def _problems(case: ControlCase, cost: ControlCost) -> list[str]:
    found = []
    if cost.failures != case.returned or cost.executed != case.runs:
        found.append(
            f"figure 9 control {case.label} ({case.consumer}): {cost.failures} returned to the queue "
            f"(expected {case.returned}), job ran {cost.executed} times (expected {case.runs})"
        )
    on_responder = {name: n for name, n in cost.calls_by_operation.items() if not name.startswith("sqs.")}
    if cost.moto_calls_by_operation is not None and cost.moto_calls_by_operation != on_responder:
        found.append(
            f"figure 9 control {case.label} ({case.consumer}): the responder saw {on_responder}, moto "
            f"{cost.moto_calls_by_operation}: the in-memory model disagrees with moto"
        )
    return found


def control_rows(problems: list[str], cases: tuple[ControlCase, ...] = CONTROL_CASES) -> list[Row]:
    """Measure every case (on the responder and on moto) and return its rows; a mis-run case is added
    to ``problems``."""
    costs = [(case, measure_control(case)) for case in cases]
    uncontrolled = {case.consumer: cost for case, cost in costs if case.control == UNCONTROLLED}
    rows = []
    calls = CONTROL_MEASURES[0][2]
    for measure, unit, pick in CONTROL_MEASURES:
        for case, cost in costs:
            problems += _problems(case, cost) if measure == CONTROL_MEASURES[0][0] else []
            base = uncontrolled.get(case.consumer)
            is_base = case.control == UNCONTROLLED
            by_operation = ", ".join(f"{name} {n}" for name, n in sorted(cost.calls_by_operation.items()))
            rows.append(
                Row(
                    9,
                    measure,
                    case.label,
                    case.consumer,
                    pick(cost),
                    unit,
                    baseline="" if is_base or base is None else "uncontrolled",
                    baseline_value=None if is_base or base is None else pick(base),
                    target=UNCONTROLLED_TARGETS.get(case.consumer) if is_base and pick is calls else None,
                    note=f"per {case.per}, {cost.jobs} measured; {by_operation}",
                )
            )
    return rows
