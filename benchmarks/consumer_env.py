"""What a benchmark consumer is wired to (:class:`ConsumerEnv`) and what it returns (:data:`BatchFn`).

A leaf module: the registry (:mod:`benchmarks.consumers`) and each consumer's factory (ours, and
:mod:`benchmarks.powertools_baseline`) import it, so no factory imports the registry that lists it.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from benchmarks.workload import Batch, BenchContext

__all__ = ["BatchFn", "ConsumerEnv", "LogCounter"]

#: One Lambda invocation: the batch's records in, ``{"batchItemFailures": [...]}`` out.
BatchFn = Callable[[Batch], Mapping[str, Any]]


@dataclass
class ConsumerEnv:
    """What a factory wires its consumer to.

    Attributes
    ----------
    dynamodb, sqs
        boto3 clients; the harness answers and counts their calls.
    queue_url
        The FIFO queue the records come from.
    context
        The Lambda context to pass to each invocation.
    ran
        How many times a job ran; the consumer's job function calls :meth:`job_ran` once per run.
    log
        Where the consumer's log lines go: counted (bytes, figure 9), then dropped.
    batch_log
        Where the same lines at the BATCH level go, when figure 9 counts them too.
    """

    dynamodb: Any
    sqs: Any
    queue_url: str
    context: BenchContext = field(default_factory=BenchContext)
    ran: int = 0
    log: LogCounter = field(default_factory=lambda: LogCounter())  # noqa: PLW0108 - defined below
    #: With a counter, the same lines at the BATCH level too (successes summarized per batch), counted
    #: alongside: figure 9's log bytes at both levels. ``None`` (figures 1-4): one logger, at the JOB
    #: level, as the function runs, so the CPU figures format each line once.
    batch_log: LogCounter | None = None

    def job_ran(self) -> None:
        """Count one run of the job function (or one applied transition, in state mode)."""
        self.ran += 1


class LogCounter(io.StringIO):
    """A text stream that counts the UTF-8 bytes written to it and drops them (lines still formatted)."""

    def __init__(self) -> None:
        super().__init__()
        self.bytes = 0

    def write(self, text: str) -> int:
        self.bytes += len(text.encode())
        return len(text)
