"""What the ingress constructs share: queues encrypted like the job queue, the alarm on a queue of
undeliverable events, and the key policy statements a delivering service needs.

Encrypted like the job queue means: with the queue's ``encryption_key`` when it has one (SSE-KMS),
SQS-managed SSE otherwise; TLS only either way. A service that sends to a queue encrypted with a
customer managed key needs ``kms:GenerateDataKey`` and ``kms:Decrypt`` on it; the key policy names the
service principal and the one source it acts for (``aws:SourceArn``). An imported key's policy is not
the stack's: the construct then warns (:data:`WARNING_INGRESS_KEY_POLICY`) with the statement to add.
"""

from __future__ import annotations

from typing import Final

from aws_cdk import Acknowledgment, Annotations, Duration, Validations
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_fifo.construct.resources.permissions import ENQUEUE_KEY_ACTIONS
from constructs_fifo.construct.settings import defaults

__all__ = [
    "DESTINATION_ACKNOWLEDGEMENT",
    "STAGING_MAX_RECEIVE_COUNT",
    "STAGING_RETENTION",
    "UNDELIVERED_ACKNOWLEDGEMENT",
    "WARNING_INGRESS_KEY_POLICY",
    "allow_service_on_key",
    "build_undelivered_alarm",
    "encrypted_queue",
    "role_policy",
]

#: Receives of a staged event before SQS moves it to the staging dead-letter queue: a pipe that
#: cannot deliver it (a missing group field, a refused id) retries it this often.
STAGING_MAX_RECEIVE_COUNT: Final = 5
#: How long a staged event waits for the pipe: SQS's default of 4 days, written out.
STAGING_RETENTION: Final = Duration.days(4)
#: The warning id when the job queue's key is imported and a delivering service needs its policy.
WARNING_INGRESS_KEY_POLICY: Final = "constructs-fifo:ingressKeyPolicyNotManaged"
#: cdk-nag's Serverless-SQSRedrivePolicy on a queue that is itself the end of the line.
UNDELIVERED_ACKNOWLEDGEMENT: Final = Acknowledgment(
    id="Serverless::Serverless-SQSRedrivePolicy",
    reason="This queue keeps the events that could not be delivered, 14 days, for inspection and redrive, "
    "and alarms when one arrives; a dead-letter queue of its own would only move them further away.",
)

#: cdk-nag's AwsSolutions-SQS3 on a dead-letter queue that no other queue's RedrivePolicy names.
DESTINATION_ACKNOWLEDGEMENT: Final = Acknowledgment(
    id="AwsSolutions::AwsSolutions-SQS3",
    reason="This queue is a dead-letter queue: the destination of an SNS subscription's RedrivePolicy or of "
    "an EventBridge subscriber's OnFailureConfiguration; the rule recognizes only a queue that another "
    "queue's RedrivePolicy names.",
)


def encrypted_queue(
    scope: Construct,
    id: str,
    *,
    encryption_key: kms.IKey | None,
    fifo: bool = False,
    retention_period: Duration = STAGING_RETENTION,
    dead_letter_queue: sqs.IQueue | None = None,
) -> sqs.Queue:
    """A queue encrypted like the job queue (its key, or SQS-managed SSE), TLS only."""
    return sqs.Queue(
        scope,
        id,
        fifo=True if fifo else None,
        retention_period=retention_period,
        encryption=sqs.QueueEncryption.KMS if encryption_key else sqs.QueueEncryption.SQS_MANAGED,
        encryption_master_key=encryption_key,
        enforce_ssl=True,
        dead_letter_queue=(
            sqs.DeadLetterQueue(queue=dead_letter_queue, max_receive_count=STAGING_MAX_RECEIVE_COUNT)
            if dead_letter_queue is not None
            else None
        ),
    )


def build_undelivered_alarm(
    scope: Construct,
    queue: sqs.Queue,
    *,
    meaning: str,
    alarm_topic: sns.ITopic | None,
    named_by_a_queue: bool = True,
) -> cloudwatch.Alarm:
    """The alarm (construct id ``UndeliveredAlarm``) on a queue of undeliverable events: one is enough.

    Also acknowledges cdk-nag's redrive rule on ``queue`` (:data:`UNDELIVERED_ACKNOWLEDGEMENT`) and,
    when no queue's redrive policy names it (``named_by_a_queue=False``), its dead-letter queue rule
    (:data:`DESTINATION_ACKNOWLEDGEMENT`).
    """
    Validations.of(queue).acknowledge(UNDELIVERED_ACKNOWLEDGEMENT)
    if not named_by_a_queue:
        Validations.of(queue).acknowledge(DESTINATION_ACKNOWLEDGEMENT)
    alarm = cloudwatch.Alarm(
        scope,
        "UndeliveredAlarm",
        metric=queue.metric_approximate_number_of_messages_visible(
            period=defaults.ALARM_PERIOD, statistic="Maximum"
        ),
        threshold=1,
        comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        alarm_description=(
            f"{meaning} Read one (sqs receive-message on this queue), fix its cause, then move them back "
            "with a redrive (StartMessageMoveTask) to where they came from."
        ),
        evaluation_periods=defaults.ALARM_EVALUATION_PERIODS,
        treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
    )
    if alarm_topic is not None:
        action = cloudwatch_actions.SnsAction(alarm_topic)
        alarm.add_alarm_action(action)
        alarm.add_ok_action(action)
    return alarm


def allow_service_on_key(
    scope: Construct, key: kms.IKey, *, service: str, source_arn: str, purpose: str
) -> None:
    """Let ``service`` (e.g. ``sns.amazonaws.com``) encrypt for ``source_arn`` with ``key``, or warn.

    Parameters
    ----------
    scope
        The construct the warning is attached to.
    key
        The job queue's key.
    service
        The service principal that sends to a queue encrypted with ``key``.
    source_arn
        The one resource the service acts for (``aws:SourceArn``).
    purpose
        What the statement is for, in the warning.
    """
    statement = iam.PolicyStatement(
        actions=list(ENQUEUE_KEY_ACTIONS),
        principals=[iam.ServicePrincipal(service)],
        resources=["*"],
        conditions={"ArnEquals": {"aws:SourceArn": source_arn}},
    )
    if not key.add_to_resource_policy(statement).statement_added:
        Annotations.of(scope).add_warning_v2(
            WARNING_INGRESS_KEY_POLICY,
            f"the queue's encryption_key is imported, so this stack cannot add to its key policy the "
            f"statement {purpose} needs (deliveries fail without it): allow the service principal "
            f"{service} {', '.join(ENQUEUE_KEY_ACTIONS)} on the key, with the condition ArnEquals "
            "aws:SourceArn = the sending resource's ARN.",
        )


def role_policy(role: iam.Role) -> Construct:
    """The role's default policy (its statements), for a resource that must be created after it.

    Depending on the policy alone, not on the role too: the role is already a dependency of every
    resource naming its ARN (cfn-lint W3005 reports the repeated one).
    """
    policy = role.node.try_find_child("DefaultPolicy")
    assert isinstance(policy, Construct), "role_policy() needs a role with statements"
    return policy
