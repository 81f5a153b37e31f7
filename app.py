#!/usr/bin/env python3
"""The sample app: stack ``AgentJobs``, four OrderedAgentQueues (both modes, both consumers), all running
``lambda/``.

- ``Workspaces``, state mode: each agent workspace is a state in the queue's state table, changed by
  the pure transition ``agent_worker.apply_job``;
- ``Notifications``, claim mode: ``notifier.handle`` records a notification in a table of its own,
  idempotent by job id (an effect outside the runtime's store); paced per ``tenant`` of the payload
  across its groups (a job naming no tenant, as the demo's, is not paced);
- ``Builds``, claim mode on container workers (an ECS Fargate service running ``constructs-fifo
  worker``): a workspace's long ``run_tests`` (``builds.run_tests``), longer than the queue's short
  visibility timeout, kept by heartbeats; its result is stored once with its SUCCEEDED claim. The image
  is a registry reference (synth and the emulator need no Docker); the demo runs the workers as local
  processes from ``lambda/``;
- ``Accounts``, state mode: account events published on the EventBridge bus ``AgentAccounts`` come in
  through an ``EventBusIngress`` (rule, staging queue, pipe), one group per account and the account's
  version as ``seq``, and change the account's state through ``accounts.apply_event``
  (``constructs-fifo demo --scenario events``).

Each function reserves the construct's default concurrency (10), unless the app is synthesized with
``--context constructs-fifo:unreserved=true``: what ``constructs-fifo deploy --allow-unreserved``
passes when the preflight finds that the account's Lambda quota cannot hold the reservation (new
accounts start at 10 or 50). Then neither reserves and each mapping's MaximumConcurrency (10) is the
ceiling.

All keep the default dead-job policy, PARK: a workspace whose patch died must not go on to run tests
and open a PR on the wrong code, a reader of a workspace's notifications expects them in order, and
an account's later events must not be applied past one that died.

With ``-c encryption=kms`` (``cdk synth -c encryption=kms``) the stack adds a customer managed KMS key
(rotation on) and passes it to both queues and the notification table: queues, tables, log groups and
the functions' environments are then encrypted with it. Without it (the default, and what the demo
deploys) each service keeps its own default encryption. docs/security.md lists what scanners say of
each.

Only composes: no AWS calls at synth, no account or region needed. cdk-nag's AwsSolutions and
Serverless packs validate the app; every acknowledgement below carries its reason. The names the demo
relies on (stack, construct ids, handlers, outputs, the notification table's key and variable) come
from the sample app's contract, :mod:`constructs_fifo.demo.sample_app`.
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Acknowledgment, App, CfnOutput, Duration, RemovalPolicy, Stack, Validations
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_events as events
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from cdk_nag import AwsSolutionsChecks, ServerlessChecks
from constructs import Construct

from constructs_fifo import ContainerConsumer, EventBusIngress, JobMode, OrderedAgentQueue, Pace
from constructs_fifo.construct.settings.defaults import RESERVED_CONCURRENCY
from constructs_fifo.demo.sample_app import (
    ACCOUNT_EVENT_BUS,
    ACCOUNT_EVENT_SOURCE,
    ACCOUNT_GROUP_PATH,
    ACCOUNT_HANDLER,
    ACCOUNT_INGRESS,
    ACCOUNT_JOB_ID_PATH,
    ACCOUNT_JOB_TYPE_PATH,
    ACCOUNT_QUEUE,
    ACCOUNT_SEQ_PATH,
    BUILD_HANDLER,
    BUILD_HEARTBEAT_INTERVAL_SECONDS,
    BUILD_IMAGE,
    BUILD_MAX_TASKS,
    BUILD_QUEUE,
    BUILD_SLOTS,
    BUILD_VISIBILITY_TIMEOUT_SECONDS,
    ENV_NOTIFICATION_TABLE,
    NOTIFICATION_HANDLER,
    NOTIFICATION_KEY,
    NOTIFICATION_PACE_BURST,
    NOTIFICATION_PACE_JOBS,
    NOTIFICATION_PACE_KEY,
    NOTIFICATION_PACE_PER_SECONDS,
    NOTIFICATION_QUEUE,
    OUTPUT_NOTIFICATION_CLAIM_TABLE_NAME,
    OUTPUT_NOTIFICATION_DEAD_LETTER_QUEUE_ARN,
    OUTPUT_NOTIFICATION_DEAD_LETTER_QUEUE_URL,
    OUTPUT_NOTIFICATION_GROUP_TABLE_NAME,
    OUTPUT_NOTIFICATION_QUEUE_ARN,
    OUTPUT_NOTIFICATION_QUEUE_URL,
    OUTPUT_NOTIFICATION_TABLE_NAME,
    OUTPUT_WORKSPACE_DEAD_LETTER_QUEUE_ARN,
    OUTPUT_WORKSPACE_DEAD_LETTER_QUEUE_URL,
    OUTPUT_WORKSPACE_QUEUE_ARN,
    OUTPUT_WORKSPACE_QUEUE_URL,
    OUTPUT_WORKSPACE_STATE_TABLE_NAME,
    STACK_NAME,
    WORKSPACE_HANDLER,
    WORKSPACE_QUEUE,
)
from constructs_fifo.deploy.preflight import UNRESERVED_CONTEXT

__all__ = [
    "DEAD_LETTER_QUEUE_ACKNOWLEDGEMENTS",
    "ENCRYPTION_CONTEXT",
    "ENCRYPTION_KMS",
    "FUNCTION_ACKNOWLEDGEMENTS",
    "LAMBDA_DIR",
    "STACK_NAME",
    "AgentJobsStack",
    "build_app",
]

LAMBDA_DIR = Path(__file__).resolve().parent / "lambda"
#: The context key choosing the sample's encryption, and its one value besides the default ("none").
ENCRYPTION_CONTEXT = "encryption"
ENCRYPTION_KMS = "kms"
#: What the notifier does to its table: the conditional put, and counting a replay.
NOTIFICATION_TABLE_ACTIONS = ("dynamodb:PutItem", "dynamodb:UpdateItem")

#: cdk-nag findings that are true of this design, with the reason each does not apply. The construct
#: is configured so that AwsSolutions raises nothing; these four remain, acknowledged on the exact
#: construct they are about (each queue's function and dead-letter queue).
FUNCTION_ACKNOWLEDGEMENTS = (
    Acknowledgment(
        id="Serverless::Serverless-LambdaTracing",
        reason="X-Ray tracing is the construct's tracing prop, left off in the sample: it needs "
        "xray:PutTraceSegments on Resource '*', and the runtime logs one structured line and EMF metrics "
        "per job.",
    ),
    Acknowledgment(
        id="Serverless::Serverless-LambdaDLQ",
        reason="The function is invoked only synchronously, by the SQS event source mapping; a function "
        "DLQ applies to asynchronous invocations. Dead jobs go to the FIFO queue's dead-letter queue.",
    ),
    Acknowledgment(
        id="Serverless::Serverless-LambdaEventSourceMappingDestination",
        reason="On-failure destinations do not apply to SQS event sources (only streams and Kafka); "
        "the runtime sends dead jobs to the queue's FIFO dead-letter queue itself.",
    ),
)
DEAD_LETTER_QUEUE_ACKNOWLEDGEMENTS = (
    Acknowledgment(
        id="Serverless::Serverless-SQSRedrivePolicy",
        reason="This queue is the job queue's dead-letter queue: it keeps dead jobs 14 days for "
        "inspection and redrive; a dead-letter queue of its own would only move them further away.",
    ),
)


class AgentJobsStack(Stack):
    """The workspace queue (state mode), the notification queue (claim mode) and its table, the accounts
    queue (state mode) behind its bus, and outputs."""

    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id, description="constructs-fifo sample: ordered agent jobs, both modes")
        encryption = self.node.try_get_context(ENCRYPTION_CONTEXT) or "none"
        if encryption not in ("none", ENCRYPTION_KMS):
            raise ValueError(
                f"-c {ENCRYPTION_CONTEXT}={encryption!r} is not a choice of the sample: pass "
                f"-c {ENCRYPTION_CONTEXT}={ENCRYPTION_KMS} for a customer managed key, or leave it out."
            )
        key = (
            kms.Key(
                self,
                "Key",
                description="constructs-fifo sample: queues, tables, logs and function environments",
                enable_key_rotation=True,
                removal_policy=RemovalPolicy.DESTROY,  # a sample: `cdk destroy` leaves nothing behind
            )
            if encryption == ENCRYPTION_KMS
            else None
        )
        self.encryption_key = key
        code = lambda_.Code.from_asset(str(LAMBDA_DIR))
        unreserved = str(self.node.try_get_context(UNRESERVED_CONTEXT)).lower() == "true"
        reserved_concurrency = None if unreserved else RESERVED_CONCURRENCY
        workspaces = OrderedAgentQueue(
            self,
            WORKSPACE_QUEUE,
            code=code,
            handler=WORKSPACE_HANDLER,
            mode=JobMode.STATE,
            reserved_concurrency=reserved_concurrency,
            encryption_key=key,
            table_removal_policy=RemovalPolicy.DESTROY,  # a sample: `cdk destroy` leaves nothing behind
        )
        notification_table = dynamodb.Table(
            self,
            "NotificationTable",
            partition_key=dynamodb.Attribute(name=NOTIFICATION_KEY, type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            encryption=(
                dynamodb.TableEncryption.CUSTOMER_MANAGED if key else dynamodb.TableEncryption.AWS_MANAGED
            ),
            encryption_key=key,
            removal_policy=RemovalPolicy.DESTROY,
        )
        notifications = OrderedAgentQueue(
            self,
            NOTIFICATION_QUEUE,
            code=code,
            handler=NOTIFICATION_HANDLER,
            environment={ENV_NOTIFICATION_TABLE: notification_table.table_name},
            reserved_concurrency=reserved_concurrency,
            pace=Pace(
                jobs=NOTIFICATION_PACE_JOBS,
                per=Duration.seconds(NOTIFICATION_PACE_PER_SECONDS),
                burst=NOTIFICATION_PACE_BURST,
                key=NOTIFICATION_PACE_KEY,
            ),
            encryption_key=key,
            table_removal_policy=RemovalPolicy.DESTROY,
        )
        notification_table.grant(notifications.function, *NOTIFICATION_TABLE_ACTIONS)
        accounts = OrderedAgentQueue(
            self,
            ACCOUNT_QUEUE,
            code=code,
            handler=ACCOUNT_HANDLER,
            mode=JobMode.STATE,
            reserved_concurrency=reserved_concurrency,
            encryption_key=key,
            table_removal_policy=RemovalPolicy.DESTROY,
        )
        builds = OrderedAgentQueue(
            self,
            BUILD_QUEUE,
            code=code,  # checked for the handler; the image holds the code the tasks run
            handler=BUILD_HANDLER,
            visibility_timeout=Duration.seconds(BUILD_VISIBILITY_TIMEOUT_SECONDS),
            heartbeat_interval=Duration.seconds(BUILD_HEARTBEAT_INTERVAL_SECONDS),
            slots=BUILD_SLOTS,
            encryption_key=key,
            table_removal_policy=RemovalPolicy.DESTROY,
            consumer=ContainerConsumer(
                image=ecs.ContainerImage.from_registry(BUILD_IMAGE), max_tasks=BUILD_MAX_TASKS
            ),
        )
        # A bus of its own, so the rule sees only the demo's account events.
        account_bus = events.EventBus(self, "AccountEventBus", event_bus_name=ACCOUNT_EVENT_BUS)
        EventBusIngress(
            self,
            ACCOUNT_INGRESS,
            queue=accounts,
            event_bus=account_bus,
            event_pattern=events.EventPattern(source=[ACCOUNT_EVENT_SOURCE]),
            group_path=ACCOUNT_GROUP_PATH,
            seq_path=ACCOUNT_SEQ_PATH,
            job_id_path=ACCOUNT_JOB_ID_PATH,
            job_type_path=ACCOUNT_JOB_TYPE_PATH,
        )
        self.workspaces = workspaces
        self.notifications = notifications
        self.notification_table = notification_table
        self.accounts = accounts
        self.builds = builds
        self.account_bus = account_bus

        assert workspaces.state_table is not None  # state mode
        assert notifications.claim_table is not None and notifications.group_table is not None  # CLAIM, PARK
        outputs = {
            OUTPUT_WORKSPACE_QUEUE_URL: workspaces.queue.queue_url,
            OUTPUT_WORKSPACE_QUEUE_ARN: workspaces.queue.queue_arn,
            OUTPUT_WORKSPACE_DEAD_LETTER_QUEUE_ARN: workspaces.dead_letter_queue.queue_arn,
            OUTPUT_WORKSPACE_DEAD_LETTER_QUEUE_URL: workspaces.dead_letter_queue.queue_url,
            OUTPUT_WORKSPACE_STATE_TABLE_NAME: workspaces.state_table.table_name,
            OUTPUT_NOTIFICATION_QUEUE_URL: notifications.queue.queue_url,
            OUTPUT_NOTIFICATION_QUEUE_ARN: notifications.queue.queue_arn,
            OUTPUT_NOTIFICATION_DEAD_LETTER_QUEUE_ARN: notifications.dead_letter_queue.queue_arn,
            OUTPUT_NOTIFICATION_DEAD_LETTER_QUEUE_URL: notifications.dead_letter_queue.queue_url,
            OUTPUT_NOTIFICATION_CLAIM_TABLE_NAME: notifications.claim_table.table_name,
            OUTPUT_NOTIFICATION_GROUP_TABLE_NAME: notifications.group_table.table_name,
            OUTPUT_NOTIFICATION_TABLE_NAME: notification_table.table_name,
        }
        for name, value in outputs.items():
            CfnOutput(self, name, value=value)

        for jobs in (workspaces, notifications, accounts):
            Validations.of(jobs.function).acknowledge(*FUNCTION_ACKNOWLEDGEMENTS)
            Validations.of(jobs.dead_letter_queue).acknowledge(*DEAD_LETTER_QUEUE_ACKNOWLEDGEMENTS)
        Validations.of(builds.dead_letter_queue).acknowledge(*DEAD_LETTER_QUEUE_ACKNOWLEDGEMENTS)


def build_app(app: App | None = None) -> App:
    """The sample app with its stack and the cdk-nag packs (``app`` defaults to a new ``App()``)."""
    app = app or App()
    AgentJobsStack(app, STACK_NAME)
    Validations.of(app).add_plugins(AwsSolutionsChecks(app), ServerlessChecks(app))
    return app


if __name__ == "__main__":
    build_app().synth()
