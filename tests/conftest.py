"""Shared test settings: quiet jsii, bounded Hypothesis runs (markers are registered in pyproject.toml)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# jsii prints a banner about Node 20 on every start; the tests do not need it.
os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")

# Property tests run a bounded number of examples in CI and by default; HYPOTHESIS_PROFILE=thorough
# explores more on a developer's machine. No deadline: moto and a loaded CI machine make timings noisy.
settings.register_profile("ci", max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "thorough", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
