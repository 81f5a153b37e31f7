"""Errors of the local pipe runner: :class:`PipeError` and its kinds, each carrying its fix.

They are :class:`~constructs_fifo.local.errors.CommandError`\\ s, so the CLI prints them as it prints
every local error (one line with the fix, exit 3). A leaf: it imports only that base.
"""

from __future__ import annotations

from constructs_fifo.stacks.errors import CommandError

__all__ = ["PipeError", "PipeNotFoundError", "UnsupportedPipeError"]


class PipeError(CommandError):
    """The local pipe runner cannot run."""


class PipeNotFoundError(PipeError):
    """The stack has no pipe, or none of the name asked for."""


class UnsupportedPipeError(PipeError):
    """A pipe the local runner does not move: a source or target other than an SQS queue, or an enrichment."""
