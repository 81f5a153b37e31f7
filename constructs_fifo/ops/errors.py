"""Errors of the operations commands on a deployed queue: each a
:class:`~constructs_fifo.stacks.errors.CommandError`, carrying what failed and the fix."""

from __future__ import annotations

from constructs_fifo.stacks.errors import CommandError

__all__ = [
    "OperationError",
    "OperationRefusedError",
]


# --- operating a deployed queue (the ``status``, ``groups``, ``dlq``, ``claims``, ``state`` commands) ---


class OperationError(CommandError):
    """An operations command cannot run against this queue (e.g. a claim-mode command in state mode)."""


class OperationRefusedError(OperationError):
    """The queue's state does not allow the change asked for; nothing was changed.

    E.g. releasing a claim whose lease is still live, redriving a job whose claim SUCCEEDED, resuming
    a group that is not parked. The CLI exits 1 for it: the command ran and said no.
    """
