"""Figure 7's baseline: one queue's resources written directly with AWS CDK L2 constructs.

What a user would write without ``OrderedAgentQueue`` to get what one queue with every default builds,
with the table its job writes: the workspace table, a FIFO queue and FIFO dead-letter queue (the same
names scheme, redrive allow policy, encryption and TLS policy, maxReceiveCount), the claim table, the
group table, the log group, the role and its statements, the function (the same entry point, the same
environment variables, descriptions and asset content), the SQS event source, the same five alarms,
the same dashboard (its widgets, metrics and alarm annotations), outputs and cdk-nag
acknowledgements. The function's asset is the job code with the runtime and the job code's
dependencies (``lambda/requirements.txt``) vendored next to it, as a hand-writer's build step would
leave it on disk before ``cdk synth`` (:func:`vendored_code_dir`, prepared once, outside the timed
synths), so both stacks hash and copy the same files. No validation, no defaults module, no asset
staging at synth: that is the construct's
share of synth time, which figure 7 shows.
``tests/infrastructure/test_benchmarks_handwritten_stack.py`` checks that both stacks hold the same
resources and the same function asset.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

from aws_cdk import Acknowledgment, ArnFormat, CfnOutput, Duration, RemovalPolicy, Stack, Validations
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_fifo.construct.code.bundling import CodeBundling, bundle_dependencies
from constructs_fifo.construct.code.packaging import stage_asset
from constructs_fifo.construct.settings import defaults
from constructs_fifo.runtime import constants

__all__ = ["HandWrittenStack", "vendored_code_dir"]

_LAMBDA_DIR = Path(__file__).resolve().parents[1] / "lambda"
_MISSING = cloudwatch.TreatMissingData.NOT_BREACHING


@functools.cache
def vendored_code_dir() -> Path:
    """The job code (``lambda/``) with the constructs-fifo runtime and its dependencies vendored next to
    it: the directory a hand-writer deploys, built once per process (a temporary directory, removed at
    exit; the dependencies from the bundling cache)."""
    dependencies = bundle_dependencies(
        _LAMBDA_DIR, architecture=defaults.ARCHITECTURE.name, bundling=CodeBundling()
    )
    return stage_asset(_LAMBDA_DIR, dependencies_dir=dependencies)


class HandWrittenStack(Stack):
    """The sample app's stack without the construct; see the module docstring.

    ``acknowledgements`` are the sample app's cdk-nag acknowledgements ``(function, dead-letter
    queue)``, applied to the same constructs so that both stacks do the same work. ``code_dir`` is the
    function's asset directory, :func:`vendored_code_dir` by default.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        acknowledgements: tuple[Sequence[Acknowledgment], Sequence[Acknowledgment]] = ((), ()),
        code_dir: Path | None = None,
    ) -> None:
        super().__init__(scope, id, description="constructs-fifo benchmark: the sample, hand-written")
        workspaces = dynamodb.Table(
            self,
            "WorkspaceTable",
            partition_key=dynamodb.Attribute(name="workspaceId", type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            removal_policy=RemovalPolicy.DESTROY,
        )
        queue_name = f"{self.stack_name}-jobs.fifo"
        source_arn = self.format_arn(
            service="sqs", resource=queue_name, arn_format=ArnFormat.NO_RESOURCE_NAME
        )
        dead_letter_queue = sqs.Queue(
            self,
            "DeadLetterQueue",
            queue_name=f"{self.stack_name}-jobs-dlq.fifo",
            fifo=True,
            retention_period=Duration.days(14),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            redrive_allow_policy=sqs.RedriveAllowPolicy(
                redrive_permission=sqs.RedrivePermission.BY_QUEUE,
                source_queues=[sqs.Queue.from_queue_arn(self, "SourceQueueRef", source_arn)],
            ),
        )
        queue = sqs.Queue(
            self,
            "Queue",
            queue_name=queue_name,
            fifo=True,
            deduplication_scope=sqs.DeduplicationScope.MESSAGE_GROUP,
            fifo_throughput_limit=sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
            content_based_deduplication=False,
            visibility_timeout=Duration.minutes(12),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            dead_letter_queue=sqs.DeadLetterQueue(queue=dead_letter_queue, max_receive_count=192),
        )
        claims = dynamodb.Table(
            self,
            "ClaimTable",
            partition_key=dynamodb.Attribute(name="id", type=dynamodb.AttributeType.STRING),
            time_to_live_attribute="expiration",
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            removal_policy=RemovalPolicy.DESTROY,
        )
        groups = dynamodb.Table(
            self,
            "GroupTable",
            partition_key=dynamodb.Attribute(name="group", type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name="sk", type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            removal_policy=RemovalPolicy.DESTROY,
        )
        log_group = logs.LogGroup(self, "LogGroup", retention=logs.RetentionDays.ONE_MONTH)
        role = iam.Role(
            self,
            "FunctionRole",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description="Runs the constructs-fifo job function: this queue, its tables and log group.",
        )
        function = lambda_.Function(
            self,
            "Function",
            runtime=lambda_.Runtime.PYTHON_3_14,
            code=lambda_.Code.from_asset(str(code_dir or vendored_code_dir())),
            handler=constants.ENTRYPOINT,
            role=role,
            timeout=Duration.minutes(2),
            memory_size=256,
            reserved_concurrent_executions=10,
            environment={
                "WORKSPACE_TABLE_NAME": workspaces.table_name,
                constants.ENV_USER_HANDLER: "notifier.handle",
                constants.ENV_MODE: "CLAIM",
                constants.ENV_QUEUE_URL: queue.queue_url,
                constants.ENV_VISIBILITY_TIMEOUT_SECONDS: "720",
                constants.ENV_BACKOFF_BASE_SECONDS: "2",
                constants.ENV_METRICS_NAMESPACE: "ConstructsFifo",
                constants.ENV_MAX_ATTEMPTS: "5",
                constants.ENV_ON_DEAD_JOB: "PARK",
                constants.ENV_DEAD_LETTER_QUEUE_URL: dead_letter_queue.queue_url,
                constants.ENV_OUTCOME_LINES: "JOB",
                constants.ENV_CLAIM_TABLE: claims.table_name,
                constants.ENV_CLAIM_TTL_SECONDS: "604800",
                constants.ENV_GROUP_TABLE: groups.table_name,
            },
            log_group=log_group,
            description="constructs-fifo job function (notifier.handle)",
        )
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["logs:CreateLogStream", "logs:PutLogEvents"], resources=[log_group.log_group_arn]
            )
        )
        role.add_to_policy(
            iam.PolicyStatement(
                actions=[
                    f"dynamodb:{action}" for action in ("GetItem", "PutItem", "UpdateItem", "DeleteItem")
                ]
                + ["dynamodb:ConditionCheckItem"],
                resources=[claims.table_arn],
            )
        )
        role.add_to_policy(
            iam.PolicyStatement(
                actions=[
                    f"dynamodb:{action}"
                    for action in ("BatchGetItem", "GetItem", "Query", "PutItem", "UpdateItem", "DeleteItem")
                ]
                + ["dynamodb:ConditionCheckItem"],
                resources=[groups.table_arn],
            )
        )
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["sqs:SendMessage"], resources=[dead_letter_queue.queue_arn, queue.queue_arn]
            )
        )
        function.add_event_source(
            event_sources.SqsEventSource(
                queue, batch_size=10, report_batch_item_failures=True, max_concurrency=10
            )
        )
        period = Duration.minutes(1)
        alarms: list[cloudwatch.Alarm] = []
        for alarm_id, metric, threshold, comparison, description in (
            (
                "QueueAgeAlarm",
                queue.metric_approximate_age_of_oldest_message(period=period, statistic="Maximum"),
                300,
                cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
                "The oldest message of the job queue is older than the threshold: a group is stuck or the "
                "consumer is falling behind.",
            ),
            (
                "DeadLetterQueueAlarm",
                dead_letter_queue.metric_approximate_number_of_messages_visible(
                    period=period, statistic="Maximum"
                ),
                1,
                cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
                "Jobs are waiting in the dead-letter queue: each died itself (the runtime's max_attempts, a "
                "permanent error or a malformed body).",
            ),
            (
                "FunctionErrorsAlarm",
                function.metric_errors(period=period, statistic="Sum"),
                0,
                cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
                "The job function raised or timed out (not a reported job failure).",
            ),
            (
                "FunctionThrottlesAlarm",
                function.metric_throttles(period=period, statistic="Sum"),
                0,
                cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
                "The job function was throttled: raise reserved_concurrency or lower max_concurrency.",
            ),
            (
                "ParkedGroupsAlarm",
                cloudwatch.Metric(
                    namespace="ConstructsFifo",
                    metric_name="GroupsParked",
                    dimensions_map={"QueueName": queue_name},
                    statistic="Sum",
                    period=period,
                ),
                1,
                cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
                "A message group was parked at a dead job: its later jobs are kept, in order, until an "
                "operator resumes it (constructs_fifo.client.ParkedGroups).",
            ),
        ):
            alarms.append(
                cloudwatch.Alarm(
                    self,
                    alarm_id,
                    metric=metric,
                    threshold=threshold,
                    comparison_operator=comparison,
                    alarm_description=description,
                    evaluation_periods=1,
                    treat_missing_data=_MISSING,
                )
            )
        _dashboard(self, queue, function, queue_name, alarms)
        workspaces.grant(function, "dynamodb:GetItem", "dynamodb:PutItem")

        CfnOutput(self, "QueueUrl", value=queue.queue_url)
        CfnOutput(self, "DeadLetterQueueUrl", value=dead_letter_queue.queue_url)
        CfnOutput(self, "ClaimTableName", value=claims.table_name)
        CfnOutput(self, "WorkspaceTableName", value=workspaces.table_name)
        CfnOutput(self, "FunctionName", value=function.function_name)

        function_acks, dead_letter_acks = acknowledgements
        if function_acks:
            Validations.of(function).acknowledge(*function_acks)
        if dead_letter_acks:
            Validations.of(dead_letter_queue).acknowledge(*dead_letter_acks)


def _dashboard(
    scope: Construct,
    queue: sqs.Queue,
    function: lambda_.Function,
    queue_name: str,
    alarms: Sequence[cloudwatch.Alarm],
) -> cloudwatch.Dashboard:
    """The construct's dashboard written by hand: the same widgets, metrics and alarm annotations."""
    period = Duration.minutes(1)
    age, dead, errors, throttles, parked = alarms

    def graph(
        title: str,
        metrics: list[cloudwatch.IMetric],
        notes: Sequence[cloudwatch.HorizontalAnnotation] = (),
        width: int = 8,
    ) -> cloudwatch.GraphWidget:
        return cloudwatch.GraphWidget(
            title=title,
            left=metrics,
            left_annotations=list(notes),
            left_y_axis=cloudwatch.YAxisProps(min=0, show_units=False),
            width=width,
            height=6,
            period=period,
        )

    def runtime(name: str) -> cloudwatch.Metric:
        return cloudwatch.Metric(
            namespace="ConstructsFifo",
            metric_name=name,
            dimensions_map={"QueueName": queue_name},
            statistic="Sum",
            period=period,
        )

    target = f"--stack {Stack.of(scope).stack_name} --queue {scope.node.path}"
    commands = "\n".join(
        f"    constructs-fifo {command} {target}"
        for command in ("status", "groups list --parked", "dlq list")
    )
    dashboard = cloudwatch.Dashboard(scope, "Dashboard")
    dashboard.add_widgets(
        cloudwatch.TextWidget(markdown=f"## {scope.node.path}\n\n{commands}", width=24, height=4)
    )
    dashboard.add_widgets(
        graph(
            "Queue: messages visible and in flight",
            [
                queue.metric_approximate_number_of_messages_visible(period=period, statistic="Maximum"),
                queue.metric_approximate_number_of_messages_not_visible(period=period, statistic="Maximum"),
            ],
        ),
        graph("Queue: age of oldest message (seconds)", [age.metric], [age.to_annotation()]),
        graph("Dead-letter queue: messages", [dead.metric], [dead.to_annotation()]),
    )
    dashboard.add_widgets(
        graph(
            "Function: invocations, errors, throttles",
            [function.metric_invocations(period=period), errors.metric, throttles.metric],
            [errors.to_annotation(), throttles.to_annotation()],
        ),
        graph(
            "Function: duration (ms)",
            [
                function.metric_duration(period=period, statistic="p50"),
                function.metric_duration(period=period, statistic="p99"),
            ],
        ),
        graph(
            "Function: concurrency",
            [function.metric("ConcurrentExecutions", period=period, statistic="Maximum")],
            [cloudwatch.HorizontalAnnotation(value=10, label="reserved concurrency")],
        ),
    )
    dashboard.add_widgets(
        graph(
            "Jobs", [runtime("JobsSucceeded"), runtime("JobsFailed"), runtime("JobsDeadLettered")], width=6
        ),
        graph("Skipped", [runtime("DuplicatesSkipped"), runtime("ClaimConflicts")], width=6),
        graph("Parked", [parked.metric, runtime("JobsKept")], [parked.to_annotation()], width=6),
    )
    return dashboard
