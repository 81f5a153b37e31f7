"""The CloudWatch dashboard of an :class:`~constructs_fifo.construct.OrderedAgentQueue`.

One dashboard per queue (construct id ``Dashboard``, unless ``dashboard=False``), read top to bottom:

1. the first commands to run, with the stack and queue filled in
   (:func:`~constructs_fifo.construct.observability.alarms.first_command`);
2. the queue: visible and in-flight messages, age of the oldest message, DLQ depth;
3. the function: invocations, errors and throttles, duration p50/p99, concurrency against the
   reserved concurrency (the container consumer: its workers' row,
   :func:`~constructs_fifo.construct.observability.workers.worker_widgets`);
4. the runtime's metrics (:mod:`constructs_fifo.runtime.observability`): jobs succeeded, failed and
   dead-lettered; duplicates skipped and (claim mode) claim conflicts; (PARK) parked groups and kept
   jobs; (state mode) the age of the oldest open sequence gap;
5. the DynamoDB capacity units the runtime's calls consumed (``CapacityUnitsConsumed``) beside the jobs
   succeeded: their ratio is what a job costs in DynamoDB (docs/capacity.md).

A graph of a metric an alarm watches draws the alarm's own metric with its threshold as a horizontal
annotation, so the line and the threshold are the ones the alarm compares. There is no alarm status
widget: it names alarms by ARN (``Fn::GetAtt``), which the local emulator cannot resolve (moto
creates no ``AWS::CloudWatch::Alarm``), so a stack with one would not deploy there. Every graph uses the
alarms' period. Building it costs a few dozen jsii calls (no lookups, no custom resources): the
dashboard body is one ``Fn::Join`` rendered at synth.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_fifo.construct.observability.alarms import (
    ALARM_IDS,
    PARKED_GROUPS_ALARM_ID,
    SEQUENCE_GAP_ALARM_ID,
    first_command,
)
from constructs_fifo.construct.settings import defaults
from constructs_fifo.runtime import constants

__all__ = [
    "DASHBOARD_ID",
    "DashboardMetrics",
    "MetricFactory",
    "build_dashboard",
    "check_dashboard",
    "runtime_metrics",
]

#: The construct id of the dashboard.
DASHBOARD_ID: Final = "Dashboard"

_FULL_WIDTH: Final = 24
_THIRD: Final = 8
_QUARTER: Final = 6
_GRAPH_HEIGHT: Final = 6


def check_dashboard(dashboard: object) -> list[str]:
    """The problem with the ``dashboard`` prop, if any (it must be a bool)."""
    if isinstance(dashboard, bool):
        return []
    return [
        f"dashboard={dashboard!r} is not a bool: it says whether the construct builds its CloudWatch "
        "dashboard; pass dashboard=True (default) or dashboard=False."
    ]


@dataclass(frozen=True)
class DashboardMetrics:
    """The runtime's metrics the dashboard draws (``None``: not published in this mode or policy).

    Every metric here uses the alarms' period; ``groups_parked`` and ``sequence_gap`` are the alarms'
    own metrics when those alarms exist.
    """

    succeeded: cloudwatch.IMetric
    failed: cloudwatch.IMetric
    dead_lettered: cloudwatch.IMetric
    duplicates_skipped: cloudwatch.IMetric
    claim_conflicts: cloudwatch.IMetric | None
    groups_parked: cloudwatch.IMetric | None
    jobs_kept: cloudwatch.IMetric | None
    sequence_gap: cloudwatch.IMetric | None
    capacity_units: cloudwatch.IMetric


class MetricFactory(Protocol):
    """A queue's runtime metric by name (:meth:`OrderedAgentQueue.metric`)."""

    def __call__(
        self, metric_name: str, *, statistic: str = ..., period: Duration | None = ...
    ) -> cloudwatch.Metric: ...


def runtime_metrics(
    metric: MetricFactory, *, alarms: dict[str, cloudwatch.Alarm], claims: bool, parks: bool
) -> DashboardMetrics:
    """The runtime's metrics to draw, at the alarms' period: the alarm's own metric where one watches
    it; claim conflicts in claim mode only, kept jobs with the PARK policy only."""
    period = defaults.ALARM_PERIOD
    parked_alarm, gap_alarm = alarms.get(PARKED_GROUPS_ALARM_ID), alarms.get(SEQUENCE_GAP_ALARM_ID)
    return DashboardMetrics(
        succeeded=metric(constants.METRIC_JOBS_SUCCEEDED, period=period),
        failed=metric(constants.METRIC_JOBS_FAILED, period=period),
        dead_lettered=metric(constants.METRIC_JOBS_DEAD_LETTERED, period=period),
        duplicates_skipped=metric(constants.METRIC_DUPLICATES_SKIPPED, period=period),
        claim_conflicts=metric(constants.METRIC_CLAIM_CONFLICTS, period=period) if claims else None,
        groups_parked=parked_alarm.metric if parked_alarm is not None else None,
        jobs_kept=metric(constants.METRIC_JOBS_KEPT, period=period) if parks else None,
        sequence_gap=gap_alarm.metric if gap_alarm is not None else None,
        capacity_units=metric(constants.METRIC_CAPACITY_UNITS_CONSUMED, period=period),
    )


def _annotations(*alarms: cloudwatch.Alarm | None) -> list[cloudwatch.HorizontalAnnotation]:
    return [alarm.to_annotation() for alarm in alarms if alarm is not None]


def _graph(
    title: str,
    left: list[cloudwatch.IMetric],
    *,
    width: int = _THIRD,
    alarms: tuple[cloudwatch.Alarm | None, ...] = (),
    extra: list[cloudwatch.HorizontalAnnotation] | None = None,
) -> cloudwatch.GraphWidget:
    return cloudwatch.GraphWidget(
        title=title,
        left=left,
        left_annotations=[*_annotations(*alarms), *(extra or [])],
        left_y_axis=cloudwatch.YAxisProps(min=0, show_units=False),
        width=width,
        height=_GRAPH_HEIGHT,
        period=defaults.ALARM_PERIOD,
    )


def _commands_text(queue_construct: Construct, metrics: DashboardMetrics) -> str:
    commands = [first_command(queue_construct, "status")]
    if metrics.groups_parked is not None:
        commands.append(first_command(queue_construct, "groups list --parked"))
    if metrics.sequence_gap is not None:
        commands.append(first_command(queue_construct, "groups list --gaps"))
    commands.append(first_command(queue_construct, "dlq list"))
    lines = "\n".join(f"    {command}" for command in commands)
    return (
        f"## {queue_construct.node.path}\n"
        "Each alarm's description says what it means and the first command to run. To start:\n\n"
        f"{lines}"
    )


def build_dashboard(
    scope: Construct,
    *,
    queue: sqs.IQueue,
    function: lambda_.IFunction | None,
    reserved_concurrency: int | float | None,
    alarms: Sequence[cloudwatch.Alarm],
    metric: MetricFactory,
    claims: bool,
    parks: bool,
    consumer_widgets: Sequence[cloudwatch.IWidget] = (),
) -> cloudwatch.Dashboard:
    """Create the dashboard in ``scope`` (the queue construct, whose path the commands name).

    Parameters
    ----------
    scope
        The ``OrderedAgentQueue``.
    queue, function
        The job queue and the function.
    reserved_concurrency
        The function's reserved concurrency, drawn on the concurrency graph (not drawn when ``None``:
        no reservation).
    alarms
        The construct's alarms (:data:`~constructs_fifo.construct.observability.alarms.ALARM_IDS` and
        the optional ones): each is drawn with its threshold on the graph of its metric.
    metric, claims, parks
        The queue's runtime metrics by name, whether it is in claim mode and parks dead jobs
        (:func:`runtime_metrics`).
    consumer_widgets
        With ``function=None``: the consumer's row, in the place of the function's.

    Returns
    -------
    cloudwatch.Dashboard
        Its name is left to CloudFormation (unique per stack and construct).
    """
    by_id = {alarm.node.id: alarm for alarm in alarms}
    metrics = runtime_metrics(metric, alarms=by_id, claims=claims, parks=parks)
    age_id, dlq_id, _errors_id, _throttles_id = ALARM_IDS
    age, dead_letters = by_id[age_id], by_id[dlq_id]
    period = defaults.ALARM_PERIOD
    rows: list[list[cloudwatch.IWidget]] = [
        [cloudwatch.TextWidget(markdown=_commands_text(scope, metrics), width=_FULL_WIDTH, height=4)],
        [
            _graph(
                "Queue: messages visible and in flight",
                [
                    queue.metric_approximate_number_of_messages_visible(
                        period=period, statistic="Maximum", label="visible"
                    ),
                    queue.metric_approximate_number_of_messages_not_visible(
                        period=period, statistic="Maximum", label="in flight"
                    ),
                ],
            ),
            _graph("Queue: age of oldest message (seconds)", [age.metric], alarms=(age,)),
            _graph("Dead-letter queue: messages", [dead_letters.metric], alarms=(dead_letters,)),
        ],
        _function_row(function, by_id, reserved_concurrency)
        if function is not None
        else list(consumer_widgets),
    ]
    rows.append(_runtime_row(metrics, by_id))
    # What the jobs cost in DynamoDB, as the runtime's calls reported it (docs/capacity.md): units per job
    # is this Sum over JobsSucceeded's.
    rows.append(
        [
            _graph(
                "DynamoDB capacity units consumed (read + write)",
                [metrics.capacity_units, metrics.succeeded],
                width=_FULL_WIDTH // 2,
            )
        ]
    )
    # Every row in the one constructor call (one jsii call, not one per row).
    return cloudwatch.Dashboard(scope, DASHBOARD_ID, widgets=rows)


def _function_row(
    function: lambda_.IFunction,
    by_id: dict[str, cloudwatch.Alarm],
    reserved_concurrency: int | float | None,
) -> list[cloudwatch.IWidget]:
    _age_id, _dlq_id, errors_id, throttles_id = ALARM_IDS
    errors, throttles = by_id[errors_id], by_id[throttles_id]
    period = defaults.ALARM_PERIOD
    return [
        _graph(
            "Function: invocations, errors, throttles",
            [
                function.metric_invocations(period=period, statistic="Sum", label="invocations"),
                errors.metric,
                throttles.metric,
            ],
            alarms=(errors, throttles),
        ),
        _graph(
            "Function: duration (ms)",
            [
                function.metric_duration(period=period, statistic="p50", label="p50"),
                function.metric_duration(period=period, statistic="p99", label="p99"),
            ],
        ),
        _graph(
            "Function: concurrency",
            [function.metric("ConcurrentExecutions", period=period, statistic="Maximum")],
            extra=(
                [cloudwatch.HorizontalAnnotation(value=reserved_concurrency, label="reserved concurrency")]
                if reserved_concurrency is not None
                else []
            ),
        ),
    ]


def _runtime_row(metrics: DashboardMetrics, by_id: dict[str, cloudwatch.Alarm]) -> list[cloudwatch.IWidget]:
    runtime: list[cloudwatch.IWidget] = [
        _graph(
            "Jobs: succeeded, failed, dead-lettered",
            [metrics.succeeded, metrics.failed, metrics.dead_lettered],
            width=_QUARTER,
        ),
        _graph(
            "Jobs: duplicates skipped, claim conflicts"
            if metrics.claim_conflicts is not None
            else "Jobs: duplicates skipped",
            [metrics.duplicates_skipped, *([metrics.claim_conflicts] if metrics.claim_conflicts else [])],
            width=_QUARTER,
        ),
    ]
    if metrics.groups_parked is not None and metrics.jobs_kept is not None:
        runtime.append(
            _graph(
                "Groups parked, jobs kept",
                [metrics.groups_parked, metrics.jobs_kept],
                width=_QUARTER,
                alarms=(by_id.get(PARKED_GROUPS_ALARM_ID),),
            )
        )
    if metrics.sequence_gap is not None:
        runtime.append(
            _graph(
                "Sequence gap open (seconds)",
                [metrics.sequence_gap],
                width=_QUARTER,
                alarms=(by_id.get(SEQUENCE_GAP_ALARM_ID),),
            )
        )
    return runtime
