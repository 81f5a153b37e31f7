"""The alarms and dashboard row of the container consumer's workers (``consumer=ContainerConsumer(...)``).

They take the place of the function's errors and throttles alarms; the queue's alarms (age, DLQ,
parked groups, sequence gap) are the same for both consumers
(:func:`~constructs_fifo.construct.observability.alarms.build_alarms`). Construct ids:

- ``WorkersMissingAlarm``: messages wait and no task runs, for
  :data:`~constructs_fifo.construct.settings.defaults.WORKERS_MISSING_PERIODS` minutes (scaling out from
  zero takes a few by itself): the service cannot start its tasks (image, subnets, quota). A task
  counts as running while the service publishes ``CPUUtilization`` (ECS's basic metric, no Container
  Insights needed, so it holds for a given cluster too);
- ``HeartbeatFailuresAlarm``: a worker's renewal of a running job's visibility or claim was refused or
  failed (``HeartbeatFailures``): the run is stale, another worker may hold the job;
- ``JobDurationExceededAlarm``: a run was stopped at ``max_job_duration`` (``JobDurationExceeded``).

Each description names the first command to run, as the queue's alarms do.
"""

from __future__ import annotations

from typing import Final

from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_fifo.construct.observability.alarms import add_actions, describe, first_command
from constructs_fifo.construct.observability.metrics import QueueMetrics
from constructs_fifo.construct.settings import defaults

__all__ = [
    "HEARTBEAT_FAILURES_ALARM_ID",
    "JOB_DURATION_EXCEEDED_ALARM_ID",
    "WORKERS_MISSING_ALARM_ID",
    "WORKER_ALARM_IDS",
    "build_worker_alarms",
    "build_worker_observability",
    "worker_widgets",
]


WORKERS_MISSING_ALARM_ID: Final = "WorkersMissingAlarm"
HEARTBEAT_FAILURES_ALARM_ID: Final = "HeartbeatFailuresAlarm"
JOB_DURATION_EXCEEDED_ALARM_ID: Final = "JobDurationExceededAlarm"
#: The workers' alarms, in the order they follow the queue's age and DLQ alarms.
WORKER_ALARM_IDS: Final = (
    WORKERS_MISSING_ALARM_ID,
    HEARTBEAT_FAILURES_ALARM_ID,
    JOB_DURATION_EXCEEDED_ALARM_ID,
)


def _tasks_missing(queue: sqs.IQueue, service: ecs.FargateService) -> cloudwatch.MathExpression:
    """1 in a minute with visible messages and no running task (no CPUUtilization sample), else 0."""
    period = defaults.ALARM_PERIOD
    return cloudwatch.MathExpression(
        expression="IF(visible > 0 AND FILL(tasks, 0) == 0, 1, 0)",
        using_metrics={
            "visible": queue.metric_approximate_number_of_messages_visible(
                period=period, statistic="Maximum"
            ),
            "tasks": service.metric_cpu_utilization(period=period, statistic="SampleCount"),
        },
        period=period,
        label="backlog without a running task",
    )


def build_worker_alarms(
    scope: Construct,
    *,
    queue: sqs.IQueue,
    service: ecs.FargateService,
    cluster: ecs.ICluster,
    log_group: logs.ILogGroup,
    metrics: QueueMetrics,
) -> list[cloudwatch.Alarm]:
    """Create the workers' alarms in ``scope`` (the queue construct, whose path the commands name).

    Returns
    -------
    list of cloudwatch.Alarm
        Workers missing, heartbeat failures, job past ``max_job_duration`` (:data:`WORKER_ALARM_IDS`).
    """
    period = defaults.ALARM_PERIOD
    logs_tail = f"aws logs tail {log_group.log_group_name} --since 1h --filter-pattern"
    events = (
        f"aws ecs describe-services --cluster {cluster.cluster_name} --services {service.service_name} "
        "--query 'services[0].events[:5]'"
    )
    missing = cloudwatch.Alarm(
        scope,
        WORKERS_MISSING_ALARM_ID,
        metric=_tasks_missing(queue, service),
        threshold=1,
        comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluation_periods=defaults.WORKERS_MISSING_PERIODS,
        alarm_description=describe(
            "Jobs wait in the queue and no worker task has run for "
            f"{defaults.WORKERS_MISSING_PERIODS} minutes: the service cannot start its tasks (the image "
            "cannot be pulled, the subnets reach no registry or AWS API, a Fargate quota) or its scaling "
            "is stuck. The service's events say why.",
            events,
            first_command(scope, "status"),
        ),
        treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
    )
    heartbeats = cloudwatch.Alarm(
        scope,
        HEARTBEAT_FAILURES_ALARM_ID,
        metric=metrics.metric_heartbeat_failures(period=period),
        threshold=1,
        comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluation_periods=defaults.ALARM_EVALUATION_PERIODS,
        alarm_description=describe(
            "A worker could not renew a running job (its records' visibility or its claim): the receipt "
            "expired or another worker holds the claim, so the run is stale and its writes are refused; "
            "the job runs again elsewhere. Repeated: the heartbeat_interval is too close to the "
            "visibility_timeout, or the task is starved of CPU.",
            f"{logs_tail} HeartbeatFailures",
            first_command(scope, "status"),
        ),
        treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
    )
    duration = cloudwatch.Alarm(
        scope,
        JOB_DURATION_EXCEEDED_ALARM_ID,
        metric=metrics.metric_job_duration_exceeded(period=period),
        threshold=1,
        comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluation_periods=defaults.ALARM_EVALUATION_PERIODS,
        alarm_description=describe(
            "A job ran past max_job_duration and was stopped, counted as a failed attempt: it hangs, "
            "or max_job_duration is shorter than the job needs. After max_attempts it is dead.",
            f"{logs_tail} JobDurationExceeded",
            first_command(scope, "dlq list"),
        ),
        treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
    )
    return [missing, heartbeats, duration]


def worker_widgets(
    *, alarms: dict[str, cloudwatch.Alarm], metrics: QueueMetrics, slots: int
) -> list[cloudwatch.IWidget]:
    """The dashboard row of the workers, in the place of the function's: slots running a job per task
    (busiest and average) against ``slots``, heartbeat failures, runs stopped at ``max_job_duration``."""
    period = defaults.ALARM_PERIOD
    heartbeats, duration = alarms[HEARTBEAT_FAILURES_ALARM_ID], alarms[JOB_DURATION_EXCEEDED_ALARM_ID]
    width = 8
    return [
        cloudwatch.GraphWidget(
            title="Workers: slots running a job, per task",
            left=[
                metrics.metric_running_slots(statistic="Maximum", period=period),
                metrics.metric_running_slots(period=period),
            ],
            left_annotations=[cloudwatch.HorizontalAnnotation(value=slots, label="slots")],
            width=width,
        ),
        cloudwatch.GraphWidget(
            title="Workers: heartbeat failures",
            left=[heartbeats.metric],
            left_annotations=[heartbeats.to_annotation()],
            width=width,
        ),
        cloudwatch.GraphWidget(
            title="Workers: runs past max_job_duration",
            left=[duration.metric],
            left_annotations=[duration.to_annotation()],
            width=width,
        ),
    ]


def build_worker_observability(
    scope: Construct,
    queue: sqs.IQueue,
    service: ecs.FargateService,
    log_group: logs.ILogGroup,
    *,
    slots: int,
    topic: sns.ITopic | None,
) -> tuple[list[cloudwatch.Alarm], list[cloudwatch.IWidget]]:
    """The workers' alarms (with ``topic`` as their alarm and OK actions) and their dashboard row, in
    ``scope``: the queue construct, whose runtime metrics they read."""
    metrics = scope
    assert isinstance(metrics, QueueMetrics), scope  # the queue construct
    alarms = build_worker_alarms(
        scope, queue=queue, service=service, cluster=service.cluster, log_group=log_group, metrics=metrics
    )
    add_actions(alarms, topic)
    widgets = worker_widgets(alarms={alarm.node.id: alarm for alarm in alarms}, metrics=metrics, slots=slots)
    return alarms, widgets
