"""The alarms of an :class:`~constructs_fifo.construct.OrderedAgentQueue`.

Construct ids are stable (``QueueAgeAlarm``, ``DeadLetterQueueAlarm``, ``FunctionErrorsAlarm``,
``FunctionThrottlesAlarm`` and, under the PARK policy, ``ParkedGroupsAlarm``; in state mode
``SequenceGapAlarm``); missing data is not breaching, since an idle queue publishes none.

Every alarm's description says what it means and the exact first command to run, with this queue's
stack and construct path filled in (:func:`first_command`): what an operator paged at night reads
first, in the SNS message and on the console.
"""

from __future__ import annotations

from typing import Final

from aws_cdk import Duration, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_fifo.construct.settings import defaults, tokens

__all__ = [
    "ALARM_IDS",
    "CLI",
    "PARKED_GROUPS_ALARM_ID",
    "SEQUENCE_GAP_ALARM_ID",
    "add_actions",
    "build_alarms",
    "cli_arguments",
    "describe",
    "first_command",
]

#: Construct ids of the alarms every queue has, in the order of ``OrderedAgentQueue.alarms``.
ALARM_IDS = ("QueueAgeAlarm", "DeadLetterQueueAlarm", "FunctionErrorsAlarm", "FunctionThrottlesAlarm")
#: The alarm that follows them under the PARK policy.
PARKED_GROUPS_ALARM_ID = "ParkedGroupsAlarm"
#: The alarm that follows them in state mode.
SEQUENCE_GAP_ALARM_ID = "SequenceGapAlarm"
#: The command line tool, as an operator types it.
CLI: Final = "constructs-fifo"


def cli_arguments(queue_construct: Construct) -> str:
    """``--stack STACK --queue PATH``: how the CLI names this queue.

    ``PATH`` is the construct's full path, which is what the CLI reads back from the template's
    ``aws:cdk:path`` metadata as the queue's construct path (see :mod:`constructs_fifo.stacks.deployed`),
    so it names exactly this queue whatever else the stack holds.
    """
    return f"--stack {Stack.of(queue_construct).stack_name} --queue {queue_construct.node.path}"


def first_command(queue_construct: Construct, command: str) -> str:
    """``constructs-fifo COMMAND --stack STACK --queue PATH`` for this queue."""
    return f"{CLI} {command} {cli_arguments(queue_construct)}"


def _threshold_seconds(duration: Duration) -> int | float:
    """``duration.to_seconds()``: whole seconds (a token stays a token, a fraction raises as CDK does)."""
    seconds = tokens.seconds(duration)
    if seconds is not None and seconds.is_integer():
        return int(seconds)
    return duration.to_seconds()


def describe(meaning: str, first: str, then: str = "") -> str:
    """What the alarm means, then the first command on a line of its own (and the next one)."""
    return f"{meaning}\nFirst run: {first}" + (f"\nThen: {then}" if then else "")


def build_alarms(
    scope: Construct,
    *,
    queue: sqs.IQueue,
    dead_letter_queue: sqs.IQueue,
    function: lambda_.IFunction | None,
    log_group: logs.ILogGroup,
    age_alarm_threshold: Duration,
    alarm_topic: sns.ITopic | None,
    groups_parked: cloudwatch.IMetric | None = None,
    sequence_gap: tuple[cloudwatch.IMetric, Duration] | None = None,
) -> list[cloudwatch.Alarm]:
    """Create the alarms in ``scope``.

    Parameters
    ----------
    scope
        The ``OrderedAgentQueue``: its stack and construct path are what the descriptions' commands
        name (``--stack`` and ``--queue``).
    queue, dead_letter_queue, function
        What the alarms watch; ``function=None`` (the container consumer): no errors and throttles
        alarms (the workers' own are :mod:`~constructs_fifo.construct.observability.workers`').
    log_group
        The function's log group, named by the errors alarm's first command.
    age_alarm_threshold
        The queue alarm fires when its oldest message is older than this.
    alarm_topic
        Optional SNS topic notified when an alarm fires and when it returns to OK.
    groups_parked
        The runtime's ``GroupsParked`` metric (Sum), under the PARK policy: a fifth alarm fires when a
        group is parked at a dead job.
    sequence_gap
        State mode: the runtime's ``SequenceGapOpenSeconds`` metric (Maximum) and the gap timeout: an
        alarm fires when a group's sequence gap has been open that long.

    Returns
    -------
    list of cloudwatch.Alarm
        Queue age, DLQ depth, function errors, function throttles (in that order; not without a
        function), then parked groups, then the sequence gap.
    """
    period = defaults.ALARM_PERIOD
    age_id, dlq_id, _errors_id, _throttles_id = ALARM_IDS
    status = first_command(scope, "status")
    alarms = [
        cloudwatch.Alarm(
            scope,
            age_id,
            metric=queue.metric_approximate_age_of_oldest_message(period=period, statistic="Maximum"),
            threshold=_threshold_seconds(age_alarm_threshold),
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            alarm_description=describe(
                "The oldest message of the job queue is older than the threshold: a group is stuck "
                "(a job retried again and again, a sequence gap, a full reorder buffer) or the function "
                "is falling behind. `status` shows the age, messages in flight, parked groups, gaps and "
                "the largest backlogs.",
                status,
            ),
            evaluation_periods=defaults.ALARM_EVALUATION_PERIODS,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        ),
        cloudwatch.Alarm(
            scope,
            dlq_id,
            metric=dead_letter_queue.metric_approximate_number_of_messages_visible(
                period=period, statistic="Maximum"
            ),
            threshold=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            alarm_description=describe(
                "Jobs are waiting in the dead-letter queue: each died (max_attempts runs, a permanent "
                "error or a malformed body) and was sent there, or SQS moved a message the function "
                "could not take. Never purge it blindly: a dead job there may be a group's only copy.",
                first_command(scope, "dlq list"),
                first_command(scope, "dlq show JOB"),
            ),
            evaluation_periods=defaults.ALARM_EVALUATION_PERIODS,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        ),
    ]
    if function is not None:
        alarms += _function_alarms(scope, function, log_group, status)
    return _then(scope, alarms, alarm_topic, groups_parked=groups_parked, sequence_gap=sequence_gap)


def _function_alarms(
    scope: Construct, function: lambda_.IFunction, log_group: logs.ILogGroup, status: str
) -> list[cloudwatch.Alarm]:
    period = defaults.ALARM_PERIOD
    _age_id, _dlq_id, errors_id, throttles_id = ALARM_IDS
    return [
        cloudwatch.Alarm(
            scope,
            errors_id,
            metric=function.metric_errors(period=period, statistic="Sum"),
            threshold=0,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            alarm_description=describe(
                "The job function raised or timed out (the runtime or a dependency failed, not a job "
                "that reported its failure): its whole batch returns after the visibility timeout.",
                f"aws logs tail {log_group.log_group_name} --since 30m",
                status,
            ),
            evaluation_periods=defaults.ALARM_EVALUATION_PERIODS,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        ),
        cloudwatch.Alarm(
            scope,
            throttles_id,
            metric=function.metric_throttles(period=period, statistic="Sum"),
            threshold=0,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            alarm_description=describe(
                "Lambda throttled the job function: throttled batches return to the queue with their "
                "receive counts raised. Raise reserved_concurrency (within the account's unreserved "
                "concurrency) or lower max_concurrency.",
                status,
            ),
            evaluation_periods=defaults.ALARM_EVALUATION_PERIODS,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        ),
    ]


def _then(
    scope: Construct,
    alarms: list[cloudwatch.Alarm],
    alarm_topic: sns.ITopic | None,
    *,
    groups_parked: cloudwatch.IMetric | None,
    sequence_gap: tuple[cloudwatch.IMetric, Duration] | None,
) -> list[cloudwatch.Alarm]:
    """The optional alarms after ``alarms``, then every alarm's actions."""
    if groups_parked is not None:
        alarms.append(
            cloudwatch.Alarm(
                scope,
                PARKED_GROUPS_ALARM_ID,
                metric=groups_parked,
                threshold=1,
                comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
                alarm_description=describe(
                    "A message group was parked at a dead job: its later jobs are kept, in order, until "
                    "an operator resumes it.",
                    first_command(scope, "groups list --parked"),
                    first_command(scope, "groups show GROUP"),
                ),
                evaluation_periods=defaults.ALARM_EVALUATION_PERIODS,
                treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            )
        )
    if sequence_gap is not None:
        metric, gap_timeout = sequence_gap
        alarms.append(
            cloudwatch.Alarm(
                scope,
                SEQUENCE_GAP_ALARM_ID,
                metric=metric,
                threshold=_threshold_seconds(gap_timeout),
                comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
                alarm_description=describe(
                    "A group's producer sequence has had a gap open longer than gap_timeout: a job was "
                    "lost or delayed upstream, and the jobs after it wait in the reorder buffer.",
                    first_command(scope, "groups list --gaps"),
                    first_command(scope, "groups show GROUP"),
                ),
                evaluation_periods=defaults.ALARM_EVALUATION_PERIODS,
                treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            )
        )
    add_actions(alarms, alarm_topic)
    return alarms


def add_actions(alarms: list[cloudwatch.Alarm], alarm_topic: sns.ITopic | None) -> None:
    """Make ``alarm_topic`` (if any) the alarm and OK action of every alarm of ``alarms``."""
    if alarm_topic is not None:
        action = cloudwatch_actions.SnsAction(alarm_topic)
        for alarm in alarms:
            alarm.add_alarm_action(action)
            alarm.add_ok_action(action)
