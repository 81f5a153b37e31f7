"""Run one consumer over the workload's passes and measure each: calls, CPU, wall time, outcomes.

Backend-neutral: the caller hands over boto3 clients already answered by moto
(:mod:`benchmarks.runtime_throughput`) or by the in-memory responder (:mod:`benchmarks.in_memory`).
DynamoDB calls are counted with a botocore ``before-call`` hook on the client (once per API call,
whatever the retries), by operation. CPU is ``time.process_time()`` over the pass minus
``server_cpu`` (the stand-in server's share, when the caller can tell it), so what is left is the
consumer's own code and the client side of its calls.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from benchmarks.consumer_env import ConsumerEnv
from benchmarks.consumers import ConsumerSpec
from benchmarks.counting import CallCounter
from benchmarks.workload import Batch, Workload

__all__ = ["PASSES", "PassResult", "run_passes"]

#: The timed passes, in order: every job new, then every job again as a duplicate.
PASSES = ("new jobs", "duplicates")


@dataclass(frozen=True)
class PassResult:
    """One measured pass of one consumer."""

    consumer: str
    name: str
    jobs: int
    wall_seconds: float
    cpu_seconds: float
    dynamodb_calls: int
    failures: int
    executed: int  # how many times the job function ran
    calls_by_operation: dict[str, int] = field(default_factory=dict)

    @property
    def jobs_per_second(self) -> float:
        return self.jobs / self.wall_seconds if self.wall_seconds else float("inf")

    @property
    def calls_per_job(self) -> float:
        return self.dynamodb_calls / self.jobs if self.jobs else 0.0

    @property
    def cpu_us_per_job(self) -> float:
        return self.cpu_seconds / self.jobs * 1e6 if self.jobs else 0.0

    @property
    def expected_runs(self) -> int:
        """A new job runs once; a duplicate never."""
        return self.jobs if self.name == PASSES[0] else 0


def run_passes(
    spec: ConsumerSpec,
    work: Workload,
    *,
    dynamodb: Any,
    sqs: Any,
    queue_url: str,
    server_cpu: Callable[[], float] = lambda: 0.0,
) -> list[PassResult]:
    """Build ``spec``'s consumer on the clients, warm it up (untimed), then time each pass.

    Raises
    ------
    ValueError
        ``spec`` has no factory (it is not built yet).
    """
    if spec.build is None:
        raise ValueError(f"consumer {spec.name!r} is not built: {spec.status()}")
    env = ConsumerEnv(dynamodb=dynamodb, sqs=sqs, queue_url=queue_url)
    process_batch = spec.build(env)
    counter = CallCounter(dynamodb)
    try:
        for batch in work.warmup:
            process_batch(batch)
        results = []
        for name, batches in zip(PASSES, (work.new, work.duplicates), strict=True):
            results.append(
                _one_pass(
                    spec.name, name, batches, process_batch, env=env, counter=counter, server_cpu=server_cpu
                )
            )
    finally:
        counter.close()
    return results


def _one_pass(
    consumer: str,
    name: str,
    batches: list[Batch],
    process_batch: Callable[[Batch], Any],
    *,
    env: ConsumerEnv,
    counter: CallCounter,
    server_cpu: Callable[[], float],
) -> PassResult:
    counter.reset()
    env.ran = 0
    failures = 0
    server_before = server_cpu()
    cpu_before = time.process_time()
    wall_before = time.perf_counter()
    for batch in batches:
        failures += len(process_batch(batch)["batchItemFailures"])
    wall = time.perf_counter() - wall_before
    cpu = time.process_time() - cpu_before - (server_cpu() - server_before)
    return PassResult(
        consumer=consumer,
        name=name,
        jobs=sum(len(batch) for batch in batches),
        wall_seconds=wall,
        cpu_seconds=cpu,
        dynamodb_calls=counter.total,
        failures=failures,
        executed=env.ran,
        calls_by_operation=dict(counter.by_operation),
    )
