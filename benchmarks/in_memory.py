"""Figures 2 and 3: each consumer against the in-memory responder, instantly or with a delay per call.

Every consumer gets fresh boto3 clients and a fresh :class:`~benchmarks.responder.Responder` with its
tables. With ``delay_seconds=0`` the CPU of a pass, less the responder's own, is the consumer's code and
the client side of its calls (figure 2): :func:`run_interleaved` runs the consumers batch by batch in
turn (the order rotating), so that a change of load on the machine, which moved whole-pass timings by
a third between runs, falls on every consumer alike. With a delay per DynamoDB call the wall time of a
pass is what one group sees on AWS (figure 3, :func:`run_in_memory`): batches run one after another, as
a group's do, because a FIFO group has at most one batch in flight.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from benchmarks.consumer_env import ConsumerEnv
from benchmarks.consumers import ConsumerSpec
from benchmarks.counting import CallCounter
from benchmarks.direct_client import DirectClient
from benchmarks.passes import PASSES, PassResult, run_passes
from benchmarks.responder import Responder
from benchmarks.workload import QUEUE_URL, REGION, Batch, Workload, aws_environment

__all__ = ["ResponderError", "run_in_memory", "run_interleaved"]


class ResponderError(RuntimeError):
    """A consumer sent a request outside the responder's model: its figures would be wrong."""


def run_in_memory(spec: ConsumerSpec, work: Workload, *, delay_seconds: float = 0.0) -> list[PassResult]:
    """Measure ``spec``'s consumer against a fresh in-memory responder.

    Raises
    ------
    ResponderError
        The consumer sent a request the responder does not model (the message lists them).
    """
    aws_environment()
    dynamodb = spec.client("dynamodb", region_name=REGION)
    sqs = spec.client("sqs", region_name=REGION)
    responder = Responder(spec.tables, delay_seconds=delay_seconds)
    responder.attach(dynamodb, sqs)
    try:
        results = run_passes(
            spec,
            work,
            dynamodb=dynamodb,
            sqs=sqs,
            queue_url=QUEUE_URL,
            server_cpu=lambda: responder.cpu_seconds,
        )
    finally:
        responder.detach()
    if responder.errors:
        raise ResponderError(
            f"{spec.name}: requests outside the in-memory model (extend benchmarks/responder.py): "
            + "; ".join(sorted(set(responder.errors)))
        )
    return results


@dataclass
class _Turn:
    """One consumer of an interleaved run: its clients' responder, counter and what a pass adds up."""

    spec: ConsumerSpec
    responder: Responder
    env: ConsumerEnv
    #: DynamoDB calls by operation (a :class:`CallCounter`'s, or a :class:`DirectClient`'s own).
    calls: Counter[str]
    process_batch: Any
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0
    failures: int = 0

    def run(self, batch: Batch) -> None:
        server_before = self.responder.cpu_seconds
        cpu_before, wall_before = time.process_time(), time.perf_counter()
        self.failures += len(self.process_batch(batch)["batchItemFailures"])
        self.wall_seconds += time.perf_counter() - wall_before
        self.cpu_seconds += time.process_time() - cpu_before - (self.responder.cpu_seconds - server_before)

    def result(self, name: str, batches: list[Batch]) -> PassResult:
        return PassResult(
            consumer=self.spec.name,
            name=name,
            jobs=sum(len(batch) for batch in batches),
            wall_seconds=self.wall_seconds,
            cpu_seconds=self.cpu_seconds,
            dynamodb_calls=sum(self.calls.values()),
            failures=self.failures,
            executed=self.env.ran,
            calls_by_operation=dict(self.calls),
        )

    def start_pass(self) -> None:
        self.calls.clear()
        self.env.ran, self.failures, self.cpu_seconds, self.wall_seconds = 0, 0, 0.0, 0.0


def run_interleaved(
    specs: list[ConsumerSpec], work: Workload, *, botocore: bool = True
) -> dict[str, list[PassResult]]:
    """Measure ``specs``' consumers against fresh responders (no delay), batch by batch in turn.

    Each consumer has its own clients, responder and tables, and sees the same batches in the same
    order as :func:`run_in_memory` gives it; only the time between its batches changes. The first
    consumer of each batch is the next one along, so none always runs first. Returns each consumer's
    passes by name, as :func:`run_in_memory` does. ``botocore=False`` gives each consumer
    :class:`~benchmarks.direct_client.DirectClient` clients instead of boto3's: the framework alone.

    Raises
    ------
    ResponderError
        A consumer sent a request the responder does not model (the message lists them).
    ValueError
        A consumer has no factory (it is not built yet).
    """
    aws_environment()
    turns: list[_Turn] = []
    counters: list[CallCounter] = []
    try:
        for spec in specs:
            if spec.build is None:
                raise ValueError(f"consumer {spec.name!r} is not built: {spec.status()}")
            responder = Responder(spec.tables)
            calls: Counter[str]
            if botocore:
                dynamodb: Any = spec.client("dynamodb", region_name=REGION)
                sqs: Any = spec.client("sqs", region_name=REGION)
                responder.attach(dynamodb, sqs)
                counters.append(CallCounter(dynamodb))
                calls = counters[-1].by_operation
            else:
                dynamodb, sqs = DirectClient(responder, "dynamodb"), DirectClient(responder, "sqs")
                calls = dynamodb.calls
            env = ConsumerEnv(dynamodb=dynamodb, sqs=sqs, queue_url=QUEUE_URL)
            turns.append(_Turn(spec, responder, env, calls, spec.build(env)))
        for turn in turns:
            for batch in work.warmup:
                turn.process_batch(batch)
        results: dict[str, list[PassResult]] = {spec.name: [] for spec in specs}
        for name, batches in zip(PASSES, (work.new, work.duplicates), strict=True):
            for turn in turns:
                turn.start_pass()
            for index, batch in enumerate(batches):
                for offset in range(len(turns)):
                    turns[(index + offset) % len(turns)].run(batch)
            for turn in turns:
                results[turn.spec.name].append(turn.result(name, batches))
    finally:
        for counter in counters:
            counter.close()
        for turn in turns:
            turn.responder.detach()
    errors = [f"{turn.spec.name}: {error}" for turn in turns for error in sorted(set(turn.responder.errors))]
    if errors:
        raise ResponderError(
            "requests outside the in-memory model (extend benchmarks/responder.py): " + "; ".join(errors)
        )
    return results
