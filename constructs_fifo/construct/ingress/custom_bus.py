"""``CustomBusIngress`` (experimental): a FIFO subscriber of an EventBridge Custom Event Bus into an
``OrderedAgentQueue``.

The Custom Event Bus (CloudFormation ``AWS::EventsV2::EventBus`` and ``AWS::EventsV2::Subscriber``;
aws-cdk-lib's ``aws_eventsv2``, L1 only) keeps its events and delivers them to a ``FIFO`` subscriber
in publish order within each event group (the publisher's ``SystemMetadata.EventGroupId``), after
deduplicating publishes for 5 minutes (EventBridge: eb-custom-bus-ordering). Its SQS target parameters
take the group, the deduplication id and each message attribute as a literal or a JSONata expression
over ``$events`` (``Data``, ``Metadata``, ``SystemMetadata``; EventBridge: eb-custom-bus-transform,
API_SqsParameters), so, unlike a pipe, it can carry the triage attributes ``jobId``, ``jobType`` and
``group`` as ``JobProducer`` sends them.

Builds, in this construct: the subscriber (construct id ``Subscriber``: ``Type`` ``FIFO``, target the
job queue, a ``JSONATA`` transformer writing the job envelope, the SQS parameters, an optional filter on
the event data, failures to ``FailureQueue``), ``FailureQueue`` (FIFO, encrypted like the job queue,
14 days, with ``UndeliveredAlarm``) and ``Role``, assumed by ``events.amazonaws.com`` of this account,
allowed to send to those two queues only.

Experimental, because nothing here can run it: moto 5.2.5 has no EventsV2 model, so its CloudFormation
does not create these resources (the emulator cannot deploy a stack holding one); botocore 1.44.8 has
the client (``boto3.client("eventbridgev2")``: ``PutEvents``, ``PutRawEvents``), but no emulator
answers it. Synthesized and template-tested only: what a deploy does is for a real account to tell.
Order needs the group expression to name the same entity as the publisher's ``EventGroupId``: the bus
orders per event group, the queue per message group.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from aws_cdk import Names, Stack
from aws_cdk import aws_eventsv2 as eventsv2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_fifo.construct.ingress import paths
from constructs_fifo.construct.ingress.errors import InvalidIngressPropsError
from constructs_fifo.construct.ingress.staging import build_undelivered_alarm, encrypted_queue, role_policy
from constructs_fifo.construct.resources.permissions import grant_enqueue
from constructs_fifo.construct.settings import defaults

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.construct.ordered_agent_queue import OrderedAgentQueue

__all__ = ["SUBSCRIBER_TYPE_FIFO", "CustomBusIngress"]

#: The subscriber type that delivers in order within an event group.
SUBSCRIBER_TYPE_FIFO: Final = "FIFO"
_TRANSFORMER_JSONATA: Final = "JSONATA"
#: The filter scope of a pattern on the published data.
_FILTER_SCOPE_DATA: Final = "DATA"
_EVENTS_SERVICE: Final = "events.amazonaws.com"
#: A subscriber's name: at most 64 characters.
_MAX_NAME_LENGTH: Final = 64


class CustomBusIngress(Construct):
    """A Custom Event Bus's events as jobs of an ``OrderedAgentQueue``, through a FIFO subscriber.

    Parameters
    ----------
    scope, id
        The parent construct and this construct's id.
    queue
        The :class:`~constructs_fifo.construct.OrderedAgentQueue` the jobs go to.
    event_bus
        The bus: an ``eventsv2.CfnEventBus`` or its ARN.
    group_expression
        JSONata (without ``{% %}``) of each event's group, e.g. ``$events.Data.detail.accountId`` for an
        event published with ``PutEvents`` (``$events.Data.accountId`` with ``PutRawEvents``). Name the
        same entity as the publisher's ``EventGroupId``.
    job_type, job_type_expression
        Exactly one: the job type every event becomes, or JSONata of the event's type.
    job_id_expression
        JSONata of the job id. Default the bus's event id, ``$events.SystemMetadata.`aws:EventId```.
    deduplication_expression
        JSONata of the SQS deduplication id. Default ``job_id_expression``.
    seq_expression
        JSONata of the job's ``seq`` (a non-negative integer). Default none.
    payload_expression
        JSONata of the job's payload. Default ``$events.Data``.
    event_pattern
        An EventBridge pattern on the published data; only matching events become jobs. Default all.
    subscriber_name
        The subscriber's name. Default this construct's unique name.
    alarm_topic
        SNS topic notified when an event could not be delivered. Default none.

    Raises
    ------
    InvalidIngressPropsError
        Listing every invalid prop of the call.
    """

    #: The FIFO subscriber.
    subscriber: eventsv2.CfnSubscriber
    #: Where the events the subscriber could not deliver go.
    failure_queue: sqs.Queue
    #: The role the subscriber delivers with.
    role: iam.Role

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        queue: OrderedAgentQueue,
        event_bus: eventsv2.CfnEventBus | str,
        group_expression: str,
        job_type: str | None = None,
        job_type_expression: str | None = None,
        job_id_expression: str = paths.EVENT_ID_EXPRESSION,
        deduplication_expression: str | None = None,
        seq_expression: str | None = None,
        payload_expression: str = "$events.Data",
        event_pattern: Mapping[str, Any] | None = None,
        subscriber_name: str | None = None,
        alarm_topic: sns.ITopic | None = None,
    ) -> None:
        super().__init__(scope, id)
        deduplication_expression = (
            job_id_expression if deduplication_expression is None else deduplication_expression
        )
        problems = [
            *paths.check_expression("group_expression", group_expression),
            *paths.check_expression("job_id_expression", job_id_expression),
            *paths.check_expression("deduplication_expression", deduplication_expression),
            *(paths.check_expression("seq_expression", seq_expression) if seq_expression is not None else []),
            *paths.check_expression("payload_expression", payload_expression),
            *paths.check_job_type(
                job_type,
                job_type_expression,
                source_prop="job_type_expression",
                check_source=paths.check_expression("job_type_expression", job_type_expression),
            ),
        ]
        if problems:
            raise InvalidIngressPropsError(type(self).__name__, problems)

        key = queue.encryption_key
        bus_arn = event_bus.attr_event_bus_arn if isinstance(event_bus, eventsv2.CfnEventBus) else event_bus
        stack = Stack.of(self)
        self.failure_queue = encrypted_queue(
            self, "FailureQueue", encryption_key=key, fifo=True, retention_period=defaults.DLQ_RETENTION
        )
        build_undelivered_alarm(
            self,
            self.failure_queue,
            meaning=f"Events of {self.node.path} could not reach the job queue: the subscriber ran out of "
            "retries (an expression without a value, an id SQS refuses, a denied key).",
            alarm_topic=alarm_topic,
            named_by_a_queue=False,
        )
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal(
                _EVENTS_SERVICE, conditions={"StringEquals": {"aws:SourceAccount": stack.account}}
            ),
            description=f"The subscriber of {self.node.path}: deliveries to the job queue.",
        )
        grant_enqueue(self.role, queue=queue.queue, encryption_key=key)
        grant_enqueue(self.role, queue=self.failure_queue, encryption_key=key)

        # A literal type is sent as written; every other value is an expression evaluated per event.
        attribute_values = {
            paths.TRIAGE_ATTRIBUTES[0]: paths.jsonata(job_id_expression),
            paths.TRIAGE_ATTRIBUTES[1]: (
                job_type if job_type_expression is None else paths.jsonata(job_type_expression)
            ),
            paths.TRIAGE_ATTRIBUTES[2]: paths.jsonata(group_expression),
        }
        name = subscriber_name or Names.unique_resource_name(self, max_length=_MAX_NAME_LENGTH, separator="-")
        self.subscriber = eventsv2.CfnSubscriber(
            self,
            "Subscriber",
            name=name,
            description=f"{self.node.path}: events as jobs, grouped by {group_expression}.",
            event_bus_arn=bus_arn,
            type=SUBSCRIBER_TYPE_FIFO,
            invoke_configuration=eventsv2.CfnSubscriber.InvokeConfigurationProperty(
                role_arn=self.role.role_arn,
                target_arn=queue.queue.queue_arn,
                sqs_parameters=eventsv2.CfnSubscriber.SqsParametersProperty(
                    message_group_id=paths.jsonata(group_expression),
                    message_deduplication_id=paths.jsonata(deduplication_expression),
                    message_attributes={
                        name: eventsv2.CfnSubscriber.MessageAttributeValueProperty(
                            data_type="String", string_value=value
                        )
                        for name, value in attribute_values.items()
                    },
                ),
            ),
            transformer=eventsv2.CfnSubscriber.TransformerProperty(
                type=_TRANSFORMER_JSONATA,
                jsonata_configuration=eventsv2.CfnSubscriber.JsonataConfigurationProperty(
                    expression=paths.envelope_jsonata(
                        job_id_expression=job_id_expression,
                        job_type=job_type,
                        job_type_expression=job_type_expression,
                        payload_expression=payload_expression,
                        seq_expression=seq_expression,
                    )
                ),
            ),
            filter_configuration=(
                eventsv2.CfnSubscriber.FilterConfigurationProperty(
                    filters=[
                        eventsv2.CfnSubscriber.FilterProperty(
                            pattern=json.dumps(dict(event_pattern)), scope=_FILTER_SCOPE_DATA
                        )
                    ]
                )
                if event_pattern is not None
                else None
            ),
            on_failure_configuration=eventsv2.CfnSubscriber.OnFailureConfigurationProperty(
                arn=self.failure_queue.queue_arn
            ),
        )
        # The service checks the role when it creates the subscriber: the policy must exist first.
        self.subscriber.node.add_dependency(role_policy(self.role))
