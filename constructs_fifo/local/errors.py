"""Errors of :mod:`constructs_fifo.local`: one base that carries what failed and the fix.

Every error the emulator, the deploy step, the local event source mapping and the demo raise is a
:class:`LocalError`. The CLI catches that one class and prints :meth:`LocalError.one_line` (plus the
``details``, e.g. the end of the CDK CLI's output) and exits 3; library callers read ``message`` and
``fix`` separately. This module imports nothing from the project (a leaf), so every module can raise
these errors without an import cycle.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "AmbiguousQueueError",
    "AwsAccessDeniedError",
    "AwsConnectionError",
    "AwsCredentialsError",
    "AwsEndpointError",
    "AwsError",
    "AwsResponseError",
    "AwsThrottledError",
    "CdkCommandError",
    "CdkNotFoundError",
    "CodeNotFoundError",
    "ContainerQueueError",
    "DemoError",
    "DeployError",
    "EmulatorError",
    "LocalError",
    "MappingNotFoundError",
    "MissingExtraError",
    "OperationError",
    "OperationRefusedError",
    "PreflightError",
    "QueueNotFoundError",
    "RunnerError",
    "StackChoiceError",
    "StackError",
    "StackNotFoundError",
    "StackOutputsError",
    "UnsupportedMotoVersionError",
    "WorkerError",
    "WorkloadError",
]


class LocalError(Exception):
    """Base class of every error of :mod:`constructs_fifo.local`.

    Parameters
    ----------
    message
        What failed, naming the resource or value and the rule it broke.
    fix
        What the user does about it.
    details
        Further lines shown under the message (e.g. the end of a command's output).
    """

    def __init__(self, message: str, fix: str, *, details: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix
        self.details = tuple(details)

    def one_line(self) -> str:
        """``<message>. Fix: <fix>.`` on one line."""
        message = " ".join(self.message.split()).rstrip(".")
        fix = " ".join(self.fix.split()).rstrip(".")
        return f"{message}. Fix: {fix}."

    def __str__(self) -> str:
        return "\n".join([self.one_line(), *self.details])


# --- the environment around the commands ----------------------------------------------------------


class MissingExtraError(LocalError):
    """The emulator's packages (the ``local`` extra) are not installed."""


class EmulatorError(LocalError):
    """The emulator could not start, or was used before it started."""


class UnsupportedMotoVersionError(EmulatorError):
    """The installed moto is not the version the fidelity patches target."""


class AwsError(LocalError):
    """An AWS call failed for a reason of the environment, not of the command."""


class AwsCredentialsError(AwsError):
    """No usable credentials: none found, expired, or not accepted."""


class AwsConnectionError(AwsError):
    """The endpoint could not be reached."""


class AwsEndpointError(AwsError):
    """The endpoint URL is not one (no ``http://`` or ``https://``, no host)."""


class AwsResponseError(AwsError):
    """The endpoint answered with something that is not an AWS response (e.g. an HTML error page)."""


class AwsThrottledError(AwsError):
    """AWS throttled a call past botocore's retries."""


class AwsAccessDeniedError(AwsError):
    """The credentials are not allowed to make a call."""


# --- deploying and reading a stack ------------------------------------------------------------------


class DeployError(LocalError):
    """Deploying with the CDK CLI failed."""


class CdkNotFoundError(DeployError):
    """No CDK CLI was found."""


class CdkCommandError(DeployError):
    """A ``cdk`` command exited with an error; ``details`` holds the end of its output."""

    def __init__(self, command: Sequence[str], returncode: int, output: str) -> None:
        self.command = list(command)
        self.returncode = returncode
        self.output = output
        super().__init__(
            f"`{' '.join(command)}` exited with status {returncode}; it must exit with 0",
            "fix the cause shown in its output (below)",
            details=output.strip().splitlines()[-25:],
        )


class PreflightError(DeployError):
    """The preflight found what the account would refuse; nothing was deployed."""


class StackError(LocalError):
    """The deployed stack is not what the command needs."""


class StackChoiceError(StackError):
    """No ``--stack`` and the app does not name one stack holding an OrderedAgentQueue (none, several,
    or no app directory at all).

    A usage error rather than one of the environment: the CLI exits 2 for it, as for a missing argument.
    """


class StackNotFoundError(StackError):
    """The stack does not exist (or is not in a complete state) on the endpoint."""


class StackOutputsError(StackError):
    """The stack exists but DescribeStacks returns no outputs for it."""


class QueueNotFoundError(StackError):
    """The stack holds no OrderedAgentQueue, or none that ``--queue`` names."""


class ContainerQueueError(StackError):
    """A command that works on a queue's function was given a queue that container workers consume."""


class AmbiguousQueueError(StackError):
    """The stack holds several OrderedAgentQueues and none was picked; the message lists them."""


# --- the local event source mapping -----------------------------------------------------------------


class RunnerError(LocalError):
    """The local event source mapping cannot run."""


class MappingNotFoundError(RunnerError):
    """The function has no usable SQS event source mapping."""


class CodeNotFoundError(RunnerError):
    """The deployed function's code could not be fetched."""


class WorkerError(RunnerError):
    """A worker process died or broke the protocol."""


# --- operating a deployed queue (the ``status``, ``groups``, ``dlq``, ``claims``, ``state`` commands) ---


class OperationError(LocalError):
    """An operations command cannot run against this queue (e.g. a claim-mode command in state mode)."""


class OperationRefusedError(OperationError):
    """The queue's state does not allow the change asked for; nothing was changed.

    E.g. releasing a claim whose lease is still live, redriving a job whose claim SUCCEEDED, resuming
    a group that is not parked. The CLI exits 1 for it: the command ran and said no.
    """


# --- the demo -----------------------------------------------------------------------------------------


class DemoError(LocalError):
    """A demo step could not run."""


class WorkloadError(LocalError, ValueError):
    """A workload specification breaks a rule; the message names each value, rule and fix.

    A usage error rather than one of the environment: the CLI exits 2 for it.
    """
