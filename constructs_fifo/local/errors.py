"""Errors of the local stand-ins for AWS (the emulator, the event source mapping): each a
:class:`~constructs_fifo.stacks.errors.CommandError`, carrying what failed and the fix."""

from __future__ import annotations

from constructs_fifo.stacks.errors import CommandError

__all__ = [
    "CodeNotFoundError",
    "EmulatorError",
    "MappingNotFoundError",
    "RunnerError",
    "UnsupportedMotoVersionError",
    "WorkerError",
]


# --- the emulator ---------------------------------------------------------------------------------------


class EmulatorError(CommandError):
    """The emulator could not start, or was used before it started."""


class UnsupportedMotoVersionError(EmulatorError):
    """The installed moto is not the version the fidelity patches target."""


# --- the local event source mapping -----------------------------------------------------------------


class RunnerError(CommandError):
    """The local event source mapping cannot run."""


class MappingNotFoundError(RunnerError):
    """The function has no usable SQS event source mapping."""


class CodeNotFoundError(RunnerError):
    """The deployed function's code could not be fetched."""


class WorkerError(RunnerError):
    """A worker process died or broke the protocol."""
