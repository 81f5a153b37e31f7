"""What happened in one chaos run, on one logical clock: the record the invariants are checked on.

Only one thread runs at a time (see :mod:`.scheduler`), so every event gets the next tick of one
counter, and "before" means before. What is recorded is observable from outside the runtime: the
job function's runs (when each started and ended, whether its side effect happened), the claim or
state item each successful write left (read back from the table), the writes the table refused, the
faults handed to each worker, and what each worker's invocation ended with.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field

from .calls import Point
from .faults import Fault


@dataclass
class Run:
    """One run of the job function (claim mode) or of a transition (state mode).

    Attributes
    ----------
    worker : str
        The worker it ran in.
    job_id, group : str
        The job.
    start, end : int
        Logical times; ``end`` is ``None`` while it runs (a run the worker crashed in ends then too).
    clock_at_start : float
        The fake clock when it started (epoch seconds).
    deadline : float
        Its worker's deadline: the end of the invocation, which is also the end of any lease the
        worker takes (the lease is the remaining time).
    completed : bool
        The job function returned: its side effect happened.
    """

    worker: str
    job_id: str
    group: str
    start: int
    clock_at_start: float
    deadline: float
    end: int | None = None
    completed: bool = False


@dataclass(frozen=True)
class ClaimSeen:
    """The claim item a successful write left, read back (claim mode): its status, the attempts it
    counts, whether its run shares its process (``shared``) and, dead or failed, its error type."""

    time: int
    worker: str
    job_id: str
    status: str
    operation: str
    attempts: int = 0
    shared: bool = False
    error_type: str = ""


@dataclass(frozen=True)
class StateSeen:
    """A group's committed state, read back after a successful write of its item (state mode)."""

    time: int
    worker: str
    group: str
    version: int
    log: tuple[str, ...]


@dataclass(frozen=True)
class FaultGiven:
    """A fault the test handed to a worker at a point."""

    time: int
    worker: str
    point: Point
    fault: Fault


@dataclass(frozen=True)
class Refused:
    """A conditional write the table refused (a fenced claim write, a lost state race)."""

    time: int
    worker: str
    point: Point
    clock: float


@dataclass
class History:
    """Everything recorded in one run; see the module docstring."""

    runs: list[Run] = field(default_factory=list)
    claims: list[ClaimSeen] = field(default_factory=list)
    claims_taken: Counter[str] = field(default_factory=Counter)
    states: list[StateSeen] = field(default_factory=list)
    faults: list[FaultGiven] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)
    escaped: list[tuple[str, BaseException]] = field(default_factory=list)
    stale_receives: int = 0
    events: Counter[str] = field(default_factory=Counter)
    _time: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def tick(self) -> int:
        """The next logical time."""
        with self._lock:
            self._time += 1
            return self._time

    def start_run(self, worker: str, job_id: str, group: str, *, clock: float, deadline: float) -> Run:
        run = Run(worker, job_id, group, self.tick(), clock, deadline)
        self.runs.append(run)
        return run

    def end_run(self, run: Run) -> None:
        run.end = self.tick()

    def runs_of(self, job_id: str) -> list[Run]:
        """The runs of one job, in the order they started."""
        return [run for run in self.runs if run.job_id == job_id]

    def faults_of(self, worker: str) -> list[FaultGiven]:
        return [given for given in self.faults if given.worker == worker]
