"""The local event source mapping: poll a FIFO queue as Lambda does and run the deployed handler.

``EventSourceRunner.from_stack`` finds the stack's queue (:mod:`constructs_fifo.stacks.deployed`, with
``queue=`` for a stack of several) and reads what is deployed
(:mod:`~constructs_fifo.local.event_source.deployment`). ``drain`` then does what Lambda's pollers do:

- ReceiveMessage batches of up to BatchSize with every system attribute, turned into real Lambda SQS
  events (:mod:`~constructs_fifo.local.event_source.events`);
- as many batches in flight as the concurrency allows (MaximumConcurrency, else reserved
  concurrency), each in its own long-lived worker process
  (:mod:`~constructs_fifo.local.event_source.pool`);
- with ReportBatchItemFailures, DeleteMessageBatch for every record the response does not list; an
  invalid response, a handler exception or a timeout leaves the whole batch, which comes back after
  the visibility timeout; SQS's own ``maxReceiveCount`` moves messages to the dead-letter queue;
- a delete SQS refuses (on a FIFO queue, a receipt handle whose visibility timeout ended during a
  long invocation: "The receipt handle has expired.") leaves the record, which is received again, as
  Lambda's does; the drain counts it (:attr:`DrainStats.delete_failures`) and writes one JSON line
  ``{"event": "delete_refused", ...}`` to the function log
  (:mod:`~constructs_fifo.local.event_source.receipts`). A group's front received again while a
  later record of it is still in flight (AWS's FIFO rule) needs nothing of the drain: the runtime's
  claims order the runs;
- a disabled mapping is not polled, as Lambda polls none: ``drain`` returns at once and says why in
  :attr:`DrainStats.skipped`;
- an invocation that fails says its error once (the first of each distinct error, through ``say``,
  naming the function log, where the worker wrote its traceback); one that shows no job can run (the
  handler cannot be imported, or the runtime's ``ConfigurationError``: every batch would fail the
  same way, whatever its jobs) stops the drain at once, as an interrupt does (below), and says why
  in :attr:`DrainStats.stopped` instead of waiting out the visibility timeout of every message.

Stopping: a drain that ends by itself (empty queue, ``for_seconds``, :meth:`EventSourceRunner.stop`)
lets the batches in flight finish. One that is interrupted (Ctrl-C in the thread running it, or its
``cancel`` event, set by a command whose main thread waits for drains on other threads) stops at
once: no new batch, the workers running one are killed, and their records, like any received but not
run, are made visible again (ChangeMessageVisibility 0:
:func:`~constructs_fifo.local.event_source.receipts.release`), so the next drain takes them at once
instead of after the visibility timeout (12 minutes for the construct's defaults). The workers never
see the terminal's Ctrl-C themselves (:mod:`~constructs_fifo.local.event_source.pool`).

The function log (the workers' stderr) goes to a new numbered file per drain in the user's and the
project's log directory, bounded (:mod:`~constructs_fifo.local.event_source.function_log`); a drain
waiting only on in-flight messages says so (:mod:`~constructs_fifo.local.event_source.waiting`).

Examples
--------
>>> from constructs_fifo.stacks.aws import AwsTarget
>>> target = AwsTarget.for_endpoint("http://localhost:4566")
>>> with EventSourceRunner.from_stack("AgentJobs", target=target) as runner:  # doctest: +SKIP
...     stats = runner.drain(until_empty=True)
>>> stats.outcomes["succeeded"]  # doctest: +SKIP
500
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Self

from botocore.exceptions import BotoCoreError, ClientError

from constructs_fifo.local.errors import RunnerError
from constructs_fifo.local.event_source.deployment import (
    DeployedFunction,
    Deployment,
    MappingSettings,
    QueueSettings,
    read_deployment,
)
from constructs_fifo.local.event_source.events import build_event, parse_batch_response
from constructs_fifo.local.event_source.function_log import FunctionLog
from constructs_fifo.local.event_source.invocation_errors import NO_JOB_CAN_RUN_ERRORS, ErrorReport
from constructs_fifo.local.event_source.pool import WorkerPool, lambda_environment
from constructs_fifo.local.event_source.receipts import delete, release
from constructs_fifo.local.event_source.reports import DrainStats, InvocationReport, outcomes_of
from constructs_fifo.local.event_source.waiting import WaitReport, queue_name
from constructs_fifo.stacks.aws import AwsTarget
from constructs_fifo.stacks.counters import QueueCounts, queue_counts
from constructs_fifo.stacks.deployed import resolve_queue
from constructs_fifo.stacks.errors import ContainerQueueError

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_lambda.client import LambdaClient
    from mypy_boto3_sqs.client import SQSClient
    from mypy_boto3_sqs.type_defs import MessageTypeDef

__all__ = ["DEFAULT_CONCURRENCY", "EventSourceRunner"]

#: Concurrency when the mapping has no MaximumConcurrency and the function no reserved concurrency.
DEFAULT_CONCURRENCY: Final = 5


class EventSourceRunner:
    """Poll an SQS FIFO queue as Lambda's event source mapping does and run the deployed handler.

    Build it with :meth:`from_stack` or :meth:`from_function`; use it as a context manager (or call
    :meth:`close`) so its workers and extracted code are cleaned up.

    Parameters
    ----------
    deployment:
        The deployed function, mapping and queue (and directories to remove on :meth:`close`).
    target:
        The endpoint and region of the records and the workers, and the workers' credentials.
    sqs_client:
        Client for ReceiveMessage, DeleteMessageBatch and the queue counters; by default the target's.
    concurrency:
        Overrides the concurrency read from the deployment.
    log_path:
        Where the workers' stderr (the function log) goes, emptied first; by default a new numbered
        log in :func:`~constructs_fifo.local.event_source.function_log.log_directory`. Kept after
        :meth:`close` so it can be read; bounded (see that module).
    """

    def __init__(
        self,
        deployment: Deployment,
        *,
        target: AwsTarget,
        sqs_client: SQSClient | None = None,
        concurrency: int | None = None,
        log_path: Path | None = None,
    ) -> None:
        self.function: DeployedFunction = deployment.function
        self.mapping: MappingSettings = deployment.mapping
        self.queue: QueueSettings = deployment.queue
        self.target = target
        self._sqs: SQSClient = sqs_client or target.client("sqs")
        self._cleanup = list(deployment.cleanup)
        self.concurrency = concurrency if concurrency is not None else self.deployed_concurrency()
        if self.concurrency < 1:
            raise RunnerError(
                f"concurrency {self.concurrency!r} must be at least 1", "pass concurrency=1 or more"
            )
        self._function_log = FunctionLog(self.function.name, log_path)
        self.log_path = self._function_log.path
        self._log = self._function_log.file
        self._pool: WorkerPool | None = None
        self._stop = threading.Event()
        self._abandon = threading.Event()

    # -- construction ---------------------------------------------------------------------------------

    @classmethod
    def from_function(
        cls,
        function_name: str | None,
        *,
        target: AwsTarget,
        queue_arn: str | None = None,
        lambda_client: LambdaClient | None = None,
        sqs_client: SQSClient | None = None,
        s3_client: Any = None,
        code_dir: str | os.PathLike[str] | None = None,
        concurrency: int | None = None,
        log_path: Path | None = None,
    ) -> EventSourceRunner:
        """Read a deployed function, its SQS mapping (the one of ``queue_arn``) and queue, fetch its
        code, and build a runner (see :func:`~constructs_fifo.local.event_source.deployment.read_deployment`).

        ``function_name`` is a :class:`~constructs_fifo.stacks.deployed.DeployedQueue`'s, ``None`` for a
        queue that container workers consume: refused with :class:`ContainerQueueError`.
        """
        if function_name is None:
            raise ContainerQueueError(
                f"the local event source mapping runs a queue's function and queue {queue_arn} has none: "
                "container workers consume it",
                "run its workers locally: constructs-fifo worker --stack <stack> --queue <queue> "
                "--code-dir <the job code's directory>",
            )
        deployment = read_deployment(
            function_name,
            target=target,
            queue_arn=queue_arn,
            lambda_client=lambda_client,
            sqs_client=sqs_client,
            s3_client=s3_client,
            code_dir=Path(code_dir) if code_dir is not None else None,
        )
        return cls(
            deployment, target=target, sqs_client=sqs_client, concurrency=concurrency, log_path=log_path
        )

    @classmethod
    def from_stack(
        cls,
        stack: str = "AgentJobs",
        *,
        target: AwsTarget,
        queue: str | None = None,
        cloudformation_client: Any = None,
        lambda_client: LambdaClient | None = None,
        sqs_client: SQSClient | None = None,
        s3_client: Any = None,
        code_dir: str | os.PathLike[str] | None = None,
        concurrency: int | None = None,
        log_path: Path | None = None,
    ) -> EventSourceRunner:
        """Find the stack's queue (``queue``: construct path or queue name, needed when the stack
        holds several) and build a runner for its function with :meth:`from_function`.

        Raises
        ------
        StackNotFoundError, QueueNotFoundError, AmbiguousQueueError
            See :func:`constructs_fifo.stacks.deployed.select_queue`.
        """
        deployed = resolve_queue(
            stack,
            target=target,
            queue=queue,
            cloudformation_client=cloudformation_client,
            lambda_client=lambda_client,
            sqs_client=sqs_client,
        )
        return cls.from_function(
            deployed.require_function("the local event source mapping"),
            target=target,
            queue_arn=deployed.queue_arn,
            lambda_client=lambda_client,
            sqs_client=sqs_client,
            s3_client=s3_client,
            code_dir=code_dir,
            concurrency=concurrency,
            log_path=log_path,
        )

    def deployed_concurrency(self) -> int:
        """min(MaximumConcurrency, reserved concurrency) of those set, else ``DEFAULT_CONCURRENCY``."""
        limits = [x for x in (self.mapping.maximum_concurrency, self.function.reserved_concurrency) if x]
        return min(limits) if limits else DEFAULT_CONCURRENCY

    # -- lifecycle -----------------------------------------------------------------------------------

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop every worker and remove the extracted code."""
        self._stop.set()
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        self._function_log.close()
        for path in self._cleanup:
            shutil.rmtree(path, ignore_errors=True)

    def stop(self) -> None:
        """Ask a running ``drain`` to stop after the batches in flight (thread-safe)."""
        self._stop.set()

    def worker_environment(self) -> dict[str, str]:
        """The environment of a worker: the function's, plus what Lambda sets, region and endpoint."""
        return lambda_environment(
            self.function,
            region=self.target.region,
            endpoint_url=self.target.endpoint_url,
            credentials=self.target.child_credentials(),
        )

    # -- draining ---------------------------------------------------------------------------------------

    def queue_counts(self) -> QueueCounts:
        """The source queue's counters (see :func:`constructs_fifo.stacks.counters.queue_counts`)."""
        return queue_counts(self._sqs, self.queue.url)

    def drain(
        self,
        *,
        until_empty: bool = True,
        for_seconds: float | None = None,
        on_batch: Callable[[InvocationReport], None] | None = None,
        quiet_seconds: float = 1.0,
        poll_wait_seconds: int = 1,
        cancel: threading.Event | None = None,
        say: Callable[[str], None] | None = None,
        stats: DrainStats | None = None,
    ) -> DrainStats:
        """Poll and invoke until the queue is empty (and stays so), ``for_seconds`` pass, or :meth:`stop`.

        Parameters
        ----------
        until_empty:
            Stop once the queue has had no visible, delayed or in-flight message and no batch has
            been running for ``quiet_seconds``. In-flight messages (e.g. waiting out a retry backoff)
            keep the drain going: they come back.
        for_seconds:
            Stop after this long at the latest (batches in flight finish first).
        on_batch:
            Called after every invocation with its :class:`InvocationReport` (one call at a time).
        quiet_seconds:
            How long the queue must stay empty.
        poll_wait_seconds:
            ReceiveMessage long-poll wait of each slot.
        cancel:
            Set from another thread to stop the drain at once (see the module docstring); a Ctrl-C
            in the thread running the drain does the same.
        say:
            Receives a line when the drain has only in-flight messages left to wait for (every
            :data:`~constructs_fifo.local.event_source.waiting.WAIT_REPORT_SECONDS`), the first time
            each distinct invocation error occurs, and when it stops at once.
        stats:
            The totals to add to (a caller reads them as they grow, and after a Ctrl-C); by default
            new ones.

        Returns
        -------
        DrainStats
            With ``skipped`` set, and nothing polled, when the mapping is disabled; with ``stopped``
            set when no job could run.
        """
        stats = stats if stats is not None else DrainStats()
        stats.function_log = str(self.log_path)
        if not self.mapping.enabled:
            stats.skipped = (
                f"the event source mapping {self.mapping.uuid} of function {self.function.name} is "
                f"{self.mapping.state}, so Lambda would not poll {self.queue.url} and neither does drain; "
                f"enable it (`{self.enable_mapping_command()}`) to drain the queue"
            )
            return stats
        self._stop.clear()
        self._abandon.clear()
        if self._pool is None:
            self._pool = WorkerPool(self.function, self.worker_environment(), self._log)
        pool = self._pool
        callback_lock = threading.Lock()
        busy = [False] * self.concurrency
        errors = ErrorReport(say, self._function_log, stats)  # one for every slot: each error said once
        started = time.monotonic()
        threads = [
            threading.Thread(
                target=self._poll_slot,
                args=(slot,),
                kwargs={
                    "pool": pool,
                    "busy": busy,
                    "stats": stats,
                    "on_batch": on_batch,
                    "callback_lock": callback_lock,
                    "wait_seconds": poll_wait_seconds,
                    "errors": errors,
                },
                name=f"esm-slot-{slot}",
                daemon=True,
            )
            for slot in range(self.concurrency)
        ]
        for thread in threads:
            thread.start()
        try:
            self._wait_until_done(
                busy,
                started=started,
                until_empty=until_empty,
                for_seconds=for_seconds,
                quiet_seconds=quiet_seconds,
                cancel=cancel,
                waiting=WaitReport(say, self.queue.url, self.queue.visibility_timeout_seconds),
            )
        except BaseException:  # Ctrl-C (KeyboardInterrupt) or a failed queue read: stop at once
            self._abandon.set()
            raise
        finally:
            self._stop.set()
            if self._abandon.is_set():
                if say is not None and stats.stopped is None:
                    say(
                        f"stopping the drain of {queue_name(self.queue.url)} now: batches in flight "
                        "are cut off and their messages made visible again"
                    )
                pool.abort()
            for thread in threads:
                thread.join()
            stats.elapsed_seconds = time.monotonic() - started
        return stats

    def enable_mapping_command(self) -> str:
        """The ``aws`` command that enables this runner's event source mapping, for this target."""
        command = f"aws lambda update-event-source-mapping --uuid {self.mapping.uuid} --enabled"
        command += f" --region {self.target.region}"
        if self.target.endpoint_url is not None:
            command += f" --endpoint-url {self.target.endpoint_url}"
        return command

    def _poll_slot(
        self,
        slot: int,
        *,
        pool: WorkerPool,
        busy: list[bool],
        stats: DrainStats,
        on_batch: Callable[[InvocationReport], None] | None,
        callback_lock: threading.Lock,
        wait_seconds: int,
        errors: ErrorReport,
    ) -> None:
        """One concurrency slot of :meth:`drain`: receive a batch, invoke, report, until stopped."""
        while not self._stop.is_set():
            try:
                messages = self._sqs.receive_message(
                    QueueUrl=self.queue.url,
                    MaxNumberOfMessages=self.mapping.batch_size,
                    WaitTimeSeconds=wait_seconds,
                    MessageSystemAttributeNames=["All"],
                    MessageAttributeNames=["All"],
                ).get("Messages", [])
            except (ClientError, BotoCoreError):  # as Lambda's pollers: wait, poll again
                if self._stop.wait(0.5):
                    return
                continue
            if not messages:
                continue
            if self._abandon.is_set():  # received as the drain stopped at once: not run
                release(self._sqs, self.queue.url, messages)
                return
            busy[slot] = True
            try:
                report, no_job_can_run = self._invoke(pool, slot, messages, stats)
                if report.error is not None and not self._abandon.is_set():
                    errors.report(self.function.name, report.error, stop=no_job_can_run)
                    if no_job_can_run:  # every batch would fail the same: stop now, as an interrupt does
                        self._abandon.set()
                        self._stop.set()
            finally:
                busy[slot] = False
            if report.error is not None and self._abandon.is_set():
                release(
                    self._sqs, self.queue.url, messages
                )  # its worker was killed by the stop, not by the job
            self._function_log.bound()
            if on_batch is not None:
                with callback_lock:
                    on_batch(report)

    def _wait_until_done(
        self,
        busy: list[bool],
        *,
        started: float,
        until_empty: bool,
        for_seconds: float | None,
        quiet_seconds: float,
        cancel: threading.Event | None,
        waiting: WaitReport,
    ) -> None:
        """Return when :meth:`drain` should stop: stopped, cancelled (at once), out of time, or the
        queue stayed empty; say now and then what an in-flight-only wait waits for."""
        quiet_since: float | None = None
        while not self._stop.is_set():
            if cancel is not None and cancel.is_set():
                self._abandon.set()
                return
            now = time.monotonic()
            if for_seconds is not None and now - started >= for_seconds:
                return
            if until_empty:
                counts = None if any(busy) else self.queue_counts()
                if counts is None or counts.total > 0:
                    quiet_since = None
                elif quiet_since is None:
                    quiet_since = now
                elif now - quiet_since >= quiet_seconds:
                    return
                waiting.update(counts, now)
            self._stop.wait(0.1)

    def _invoke(
        self, pool: WorkerPool, slot: int, messages: Sequence[MessageTypeDef], stats: DrainStats
    ) -> tuple[InvocationReport, bool]:
        """Run one batch; return its report and whether its error shows that no job can run."""
        event = build_event(messages, queue_arn=self.queue.arn, region=self.target.region)
        ids = tuple(m["MessageId"] for m in messages)
        groups = tuple(m.get("Attributes", {}).get("MessageGroupId", "") for m in messages)
        invocation = pool.invoke(slot, event)
        error = invocation.error
        failed: set[str]
        if error is not None:
            failed = set(ids)
        elif self.mapping.report_batch_item_failures:
            failed, error = parse_batch_response(invocation.result, ids)
        else:
            failed = set()
        deleted: list[str] = []
        delete_failures = 0
        if error is None:
            deleted, delete_failures = delete(
                self._sqs, self.queue.url, [m for m in messages if m["MessageId"] not in failed], self._log
            )
        outcomes = outcomes_of(invocation.outcomes)
        stats.add(
            outcomes=outcomes,
            batches=1,
            records=len(ids),
            deleted=len(deleted),
            delete_failures=delete_failures,
            failed_reported=len(failed) if error is None else 0,
            handler_errors=0 if error is None else 1,
            cold_starts=int(invocation.cold_start),
            timeouts=int(invocation.timed_out),
            aws_calls=invocation.aws_calls,
        )
        report = InvocationReport(
            slot=slot,
            message_ids=ids,
            groups=groups,
            deleted=tuple(deleted),
            failed=tuple(i for i in ids if i in failed),
            error=error,
            duration_seconds=invocation.duration_seconds,
            cold_start=invocation.cold_start,
            outcomes=outcomes,
        )
        return report, invocation.init_failed or invocation.error_type in NO_JOB_CAN_RUN_ERRORS
