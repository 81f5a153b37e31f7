"""A prop against the limits of its row of the settings spec, and the values as an error message writes them.

Each row (:data:`constructs_fifo.runtime.settings.SETTINGS`) states a prop's limits, with the reason and
an example its error gives; these checks read them, so a limit is written once. An unresolved token (a
value only known at deploy time) has no problem here.
"""

from __future__ import annotations

from typing import TypeGuard

from aws_cdk import Duration

from constructs_fifo.construct.settings import tokens
from constructs_fifo.runtime.settings.spec import SECONDS, Setting, human_seconds

__all__ = ["check_duration", "check_number", "duration_expression", "fmt_seconds", "resolved_number"]


def resolved_number(value: int | float | None) -> TypeGuard[int | float]:
    """Whether ``value`` is given and known at synth time (not an unresolved token)."""
    return value is not None and not tokens.is_unresolved(value)


def fmt_seconds(seconds: float) -> str:
    """``seconds`` as an error message writes them: ``90s``."""
    return f"{seconds:g}s"


def duration_expression(seconds: int) -> str:
    """The ``Duration`` of ``seconds`` as a user writes it: ``Duration.hours(12)``."""
    for size, unit in ((86_400, "days"), (3_600, "hours"), (60, "minutes")):
        if seconds >= size and seconds % size == 0:
            return f"Duration.{unit}({seconds // size})"
    return f"Duration.seconds({seconds})"


def check_number(row: Setting, value: int | float | None) -> list[str]:
    """A number prop against its row's limits."""
    name, low, high = row.prop, row.low, row.high
    if not resolved_number(value) or ((low is None or value >= low) and (high is None or value <= high)):
        return []
    if low is not None and high is not None:
        return [
            f"{name}={value:g} is out of range: {row.why} it must be between {low} and {high} inclusive; "
            f"pass {name} from {low} to {high}."
        ]
    if low is not None:
        return [
            f"{name}={value:g} is less than {low}: {row.why}; pass {name} >= {low} (default {row.default})."
        ]
    return [
        f"{name}={value:g} is more than {high}, {row.why}; pass {name} up to {high}, or omit it for the "
        "default."
    ]


def check_duration(row: Setting, value: Duration) -> list[str]:
    """A duration prop against its row's limits (in whole seconds)."""
    assert row.unit == SECONDS, row
    seconds = tokens.seconds(value)
    if seconds is None:
        return []
    if row.low is not None and seconds < row.low:
        least = human_seconds(row.low)
        return [
            f"{row.prop}={fmt_seconds(seconds)} is shorter than {least}: it must be positive and is used in "
            f"whole seconds; pass a Duration of at least {least}, e.g. {row.example}."
        ]
    if row.high is not None and seconds > row.high:
        return [
            f"{row.prop}={fmt_seconds(seconds)} is longer than {human_seconds(row.high)}, {row.why}; pass "
            f"{row.prop} <= {duration_expression(row.high)}."
        ]
    return []
