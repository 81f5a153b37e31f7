"""Building a worker from the runtime's settings, and running it until SIGTERM.

:func:`worker_options` reads what the worker adds to
:class:`~constructs_fifo.runtime.settings.config.RuntimeConfig` (``slots``,
``heartbeat_interval_seconds``, ``batch_size``, from the settings spec's rows; a flag wins) and checks
them together; :func:`build_worker` gives each slot its own clients, logger, heartbeat and processor
(:func:`~constructs_fifo.runtime.entrypoint.build_processor`, the Lambda path's, with the heartbeat and,
in claim mode, a :class:`~constructs_fifo.worker.lent_claims.HeartbeatClaims` store); :func:`serve`
installs the SIGTERM handler and runs it.
"""

from __future__ import annotations

import math
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from constructs_fifo.runtime.aws_clients import runtime_client
from constructs_fifo.runtime.aws_limits import SQS_MAX_RECEIVE_MESSAGES
from constructs_fifo.runtime.constants import JobMode
from constructs_fifo.runtime.entrypoint import build_processor, load_user_handler
from constructs_fifo.runtime.observability import JobLogger, LineStream
from constructs_fifo.worker.errors import WorkerConfigError
from constructs_fifo.worker.heartbeat import WorkerHeartbeat
from constructs_fifo.worker.isolation import RunGate
from constructs_fifo.worker.lent_claims import HeartbeatClaims
from constructs_fifo.worker.loop import DEFAULT_GRACE_SECONDS, LONG_POLL_SECONDS, QueueTarget, Slot, Worker
from constructs_fifo.worker.protection import DEFAULT_PROTECTION_MINUTES, ENV_ECS_AGENT_URI, ScaleInProtection

if TYPE_CHECKING:  # pragma: no cover - typing only
    from collections.abc import Mapping

    from constructs_fifo.runtime.job import JobHandler
    from constructs_fifo.runtime.settings.config import RuntimeConfig

__all__ = ["WorkerOptions", "build_worker", "serve", "worker_options"]

#: Renewals per visibility timeout a refusal's fix suggests: a lost renewal or two still leaves time.
_RENEWALS_PER_TIMEOUT: Final = 3

ClientFactory = Callable[[str], Any]


@dataclass(frozen=True)
class WorkerOptions:
    """The worker's own settings (beyond the runtime's)."""

    slots: int
    heartbeat_interval_seconds: float
    grace_seconds: float
    batch_size: int
    wait_time_seconds: int = LONG_POLL_SECONDS


def worker_options(
    config: RuntimeConfig,
    *,
    slots: int | None = None,
    heartbeat_interval_seconds: float | None = None,
    grace_seconds: float | None = None,
    batch_size: int | None = None,
    wait_time_seconds: int = LONG_POLL_SECONDS,
) -> WorkerOptions:
    """The worker's settings: a given value, else the runtime's setting, else the default; checked.

    Raises
    ------
    WorkerConfigError
        Every problem at once, each naming the value, the rule and the fix.
    """
    visibility = config.visibility_timeout_seconds
    chosen_slots = slots if slots is not None else config.slots
    interval = (
        heartbeat_interval_seconds
        if heartbeat_interval_seconds is not None
        else config.heartbeat_interval_seconds
    )
    options = WorkerOptions(
        slots=chosen_slots,
        heartbeat_interval_seconds=interval,
        grace_seconds=DEFAULT_GRACE_SECONDS if grace_seconds is None else grace_seconds,
        batch_size=batch_size if batch_size is not None else config.batch_size,
        wait_time_seconds=wait_time_seconds,
    )
    problems = []
    if options.slots < 1:
        problems.append(f"slots={options.slots}: must be at least 1; give --slots 1 or more")
    if not 0 < options.heartbeat_interval_seconds < visibility:
        problems.append(
            f"heartbeat_interval={options.heartbeat_interval_seconds} s: must be above 0 and below the "
            f"visibility timeout ({visibility} s), or a record comes back before its renewal; give "
            f"--heartbeat-interval {max(1, visibility // _RENEWALS_PER_TIMEOUT)} or raise visibility_timeout"
        )
    if not 1 <= options.batch_size <= SQS_MAX_RECEIVE_MESSAGES:
        problems.append(
            f"batch_size={options.batch_size}: ReceiveMessage takes 1 to {SQS_MAX_RECEIVE_MESSAGES}; "
            f"give --batch-size in that range"
        )
    if options.grace_seconds < 0:
        problems.append(f"grace={options.grace_seconds} s: must be 0 or more; give --grace-seconds 110")
    if problems:
        raise WorkerConfigError("; ".join(problems))
    return options


def build_worker(
    config: RuntimeConfig,
    options: WorkerOptions,
    *,
    client_factory: ClientFactory | None = None,
    job_handler: JobHandler | None = None,
    environ: Mapping[str, str] | None = None,
    log_stream: LineStream | None = None,
) -> Worker:
    """A worker on ``config.queue_url`` with ``options.slots`` slots (each with its own parts).

    Parameters
    ----------
    client_factory : Callable[[str], client], optional
        Makes a boto3 client by service name; one per slot and service. Default
        :func:`~constructs_fifo.runtime.aws_clients.runtime_client`, as Lambda's entry point makes its own.
    job_handler : JobHandler, optional
        Default: the function ``config.user_handler`` names (imported once).
    environ : Mapping, optional
        Where ``ECS_AGENT_URI`` is read (default ``os.environ``).
    log_stream : LineStream, optional
        Where every log line goes, one ``write`` per line, from any slot's thread (default stdout, as in
        Lambda: the lines a container's log driver ships).
    """
    if client_factory is None:
        client_factory = runtime_client
    handler = job_handler if job_handler is not None else load_user_handler(config.user_handler or "")
    env = os.environ if environ is None else environ
    log = JobLogger(config.metrics_namespace, stream=log_stream, outcome_lines=config.outcome_lines)
    sqs = client_factory("sqs")
    attributes = sqs.get_queue_attributes(QueueUrl=config.queue_url, AttributeNames=["QueueArn"])
    arn = attributes["Attributes"]["QueueArn"]
    queue = QueueTarget(config.queue_url, arn, arn.split(":")[3])
    if config.mode is JobMode.STATE:
        log.event(
            {
                "level": "INFO",
                "event": "state_mode_worker",
                "note": "state mode's transitions are short and pure: the heartbeat renews visibility only; "
                "run a long effect as a claim-mode job that sends the transition as a job of this queue",
            }
        )
    # Several slots share one process: a crash is counted only against a job that ran alone.
    gate = RunGate() if options.slots > 1 else None
    slots = [
        _slot(config, options, queue, client_factory, handler, log_stream=log_stream, gate=gate)
        for _ in range(options.slots)
    ]
    minutes = (
        math.ceil(config.max_job_duration_seconds / 60) + 1
        if config.max_job_duration_seconds
        else DEFAULT_PROTECTION_MINUTES
    )
    protection = ScaleInProtection(env.get(ENV_ECS_AGENT_URI), on_event=log.event, expires_in_minutes=minutes)
    return Worker(
        queue,
        slots,
        batch_size=options.batch_size,
        logger=log,
        protection=protection,
        grace_seconds=options.grace_seconds,
        wait_time_seconds=options.wait_time_seconds,
    )


def _slot(
    config: RuntimeConfig,
    options: WorkerOptions,
    queue: QueueTarget,
    client_factory: ClientFactory,
    handler: JobHandler,
    *,
    log_stream: LineStream | None,
    gate: RunGate | None,
) -> Slot:
    sqs, dynamodb = client_factory("sqs"), client_factory("dynamodb")
    log = JobLogger(config.metrics_namespace, stream=log_stream, outcome_lines=config.outcome_lines)
    heartbeat = WorkerHeartbeat(
        sqs,
        config.queue_url,
        visibility_timeout_seconds=config.visibility_timeout_seconds,
        interval_seconds=options.heartbeat_interval_seconds,
        logger=log,
        queue_name=queue.arn.rsplit(":", 1)[-1],
        max_job_duration_seconds=config.max_job_duration_seconds,
        gate=gate,
    )
    claims = (
        None
        if config.mode is JobMode.STATE
        else HeartbeatClaims(
            config.claim_table,
            dynamodb,
            ttl_seconds=config.claim_ttl_seconds,
            max_attempts=config.max_attempts,
            heartbeat=heartbeat,
        )
    )
    processor: Any = build_processor(
        config,
        dynamodb_client=dynamodb,
        sqs_client=sqs,
        job_handler=handler,
        logger=log,
        heartbeat=heartbeat,
        claims=claims,
    )
    return Slot(processor.process_batch, heartbeat, sqs)


def serve(worker: Worker) -> int:
    """Run ``worker`` with SIGTERM (and Ctrl-C) stopping it gracefully; return its exit code.

    The worker owns the process here: its stop also stops the process's children (a job's).
    """
    worker.stop_children = True
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: worker.stop())
    return worker.run()
