"""State mode's crash watch: a transition that stops its worker counts as an attempt of its job.

A state-mode group commits once per batch, after its transitions ran, so a transition that kills the
worker (a crash, out of memory, the function timeout) leaves no trace in the committed item: without
this module it would never be counted, and SQS's ``maxReceiveCount`` would dead-letter its whole
batch, healthy jobs included. Claim mode counts it because the claim is written before the run; here
a **run marker** is written before the transitions run, but only when the group's records were
received before, so the first delivery keeps its one write per group. The marker lives in the
group's **run item** (``sk = "run"``, :mod:`constructs_fifo.runtime.state.storage.runs`), a small item
of its own: a marker costs one write unit whatever the state's size (it used to rewrite the state
item). The run item names the state version it was written over, so the group's next commit passes
it without touching it: a run item over an older version than the state's is ignored.

Rules, per live group and batch (:func:`plan_run` decides, :class:`CrashWatch` writes):

1. **First delivery: no marker.** When every record of the group (and its wake-up message) is
   received for the first time and no marker is found, the transitions run unwatched: one
   ``BatchGetItem`` per batch and one write per group, as before. A crash there is not counted; it
   always causes a redelivery with a higher receive count.
2. **Redelivery: one marker for the group.** When a record was received before, the first
   transition the run calls is preceded by a write of the run item with a group marker (``{}``) over
   the version read. The group's commit stays conditioned on the version read; it passes the marker.
   A run that calls no transition (duplicates, dead copies, buffered jobs) writes no marker.
3. **A marker found means its run did not commit**: a crash, a timeout, or a worker still running
   past its visibility (a stale worker: claim mode counts that as an attempt too). The group is then
   **isolated**: its run marks each transition before calling it (``{"job": id, "attempt": n}``, the
   first with the marker write of rule 2, the next ones replacing it), so the next read names the one
   transition that did not return. A caller whose units share a process (a worker's slots) runs an
   isolated group alone, from its first marker to its commit (the commit's ``admit``, the heartbeat's
   gate): a job marker then names a crash of its own, never a slot-mate's.
   **Every marker write is fenced** by the run item's token: it is conditioned on the token the
   worker read (or wrote last), and writes a new one; a worker that did not read the run item (a
   first delivery whose state carries a marker, rule 5) writes only where no run item over its
   version exists. So a worker that read the group before another worker's mark (a stale worker's
   successor, say) cannot write its own marker over it, which would lose the crash the mark names
   (found by the chaos suite: the next job's crash went uncounted and the job before it was blamed);
   its write is refused, and the run stops as a lost race.
4. **A job marker found counts its attempt.** ``{"job": X, "attempt": n}``: X's run number n stopped
   the worker. Below ``max_attempts`` the run starts from the state with X's attempts at n, so X
   runs next as attempt n + 1 (the transition sees it in ``job.attempt``). At ``max_attempts`` X is
   dead without running: the core gets attempt n of X back as a :class:`WorkerCrashedError` (reason
   ``ATTEMPTS_EXHAUSTED``, the error naming the crash and the fix), and the queue's dead-job policy
   applies as for any dead job. A job is only ever blamed for a run it was marked for: the healthy
   jobs of its batch never are. A crash after the last marked transition returned and before the
   commit (in the commit itself, or a timeout there) is that transition's, as claim mode counts a
   crash between a job's effect and its ``SUCCEEDED`` write.
5. **Isolation lasts until a clean run.** The commit of an isolated run that stopped (a failure, a
   job of the group blocked) keeps a group marker in the state item it writes anyway (its ``run``
   attribute), so the group stays isolated until a run goes through: the transition that crashed may
   not have been reached yet. A run item over the same version as the state is newer than that, and
   wins.

What the fence does not cover: a stale worker (one still running past its batch's visibility) that
commits over the version a newer run marked passes that run's marker. The stale commit is a whole run
of the batch (nothing of the state is lost or applied twice: the version fences commits); but if the
newer run crashed on a job the stale run did not reach, that crash goes uncounted, and the job gets one
run more than ``max_attempts`` says. Such a crash needs a stale worker beside it, a disturbed invocation,
which SQS's ``maxReceiveCount`` default leaves room for (the chaos suite allows one receive more per
disturbed invocation, and holds). Fencing the commit on the run item too would take a transaction:
twice the state's write units on every redelivery.

Costs, on redeliveries only: one read unit (the run item, in the batch's one ``BatchGetItem``) and
one write unit more per group (rule 2); while a crash is isolated, one write unit more per transition
(rule 3). None of them grows with the state.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from constructs_fifo.runtime.error_text import describe
from constructs_fifo.runtime.exceptions import WorkerCrashedError
from constructs_fifo.runtime.state.storage.runs import GROUP_RUN, FoundRun, RunMarker

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.job import Job
    from constructs_fifo.runtime.state.core.engine import Transition
    from constructs_fifo.runtime.state.core.records import GroupState

__all__ = ["CrashWatch", "RunInterrupted", "RunPlan", "RunWriter", "plan_run"]


@dataclass(frozen=True)
class RunPlan:
    """How one group's run is watched (see :func:`plan_run`).

    Attributes
    ----------
    start : GroupState
        The state the run starts from: the one read, with a found job marker's attempt counted.
    watch : bool
        Write a marker before the first transition (rule 2).
    isolate : bool
        Mark every transition (rule 3).
    replay : tuple of (str, int) or None
        (job id, attempt) of a job whose last allowed attempt stopped its worker: the core gets that
        attempt back as a :class:`WorkerCrashedError` instead of running it (rule 4).
    found : RunMarker or None
        The marker read with the state.
    """

    start: GroupState
    watch: bool = False
    isolate: bool = False
    replay: tuple[str, int] | None = None
    found: RunMarker | None = None

    def settle(self, final: GroupState, called: frozenset[str]) -> GroupState:
        """The state to commit: ``final``, with the replayed crash still counted when it was not reached.

        A job whose last attempt crashed starts at one attempt fewer so that the core can replay it;
        if the run never called it, its count is put back, so the crash is not forgotten.
        """
        if self.replay is None or self.replay[0] in called:
            return final
        job_id, attempt = self.replay
        if job_id in final.book.dead:
            return final
        attempts = {**final.book.attempts, job_id: attempt}
        return replace(final, book=replace(final.book, attempts=attempts))

    def carried(self, *, clean: bool) -> RunMarker | None:
        """The marker the commit keeps (rule 5): a group marker after an isolated run that stopped."""
        return GROUP_RUN if self.isolate and not clean else None


def plan_run(read: GroupState, found: RunMarker | None, *, redelivered: bool, max_attempts: int) -> RunPlan:
    """Decide how a group's run is watched; pure (see the module docstring for the rules).

    Parameters
    ----------
    read : GroupState
        The group's state as read.
    found : RunMarker or None
        The marker read with it.
    redelivered : bool
        Whether a record of the group in this batch (or its wake-up message) was received before.
    max_attempts : int
        Runs a job gets.

    Examples
    --------
    >>> from constructs_fifo.runtime.state.core.records import GroupState
    >>> from constructs_fifo.runtime.state.storage.runs import RunMarker
    >>> plan = plan_run(GroupState("ws#1"), RunMarker("j1", 2), redelivered=True, max_attempts=5)
    >>> plan.isolate, dict(plan.start.book.attempts)
    (True, {'j1': 2})
    """
    if found is None:
        return RunPlan(start=read, watch=redelivered)
    if found.job_id is None:
        return RunPlan(start=read, watch=True, isolate=True, found=found)
    job_id, attempt = found.job_id, found.attempt
    if attempt >= max_attempts:
        counted, replay = attempt - 1, (job_id, attempt)
    else:
        counted, replay = attempt, None
    attempts = {k: v for k, v in read.book.attempts.items() if k != job_id}
    if counted > 0:
        attempts[job_id] = counted
    start = replace(read, book=replace(read.book, attempts=attempts))
    return RunPlan(start=start, watch=True, isolate=True, replay=replay, found=found)


class RunWriter(Protocol):
    """The writes a watched run makes (:class:`constructs_fifo.runtime.state.storage.store.StateStore`)."""

    def mark_run(
        self, group: str, of_version: int, marker: RunMarker, *, replaces: str | None, read: bool
    ) -> str | None:
        """Write the group's run item with ``marker`` over state version ``of_version``, if its token is
        still ``replaces`` (``read`` ``False``: if it has no run item over ``of_version`` or later);
        return the new token, ``None`` when the condition failed (nothing written)."""
        ...


class RunInterrupted(BaseException):
    """A marker write failed inside the run: nothing of the run may be committed.

    A ``BaseException`` because it is raised from inside the core's call of the transition, which
    counts every ``Exception`` as the job's failure: this one must pass through to the processor.

    Attributes
    ----------
    group : str
        The group whose run stopped.
    cause : Exception or None
        The write's error; ``None`` when its condition failed (another worker wrote the group first).
    """

    def __init__(self, group: str, cause: Exception | None) -> None:
        self.group = group
        self.cause = cause
        what = "another worker wrote it first" if cause is None else describe(cause)
        super().__init__(f"the run marker of group {group!r} could not be written ({what})")


@dataclass
class CrashWatch:
    """The transition of a watched run: writes its markers (rules 2 and 3) and replays a crash (rule 4).

    Attributes
    ----------
    found : FoundRun
        What the read found of the group's run (the token the first marker write is conditioned on).
    version : int
        The version the group's commit is conditioned on: the one read (a marker does not change it).
    opened : bool
        Whether a marker was written (the commit must then be made, to pass it).
    token : str or None
        The token of the last marker written.
    called : set of str
        The job ids the core called the transition for.
    """

    transition: Transition
    plan: RunPlan
    writer: RunWriter
    group: str
    max_attempts: int
    found: FoundRun = field(default_factory=FoundRun)
    version: int = 0
    opened: bool = False
    token: str | None = None
    called: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.version = self.plan.start.version

    def __call__(self, job: Job, state: dict[str, Any] | None) -> Any:
        self.called.add(job.id)
        if self.plan.replay == (job.id, job.attempt):
            raise WorkerCrashedError(
                f"job {job.id!r} stopped its worker on attempt {job.attempt} of {self.max_attempts} (a "
                "crash, out of memory, or the function timeout: its transition never returned, and "
                "nothing of that run was committed); make the transition return within the function's "
                "timeout and memory (keep it small and pure, move heavy work elsewhere), then resume its "
                "group (PARK) "
                "or redrive it from the dead-letter queue (CONTINUE)"
            )
        if self.plan.watch:
            marker = RunMarker(job.id, job.attempt) if self.plan.isolate else GROUP_RUN
            if not self.opened:
                self._mark(marker, replaces=self.found.token, read=self.found.read)
                self.opened = True
            elif self.plan.isolate:
                self._mark(marker, replaces=self.token, read=True)
        return self.transition(job, state)

    def _mark(self, marker: RunMarker, *, replaces: str | None, read: bool) -> None:
        try:
            token = self.writer.mark_run(self.group, self.version, marker, replaces=replaces, read=read)
        except Exception as exc:
            raise RunInterrupted(self.group, exc) from exc
        if token is None:
            raise RunInterrupted(self.group, None)
        self.token = token
