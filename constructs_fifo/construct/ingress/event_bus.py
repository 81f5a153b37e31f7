"""``EventBusIngress``: an EventBridge bus's events into an ``OrderedAgentQueue``, one group per entity.

A rule's SQS FIFO target takes one static ``MessageGroupId`` (CloudFormation ``SqsParameters``), so it
would put every entity in one lane. EventBridge Pipes read the group from each event, but a pipe's
source cannot be a bus. So, as AWS's own patterns do:

``bus --rule--> staging queue (standard, encrypted) --pipe--> the queue's FIFO queue``

- **Rule** (``AWS::Events::Rule``, construct id ``Rule``): the event pattern, one target, the staging
  queue, with the staging dead-letter queue as the target's dead-letter queue (deliveries EventBridge
  gave up on).
- **Staging queue** (``StagingQueue``): standard, encrypted like the job queue, TLS only, redriving to
  ``StagingDeadLetterQueue`` after 5 receives (a pipe that cannot deliver an event); an alarm
  (``UndeliveredAlarm``) fires on the first event there.
- **Pipe** (``AWS::Pipes::Pipe``, ``Pipe``): source the staging queue, target the FIFO queue; its
  ``InputTemplate`` builds the job envelope (``jobId``, ``type``, ``payload``, ``seq``) from paths of
  the event; ``MessageGroupId`` and ``MessageDeduplicationId`` are paths too.
- **Role** (``PipeRole``): assumed by ``pipes.amazonaws.com`` for this pipe only (``aws:SourceArn``,
  ``aws:SourceAccount``); receive, delete and read attributes on the staging queue, send on the FIFO
  queue, and the key's actions when there is a key.

Order: neither the classic bus nor the standard staging queue orders anything. Within a group the
FIFO queue keeps the order the pipe sent in, which is not the order the events happened in; pass
``seq_path`` (the entity's version) and use a state-mode queue, whose reorder buffer applies a group's
jobs in ``seq`` order.

On the emulator: the rule, the queues and the pipe are created (moto's CloudFormation has no
``AWS::Pipes::Pipe``; the emulator's patch creates it as configuration), and ``constructs-fifo pipes
run`` moves the staged events as the pipe would (docs/emulator.md).

Triage: Pipes cannot set SQS message attributes (``PipeTargetSqsQueueParameters`` has only the group
and the deduplication id), so these jobs carry no ``jobId``/``jobType``/``group`` attributes. The
runtime does not need them: it reads the job id and type from the body and the group from the
message, and the dead letters it sends carry ``jobId``, ``jobType`` and the rest as usual.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import jsii
from aws_cdk import ArnFormat, Names, Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_pipes as pipes
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from aws_cdk.interfaces import aws_events as events_refs
from constructs import Construct

from constructs_fifo.construct.ingress import paths
from constructs_fifo.construct.ingress.errors import InvalidIngressPropsError
from constructs_fifo.construct.ingress.staging import (
    allow_service_on_key,
    build_undelivered_alarm,
    encrypted_queue,
    role_policy,
)
from constructs_fifo.construct.resources.permissions import ENQUEUE_ACTIONS, grant_enqueue
from constructs_fifo.construct.settings import defaults, tokens

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.construct.ordered_agent_queue import OrderedAgentQueue

__all__ = ["PIPE_SOURCE_ACTIONS", "EventBusIngress"]

#: What a pipe needs of its SQS source (EventBridge Pipes: eb-pipes-permissions).
PIPE_SOURCE_ACTIONS: Final = ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes")
#: Records the pipe takes from the staging queue per batch: an SQS target takes at most 10
#: (EventBridge Pipes: eb-pipes-batching-concurrency).
MAX_PIPE_BATCH_SIZE: Final = 10
#: A pipe's and a rule's name: at most 64 characters.
_MAX_NAME_LENGTH: Final = 64
#: The default bus's name: its rules' ARNs leave the bus out.
_DEFAULT_BUS: Final = "default"
_EVENTS_SERVICE: Final = "events.amazonaws.com"


class EventBusIngress(Construct):
    """An EventBridge bus's matching events as jobs of an ``OrderedAgentQueue``, grouped per entity.

    Parameters
    ----------
    scope, id
        The parent construct and this construct's id.
    queue
        The :class:`~constructs_fifo.construct.OrderedAgentQueue` the jobs go to.
    event_bus
        The bus the events are put on (``events.EventBus.from_event_bus_name(self, "Bus", "default")``
        for the default bus).
    event_pattern
        Which events become jobs (``events.EventPattern(source=["accounts"])``).
    group_path
        The JSON path of each event's group: the entity whose jobs run in order, e.g.
        ``$.detail.accountId``. The value must be a valid SQS group id (at most 128 characters).
    job_type, job_type_path
        Exactly one: the job type every event becomes (``"account_event"``), or the path of the event's
        type (``$.detail-type``).
    job_id_path
        The path of the job id (the key of its claim), an id the producer gives the event, e.g.
        ``$.detail.eventId``. **Required with** ``seq_path``. Default ``$.id``, the event's own id:
        EventBridge gives every ``PutEvents`` a new one, retries included, so a resent event is a new job
        (run twice in claim mode; in state mode a resend whose ``seq`` waits in the reorder buffer is
        recognised by its type and payload and skipped).
    dedup_path
        The path of the SQS deduplication id. Default ``job_id_path``.
    seq_path
        The path of the job's ``seq``, the entity's version (a non-negative integer), e.g.
        ``$.detail.version``: state mode applies a group's jobs in that order. Default none.
    payload_path
        The path of the job's payload. Default ``$.detail``; ``$`` is the whole event.
    batch_size
        Staged events per pipe batch, 1 to 10. Default 10.
    alarm_topic
        SNS topic notified when an event could not be delivered. Default none.

    Raises
    ------
    InvalidIngressPropsError
        Listing every invalid prop of the call.

    Examples
    --------
    >>> EventBusIngress(stack, "AccountEvents", queue=workspaces,
    ...     event_bus=events.EventBus.from_event_bus_name(stack, "Bus", "default"),
    ...     event_pattern=events.EventPattern(source=["accounts"]),
    ...     group_path="$.detail.accountId", seq_path="$.detail.version",
    ...     job_type_path="$.detail-type")  # doctest: +SKIP
    """

    #: The rule on the bus.
    rule: events.Rule
    #: The standard queue the rule delivers to and the pipe reads.
    staging_queue: sqs.Queue
    #: Where staged events end up after 5 failed receives, and deliveries EventBridge gave up on.
    staging_dead_letter_queue: sqs.Queue
    #: The pipe from the staging queue to the FIFO queue.
    pipe: pipes.CfnPipe
    #: The pipe's role.
    role: iam.Role
    #: The pipe's name (fixed at synth time).
    pipe_name: str

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        queue: OrderedAgentQueue,
        event_bus: events.IEventBus,
        event_pattern: events.EventPattern,
        group_path: str,
        job_type: str | None = None,
        job_type_path: str | None = None,
        job_id_path: str | None = None,
        dedup_path: str | None = None,
        seq_path: str | None = None,
        payload_path: str = paths.EVENT_PAYLOAD_PATH,
        batch_size: int = MAX_PIPE_BATCH_SIZE,
        alarm_topic: sns.ITopic | None = None,
    ) -> None:
        super().__init__(scope, id)
        id_problems = _check_job_id_with_seq(job_id_path, seq_path)
        job_id_path = paths.EVENT_ID_PATH if job_id_path is None else job_id_path
        dedup_path = job_id_path if dedup_path is None else dedup_path
        problems = [
            *paths.check_path("group_path", group_path, target_id=True),
            *id_problems,
            *paths.check_path("job_id_path", job_id_path),
            *paths.check_path("dedup_path", dedup_path, target_id=True),
            *(paths.check_path("seq_path", seq_path) if seq_path is not None else []),
            *paths.check_path("payload_path", payload_path, whole_event=True),
            *paths.check_job_type(
                job_type,
                job_type_path,
                source_prop="job_type_path",
                check_source=paths.check_path("job_type_path", job_type_path),
            ),
            *_check_batch_size(batch_size),
        ]
        if problems:
            raise InvalidIngressPropsError(type(self).__name__, problems)

        stack = Stack.of(self)
        key = queue.encryption_key
        self.staging_dead_letter_queue = encrypted_queue(
            self, "StagingDeadLetterQueue", encryption_key=key, retention_period=defaults.DLQ_RETENTION
        )
        self.staging_queue = encrypted_queue(
            self, "StagingQueue", encryption_key=key, dead_letter_queue=self.staging_dead_letter_queue
        )
        build_undelivered_alarm(
            self,
            self.staging_dead_letter_queue,
            meaning=f"Events of {self.node.path} could not reach the job queue: EventBridge gave up "
            "delivering them to the staging queue, or the pipe failed 5 times to send one (a group or "
            "id path missing from the event, an id SQS refuses, a denied key).",
            alarm_topic=alarm_topic,
        )
        # The rule's name is fixed at synth time, so the queues' and the key's policies can name this
        # rule alone without a cycle (key -> rule -> staging queue -> key).
        rule_name = Names.unique_resource_name(self, max_length=_MAX_NAME_LENGTH, separator="-")
        bus_name = event_bus.event_bus_name
        rule_arn = stack.format_arn(
            service="events",
            resource="rule",
            resource_name=rule_name if bus_name == _DEFAULT_BUS else f"{bus_name}/{rule_name}",
            arn_format=ArnFormat.SLASH_RESOURCE_NAME,
        )
        self.rule = events.Rule(
            self,
            "Rule",
            rule_name=rule_name,
            event_bus=event_bus,
            event_pattern=event_pattern,
            targets=[_StagingTarget(self.staging_queue, self.staging_dead_letter_queue)],
        )
        for staged in (self.staging_queue, self.staging_dead_letter_queue):
            staged.add_to_resource_policy(
                iam.PolicyStatement(
                    actions=list(ENQUEUE_ACTIONS),
                    principals=[iam.ServicePrincipal(_EVENTS_SERVICE)],
                    resources=[staged.queue_arn],
                    conditions={"ArnEquals": {"aws:SourceArn": rule_arn}},
                )
            )
        if key is not None:
            allow_service_on_key(
                self, key, service=_EVENTS_SERVICE, source_arn=rule_arn, purpose="the rule's delivery"
            )

        # The pipe's name is fixed at synth time, so its role's trust can name this pipe alone.
        self.pipe_name = rule_name  # one pipe per rule: the same unique name
        pipe_arn = stack.format_arn(
            service="pipes",
            resource="pipe",
            resource_name=self.pipe_name,
            arn_format=ArnFormat.SLASH_RESOURCE_NAME,
        )
        self.role = iam.Role(
            self,
            "PipeRole",
            assumed_by=iam.ServicePrincipal(
                "pipes.amazonaws.com",
                conditions={"StringEquals": {"aws:SourceAccount": stack.account, "aws:SourceArn": pipe_arn}},
            ),
            description=f"The pipe of {self.node.path}: staging queue to the job queue.",
        )
        self.role.add_to_policy(
            iam.PolicyStatement(actions=list(PIPE_SOURCE_ACTIONS), resources=[self.staging_queue.queue_arn])
        )
        if key is not None:
            key.grant_decrypt(self.role)
        grant_enqueue(self.role, queue=queue.queue, encryption_key=key)

        self.pipe = pipes.CfnPipe(
            self,
            "Pipe",
            name=self.pipe_name,
            description=f"{self.node.path}: staged events as jobs, grouped by {group_path}.",
            role_arn=self.role.role_arn,
            source=self.staging_queue.queue_arn,
            source_parameters=pipes.CfnPipe.PipeSourceParametersProperty(
                sqs_queue_parameters=pipes.CfnPipe.PipeSourceSqsQueueParametersProperty(batch_size=batch_size)
            ),
            target=queue.queue.queue_arn,
            target_parameters=pipes.CfnPipe.PipeTargetParametersProperty(
                input_template=paths.input_template(
                    job_id_path=job_id_path,
                    job_type=job_type,
                    job_type_path=job_type_path,
                    payload_path=payload_path,
                    seq_path=seq_path,
                ),
                sqs_queue_parameters=pipes.CfnPipe.PipeTargetSqsQueueParametersProperty(
                    message_group_id=paths.pipe_path(group_path),
                    message_deduplication_id=paths.pipe_path(dedup_path),
                ),
            ),
        )
        # Pipes checks the role's permissions when it creates the pipe: the policy must exist first.
        self.pipe.node.add_dependency(role_policy(self.role))


def _check_job_id_with_seq(job_id_path: str | None, seq_path: str | None) -> list[str]:
    """``seq_path`` needs a job id that a resend keeps: the event's own id is new on every ``PutEvents``."""
    if seq_path is None or job_id_path is not None:
        return []
    return [
        f"job_id_path=None is not allowed with seq_path={seq_path!r}: the default job id is the event's "
        f"id ({paths.EVENT_ID_PATH}), which EventBridge makes new on every PutEvents, retries included, so "
        "a resent event would be a second job of the same seq. Fix: job_id_path='$.detail.<the id your "
        "producer gives the event>' (kept across its retries)."
    ]


def _check_batch_size(batch_size: object) -> list[str]:
    if tokens.is_unresolved(batch_size):
        return []
    if (
        isinstance(batch_size, int)
        and not isinstance(batch_size, bool)
        and 1 <= batch_size <= MAX_PIPE_BATCH_SIZE
    ):
        return []
    return [
        f"batch_size={batch_size!r} is not allowed: it must be an integer from 1 to {MAX_PIPE_BATCH_SIZE} "
        f"(a pipe sends at most {MAX_PIPE_BATCH_SIZE} messages per batch to an SQS target). "
        f"Fix: batch_size={MAX_PIPE_BATCH_SIZE}."
    ]


@jsii.implements(events.IRuleTarget)
class _StagingTarget:
    """The rule's target: the staging queue, its dead-letter queue for deliveries EventBridge gave up on.

    Not CDK's ``targets.SqsQueue``: that one lets ``events.amazonaws.com`` use the key for any rule (it
    cannot name the rule without a cycle); here the construct writes the queue and key policies itself,
    naming the rule by its fixed ARN.
    """

    def __init__(self, queue: sqs.IQueue, dead_letter_queue: sqs.IQueue) -> None:
        self._queue = queue
        self._dead_letter_queue = dead_letter_queue

    def bind(self, rule: events_refs.IRuleRef, id: str | None = None) -> events.RuleTargetConfig:
        return events.RuleTargetConfig(
            arn=self._queue.queue_arn,
            dead_letter_config=events.CfnRule.DeadLetterConfigProperty(arn=self._dead_letter_queue.queue_arn),
            target_resource=self._queue,
        )
