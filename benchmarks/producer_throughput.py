"""Figure 6: the producer. ``JobProducer.send_batch`` against one SendMessage per job.

Both sides send the same jobs (ids, groups and envelopes of the workload) after an untimed warm-up;
SQS calls are counted with a botocore ``before-call`` hook on the client. The baseline is what a user
writes without our client: build the JSON envelope and call ``send_message`` once per job, with the job
id as deduplication id. Two measurements:

- **moto in-process** (:func:`measure_on_moto`). moto's SendMessage recomputes the queue's attributes
  by scanning every message in it, so sending into one queue is quadratic in its depth; each side
  therefore sends in chunks of ``chunk`` jobs, each chunk to a fresh queue created outside the timer.
  moto handles a batch entry by entry, so its per-message work bounds the speed-up.
- **fixed delay per SQS call** (:func:`measure_with_delay`), SQS answered by the in-memory responder
  after a sleep standing in for the in-region round trip: what a producer sees on AWS.

Jobs per second is the median of ``repeats`` alternating runs.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchmarks.counting import CallCounter
from benchmarks.responder import Responder
from benchmarks.workload import QUEUE_URL, REGION, aws_environment

__all__ = ["ProducerResult", "measure_on_moto", "measure_with_delay"]


@dataclass(frozen=True)
class ProducerResult:
    """Calls per job and jobs per second of both sides."""

    jobs: int
    batch_calls_per_job: float
    single_calls_per_job: float
    batch_jobs_per_second: float
    single_jobs_per_second: float


def _jobs(count: int, groups: int, prefix: str) -> list[Any]:
    from constructs_fifo.client import JobMessage  # noqa: PLC0415

    return [
        JobMessage(f"{prefix}-{index}", "apply_patch", {"n": index}, group=f"ws#{index % groups}")
        for index in range(count)
    ]


def _sides(sqs: Any) -> dict[str, Callable[[str, list[Any]], None]]:
    from constructs_fifo.client import JobProducer  # noqa: PLC0415

    def batch(url: str, jobs: list[Any]) -> None:
        JobProducer(url, sqs_client=sqs).send_batch(jobs)

    def single(url: str, jobs: list[Any]) -> None:
        for job in jobs:
            sqs.send_message(
                QueueUrl=url,
                MessageBody=json.dumps({"jobId": job.job_id, "type": job.job_type, "payload": job.payload}),
                MessageGroupId=job.group,
                MessageDeduplicationId=job.job_id,
            )

    return {"batch": batch, "single": single}


def _measure(
    sqs: Any, new_queue: Callable[[], str], *, jobs: int, groups: int, repeats: int, chunk: int
) -> ProducerResult:
    counter = CallCounter(sqs)
    sides = _sides(sqs)
    for send in sides.values():  # warm-up: first-call costs of botocore (and moto)
        send(new_queue(), _jobs(10, groups, "warmup"))
    seconds: dict[str, list[float]] = {name: [] for name in sides}
    calls: dict[str, int] = {}
    for _ in range(max(1, repeats)):
        for name, send in sides.items():
            sent = _jobs(jobs, groups, "job")
            counter.reset()
            elapsed = 0.0
            for start in range(0, jobs, chunk):
                url = new_queue()
                started = time.perf_counter()
                send(url, sent[start : start + chunk])
                elapsed += time.perf_counter() - started
            seconds[name].append(elapsed)
            calls[name] = counter.by_operation["SendMessageBatch"] + counter.by_operation["SendMessage"]
    counter.close()
    return ProducerResult(
        jobs=jobs,
        batch_calls_per_job=calls["batch"] / jobs,
        single_calls_per_job=calls["single"] / jobs,
        batch_jobs_per_second=jobs / statistics.median(seconds["batch"]),
        single_jobs_per_second=jobs / statistics.median(seconds["single"]),
    )


def measure_on_moto(
    jobs: int = 1000, groups: int = 50, *, repeats: int = 3, chunk: int = 100
) -> ProducerResult:
    """Both sides on moto in-process; see the module docstring."""
    aws_environment()
    import boto3  # noqa: PLC0415
    from moto import mock_aws  # noqa: PLC0415

    with mock_aws():
        sqs = boto3.client("sqs", region_name=REGION)
        numbers = iter(range(1_000_000))

        def new_queue() -> str:
            name = f"producer-{next(numbers)}.fifo"
            url: str = sqs.create_queue(QueueName=name, Attributes={"FifoQueue": "true"})["QueueUrl"]
            return url

        return _measure(sqs, new_queue, jobs=jobs, groups=groups, repeats=repeats, chunk=chunk)


def measure_with_delay(
    jobs: int = 1000, groups: int = 50, *, delay_seconds: float = 0.005, repeats: int = 1
) -> ProducerResult:
    """Both sides against the in-memory responder sleeping ``delay_seconds`` per SQS call."""
    aws_environment()
    import boto3  # noqa: PLC0415

    sqs = boto3.client("sqs", region_name=REGION)
    responder = Responder([], sqs_delay_seconds=delay_seconds)
    responder.attach(sqs)
    try:
        return _measure(sqs, lambda: QUEUE_URL, jobs=jobs, groups=groups, repeats=repeats, chunk=jobs)
    finally:
        responder.detach()
