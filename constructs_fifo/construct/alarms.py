"""The alarms of an :class:`~constructs_fifo.construct.OrderedAgentQueue`.

Construct ids are stable (``QueueAgeAlarm``, ``DeadLetterQueueAlarm``, ``FunctionErrorsAlarm``,
``FunctionThrottlesAlarm`` and, under the PARK policy, ``ParkedGroupsAlarm``); missing data is not
breaching, since an idle queue publishes none.
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_fifo.construct import defaults, tokens

__all__ = ["ALARM_IDS", "PARKED_GROUPS_ALARM_ID", "SEQUENCE_GAP_ALARM_ID", "build_alarms"]

#: Construct ids of the alarms every queue has, in the order of ``OrderedAgentQueue.alarms``.
ALARM_IDS = ("QueueAgeAlarm", "DeadLetterQueueAlarm", "FunctionErrorsAlarm", "FunctionThrottlesAlarm")
#: The alarm that follows them under the PARK policy.
PARKED_GROUPS_ALARM_ID = "ParkedGroupsAlarm"
#: The alarm that follows them in state mode.
SEQUENCE_GAP_ALARM_ID = "SequenceGapAlarm"


def _threshold_seconds(duration: Duration) -> int | float:
    """``duration.to_seconds()``: whole seconds (a token stays a token, a fraction raises as CDK does)."""
    seconds = tokens.seconds(duration)
    if seconds is not None and seconds.is_integer():
        return int(seconds)
    return duration.to_seconds()


def build_alarms(
    scope: Construct,
    *,
    queue: sqs.IQueue,
    dead_letter_queue: sqs.IQueue,
    function: lambda_.IFunction,
    age_alarm_threshold: Duration,
    alarm_topic: sns.ITopic | None,
    groups_parked: cloudwatch.IMetric | None = None,
    sequence_gap: tuple[cloudwatch.IMetric, Duration] | None = None,
) -> list[cloudwatch.Alarm]:
    """Create the alarms in ``scope``.

    Parameters
    ----------
    scope
        The parent construct.
    queue, dead_letter_queue, function
        What the alarms watch.
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
        Queue age, DLQ depth, function errors, function throttles (in that order), then parked groups.
    """
    period = defaults.ALARM_PERIOD
    age_id, dlq_id, errors_id, throttles_id = ALARM_IDS
    alarms = [
        cloudwatch.Alarm(
            scope,
            age_id,
            metric=queue.metric_approximate_age_of_oldest_message(period=period, statistic="Maximum"),
            threshold=_threshold_seconds(age_alarm_threshold),
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            alarm_description="The oldest message of the job queue is older than the threshold: "
            "a group is stuck or the consumer is falling behind.",
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
            alarm_description="Jobs are waiting in the dead-letter queue: each died itself (the "
            "runtime's max_attempts, a permanent error or a malformed body).",
            evaluation_periods=defaults.ALARM_EVALUATION_PERIODS,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        ),
        cloudwatch.Alarm(
            scope,
            errors_id,
            metric=function.metric_errors(period=period, statistic="Sum"),
            threshold=0,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            alarm_description="The job function raised or timed out (not a reported job failure).",
            evaluation_periods=defaults.ALARM_EVALUATION_PERIODS,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        ),
        cloudwatch.Alarm(
            scope,
            throttles_id,
            metric=function.metric_throttles(period=period, statistic="Sum"),
            threshold=0,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            alarm_description="The job function was throttled: raise reserved_concurrency or lower "
            "max_concurrency.",
            evaluation_periods=defaults.ALARM_EVALUATION_PERIODS,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        ),
    ]
    if groups_parked is not None:
        alarms.append(
            cloudwatch.Alarm(
                scope,
                PARKED_GROUPS_ALARM_ID,
                metric=groups_parked,
                threshold=1,
                comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
                alarm_description="A message group was parked at a dead job: its later jobs are kept, in "
                "order, until an operator resumes it (constructs_fifo.client.ParkedGroups).",
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
                alarm_description="A group's producer sequence has a gap open longer than gap_timeout: a "
                "job was lost or delayed upstream, and the jobs after it wait in the reorder buffer.",
                evaluation_periods=defaults.ALARM_EVALUATION_PERIODS,
                treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            )
        )
    if alarm_topic is not None:
        action = cloudwatch_actions.SnsAction(alarm_topic)
        for alarm in alarms:
            alarm.add_alarm_action(action)
            alarm.add_ok_action(action)
    return alarms
