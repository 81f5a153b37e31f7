"""A test app: one stack holding two OrderedAgentQueues, the sample's workspace transition under each policy.

``Park`` keeps the default dead-job policy (PARK), ``Continue`` sends a dead job to the DLQ and goes on;
both run ``agent_worker.apply_job`` in state mode. ``drain``, ``deploy`` and ``ParkedGroups`` must pick
one with ``--queue``; without it the stack is ambiguous.
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import App, CfnOutput, RemovalPolicy, Stack
from aws_cdk import aws_lambda as lambda_

from constructs_fifo import OrderedAgentQueue
from constructs_fifo.demo.sample_app import WORKSPACE_HANDLER
from constructs_fifo.runtime.constants import DeadJobPolicy, JobMode

STACK_NAME = "TwoQueues"
LAMBDA_DIR = Path(__file__).resolve().parents[3] / "lambda"
POLICIES = {"Park": DeadJobPolicy.PARK, "Continue": DeadJobPolicy.CONTINUE}


def build(app: App) -> Stack:
    """The stack, with queues ``Park`` and ``Continue``."""
    stack = Stack(app, STACK_NAME)
    code = lambda_.Code.from_asset(str(LAMBDA_DIR))
    for name, policy in POLICIES.items():
        jobs = OrderedAgentQueue(
            stack,
            name,
            code=code,
            handler=WORKSPACE_HANDLER,
            mode=JobMode.STATE,
            on_dead_job=policy,
            table_removal_policy=RemovalPolicy.DESTROY,
        )
        CfnOutput(stack, f"{name}QueueUrl", value=jobs.queue.queue_url)
    return stack


if __name__ == "__main__":
    app = App()
    build(app)
    app.synth()
