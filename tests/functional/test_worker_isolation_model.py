"""Model test of the crash rule on workers of several slots: a crash is counted against its own job only.

Hypothesis chooses the schedule; the real :class:`~constructs_fifo.runtime.claim.store.ClaimStore`
(``shared_runs``, on moto's DynamoDB) and the real :class:`~constructs_fifo.worker.isolation.RunGate`
decide. Worker processes of 2 or 3 slots take jobs: healthy ones (they only ever succeed) and poison
ones (a run of one kills its whole process at a moment Hypothesis picks). A slot claims a job, enters
the gate as the worker does (alone after a crash, the claim then isolated; otherwise shared), and a
running job either returns or, if poison, kills its process: every job running there loses its lease
(the survivors' heartbeats keep theirs; time passes at a crash and when Hypothesis says). A dead
process is replaced. Then every process runs until each job is finished. The invariants:

- **no healthy job is ever dead**, however many poison jobs crashed beside it: each succeeds, on its
  first counted attempt (a crash beside it costs it none);
- **every poison job dies** after exactly ``max_attempts`` counted attempts (not a run fewer);
- **an alone run is alone**: when it starts, no other job runs in its process.

Run with more examples: ``CONSTRUCTS_FIFO_HYPOTHESIS_PROFILE=chaos`` (``make chaos``).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from hypothesis import given
from hypothesis import strategies as st
from moto import mock_aws

from constructs_fifo.runtime.claim.store import ClaimOutcome, ClaimStore
from constructs_fifo.runtime.constants import STATUS_DEAD, STATUS_SUCCEEDED, DeadReason
from constructs_fifo.runtime.job import Job
from constructs_fifo.worker.claims import isolate
from constructs_fifo.worker.isolation import RunGate

from .runtime_harness import REGION, TABLE_NAME, FakeClock, create_tables

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient

#: A claim's lease (a heartbeat renews a live one); a dead process's leases run out after it.
LEASE_MS = 30_000
#: Steps of the drain, a bound never reached when the rule is live.
DRAIN_STEPS = 400


@dataclass
class Run:
    job_id: str
    owner: str
    alone: bool
    running: bool  # False: waiting at the gate


@dataclass(eq=False)  # a process is itself: two idle ones are not the same
class Process:
    slots: int
    gate: RunGate = field(default_factory=RunGate)
    runs: list[Run] = field(default_factory=list)


#: Each example's job ids are its own: the examples share one claim table (its setup costs seconds).
_EXAMPLES = itertools.count()


class World:
    def __init__(self, dynamodb: DynamoDBClient, jobs: list[bool], slots: int, max_attempts: int) -> None:
        example = next(_EXAMPLES)
        self.poison = {f"e{example}-j{n}": bad for n, bad in enumerate(jobs)}
        self.slots = slots
        self.clock = FakeClock()
        self.store = ClaimStore(
            TABLE_NAME, dynamodb, clock=self.clock, max_attempts=max_attempts, shared_runs=True
        )
        self.processes = [Process(slots), Process(slots)]
        self.violations: list[str] = []
        self.finished: set[str] = set()  # written SUCCEEDED or DEAD (the store's answers say so)

    def open_jobs(self) -> list[str]:
        return [j for j in self.poison if j not in self.finished]

    # --- the steps ---------------------------------------------------------------------------------

    def start(self, process: Process, pick: int) -> None:
        """A free slot claims a job, as the worker's HeartbeatClaims does, and enters the gate."""
        held = {run.job_id for p in self.processes for run in p.runs}
        candidates = [j for j in self.open_jobs() if j not in held]
        if len(process.runs) >= process.slots or not candidates:
            return
        job_id = candidates[pick % len(candidates)]
        job = Job(id=job_id, type="t", payload={}, group=job_id, message_id=f"m-{job_id}", attempt=1, body={})
        claim = self.store.claim(job, lease_ms=LEASE_MS)
        if claim.outcome is ClaimOutcome.EXHAUSTED:  # the runner declares it dead without running it
            if self.store.mark_dead(
                job_id,
                claim.owner or "",
                reason=DeadReason.ATTEMPTS_EXHAUSTED,
                error="crashed",
                error_type="W",
            ):
                self.finished.add(job_id)
            return
        if claim.outcome is not ClaimOutcome.ACQUIRED:
            return
        if claim.after_crash:
            process.gate.ask_alone()
        process.runs.append(Run(job_id, claim.owner or "", alone=claim.after_crash, running=False))
        self.admit(process)

    def admit(self, process: Process) -> None:
        """Every run waiting at its process's gate enters if the gate admits it."""
        for run in process.runs:
            if run.running or not process.gate.try_enter(alone=run.alone):
                continue
            if run.alone:
                others = [r.job_id for r in process.runs if r.running]
                if others:
                    self.violations.append(f"{run.job_id} ran alone beside {others}")
                if not isolate(self.store, run.job_id, run.owner):
                    self.violations.append(f"{run.job_id}: isolate refused to a live run")
            run.running = True

    def finish(self, process: Process, pick: int) -> None:
        """A running healthy job returns (its claim completed), or a running poison job kills its process."""
        running = [run for run in process.runs if run.running]
        if not running:
            return
        run = running[pick % len(running)]
        if self.poison[run.job_id]:
            self.crash(process)
            return
        if self.store.complete(run.job_id, run.owner):
            self.finished.add(run.job_id)
        else:
            self.violations.append(f"{run.job_id}: a live run's completion was refused")
        process.runs.remove(run)
        process.gate.leave(alone=run.alone)
        self.admit(process)

    def crash(self, process: Process) -> None:
        """The process dies: its runs' leases run out; the live processes' heartbeats renew theirs."""
        self.processes[self.processes.index(process)] = Process(self.slots)
        self.pass_time()

    def pass_time(self) -> None:
        """A lease's time passes: the live runs' heartbeats renew theirs, a dead process's run out."""
        seconds = LEASE_MS / 1000 + 1
        for live in self.processes:
            for run in live.runs:
                if not self.store.renew(run.job_id, run.owner, lease_ms=int(seconds * 1000) + LEASE_MS):
                    self.violations.append(f"{run.job_id}: a live run's renewal was refused")
        self.clock.advance(seconds)

    def drain(self) -> None:
        for step in range(DRAIN_STEPS):
            if not self.open_jobs():
                return
            if not any(run.running for p in self.processes for run in p.runs):
                self.pass_time()  # a dead process's leases may still hold jobs
            which = step % len(self.processes)
            self.admit(self.processes[which])
            for pick in range(self.slots):  # every free slot takes a job: slot-mates run side by side
                self.start(self.processes[which], step + pick)
            self.finish(self.processes[which], step)
        self.violations.append(f"not drained: {self.open_jobs()}")


@st.composite
def schedules(draw: st.DrawFn) -> tuple[list[bool], int, int, list[tuple[int, int, int]]]:
    jobs = draw(st.lists(st.booleans(), min_size=2, max_size=6).filter(lambda j: any(j) and not all(j)))
    slots = draw(st.integers(2, 3))
    max_attempts = draw(st.integers(1, 3))
    steps = draw(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 1), st.integers(0, 5)), max_size=40))
    return jobs, slots, max_attempts, steps


@pytest.fixture(scope="module")
def claims_table() -> Iterator[Any]:
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name=REGION)
        create_tables(dynamodb)
        yield dynamodb


@given(schedule=schedules())
def test_no_healthy_job_dies_for_a_slot_mates_crash_and_every_poison_job_dies_on_its_own_count(
    claims_table: DynamoDBClient,
    schedule: tuple[list[bool], int, int, list[tuple[int, int, int]]],
) -> None:
    jobs, slots, max_attempts, steps = schedule
    # GIVEN healthy and poison jobs and two worker processes of several slots
    world = World(claims_table, jobs, slots, max_attempts)
    # WHEN Hypothesis's schedule starts, finishes and crashes runs, then the processes drain the rest
    for action, which, pick in steps:
        process = world.processes[which]
        (world.start, world.finish, lambda p, _: world.admit(p), lambda _p, _: world.pass_time())[action](
            process, pick
        )
    world.drain()
    # THEN no alone run shared its process, no healthy job is dead: each one succeeded, on its first
    # counted attempt (a healthy job never fails: no slot-mate's crash cost it one)
    assert world.violations == []
    claims = {job_id: world.store.get(job_id) or {} for job_id in world.poison}
    healthy = {j: (c["status"], c["attempts"]) for j, c in claims.items() if not world.poison[j]}
    assert set(healthy.values()) == {(STATUS_SUCCEEDED, 1)}
    # AND every poison job is dead, on exactly max_attempts counted attempts
    poison = {j: (c["status"], c["attempts"]) for j, c in claims.items() if world.poison[j]}
    assert set(poison.values()) == {(STATUS_DEAD, max_attempts)}
