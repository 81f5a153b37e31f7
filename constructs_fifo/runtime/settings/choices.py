"""The public enums: the choices of the settings that are one of a few values.

Each is a :class:`enum.StrEnum`, so its members are their own environment values (``JobMode.STATE ==
"STATE"``) and the rows of :mod:`constructs_fifo.runtime.settings.spec`, the construct's keywords,
:class:`~constructs_fifo.runtime.settings.config.RuntimeConfig` and both modes use the same members.
Defined here, in the settings kernel, and not in a mode: the construct and a claim-mode container
import them without loading state mode. ``constructs_fifo`` and :mod:`constructs_fifo.runtime.constants`
re-export them.

Standard library only: the runtime ships alone in the function's asset.

Examples
--------
>>> GapPolicy("SKIP_GAP") is GapPolicy.SKIP_GAP, JobMode.STATE == "STATE"
(True, True)
"""

from __future__ import annotations

import enum

__all__ = ["DeadJobPolicy", "GapPolicy", "JobMode", "OutcomeLines"]


class DeadJobPolicy(enum.StrEnum):
    """What happens to a message group after one of its jobs died.

    ``PARK`` (the default): the group stops at its dead job. The dead job and every later job of the
    group, including those that arrive while it is parked, are kept in order in the group table,
    outside the queue; other groups go on. Resuming replays the kept jobs first, in order.

    ``CONTINUE``: the dead job goes to the dead-letter queue and the group goes on with its next job.
    This breaks the group's order (a later redrive lands after newer jobs); choose it only when a
    group's jobs do not depend on each other.
    """

    PARK = "PARK"
    CONTINUE = "CONTINUE"


class JobMode(enum.StrEnum):
    """What a job is.

    ``CLAIM`` (the default): a side effect outside our store (call GitHub, open a PR). Each job is
    claimed in the claim table before it runs; a duplicate of a SUCCEEDED job is skipped. A crash
    between the effect and the SUCCEEDED write runs the job again after its lease: the effect must be
    idempotent, or the job should be a state transition.

    ``STATE``: a transition ``apply(job, state) -> next_state`` of its group's state, kept in the
    group table. Each transition is committed exactly once, in order, together with the record of
    which jobs the state includes, in one conditional write per group per batch.
    """

    CLAIM = "CLAIM"
    STATE = "STATE"


class OutcomeLines(enum.StrEnum):
    """Which job outcomes get a log line of their own; the metrics are the same at both levels.

    ``JOB`` (the default): one line per record, whatever happened to it. At 3 a.m. an operator
    searches the logs for a job id and wants the one line that says what happened to it, with its
    attempt, duration and message id, including for a batch that never finished (a timeout, a crash:
    its lines so far were written). That costs ~870 log bytes per job against ~120 at BATCH ($0.35 per
    million jobs).

    ``BATCH``: the records that went well (SUCCEEDED, DUPLICATE, BUFFERED) are summarized in the
    batch's own line: one embedded-metric document with their counts and their durations as a value
    array, and ``[jobId, group, status, duration_ms]`` per record, so a job id is still found. Every
    other outcome (failures, dead jobs, parking, kept and skipped records) keeps its own line. A
    batch that dies before its end (a timeout) writes no summary: its successes show again as
    duplicates when it is retried. Choose it for volume, once the queue runs quietly.
    """

    JOB = "JOB"
    BATCH = "BATCH"


class GapPolicy(enum.StrEnum):
    """State mode: what a full reorder buffer or a timed-out sequence gap does (the user's choice, per queue).

    ``WAIT`` (the default) never loses a job; ``SKIP_GAP`` does, so it is the user's explicit choice.
    """

    #: Keep waiting: a job that does not fit is retried with backoff; the gap metric and alarm show it.
    WAIT = "WAIT"
    #: Give up the missing ``seq`` values, record the range in the bookkeeping, apply what follows.
    SKIP_GAP = "SKIP_GAP"
