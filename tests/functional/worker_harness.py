"""Helpers of the worker's functional tests: a slot wired to moto clients, with a fake clock and a
heartbeat the test ticks itself (no ticker thread), and the lines it wrote."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.constants import JobMode
from constructs_fifo.runtime.entrypoint import build_processor
from constructs_fifo.runtime.observability import JobLogger
from constructs_fifo.runtime.settings.config import RuntimeConfig
from constructs_fifo.worker.heartbeat import WorkerHeartbeat
from constructs_fifo.worker.lent_claims import HeartbeatClaims
from constructs_fifo.worker.loop import Slot

from .runtime_harness import GROUP_TABLE_NAME, QUEUE_NAME, TABLE_NAME, FakeClock

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient

    from constructs_fifo.runtime.job import Job

VISIBILITY_S = 120
INTERVAL_S = 30


@dataclass
class SlotHarness:
    """One worker slot on moto: its heartbeat (ticked by the test), its claims, its log."""

    dynamodb: DynamoDBClient
    sqs: SQSClient
    queue_url: str
    handler: Callable[[Job, Any], Any]  # claim mode: handle(job, context); state mode: apply(job, state)
    clock: FakeClock = field(default_factory=FakeClock)
    max_job_duration_seconds: int | None = None
    mode: JobMode = JobMode.CLAIM
    max_attempts: int = 3
    interval_seconds: float = INTERVAL_S
    ticker: bool = False
    stream: io.StringIO = field(default_factory=io.StringIO)

    def __post_init__(self) -> None:
        config = RuntimeConfig(
            TABLE_NAME,
            self.queue_url,
            visibility_timeout_seconds=VISIBILITY_S,
            max_attempts=self.max_attempts,
            max_job_duration_seconds=self.max_job_duration_seconds,
            mode=self.mode,
            group_table=GROUP_TABLE_NAME,
        )
        log = JobLogger("Test", stream=self.stream, clock=self.clock)
        self.heartbeat = WorkerHeartbeat(
            self.sqs,
            self.queue_url,
            visibility_timeout_seconds=VISIBILITY_S,
            interval_seconds=self.interval_seconds,
            logger=log,
            queue_name=QUEUE_NAME,
            max_job_duration_seconds=self.max_job_duration_seconds,
            clock=self.clock,
            ticker=self.ticker,
        )
        self.claims = (
            HeartbeatClaims(
                TABLE_NAME,
                self.dynamodb,
                clock=self.clock,
                max_attempts=self.max_attempts,
                heartbeat=self.heartbeat,
            )
            if self.mode is JobMode.CLAIM
            else None
        )
        processor: Any = build_processor(
            config,
            dynamodb_client=self.dynamodb,
            sqs_client=self.sqs,
            job_handler=self.handler,
            logger=log,
            heartbeat=self.heartbeat,
            claims=self.claims,
        )
        self.slot = Slot(processor.process_batch, self.heartbeat, self.sqs)

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stream.getvalue().splitlines() if line]

    def statuses(self) -> list[tuple[str | None, str]]:
        return [(line.get("jobId"), line["status"]) for line in self.lines() if "status" in line]

    def events(self) -> list[str]:
        return [line["event"] for line in self.lines() if "event" in line]

    def metric(self, name: str) -> float:
        return sum(float(line[name]) for line in self.lines() if name in line)
