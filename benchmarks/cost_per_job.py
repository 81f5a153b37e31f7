"""Figure 9: what one job costs: DynamoDB units, SQS requests, Lambda GB-seconds, log bytes, dollars.

Each case runs one consumer, built through its public factory (the runtime's ``build_processor``, as
figures 1-4 do), against the in-memory responder, which meters every DynamoDB call by DynamoDB's
rules (:mod:`benchmarks.capacity`). So the figure measures whatever the runtime does today, and shows
the gain of any change to it with no change here.

The workload. 10 groups (the construct's batch size, 10 records), jobs sent round-robin over them,
every job new, without ``seq``. Two batch fills:

- **one job per group**: every batch holds one job of each of 10 groups (the usual case at low
  traffic: a FIFO batch fills across groups);
- **ten jobs per group**: every batch holds 10 consecutive jobs of one group (a busy group).

Before the measured jobs, ``warmup_per_group`` jobs per group run unmeasured, so state mode's
bookkeeping is in its steady state (it remembers up to 100 job ids per group today). The state cases
pad the state's JSON to 0.1, 1, 10 and 100 KB.

Three deliveries, measured one after the other on the same consumer and tables (:data:`DELIVERIES`):

- **first delivery**: ``jobs`` new jobs, every record received for the first time (the healthy case);
- **duplicates**: the same batches again, after they were committed, each record received a second
  time (as when an invocation committed but its response was lost or came after the visibility
  timeout): every job is skipped as a duplicate, none runs;
- **redelivered**: ``jobs`` other new jobs, never run, every record received a second time (as after
  an invocation that crashed or timed out before reaching them). Claim mode ignores the receive
  count, so it pays what a first delivery pays; state mode reads the group's run item with the batch's
  read and writes a run marker (one small item) before the group's first transition, then commits.
  A job whose own run crashed is not in it: in claim mode its claim is still ``IN_FLIGHT``, and the
  retry pays a refused claim and a retake on top (:mod:`constructs_fifo.runtime.claim.store`, rules 2
  and 3); in state mode its group is isolated and marks every transition (one unit each).

The models (each stated once, here):

- **SQS requests per job**: *modelled* (made by code this benchmark does not run): the producer's
  ``SendMessageBatch`` of 10, on the first delivery only (a duplicate or a redelivery here is the same
  message received again); the mapping's one ``ReceiveMessage`` per batch and one
  ``DeleteMessageBatch`` per batch for its successes (as Lambda's poller does; empty receives of an
  idle queue are not per job and are left out). *Counted*: every SQS call the runtime makes itself
  (``ChangeMessageVisibility(Batch)`` for retries, ``SendMessage(Batch)`` to the dead-letter queue and
  of wake-up messages), as the in-memory responder answers it. A request whose payload passes 64 KB
  counts once per 64 KB chunk.
- **Lambda**: one request per batch; billed duration per batch = its measured CPU, scaled to the
  function's share of a vCPU (Lambda gives one vCPU at 1,769 MB, proportionally less below), plus
  :data:`LATENCY_MS_PER_CALL` per DynamoDB or SQS call the consumer makes, rounded up to 1 ms; at the
  construct's default memory.
- **Logs**: the bytes the runtime's logger writes (counted, not dropped), plus Lambda's own START,
  END and REPORT lines per invocation (:data:`PLATFORM_LOG_BYTES_PER_INVOCATION`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from functools import partial

from benchmarks.consumer_env import BatchFn, ConsumerEnv, LogCounter
from benchmarks.consumers import BASELINE, CONSUMERS, ConsumerSpec, build_state
from benchmarks.counting import CallCounter
from benchmarks.prices import (
    DYNAMODB_READ,
    DYNAMODB_WRITE,
    LAMBDA_GB_SECOND,
    LAMBDA_REQUEST,
    LOGS_INGESTED_GB,
    SQS_CHUNK_BYTES,
    SQS_FIFO_REQUEST,
)
from benchmarks.responder import Responder
from benchmarks.workload import QUEUE_URL, REGION, Batch, Record, aws_environment, fifo_batches, records

__all__ = [
    "DELIVERIES",
    "DUPLICATES",
    "FILLS",
    "FIRST_DELIVERY",
    "LATENCY_MS_PER_CALL",
    "PLATFORM_LOG_BYTES_PER_INVOCATION",
    "REDELIVERED",
    "STATE_SIZES_KB",
    "CostCase",
    "JobCost",
    "cost_cases",
    "crossover_state_bytes",
    "delivery_case",
    "expected_runs",
    "measure_cost",
]

#: The two batch fills of figure 9.
FILLS = ("one job per group", "ten jobs per group")
#: The three deliveries of figure 9 (see the module docstring), in the order they are shown.
FIRST_DELIVERY, REDELIVERED, DUPLICATES = "first delivery", "redelivered", "duplicates"
DELIVERIES = (FIRST_DELIVERY, REDELIVERED, DUPLICATES)
#: The receive count of a record received before (``ApproximateReceiveCount``).
SECOND_RECEIVE = "2"
#: The state sizes of figure 9, in KB (of the state's JSON).
STATE_SIZES_KB = (0.1, 1.0, 10.0, 100.0)
#: The latency model: wall time per DynamoDB or SQS call (about DynamoDB's in-region latency).
LATENCY_MS_PER_CALL = 5.0
#: Lambda gives a function one vCPU at this much memory, proportionally less below (Lambda docs,
#: "Configure Lambda function memory").
ONE_VCPU_MEMORY_MB = 1769
#: Lambda's START, END and REPORT lines of one invocation in the text format, about:
#: ``START RequestId: <36> Version: $LATEST`` (72 B), ``END RequestId: <36>`` (52 B),
#: ``REPORT RequestId: <36>  Duration: 2.17 ms  Billed Duration: 3 ms  Memory Size: 256 MB  Max
#: Memory Used: 65 MB`` (~140 B), each with its timestamp and stream metadata.
PLATFORM_LOG_BYTES_PER_INVOCATION = 290
#: Records per batch: the construct's default (constructs_fifo.construct.settings.defaults.BATCH_SIZE).
BATCH_RECORDS = 10
_GB = 1024**3


@dataclass(frozen=True)
class CostCase:
    """One consumer (``subject``) at one batch fill; ``state_bytes`` for the state cases."""

    subject: str
    fill: str
    spec: ConsumerSpec
    state_bytes: int | None = None


def _state_spec(state_bytes: int) -> ConsumerSpec:
    base = CONSUMERS["state"]
    return replace(base, name=f"state-{state_bytes}", build=partial(build_state, state_bytes=state_bytes))


def delivery_case(fill: str, delivery: str) -> str:
    """The ``case`` of figure 9's rows: the fill alone for a first delivery, else fill and delivery.

    >>> delivery_case("one job per group", "first delivery"), delivery_case("one job per group", "duplicates")
    ('one job per group', 'one job per group, duplicates')
    """
    return fill if delivery == FIRST_DELIVERY else f"{fill}, {delivery}"


def _kb(size_kb: float) -> str:
    return f"state {size_kb:g} KB"


def cost_cases(state_sizes_kb: tuple[float, ...] = STATE_SIZES_KB) -> list[CostCase]:
    """claim, claim-park, state at each size and Powertools (when installed), at both fills."""
    subjects: list[tuple[str, ConsumerSpec, int | None]] = [
        ("claim", CONSUMERS["claim"], None),
        ("claim-park", CONSUMERS["claim-park"], None),
        *[(_kb(kb), _state_spec(round(kb * 1024)), round(kb * 1024)) for kb in state_sizes_kb],
    ]
    if CONSUMERS[BASELINE].status() is None:
        subjects.append((BASELINE, CONSUMERS[BASELINE], None))
    return [CostCase(name, fill, spec, size) for fill in FILLS for name, spec, size in subjects]


@dataclass
class JobCost:
    """What the measured jobs of one case and delivery consumed, in total; per job by the properties."""

    case: CostCase
    jobs: int
    batches: int
    delivery: str = FIRST_DELIVERY
    write_units: float = 0.0
    read_units: float = 0.0
    items_written: int = 0
    bytes_written: int = 0
    dynamodb_calls: int = 0
    runtime_sqs_requests: int = 0
    mapping_sqs_requests: int = 0
    producer_sqs_requests: int = 0
    billed_ms: float = 0.0
    cpu_seconds: float = 0.0
    log_bytes: int = 0
    #: The same jobs' log bytes at the BATCH level (successes summarized per batch).
    batch_log_bytes: int = 0
    memory_mb: int = 256
    failures: int = 0
    executed: int = 0
    sqs_by_operation: dict[str, int] = field(default_factory=dict)

    def per_job(self, total: float) -> float:
        return total / self.jobs if self.jobs else 0.0

    @property
    def sqs_requests(self) -> int:
        return self.runtime_sqs_requests + self.mapping_sqs_requests + self.producer_sqs_requests

    @property
    def gb_seconds(self) -> float:
        return self.billed_ms / 1000 * self.memory_mb / 1024

    @property
    def ingested_log_bytes(self) -> int:
        return self.log_bytes + PLATFORM_LOG_BYTES_PER_INVOCATION * self.batches

    @property
    def dollars_per_million_jobs(self) -> dict[str, float]:
        """By service, and ``total``: at :mod:`benchmarks.prices`."""
        million = 1e6 / self.jobs if self.jobs else 0.0
        parts = {
            "DynamoDB writes": self.write_units * DYNAMODB_WRITE.dollars_per_unit,
            "DynamoDB reads": self.read_units * DYNAMODB_READ.dollars_per_unit,
            "SQS": self.sqs_requests * SQS_FIFO_REQUEST.dollars_per_unit,
            "Lambda duration": self.gb_seconds * LAMBDA_GB_SECOND.dollars_per_unit,
            "Lambda requests": self.batches * LAMBDA_REQUEST.dollars_per_unit,
            "logs": self.ingested_log_bytes / _GB * LOGS_INGESTED_GB.dollars_per_unit,
        }
        scaled = {name: value * million for name, value in parts.items()}
        return {**scaled, "total": sum(scaled.values())}

    @property
    def state_overhead_bytes(self) -> float | None:
        """The mean item written less the state's JSON: the bookkeeping every state write carries."""
        if self.case.state_bytes is None or not self.items_written:
            return None
        return self.bytes_written / self.items_written - self.case.state_bytes


def _chunks(payload_bytes: int) -> int:
    return max(1, math.ceil(payload_bytes / SQS_CHUNK_BYTES))


def _body_bytes(batch: Batch) -> int:
    return sum(len(str(record["body"]).encode()) for record in batch)


def _batches(fill: str, queue: list[Record]) -> list[Batch]:
    if fill == FILLS[0]:  # records are round-robin over BATCH_RECORDS groups: each chunk, one per group
        return [queue[start : start + BATCH_RECORDS] for start in range(0, len(queue), BATCH_RECORDS)]
    return fifo_batches(queue, BATCH_RECORDS)


def _memory_mb() -> int:
    from constructs_fifo.construct.settings.defaults import MEMORY_SIZE  # noqa: PLC0415 - loads aws_cdk

    return int(MEMORY_SIZE)


def _received_again(batches: list[Batch]) -> list[Batch]:
    """The same records, each received a second time (``ApproximateReceiveCount`` 2)."""
    return [
        [{**record, "attributes": {**record["attributes"], "ApproximateReceiveCount": SECOND_RECEIVE}}
         for record in batch]
        for batch in batches
    ]  # fmt: skip


@dataclass
class _Meter:
    """One case's consumer, wired to a metering responder; measures one delivery at a time."""

    process: BatchFn
    responder: Responder
    counter: CallCounter
    env: ConsumerEnv
    memory_mb: int

    def deliver(
        self, case: CostCase, delivery: str, batches: list[Batch], *, producer_sends: bool
    ) -> JobCost:
        """Process ``batches`` and return what they consumed (``producer_sends``: the jobs were sent)."""
        responder, env = self.responder, self.env
        cpu_scale = max(1.0, ONE_VCPU_MEMORY_MB / self.memory_mb)
        jobs = [record for batch in batches for record in batch]
        cost = JobCost(
            case, jobs=len(jobs), batches=len(batches), delivery=delivery, memory_mb=self.memory_mb
        )
        responder.capacity.reset()
        sqs_before = _sqs_calls(responder)
        dynamodb_before = _calls(responder, "dynamodb.")
        batch_log = env.batch_log
        assert batch_log is not None  # figure 9 counts both levels (measure_cost gives the counter)
        log_before, batch_log_before, env.ran = env.log.bytes, batch_log.bytes, 0
        for batch in batches:
            self.counter.reset()
            server_before, cpu_before = responder.cpu_seconds, time.process_time()
            cost.failures += len(self.process(batch)["batchItemFailures"])
            cpu = time.process_time() - cpu_before - (responder.cpu_seconds - server_before)
            cost.cpu_seconds += cpu
            cost.billed_ms += math.ceil(cpu * 1000 * cpu_scale + LATENCY_MS_PER_CALL * self.counter.total)
            cost.mapping_sqs_requests += _chunks(_body_bytes(batch)) + 1  # receive + delete the successes
        if producer_sends:
            cost.producer_sqs_requests = sum(
                _chunks(_body_bytes(jobs[start : start + 10])) for start in range(0, len(jobs), 10)
            )
        runtime_sqs = {name: count - sqs_before.get(name, 0) for name, count in _sqs_calls(responder).items()}
        cost.sqs_by_operation = {name: count for name, count in runtime_sqs.items() if count}
        cost.runtime_sqs_requests = sum(runtime_sqs.values())
        cost.write_units = responder.capacity.write_units
        cost.read_units = responder.capacity.read_units
        cost.items_written = responder.capacity.items_written
        cost.bytes_written = responder.capacity.bytes_written
        cost.dynamodb_calls = _calls(responder, "dynamodb.") - dynamodb_before
        cost.log_bytes = env.log.bytes - log_before
        cost.batch_log_bytes = batch_log.bytes - batch_log_before
        cost.executed = env.ran
        return cost


def measure_cost(
    case: CostCase, *, jobs: int, warmup_per_group: int, memory_mb: int | None = None
) -> dict[str, JobCost]:
    """Run ``case`` against a fresh metering responder: warm-up jobs, then each of :data:`DELIVERIES`.

    The first delivery and the duplicates are ``jobs`` new jobs and the same records received again;
    the redelivery is ``jobs`` other new jobs, received a second time without ever having run. The
    duplicates come right after the first delivery, so state mode still remembers every job id (it
    remembers 100 per group: at most ``jobs`` of 1,000 over the 10 groups).
    """
    aws_environment()

    if case.spec.build is None:
        raise ValueError(f"consumer {case.spec.name!r} is not built: {case.spec.status()}")
    groups = BATCH_RECORDS
    warm = records([f"warm-{index}" for index in range(warmup_per_group * groups)], groups)
    first = _batches(case.fill, records([f"job-{index}" for index in range(jobs)], groups))
    again = _batches(case.fill, records([f"again-{index}" for index in range(jobs)], groups))
    dynamodb = case.spec.client("dynamodb", region_name=REGION)
    sqs = case.spec.client("sqs", region_name=REGION)
    responder = Responder(case.spec.tables)
    responder.attach(dynamodb, sqs)
    env = ConsumerEnv(dynamodb=dynamodb, sqs=sqs, queue_url=QUEUE_URL, batch_log=LogCounter())
    process = case.spec.build(env)
    counter = CallCounter(dynamodb, sqs)
    meter = _Meter(process, responder, counter, env, memory_mb if memory_mb is not None else _memory_mb())
    try:
        for batch in _batches(case.fill, warm):
            process(batch)
        measured = {FIRST_DELIVERY: meter.deliver(case, FIRST_DELIVERY, first, producer_sends=True)}
        measured[DUPLICATES] = meter.deliver(case, DUPLICATES, _received_again(first), producer_sends=False)
        measured[REDELIVERED] = meter.deliver(case, REDELIVERED, _received_again(again), producer_sends=False)
    finally:
        counter.close()
        responder.detach()
    if responder.errors:
        raise RuntimeError(
            f"{case.subject}: requests outside the in-memory model (extend benchmarks/responder.py): "
            + "; ".join(sorted(set(responder.errors)))
        )
    return {delivery: measured[delivery] for delivery in DELIVERIES}


def expected_runs(cost: JobCost) -> int:
    """How many times the job function must have run in ``cost``'s delivery: none for duplicates."""
    return 0 if cost.delivery == DUPLICATES else cost.jobs


def _calls(responder: Responder, prefix: str) -> int:
    return sum(count for name, count in responder.calls.items() if name.startswith(prefix))


def _sqs_calls(responder: Responder) -> dict[str, int]:
    return {name: count for name, count in responder.calls.items() if name.startswith("sqs.")}


def crossover_state_bytes(state: list[JobCost], claim_units_per_job: float) -> float | None:
    """The state size (bytes) above which state mode's write units per job pass ``claim_units_per_job``.

    From the measured cases of one fill: item writes per job and the bookkeeping each write carries
    (the mean item size less the state) are taken from the smallest measured state, and units follow
    DynamoDB's 1 KB steps. ``None`` when no state case ran; a negative value means state mode costs
    more than claim mode at any state size (the bookkeeping alone passes the bound).
    """
    runs = [run for run in state if run.state_overhead_bytes is not None and run.jobs]
    if not runs:
        return None
    smallest = min(runs, key=lambda run: run.case.state_bytes or 0)
    writes_per_job = smallest.per_job(smallest.items_written)
    overhead = smallest.state_overhead_bytes or 0.0
    if writes_per_job <= 0:
        return math.inf
    steps = math.floor(claim_units_per_job / writes_per_job + 1e-9)  # 1 KB steps each write may take
    return steps * 1024 - overhead
