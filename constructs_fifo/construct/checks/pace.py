"""The ``pace`` prop: a :class:`~constructs_fifo.construct.settings.pace.Pace` whose numbers are whole and in
range and whose key the runtime can read. Every problem is collected, each naming the prop, its value, the
rule and the fix. The limit is written into the consumer's environment as numbers, so its values must be
known at synth: a token is refused with that reason.
"""

from __future__ import annotations

from aws_cdk import Duration

from constructs_fifo.construct.settings import tokens
from constructs_fifo.construct.settings.pace import Pace
from constructs_fifo.runtime.steering.pace import MAX_PACE_JOBS, MAX_PACE_PERIOD_SECONDS, key_problems

__all__ = ["check_pace"]

_EXAMPLE = "pace=Pace(jobs=60, per=Duration.minutes(1), burst=10, key='body:payload.tenant')"


def _count_problem(name: str, value: object) -> str | None:
    if tokens.is_unresolved(value):
        return (
            f"pace.{name}={value!r} is an unresolved token: the limit is written into the consumer's "
            f"environment as a number at synth; pass a number, e.g. {_EXAMPLE}."
        )
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PACE_JOBS:
        return (
            f"pace.{name}={value!r} is out of range: runs per period and the burst are whole numbers from 1 "
            f"to {MAX_PACE_JOBS}; pass e.g. {_EXAMPLE}."
        )
    return None


def check_pace(pace: object) -> list[str]:
    """Every problem of the ``pace`` prop (empty: none given, or valid)."""
    if pace is None:
        return []
    if not isinstance(pace, Pace):
        return [
            f"pace={pace!r} is a {type(pace).__name__}, not a Pace: pass {_EXAMPLE} (from constructs_fifo), "
            "or omit it for a queue that is not paced."
        ]
    problems = [
        problem
        for name, value in (("jobs", pace.jobs), ("burst", pace.burst))
        if (value is not None or name == "jobs") and (problem := _count_problem(name, value)) is not None
    ]
    if not isinstance(pace.per, Duration):
        problems.append(f"pace.per={pace.per!r} is not a CDK Duration: pass e.g. {_EXAMPLE}.")
    else:
        seconds = tokens.seconds(pace.per)
        if seconds is None:
            problems.append(
                "pace.per is an unresolved token: the period is written into the consumer's environment in "
                f"seconds at synth; pass a Duration of known length, e.g. {_EXAMPLE}."
            )
        elif not (float(seconds).is_integer() and 1 <= seconds <= MAX_PACE_PERIOD_SECONDS):
            problems.append(
                f"pace.per={pace.per.to_human_string()} is out of range: the period is whole seconds from 1 "
                f"second to 1 day; pass e.g. {_EXAMPLE}."
            )
    found = key_problems(pace.key) if isinstance(pace.key, str) else [f"key={pace.key!r}: must be a string"]
    problems += [f"pace.{problem}; pass e.g. {_EXAMPLE}." for problem in found]
    return problems
