"""A test app: one stack holding two OrderedAgentQueues, the sample's workspace transition under each policy.

``Park`` keeps the default dead-job policy (PARK), ``Continue`` sends a dead job to the DLQ and goes on;
both run ``agent_worker.apply_job`` in state mode. ``drain``, ``deploy`` and ``ParkedGroups`` must pick
one with ``--queue``; without it the stack is ambiguous.

Both retry with fewer attempts and a shorter first backoff than the construct's defaults (5 attempts,
2 s doubling: 30 s of backoff before a job's last attempt), so that the drains wait seconds for the test's
job that fails every attempt but its last; the test reads the number from the deployed function.
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import App, CfnOutput, Duration, RemovalPolicy, Stack
from aws_cdk import aws_lambda as lambda_

from constructs_fifo import OrderedAgentQueue
from constructs_fifo.demo.sample_app import WORKSPACE_HANDLER
from constructs_fifo.runtime.constants import DeadJobPolicy, JobMode

STACK_NAME = "TwoQueues"
LAMBDA_DIR = Path(__file__).resolve().parents[3] / "lambda"
POLICIES = {"Park": DeadJobPolicy.PARK, "Continue": DeadJobPolicy.CONTINUE}
#: Runs of a job before it is dead: at least 2, so that a job can fail and still succeed on its last.
MAX_ATTEMPTS = 3
#: The first retry's delay, doubling per attempt (the construct's least).
BACKOFF_BASE_SECONDS = 1


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
            max_attempts=MAX_ATTEMPTS,
            backoff_base=Duration.seconds(BACKOFF_BASE_SECONDS),
            table_removal_policy=RemovalPolicy.DESTROY,
        )
        CfnOutput(stack, f"{name}QueueUrl", value=jobs.queue.queue_url)
    return stack


if __name__ == "__main__":
    app = App()
    build(app)
    app.synth()
