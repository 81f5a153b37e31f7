"""A chaos world: one model FIFO queue, the real runtime on moto, several workers, faults and time.

The world is what both modes share (:mod:`.claim_world` and :mod:`.state_world` add the processor,
the job function and what a write leaves):

- the queue is :class:`functional.fifo_model.FifoModel` (the project's one FIFO rule,
  ``constructs_fifo/local/emulator/fifo_rule.py``: a group's front is received again while a later
  record of it is still held by a slow or stale worker; receive counts, visibility, receipt handles
  that expire, SQS's own ``maxReceiveCount`` rule), reached by the runtime through a real boto3 SQS client
  (:mod:`.model_endpoint`); the tables and the dead-letter queue are moto's;
- SQS's rule is set to the least value the construct allows (``min_receive_count_for``), plus one
  receive for every invocation the chaos *disturbed*: a fault handed to it, a crash the mode does
  not count as an attempt, its deadline reached while it ran, a stale receive (it, and the worker
  still holding the message), a conditional write refused (a race; a refused first claim is the
  claim rules' normal path and disturbs nothing). The least value bounds the receives the
  runtime's own retries cause; a disturbed invocation costs each of its records at most one receive
  more (the construct's default, twice the least value, is the margin for those). So the rule fires
  only when the runtime's own retries cost a record more receives than the bound says;
- every invocation is a worker thread of :mod:`.scheduler`, running a fresh processor over one
  batch with a context whose remaining time runs on the fake clock (so a lease, which is the
  remaining time, ends at the worker's deadline); when it returns, the records it did not report
  are deleted, as the event source mapping does (SQS refuses a delete whose receipt handle expired:
  the record stays and comes back, and the invocation counts as disturbed), and when it fails (a
  crash) nothing is;
- :meth:`ChaosWorld.play` lets Hypothesis choose each step: which worker goes on and with which
  fault (:mod:`.faults`), a new invocation (with a poller delay: its deadline later than its
  batch's visibility, the stale worker with a live lease), a producer's next send, the clock moving
  on (visibility and leases expire under running workers: stale workers), an operator resuming a
  parked group; then :meth:`ChaosWorld.settle` finishes every worker and drains the queue without
  faults, and :meth:`ChaosWorld.resume_all` resumes the parked groups until none is left.
"""

from __future__ import annotations

import abc
import io
import json
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import boto3
from functional.fifo_model import Crash, FifoModel, Message
from functional.runtime_harness import (
    DLQ_NAME,
    GROUP_TABLE_NAME,
    REGION,
    TABLE_NAME,
    FakeClock,
    create_tables,
)
from hypothesis import strategies as st

from constructs_fifo.client.parked import ParkedGroups
from constructs_fifo.construct.settings.defaults import min_receive_count_for
from constructs_fifo.runtime.backoff import VisibilityChanger
from constructs_fifo.runtime.constants import DeadJobPolicy, JobMode
from constructs_fifo.runtime.dead_jobs.letters import DeadLetterSender
from constructs_fifo.runtime.dead_jobs.parking import PARKED
from constructs_fifo.runtime.exceptions import PermanentJobError
from constructs_fifo.runtime.job import Job
from constructs_fifo.runtime.observability import JobLogger
from constructs_fifo.runtime.steering.pace_store import PaceStore

from .calls import Point
from .faults import Fault, FaultInjector
from .gate import Gate
from .history import FaultGiven, History, Refused, Run
from .model_endpoint import ModelEndpoint
from .scheduler import Abort, Scheduler, Worker
from .workload import JobSpec, Send, Workload

__all__ = ["CLAIMS", "GROUPS", "ChaosWorld", "ClockContext", "WorldConfig"]

CLAIMS = TABLE_NAME
GROUPS = GROUP_TABLE_NAME

#: The conditional-write refusals: a fenced claim write, a lost state race.
_REFUSALS = ("ConditionalCheckFailedException", "TransactionCanceledException")


class Processor(Protocol):
    def process(self, event: dict[str, Any], context: Any) -> Any: ...


@dataclass(frozen=True)
class WorldConfig:
    """One world's settings (Hypothesis draws them per run).

    Attributes
    ----------
    policy : DeadJobPolicy
        What a dead job does to its group.
    max_attempts, batch_size : int
        The runtime's and the mapping's settings; SQS's ``maxReceiveCount`` is the least value the
        construct allows for them (plus the disturbed invocations: see the module docstring).
    timeout_s : int
        The function timeout: an invocation's deadline is its start plus this.
    visibility_s : int
        The queue's visibility timeout (the construct allows as low as ``timeout_s``).
    max_workers : int
        Invocations running at once.
    fault_rate : int
        Percent of the scheduling points at which a fault is drawn.
    max_faults : int
        Faults in one run, at most.
    slots : int
        Container worlds (:mod:`.worker_world`): the slots of each worker process.
    """

    policy: DeadJobPolicy = DeadJobPolicy.CONTINUE
    max_attempts: int = 3
    batch_size: int = 10
    timeout_s: int = 20
    visibility_s: int = 120
    max_workers: int = 2
    fault_rate: int = 0
    max_faults: int = 6
    slots: int = 1


class ClockContext:
    """A Lambda context whose remaining time runs on the world's clock, to the worker's deadline."""

    def __init__(self, clock: FakeClock, deadline: float) -> None:
        self._clock = clock
        self.deadline = deadline

    def get_remaining_time_in_millis(self) -> int:
        return int((self.deadline - self._clock()) * 1000)


class ChaosWorld(abc.ABC):
    """The shared world; see the module docstring. Subclasses give the mode."""

    #: Whether a crash inside a job counts as one of its attempts (claim mode: it does).
    crashes_count: bool = True
    #: Whether the queue has a claim table (claim mode).
    has_claims: bool = True
    #: The queue's mode: SQS's rule is the least value the construct allows for it.
    mode: JobMode = JobMode.CLAIM

    def __init__(self, config: WorldConfig, workload: Workload) -> None:
        self.started = time.perf_counter()
        self.config = config
        self.workload = workload
        self.clock = FakeClock()
        self.least_receive_count = min_receive_count_for(config.batch_size, config.max_attempts, self.mode)
        self.model = FifoModel(
            self.clock,
            max_receive_count=self.least_receive_count,
            batch_size=config.batch_size,
            visibility_timeout_seconds=config.visibility_s,
        )
        self.history = History()
        self.scheduler = Scheduler()
        self.injector = FaultInjector()
        self.gate = Gate(self.scheduler, self.injector, self._observe)
        # The runtime's and the operators' clients go through the gate; the readers do not.
        self.dynamodb = boto3.client("dynamodb", region_name=REGION)
        self.sqs = boto3.client("sqs", region_name=REGION)
        self.reader = boto3.client("dynamodb", region_name=REGION)
        self.reader_sqs = boto3.client("sqs", region_name=REGION)
        create_tables(self.reader)
        self.dlq_url = self.reader_sqs.create_queue(QueueName=DLQ_NAME, Attributes={"FifoQueue": "true"})[
            "QueueUrl"
        ]
        self.gate.attach(self.dynamodb)
        self.gate.attach(self.sqs)
        self.endpoint = ModelEndpoint(self.model, on_refused_delete=self._delete_refused)
        self.endpoint.attach(self.sqs)
        self.pending = deque(workload.sends)
        self.delivered: Counter[str] = Counter()
        self.healed: set[str] = set()
        self.skipped: list[str] = []
        self.invocations = 0
        self.steps = 0
        self.trace: list[str] = []
        self.disturbed: dict[str, str] = {}
        self._dead_letters: list[tuple[str, str]] = []
        #: job id -> the ``errorType`` of each of its dead-letter messages, in order.
        self.dead_letter_error_types: dict[str, list[str]] = {}
        self._reaped: set[str] = set()

    # --- the mode ------------------------------------------------------------------------------------

    @abc.abstractmethod
    def processor(self) -> Processor:
        """A fresh processor for one invocation, on the gated clients."""

    @abc.abstractmethod
    def observe_write(self, point: Point, worker: str) -> None:
        """Read back what a successful write of a worker (or an operator) left in its table."""

    def pace_store(self) -> PaceStore | None:
        """The pace limit's store of one processor (``None``: the queue is not paced; :mod:`.pace_world`)."""
        return None

    def max_receive_count(self) -> int:
        """SQS's own ``maxReceiveCount`` now: the least value, plus the disturbed invocations."""
        return self.least_receive_count + len(self.disturbed)

    def logger(self) -> JobLogger:
        return JobLogger("Chaos", stream=io.StringIO(), clock=self.clock)

    def visibility(self, logger: JobLogger) -> VisibilityChanger:
        return VisibilityChanger(self.sqs, self.model.url, on_error=logger.event)

    def dead_letter_sender(self) -> DeadLetterSender:
        return DeadLetterSender(self.sqs, self.dlq_url, clock=self.clock)

    # --- the job function's share ------------------------------------------------------------------

    def start_run(self, job: Job) -> Run:
        worker = self.scheduler.current()
        deadline = float(worker.meta["deadline"]) if worker is not None else self.clock()
        name = worker.name if worker is not None else "test"
        return self.history.start_run(name, job.id, job.group, clock=self.clock(), deadline=deadline)

    def misbehave(self, spec: JobSpec, run_number: int) -> None:
        """Raise what the job's kind says for its ``run_number``-th run (nothing once healed)."""
        if spec.job_id in self.healed:
            return
        if spec.kind == "permanent":
            raise PermanentJobError(f"{spec.job_id} can never apply")
        if spec.kind == "transient" and run_number <= spec.times:
            raise RuntimeError(f"{spec.job_id} flaked (run {run_number})")
        if spec.kind == "crash" and run_number <= spec.times:
            raise Crash(f"{spec.job_id} crashed its worker (run {run_number})")

    # --- world actions -------------------------------------------------------------------------------

    def send_next(self) -> None:
        """The producers' next send (waiting first, when the send is a late copy)."""
        send = self.pending.popleft()
        if send.wait_seconds:
            self.clock.advance(send.wait_seconds)
        message_id = self.deliver(send)
        if message_id is not None:
            self.delivered[send.spec.job_id] += 1
        self._note(f"send {send.spec.job_id} ({send.copy or 'original'}) -> {message_id or 'deduplicated'}")
        self._past_deadlines()

    def deliver(self, send: Send) -> str | None:
        """Put one send on the queue: its message id, ``None`` when SQS deduplicated it."""
        return self.model.send(send.spec.group, send.spec.body(), send.dedup_id)

    def invoke(self, *, poller_delay_s: float = 0) -> Worker | None:
        """Receive a batch and start a worker on it; ``None`` when nothing is receivable now."""
        self.model.max_receive_count = self.max_receive_count()
        batch = self.model.receive()
        if not batch:
            return None
        self.invocations += 1
        self.note_receive(batch, f"w{self.invocations}")
        deadline = self.clock() + poller_delay_s + self.config.timeout_s
        processor = self.processor()
        event = {"Records": self.model.records(batch)}
        context = ClockContext(self.clock, deadline)
        self._note(
            f"invoke w{self.invocations} until {deadline:.0f}: "
            + " ".join(f"{m.message_id}:{_job_id(m.body)}#{m.receive_count}" for m in batch)
        )
        worker = self.scheduler.spawn(
            f"w{self.invocations}",
            lambda: processor.process(event, context),
            batch=batch,
            deadline=deadline,
            spawned_at=self.clock(),
        )
        self._reap()
        return worker

    def note_receive(self, batch: list[Message], name: str) -> None:
        """Account for a receive by invocation ``name``: a stale receive disturbs it and every holder."""
        received = {message.message_id for message in batch}
        self._count_fronts_served_early(batch)
        holders = self.holders(received)
        if holders:
            self.history.stale_receives += 1
            self._disturb(name, "stale receive")
            for holder in holders:
                self._disturb(holder, "stale receive")

    def holders(self, received: set[str]) -> list[str]:
        """The invocations still holding one of the ``received`` message ids (a stale receive)."""
        waiting = self.scheduler.waiting()
        return [w.name for w in waiting if received & {m.message_id for m in w.meta["batch"]}]

    def cancelled_ids(self) -> set[str]:
        """The jobs an operator's cancel reported cancelled (a steered world's; none here)."""
        return set()

    def can_invoke(self) -> bool:
        """Whether the schedule may start an invocation now."""
        return bool(self.model.messages) and len(self.scheduler.waiting()) < self.config.max_workers

    def more_actions(self) -> list[str]:
        """Actions a world adds to the schedule's choices (see :meth:`act`)."""
        return []

    def act(self, action: str, draw: Callable[[st.SearchStrategy[Any]], Any]) -> None:
        """Play one of :meth:`more_actions` (the base world has ``resume``)."""
        if action == "resume":
            self.resume(draw(st.sampled_from(self.workload.groups())))

    def step(self, worker: Worker, fault: Fault | None = None) -> None:
        """Let ``worker`` go on to its next point, with ``fault`` at the point it leaves."""
        if fault is not None:
            assert worker.point is not None
            self.history.faults.append(FaultGiven(self.history.tick(), worker.name, worker.point, fault))
            self._disturb(worker.name, "fault")
        self.steps += 1
        point = worker.point
        self._note(
            f"{worker.name} {point.label if point else '?'} {point.target if point else ''}"
            + (f" !{fault.name}" if fault else "")
        )
        self.scheduler.step(worker, fault)
        self._reap()

    def advance(self, worker: Worker, label: str, target: str = "", *, max_steps: int = 200) -> None:
        """Step ``worker`` (without faults) until it waits at a point ``label`` (on ``target``)."""
        for _ in range(max_steps):
            point = worker.point
            if point is not None and point.label == label and target in point.target:
                return
            if worker.finished:
                raise AssertionError(f"{worker.name} ended without reaching {label} {target}")
            self.step(worker)
        raise AssertionError(f"{worker.name} did not reach {label} {target} in {max_steps} steps")

    def finish(self, worker: Worker, *, max_steps: int = 500) -> None:
        """Step ``worker`` (without faults) until its invocation ends."""
        for _ in range(max_steps):
            if worker.finished:
                return
            self.step(worker)
        raise AssertionError(f"{worker.name} did not end in {max_steps} steps")

    def resume(self, group: str) -> None:
        """An operator heals a parked group's dead job and resumes it (skipping a malformed one)."""
        operators = self.operators()
        header = operators.get(group)
        if header is None or header.status != PARKED:
            return
        kept = operators.kept(group, limit=1)
        dead_id = str(header.dead.job_id or "") or (_job_id(kept[0].record.get("body", "")) if kept else "")
        malformed = bool(dead_id) and self.workload.spec(dead_id).kind == "malformed"
        self.healed.add(dead_id)
        self._note(f"operator resumes {group} ({'skipping' if malformed else 'retrying'} {dead_id})")
        operators.resume(group, skip_dead=malformed)
        if malformed:
            self.skipped.append(dead_id)

    def kept_job_ids(self, group: str) -> list[str]:
        """The job ids of the records a parked group keeps, in order."""
        return [_job_id(kept.record.get("body", "")) for kept in self.operators().kept(group, limit=1000)]

    def parked_groups(self) -> list[str]:
        return [header.group for header in self.operators().list_groups() if header.status == PARKED]

    def operators(self) -> ParkedGroups:
        return ParkedGroups(
            group_table=GROUPS,
            claim_table=CLAIMS if self.has_claims else None,
            queue_url=self.model.url,
            dead_letter_queue_url=self.dlq_url,
            dynamodb=self.dynamodb,
            sqs=self.sqs,
            clock=self.clock,
        )

    # --- the schedule ------------------------------------------------------------------------------

    def play(self, draw: Callable[[st.SearchStrategy[Any]], Any], *, steps: int) -> None:
        """Up to ``steps`` steps, each chosen by ``draw`` (Hypothesis's ``data.draw``)."""
        config = self.config
        ticks = (1, config.timeout_s // 2, config.timeout_s + 1, config.visibility_s + 1)
        for _ in range(steps):
            waiting = self.scheduler.waiting()
            options = [f"step {i}" for i in range(len(waiting))]
            if self.can_invoke():
                options.append("invoke")
            if self.pending:
                options.append("send")
            options.append("tick")
            if config.policy is DeadJobPolicy.PARK:
                options.append("resume")
            options += self.more_actions()
            action = draw(st.sampled_from(options))
            if action.startswith("step"):
                worker = waiting[int(action.split()[1])]
                self.step(worker, self._fault(draw, worker))
            elif action == "invoke":
                self.invoke(poller_delay_s=draw(st.sampled_from((0, config.timeout_s // 2))))
            elif action == "send":
                self.send_next()
            elif action == "tick":
                seconds = draw(st.sampled_from(ticks))
                self.clock.advance(seconds)
                self._note(f"tick {seconds}")
                self._past_deadlines()
            else:
                self.act(action, draw)

    def settle(self, *, max_steps: int = 5000) -> None:
        """Without faults: finish every worker, send what is left, drain the queue, one worker at a time."""
        for _ in range(max_steps):
            waiting = self.scheduler.waiting()
            if waiting:
                self.step(self.next_to_settle(waiting))
            elif self.pending:
                self.send_next()
            elif self.invoke() is None:
                wake = self.model.next_visible_at()
                if wake is None:
                    return
                self.clock.now = max(self.clock.now, wake) + 0.001
        raise AssertionError(f"the world did not settle in {max_steps} steps: {self.model.messages}")

    def next_to_settle(self, waiting: list[Worker]) -> Worker:
        """Which waiting worker :meth:`settle` steps next (the oldest)."""
        return waiting[0]

    def resume_all(self, *, rounds: int = 30) -> None:
        """Operators resume every parked group (healing its dead job) and the world settles, until none is."""
        for _ in range(rounds):
            groups = self.parked_groups()
            if not groups:
                return
            for group in groups:
                self.resume(group)
            self.settle()
        raise AssertionError(f"groups still parked after {rounds} rounds of resume: {self.parked_groups()}")

    def close(self) -> None:
        self.scheduler.close()

    # --- what is left ------------------------------------------------------------------------------

    def dead_letters(self) -> list[tuple[str, str]]:
        """(job id, reason) of every message in the dead-letter queue so far (read once, remembered)."""
        while True:
            response = self.reader_sqs.receive_message(
                QueueUrl=self.dlq_url, MaxNumberOfMessages=10, MessageAttributeNames=["All"]
            )
            if not response.get("Messages"):
                return list(self._dead_letters)
            for message in response["Messages"]:
                attributes = {k: v["StringValue"] for k, v in message.get("MessageAttributes", {}).items()}
                job_id = attributes.get("jobId") or _job_id(message["Body"])
                self._dead_letters.append((job_id, attributes.get("reason", "")))
                self.dead_letter_error_types.setdefault(job_id, []).append(attributes.get("errorType", ""))
                self.reader_sqs.delete_message(QueueUrl=self.dlq_url, ReceiptHandle=message["ReceiptHandle"])

    def sqs_dead(self) -> list[Message]:
        """What SQS's own ``maxReceiveCount`` rule moved to the dead-letter queue (the model's)."""
        return list(self.model.sqs_dead)

    # --- internals -------------------------------------------------------------------------------------

    def _fault(self, draw: Callable[[st.SearchStrategy[Any]], Any], worker: Worker) -> Fault | None:
        """No fault, or (at ``fault_rate`` percent of the points, within the budget) one drawn."""
        config = self.config
        if config.fault_rate <= 0 or self.injector.total >= config.max_faults or worker.point is None:
            return None
        if draw(st.integers(0, 99)) < 100 - config.fault_rate:
            return None
        fault: Fault = draw(st.sampled_from(self.injector.faults_for(worker.point)))
        return fault

    def _observe(self, point: Point, succeeded: bool, parsed: dict[str, Any]) -> None:
        worker = self.scheduler.current()
        name = worker.name if worker is not None else "operator"
        if point.service != "dynamodb":
            return
        if not succeeded:
            if parsed.get("Error", {}).get("Code") in _REFUSALS:
                self.history.refused.append(Refused(self.history.tick(), name, point, self.clock()))
                # A refused claim PutItem is the claim rules' normal path (a retry, a duplicate);
                # any other refusal is a race with another worker or an operator.
                if worker is not None and not (point.operation == "PutItem" and point.target == CLAIMS):
                    self._disturb(worker.name, "refused write")
            return
        if point.operation in ("PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems"):
            self.observe_write(point, name)
        else:
            self.observe_read(point, name)

    def observe_read(self, point: Point, worker: str) -> None:
        """A successful read of a worker (or an operator); the base world keeps none."""
        del point, worker

    def _reap(self) -> None:
        """Settle the invocations that ended: delete what they did not report, as the mapping does."""
        for worker in self.scheduler.workers:
            if not worker.finished or worker.name in self._reaped:
                continue
            self._reaped.add(worker.name)
            self.ended(worker)

    def ended(self, worker: Worker) -> None:
        """An invocation ended: delete what it did not report, as the mapping does (a crash: nothing)."""
        error = worker.error
        self._note(f"{worker.name} ends: {worker.result if error is None else repr(error)}")
        if error is None:
            failed = {failure["itemIdentifier"] for failure in worker.result["batchItemFailures"]}
            for message in worker.meta["batch"]:
                if message.message_id not in failed and not self.model.delete(message.receipt):
                    # SQS refused the mapping's delete (the receipt handle expired): the record
                    # stays and is received again, as with Lambda's poller.
                    self.history.events["deletes refused (receipt handle expired)"] += 1
                    self._note(f"{worker.name} delete of {message.message_id} refused: receipt expired")
                    self._disturb(worker.name, "delete refused")
        elif isinstance(error, Crash):
            self.history.events["function errors (crash)"] += 1
            if not self.crashes_count:
                self._disturb(worker.name, "crash (not an attempt in this mode)")
        elif not isinstance(error, Abort):
            self.history.escaped.append((worker.name, error))

    def _delete_refused(self) -> None:
        """A worker's own DeleteMessageBatch entry was refused (its receipt handle expired)."""
        self.history.events["deletes refused (receipt handle expired)"] += 1
        worker = self.scheduler.current()
        if worker is not None:
            self._disturb(worker.name, "delete refused")

    def _count_fronts_served_early(self, batch: list[Message]) -> None:
        """Count the receives AWS's rule allows and the stricter one hid: a group's front received
        while a later record of the same group is still in flight (held by a slow or stale worker)."""
        now = self.clock()
        position = {message.message_id: i for i, message in enumerate(self.model.messages)}
        for group in {message.group for message in batch}:
            front = min(position[m.message_id] for m in batch if m.group == group)
            behind = self.model.messages[front + 1 :]
            if any(
                m.group == group
                and m.message_id not in {b.message_id for b in batch}
                and m.receive_count
                and m.visible_at > now
                for m in behind
            ):
                self.history.events["fronts received while a later record of the group was in flight"] += 1

    def _disturb(self, worker: str, why: str) -> None:
        """Mark an invocation whose receives are not the runtime's own retries (see ``sqs_rule``)."""
        if worker not in self.disturbed:
            self.disturbed[worker] = why
            self.history.events[f"disturbed invocations ({why})"] += 1

    def _past_deadlines(self) -> None:
        """Invocations the clock took to (or past) their deadline while they ran are disturbed."""
        for worker in self.scheduler.waiting():
            if self.clock() >= float(worker.meta["deadline"]) - 1:
                self._disturb(worker.name, "deadline")

    def _note(self, text: str) -> None:
        self.trace.append(f"[{self.clock() - 1_700_000_000:8.3f}] {text}")


def _job_id(body: str) -> str:
    try:
        return str(json.loads(body)["jobId"])
    except (ValueError, KeyError, TypeError):
        return body.rsplit("#", 1)[-1]
