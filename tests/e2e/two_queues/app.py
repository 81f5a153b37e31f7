"""A test app: one stack holding two OrderedAgentQueues, each the sample app's worker with its own table.

``drain``, ``deploy`` and the demo must pick one with ``--queue``; without it the stack is ambiguous.
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import App, CfnOutput, RemovalPolicy, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_

from constructs_fifo import OrderedAgentQueue
from constructs_fifo.local.demo.sample_app import ENV_WORKSPACE_TABLE, WORKSPACE_KEY

STACK_NAME = "TwoQueues"
LAMBDA_DIR = Path(__file__).resolve().parents[3] / "lambda"


def build(app: App) -> Stack:
    """The stack, with queues ``First`` and ``Second``."""
    stack = Stack(app, STACK_NAME)
    for name in ("First", "Second"):
        workspaces = dynamodb.Table(
            stack,
            f"{name}Workspaces",
            partition_key=dynamodb.Attribute(name=WORKSPACE_KEY, type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            removal_policy=RemovalPolicy.DESTROY,
        )
        jobs = OrderedAgentQueue(
            stack,
            name,
            code=lambda_.Code.from_asset(str(LAMBDA_DIR)),
            handler="agent_worker.handle",
            environment={ENV_WORKSPACE_TABLE: workspaces.table_name},
            table_removal_policy=RemovalPolicy.DESTROY,
        )
        workspaces.grant(jobs.function, "dynamodb:GetItem", "dynamodb:PutItem")
        CfnOutput(stack, f"{name}QueueUrl", value=jobs.queue.queue_url)
    return stack


if __name__ == "__main__":
    app = App()
    build(app)
    app.synth()
