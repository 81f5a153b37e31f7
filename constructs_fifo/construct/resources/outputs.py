"""The construct's own stack outputs: what a producer, an operator or a script needs to find its parts.

``cdk deploy`` prints them and ``aws cloudformation describe-stacks`` reads them, so a user's app
learns its queue's URL without writing outputs of its own (``outputs=False`` leaves them out). Each
has a description naming the construct's path and what the value is for.

No export names: an exported output cannot change or go while another stack imports it, which makes
the stack hard to update and to delete; a stack that needs a value passes it in code.

Logical ids are readable and stable: the output's path inside its stack, letters and digits only
(``AgentJobs/Notifications/Outputs/QueueUrl`` gives ``NotificationsOutputsQueueUrl``), rather than
CDK's path hash. The ``Outputs`` part keeps them apart from the outputs an app writes itself, such as
``CfnOutput(stack, "NotificationsQueueUrl", ...)`` (two outputs of one logical id fail synth). An id
that would pass CloudFormation's 255 characters keeps CDK's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from aws_cdk import CfnOutput, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_fifo.runtime.settings.addresses import ADDRESS_OUTPUTS, OUTPUT_DESCRIPTION_PREFIX, OUTPUTS_ID

__all__ = [
    "OUTPUTS_ID",
    "OUTPUT_NAMES",
    "WORKER_OUTPUT_NAMES",
    "QueueParts",
    "build_outputs",
    "output_logical_id",
]

#: CloudFormation's longest logical id.
_LOGICAL_ID_MAX: Final = 255
#: Every output's name (the end of its logical id), in template order.
OUTPUT_NAMES: Final = (
    ADDRESS_OUTPUTS["queue_url"],
    "QueueName",
    "QueueArn",
    ADDRESS_OUTPUTS["dead_letter_queue_url"],
    "DeadLetterQueueName",
    "DeadLetterQueueArn",
    ADDRESS_OUTPUTS["claim_table"],
    ADDRESS_OUTPUTS["group_table"],
    "FunctionName",
)
#: With the container consumer, in the place of ``FunctionName``.
WORKER_OUTPUT_NAMES: Final = ("ClusterName", "ServiceName")


@dataclass(frozen=True)
class QueueParts:
    """The resources the outputs name (a table is ``None`` when the mode and policy build none)."""

    queue: sqs.IQueue
    dead_letter_queue: sqs.IQueue
    claim_table: dynamodb.ITable | None
    group_table: dynamodb.ITable | None
    function: lambda_.IFunction | None
    #: The container consumer's service (``None``: the Lambda function).
    service: ecs.FargateService | None = None
    #: The payload bucket (``large_payloads=True``; ``None``: none, and no output).
    payload_bucket: s3.IBucket | None = None


def output_logical_id(output: Construct) -> str | None:
    """``output``'s path inside its stack, letters and digits only; ``None`` if too long."""
    stack = Stack.of(output)
    inside = output.node.scopes[len(stack.node.scopes) :]
    logical_id = "".join(
        char for part in inside for char in part.node.id if char.isascii() and char.isalnum()
    )
    return logical_id if len(logical_id) <= _LOGICAL_ID_MAX and logical_id[0].isalpha() else None


def build_outputs(scope: Construct, parts: QueueParts) -> list[CfnOutput]:
    """Add the queue's outputs (see the module docstring) under ``scope/Outputs``.

    Returns
    -------
    list of CfnOutput
        In :data:`OUTPUT_NAMES` order, the tables' only when they exist; with the container consumer
        :data:`WORKER_OUTPUT_NAMES` in the place of the function's.
    """
    path = scope.node.path
    values: list[tuple[str, str | None, str]] = [
        (ADDRESS_OUTPUTS["queue_url"], parts.queue.queue_url, "job queue's URL: producers send jobs to it"),
        ("QueueName", parts.queue.queue_name, "job queue's name"),
        ("QueueArn", parts.queue.queue_arn, "job queue's ARN"),
        (
            ADDRESS_OUTPUTS["dead_letter_queue_url"],
            parts.dead_letter_queue.queue_url,
            "dead-letter queue's URL: dead jobs (CONTINUE policy) and messages past maxReceiveCount",
        ),
        ("DeadLetterQueueName", parts.dead_letter_queue.queue_name, "dead-letter queue's name"),
        ("DeadLetterQueueArn", parts.dead_letter_queue.queue_arn, "dead-letter queue's ARN"),
        (
            ADDRESS_OUTPUTS["claim_table"],
            parts.claim_table.table_name if parts.claim_table is not None else None,
            "claim table's name: each job's claim, attempts and outcome",
        ),
        (
            ADDRESS_OUTPUTS["group_table"],
            parts.group_table.table_name if parts.group_table is not None else None,
            "group table's name: parked groups, their kept jobs, and each group's state in state mode",
        ),
        (
            "FunctionName",
            parts.function.function_name if parts.function is not None else None,
            "name of the function that runs the jobs",
        ),
    ]
    if parts.service is not None:
        values += [
            ("ClusterName", parts.service.cluster.cluster_name, "ECS cluster the workers run in"),
            ("ServiceName", parts.service.service_name, "ECS service whose tasks run the jobs"),
        ]
    if parts.payload_bucket is not None:
        values.append(
            (
                ADDRESS_OUTPUTS["payload_bucket"],
                parts.payload_bucket.bucket_name,
                "payload bucket's name: bodies over 1 MiB and results over 64 KiB (large_payloads)",
            )
        )
    holder = Construct(scope, OUTPUTS_ID)
    outputs: list[CfnOutput] = []
    for name, value, what in values:
        if value is None:
            continue
        output = CfnOutput(
            holder, name, value=value, description=f"{OUTPUT_DESCRIPTION_PREFIX}{path}: the {what}."
        )
        logical_id = output_logical_id(output)
        if logical_id is not None:
            output.override_logical_id(logical_id)
        outputs.append(output)
    return outputs
