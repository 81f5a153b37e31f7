"""One synthesized app for every template test (jsii starts Node once per process; synth is slow)."""

from __future__ import annotations

import pytest

from .stacks import Synthesized, build_synthesized


@pytest.fixture(scope="session")
def synthesized() -> Synthesized:
    """The sample, variant and risky stacks, synthesized once per test session."""
    return build_synthesized()
