"""What a deploy to the emulator does not apply, said once, and moto's per-resource warnings kept quiet.

moto's CloudFormation skips the resource types it does not support, and says so for every resource
of every deploy: a logged warning ("No Moto CloudFormation support for AWS::CloudWatch::Alarm") plus a
Python warning with its source line, two or three lines each, and again when a stack is updated or
deleted ("Unable to delete ..., as it was never created"). For the sample app that is dozens of lines
per deploy about the same few types, none of which the operator can act on.

:func:`quiet_cloudformation_warnings` drops those lines for the types listed in :data:`NOT_APPLIED`
(which :func:`notice` states once, when the emulator starts) and lets a line about any other type
through once per type, so a stack that leans on something else the emulator skips still says so.
Importing this module does not import moto.

Examples
--------
>>> print(notice().splitlines()[0])
constructs-fifo emulator: a deploy here creates nothing for these (the stack deploys without them):
"""

from __future__ import annotations

import logging
import re
import warnings
from typing import Final

__all__ = [
    "MOTO_LOGGER",
    "NOT_APPLIED",
    "NOT_ENFORCED",
    "notice",
    "quiet_cloudformation_warnings",
]

#: The logger moto's CloudFormation template parser logs to (moto's own, not the module's).
MOTO_LOGGER: Final = "moto"
#: Resource types moto's CloudFormation skips that constructs-fifo stacks hold, and what that means.
NOT_APPLIED: Final = {
    "AWS::SQS::QueuePolicy": (
        "SQS queue policies, the construct's TLS-only policies included: plain HTTP is accepted"
    ),
    "AWS::CloudWatch::Alarm": "CloudWatch alarms (the construct's template tests check them)",
    "AWS::S3::BucketPolicy": "S3 bucket policies (the CDK bootstrap's)",
    "AWS::CDK::Metadata": "the CDK's metadata resource (nothing to apply)",
    "AWS::ApplicationAutoScaling::ScalableTarget": (
        "the container workers' scaling target (the service is created and runs nothing; workers run "
        "locally as `constructs-fifo worker` processes)"
    ),
    "AWS::ApplicationAutoScaling::ScalingPolicy": "the container workers' step scaling policies",
}
#: What the emulator does not enforce although it creates the resources.
NOT_ENFORCED: Final = (
    "IAM: roles and policies are created, but no call is checked against them",
    "DynamoDB TTL: items never expire (the runtime never relies on expiry)",
)

_UNSUPPORTED = re.compile(r"No Moto CloudFormation support for (?P<type>\S+)")
#: moto's Python warnings about the same resources (the logged line already said it).
_WARNINGS: Final = (
    r"Tried to parse \S+ but it's not supported by moto's CloudFormation implementation",
    r"Unable to delete \S+, as it was never created",
)


def notice() -> str:
    """The lines the emulator prints once, when it starts."""
    lines = [
        "constructs-fifo emulator: a deploy here creates nothing for these (the stack deploys without them):",
        *(f"  - {what}" for what in NOT_APPLIED.values()),
        "and does not enforce:",
        *(f"  - {what}" for what in NOT_ENFORCED),
        "moto's warnings about them are not shown; see docs/emulator.md",
    ]
    return "\n".join(lines)


class _UnsupportedOnce(logging.Filter):
    """Drops moto's "no support" line for :data:`NOT_APPLIED` types; lets any other type through once."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: set[str] = set(NOT_APPLIED)

    def filter(self, record: logging.LogRecord) -> bool:
        found = _UNSUPPORTED.search(record.getMessage())
        if found is None:
            return True
        if found["type"] in self._seen:
            return False
        self._seen.add(found["type"])
        return True


def quiet_cloudformation_warnings() -> None:
    """Keep moto's per-resource CloudFormation warnings out of the operator's way (see the module).

    Process-wide: call it in a process that serves the emulator (``local serve``, the demo's child).
    """
    logger = logging.getLogger(MOTO_LOGGER)
    if not any(isinstance(f, _UnsupportedOnce) for f in logger.filters):
        logger.addFilter(_UnsupportedOnce())
    for message in _WARNINGS:
        warnings.filterwarnings("ignore", message=message, category=UserWarning)
