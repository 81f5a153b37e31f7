"""The constructs-fifo Lambda runtime: ordered, claimed, fenced processing of SQS FIFO batches.

Runs inside the function the construct builds; depends on boto3 and the standard library only and
never imports ``aws_cdk``. The user writes ``handle(job, context)``; the construct points the
function at :func:`constructs_fifo.runtime.entrypoint.handler`, which calls it once per job.

Examples
--------
>>> from constructs_fifo.runtime import Job, PermanentJobError
>>> def handle(job: Job, context: object) -> None:
...     if job.type not in {"apply_patch", "run_tests", "open_pr"}:
...         raise PermanentJobError(f"unknown job type {job.type!r}")
"""

from __future__ import annotations

from constructs_fifo.runtime.claim.store import Claim, ClaimOutcome, ClaimStore
from constructs_fifo.runtime.config import RuntimeConfig
from constructs_fifo.runtime.exceptions import (
    ConfigurationError,
    ConstructsFifoRuntimeError,
    MalformedJobError,
    PermanentJobError,
)
from constructs_fifo.runtime.job import Job, parse_record
from constructs_fifo.runtime.observability import JobLogger, OutcomeStatus
from constructs_fifo.runtime.claim.processor import JobHandler, OrderedBatchProcessor

__all__ = [
    "Claim",
    "ClaimOutcome",
    "ClaimStore",
    "ConfigurationError",
    "ConstructsFifoRuntimeError",
    "Job",
    "JobHandler",
    "JobLogger",
    "MalformedJobError",
    "OrderedBatchProcessor",
    "OutcomeStatus",
    "PermanentJobError",
    "RuntimeConfig",
    "parse_record",
]
