"""Figure 8: jobs per second through the local emulator and ``drain`` at 1, 4 and 16 groups.

Not measured yet: ``constructs_fifo.local`` (emulator, runner, drain) is being restructured, and a
harness written against today's internals would break with it. The report shows one row per group
count marked "not measured in this run", so the table still holds every figure.

TODO(issue 8, figure 8): once the local package's public entry points settle, make
:func:`measure_local_pipeline` start the emulator, deploy the sample stack, send ``jobs`` jobs over
``groups`` groups with ``JobProducer.send_batch``, time ``drain`` until the queue is empty, and return
one :class:`LocalPipelineResult` per group count (the report builds the rows; nothing else changes).
Each group is serial, so jobs per second should grow with the group count until the drain's worker
pool is the limit: that growth is what the figure is for.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GROUP_COUNTS", "NOT_MEASURED", "LocalPipelineResult", "measure_local_pipeline"]

#: The group counts of figure 8.
GROUP_COUNTS = (1, 4, 16)
NOT_MEASURED = "not measured in this run"


@dataclass(frozen=True)
class LocalPipelineResult:
    """Jobs per second through emulator and drain at one group count."""

    groups: int
    jobs: int
    jobs_per_second: float


def measure_local_pipeline(
    jobs: int = 1000, group_counts: tuple[int, ...] = GROUP_COUNTS
) -> list[LocalPipelineResult] | None:
    """Measure the local pipeline; ``None`` while it is not measured (see the module docstring)."""
    return None
