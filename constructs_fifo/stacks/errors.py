"""The errors of every command outside the runtime, the construct and the client: one base.

:class:`CommandError` carries what failed and the fix. Every error the commands raise (reaching a
deployed stack, deploying, operating it, the local stand-ins for AWS, the demo) is one: the rooms that
have errors of their own (:mod:`constructs_fifo.ops.errors`, :mod:`constructs_fifo.local.errors`,
:mod:`constructs_fifo.demo.errors`) subclass it. The CLI catches that one class and prints
:meth:`CommandError.one_line` (plus the ``details``, e.g. the end of the CDK CLI's output) and exits 3;
library callers read ``message`` and ``fix`` separately. This module imports nothing from the project
(a leaf), so every module can raise these errors without an import cycle.
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
    "CommandError",
    "ContainerQueueError",
    "DeployError",
    "MissingExtraError",
    "PreflightError",
    "QueueNotFoundError",
    "StackChoiceError",
    "StackError",
    "StackNotFoundError",
    "StackOutputsError",
]


class CommandError(Exception):
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


class MissingExtraError(CommandError):
    """The emulator's packages (the ``local`` extra) are not installed."""


class AwsError(CommandError):
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


class DeployError(CommandError):
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


class StackError(CommandError):
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
