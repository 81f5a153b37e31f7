"""The consumers the benchmark compares, as a registry of factories.

A factory gets a :class:`ConsumerEnv` (boto3 clients already answered by moto or by the in-memory
responder, the queue URL, a Lambda context, and a counter its job function must call once per job it
runs) and returns a :data:`BatchFn`: one batch of SQS records in, the partial-batch response out. The
harness creates the tables a consumer declares (:class:`TableSpec`), counts its calls with botocore
event hooks and times it; a factory only wires the consumer through its public entry point, so a
change of the runtime's constructors does not reach the harness.

Adding a consumer is one factory and one entry in :data:`CONSUMERS`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from benchmarks.consumer_env import BatchFn, ConsumerEnv, LogCounter
from benchmarks.powertools_baseline import (
    IDEMPOTENCY_TABLE,
    INSTALL_HINT,
    POWERTOOLS_VERSION,
    available,
    build_powertools,
)
from benchmarks.responder import TableSpec

__all__ = [
    "CLAIM_TABLE",
    "CONSUMERS",
    "GROUP_TABLE",
    "ClientMaker",
    "ConsumerFactory",
    "ConsumerSpec",
    "boto3_client",
    "build_claim",
    "build_claim_park",
    "build_state",
    "quiet_logger",
    "runtime_client",
]

#: The claim mode's table (partition key ``id``).
CLAIM_TABLE = "claims"
#: The group table of the PARK policy and of state mode (partition key ``group``, sort key ``sk``).
GROUP_TABLE = "groups"

#: A consumer's factory: wire it to the environment, return its batch function.
ConsumerFactory = Callable[[ConsumerEnv], BatchFn]
#: Makes a consumer's boto3 client for a service in a region, as the consumer makes its own.
ClientMaker = Callable[..., Any]


def boto3_client(service: str, *, region_name: str) -> Any:
    """boto3's default client: what Powertools' persistence layer makes when given none."""
    import boto3  # noqa: PLC0415 - keep importing this module cheap

    make: Any = boto3.client
    return make(service, region_name=region_name)


def runtime_client(service: str, *, region_name: str) -> Any:
    """Our runtime's client (:func:`constructs_fifo.runtime.aws_clients.runtime_client`): what the
    Lambda entry point and a worker make for themselves, botocore's client-side validation off."""
    from constructs_fifo.runtime import aws_clients  # noqa: PLC0415

    return aws_clients.runtime_client(service, region_name=region_name)


@dataclass(frozen=True)
class ConsumerSpec:
    """One consumer of the comparison.

    Attributes
    ----------
    name
        Its key and column name (``claim``, ``state``, ``powertools``).
    label
        What it is, for the report.
    tables
        The tables it needs (created on moto, modelled by the responder).
    build
        Its factory; ``None`` while it is not written yet (the report shows ``n/a (not built)``).
    unavailable
        Returns why it cannot run here (e.g. a package is missing), or ``None``.
    budget
        Expected DynamoDB calls per job for each pass (``"new jobs"``, ``"duplicates"``); a run
        that differs fails the benchmark. Empty: reported, not checked.
    client
        Makes its boto3 clients as it ships (the harness then answers and counts their calls):
        ours as the runtime makes its own, Powertools' as boto3's default.
    """

    name: str
    label: str
    tables: tuple[TableSpec, ...]
    build: ConsumerFactory | None
    unavailable: Callable[[], str | None] = lambda: None
    budget: Mapping[str, float] = field(default_factory=dict)
    client: ClientMaker = runtime_client

    def status(self) -> str | None:
        """``None`` when the consumer can run, else what the report shows instead of figures."""
        if self.build is None:
            return "n/a (not built)"
        reason = self.unavailable()
        return "n/a (not installed)" if reason else None

    @property
    def why_not(self) -> str:
        """The full reason behind :meth:`status` (with the fix, when there is one)."""
        return "not written yet" if self.build is None else (self.unavailable() or "")


def quiet_logger(stream: LogCounter | None = None, batch_stream: LogCounter | None = None) -> Any:
    """Our runtime's logger, formatting every outcome line as in Lambda and counting it into ``stream``.

    With ``batch_stream``, every call is also given to a logger at the BATCH level (successes
    summarized per batch) writing there, with the same capacity units: both levels counted in one run.
    """
    from constructs_fifo.runtime.constants import OutcomeLines  # noqa: PLC0415
    from constructs_fifo.runtime.observability import JobLogger  # noqa: PLC0415

    out = stream if stream is not None else LogCounter()
    if batch_stream is None:
        return JobLogger("Bench", stream=out)
    shadow = JobLogger("Bench", stream=batch_stream, outcome_lines=OutcomeLines.BATCH)

    class _Both(JobLogger):
        def outcome(self, *args: Any, **kwargs: Any) -> None:
            super().outcome(*args, **kwargs)
            shadow.outcome(*args, **kwargs)

        def metrics(self, **kwargs: Any) -> None:
            super().metrics(**kwargs)
            shadow.metrics(**kwargs)

        def event(self, fields: dict[str, Any]) -> None:
            super().event(fields)
            shadow.event(fields)

        def batch(self, *, queue_name: str, records: int) -> None:
            units = self.capacity.take()
            self.capacity.add(units)
            shadow.capacity.add(units)
            super().batch(queue_name=queue_name, records=records)
            shadow.batch(queue_name=queue_name, records=records)

    return _Both("Bench", stream=out)


def build_claim(
    env: ConsumerEnv, *, job: Callable[[Any], None] | None = None, pace: str | None = None
) -> BatchFn:
    """Claim mode under CONTINUE, as the entry point builds it (``build_processor``), clients injected.

    ``job``: called with each job after its run is counted (it may raise, as a job function does);
    by default a job does nothing. ``pace``: the queue's pace limit as the construct writes it
    (``PaceLimit.to_env``); ``None``: not paced.
    """
    return _claim(env, parks=False, job=job, pace=pace)


def build_claim_park(env: ConsumerEnv) -> BatchFn:
    """Claim mode under PARK (the default policy): one BatchGetItem of park headers per batch on top."""
    return _claim(env, parks=True)


def _claim(
    env: ConsumerEnv, *, parks: bool, job: Callable[[Any], None] | None = None, pace: str | None = None
) -> BatchFn:
    from constructs_fifo.runtime.constants import DeadJobPolicy  # noqa: PLC0415
    from constructs_fifo.runtime.entrypoint import build_processor  # noqa: PLC0415
    from constructs_fifo.runtime.settings.config import RuntimeConfig  # noqa: PLC0415

    def handle(one: Any, context: Any) -> None:
        env.job_ran()
        if job is not None:
            job(one)

    processor = build_processor(
        RuntimeConfig(
            claim_table=CLAIM_TABLE,
            queue_url=env.queue_url,
            dead_letter_queue_url=env.queue_url,  # sent to only when ``job`` raises
            on_dead_job=DeadJobPolicy.PARK if parks else DeadJobPolicy.CONTINUE,
            group_table=GROUP_TABLE if parks else None,
            pace=pace,
        ),
        dynamodb_client=env.dynamodb,
        sqs_client=env.sqs,
        job_handler=handle,
        logger=quiet_logger(env.log, env.batch_log),
    )
    return lambda batch: processor.process({"Records": batch}, env.context)


def build_state(env: ConsumerEnv, *, state_bytes: int = 0, pace: str | None = None) -> BatchFn:
    """State mode (PARK, the default policy): each job is a transition of its group's state.

    ``state_bytes``: the state's JSON is padded to about that many bytes (figure 9's state sizes);
    0 keeps it a few dozen bytes. ``pace``: as :func:`build_claim`'s.
    """
    pad = "x" * max(0, state_bytes - _STATE_JSON_BYTES)
    from constructs_fifo.runtime.constants import JobMode  # noqa: PLC0415
    from constructs_fifo.runtime.entrypoint import build_processor  # noqa: PLC0415
    from constructs_fifo.runtime.settings.config import RuntimeConfig  # noqa: PLC0415

    def apply(job: Any, state: dict[str, Any] | None) -> dict[str, Any]:
        env.job_ran()
        new = {"jobs": int((state or {}).get("jobs", 0)) + 1, "last": job.id}
        return {**new, "pad": pad} if pad else new

    processor = build_processor(
        RuntimeConfig(
            claim_table="",
            queue_url=env.queue_url,
            dead_letter_queue_url=env.queue_url,  # never sent to: no job dies in this workload
            group_table=GROUP_TABLE,
            mode=JobMode.STATE,
            pace=pace,
        ),
        dynamodb_client=env.dynamodb,
        sqs_client=env.sqs,
        job_handler=apply,
        logger=quiet_logger(env.log, env.batch_log),
    )
    return lambda batch: processor.process({"Records": batch}, env.context)


#: About the JSON of the padded state without its pad (counter, last job id, the pad's key).
_STATE_JSON_BYTES = 48


def _powertools_missing() -> str | None:
    return None if available() else f"aws-lambda-powertools is not importable; {INSTALL_HINT}"


#: Every consumer, in the report's column order. Powertools is the baseline of every ratio.
CONSUMERS: dict[str, ConsumerSpec] = {
    "claim": ConsumerSpec(
        "claim",
        "constructs-fifo claim mode, CONTINUE policy (build_processor)",
        tables=(TableSpec(CLAIM_TABLE, "id"),),
        build=build_claim,
        budget={"new jobs": 2.0, "duplicates": 1.0},
    ),
    "claim-park": ConsumerSpec(
        "claim-park",
        "constructs-fifo claim mode, PARK policy (the default): + 1 BatchGetItem per batch",
        tables=(TableSpec(CLAIM_TABLE, "id"), TableSpec(GROUP_TABLE, "group", "sk")),
        build=build_claim_park,
    ),
    "state": ConsumerSpec(
        "state",
        "constructs-fifo state mode, PARK policy: one read per batch, one write per group and batch",
        tables=(TableSpec(GROUP_TABLE, "group", "sk"),),
        build=build_state,
    ),
    "powertools": ConsumerSpec(
        "powertools",
        f"Powertools {POWERTOOLS_VERSION}: SqsFifoPartialProcessor(skip_group_on_error=True) "
        "+ idempotent_function(DynamoDBPersistenceLayer)",
        tables=(TableSpec(IDEMPOTENCY_TABLE, "id"),),
        build=build_powertools,
        unavailable=_powertools_missing,
        client=boto3_client,
    ),
}
#: The consumer every ratio is taken against.
BASELINE = "powertools"
