"""``SnsFifoIngress``: an SNS FIFO topic's messages into an ``OrderedAgentQueue``, the group passed through.

An SNS FIFO topic delivers to an SQS FIFO subscription in order per message group, with the
publisher's ``MessageGroupId`` and deduplication id (SNS: fifo-message-delivery). With raw message
delivery the queue receives the published message itself as the body, and the published message
attributes as SQS message attributes, so a publisher that sends what ``JobProducer`` sends (the body
of :func:`constructs_fifo.client.producer.validate_job`, ``MessageGroupId=group``,
``MessageDeduplicationId=job_id`` and ``MessageAttributes=message_attributes(job)``) makes jobs that
run, die and are triaged exactly like the producer's.

Builds, in this construct: the subscription (``AWS::SNS::Subscription``, construct id ``Subscription``:
protocol ``sqs``, ``RawMessageDelivery``, the optional filter policy, ``UndeliveredQueue`` as its
redrive policy: FIFO, encrypted like the job queue, 14 days, with ``UndeliveredAlarm``). On the job
queue: a queue policy statement letting ``sns.amazonaws.com`` send for this topic only
(``aws:SourceArn``, the ARN built from the topic's name when the stack fixes it, so a topic
encrypted with the same key makes no cycle); with
a key, the key policy statement SNS needs to encrypt for this topic (``kms:GenerateDataKey``,
``kms:Decrypt``),
or a warning for an imported key (:data:`~.staging.WARNING_INGRESS_KEY_POLICY`).

On the emulator: moto 5.2.5 has no CloudFormation type for ``AWS::SNS::Subscription`` (the stack
completes without it); its SNS API, called directly, delivers FIFO raw as described above.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from aws_cdk import ArnFormat, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_fifo.construct.ingress.errors import InvalidIngressPropsError
from constructs_fifo.construct.ingress.staging import (
    allow_service_on_key,
    build_undelivered_alarm,
    encrypted_queue,
)
from constructs_fifo.construct.resources.permissions import ENQUEUE_ACTIONS
from constructs_fifo.construct.settings import defaults, tokens

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.construct.ordered_agent_queue import OrderedAgentQueue

__all__ = ["SnsFifoIngress"]

_SNS_SERVICE: Final = "sns.amazonaws.com"


class SnsFifoIngress(Construct):
    """An SNS FIFO topic's messages as jobs of an ``OrderedAgentQueue``, in order per message group.

    Parameters
    ----------
    scope, id
        The parent construct and this construct's id.
    queue
        The :class:`~constructs_fifo.construct.OrderedAgentQueue` the jobs go to.
    topic
        An SNS FIFO topic (``sns.Topic(..., fifo=True)``, or imported by an ARN ending in ``.fifo``).
    filter_policy
        Which messages become jobs, by their message attributes
        (``{"jobType": sns.SubscriptionFilter.string_filter(allowlist=["run_tests"])}``). Default all.
    alarm_topic
        SNS topic notified when a message could not be delivered. Default none.

    Raises
    ------
    InvalidIngressPropsError
        The topic is not a FIFO topic.
    """

    #: The topic's subscription of the job queue.
    subscription: sns.Subscription
    #: The subscription's dead-letter queue (FIFO, as a FIFO topic's must be): what SNS gave up on.
    undelivered_queue: sqs.Queue

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        queue: OrderedAgentQueue,
        topic: sns.ITopic,
        filter_policy: Mapping[str, sns.SubscriptionFilter] | None = None,
        alarm_topic: sns.ITopic | None = None,
    ) -> None:
        super().__init__(scope, id)
        if not topic.fifo:
            raise InvalidIngressPropsError(
                type(self).__name__,
                [
                    f"topic={topic.node.path!r} is not allowed: it is a standard topic, which cannot "
                    "deliver to a FIFO queue and carries no message group. Fix: an SNS FIFO topic, "
                    "sns.Topic(..., fifo=True), or an ARN ending in '.fifo'."
                ],
            )
        job_queue = queue.queue
        topic_arn = _topic_arn(topic)
        job_queue.add_to_resource_policy(
            iam.PolicyStatement(
                actions=list(ENQUEUE_ACTIONS),
                principals=[iam.ServicePrincipal(_SNS_SERVICE)],
                resources=[job_queue.queue_arn],
                conditions={"ArnEquals": {"aws:SourceArn": topic_arn}},
            )
        )
        if queue.encryption_key is not None:
            allow_service_on_key(
                self,
                queue.encryption_key,
                service=_SNS_SERVICE,
                source_arn=topic_arn,
                purpose="the topic's delivery",
            )
        self.undelivered_queue = encrypted_queue(
            self,
            "UndeliveredQueue",
            encryption_key=queue.encryption_key,
            fifo=True,
            retention_period=defaults.DLQ_RETENTION,
        )
        build_undelivered_alarm(
            self,
            self.undelivered_queue,
            meaning=f"Messages of {self.node.path} could not reach the job queue: SNS gave up delivering "
            "them (a denied key or queue policy, a deleted queue).",
            alarm_topic=alarm_topic,
            named_by_a_queue=False,
        )
        # Binding the dead-letter queue adds its policy: sns.amazonaws.com may send for this topic only.
        self.subscription = sns.Subscription(
            self,
            "Subscription",
            topic=topic,
            endpoint=job_queue.queue_arn,
            protocol=sns.SubscriptionProtocol.SQS,
            raw_message_delivery=True,
            filter_policy=dict(filter_policy) if filter_policy is not None else None,
            dead_letter_queue=self.undelivered_queue,
        )


def _topic_arn(topic: sns.ITopic) -> str:
    """The topic's ARN, built from its name when the stack fixes that name at synth.

    A topic encrypted with the job queue's key depends on the key; a key policy naming the topic by
    ``Ref`` would make the key depend on the topic: a cycle. CDK names a FIFO topic at synth, so its
    ARN can be written without a reference.
    """
    resource = topic.node.default_child if isinstance(topic, sns.Topic) else None
    name = resource.topic_name if isinstance(resource, sns.CfnTopic) else None
    if name is None or tokens.is_unresolved(name):
        return topic.topic_arn
    return Stack.of(topic).format_arn(service="sns", resource=name, arn_format=ArnFormat.NO_RESOURCE_NAME)
