"""tests/support/budget.py: the slowest model properties run a share of the ``ci`` profile's examples and
every example of any other profile (``make chaos``)."""

from __future__ import annotations

import pytest
from hypothesis import settings
from support.budget import CI_PROFILE, MIN_CI_EXAMPLES, PROFILE_VARIABLE, slow_property


def test_under_the_ci_profile_a_slow_property_runs_its_share_and_at_least_the_least(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN the ci profile (make test)
    monkeypatch.setenv(PROFILE_VARIABLE, CI_PROFILE)
    profile = settings().max_examples
    # WHEN a slow property takes half, or a share below the least
    # THEN it runs half the profile's examples, and never fewer than the least
    assert slow_property(2).max_examples == max(MIN_CI_EXAMPLES, profile // 2)
    assert slow_property(10 * profile).max_examples == MIN_CI_EXAMPLES


def test_under_another_profile_a_slow_property_runs_every_example(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN the chaos profile named (make chaos)
    monkeypatch.setenv(PROFILE_VARIABLE, "chaos")
    # WHEN a slow property asks for half THEN it runs the loaded profile's own count
    assert slow_property(2).max_examples == settings().max_examples
