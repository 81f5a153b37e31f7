"""Throughput and DynamoDB call budget of the runtime, on moto in-process.

1,000 new jobs over 50 groups in batches of 10 (as Lambda would hand them over), then the same
jobIds again in new messages (duplicates). Prints records/s and DynamoDB calls per record for both
passes, for our runtime and, measured in the same run on the same records and the same moto, for the
Powertools baseline (:mod:`benchmarks.powertools_baseline`), when it is installed.

Each system gets a fresh ``mock_aws()`` with an equivalent claim table (partition key ``id``,
string), one untimed warm-up batch (first-call costs of botocore and moto), then the timed passes.
The job function does nothing, so the figures are the cost of the machinery around it; on moto most
of that is botocore and moto themselves, which is why only the ratio between systems means much.
"""

from __future__ import annotations

import io
import json
import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

REGION = "us-east-1"
TABLE = "claims"
QUEUE_ARN = f"arn:aws:sqs:{REGION}:123456789012:jobs.fifo"
#: Call budget of our runtime: a new job that succeeds costs 2 DynamoDB calls, a duplicate 1.
BUDGET = {"new jobs": 2.0, "duplicates": 1.0}

__all__ = [
    "BUDGET",
    "QUEUE_ARN",
    "REGION",
    "TABLE",
    "BenchContext",
    "PassResult",
    "Record",
    "Workload",
    "aws_environment",
    "create_claim_table",
    "measure",
    "run_ours",
    "workload",
]

Record = dict[str, Any]
BatchFn = Callable[[list[Record]], dict[str, Any]]


@dataclass(frozen=True)
class PassResult:
    """One measured pass of one system."""

    system: str
    name: str
    records: int
    seconds: float
    dynamodb_calls: int
    failures: int
    executed: int  # how many times the job function ran

    @property
    def records_per_second(self) -> float:
        return self.records / self.seconds if self.seconds else float("inf")

    @property
    def calls_per_record(self) -> float:
        return self.dynamodb_calls / self.records if self.records else 0.0


@dataclass(frozen=True)
class Workload:
    """The records both systems process: a warm-up batch, the new jobs and their duplicates."""

    warmup: list[Record]
    new: list[Record]
    duplicates: list[Record]
    batch_size: int


class BenchContext:
    """A Lambda context with two minutes left, every time it is asked."""

    function_name = "bench"
    aws_request_id = "bench"

    def get_remaining_time_in_millis(self) -> int:
        return 120_000


def _records(job_ids: list[str], groups: int) -> list[Record]:
    records = []
    for index, job_id in enumerate(job_ids):
        message_id = str(uuid.uuid4())
        records.append(
            {
                "messageId": message_id,
                "receiptHandle": f"rh-{message_id}",
                "body": json.dumps({"jobId": job_id, "type": "apply_patch", "payload": {"n": index}}),
                "attributes": {
                    "ApproximateReceiveCount": "1",
                    "MessageGroupId": f"ws#{index % groups}",
                    "MessageDeduplicationId": job_id,
                },
                "eventSource": "aws:sqs",
                "eventSourceARN": QUEUE_ARN,
                "awsRegion": REGION,
            }
        )
    return records


def workload(jobs: int = 1000, groups: int = 50, batch_size: int = 10) -> Workload:
    """Build the records: Lambda hands a FIFO batch over in group order; consecutive slices do."""
    job_ids = [f"job-{index}" for index in range(jobs)]
    return Workload(
        warmup=_records([f"warmup-{index}" for index in range(batch_size)], groups),
        new=_records(job_ids, groups),
        duplicates=_records(job_ids, groups),  # same jobIds, new messages
        batch_size=batch_size,
    )


def aws_environment() -> None:
    """Fake credentials and region for moto; never a real endpoint."""
    for name, value in (
        ("AWS_ACCESS_KEY_ID", "bench"),
        ("AWS_SECRET_ACCESS_KEY", "bench"),
        ("AWS_DEFAULT_REGION", REGION),
    ):
        os.environ.setdefault(name, value)
    os.environ.pop("AWS_ENDPOINT_URL", None)


def create_claim_table(client: Any, name: str = TABLE) -> None:
    """The claim table of both systems: partition key ``id`` (string), on demand."""
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )


def measure(
    system: str,
    work: Workload,
    process_batch: BatchFn,
    *,
    dynamodb: Any,
    executed: list[int],
) -> list[PassResult]:
    """Warm up (untimed), then time the new-jobs and duplicates passes of one system.

    ``executed`` is a one-element counter the system's job function increments.
    """
    calls = [0]

    def count(**_: Any) -> None:
        calls[0] += 1

    dynamodb.meta.events.register("before-call.dynamodb", count)
    for start in range(0, len(work.warmup), work.batch_size):
        process_batch(work.warmup[start : start + work.batch_size])
    results = []
    for name, records in (("new jobs", work.new), ("duplicates", work.duplicates)):
        calls[0] = 0
        executed[0] = 0
        failures = 0
        started = time.perf_counter()
        for start in range(0, len(records), work.batch_size):
            response = process_batch(records[start : start + work.batch_size])
            failures += len(response["batchItemFailures"])
        seconds = time.perf_counter() - started
        results.append(PassResult(system, name, len(records), seconds, calls[0], failures, executed[0]))
    dynamodb.meta.events.unregister("before-call.dynamodb", count)
    return results


def run_ours(work: Workload) -> list[PassResult]:
    """Measure constructs-fifo's runtime (``build_processor`` as the entry point builds it)."""
    aws_environment()
    import boto3  # noqa: PLC0415 - keep importing this module cheap
    from moto import mock_aws  # noqa: PLC0415

    from constructs_fifo.runtime.config import RuntimeConfig  # noqa: PLC0415
    from constructs_fifo.runtime.entrypoint import build_processor  # noqa: PLC0415
    from constructs_fifo.runtime.observability import JobLogger  # noqa: PLC0415

    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name=REGION)
        sqs = boto3.client("sqs", region_name=REGION)
        create_claim_table(dynamodb)
        queue_url = sqs.create_queue(QueueName="jobs.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
        executed = [0]

        def handle(job: Any, context: Any) -> None:
            executed[0] += 1

        processor = build_processor(
            RuntimeConfig(claim_table=TABLE, queue_url=queue_url),
            dynamodb_client=dynamodb,
            sqs_client=sqs,
            job_handler=handle,
            logger=JobLogger("Bench", stream=io.StringIO()),
        )
        context = BenchContext()

        def process_batch(batch: list[Record]) -> dict[str, Any]:
            return dict(processor.process({"Records": batch}, context))

        return measure("constructs-fifo", work, process_batch, dynamodb=dynamodb, executed=executed)
