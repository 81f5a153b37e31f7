"""The runtime's one clock and its deadlines: epoch time, the invocation's time left, time spent.

Every store and sender takes a ``clock`` (epoch seconds, :func:`time.time` unless a test injects
one) and reads it through :func:`epoch_ms`; durations are measured with :func:`started` and
:func:`elapsed_ms` (a monotonic counter). A batch processor starts a group (or a page of kept records)
only while :func:`remaining_ms` is at least its safety margin.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

__all__ = [
    "DEFAULT_SAFETY_MARGIN_MS",
    "FALLBACK_REMAINING_MS",
    "Clock",
    "elapsed_ms",
    "epoch_ms",
    "remaining_ms",
    "started",
    "system_clock",
]

#: Epoch seconds, as :func:`time.time` gives them.
Clock = Callable[[], float]

#: The clock of every store and sender unless a test injects another.
system_clock: Clock = time.time

#: No group (or page) starts with less invocation time left than this.
DEFAULT_SAFETY_MARGIN_MS = 1000

#: Time left assumed when the context cannot tell it (no Lambda context): Lambda's 15-minute maximum.
FALLBACK_REMAINING_MS = 15 * 60 * 1000


def epoch_ms(clock: Clock = system_clock) -> int:
    """``clock``'s time in epoch milliseconds.

    Examples
    --------
    >>> epoch_ms(lambda: 1.5)
    1500
    """
    return int(clock() * 1000)


def remaining_ms(context: Any) -> int:
    """Milliseconds left in the invocation (:data:`FALLBACK_REMAINING_MS` without a Lambda context).

    Examples
    --------
    >>> remaining_ms(None) == FALLBACK_REMAINING_MS
    True
    """
    getter = getattr(context, "get_remaining_time_in_millis", None)
    if getter is None:
        return FALLBACK_REMAINING_MS
    return int(getter())


def started() -> float:
    """A mark to measure a duration from with :func:`elapsed_ms` (monotonic, not epoch)."""
    return time.perf_counter()


def elapsed_ms(mark: float) -> float:
    """Milliseconds since ``mark`` (from :func:`started`)."""
    return (time.perf_counter() - mark) * 1000
