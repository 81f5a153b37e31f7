"""The producer side: send jobs to an ``OrderedAgentQueue``'s FIFO queue.

Examples
--------
>>> from constructs_fifo.client import JobMessage, JobProducer
>>> producer = JobProducer(queue_url)  # doctest: +SKIP
>>> producer.send_batch([JobMessage("j-1", "apply_patch", {"diff": "..."}, group="ws#1")])  # doctest: +SKIP
"""

from __future__ import annotations

from constructs_fifo.client.errors import (
    BatchSendError,
    CredentialsNotFoundError,
    EndpointNotReachableError,
    InvalidJobError,
    OutcomeError,
    OutcomeQueryError,
    OutcomeReadError,
    ProducerEnvironmentError,
    ProducerError,
    QueueLookupError,
    RegionNotSetError,
    SendFailedError,
    SteeringError,
    SteeringQueryError,
    SteeringWriteError,
)
from constructs_fifo.client.job_status import SETTLED_STATUSES, JobOutcome, JobStatus
from constructs_fifo.client.limits import MAX_BATCH_ENTRIES, MAX_ID_LENGTH, MAX_MESSAGE_BYTES
from constructs_fifo.client.outcomes import JobOutcomes
from constructs_fifo.client.parked import GroupNotParkedError, ParkedGroups, ResumeResult
from constructs_fifo.client.producer import JobMessage, JobProducer, build_body, validate_job
from constructs_fifo.client.queue.addresses import QueueAddress
from constructs_fifo.client.queue.client import QueueClient
from constructs_fifo.client.results import FailedEntry, SendResult
from constructs_fifo.client.steering import (
    CancelOutcome,
    CancelReport,
    GroupCancelReport,
    HoldOutcome,
    HoldReport,
    JobSteering,
)
from constructs_fifo.client.waits.many import JobRef

__all__ = [
    "MAX_BATCH_ENTRIES",
    "MAX_ID_LENGTH",
    "MAX_MESSAGE_BYTES",
    "SETTLED_STATUSES",
    "BatchSendError",
    "CancelOutcome",
    "CancelReport",
    "CredentialsNotFoundError",
    "EndpointNotReachableError",
    "FailedEntry",
    "GroupCancelReport",
    "GroupNotParkedError",
    "HoldOutcome",
    "HoldReport",
    "InvalidJobError",
    "JobMessage",
    "JobOutcome",
    "JobOutcomes",
    "JobProducer",
    "JobRef",
    "JobStatus",
    "JobSteering",
    "OutcomeError",
    "OutcomeQueryError",
    "OutcomeReadError",
    "ParkedGroups",
    "ProducerEnvironmentError",
    "ProducerError",
    "QueueAddress",
    "QueueClient",
    "QueueLookupError",
    "RegionNotSetError",
    "ResumeResult",
    "SendFailedError",
    "SendResult",
    "SteeringError",
    "SteeringQueryError",
    "SteeringWriteError",
    "build_body",
    "validate_job",
]
