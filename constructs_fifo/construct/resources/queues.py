"""The two FIFO queues of an :class:`~constructs_fifo.construct.OrderedAgentQueue`.

- The **job queue** (construct id ``Queue``): high throughput (``DeduplicationScope=messageGroup``,
  ``FifoThroughputLimit=perMessageGroupId``), encrypted, TLS only, redriving to the dead-letter queue
  after ``max_receive_count`` receives.
- The **dead-letter queue** (construct id ``DeadLetterQueue``): FIFO, kept 14 days, encrypted, TLS
  only, with a ``RedriveAllowPolicy`` ``byQueue`` naming only the job queue.

Both names are fixed at synth time from one base, ``Names.unique_resource_name`` of the construct:
the redrive allow policy names the job queue by an ARN built from its name, because a ``GetAtt`` on
both sides would make a dependency cycle with the job queue's redrive policy.
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import ArnFormat, Duration, Names, Stack
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_fifo.construct.settings import defaults
from constructs_fifo.runtime.aws_limits import SQS_MAX_QUEUE_NAME_LENGTH

__all__ = ["Queues", "build_queues"]

_DLQ_SUFFIX = "-dlq"
_FIFO_SUFFIX = ".fifo"
# Both names share one base; the longer one (``<base>-dlq.fifo``) stays within SQS's 80 characters.
_BASE_NAME_LENGTH = SQS_MAX_QUEUE_NAME_LENGTH - len(_DLQ_SUFFIX) - len(_FIFO_SUFFIX)


@dataclass(frozen=True)
class Queues:
    """What :func:`build_queues` built."""

    #: The FIFO job queue.
    queue: sqs.Queue
    #: The FIFO dead-letter queue.
    dead_letter_queue: sqs.Queue
    #: The physical names of the two queues (fixed at synth time).
    queue_name: str
    dead_letter_queue_name: str


def build_queues(
    scope: Construct,
    *,
    visibility_timeout: Duration,
    max_receive_count: int | float,
    content_based_deduplication: bool,
    encryption_key: kms.IKey | None,
) -> Queues:
    """Create the dead-letter queue, then the job queue, in ``scope``.

    Parameters
    ----------
    scope
        The construct whose unique name the queue names derive from.
    visibility_timeout
        The job queue's visibility timeout.
    max_receive_count
        SQS's dead-letter rule of the job queue (only a safety net: the runtime decides when a job is
        dead).
    content_based_deduplication
        Whether SQS derives deduplication ids from message bodies.
    encryption_key
        KMS key of both queues; SQS managed encryption without one.
    """
    base_name = Names.unique_resource_name(scope, max_length=_BASE_NAME_LENGTH, separator="-")
    queue_name = f"{base_name}{_FIFO_SUFFIX}"
    dead_letter_queue_name = f"{base_name}{_DLQ_SUFFIX}{_FIFO_SUFFIX}"
    encryption = sqs.QueueEncryption.KMS if encryption_key else sqs.QueueEncryption.SQS_MANAGED

    # The DLQ's redrive allow policy names the source queue by an ARN built from its fixed name:
    # a GetAtt would make a cycle with the source queue's redrive policy.
    source_queue_arn = Stack.of(scope).format_arn(
        service="sqs", resource=queue_name, arn_format=ArnFormat.NO_RESOURCE_NAME
    )
    dead_letter_queue = sqs.Queue(
        scope,
        "DeadLetterQueue",
        queue_name=dead_letter_queue_name,
        fifo=True,
        retention_period=defaults.DLQ_RETENTION,
        encryption=encryption,
        encryption_master_key=encryption_key,
        enforce_ssl=True,
        redrive_allow_policy=sqs.RedriveAllowPolicy(
            redrive_permission=sqs.RedrivePermission.BY_QUEUE,
            source_queues=[sqs.Queue.from_queue_arn(scope, "SourceQueueRef", source_queue_arn)],
        ),
    )
    queue = sqs.Queue(
        scope,
        "Queue",
        queue_name=queue_name,
        fifo=True,
        deduplication_scope=sqs.DeduplicationScope.MESSAGE_GROUP,
        fifo_throughput_limit=sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
        content_based_deduplication=content_based_deduplication,
        visibility_timeout=visibility_timeout,
        encryption=encryption,
        encryption_master_key=encryption_key,
        enforce_ssl=True,
        dead_letter_queue=sqs.DeadLetterQueue(queue=dead_letter_queue, max_receive_count=max_receive_count),
    )
    return Queues(
        queue=queue,
        dead_letter_queue=dead_letter_queue,
        queue_name=queue_name,
        dead_letter_queue_name=dead_letter_queue_name,
    )
