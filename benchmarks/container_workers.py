"""Figure 11: container workers: heartbeat cost, CPU per job against Lambda's, slots, dollars.

Four measures, one run:

- **Heartbeat cost per job-minute.** The worker's real
  :class:`~constructs_fifo.worker.heartbeat.WorkerHeartbeat` and
  :class:`~constructs_fifo.worker.lent_claims.HeartbeatClaims` hold a batch of 10 records whose first
  job runs ``job_minutes``, against the in-memory responder (which meters every DynamoDB write by
  DynamoDB's rules, as figures 9 and 10 do). A fake clock moves one interval at a time and the heartbeat
  is ticked by hand (no ticker thread, no real waiting), so the calls and units are counted, not
  derived: each tick is one ChangeMessageVisibilityBatch (the batch's records) and one claim renewal.
- **CPU per job, worker against Lambda.** The same kind of records (claim mode, CONTINUE, every job new)
  through ``process_batch`` two ways on the same responder and clients: the Lambda handler path
  (``processor.process``, as figure 2 runs it) and the worker's slot path (``Worker.run_batch``: the
  slot's heartbeat ticker started once, as ``Worker.run`` starts it, and serving every batch; the
  claims lent to it, the batch's successes deleted, the RunningSlots metric). CPU is the process's
  (every thread), less the responder's own; the median of ``repeats`` runs, each interleaving the
  paths batch by batch (the first of each batch rotating), as figure 2's runs do.
- **Jobs per second of one worker** with 1, 4 and 16 slots: ``build_worker`` (the command's own
  factory) against the emulator's server (its own process, as the demo's workers run), a fresh FIFO
  queue and claim table per slot count with :data:`SLOT_GROUPS` groups, each job sleeping
  :data:`SLOT_JOB_SLEEP_MS` (so slots, not the framework alone, bound the rate); wall time from the
  start of the worker to the last job's end.
- **Dollars per million 10-minute jobs**, Fargate against Lambda (:mod:`benchmarks.prices`): a task of
  the container consumer's default size (1 vCPU, 2 GB), one job per slot, billed for the job's minutes
  (a busy service: no idle time), plus the measured heartbeats; Lambda billed for the job's minutes at
  its memory, one invocation per job (a batch of ten 10-minute jobs would pass its 15-minute cap).
  What both pay alike (the claim's writes, the queue's requests: figure 9) is left out of both.
"""

from __future__ import annotations

import contextlib
import statistics
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

from benchmarks.consumer_env import ConsumerEnv, LogCounter
from benchmarks.consumers import CLAIM_TABLE, build_claim, quiet_logger, runtime_client
from benchmarks.prices import (
    DYNAMODB_WRITE,
    FARGATE_GB_HOUR,
    FARGATE_VCPU_HOUR,
    LAMBDA_GB_SECOND,
    LAMBDA_REQUEST,
    SQS_FIFO_REQUEST,
)
from benchmarks.responder import Responder, TableSpec
from benchmarks.workload import QUEUE_ARN, QUEUE_URL, REGION, Batch, aws_environment, fifo_batches, records

__all__ = [
    "CPU_PATHS",
    "EMULATOR",
    "HEARTBEAT_BATCH_RECORDS",
    "HEARTBEAT_INTERVALS_S",
    "HEARTBEAT_JOB_MINUTES",
    "IN_PROCESS",
    "LAMBDA_PATH",
    "PROCESSOR_PATH",
    "SLOT_COUNTS",
    "SLOT_GROUPS",
    "SLOT_JOB_SLEEP_MS",
    "WORKER_PATH",
    "CpuPerJob",
    "HeartbeatCost",
    "JobDollars",
    "SlotThroughput",
    "dollars_per_million",
    "measure_cpu",
    "measure_heartbeat",
    "measure_slots",
]

#: The job of the heartbeat measure runs this long (and the dollars' job).
HEARTBEAT_JOB_MINUTES: Final = 10
#: The default interval first (the settings row's), then a longer one.
HEARTBEAT_INTERVALS_S: Final = (30, 60)
#: Records in the heartbeat's batch: the running job and the nine behind it (one request per tick).
HEARTBEAT_BATCH_RECORDS: Final = 10
#: The slot counts of the throughput measure.
SLOT_COUNTS: Final = (1, 4, 16)
#: Groups of the throughput measure: enough that 16 slots each find a group with work.
SLOT_GROUPS: Final = 32
#: What each job of the throughput measure does: sleep this long (an agent's call, a test's wait).
SLOT_JOB_SLEEP_MS: Final = 20
#: Lambda gives a function one vCPU at this much memory (Lambda docs, "Configure Lambda function memory").
ONE_VCPU_MEMORY_MB: Final = 1769
_QUEUE_NAME = QUEUE_ARN.rsplit(":", 1)[-1]


@dataclass(frozen=True)
class HeartbeatCost:
    """What one job's heartbeats cost over ``job_minutes`` at ``interval_s``, counted."""

    interval_s: int
    job_minutes: int
    ticks: int
    sqs_requests: int
    dynamodb_calls: int
    write_units: float
    stale: bool

    @property
    def sqs_per_minute(self) -> float:
        return self.sqs_requests / self.job_minutes

    @property
    def write_units_per_minute(self) -> float:
        return self.write_units / self.job_minutes

    @property
    def dollars_per_job_hour(self) -> float:
        per_minute = (
            self.sqs_per_minute * SQS_FIFO_REQUEST.dollars_per_unit
            + self.write_units_per_minute * DYNAMODB_WRITE.dollars_per_unit
        )
        return per_minute * 60


def _visibility_s() -> int:
    from constructs_fifo.construct.settings.defaults import (  # noqa: PLC0415 - loads aws_cdk
        CONTAINER_VISIBILITY_TIMEOUT,
    )

    return int(CONTAINER_VISIBILITY_TIMEOUT.to_seconds())


def _clients(tables: tuple[TableSpec, ...]) -> tuple[Any, Any, Responder]:
    """Clients as the runtime makes its own (Lambda's and the worker's alike), answered by a responder."""
    aws_environment()
    dynamodb = runtime_client("dynamodb", region_name=REGION)
    sqs = runtime_client("sqs", region_name=REGION)
    responder = Responder(tables)
    responder.attach(dynamodb, sqs)
    return dynamodb, sqs, responder


def _checked(responder: Responder, figure: str) -> None:
    responder.detach()
    if responder.errors:
        raise RuntimeError(f"{figure}: requests outside the in-memory model: " + "; ".join(responder.errors))


def measure_heartbeat(interval_s: int, *, job_minutes: int = HEARTBEAT_JOB_MINUTES) -> HeartbeatCost:
    """Tick one batch's heartbeat through a ``job_minutes`` job (module docstring), counting its calls."""
    from constructs_fifo.runtime.job import Job  # noqa: PLC0415 - the code measured
    from constructs_fifo.runtime.observability import JobLogger  # noqa: PLC0415
    from constructs_fifo.worker.heartbeat import WorkerHeartbeat  # noqa: PLC0415
    from constructs_fifo.worker.lent_claims import HeartbeatClaims  # noqa: PLC0415

    dynamodb, sqs, responder = _clients((TableSpec(CLAIM_TABLE, "id"),))
    now = [1_700_000_000.0]

    def clock() -> float:
        return now[0]

    try:
        log = JobLogger("Bench", stream=LogCounter(), clock=clock)
        heartbeat = WorkerHeartbeat(
            sqs,
            QUEUE_URL,
            visibility_timeout_seconds=_visibility_s(),
            interval_seconds=interval_s,
            logger=log,
            queue_name=_QUEUE_NAME,
            clock=clock,
            ticker=False,
        )
        claims = HeartbeatClaims(CLAIM_TABLE, dynamodb, clock=clock, heartbeat=heartbeat)
        batch = records([f"long-{index}" for index in range(HEARTBEAT_BATCH_RECORDS)], 1)
        heartbeat.begin(now[0])
        first = batch[0]
        job = Job(f"long-{interval_s}", "ws#0", "run_tests", {}, 1, first["messageId"], {})
        claims.claim(job, lease_ms=heartbeat.lease_ms)
        calls_before = dict(responder.calls)
        responder.capacity.reset()
        ticks = 0
        with heartbeat.running(cast("Any", batch)):  # the workload's records are SQSRecords
            while (ticks + 1) * interval_s <= job_minutes * 60:
                now[0] += interval_s
                heartbeat.tick()
                ticks += 1
        counted = {name: count - calls_before.get(name, 0) for name, count in responder.calls.items()}
        return HeartbeatCost(
            interval_s=interval_s,
            job_minutes=job_minutes,
            ticks=ticks,
            sqs_requests=sum(count for name, count in counted.items() if name.startswith("sqs.")),
            dynamodb_calls=sum(count for name, count in counted.items() if name.startswith("dynamodb.")),
            write_units=responder.capacity.write_units,
            stale=heartbeat.stale(),
        )
    finally:
        _checked(responder, "figure 11 heartbeat")


#: The CPU measure's paths: the Lambda handler, a worker slot's whole batch, its processor alone.
LAMBDA_PATH, WORKER_PATH, PROCESSOR_PATH = "lambda", "worker", "worker processor"
CPU_PATHS: Final = (LAMBDA_PATH, WORKER_PATH, PROCESSOR_PATH)


@dataclass(frozen=True)
class CpuPerJob:
    """Median framework CPU per job of each path, and how many jobs each path ran in all."""

    us_per_job: dict[str, float]
    jobs: int
    ran: dict[str, int]
    failures: dict[str, int]

    @property
    def lambda_us(self) -> float:
        return self.us_per_job[LAMBDA_PATH]

    @property
    def worker_us(self) -> float:
        return self.us_per_job[WORKER_PATH]


def _worker_path(
    env: ConsumerEnv, *, settle: bool = True
) -> tuple[Callable[[Batch], Any], Callable[[], None]]:
    """Claim mode (CONTINUE) in one worker slot, built as ``build_worker`` builds each slot, its heartbeat
    ticker started as ``Worker.run`` starts it; and what stops the ticker (the worker's stop).

    ``settle=False``: the slot's processor alone, as ``Worker.run_batch`` calls it, without the
    DeleteMessageBatch and the RunningSlots lines around it: the same work as the Lambda function's.
    """
    from constructs_fifo.runtime.constants import DeadJobPolicy  # noqa: PLC0415 - the code measured
    from constructs_fifo.runtime.entrypoint import build_processor  # noqa: PLC0415
    from constructs_fifo.runtime.settings.config import RuntimeConfig  # noqa: PLC0415
    from constructs_fifo.worker.heartbeat import WorkerHeartbeat  # noqa: PLC0415
    from constructs_fifo.worker.lent_claims import HeartbeatClaims  # noqa: PLC0415
    from constructs_fifo.worker.loop import QueueTarget, Slot, Worker  # noqa: PLC0415
    from constructs_fifo.worker.protection import ScaleInProtection  # noqa: PLC0415

    config = RuntimeConfig(
        CLAIM_TABLE,
        env.queue_url,
        dead_letter_queue_url=env.queue_url,
        on_dead_job=DeadJobPolicy.CONTINUE,
        visibility_timeout_seconds=_visibility_s(),
    )
    log = quiet_logger(env.log)
    heartbeat = WorkerHeartbeat(
        env.sqs,
        env.queue_url,
        visibility_timeout_seconds=config.visibility_timeout_seconds,
        interval_seconds=config.heartbeat_interval_seconds,
        logger=log,
        queue_name=_QUEUE_NAME,
    )
    claims = HeartbeatClaims(CLAIM_TABLE, env.dynamodb, heartbeat=heartbeat)

    def handle(job: Any, context: Any) -> None:
        env.job_ran()

    processor: Any = build_processor(
        config,
        dynamodb_client=env.dynamodb,
        sqs_client=env.sqs,
        job_handler=handle,
        logger=log,
        heartbeat=heartbeat,
        claims=claims,
    )
    slot = Slot(processor.process_batch, heartbeat, env.sqs)
    worker = Worker(
        QueueTarget(env.queue_url, QUEUE_ARN, REGION),
        [slot],
        batch_size=10,
        logger=log,
        protection=ScaleInProtection(None, on_event=log.event),
    )
    heartbeat.start()
    if not settle:
        return lambda batch: slot.process_batch(
            cast("Any", batch), heartbeat.begin(time.time())
        ), heartbeat.close
    return lambda batch: worker.run_batch(slot, cast("Any", batch)), heartbeat.close  # records are SQSRecords


def measure_cpu(*, jobs: int = 200, groups: int = 20, repeats: int = 5) -> CpuPerJob:
    """Framework CPU per job of the Lambda handler path and the worker's slot path (module docstring)."""
    dynamodb, sqs, responder = _clients((TableSpec(CLAIM_TABLE, "id"),))
    stops: list[Callable[[], None]] = []
    try:
        envs = {name: ConsumerEnv(dynamodb=dynamodb, sqs=sqs, queue_url=QUEUE_URL) for name in CPU_PATHS}
        worker, stop_worker = _worker_path(envs[WORKER_PATH])
        processor, stop_processor = _worker_path(envs[PROCESSOR_PATH], settle=False)
        stops += [stop_worker, stop_processor]
        paths = {
            LAMBDA_PATH: (envs[LAMBDA_PATH], build_claim(envs[LAMBDA_PATH])),
            WORKER_PATH: (envs[WORKER_PATH], worker),
            PROCESSOR_PATH: (envs[PROCESSOR_PATH], processor),
        }
        samples: dict[str, list[float]] = {name: [] for name in paths}
        failures = dict.fromkeys(paths, 0)
        for name, (_, process) in paths.items():  # warm-up: imports, first calls
            for batch in fifo_batches(records([f"warm-{name}-{i}" for i in range(10)], 1), 10):
                process(batch)
        for env, _ in paths.values():
            env.ran = 0
        names = list(paths)
        for repeat in range(max(1, repeats)):
            # batch by batch in turn, the first of each batch rotating (as figure 2's runs): a change
            # of load on the machine falls on every path alike
            runs = {
                name: fifo_batches(records([f"{name}-{repeat}-{index}" for index in range(jobs)], groups), 10)
                for name in names
            }
            cpu_seconds = dict.fromkeys(names, 0.0)
            for index in range(len(runs[names[0]])):
                for offset in range(len(names)):
                    name = names[(index + offset) % len(names)]
                    server_before, cpu_before = responder.cpu_seconds, time.process_time()
                    failures[name] += len(paths[name][1](runs[name][index])["batchItemFailures"])
                    cpu_seconds[name] += (
                        time.process_time() - cpu_before - (responder.cpu_seconds - server_before)
                    )
            for name in names:
                samples[name].append(cpu_seconds[name] / jobs * 1e6)
        return CpuPerJob(
            us_per_job={name: statistics.median(values) for name, values in samples.items()},
            jobs=jobs * max(1, repeats),
            ran={name: env.ran for name, env in envs.items()},
            failures=failures,
        )
    finally:
        for stop in stops:
            stop()
        _checked(responder, "figure 11 CPU")


@dataclass(frozen=True)
class SlotThroughput:
    """One worker's run: ``jobs`` distinct jobs done in ``seconds`` with ``slots`` slots."""

    slots: int
    jobs: int
    done: int
    runs: int
    seconds: float

    @property
    def jobs_per_second(self) -> float:
        return self.done / self.seconds if self.seconds else 0.0


#: Where the slot runs' queue and table live: the emulator's server (its own process, as for the demo's
#: workers) or moto in this process (the tests: no server to start; moto then shares the worker's GIL).
EMULATOR, IN_PROCESS = "emulator", "in-process moto"
ClientFactory = Callable[[str], Any]


@contextlib.contextmanager
def _services(backend: str) -> Iterator[ClientFactory]:
    """A boto3 client factory on ``backend``: a started emulator, or in-process moto."""
    aws_environment()
    import boto3  # noqa: PLC0415 - keep importing this module cheap

    if backend == IN_PROCESS:
        from moto import mock_aws  # noqa: PLC0415 - a dev dependency, as figure 4's

        make: Any = boto3.client
        with mock_aws():
            yield lambda service: make(service, region_name=REGION)
        return
    from constructs_fifo.local.emulator.launch import require_server_packages  # noqa: PLC0415
    from constructs_fifo.local.emulator.process import EmulatorProcess  # noqa: PLC0415

    require_server_packages()
    with EmulatorProcess() as emulator:
        session: Any = emulator.target().session()
        yield lambda service: session.client(service, endpoint_url=emulator.endpoint_url)


def measure_slots(
    slot_counts: Sequence[int] = SLOT_COUNTS, *, jobs: int, backend: str = EMULATOR, timeout_s: float = 120.0
) -> list[SlotThroughput]:
    """One ``build_worker`` worker per slot count, each on a fresh queue, until every job ran once."""
    with _services(backend) as client:
        return [_slot_run(client, slots, jobs=jobs, timeout_s=timeout_s) for slots in slot_counts]


def _slot_run(client: ClientFactory, slots: int, *, jobs: int, timeout_s: float) -> SlotThroughput:
    from constructs_fifo.runtime.constants import DeadJobPolicy  # noqa: PLC0415 - the code measured
    from constructs_fifo.runtime.settings.config import RuntimeConfig  # noqa: PLC0415
    from constructs_fifo.worker.run import build_worker, worker_options  # noqa: PLC0415

    done: set[str] = set()
    runs = [0]
    lock = threading.Lock()
    all_done = threading.Event()
    last_end = [0.0]

    def handle(job: Any, context: Any) -> None:
        time.sleep(SLOT_JOB_SLEEP_MS / 1000)
        with lock:
            runs[0] += 1
            done.add(job.id)
            last_end[0] = time.perf_counter()
            if len(done) >= jobs:
                all_done.set()

    sqs, dynamodb = client("sqs"), client("dynamodb")
    name = f"bench-workers-{slots}"
    url = sqs.create_queue(
        QueueName=f"{name}.fifo", Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "true"}
    )["QueueUrl"]
    dynamodb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    for start in range(0, jobs, 10):
        sqs.send_message_batch(
            QueueUrl=url,
            Entries=[
                {
                    "Id": str(index),
                    "MessageBody": f'{{"jobId": "job-{index}", "type": "run_tests", "payload": {{}}}}',
                    "MessageGroupId": f"ws#{index % SLOT_GROUPS}",
                }
                for index in range(start, min(jobs, start + 10))
            ],
        )
    config = RuntimeConfig(
        name,
        url,
        dead_letter_queue_url=url,
        on_dead_job=DeadJobPolicy.CONTINUE,
        visibility_timeout_seconds=_visibility_s(),
    )
    options = worker_options(config, slots=slots, wait_time_seconds=1)
    # The worker logs to stdout, as in a container: counted and dropped, so ``--json`` stays clean.
    with contextlib.redirect_stdout(LogCounter()):
        worker = build_worker(config, options, client_factory=client, job_handler=handle, environ={})
        started = time.perf_counter()
        thread = threading.Thread(target=worker.run, daemon=True, name="bench-worker")
        thread.start()
        all_done.wait(timeout_s)
        worker.stop()
        thread.join(timeout=10)
    return SlotThroughput(slots, jobs, len(done), runs[0], (last_end[0] or time.perf_counter()) - started)


@dataclass(frozen=True)
class JobDollars:
    """Dollars per million jobs of one way to run a ``job_minutes`` job, by part and in total."""

    subject: str
    parts: dict[str, float]

    @property
    def total(self) -> float:
        return sum(self.parts.values())


def dollars_per_million(
    heartbeat: HeartbeatCost, *, job_minutes: int = HEARTBEAT_JOB_MINUTES
) -> list[JobDollars]:
    """Fargate (1 slot and the default slots per task) and Lambda (default memory, one vCPU)."""
    from constructs_fifo.construct.settings.defaults import (  # noqa: PLC0415 - loads aws_cdk
        CONTAINER_CPU,
        CONTAINER_MEMORY_MIB,
        MEMORY_SIZE,
        SLOTS,
    )

    million = 1e6
    hours = job_minutes / 60
    vcpu, gb = CONTAINER_CPU / 1024, CONTAINER_MEMORY_MIB / 1024
    task_per_hour = vcpu * FARGATE_VCPU_HOUR.dollars_per_unit + gb * FARGATE_GB_HOUR.dollars_per_unit
    beats = {
        "heartbeat SQS": heartbeat.sqs_per_minute * job_minutes * SQS_FIFO_REQUEST.dollars_per_unit * million,
        "heartbeat DynamoDB": heartbeat.write_units_per_minute
        * job_minutes
        * DYNAMODB_WRITE.dollars_per_unit
        * million,
    }
    made = []
    for slots in sorted({1, SLOTS}):
        made.append(
            JobDollars(
                f"Fargate {vcpu:g} vCPU {gb:g} GB, {slots} slot{'s' if slots > 1 else ''} per task",
                {"Fargate": task_per_hour * hours / slots * million, **beats},
            )
        )
    for memory_mb in (int(MEMORY_SIZE), ONE_VCPU_MEMORY_MB):
        gb_seconds = job_minutes * 60 * memory_mb / 1024
        made.append(
            JobDollars(
                f"Lambda {memory_mb} MB, one job per invocation",
                {
                    "Lambda duration": gb_seconds * LAMBDA_GB_SECOND.dollars_per_unit * million,
                    "Lambda requests": LAMBDA_REQUEST.dollars_per_unit * million,
                },
            )
        )
    return made
