"""The worker's loop: ``slots`` threads, each running one group's batch at a time, deleting what succeeded.

Each slot, until the worker stops:

1. **Take or receive.** A free slot first takes a group held for it (:mod:`constructs_fifo.worker.fanout`);
   when none is held, one free slot at a time receives (ReceiveMessage: ``WaitTimeSeconds`` 20,
   ``MaxNumberOfMessages`` ``batch_size``, all system and message attributes), the other free slots
   waiting for its records. A receive is split by group: the receiving slot runs the first group, the
   other groups are held (renewed) for the next free slots. So a slot's batch holds one group's records,
   no slot holds another group's records while it runs a job, and no record waits unrenewed.
2. **Run** the batch, in Lambda's record shape, through the configured mode's processor
   (:meth:`~constructs_fifo.runtime.batch_processor.BaseBatchProcessor.process_batch`), its heartbeat
   renewing the records and the claim meanwhile (:mod:`constructs_fifo.worker.heartbeat`), the task
   protected from scale-in (:mod:`constructs_fifo.worker.protection`).
3. **Settle** as the event source mapping does: DeleteMessageBatch of every record not in the
   response's ``batchItemFailures``; the listed ones already have their visibility (the processor
   applied the backoff, or visibility 0 for what it did not reach).

**Stop** (:meth:`Worker.stop`, on SIGTERM): no slot receives or takes a held group again; every record
that did not start goes back at once, whatever its group: the held groups and a receive that lands
while stopping (ChangeMessageVisibility 0). A running batch may finish its running job within
``grace_seconds`` but starts no next one (the records behind it, of its own group, come back at once
when it ends); a job still running at the end of the grace period is interrupted: told
(``context.cancelled``), it has the cleanup moment (``cleanup_seconds``), then the worker's child
processes are stopped (:mod:`constructs_fifo.worker.children`), and only then is its lease given back
(not an attempt: :func:`~constructs_fifo.worker.claims.give_back`) and its records made visible: until
then both are held (a retake finds a live lease), so no retry runs beside its cleanup or its children.
Then every slot's heartbeat ticker is stopped and joined (no thread of the worker's is left renewing
anything) and :meth:`Worker.run` returns 0.

Each slot's heartbeat ticker is started once, before the slot's first receive, and serves every batch
the slot runs (:mod:`constructs_fifo.worker.heartbeat`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, cast

from constructs_fifo.runtime.aws_limits import SQS_MAX_BATCH_ENTRIES
from constructs_fifo.runtime.clock import Clock, system_clock
from constructs_fifo.runtime.constants import METRIC_RUNNING_SLOTS
from constructs_fifo.runtime.error_text import describe
from constructs_fifo.runtime.sqs_records import build_record
from constructs_fifo.worker.children import CHILD_STOP_SECONDS, stop_children
from constructs_fifo.worker.fanout import HeldGroups, split_by_group

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_sqs.client import SQSClient
    from mypy_boto3_sqs.type_defs import (
        ChangeMessageVisibilityBatchRequestEntryTypeDef,
        DeleteMessageBatchRequestEntryTypeDef,
    )

    from constructs_fifo.runtime.observability import JobLogger
    from constructs_fifo.runtime.types import BatchResponse, SQSRecord
    from constructs_fifo.worker.heartbeat import WorkerHeartbeat
    from constructs_fifo.worker.protection import ScaleInProtection

__all__ = ["CLEANUP_SECONDS", "DEFAULT_GRACE_SECONDS", "LONG_POLL_SECONDS", "QueueTarget", "Slot", "Worker"]

#: ReceiveMessage's longest wait: the fewest empty receives.
LONG_POLL_SECONDS: Final = 20
#: How long running jobs may finish after SIGTERM: under Fargate's 120 s ``stopTimeout``.
DEFAULT_GRACE_SECONDS: Final = 110
#: Pause after a failed receive before the next one.
_RECEIVE_RETRY_SECONDS: Final = 1.0
#: How often a free slot waiting for another slot's receive looks again (a stop, a held group).
_TURN_WAIT_SECONDS: Final = 0.5
#: After the grace period, how long an interrupted job (told: ``context.cancelled``) may clean up before
#: the worker stops its child processes and exits: grace + this + the children's stop stay under
#: Fargate's 120 s ``stopTimeout``.
CLEANUP_SECONDS: Final = 5.0
#: Beyond the cleanup moment and the children's stop, how long an interrupted run's claim and records
#: stay held: time for their release, after which they come back on their own (the worker was killed).
_HOLD_MARGIN_SECONDS: Final = 1.0


@dataclass
class Slot:
    """One slot's parts: its processor, its heartbeat and its SQS client (one each: no sharing)."""

    process_batch: Callable[[list[SQSRecord], Any], BatchResponse]
    heartbeat: WorkerHeartbeat
    sqs: SQSClient


@dataclass(frozen=True)
class QueueTarget:
    """The queue a worker consumes: its URL, ARN and region (the records' ``eventSourceARN``...)."""

    url: str
    arn: str
    region: str


class Worker:
    """Runs ``len(slots)`` slots against one queue until :meth:`stop` (see the module docstring).

    Parameters
    ----------
    queue : QueueTarget
        The queue.
    slots : Sequence[Slot]
        One per concurrent batch.
    batch_size : int
        ``MaxNumberOfMessages`` of each receive (1 to 10).
    logger : JobLogger
        The worker's own lines and metrics (``RunningSlots``).
    protection : ScaleInProtection
        Held while any slot runs a batch.
    grace_seconds : float
        How long running jobs may finish after :meth:`stop`.
    wait_time_seconds : int
        ReceiveMessage's ``WaitTimeSeconds`` (20; tests shorten it).
    clock : Clock
        Epoch seconds (the receive stamps the heartbeat counts the 12-hour cap from).
    cleanup_seconds : float
        After the grace period, how long interrupted jobs may clean up.
    stop_children : bool
        Stop the process's child processes before :meth:`run` returns
        (:mod:`constructs_fifo.worker.children`): only where the worker owns its process
        (:func:`~constructs_fifo.worker.run.serve` sets it); never inside another program, whose own
        children it would stop.
    """

    def __init__(
        self,
        queue: QueueTarget,
        slots: Sequence[Slot],
        *,
        batch_size: int,
        logger: JobLogger,
        protection: ScaleInProtection,
        grace_seconds: float = DEFAULT_GRACE_SECONDS,
        wait_time_seconds: int = LONG_POLL_SECONDS,
        clock: Clock = system_clock,
        cleanup_seconds: float = CLEANUP_SECONDS,
        stop_children: bool = False,
    ) -> None:
        self.queue = queue
        self._cleanup_s = cleanup_seconds
        self.stop_children = stop_children
        self._slots = list(slots)
        self._batch_size = batch_size
        self._log = logger
        self._protection = protection
        self._grace_s = grace_seconds
        self._wait_s = wait_time_seconds
        self._clock = clock
        self._stopping = threading.Event()
        self._queue_name = queue.arn.rsplit(":", 1)[-1]
        first = self._slots[0]
        self._held = HeldGroups(
            first.sqs,
            queue.url,
            visibility_timeout_seconds=first.heartbeat.visibility_timeout_seconds,
            interval_seconds=first.heartbeat.interval_seconds,
            on_event=logger.event,
            clock=clock,
        )
        #: One free slot receives at a time; the others wait on it for a held group.
        self._turn = threading.Condition()
        self._receiving = False

    @property
    def stopping(self) -> bool:
        """Whether :meth:`stop` was called."""
        return self._stopping.is_set()

    def stop(self) -> None:
        """Stop receiving; running jobs may finish within the grace period (SIGTERM's handler)."""
        if self._stopping.is_set():
            return
        stop_at = self._clock() + self._grace_s
        for slot in self._slots:
            slot.heartbeat.drain(stop_at)
        self._stopping.set()
        self._event("worker_stopping", graceSeconds=self._grace_s)

    def run(self) -> int:
        """Run the slots until :meth:`stop`, then wait out the grace period; return the exit code (0)."""
        threads = [
            threading.Thread(target=self._slot_loop, args=(slot,), daemon=True, name=f"slot-{index}")
            for index, slot in enumerate(self._slots)
        ]
        self._event("worker_started", slots=len(threads), queueUrl=self.queue.url, batchSize=self._batch_size)
        for slot in self._slots:
            slot.heartbeat.start()
        try:
            for thread in threads:
                thread.start()
            while not self._stopping.wait(1.0):
                self._protection.refresh()
                self._held.renew()
            released = self._held.release_all()
            if released:
                self._event("held_released", records=released)
            deadline = time.monotonic() + self._grace_s
            for thread in threads:
                thread.join(timeout=max(0.0, deadline - time.monotonic()))
            # Not a slot still in its receive: a slot running a job past the grace period.
            interrupted = [
                s for t, s in zip(threads, self._slots, strict=True) if t.is_alive() and s.heartbeat.busy
            ]
            # Its claim and records are held until its children are stopped: no retry runs beside them.
            hold_s = (
                self._cleanup_s + (CHILD_STOP_SECONDS if self.stop_children else 0) + _HOLD_MARGIN_SECONDS
            )
            for slot in interrupted:
                slot.heartbeat.interrupt(
                    "the worker stopped: the grace period ended with the job running", hold_seconds=hold_s
                )
            if interrupted:  # the cleanup moment: the jobs were told (context.cancelled)
                deadline = time.monotonic() + self._cleanup_s
                for thread in threads:
                    thread.join(timeout=max(0.0, deadline - time.monotonic()))
            stopped = stop_children() if self.stop_children else 0
            for slot in interrupted:
                slot.heartbeat.release_interrupted()
        finally:
            for slot in self._slots:
                slot.heartbeat.close()
        self._event("worker_stopped", interrupted=len(interrupted), childrenStopped=stopped)
        return 0

    # --- one slot ----------------------------------------------------------------------------------

    def _slot_loop(self, slot: Slot) -> None:
        while not self._stopping.is_set():
            batch = self._next_batch(slot)
            if batch is not None:
                records, received_at = batch
                self.run_batch(slot, records, received_at=received_at)

    def _next_batch(self, slot: Slot) -> tuple[list[SQSRecord], float] | None:
        """A held group, or one group of this slot's own receive (the others held); ``None``: none."""
        with self._turn:
            while True:
                if self._stopping.is_set():
                    return None
                held = self._held.take()
                if held is not None:
                    return held.records, held.received_at
                if not self._receiving:
                    self._receiving = True
                    break
                self._turn.wait(_TURN_WAIT_SECONDS)
        try:
            messages = self._receive(slot.sqs)
        except Exception as exc:  # the next receive tries again
            self._event("receive_failed", error=describe(exc))
            self._end_turn()
            self._stopping.wait(_RECEIVE_RETRY_SECONDS)
            return None
        received_at = self._clock()
        if messages and self._stopping.is_set():  # received while stopping: not started, back at once
            self._release(slot.sqs, messages)
            messages = []
        records = [build_record(m, queue_arn=self.queue.arn, region=self.queue.region) for m in messages]
        first, *others = split_by_group(cast("list[SQSRecord]", records)) or [[]]
        if others and not self._held.put(others, received_at=received_at):  # stopping meanwhile
            self._release(slot.sqs, [{"ReceiptHandle": r["receiptHandle"]} for g in others for r in g])
        self._end_turn()
        return (first, received_at) if first else None

    def _end_turn(self) -> None:
        with self._turn:
            self._receiving = False
            self._turn.notify_all()

    def run_batch(
        self, slot: Slot, records: list[SQSRecord], *, received_at: float | None = None
    ) -> BatchResponse:
        """Run one group's batch in ``slot`` and settle it (delete what succeeded); ``received_at``: epoch
        seconds of its receive (default now)."""
        context = slot.heartbeat.begin(self._clock() if received_at is None else received_at)
        self._running(self._protection.acquire())
        try:
            response = slot.process_batch(records, context)
        except Exception as exc:  # the processor reports per record; this is a defect: keep every record
            self._event("batch_failed", error=describe(exc), records=len(records))
            return {"batchItemFailures": [{"itemIdentifier": r["messageId"]} for r in records]}
        finally:
            self._running(self._protection.release())
        failed = {item["itemIdentifier"] for item in response.get("batchItemFailures", [])}
        self._delete(slot.sqs, [r for r in records if r["messageId"] not in failed])
        return response

    def _receive(self, sqs: SQSClient) -> list[Any]:
        response = sqs.receive_message(
            QueueUrl=self.queue.url,
            MaxNumberOfMessages=self._batch_size,
            WaitTimeSeconds=self._wait_s,
            MessageSystemAttributeNames=["All"],
            MessageAttributeNames=["All"],
        )
        return list(response.get("Messages", []))

    def _release(self, sqs: SQSClient, messages: Sequence[Any]) -> None:
        entries: list[ChangeMessageVisibilityBatchRequestEntryTypeDef] = [
            {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0}
            for i, m in enumerate(messages)
        ]
        try:
            sqs.change_message_visibility_batch(QueueUrl=self.queue.url, Entries=entries)
        except Exception as exc:  # they come back after their visibility timeout instead
            self._event("release_failed", error=describe(exc), records=len(entries))

    def _delete(self, sqs: SQSClient, records: Sequence[SQSRecord]) -> None:
        for start in range(0, len(records), SQS_MAX_BATCH_ENTRIES):
            chunk = records[start : start + SQS_MAX_BATCH_ENTRIES]
            entries: list[DeleteMessageBatchRequestEntryTypeDef] = [
                {"Id": str(i), "ReceiptHandle": r["receiptHandle"]} for i, r in enumerate(chunk)
            ]
            try:
                response = sqs.delete_message_batch(QueueUrl=self.queue.url, Entries=entries)
            except Exception as exc:  # received again, each is a duplicate of its SUCCEEDED claim
                self._event("delete_failed", error=describe(exc), records=len(entries))
                continue
            for failure in response.get("Failed") or []:
                self._event("delete_refused", code=failure.get("Code"), message=failure.get("Message"))

    def _running(self, busy: int) -> None:
        self._log.metrics(queue_name=self._queue_name, values={METRIC_RUNNING_SLOTS: (busy, "Count")})

    def _event(self, event: str, **fields: Any) -> None:
        self._log.event({"level": "INFO", "event": event, **fields})
