"""Hypothesis examples of the slowest model properties: a share in ``make test``, all in ``make chaos``.

tests/conftest.py loads the profile named by :data:`PROFILE_VARIABLE`: :data:`CI_PROFILE` by default
(``make test``, CI: a bounded, reproducible number of examples), ``chaos`` under ``make chaos``. An
example of the runtime's and the worker's model properties starts moto afresh and plays a whole schedule
(1-3 s each on a loaded 2-core machine), so under :data:`CI_PROFILE` those run :func:`slow_property`'s
share of the profile's examples; under any other profile they run the profile's own count.
"""

from __future__ import annotations

import os
from typing import Final

from hypothesis import settings

__all__ = ["CI_PROFILE", "MIN_CI_EXAMPLES", "PROFILE_VARIABLE", "loaded_profile", "slow_property"]

#: The environment variable naming the Hypothesis profile the session loads.
PROFILE_VARIABLE: Final = "CONSTRUCTS_FIFO_HYPOTHESIS_PROFILE"
#: The profile of ``make test`` and CI (the default).
CI_PROFILE: Final = "ci"
#: The fewest examples a slow property runs under :data:`CI_PROFILE`.
MIN_CI_EXAMPLES: Final = 10


def loaded_profile() -> str:
    """The name of the Hypothesis profile this session loads."""
    return os.environ.get(PROFILE_VARIABLE, CI_PROFILE)


def slow_property(share: int) -> settings:
    """Settings of a slow model property: under :data:`CI_PROFILE`, 1/``share`` of the profile's examples
    (at least :data:`MIN_CI_EXAMPLES`); under any other profile, the profile's own."""
    examples = settings().max_examples
    if loaded_profile() == CI_PROFILE:
        examples = max(MIN_CI_EXAMPLES, examples // share)
    return settings(max_examples=examples)
