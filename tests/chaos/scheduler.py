"""A deterministic scheduler: several workers (threads) that interleave at every scheduling point.

Each worker runs in its own thread, but only one thread runs at a time. A worker runs until it
reaches a scheduling point (:meth:`Scheduler.checkpoint`: the botocore hooks call it before every
AWS call, the job function at the start and the end of a run) and waits there until the test's
thread lets it go on with :meth:`Scheduler.step`, handing it a payload (what happens to it at that
point: nothing, a fault, a crash). Which worker goes on and with what payload is the test's choice,
drawn by Hypothesis in the test's thread, so an interleaving is a pure function of the drawn data:
two workers' calls can interleave at any call boundary, and the same data replays the same run.

Bounded: a worker that does not reach its next point within ``timeout_s`` fails the test with
:class:`SchedulerTimeoutError` instead of hanging CI; :meth:`Scheduler.close` stops every worker still
waiting by raising :class:`Abort` in it (a ``BaseException``, which the runtime does not catch), and
the threads are daemons.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .calls import Point

_ABORT = object()


class SchedulerTimeoutError(AssertionError):
    """A worker did not reach its next scheduling point in time (a hang, or an endless loop)."""


class Abort(BaseException):
    """Raised in a worker the scheduler stops (a test that ended or failed while it was waiting)."""


@dataclass(eq=False)
class Worker:
    """One worker thread and what the test knows of it.

    Attributes
    ----------
    name : str
        Its name in failure messages and in the history.
    meta : dict
        The test's own facts about it (its deadline, its batch).
    point : Point or None
        Where it waits now; ``None`` before its first point and once it finished.
    finished : bool
        Whether its target returned or raised.
    result : Any
        What the target returned.
    error : BaseException or None
        What the target raised (a crash, an abort, or a bug).
    """

    name: str
    meta: dict[str, Any] = field(default_factory=dict)
    point: Point | None = None
    finished: bool = False
    result: Any = None
    error: BaseException | None = None
    go: threading.Event = field(default_factory=threading.Event, repr=False)
    arrived: threading.Event = field(default_factory=threading.Event, repr=False)
    payload: object = field(default=None, repr=False)
    thread: threading.Thread | None = field(default=None, repr=False)


class Scheduler:
    """Runs workers one at a time, each up to its next scheduling point; see the module docstring.

    Parameters
    ----------
    timeout_s : float
        How long the test's thread waits for a worker to reach its next point.
    """

    def __init__(self, *, timeout_s: float = 30.0) -> None:
        self.workers: list[Worker] = []
        self._timeout_s = timeout_s
        self._local = threading.local()

    def spawn(self, name: str, target: Callable[[], Any], **meta: Any) -> Worker:
        """Start a worker running ``target`` and wait until it reaches its first point (or ends)."""
        worker = Worker(name, dict(meta))
        worker.thread = threading.Thread(
            target=self._run, args=(worker, target), name=f"chaos-{name}", daemon=True
        )
        self.workers.append(worker)
        worker.thread.start()
        self._await(worker)
        return worker

    def current(self) -> Worker | None:
        """The worker of the calling thread (``None`` in the test's own thread)."""
        worker = getattr(self._local, "worker", None)
        return worker if isinstance(worker, Worker) else None

    def checkpoint(self, point: Point) -> object:
        """Called in a worker: wait at ``point`` until the scheduler lets it go on; return its payload.

        In any other thread (the test's own calls, an operator's) it returns ``None`` at once.

        Raises
        ------
        Abort
            The scheduler stopped this worker.
        """
        worker = self.current()
        if worker is None:
            return None
        worker.point = point
        worker.payload = None
        worker.arrived.set()
        if not worker.go.wait(self._timeout_s * 4):
            raise Abort(f"worker {worker.name} waited at {point.label} and was never let go on")
        worker.go.clear()
        worker.point = None
        if worker.payload is _ABORT:
            raise Abort(f"worker {worker.name} stopped by the scheduler at {point.label}")
        return worker.payload

    def step(self, worker: Worker, payload: object = None) -> None:
        """Let ``worker`` go on from its point with ``payload``; wait until its next point (or its end).

        Raises
        ------
        SchedulerTimeoutError
            It did not get there within ``timeout_s``.
        """
        if worker.finished or worker.point is None:
            raise ValueError(f"worker {worker.name} is not waiting at a scheduling point")
        worker.arrived.clear()
        worker.payload = payload
        worker.go.set()
        self._await(worker)

    def waiting(self) -> list[Worker]:
        """The workers that have not finished, oldest first."""
        return [worker for worker in self.workers if not worker.finished]

    def close(self) -> None:
        """Stop every worker still waiting (:class:`Abort`) and join every thread."""
        for worker in self.waiting():
            worker.payload = _ABORT
            worker.go.set()
        for worker in self.workers:
            if worker.thread is not None:
                worker.thread.join(self._timeout_s)

    def _run(self, worker: Worker, target: Callable[[], Any]) -> None:
        self._local.worker = worker
        try:
            worker.result = target()
        except BaseException as exc:  # a crash, an abort or a bug: the test reads it from the worker
            worker.error = exc
        finally:
            worker.point = None
            worker.finished = True
            worker.arrived.set()

    def _await(self, worker: Worker) -> None:
        if not worker.arrived.wait(self._timeout_s):
            where = worker.point.label if worker.point is not None else "its start"
            raise SchedulerTimeoutError(
                f"worker {worker.name} did not reach its next scheduling point within {self._timeout_s} s "
                f"(last seen at {where}): a hang or an endless loop in the runtime"
            )
