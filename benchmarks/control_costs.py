"""Figure 9, what the controls cost: DynamoDB calls, read and write units per job a control touches.

Each case plays one control (``JobSteering``, as an operator or an MCP server calls it) on a queue of
its own, end to end: the producer sends, the control is called, and the source queue's records are
delivered in Lambda's FIFO batches of 10 to the runtime built by the benchmark's consumer factories
(:mod:`benchmarks.consumers`, the runtime's ``build_processor``), until the queue is empty. The
DynamoDB calls of the control, the producer and the runtime are answered and metered by the in-memory
responder (:mod:`benchmarks.responder`: units by DynamoDB's rules, as figure 9's other rows), and the
same play runs again on moto (in process), whose call counts must be the responder's, call for call (a
check of the model, as figures 1-4 make). SQS: the messages the producer, the control and the runtime
send are counted and become the records delivered; the mapping's receives and deletes are not counted
(they are per batch, as in figure 9's other rows).

Every case is one group of :data:`JOBS` jobs (one batch), so a per-batch read is shared by the batch's
jobs as on a busy group; the hold's cases also keep 1 job, where nothing is shared. Each case's value is
per job the control touches (a kept job for a hold), beside the same consumer's **uncontrolled** jobs
(sent and run, nothing else) measured the same way. A later control adds one :class:`ControlCase` to
:data:`CONTROL_CASES`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from benchmarks.consumer_env import BatchFn, ConsumerEnv, LogCounter
from benchmarks.consumers import CLAIM_TABLE, CONSUMERS, GROUP_TABLE, build_claim, build_state
from benchmarks.counting import CallCounter
from benchmarks.responder import Responder, TableSpec
from benchmarks.workload import QUEUE_ARN, QUEUE_URL, REGION, Batch, Record, aws_environment, fifo_batches

__all__ = [
    "CONTROL_CASES",
    "JOBS",
    "UNCONTROLLED",
    "ControlBench",
    "ControlCase",
    "ControlCost",
    "measure_control",
]

#: Jobs per case: one group, one batch of the construct's default size.
JOBS = 10
#: Records per batch, as Lambda delivers a FIFO queue (the construct's default batch size).
BATCH_RECORDS = 10
#: The control of the baseline cases: jobs sent and run, nothing steered.
UNCONTROLLED = "none"
_GROUP = "ws#steered"
_JOB_TYPE = "apply_patch"


@dataclass
class ControlCost:
    """What one case consumed, in total; per job by :meth:`per_job`."""

    case: ControlCase
    jobs: int = 0
    dynamodb_calls: int = 0
    read_units: float = 0.0
    write_units: float = 0.0
    sqs_requests: int = 0
    executed: int = 0
    failures: int = 0
    calls_by_operation: dict[str, int] = field(default_factory=dict)
    #: The same play's DynamoDB calls on moto, by operation (``None`` until measured there).
    moto_calls_by_operation: dict[str, int] | None = None

    def per_job(self, total: float) -> float:
        return total / self.jobs if self.jobs else 0.0


class _Queue:
    """The source queue as far as the cases need it: what was sent, in send order, until delivered.

    It listens to the SQS client's sends (botocore ``provide-client-params``: the API's parameters), so
    what the producer, the control and the runtime send becomes the records Lambda would deliver.
    """

    def __init__(self, sqs: Any) -> None:
        self.pending: list[Record] = []
        self._id = f"bench-queue-{uuid.uuid4()}"
        sqs.meta.events.register("provide-client-params.sqs.SendMessage", self._sent_one, unique_id=self._id)
        sqs.meta.events.register(
            "provide-client-params.sqs.SendMessageBatch", self._sent_batch, unique_id=self._id + "b"
        )

    def _sent_one(self, params: dict[str, Any], **_: Any) -> None:
        self.pending.append(_record(params))

    def _sent_batch(self, params: dict[str, Any], **_: Any) -> None:
        self.pending.extend(_record(entry) for entry in params["Entries"])

    def take(self, batches: int | None = None) -> list[Batch]:
        """The pending records cut into Lambda's FIFO batches (the first ``batches`` of them), taken."""
        cut = fifo_batches(self.pending, BATCH_RECORDS)[:batches]
        taken = {record["messageId"] for batch in cut for record in batch}
        self.pending = [record for record in self.pending if record["messageId"] not in taken]
        return cut


def _record(params: dict[str, Any]) -> Record:
    """A Lambda SQS record of one sent message (``SendMessage`` or a batch entry's parameters)."""
    message_id = str(uuid.uuid4())
    return {
        "messageId": message_id,
        "receiptHandle": f"rh-{message_id}",
        "body": params["MessageBody"],
        "attributes": {
            "ApproximateReceiveCount": "1",
            "SentTimestamp": "1700000000000",
            "MessageGroupId": params["MessageGroupId"],
            "MessageDeduplicationId": params.get("MessageDeduplicationId", message_id),
        },
        "messageAttributes": {
            name: {"stringValue": value.get("StringValue"), "dataType": value["DataType"]}
            for name, value in params.get("MessageAttributes", {}).items()
        },
        "eventSource": "aws:sqs",
        "eventSourceARN": QUEUE_ARN,
        "awsRegion": REGION,
    }


@dataclass
class ControlBench:
    """One case's queue, runtime, producer and steering, sharing one DynamoDB and one SQS client.

    A case's play calls :meth:`send`, the steering's controls and :meth:`deliver`, and wraps what
    belongs to the case in :meth:`measured`; what it does outside is not counted.
    """

    steering: Any
    producer: Any
    queue: _Queue
    env: ConsumerEnv
    counter: CallCounter
    responder: Responder | None
    cost: ControlCost
    consumer: BatchFn = field(init=False)

    def send(self, count: int = JOBS, *, prefix: str = "job", supersede: str | None = None) -> list[Any]:
        """``count`` new jobs of the case's group, sent in one ``send_batch`` (``supersede``: each with
        its own key ``<supersede><n>``, sent one by one with ``send_superseding``)."""
        from constructs_fifo.client import JobMessage  # noqa: PLC0415 - keep importing this module cheap

        run = uuid.uuid4().hex[:6]
        jobs = [
            JobMessage(
                f"{prefix}-{run}-{n}",
                _JOB_TYPE,
                {"n": n},
                group=_GROUP,
                supersede=None if supersede is None else f"{supersede}{n}",
            )
            for n in range(count)
        ]
        if supersede is None:
            self.producer.send_batch(jobs)
        else:
            for job in jobs:
                self.steering.send_superseding(self.producer, job)
        return jobs

    def deliver(self, batches: int | None = None) -> None:
        """Deliver the queue's records to the runtime, batch after batch, until it is empty (or
        ``batches`` were delivered); what the runtime sends meanwhile is delivered too."""
        delivered = 0
        while self.queue.pending and (batches is None or delivered < batches):
            for batch in self.queue.take(1):
                self.cost.failures += len(self.consumer(batch)["batchItemFailures"])
                delivered += 1

    @property
    def group(self) -> str:
        return _GROUP

    @contextmanager
    def measured(self, jobs: int) -> Iterator[None]:
        """Count what runs inside toward the case, per ``jobs`` jobs."""
        responder = self.responder
        calls_before = dict(self.counter.by_operation)
        reads = responder.capacity.read_units if responder else 0.0
        writes = responder.capacity.write_units if responder else 0.0
        yield
        cost = self.cost
        cost.jobs += jobs
        for name, count in self.counter.by_operation.items():
            added = count - calls_before.get(name, 0)
            if added:
                cost.calls_by_operation[name] = cost.calls_by_operation.get(name, 0) + added
        if responder is not None:
            cost.read_units += responder.capacity.read_units - reads
            cost.write_units += responder.capacity.write_units - writes


#: A case's play: the sends, controls and deliveries, the counted part inside ``bench.measured``.
Play = Callable[[ControlBench], None]
#: Run inside each job the runtime runs (``None``: the job does nothing), given the bench and the job.
InJob = Callable[[ControlBench, Any], None]


@dataclass(frozen=True)
class ControlCase:
    """One control in one situation, on one consumer (a key of :data:`~benchmarks.consumers.CONSUMERS`)."""

    control: str
    case: str
    consumer: str
    per: str
    play: Play
    #: How many times the job function must run in the whole play (a check, as figure 9's).
    runs: int
    in_job: InJob | None = None
    #: The queue's pace limit as the construct writes it (``PaceLimit.to_env``); ``None``: not paced.
    pace: str | None = None
    #: How many records the runtime must return to the queue (``batchItemFailures``): a paced one waits.
    returned: int = 0

    @property
    def label(self) -> str:
        return self.control if self.control == UNCONTROLLED else f"{self.control}: {self.case}"


def _uncontrolled(bench: ControlBench) -> None:
    with bench.measured(JOBS):
        bench.send()
        bench.deliver()


def _cancel_before_start(bench: ControlBench) -> None:
    with bench.measured(JOBS):
        jobs = bench.send()
        for job in jobs:
            bench.steering.cancel(job.job_id, group=job.group, reason="bench", by="bench")
        bench.deliver()


def _cancel_itself(bench: ControlBench, job: Any) -> None:
    """The job is cancelled while it runs (as by an MCP client's ``notifications/cancelled``)."""
    bench.steering.cancel(job.id, group=job.group, reason="bench", by="bench")


def _cancel_while_running(bench: ControlBench) -> None:
    with bench.measured(JOBS):
        bench.send()
        bench.deliver()


def _hold_and_release(kept: int) -> Play:
    def play(bench: ControlBench) -> None:
        with bench.measured(kept):
            bench.steering.hold(bench.group, reason="bench", by="bench")
            bench.send(kept)
            bench.deliver()
            bench.steering.release(bench.group)
            bench.deliver()

    return play


def _supersede_runs(bench: ControlBench) -> None:
    with bench.measured(JOBS):
        bench.send(supersede="key")
        bench.deliver()


def _supersede_skipped(bench: ControlBench) -> None:
    with bench.measured(JOBS):
        bench.send(prefix="old", supersede="key")
    bench.send(prefix="new", supersede="key")  # the newer job of each key: not this case's
    with bench.measured(0):
        bench.deliver(batches=1)  # the older jobs: one batch, each skipped
    bench.deliver()


def _run_first(bench: ControlBench) -> None:
    from constructs_fifo.client import JobMessage  # noqa: PLC0415 - keep importing this module cheap

    bench.steering.hold(bench.group, reason="bench", by="bench")
    fix = JobMessage(f"fix-{uuid.uuid4().hex[:6]}", _JOB_TYPE, {"fix": True}, group=bench.group)
    with bench.measured(1):
        bench.steering.run_first(fix)
    bench.steering.release(bench.group)
    with bench.measured(0):
        bench.deliver()


def _pace(jobs: int, period_seconds: int, burst: int) -> str:
    """A pace limit on each group (the one group of a case is its one value), as the construct writes it."""
    from constructs_fifo.runtime.steering.pace import KEY_GROUP, PaceLimit  # noqa: PLC0415

    return PaceLimit(jobs=jobs, period_seconds=period_seconds, burst=burst, key=KEY_GROUP).to_env()


#: A limit the case's 10 jobs stay under: every job takes its token and runs.
_PACE_ROOMY = _pace(6_000, 60, 100)
#: One job a day: a bucket once taken has no token for the day.
_PACE_SPENT = _pace(1, 86_400, 1)


def _paced_waits(bench: ControlBench) -> None:
    """Another process took the group's token: the batch's first record finds the bucket empty (its
    refused ``UpdateItem``), and it and every record behind it wait in their places."""
    from constructs_fifo.runtime.steering.pace_store import (  # noqa: PLC0415
        claim_table_key,
        group_table_key,
        open_pace,
    )

    state = bench.cost.case.consumer == "state"
    other = open_pace(
        _PACE_SPENT,
        GROUP_TABLE if state else CLAIM_TABLE,
        bench.env.dynamodb,
        group_table_key if state else claim_table_key,
    )
    assert other is not None
    other.take(bench.group)  # the other process's run: not this case's
    bench.send()
    with bench.measured(JOBS):
        bench.deliver(batches=1)


#: Every case of figure 9's controls, in the order shown. The uncontrolled case of each consumer is the
#: baseline of its controls.
CONTROL_CASES: tuple[ControlCase, ...] = (
    ControlCase(UNCONTROLLED, "sent and run", "claim", "job", _uncontrolled, JOBS),
    ControlCase("cancel", "before it starts (the cancel and its delivery)", "claim", "job",
                _cancel_before_start, 0),
    ControlCase("cancel", "while it runs (the cancel, the refused completion)", "claim", "job",
                _cancel_while_running, JOBS, in_job=_cancel_itself),
    ControlCase("supersede", "a job sent with a key that runs (its marker and its read)", "claim", "job",
                _supersede_runs, JOBS),
    ControlCase("supersede", "a job superseded before it starts (its marker, its read, its cancel)",
                "claim", "job", _supersede_skipped, JOBS),
    ControlCase("pace", "a paced job that runs (its token, then its claim)", "claim", "job",
                _uncontrolled, JOBS, pace=_PACE_ROOMY),
    ControlCase("pace", "a delivery that waits (the bucket taken by another process)", "claim",
                "waiting job", _paced_waits, 0, pace=_PACE_SPENT, returned=JOBS),
    ControlCase(UNCONTROLLED, "sent and run", "claim-park", "job", _uncontrolled, JOBS),
    ControlCase("hold + release", f"a group of {JOBS} kept jobs", "claim-park", "kept job",
                _hold_and_release(JOBS), JOBS),
    ControlCase("hold + release", "a group of 1 kept job", "claim-park", "kept job",
                _hold_and_release(1), 1),
    ControlCase("run first", "a job put ahead of a held group, and its run at the release", "claim-park",
                "job", _run_first, 1),
    ControlCase(UNCONTROLLED, "sent and run", "state", "job", _uncontrolled, JOBS),
    ControlCase("cancel", "before it starts (the cancel and its delivery)", "state", "job",
                _cancel_before_start, 0),
    ControlCase("pace", "a paced job that runs (one token per group run and key)", "state", "job",
                _uncontrolled, JOBS, pace=_PACE_ROOMY),
    ControlCase("pace", "a delivery that waits (the bucket taken by another process)", "state",
                "waiting job", _paced_waits, 0, pace=_PACE_SPENT, returned=JOBS),
)  # fmt: skip


def _bench(case: ControlCase, dynamodb: Any, sqs: Any, responder: Responder | None) -> ControlBench:
    from constructs_fifo.client import JobProducer, JobSteering  # noqa: PLC0415

    spec = CONSUMERS[case.consumer]
    tables = {table.name for table in spec.tables}
    steering = JobSteering(
        claim_table=CLAIM_TABLE if CLAIM_TABLE in tables else None,
        group_table=GROUP_TABLE if GROUP_TABLE in tables else None,
        dynamodb=dynamodb,
        sqs=sqs,
        queue_url=QUEUE_URL,
    )
    env = ConsumerEnv(dynamodb=dynamodb, sqs=sqs, queue_url=QUEUE_URL, batch_log=LogCounter())
    bench = ControlBench(
        steering=steering,
        producer=JobProducer(QUEUE_URL, sqs_client=sqs),
        queue=_Queue(sqs),
        env=env,
        counter=CallCounter(dynamodb, sqs),
        responder=responder,
        cost=ControlCost(case),
    )
    in_job = case.in_job
    if in_job is not None:  # claim mode, CONTINUE, with the job's own step
        bench.consumer = build_claim(env, job=lambda job: in_job(bench, job))
    elif case.pace is not None:  # a paced queue: claim mode (CONTINUE) or state mode
        bench.consumer = (build_state if case.consumer == "state" else build_claim)(env, pace=case.pace)
    else:
        assert spec.build is not None
        bench.consumer = spec.build(env)
    return bench


def _on_responder(case: ControlCase) -> ControlCost:
    from benchmarks.consumers import runtime_client  # noqa: PLC0415

    dynamodb = runtime_client("dynamodb", region_name=REGION)
    sqs = runtime_client("sqs", region_name=REGION)
    responder = Responder(CONSUMERS[case.consumer].tables)
    responder.attach(dynamodb, sqs)
    bench = _bench(case, dynamodb, sqs, responder)
    try:
        case.play(bench)
    finally:
        bench.counter.close()
        responder.detach()
    bench.cost.executed = bench.env.ran
    if responder.errors:
        raise RuntimeError(
            f"controls, {case.label}: requests outside the in-memory model (extend benchmarks/responder.py): "
            + "; ".join(sorted(set(responder.errors)))
        )
    return bench.cost


def _on_moto(case: ControlCase) -> dict[str, int]:
    """The play's DynamoDB calls by operation on moto (in process), its tables created as the construct's."""
    from moto import mock_aws  # noqa: PLC0415 - a dev dependency, loaded when measured

    from benchmarks.consumers import runtime_client  # noqa: PLC0415

    with mock_aws():
        dynamodb = runtime_client("dynamodb", region_name=REGION)
        sqs = runtime_client("sqs", region_name=REGION)
        sqs.create_queue(
            QueueName=QUEUE_URL.rsplit("/", 1)[1],
            Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "false"},
        )
        for table in CONSUMERS[case.consumer].tables:
            _create_table(dynamodb, table)
        bench = _bench(case, dynamodb, sqs, None)
        try:
            case.play(bench)
        finally:
            bench.counter.close()
    return {name: count for name, count in bench.cost.calls_by_operation.items() if _is_dynamodb(name)}


def _create_table(dynamodb: Any, table: TableSpec) -> None:
    keys = [(table.partition_key, "HASH")] + ([(table.sort_key, "RANGE")] if table.sort_key else [])
    dynamodb.create_table(
        TableName=table.name,
        KeySchema=[{"AttributeName": name, "KeyType": kind} for name, kind in keys],
        AttributeDefinitions=[{"AttributeName": name, "AttributeType": "S"} for name, _ in keys],
        BillingMode="PAY_PER_REQUEST",
    )


#: The DynamoDB operations the cases make (the rest of a counter's operations are SQS's).
_DYNAMODB_OPERATIONS = frozenset(
    {
        "PutItem", "UpdateItem", "GetItem", "DeleteItem", "BatchGetItem", "BatchWriteItem",
        "TransactWriteItems", "TransactGetItems", "Query",
    }
)  # fmt: skip


def _is_dynamodb(operation: str) -> bool:
    return operation in _DYNAMODB_OPERATIONS


def measure_control(case: ControlCase, *, on_moto: bool = True) -> ControlCost:
    """Play ``case`` on the metering responder (calls and units) and, with ``on_moto``, again on moto
    (its calls, for :attr:`ControlCost.moto_calls_by_operation`)."""
    aws_environment()
    cost = _on_responder(case)
    dynamodb = {name: count for name, count in cost.calls_by_operation.items() if _is_dynamodb(name)}
    sqs = {f"sqs.{name}": n for name, n in cost.calls_by_operation.items() if not _is_dynamodb(name)}
    cost.dynamodb_calls, cost.sqs_requests = sum(dynamodb.values()), sum(sqs.values())
    cost.calls_by_operation = dynamodb | sqs
    if on_moto:
        cost.moto_calls_by_operation = _on_moto(case)
    return cost
