"""A deployed stack's pipes, as the local runner needs them: read from CloudFormation and Pipes.

:func:`find_pipes` lists the stack's ``AWS::Pipes::Pipe`` resources (DescribeStackResources) and
reads each with DescribePipe (the deployed configuration, not the template: what runs on AWS).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from botocore.exceptions import ClientError

from constructs_fifo.local.pipes.errors import PipeNotFoundError, UnsupportedPipeError
from constructs_fifo.local.pipes.targets import SqsTargetParameters
from constructs_fifo.stacks.deployed import is_sqs_arn
from constructs_fifo.stacks.errors import StackNotFoundError
from constructs_fifo.stacks.status import is_missing_stack

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "MAX_SQS_TARGET_BATCH",
    "PIPE_RESOURCE_TYPE",
    "DeployedPipe",
    "find_pipes",
    "read_pipe",
]

PIPE_RESOURCE_TYPE: Final = "AWS::Pipes::Pipe"
#: AWS: API_PipeSourceSqsQueueParameters, BatchSize default 10.
DEFAULT_BATCH_SIZE: Final = 10
#: AWS: eb-pipes-batching-concurrency, an SQS queue target takes at most 10 messages per batch.
MAX_SQS_TARGET_BATCH: Final = 10
#: DesiredState of a pipe that polls (API_DescribePipe: RUNNING or STOPPED).
_RUNNING: Final = "RUNNING"


@dataclass(frozen=True, slots=True)
class DeployedPipe:
    """What the runner needs of a deployed pipe."""

    name: str
    arn: str
    source_arn: str
    target_arn: str
    desired_state: str
    batch_size: int
    target: SqsTargetParameters
    enrichment_arn: str = ""

    @property
    def running(self) -> bool:
        """Whether the pipe polls its source (a STOPPED pipe moves nothing, on AWS as here)."""
        return self.desired_state == _RUNNING


def _deployed_pipe(described: Mapping[str, Any]) -> DeployedPipe:
    name = described["Name"]
    source, target = described.get("Source", ""), described.get("Target", "")
    if not is_sqs_arn(source) or not is_sqs_arn(target):
        raise UnsupportedPipeError(
            f"pipe {name!r} reads {source!r} and writes {target!r}; the local runner moves records from "
            "an SQS queue to an SQS queue only",
            "run this pipe on AWS, or give it an SQS source and target",
        )
    if described.get("Enrichment"):
        raise UnsupportedPipeError(
            f"pipe {name!r} has the enrichment {described['Enrichment']!r}; the local runner does not "
            "invoke enrichments",
            "drop the enrichment (an input template reshapes the event without one), or run the pipe on AWS",
        )
    sqs_source = (described.get("SourceParameters") or {}).get("SqsQueueParameters") or {}
    return DeployedPipe(
        name=name,
        arn=described.get("Arn", ""),
        source_arn=source,
        target_arn=target,
        desired_state=described.get("DesiredState") or _RUNNING,
        batch_size=min(int(sqs_source.get("BatchSize") or DEFAULT_BATCH_SIZE), MAX_SQS_TARGET_BATCH),
        target=SqsTargetParameters.from_pipe(described.get("TargetParameters")),
    )


def read_pipe(name: str, pipes_client: Any) -> DeployedPipe:
    """DescribePipe ``name``.

    Raises
    ------
    PipeNotFoundError
        No such pipe.
    UnsupportedPipeError
        Not an SQS-to-SQS pipe without enrichment.
    """
    try:
        described = pipes_client.describe_pipe(Name=name)
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") != "NotFoundException":
            raise
        raise PipeNotFoundError(
            f"pipe {name!r} was not found ({error})", "deploy the stack that holds it, or name another pipe"
        ) from error
    return _deployed_pipe(described)


def find_pipes(
    stack: str, *, cloudformation_client: Any, pipes_client: Any, pipe: str | None = None
) -> list[DeployedPipe]:
    """The stack's pipes (``pipe``: only the one of that name or logical id), in template order.

    Raises
    ------
    StackNotFoundError
        The stack does not exist.
    PipeNotFoundError
        The stack has no pipe (of that name).
    """
    try:
        resources = cloudformation_client.describe_stack_resources(StackName=stack)["StackResources"]
    except ClientError as error:
        if not is_missing_stack(error):
            raise
        raise StackNotFoundError(
            f"stack {stack!r} was not found ({error}); the pipe runner reads the deployed stack",
            "deploy it with the same --endpoint-url and --region, or pass --stack",
        ) from error
    pipes = [
        r for r in resources if r.get("ResourceType") == PIPE_RESOURCE_TYPE and r.get("PhysicalResourceId")
    ]
    if pipe is not None:
        pipes = [r for r in pipes if pipe in (r["PhysicalResourceId"], r.get("LogicalResourceId"))]
    if not pipes:
        named = f" named {pipe!r}" if pipe else ""
        raise PipeNotFoundError(
            f"stack {stack!r} has no {PIPE_RESOURCE_TYPE}{named}; the runner moves what a pipe would",
            "deploy a stack with a pipe (the construct's event ingress creates one), or pass --stack/--pipe",
        )
    return [read_pipe(r["PhysicalResourceId"], pipes_client) for r in pipes]
