"""What ``pace show`` and ``pace set`` do (:meth:`~constructs_fifo.client.steering.JobSteering.set_pace`).

``pace show``: the queue's pace override, if any (the construct's ``pace`` applies without one).
``pace set --jobs N --per SECONDS [--burst B]``: the override the consumers read within a minute, over the
construct's numbers (never its key); ``pace set --clear`` drops it. Safe to run again. Pacing must be
set on the construct (``pace=Pace(...)``): a queue without it reads no override (docs/steering.md).
"""

from __future__ import annotations

from typing import Any

from constructs_fifo.ops.errors import OperationError
from constructs_fifo.ops.plan import Plan, PlanStep
from constructs_fifo.ops.steering.jobs import steering_of
from constructs_fifo.ops.target import OpsQueue
from constructs_fifo.runtime.exceptions import ConfigurationError
from constructs_fifo.runtime.settings.spec import SETTINGS
from constructs_fifo.runtime.steering.pace import PaceLimit

__all__ = ["plan_set_pace", "show_pace"]

_NOTE = (
    "the consumers read it within a minute; it applies only if the construct sets pace=Pace(...) "
    "(a queue without it is not paced)"
)


def show_pace(ops: OpsQueue) -> dict[str, Any]:
    """The construct's pace (``construct``: ``None`` when the queue is not paced, ``"unknown"`` when
    the consumer's environment is not known), the queue's override (``None``: the construct's ``pace``
    applies) and when it takes effect."""
    return {"construct": construct_pace(ops), "override": steering_of(ops).pace(), "note": _NOTE}


def construct_pace(ops: OpsQueue) -> dict[str, Any] | str | None:
    """The pace the construct wrote into the consumer's environment, as JSON's keys; ``None``: none
    (the queue is not paced, an override has no effect); ``"unknown"``: no environment was read."""
    environment = ops.deployed.function_environment
    if not environment:
        return "unknown"
    text = environment.get(SETTINGS["pace"].variable())
    if not text:
        return None
    try:
        limit = PaceLimit.from_env(text)
    except ConfigurationError:
        return "unknown"
    return {
        "jobs": limit.jobs,
        "period_seconds": limit.period_seconds,
        "burst": limit.burst,
        "key": limit.key,
    }


def plan_set_pace(
    ops: OpsQueue, *, jobs: int | None, per_seconds: int | None, burst: int | None, clear: bool, by: str
) -> Plan:
    """The plan of ``pace set``.

    Raises
    ------
    OperationError
        Neither ``--clear`` nor both ``--jobs`` and ``--per``, or a number out of its range.
    """
    steering = steering_of(ops)
    if clear and (jobs, per_seconds, burst) != (None, None, None):
        raise OperationError(
            "pace set --clear drops the override: it takes no --jobs, --per or --burst",
            "pass --clear alone, or --jobs and --per (and --burst) alone",
        )
    if clear:
        plan = Plan("pace set", argv=["pace", "set", "--clear"], details={"override": None})
        plan.notes.append(_NOTE)
        plan.steps.append(
            PlanStep("clear the pace override: the construct's pace applies", _cleared(steering, by))
        )
        return plan
    if jobs is None or per_seconds is None:
        raise OperationError("pace set needs --jobs and --per (or --clear)", "pass e.g. --jobs 60 --per 60")
    limit = PaceLimit(jobs=jobs, period_seconds=per_seconds, burst=burst if burst is not None else jobs)
    if problems := limit.problems():
        raise OperationError(f"pace set: {'; '.join(problems)}; nothing was changed", "pass numbers in range")
    argv = ["pace", "set", "--jobs", str(jobs), "--per", str(per_seconds), "--burst", str(limit.burst)]
    numbers = {"jobs": jobs, "periodSeconds": per_seconds, "burst": limit.burst}
    plan = Plan("pace set", argv=argv, details={"override": numbers})
    plan.notes.append(_NOTE)

    def write() -> str:
        steering.set_pace(jobs=jobs, per_seconds=per_seconds, burst=limit.burst, by=by)
        return f"pace: {jobs} jobs per {per_seconds} s, bursts of {limit.burst}"

    plan.steps.append(
        PlanStep(f"set the pace to {jobs} jobs per {per_seconds} s, bursts of {limit.burst}", write)
    )
    return plan


def _cleared(steering: Any, by: str) -> Any:
    def clear() -> str:
        steering.clear_pace(by=by)
        return "pace override cleared"

    return clear
