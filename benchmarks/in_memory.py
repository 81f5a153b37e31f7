"""Figures 2 and 3: each consumer against the in-memory responder, instantly or with a delay per call.

Every consumer gets fresh boto3 clients and a fresh :class:`~benchmarks.responder.Responder` with its
tables. With ``delay_seconds=0`` the CPU of a pass, less the responder's own, is the consumer's code and
the client side of its calls (figure 2). With a delay per DynamoDB call the wall time of a pass is what
one group sees on AWS (figure 3): batches run one after another, as a group's do, because a FIFO group
has at most one batch in flight.
"""

from __future__ import annotations

from benchmarks.consumers import ConsumerSpec
from benchmarks.passes import PassResult, run_passes
from benchmarks.responder import Responder
from benchmarks.workload import QUEUE_URL, REGION, Workload, aws_environment

__all__ = ["ResponderError", "run_in_memory"]


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
    import boto3  # noqa: PLC0415 - keep importing this module cheap

    dynamodb = boto3.client("dynamodb", region_name=REGION)
    sqs = boto3.client("sqs", region_name=REGION)
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
