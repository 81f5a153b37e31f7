"""The worlds Hypothesis draws (settings per run) and how many runs a session plays.

CI (the ``ci`` profile) plays a bounded, reproducible number of schedules per property so that the
whole chaos folder stays within about a minute; ``make chaos`` (the ``chaos`` profile) plays as many
as ``CONSTRUCTS_FIFO_EXAMPLES`` says, with fresh randomness every run.
"""

from __future__ import annotations

import os

from hypothesis import settings
from hypothesis import strategies as st

from constructs_fifo.runtime.constants import DeadJobPolicy

from .world import WorldConfig

#: Steps of one schedule's chaotic part (then the world settles without faults).
CHAOS_STEPS = 120


def budget(ci_examples: int) -> settings:
    """``ci_examples`` schedules under the CI profile (fewer if the profile says so); the profile's
    own number otherwise."""
    if os.environ.get("CONSTRUCTS_FIFO_HYPOTHESIS_PROFILE", "ci") == "ci":
        return settings(max_examples=min(ci_examples, settings().max_examples))
    return settings()


@st.composite
def configs(draw: st.DrawFn) -> WorldConfig:
    """A world: policy, attempts, batch size, timeouts (visibility as low as the timeout), workers, faults."""
    timeout = draw(st.sampled_from((20, 10)))
    return WorldConfig(
        policy=draw(st.sampled_from((DeadJobPolicy.CONTINUE, DeadJobPolicy.PARK))),
        max_attempts=draw(st.sampled_from((3, 2))),
        batch_size=draw(st.sampled_from((10, 3, 1))),
        timeout_s=timeout,
        visibility_s=draw(st.sampled_from((6 * timeout, timeout))),
        max_workers=draw(st.sampled_from((2, 3, 1))),
        fault_rate=draw(st.sampled_from((0, 10, 25))),
        max_faults=draw(st.sampled_from((4, 8))),
    )
