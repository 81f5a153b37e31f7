"""The constructs-fifo Lambda runtime: ordered, claimed, fenced processing of SQS FIFO batches.

The package is the kernel both modes share (the job envelope, configuration, backoff, outcome lines,
dead letters, parking, the batch report, the clock); claim mode lives in
:mod:`constructs_fifo.runtime.claim` and state mode in :mod:`constructs_fifo.runtime.state`, each
importing only the kernel. Runs inside the function the construct builds; depends on boto3 and the
standard library only and never imports ``aws_cdk``. The user writes ``handle(job, context)``; the
construct points the function at :func:`constructs_fifo.runtime.entrypoint.handler`, which calls it
once per job.

Examples
--------
>>> from constructs_fifo.runtime import Job, PermanentJobError
>>> def handle(job: Job, context: object) -> None:
...     if job.type not in {"apply_patch", "run_tests", "open_pr"}:
...         raise PermanentJobError(f"unknown job type {job.type!r}")
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.exceptions import (
    ConfigurationError,
    ConstructsFifoRuntimeError,
    MalformedJobError,
    PermanentJobError,
)
from constructs_fifo.runtime.job import Job, JobHandler, parse_record
from constructs_fifo.runtime.observability import JobLogger, OutcomeStatus
from constructs_fifo.runtime.settings.config import RuntimeConfig

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.claim.processor import OrderedBatchProcessor
    from constructs_fifo.runtime.claim.store import Claim, ClaimOutcome, ClaimStore

#: Claim mode's public names, imported on first use (a state-mode container never loads claim mode).
_CLAIM_MODE = {
    "Claim": "constructs_fifo.runtime.claim.store",
    "ClaimOutcome": "constructs_fifo.runtime.claim.store",
    "ClaimStore": "constructs_fifo.runtime.claim.store",
    "OrderedBatchProcessor": "constructs_fifo.runtime.claim.processor",
}

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


def __getattr__(name: str) -> Any:
    """Claim mode's names (``ClaimStore``, ``OrderedBatchProcessor``, ...), imported on first use."""
    module = _CLAIM_MODE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib  # noqa: PLC0415 - only for a claim-mode name

    return getattr(importlib.import_module(module), name)
