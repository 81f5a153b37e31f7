"""The chaos world of container workers: processes of several slots, each crash taking all of them down.

Claim mode (:class:`.claim_world.ClaimWorld`'s job function, claim table and history), but consumed as
``constructs-fifo worker`` consumes it, by the worker's own code:

- a **process** is a :class:`constructs_fifo.worker.loop.Worker` of ``config.slots`` slots, each slot
  built as :func:`constructs_fifo.worker.run.build_worker` builds it (a :class:`WorkerHeartbeat`, a
  :class:`HeartbeatClaims` store claiming ``shared``, the claim processor), the slots sharing one
  :class:`~constructs_fifo.worker.isolation.RunGate`;
- a free slot takes a group its process holds (:class:`~constructs_fifo.worker.fanout.HeldGroups`) or
  receives, and a receive is split by group (:func:`~constructs_fifo.worker.fanout.split_by_group`):
  the slot runs the first group, the others are held for the process's next free slots;
- each slot's batch is a scheduler worker (a thread) running :meth:`Worker.run_batch` (the processor,
  then the slot's own DeleteMessageBatch); the gate's wait is a scheduling point (``job.gate``), so
  the real rule (:meth:`RunGate.try_enter`) decides and the scheduler lets the other slots go on;
- the schedule **beats** a process (each slot's heartbeat round, its held groups renewed: time passes
  between beats, so a process not beaten for a visibility timeout is a stale worker), **kills** one
  (every slot's run stops at its next point, at once: a crash at any point), or a job kills it: a
  poison job (a crash job of :data:`~.workload.POISON_TIMES`), or a fault's crash in any slot. A dead
  process's held groups and leases run out; a new process replaces it.

Every run records whether it ran **alone** (its claim no longer ``shared`` when it started) and in
which process, for :mod:`.worker_invariants`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from functional.fifo_model import Message
from functional.runtime_harness import QUEUE_ARN, REGION
from hypothesis import strategies as st

from constructs_fifo.runtime.constants import ATTR_SHARED
from constructs_fifo.runtime.job import Job
from constructs_fifo.worker.fanout import HeldGroups, split_by_group
from constructs_fifo.worker.heartbeat import WorkerHeartbeat
from constructs_fifo.worker.isolation import RunGate
from constructs_fifo.worker.lent_claims import HeartbeatClaims
from constructs_fifo.worker.loop import QueueTarget, Slot
from constructs_fifo.worker.loop import Worker as WorkerLoop
from constructs_fifo.worker.protection import ScaleInProtection

from .claim_world import ClaimWorld
from .faults import Crash, Fault
from .history import Run
from .scheduler import Abort, Worker
from .world import CLAIMS, WorldConfig

__all__ = ["GATE_POINT", "Process", "WorkerWorld"]

#: The scheduling point of a slot waiting at its process's run gate.
GATE_POINT = "job.gate"


class SteppedGate(RunGate):
    """The worker's run gate, its wait a scheduling point: the real rule (:meth:`RunGate.try_enter`)
    decides, and while a slot may not enter it waits at ``job.gate`` and the other slots go on."""

    def __init__(self, wait: Callable[[], None]) -> None:
        super().__init__()
        self._wait = wait

    def enter(self, *, alone: bool) -> None:
        if alone:
            self.ask_alone()
        while not self.try_enter(alone=alone):
            self._wait()


class ChaosHeartbeat(WorkerHeartbeat):
    """A slot's heartbeat, its rounds played by the schedule. It says when its slot writes a job's last
    claim (:meth:`job_ending` holds the rounds' lock across that call: a round waits for it)."""

    ending = False

    @contextmanager
    def job_ending(self, job_id: str, owner: str) -> Iterator[bool]:
        self.ending = True
        try:
            with super().job_ending(job_id, owner) as allowed:
                yield allowed
        finally:
            self.ending = False


@dataclass(eq=False)
class Process:
    """One worker process: its loop, slots, heartbeats, held groups and the batches its slots run."""

    name: str
    loop: WorkerLoop
    slots: list[Slot]
    heartbeats: list[ChaosHeartbeat]
    held: HeldGroups
    threads: dict[int, Worker] = field(default_factory=dict)
    messages: dict[str, Message] = field(default_factory=dict)
    renewed_at: float = 0.0
    dead: bool = False

    def free_slot(self) -> int | None:
        """A slot running no batch (``None``: every slot is busy)."""
        for index in range(len(self.slots)):
            thread = self.threads.get(index)
            if thread is None or thread.finished:
                return index
        return None

    def running(self) -> list[Worker]:
        return [thread for thread in self.threads.values() if not thread.finished]


class WorkerWorld(ClaimWorld):
    """Claim mode on container workers of several slots; see the module docstring."""

    #: Whether a process's slots share a run gate, as ``build_worker`` gives them (a negative control
    #: turns it off: the worker before the crash rule, whose claims are never shared).
    gated = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.processes: list[Process] = []
        #: slot batch (scheduler worker) name -> its process.
        self.process_of: dict[str, Process] = {}
        #: id of a run -> whether it ran alone (its claim not shared when it started).
        self._alone: dict[int, bool] = {}
        #: the slot batches whose heartbeat went stale (their claim writes are refused before sent).
        self.stale_batches: set[str] = set()
        self._kills = 0

    @property
    def interval_s(self) -> int:
        """The heartbeat interval: half the function timeout (the visibility timeout is at least that)."""
        return max(1, self.config.timeout_s // 2)

    def ran_alone(self, run: Run) -> bool:
        return self._alone.get(id(run), False)

    # --- the processes ----------------------------------------------------------------------------

    def new_process(self) -> Process:
        """A worker process of ``config.slots`` slots, built as ``build_worker`` builds one."""
        name = f"p{len(self.processes) + 1}"
        config = self.config
        log = self.logger()
        gated = self.gated and config.slots > 1
        gate = SteppedGate(lambda: self.gate.job_point("gate", name)) if gated else None
        slots, heartbeats = [], []
        for _ in range(config.slots):
            heartbeat = ChaosHeartbeat(
                self.sqs,
                self.model.url,
                visibility_timeout_seconds=config.visibility_s,
                interval_seconds=self.interval_s,
                logger=log,
                queue_name="jobs.fifo",
                clock=self.clock,
                ticker=False,
                gate=gate,
            )
            claims = HeartbeatClaims(
                CLAIMS,
                self.dynamodb,
                ttl_seconds=86_400,
                max_attempts=config.max_attempts,
                clock=self.clock,
                heartbeat=heartbeat,
            )
            slots.append(Slot(self.claim_processor(claims, heartbeat).process_batch, heartbeat, self.sqs))
            heartbeats.append(heartbeat)
        loop = WorkerLoop(
            QueueTarget(self.model.url, QUEUE_ARN, REGION),
            slots,
            batch_size=config.batch_size,
            logger=log,
            protection=ScaleInProtection(None, on_event=log.event),
            clock=self.clock,
        )
        held = HeldGroups(
            self.sqs,
            self.model.url,
            visibility_timeout_seconds=config.visibility_s,
            interval_seconds=0,
            on_event=log.event,
            clock=self.clock,
        )
        process = Process(name, loop, slots, heartbeats, held, renewed_at=self.clock())
        self.processes.append(process)
        self._note(f"{name} starts ({config.slots} slots)")
        return process

    def live(self) -> list[Process]:
        return [process for process in self.processes if not process.dead]

    def start(self, process: Process) -> Worker | None:
        """A free slot of ``process`` takes a held group, or receives and splits by group; ``None``:
        no free slot, or nothing to take or receive."""
        index = process.free_slot()
        if index is None:
            return None
        name = f"{process.name}.s{index}#{self.invocations + 1}"
        taken = process.held.take()
        if taken is not None:
            records, received_at = taken.records, taken.received_at
            renewed_at = max(received_at, process.renewed_at)
        else:
            self.model.max_receive_count = self.max_receive_count()
            received = self.model.receive()
            if not received:
                return None
            self.note_receive(received, name)
            process.messages.update({message.message_id: message for message in received})
            records, *others = split_by_group(self.model.records(received))
            received_at = renewed_at = self.clock()
            process.held.put(others, received_at=received_at)
        self.invocations += 1
        batch = [process.messages[record["messageId"]] for record in records]
        slot = process.slots[index]
        self._note(
            f"{name} {'takes held' if taken else 'receives'}: "
            + " ".join(f"{m.message_id}#{m.receive_count}" for m in batch)
            + f" (held: {len(process.held)})"
        )
        worker = self.scheduler.spawn(
            name,
            lambda: process.loop.run_batch(slot, records, received_at=received_at),
            batch=batch,
            deadline=renewed_at + self.config.visibility_s,
            spawned_at=self.clock(),
        )
        process.threads[index] = worker
        self.process_of[name] = process
        self._reap()
        self._kill_crashed()
        return worker

    def beat(self, process: Process) -> None:
        """A heartbeat round of every slot of ``process`` (one whose slot writes its job's last claim
        waits: the round would wait for that call), and its held groups renewed."""
        visibility = self.config.visibility_s
        for index, heartbeat in enumerate(process.heartbeats):
            if heartbeat.ending:
                continue
            heartbeat.tick()
            thread = process.threads.get(index)
            if thread is None or thread.finished:
                continue
            if heartbeat.stale():
                self.stale_batches.add(thread.name)
                continue
            thread.meta["deadline"] = self.clock() + visibility
            for run in self.history.runs:
                if run.worker == thread.name and run.end is None:
                    run.deadline = self.clock() + visibility
        process.held.renew()
        process.renewed_at = self.clock()
        self._note(f"beat {process.name}")

    def kill(self, process: Process, why: str) -> None:
        """The process dies: every slot's batch stops at the point it waits at, at once."""
        process.dead = True
        running = process.running()
        self.history.events[f"worker processes crashed ({why})"] += 1
        self.history.events["slot batches taken down with their process"] += len(running)
        self._note(f"{process.name} crashes ({why}): {[thread.name for thread in running]} stop")
        for thread in running:
            while not thread.finished:
                self.scheduler.step(thread, Crash(f"{process.name} crashed ({why})"))
            self._disturb(thread.name, "crash of a worker process")
        for thread in process.threads.values():
            self._disturb(thread.name, "crash of a worker process")
        if len(process.held):
            self._disturb(f"{process.name}.held", "crash of a worker process")
        self._reap()

    # --- the schedule -------------------------------------------------------------------------------

    def can_invoke(self) -> bool:
        return False  # a slot starts a batch by :meth:`more_actions`' "start"

    def more_actions(self) -> list[str]:
        live = self.live()
        options = [
            f"start {process.name}"
            for process in live
            if process.free_slot() is not None and (len(process.held) or self.model.messages)
        ]
        if len(live) < self.config.max_workers and self.model.messages:
            options.append("start new")
        options += [f"beat {process.name}" for process in live]
        if self.injector.total + self._kills < self.config.max_faults:
            options += [f"kill {process.name}" for process in live if process.running()]
        return options

    def act(self, action: str, draw: Callable[[st.SearchStrategy[Any]], Any]) -> None:
        kind, _, which = action.partition(" ")
        named = {process.name: process for process in self.processes}
        if kind == "start":
            self.start(self.new_process() if which == "new" else named[which])
        elif kind == "beat":
            self.beat(named[which])
        elif kind == "kill":
            self._kills += 1
            self.kill(named[which], "killed")
        else:
            super().act(action, draw)

    def invoke(self, *, poller_delay_s: float = 0) -> Worker | None:
        """A free slot of a live process starts a batch (a new process when none has one free)."""
        del poller_delay_s  # a worker polls itself
        for process in self.live():
            if process.free_slot() is not None and (len(process.held) or self.model.messages):
                started = self.start(process)
                if started is not None:
                    return started
        if len(self.live()) < self.config.max_workers and self.model.messages:
            return self.start(self.new_process())
        return None

    def step(self, worker: Worker, fault: Fault | None = None) -> None:
        super().step(worker, fault)
        self._kill_crashed()

    def next_to_settle(self, waiting: list[Worker]) -> Worker:
        """The oldest slot batch not waiting at its gate (one waiting there waits for the others)."""
        ready = [w for w in waiting if w.point is None or w.point.label != GATE_POINT]
        return ready[0] if ready else waiting[self.steps % len(waiting)]

    # --- what the job function and the writes leave ---------------------------------------------------

    def start_run(self, job: Job) -> Run:
        run = super().start_run(job)
        self._alone[id(run)] = not self.claim_item(job.id).get(ATTR_SHARED, {}).get("BOOL", False)
        return run

    def commit_refused_locally(self, run: Run) -> bool:
        return run.worker in self.stale_batches

    def ended(self, worker: Worker) -> None:
        if worker.name not in self.process_of:
            super().ended(worker)
            return
        error = worker.error
        self._note(f"{worker.name} ends: {worker.result if error is None else repr(error)}")
        if error is not None and not isinstance(error, Crash | Abort):
            self.history.escaped.append((worker.name, error))

    def _kill_crashed(self) -> None:
        """A slot's crash (a poison job, a fault's crash) is its process's: the other slots stop too."""
        for process in self.live():
            crashed = [t for t in process.threads.values() if t.finished and isinstance(t.error, Crash)]
            if crashed:
                injected = any(given.worker == crashed[0].name for given in self.history.faults)
                self.kill(process, "a fault's crash" if injected else "a job crashed it")


def worker_config(config: WorldConfig, slots: int) -> WorldConfig:
    """``config`` with ``slots`` slots per process."""
    return WorldConfig(**{**config.__dict__, "slots": slots})
