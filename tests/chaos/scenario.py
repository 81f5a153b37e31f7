"""One chaos property's schedule, from the first step to the verdict (every property plays it).

:func:`play_and_check` lets Hypothesis play ``CHAOS_STEPS`` steps of the world, settles it without
faults, checks what must hold while groups are still held or parked, releases every held group (a
steered world) and resumes every parked one, checks the rest, records the example in the session's
summary and fails with every violation and the schedule's trace.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import note
from hypothesis import strategies as st

from .stats import STATS
from .strategies import CHAOS_STEPS
from .world import ChaosWorld

W = TypeVar("W", bound=ChaosWorld)


def play_and_check(
    world: W,
    draw: Callable[[st.SearchStrategy[Any]], Any],
    *,
    name: str,
    while_parked: Callable[[W], list[str]],
    check: Callable[[W], list[str]],
    settle_steps: int = 5000,
) -> None:
    """Play, settle, check ``while_parked``, release and resume, check ``check``; close the world."""
    try:
        try:
            world.play(draw, steps=CHAOS_STEPS)
            world.settle(max_steps=settle_steps)
            violations = while_parked(world)
            release_all = getattr(world, "release_all", None)
            if release_all is not None:  # a steered world: its held groups go on
                release_all()
            world.resume_all()
        except AssertionError:  # a world that never settles: its trace says why
            note("\n".join(world.trace))
            raise
        violations += check(world)
        tally = getattr(world, "tally", None)
        if tally is not None:
            tally()
        STATS.record(name, world)
        note("\n".join(world.trace))
        assert not violations, "\n".join(violations)
    finally:
        world.close()
