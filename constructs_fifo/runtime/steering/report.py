"""What a cancel of one job found and did, in either mode (the kernel's: both modes' cancellers say it).

The rules are each mode's: :mod:`constructs_fifo.runtime.claim.cancel` (the claim item) and
:mod:`constructs_fifo.runtime.state.storage.cancels` (the group's state item).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["CancelOutcome", "CancelReport"]


class CancelOutcome(enum.Enum):
    """What a cancel did (or, for a dry run, would do)."""

    #: No attempt had started: the job never runs.
    NOT_STARTED = "NOT_STARTED"
    #: An attempt had started (running, or failed and waiting for its retry): no further attempt
    #: runs, a running one's result is not recorded (a worker's run is told); its effect may have happened.
    STOPPED = "STOPPED"
    #: The job was cancelled before: nothing changed.
    ALREADY_CANCELLED = "ALREADY_CANCELLED"
    #: Refused: the job already succeeded.
    SUCCEEDED = "SUCCEEDED"
    #: Refused: the job is dead (use the dead-letter or parked-group commands).
    DEAD = "DEAD"

    @property
    def cancelled(self) -> bool:
        """Whether the job stands cancelled after this cancel."""
        return self in (CancelOutcome.NOT_STARTED, CancelOutcome.STOPPED, CancelOutcome.ALREADY_CANCELLED)


@dataclass(frozen=True)
class CancelReport:
    """What one cancel of one job found and did.

    Attributes
    ----------
    job_id, outcome:
        The job and what the cancel did (:class:`CancelOutcome`).
    running:
        ``STOPPED``/``ALREADY_CANCELLED``: an attempt held a live lease at the cancel (its run goes on
        until it ends or, on a worker, is told; its result is not recorded).
    attempt:
        Attempts started before the cancel.
    group:
        The job's group, when the claim names it (or the caller did).
    dry_run:
        Nothing was written: ``outcome`` is what the cancel would do now.
    detail:
        One sentence for a person.
    """

    job_id: str
    outcome: CancelOutcome
    running: bool = False
    attempt: int = 0
    group: str | None = None
    dry_run: bool = False
    detail: str = ""
