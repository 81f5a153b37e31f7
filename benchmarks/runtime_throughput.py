"""Throughput and DynamoDB call budget of the runtime, on moto in-process.

1,000 new jobs over 50 groups in batches of 10 (as Lambda would hand them over), then the same
jobs again as duplicates. Prints records/s and DynamoDB calls per record for both passes.

For comparison (project facts, same machine and setup): Powertools' FIFO processor with its
idempotency utility ran ~190-230 records/s at exactly 2 DynamoDB calls per record.
"""

from __future__ import annotations

import io
import json
import os
import time
import uuid
from dataclasses import dataclass
from typing import Any

REGION = "us-east-1"
TABLE = "claims"
QUEUE_ARN = f"arn:aws:sqs:{REGION}:123456789012:jobs.fifo"

__all__ = ["PassResult", "main", "run"]


@dataclass(frozen=True)
class PassResult:
    """One measured pass."""

    name: str
    records: int
    seconds: float
    dynamodb_calls: int
    failures: int

    @property
    def records_per_second(self) -> float:
        return self.records / self.seconds if self.seconds else float("inf")

    @property
    def calls_per_record(self) -> float:
        return self.dynamodb_calls / self.records if self.records else 0.0


class _Context:
    def get_remaining_time_in_millis(self) -> int:
        return 120_000


def _records(jobs: int, groups: int) -> list[dict[str, Any]]:
    records = []
    for index in range(jobs):
        message_id = str(uuid.uuid4())
        records.append(
            {
                "messageId": message_id,
                "receiptHandle": f"rh-{message_id}",
                "body": json.dumps({"jobId": f"job-{index}", "type": "apply_patch", "payload": {"n": index}}),
                "attributes": {
                    "ApproximateReceiveCount": "1",
                    "MessageGroupId": f"ws#{index % groups}",
                    "MessageDeduplicationId": f"job-{index}",
                },
                "eventSource": "aws:sqs",
                "eventSourceARN": QUEUE_ARN,
                "awsRegion": REGION,
            }
        )
    return records


def run(jobs: int = 1000, groups: int = 50, batch_size: int = 10) -> list[PassResult]:
    """Run the new-jobs pass and the duplicates pass; return their measurements."""
    for name, value in (
        ("AWS_ACCESS_KEY_ID", "bench"),
        ("AWS_SECRET_ACCESS_KEY", "bench"),
        ("AWS_DEFAULT_REGION", REGION),
    ):
        os.environ.setdefault(name, value)
    os.environ.pop("AWS_ENDPOINT_URL", None)

    import boto3  # noqa: PLC0415 - keep `--help`-style imports of this module cheap
    from moto import mock_aws  # noqa: PLC0415

    from constructs_fifo.runtime.config import RuntimeConfig  # noqa: PLC0415
    from constructs_fifo.runtime.entrypoint import build_processor  # noqa: PLC0415
    from constructs_fifo.runtime.observability import JobLogger  # noqa: PLC0415

    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name=REGION)
        sqs = boto3.client("sqs", region_name=REGION)
        dynamodb.create_table(
            TableName=TABLE,
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        queue_url = sqs.create_queue(QueueName="jobs.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
        calls = [0]

        def count(**_: Any) -> None:
            calls[0] += 1

        dynamodb.meta.events.register("before-call.dynamodb", count)
        processor = build_processor(
            RuntimeConfig(claim_table=TABLE, queue_url=queue_url),
            dynamodb_client=dynamodb,
            sqs_client=sqs,
            job_handler=lambda job, context: None,
            logger=JobLogger("Bench", stream=io.StringIO()),
        )
        # Lambda hands a FIFO batch over in group order; interleaving groups is harder on nothing
        # here (the runtime is sequential), so batches are simply consecutive slices.
        records = _records(jobs, groups)
        results = []
        for name in ("new jobs", "duplicates"):
            calls[0] = 0
            failures = 0
            started = time.perf_counter()
            for start in range(0, len(records), batch_size):
                batch = records[start : start + batch_size]
                response = processor.process({"Records": batch}, _Context())
                failures += len(response["batchItemFailures"])
            results.append(PassResult(name, len(records), time.perf_counter() - started, calls[0], failures))
            records = _records(jobs, groups)  # same jobIds, new messages: the duplicates pass
    return results


def main() -> int:
    """Print the benchmark table; non-zero exit if a record failed or the call budget was broken."""
    results = run()
    print("constructs-fifo runtime on moto in-process: 1,000 jobs, 50 groups, batches of 10")
    print(
        f"{'pass':<12} {'records':>8} {'seconds':>8} {'records/s':>10} {'DDB calls/record':>17} {'failed':>7}"
    )
    for result in results:
        print(
            f"{result.name:<12} {result.records:>8} {result.seconds:>8.2f} "
            f"{result.records_per_second:>10.0f} {result.calls_per_record:>17.2f} {result.failures:>7}"
        )
    print("reference (facts.md): Powertools FIFO + idempotency ~190-230 records/s, 2 calls/record")
    budget = {"new jobs": 2.0, "duplicates": 1.0}
    broken = [r for r in results if r.failures or r.calls_per_record != budget[r.name]]
    return 1 if broken else 0
