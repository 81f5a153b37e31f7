"""The worker's heartbeat: a running batch's records and its job's claim, kept alive past their timeouts.

One :class:`WorkerHeartbeat` per slot, lent to the slot's processor (the skeleton's
:class:`~constructs_fifo.runtime.batch_processor.Heartbeat`), with **one ticker thread that lives as
long as the slot**: started once (:meth:`WorkerHeartbeat.start`, or the slot's first batch), idle
between batches (it waits on a condition, nothing is written or called), and stopped by
:meth:`WorkerHeartbeat.close` (the worker's stop: joined, so no thread is left and nothing is renewed
after). A thread per batch would cost its start and join on every batch, more CPU than a short batch's
own work. While a batch runs, every ``interval_seconds`` from its start (well inside the visibility
timeout) :meth:`WorkerHeartbeat.tick`:

1. **Bounds first.** A run past ``max_job_duration``, or a batch whose records are within one interval
   of SQS's 12-hour cap from their receive (ChangeMessageVisibility cannot go past it), is **stopped**:
   its lease is released (``renew(lease_ms=0)``: the next claim counts the run as an attempt), the
   batch goes stale, ``JobDurationExceeded`` is emitted.
2. **Visibility.** One ChangeMessageVisibilityBatch (the batch holds at most 10 records, so one request)
   sets every record of the batch to ``visibility_timeout`` from now: the running one, those behind
   it, and those done but not yet deleted (the same single request either way). An entry refused
   (the receipt handle expired: the record was received again) makes the batch **stale**.
3. **Claim.** Claim mode renews the running job's lease (:meth:`ClaimStore.renew`, fenced on the
   owner token) to ``visibility_timeout`` from now; a refusal (another worker holds the claim, or
   the lease ran out) makes the batch stale.

A call that fails outright (the network) is counted (``HeartbeatFailures``) and tried again next tick;
once nothing was renewed for a whole lease, the batch is stale (its records may be another worker's).
Each round writes one line (:mod:`constructs_fifo.worker.rounds`): ``INFO`` with what it renewed, or
``WARNING`` naming the job, what was refused or failed, and what happens next.

**A stale or stopped run** is told through its context (:class:`JobContext`): ``context.cancelled``
(a :class:`threading.Event`) is set and ``context.get_remaining_time_in_millis()`` is 0. A job that
ignores it runs on in its thread, but the runtime writes nothing more for it: :class:`HeartbeatClaims`
refuses its claim writes (reported ``FENCED``, the record retried), and were the store asked anyway,
the owner fence refuses them once another worker took the claim. The skeleton starts nothing more of
a stale batch (its records come back at once, in order). A cancelled job
(:mod:`constructs_fifo.runtime.claim.cancel`) reaches its run the same way: the cancel replaced the
claim's owner, so the next renewal is refused and the run is told; the runtime then finds the claim
``CANCELLED`` and deletes the record instead of retrying it.

State mode's transitions are short and pure: a state-mode heartbeat extends visibility only.
"""

from __future__ import annotations

import math
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from constructs_fifo.runtime.aws_limits import SQS_MAX_BATCH_ENTRIES, SQS_MAX_VISIBILITY_TIMEOUT_SECONDS
from constructs_fifo.runtime.clock import Clock, system_clock
from constructs_fifo.runtime.error_text import describe
from constructs_fifo.worker.claims import give_back
from constructs_fifo.worker.rounds import HeartbeatRound

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_sqs.client import SQSClient
    from mypy_boto3_sqs.type_defs import ChangeMessageVisibilityBatchRequestEntryTypeDef

    from constructs_fifo.runtime.claim.store import ClaimStore
    from constructs_fifo.runtime.observability import JobLogger
    from constructs_fifo.runtime.types import SQSRecord
    from constructs_fifo.worker.isolation import RunGate

__all__ = ["JobContext", "WorkerHeartbeat"]

#: SQS's cap on a received message's visibility, counted from its receive.
VISIBILITY_CAP_SECONDS: Final = SQS_MAX_VISIBILITY_TIMEOUT_SECONDS
#: Shortest wait of the ticker (a bound closer than this is acted on at once).
_MIN_WAIT_SECONDS: Final = 0.05


class JobContext:
    """The ``context`` a job function receives on a worker (Lambda's context, as far as a job reads it).

    Attributes
    ----------
    cancelled : threading.Event
        Set when the run is stale (another worker may hold its job) or stopped (``max_job_duration``,
        the 12-hour cap, the end of a stop's grace period). A long job polls it (or waits on it) between
        steps and returns soon after, stopping what it started: whatever it writes after is refused;
        after a stop's grace it has a few seconds (``CLEANUP_SECONDS``) before the worker stops its
        child processes and exits.
    aws_request_id : str
        A fresh id per batch (Lambda's field of that name).
    fence : int or None
        The running job's fencing token (claim mode): grows with every claim of the job, so a stale
        run's is below the run that took over; a downstream store that keeps the highest token it saw
        refuses a stale run's late write (:mod:`constructs_fifo.worker.fence`). ``None`` before a claim.
    function_name : str
        ``"constructs-fifo-worker"``.
    """

    function_name = "constructs-fifo-worker"

    def __init__(self, heartbeat: WorkerHeartbeat) -> None:
        self.cancelled = threading.Event()
        self.aws_request_id = str(uuid.uuid4())
        self.fence: int | None = None
        self._heartbeat = heartbeat

    def get_remaining_time_in_millis(self) -> int:
        """Milliseconds this run may still take (0 once cancelled)."""
        return self._heartbeat.remaining_ms()


class WorkerHeartbeat:
    """Keeps one slot's running batch in flight (see the module docstring).

    Parameters
    ----------
    sqs : SQSClient
        The slot's client, on ``queue_url``.
    queue_url : str
        The queue the batch came from.
    visibility_timeout_seconds : int
        Each renewal moves the records' visibility (and the lease) this far from now.
    interval_seconds : float
        Time between renewals; must be shorter than ``visibility_timeout_seconds``.
    logger : JobLogger
        Where failures and stops are written (and their metrics).
    queue_name : str
        The QueueName dimension of the metrics.
    max_job_duration_seconds : int or None
        Bound of one run; ``None``: the 12-hour cap only.
    clock : Clock
        Epoch seconds (the stores' clock).
    ticker : bool
        Renew from a thread of its own (one for the slot's life) while a batch runs; ``False``: the
        caller calls :meth:`tick`.
    gate : RunGate or None
        The worker's gate, shared by its slots (several slots: :mod:`constructs_fifo.worker.isolation`);
        ``None``: the slot is alone in its process.
    """

    def __init__(
        self,
        sqs: SQSClient,
        queue_url: str,
        *,
        visibility_timeout_seconds: int,
        interval_seconds: float,
        logger: JobLogger,
        queue_name: str,
        max_job_duration_seconds: int | None = None,
        clock: Clock = system_clock,
        ticker: bool = True,
        gate: RunGate | None = None,
    ) -> None:
        #: The slot's claim store (claim mode: :class:`~constructs_fifo.worker.lent_claims.HeartbeatClaims`,
        #: which sets both) and how its run leaves the run gate.
        self.claims: ClaimStore | None = None
        self.gate_leave: Callable[[], None] = _nothing
        self.gate = gate
        self._sqs = sqs
        self._queue_url = queue_url
        self._visibility_s = visibility_timeout_seconds
        self._interval_s = interval_seconds
        self._log = logger
        self._queue_name = queue_name
        self._max_job_s = max_job_duration_seconds
        self._clock = clock
        self._ticker = ticker
        self._lock = threading.RLock()
        #: Wakes the idle ticker when a batch starts, and any ticker on :meth:`close`.
        self._wake = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None
        self._closed = False
        self._idle = False
        self._due_at = 0.0  # time.monotonic() of the running batch's next tick
        self._round: HeartbeatRound | None = None
        self._records: list[SQSRecord] = []
        self._received_at = 0.0
        self._renewed_at = 0.0
        self._context = JobContext(self)
        self._stale = False
        self._job: tuple[str, str, float] | None = None  # job id, owner, started at
        self._stop_at: float | None = None
        #: An interrupted run held until :meth:`release_interrupted`: its job and records.
        self._held_back: tuple[tuple[str, str, float] | None, list[SQSRecord]] | None = None

    @property
    def visibility_timeout_seconds(self) -> int:
        """How far from now a renewal moves the records' visibility."""
        return self._visibility_s

    @property
    def interval_seconds(self) -> float:
        """Time between renewals."""
        return self._interval_s

    @property
    def lease_ms(self) -> int:
        """The lease a claim is taken with and renewed to: the visibility a renewal gives the records."""
        return self._visibility_s * 1000

    # --- the batch ---------------------------------------------------------------------------------

    def begin(self, received_at: float) -> JobContext:
        """A new batch received at ``received_at`` (epoch seconds): a fresh context, not stale."""
        with self._lock:
            self._received_at = received_at
            self._renewed_at = received_at
            self._context = JobContext(self)
            self._stale = False
            self._job = None
            return self._context

    @contextmanager
    def running(self, records: Sequence[SQSRecord]) -> Iterator[object]:
        """The skeleton's hook: hold ``records`` in flight (renewing them) while the block runs.

        The first tick is ``interval_seconds`` after the block opens. The slot's ticker is started if
        it is not yet; an idle one is woken. On leaving, the records and the job are let go under the
        lock: a tick under way ends first, and no later tick renews them. The ticker is not woken
        then: it finds nothing in flight at its next due time and goes idle (a short batch costs it
        no wake-up at all).
        """
        with self._lock:
            self._records = list(records)
            self._due_at = time.monotonic() + self._interval_s
            if self._thread is None:
                self.start()
            elif self._idle:
                self._wake.notify()
        try:
            yield self
        finally:
            with self._lock:
                self._records = []
                self._job = None
            self.gate_leave()  # a run that never wrote its claim (a job's BaseException)

    # --- the ticker --------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the slot's ticker (once; idle until a batch runs); no-op without a ticker or once closed."""
        with self._lock:
            if not self._ticker or self._closed or self._thread is not None:
                return
            self._thread = threading.Thread(target=self._tick_loop, daemon=True, name="heartbeat")
            self._thread.start()

    def close(self) -> None:
        """Stop the ticker and wait for it: nothing is renewed after this returns (the worker's stop)."""
        with self._lock:
            self._closed = True
            thread = self._thread
            self._wake.notify_all()
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    @property
    def ticking(self) -> bool:
        """Whether the slot's ticker thread is alive."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    @property
    def busy(self) -> bool:
        """Whether a batch is running (its records held)."""
        with self._lock:
            return bool(self._records)

    def stale(self) -> bool:
        """Whether a renewal failed or the run was stopped: nothing more may start."""
        return self._stale

    @contextmanager
    def admit(self, *, alone: bool) -> Iterator[object]:
        """The skeleton's hook (state mode's group run): hold the worker's gate while the block runs."""
        if self.gate is None:
            yield self
            return
        self.gate.enter(alone=alone)
        try:
            yield self
        finally:
            self.gate.leave(alone=alone)

    def drain(self, stop_at: float) -> None:
        """The worker is stopping: the running job may go on until ``stop_at``, no other one starts."""
        with self._lock:
            self._stop_at = stop_at

    def remaining_ms(self) -> int:
        """How long the batch may still run, as the context tells the skeleton and the job."""
        with self._lock:
            if self._stale:
                return 0
            now = self._clock()
            bounds = [VISIBILITY_CAP_SECONDS - (now - self._received_at) - self._interval_s]
            if self._job is not None and self._max_job_s is not None:
                bounds.append(self._max_job_s - (now - self._job[2]))
            elif self._max_job_s is not None:
                bounds.append(self._max_job_s)
            if self._stop_at is not None:
                # Stopping: the running job may finish within the grace period; no next one starts.
                tracks_jobs = self.claims is not None
                bounds.append(self._stop_at - now if self._job is not None or not tracks_jobs else 0)
            return max(0, int(min(bounds) * 1000))

    # --- the claim (from HeartbeatClaims) ----------------------------------------------------------

    def job_started(self, job_id: str, owner: str, *, fence: int | None = None) -> None:
        """The slot's processor took a job's claim: renew it from now on, and time the run; ``fence``:
        its token, told to the job (``context.fence``)."""
        with self._lock:
            self._job = (job_id, owner, self._clock())
            if fence is not None:
                self._context.fence = fence

    def job_ended(self, job_id: str) -> None:
        """The job's claim was written (or refused): nothing more to renew for it."""
        with self._lock:
            if self._job is not None and self._job[0] == job_id:
                self._job = None

    def refuses(self, job_id: str, owner: str) -> bool:
        """Whether a claim write of this run must not go out: the run is stale or stopped."""
        with self._lock:
            return self._stale and (self._job is None or self._job[:2] == (job_id, owner))

    @contextmanager
    def job_ending(self, job_id: str, owner: str) -> Iterator[bool]:
        """Around a job's last claim write: yields whether it may go out (:meth:`refuses`), then ends the
        job (:meth:`job_ended`) when it went out, with no round in between.

        A round renews the job it saw running. Were one to begin while the job's SUCCEEDED (or FAILED,
        DEAD) claim was being written, its renewal would find the claim no longer IN_FLIGHT, be refused,
        and call a healthy batch stale: the batch's later records not run, the job's success logged as a
        refusal. Holding the rounds' lock across the write keeps the two apart; a round waits at most
        for that one call.
        """
        with self._lock:
            if self.refuses(job_id, owner):
                yield False
                return
            yield True
            self.job_ended(job_id)

    # --- renewing ----------------------------------------------------------------------------------

    def tick(self) -> None:
        """One heartbeat round (module docstring), written as one line; nothing while nothing is in flight."""
        with self._lock:
            if not self._records or self._stale:
                return
            self._round = HeartbeatRound(self._job[0] if self._job else None, len(self._records))
            try:
                self._tick()
            except Exception as exc:  # a defect: counted, and the next tick tries again
                self._failure("heartbeat_failed", exc)
            finally:
                self._write_round()

    def _tick(self) -> None:
        now = self._clock()
        held_s = now - self._received_at
        job = self._job
        if job is not None and self._max_job_s is not None and now - job[2] >= self._max_job_s:
            self._stop(f"the run passed max_job_duration ({self._max_job_s} s)", exceeded=True)
            return
        if VISIBILITY_CAP_SECONDS - held_s <= self._interval_s:
            self._stop(f"the batch reached SQS's {VISIBILITY_CAP_SECONDS} s visibility cap", exceeded=True)
            return
        seconds = int(min(self._visibility_s, VISIBILITY_CAP_SECONDS - held_s - 1))
        records_ok = self._extend(self._records, seconds)
        claim_ok = self._renew(job, self.lease_ms) if job is not None else True
        if records_ok and claim_ok:
            self._renewed_at = now
            if self._round is not None:
                has_claim = job is not None and self.claims is not None
                self._round.renewed(
                    visibility_timeout_seconds=seconds, lease_renewed=True if has_claim else None
                )
        elif not self._stale and now - self._renewed_at >= self._visibility_s:
            self._go_stale("nothing was renewed for a whole visibility timeout")

    def interrupt(self, reason: str, *, hold_seconds: float = 0) -> None:
        """Stop the run (the end of a stop's grace): the job is told, its writes refused; its claim is
        given back, not counted (a stop is not the job's failure), and its records made visible.

        With ``hold_seconds`` both wait for :meth:`release_interrupted`: the claim's lease and the records'
        visibility are set that far ahead instead, so that no retry starts while the job cleans up and
        its child processes are stopped (a retake meanwhile finds a live lease)."""
        with self._lock:
            records = list(self._records)
            job = self._job
            self._round = HeartbeatRound(job[0] if job else None, len(records))
            try:
                held = False
                if records and hold_seconds > 0:  # before the job is told: no retry may start meanwhile
                    self._extend(records, math.ceil(hold_seconds))
                if not self._stale:
                    held = job is not None and hold_seconds > 0 and self._renew(job, int(hold_seconds * 1000))
                    if job is not None and self.claims is not None and not held:
                        self._give_back(job)
                    if not self._stale:  # a refused hold went stale already
                        self._mark_stale("run_stopped", reason, counted=False)
                self._held_back = (job if held else None, records) if hold_seconds > 0 else None
                if records and hold_seconds <= 0:
                    self._extend(records, 0)
            finally:
                self._write_round()

    def release_interrupted(self) -> None:
        """Give back what :meth:`interrupt` held (its cleanup over, its children stopped): the claim, not
        counted, and the records, visible at once."""
        with self._lock:
            held, self._held_back = self._held_back, None
            if held is None:
                return
            job, records = held
            if job is not None and self.claims is not None:
                self._give_back(job)
            if records:
                self._extend(records, 0)

    def _tick_loop(self) -> None:
        """The slot's ticker: idle while nothing is in flight, a round at each due time while a batch runs."""
        with self._lock:
            while not self._closed:
                if not self._records:
                    self._idle = True
                    self._wake.wait()
                    self._idle = False
                    continue
                wait = self._due_at - time.monotonic()
                if wait > 0:
                    self._wake.wait(wait)
                    continue
                try:
                    self.tick()
                except Exception as exc:  # the ticker never dies: the next tick tries again
                    self._failure("heartbeat_failed", exc)
                self._due_at = time.monotonic() + self._next_wait()

    def _write_round(self) -> None:
        done, self._round = self._round, None
        if done is not None:
            done.write(self._log, queue_name=self._queue_name)

    def _next_wait(self) -> float:
        with self._lock:
            wait = self._interval_s
            if self._job is not None and self._max_job_s is not None:
                wait = min(wait, self._max_job_s - (self._clock() - self._job[2]))
            return max(_MIN_WAIT_SECONDS, wait)

    def _extend(self, records: Sequence[SQSRecord], seconds: int) -> bool:
        """Set the records' visibility; ``False`` when the call failed (a refused entry makes it stale)."""
        for start in range(0, len(records), SQS_MAX_BATCH_ENTRIES):
            chunk = records[start : start + SQS_MAX_BATCH_ENTRIES]
            entries: list[ChangeMessageVisibilityBatchRequestEntryTypeDef] = [
                {"Id": str(i), "ReceiptHandle": r["receiptHandle"], "VisibilityTimeout": seconds}
                for i, r in enumerate(chunk)
            ]
            try:
                response = self._sqs.change_message_visibility_batch(
                    QueueUrl=self._queue_url, Entries=entries
                )
            except Exception as exc:
                self._failure("visibility_renewal_failed", exc, released=seconds == 0)
                return False
            refused = response.get("Failed") or []
            if refused and seconds > 0:
                codes = sorted({str(entry.get("Code")) for entry in refused})
                self._go_stale(f"the records' receipt handles were refused ({', '.join(codes)})")
                return False
        return True

    def _renew(self, job: tuple[str, str, float], lease_ms: int) -> bool:
        claims = self.claims
        if claims is None:
            return True
        try:
            renewed = claims.renew(job[0], job[1], lease_ms=lease_ms)
        except Exception as exc:
            self._failure("claim_renewal_failed", exc, released=lease_ms == 0)
            return False
        if not renewed:
            self._go_stale(
                "the claim's renewal was refused: another worker holds it, its lease ran out, or the job "
                "was cancelled (constructs-fifo jobs show tells which)"
            )
        return renewed

    def _give_back(self, job: tuple[str, str, float]) -> None:
        assert self.claims is not None
        try:
            give_back(self.claims, job[0], job[1])
        except Exception as exc:  # its lease runs out instead: the next claim counts it
            self._failure("claim_renewal_failed", exc, released=True)

    def _stop(self, reason: str, *, exceeded: bool) -> None:
        """Stop the run: release its lease (the next claim counts it), cancel it, go stale."""
        job = self._job
        if job is not None:
            self._renew(job, 0)
        self._mark_stale("job_duration_exceeded" if exceeded else "run_stopped", reason, exceeded=exceeded)

    def _go_stale(self, reason: str) -> None:
        self._mark_stale("heartbeat_stale", reason, failure=True)

    def _mark_stale(
        self, event: str, reason: str, *, failure: bool = False, exceeded: bool = False, counted: bool = True
    ) -> None:
        self._stale = True
        self._context.cancelled.set()
        counts = "counts as an attempt" if counted else "is the same attempt (a stop is not a failure)"
        self._note(
            event,
            failure=failure,
            exceeded=exceeded,
            reason=reason,
            action="the job is told (context.cancelled); its writes are refused; its records come "
            f"back to the queue and its next run {counts}",
        )

    def _failure(self, event: str, exc: BaseException, *, released: bool = False) -> None:
        """A call failed outright; ``released``: it was a release (the run is stopped: no next tick)."""
        if released:
            action = "not retried: the lease and the records' visibility run out on their own"
        else:
            left_s = max(0, int(self._visibility_s - (self._clock() - self._renewed_at)))
            action = f"tried again next tick; the batch goes stale if nothing is renewed within {left_s} s"
        self._note(event, failure=True, error=describe(exc), action=action)

    def _note(self, event: str, *, failure: bool, exceeded: bool = False, **fields: Any) -> None:
        """Add to the round under way, or write a round of its own (a call outside any round)."""
        if self._round is not None:
            self._round.note(event, failure=failure, exceeded=exceeded, **fields)
            return
        single = HeartbeatRound(self._job[0] if self._job else None, len(self._records))
        single.note(event, failure=failure, exceeded=exceeded, **fields)
        single.write(self._log, queue_name=self._queue_name)


def _nothing() -> None:
    """No run gate (state mode, or a worker of one slot)."""
