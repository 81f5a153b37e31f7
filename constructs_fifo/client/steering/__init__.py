"""Steering jobs already sent (docs/steering.md): :class:`JobSteering` and what its controls report
(:mod:`.controls`). A room of the client: the controls share one class, built on the runtime's own
cancellers and park store so the two cannot drift."""

from __future__ import annotations

from constructs_fifo.client.steering.controls import (
    CancelOutcome,
    CancelReport,
    GroupCancelReport,
    HoldOutcome,
    HoldReport,
    JobSteering,
)

__all__ = ["CancelOutcome", "CancelReport", "GroupCancelReport", "HoldOutcome", "HoldReport", "JobSteering"]
