"""The benchmark's workload: SQS records of new jobs and their duplicates, batched as Lambda batches them.

Jobs are sent round-robin over the groups (job ``i`` goes to group ``ws#(i % groups)``), the way many
workspaces would enqueue at once. Lambda then receives from the FIFO queue: a receive returns as many
messages of one group as possible, in order, then those of the next group
(``constructs_fifo/local/emulator/fifo_rule.py``), so with 1,000 jobs over 50 groups in batches of 10
every batch holds 10 consecutive jobs of one group.
:func:`fifo_batches` fills batches that way from the queue's order.

The duplicates are the same jobs sent again in new messages (new ``messageId``, same ``jobId``), after
every new job: what a producer's retry beyond SQS's 5-minute deduplication window delivers.
"""

from __future__ import annotations

import heapq
import json
import os
import uuid
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "QUEUE_ARN",
    "QUEUE_URL",
    "REGION",
    "Batch",
    "BenchContext",
    "Record",
    "Workload",
    "aws_environment",
    "fifo_batches",
    "records",
    "workload",
]

REGION = "us-east-1"
QUEUE_ARN = f"arn:aws:sqs:{REGION}:123456789012:jobs.fifo"
QUEUE_URL = f"https://sqs.{REGION}.amazonaws.com/123456789012/jobs.fifo"

Record = dict[str, Any]
Batch = list[Record]


@dataclass(frozen=True)
class Workload:
    """The batches every consumer processes: an untimed warm-up, the new jobs, their duplicates."""

    warmup: list[Batch]
    new: list[Batch]
    duplicates: list[Batch]
    jobs: int
    groups: int
    batch_size: int


class BenchContext:
    """A Lambda context with two minutes left, every time it is asked."""

    function_name = "bench"
    aws_request_id = "bench"

    def get_remaining_time_in_millis(self) -> int:
        return 120_000


def records(job_ids: Sequence[str], groups: int) -> list[Record]:
    """One SQS record per job id, in send order; job ``i`` goes to group ``ws#(i % groups)``."""
    made = []
    for index, job_id in enumerate(job_ids):
        message_id = str(uuid.uuid4())
        made.append(
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
    return made


def fifo_batches(queue: Sequence[Record], batch_size: int) -> list[Batch]:
    """Cut ``queue`` (records in send order) into batches the way Lambda receives from a FIFO queue.

    Each batch starts with the group of the oldest record left, takes as many of that group's records
    as fit, in order, and fills any room left with the next group's records (the group whose oldest
    record is next in the queue). Batches are processed one after another, so no group is ever in
    flight when the next batch is cut.

    Examples
    --------
    >>> queue = [{"attributes": {"MessageGroupId": g}, "n": n} for n, g in enumerate("abab")]
    >>> [[(r["attributes"]["MessageGroupId"], r["n"]) for r in b] for b in fifo_batches(queue, 3)]
    [[('a', 0), ('a', 2), ('b', 1)], [('b', 3)]]
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1 (given {batch_size})")
    pending: dict[str, deque[tuple[int, Record]]] = {}
    for position, record in enumerate(queue):
        pending.setdefault(record["attributes"]["MessageGroupId"], deque()).append((position, record))
    heads = [(entries[0][0], group) for group, entries in pending.items()]
    heapq.heapify(heads)
    batches: list[Batch] = []
    batch: Batch = []
    while heads:
        _, group = heapq.heappop(heads)
        entries = pending[group]
        while entries and len(batch) < batch_size:
            batch.append(entries.popleft()[1])
        if entries:
            heapq.heappush(heads, (entries[0][0], group))
        if len(batch) == batch_size:
            batches.append(batch)
            batch = []
    if batch:
        batches.append(batch)
    return batches


def workload(jobs: int = 1000, groups: int = 50, batch_size: int = 10) -> Workload:
    """Build the warm-up batch, the new jobs and their duplicates, batched by :func:`fifo_batches`."""
    job_ids = [f"job-{index}" for index in range(jobs)]
    warmup_ids = [f"warmup-{index}" for index in range(batch_size)]
    return Workload(
        warmup=fifo_batches(records(warmup_ids, 1), batch_size),
        new=fifo_batches(records(job_ids, groups), batch_size),
        duplicates=fifo_batches(records(job_ids, groups), batch_size),  # same jobIds, new messages
        jobs=jobs,
        groups=groups,
        batch_size=batch_size,
    )


def aws_environment() -> None:
    """Fake credentials and region for moto and the in-memory responder; never a real endpoint."""
    for name, value in (
        ("AWS_ACCESS_KEY_ID", "bench"),
        ("AWS_SECRET_ACCESS_KEY", "bench"),
        ("AWS_DEFAULT_REGION", REGION),
    ):
        os.environ.setdefault(name, value)
    os.environ.pop("AWS_ENDPOINT_URL", None)
