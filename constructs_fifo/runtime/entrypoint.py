"""The Lambda handler the construct configures: ``constructs_fifo.runtime.entrypoint.handler``.

Importing it loads neither boto3, nor the user's code, nor either mode's modules. The first
invocation of a container reads :class:`~constructs_fifo.runtime.settings.config.RuntimeConfig` from the
environment, imports boto3, creates the clients, imports the configured mode's package
(:mod:`constructs_fifo.runtime.claim` or :mod:`constructs_fifo.runtime.state`: a container loads one
mode's modules, not both) and the user's ``module.function``, once; a wrong environment is raised
there as a :class:`~constructs_fifo.runtime.exceptions.ConfigurationError` naming the variable.
Every later invocation only processes its batch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Protocol

from constructs_fifo.runtime.backoff import VisibilityChanger
from constructs_fifo.runtime.batch_processor import NO_HEARTBEAT, Heartbeat
from constructs_fifo.runtime.constants import ENV_USER_HANDLER, DeadJobPolicy, JobMode
from constructs_fifo.runtime.dead_jobs.letters import DeadLetterSender
from constructs_fifo.runtime.dead_jobs.parking import ParkStore
from constructs_fifo.runtime.exceptions import ConfigurationError
from constructs_fifo.runtime.observability import JobLogger
from constructs_fifo.runtime.settings.config import RuntimeConfig

if TYPE_CHECKING:  # pragma: no cover - typing only
    from collections.abc import Mapping

    from constructs_fifo.runtime.job import JobHandler
    from constructs_fifo.runtime.types import BatchResponse

__all__ = ["BatchProcessor", "build_processor", "handler", "load_user_handler", "reset"]


class BatchProcessor(Protocol):
    """What the entry point runs: the processor of the configured mode (claim or state)."""

    def process(self, event: Mapping[str, Any], context: Any) -> BatchResponse:
        """Process one SQS FIFO batch; return the partial-batch response."""
        ...


_processor: BatchProcessor | None = None


def handler(event: dict[str, Any], context: Any) -> BatchResponse:
    """Lambda entry point: process one SQS FIFO batch with the user's job function.

    Raises
    ------
    ConfigurationError
        On the first invocation of a container whose environment is wrong (the message names the
        variable, the value and the fix). Job failures never raise; they are reported per record.
    """
    global _processor  # noqa: PLW0603 - one processor per container, built on first use
    if _processor is None:
        _processor = build_processor()
    return _processor.process(event, context)


def reset() -> None:
    """Forget the cached processor (tests, or a caller that changed the environment)."""
    global _processor  # noqa: PLW0603
    _processor = None


def build_processor(
    config: RuntimeConfig | None = None,
    *,
    dynamodb_client: Any = None,
    sqs_client: Any = None,
    job_handler: JobHandler | None = None,
    logger: JobLogger | None = None,
    heartbeat: Heartbeat = NO_HEARTBEAT,
    claims: Any = None,
) -> BatchProcessor:
    """Build the processor of the configured mode; every part can be injected.

    Claim mode builds an :class:`~constructs_fifo.runtime.claim.processor.OrderedBatchProcessor`
    (the job function is ``handle(job, context)``), state mode a
    :class:`~constructs_fifo.runtime.state.processor.StateBatchProcessor` (the job function is the
    transition ``apply(job, state) -> next_state``).

    Parameters
    ----------
    config : RuntimeConfig, optional
        Default: :meth:`RuntimeConfig.from_env`.
    dynamodb_client, sqs_client : boto3 clients, optional
        Default: :func:`~constructs_fifo.runtime.aws_clients.runtime_client`'s (boto3's default
        session, botocore's client-side parameter validation off: that module says why).
    job_handler : JobHandler, optional
        Default: the function named by ``config.user_handler`` (a transition in state mode).
    logger : JobLogger, optional
        Default: EMF lines on stdout in the configured namespace. Its capacity tally is attached to
        the DynamoDB client, so its batch lines report the units the batch consumed.
    heartbeat : Heartbeat, optional
        Keeps a batch's records in flight while it runs (a container worker's); Lambda needs none.
    claims : ClaimStore, optional
        Claim mode's claim table (a worker's, which lends its claims to its heartbeat); default one
        on ``config.claim_table``. Typed ``Any``: the kernel names no mode's classes.
    """
    cfg = config if config is not None else RuntimeConfig.from_env()
    user_fn = job_handler if job_handler is not None else load_user_handler(cfg.user_handler or "")
    if dynamodb_client is None or sqs_client is None:
        from constructs_fifo.runtime.aws_clients import runtime_client  # noqa: PLC0415 - loads boto3

        dynamodb_client = dynamodb_client or runtime_client("dynamodb")
        sqs_client = sqs_client or runtime_client("sqs")
    log = logger if logger is not None else JobLogger(cfg.metrics_namespace, outcome_lines=cfg.outcome_lines)
    log.capacity.attach(dynamodb_client)  # every DynamoDB call reports its units: no call added
    if cfg.mode is JobMode.STATE:
        return _state_processor(cfg, user_fn, dynamodb_client, sqs_client, log, heartbeat=heartbeat)
    return _claim_processor(
        cfg, user_fn, dynamodb_client, sqs_client, log, heartbeat=heartbeat, claims=claims
    )


def _claim_processor(
    cfg: RuntimeConfig,
    user_fn: JobHandler,
    dynamodb_client: Any,
    sqs_client: Any,
    log: JobLogger,
    *,
    heartbeat: Heartbeat,
    claims: Any,
) -> BatchProcessor:
    # Imported here: a container loads only the modules of its own mode at cold start.
    from constructs_fifo.runtime.claim.processor import OrderedBatchProcessor  # noqa: PLC0415
    from constructs_fifo.runtime.claim.store import ClaimStore  # noqa: PLC0415

    parking = (
        ParkStore(cfg.group_table, dynamodb_client)
        if cfg.on_dead_job is DeadJobPolicy.PARK and cfg.group_table
        else None
    )
    return OrderedBatchProcessor(
        settings=cfg,
        handler=user_fn,
        claims=claims
        or ClaimStore(
            cfg.claim_table, dynamodb_client, ttl_seconds=cfg.claim_ttl_seconds, max_attempts=cfg.max_attempts
        ),
        visibility=VisibilityChanger(sqs_client, cfg.queue_url, on_error=log.event),
        logger=log,
        dead_letters=DeadLetterSender(sqs_client, cfg.dead_letter_queue_url),
        parking=parking,
        sqs=sqs_client,
        heartbeat=heartbeat,
    )


def _state_processor(
    cfg: RuntimeConfig,
    transition: Any,
    dynamodb_client: Any,
    sqs_client: Any,
    log: JobLogger,
    *,
    heartbeat: Heartbeat,
) -> BatchProcessor:
    # Imported here: a container loads only the modules of its own mode at cold start.
    from constructs_fifo.runtime.state.processor import StateBatchProcessor  # noqa: PLC0415
    from constructs_fifo.runtime.state.storage.store import StateStore  # noqa: PLC0415

    table = cfg.group_table or ""
    return StateBatchProcessor(
        settings=cfg,
        transition=transition,
        states=StateStore(table, dynamodb_client),
        parking=ParkStore(table, dynamodb_client),
        visibility=VisibilityChanger(sqs_client, cfg.queue_url, on_error=log.event),
        logger=log,
        dead_letters=DeadLetterSender(sqs_client, cfg.dead_letter_queue_url),
        sqs=sqs_client,
        heartbeat=heartbeat,
    )


def load_user_handler(spec: str) -> JobHandler:
    """Import the user's job function from ``module.function`` (``pkg.module.function`` works too).

    Raises
    ------
    ConfigurationError
        ``spec`` is not ``module.function``, the module cannot be imported, or the attribute is
        missing or not callable.

    Examples
    --------
    >>> load_user_handler("json.dumps")({"a": 1})
    '{"a": 1}'
    """
    module_name, _, function_name = spec.strip().rpartition(".")
    if (
        not module_name
        or not function_name
        or not all(part.isidentifier() for part in (*module_name.split("."), function_name))
    ):
        raise ConfigurationError(
            f"{ENV_USER_HANDLER}={spec!r} is not 'module.function': name the module and the job "
            "function in it, e.g. 'agent_worker.handle' (set OrderedAgentQueue's handler prop)"
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigurationError(
            f"{ENV_USER_HANDLER}={spec!r}: module {module_name!r} cannot be imported ({exc}); ship it "
            "at the top level of the function's code asset or fix the handler name"
        ) from exc
    function = getattr(module, function_name, None)
    if function is None:
        raise ConfigurationError(
            f"{ENV_USER_HANDLER}={spec!r}: module {module_name!r} has no attribute {function_name!r}; "
            "define it as 'def handle(job, context)' or fix the handler name"
        )
    if not callable(function):
        raise ConfigurationError(
            f"{ENV_USER_HANDLER}={spec!r}: {module_name}.{function_name} is a "
            f"{type(function).__name__}, not a function; it must be callable as handle(job, context)"
        )
    user_fn: JobHandler = function
    return user_fn
