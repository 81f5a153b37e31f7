"""Errors of the demo: each a :class:`~constructs_fifo.stacks.errors.CommandError`, carrying what
failed and the fix."""

from __future__ import annotations

from constructs_fifo.stacks.errors import CommandError

__all__ = [
    "DemoError",
    "WorkloadError",
]


# --- the demo -----------------------------------------------------------------------------------------


class DemoError(CommandError):
    """A demo step could not run."""


class WorkloadError(CommandError, ValueError):
    """A workload specification breaks a rule; the message names each value, rule and fix.

    A usage error rather than one of the environment: the CLI exits 2 for it.
    """
