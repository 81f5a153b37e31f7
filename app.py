#!/usr/bin/env python3
"""The sample app: stack ``AgentJobs``, one OrderedAgentQueue running ``lambda/agent_worker.py``.

Only composes: no AWS calls at synth, no account or region needed. cdk-nag's AwsSolutions and
Serverless packs validate the app; every acknowledgement below carries its reason. The names the demo
relies on (stack, outputs, the workspace table's key and variable) come from the sample app's
contract, :mod:`constructs_fifo.local.demo.sample_app`.
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Acknowledgment, App, CfnOutput, RemovalPolicy, Stack, Validations
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from cdk_nag import AwsSolutionsChecks, ServerlessChecks
from constructs import Construct

from constructs_fifo import OrderedAgentQueue
from constructs_fifo.local.demo.sample_app import (
    ENV_WORKSPACE_TABLE,
    OUTPUT_CLAIM_TABLE_NAME,
    OUTPUT_DEAD_LETTER_QUEUE_URL,
    OUTPUT_FUNCTION_NAME,
    OUTPUT_QUEUE_URL,
    OUTPUT_WORKSPACE_TABLE_NAME,
    STACK_NAME,
    WORKSPACE_KEY,
)

__all__ = [
    "DEAD_LETTER_QUEUE_ACKNOWLEDGEMENTS",
    "FUNCTION_ACKNOWLEDGEMENTS",
    "LAMBDA_DIR",
    "STACK_NAME",
    "AgentJobsStack",
    "build_app",
]

LAMBDA_DIR = Path(__file__).resolve().parent / "lambda"

#: cdk-nag findings that are true of this design, with the reason each does not apply. The construct
#: is configured so that AwsSolutions raises nothing; these four remain, acknowledged on the exact
#: construct they are about.
FUNCTION_ACKNOWLEDGEMENTS = (
    Acknowledgment(
        id="Serverless::Serverless-LambdaTracing",
        reason="X-Ray tracing needs xray:PutTraceSegments on Resource '*'; the function's role has no "
        "wildcard resource by design, and the runtime logs one structured line and EMF metrics per job.",
    ),
    Acknowledgment(
        id="Serverless::Serverless-LambdaDLQ",
        reason="The function is invoked only synchronously, by the SQS event source mapping; a function "
        "DLQ applies to asynchronous invocations. Failed jobs move to the FIFO queue's redrive DLQ.",
    ),
    Acknowledgment(
        id="Serverless::Serverless-LambdaEventSourceMappingDestination",
        reason="On-failure destinations do not apply to SQS event sources (only streams and Kafka); "
        "failed records move to the queue's FIFO dead-letter queue after maxReceiveCount receives.",
    ),
)
DEAD_LETTER_QUEUE_ACKNOWLEDGEMENTS = (
    Acknowledgment(
        id="Serverless::Serverless-SQSRedrivePolicy",
        reason="This queue is the job queue's dead-letter queue: it keeps failed jobs 14 days for "
        "inspection and redrive; a dead-letter queue of its own would only move them further away.",
    ),
)


class AgentJobsStack(Stack):
    """One OrderedAgentQueue, the workspace table its jobs change, and the outputs the CLI reads."""

    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id, description="constructs-fifo sample: ordered agent jobs")
        workspaces = dynamodb.Table(
            self,
            "WorkspaceTable",
            partition_key=dynamodb.Attribute(name=WORKSPACE_KEY, type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            removal_policy=RemovalPolicy.DESTROY,  # a sample: `cdk destroy` leaves nothing behind
        )
        jobs = OrderedAgentQueue(
            self,
            "Jobs",
            code=lambda_.Code.from_asset(str(LAMBDA_DIR)),
            handler="agent_worker.handle",
            environment={ENV_WORKSPACE_TABLE: workspaces.table_name},
            table_removal_policy=RemovalPolicy.DESTROY,
        )
        workspaces.grant(jobs.function, "dynamodb:GetItem", "dynamodb:PutItem")
        self.jobs = jobs
        self.workspaces = workspaces

        CfnOutput(self, OUTPUT_QUEUE_URL, value=jobs.queue.queue_url)
        CfnOutput(self, OUTPUT_DEAD_LETTER_QUEUE_URL, value=jobs.dead_letter_queue.queue_url)
        if jobs.claim_table is not None:  # claim mode, the sample's
            CfnOutput(self, OUTPUT_CLAIM_TABLE_NAME, value=jobs.claim_table.table_name)
        CfnOutput(self, OUTPUT_WORKSPACE_TABLE_NAME, value=workspaces.table_name)
        CfnOutput(self, OUTPUT_FUNCTION_NAME, value=jobs.function.function_name)

        Validations.of(jobs.function).acknowledge(*FUNCTION_ACKNOWLEDGEMENTS)
        Validations.of(jobs.dead_letter_queue).acknowledge(*DEAD_LETTER_QUEUE_ACKNOWLEDGEMENTS)


def build_app(app: App | None = None) -> App:
    """The sample app with its stack and the cdk-nag packs (``app`` defaults to a new ``App()``)."""
    app = app or App()
    AgentJobsStack(app, STACK_NAME)
    Validations.of(app).add_plugins(AwsSolutionsChecks(app), ServerlessChecks(app))
    return app


if __name__ == "__main__":
    build_app().synth()
