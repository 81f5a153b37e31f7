"""Shared test settings: quiet jsii, bounded Hypothesis runs (markers are registered in pyproject.toml)."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

# jsii prints a banner about Node 20 on every start; the tests do not need it.
os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")

# Hypothesis: CI runs a bounded, reproducible number of examples; `make chaos` sets the chaos profile.
settings.register_profile(
    "ci",
    max_examples=int(os.environ.get("CONSTRUCTS_FIFO_EXAMPLES", "30")),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile(
    "chaos",
    max_examples=int(os.environ.get("CONSTRUCTS_FIFO_EXAMPLES", "500")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.load_profile(os.environ.get("CONSTRUCTS_FIFO_HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def ctrl_c_raises() -> Iterator[None]:
    """SIGINT raises ``KeyboardInterrupt`` in this process, as it does at a terminal.

    A shell starts a background job (``make test &``, ``nohup``) with SIGINT ignored, and Python then
    keeps it ignored: a test of what Ctrl-C does would see nothing happen. Restored afterwards.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
