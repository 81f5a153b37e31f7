"""Runtime configuration: read from the environment the construct writes, explicit arguments first."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from constructs_fifo.runtime.constants import (
    DEFAULT_BACKOFF_BASE_SECONDS,
    DEFAULT_CLAIM_TTL_SECONDS,
    DEFAULT_METRICS_NAMESPACE,
    ENV_BACKOFF_BASE_SECONDS,
    ENV_CLAIM_TABLE,
    ENV_CLAIM_TTL_SECONDS,
    ENV_METRICS_NAMESPACE,
    ENV_QUEUE_URL,
    ENV_USER_HANDLER,
    ENV_VISIBILITY_TIMEOUT_SECONDS,
)
from constructs_fifo.runtime.exceptions import ConfigurationError

__all__ = ["MAX_VISIBILITY_TIMEOUT_SECONDS", "RuntimeConfig"]

#: SQS's upper bound of a visibility timeout (12 hours).
MAX_VISIBILITY_TIMEOUT_SECONDS = 43200


@dataclass(frozen=True)
class RuntimeConfig:
    """Settings of the runtime.

    Attributes
    ----------
    claim_table : str
        Name of the DynamoDB claim table.
    queue_url : str
        URL of the FIFO queue, for ChangeMessageVisibilityBatch.
    user_handler : str or None
        ``module.function`` of the user's job function (the entry point needs it; a processor
        built in code with a callable does not).
    visibility_timeout_seconds : int
        The queue's visibility timeout: the cap of the retry backoff.
    backoff_base_seconds : int
        First retry delay; doubles with every attempt.
    claim_ttl_seconds : int
        Lifetime of a claim item (its ``expiration``).
    metrics_namespace : str
        CloudWatch namespace of the EMF metrics.

    Examples
    --------
    >>> cfg = RuntimeConfig.from_env(
    ...     {"CONSTRUCTS_FIFO_CLAIM_TABLE": "claims", "CONSTRUCTS_FIFO_QUEUE_URL": "https://q"},
    ...     backoff_base_seconds=1,
    ... )
    >>> (cfg.claim_table, cfg.backoff_base_seconds, cfg.visibility_timeout_seconds)
    ('claims', 1, 43200)
    """

    claim_table: str
    queue_url: str
    user_handler: str | None = None
    visibility_timeout_seconds: int = MAX_VISIBILITY_TIMEOUT_SECONDS
    backoff_base_seconds: int = DEFAULT_BACKOFF_BASE_SECONDS
    claim_ttl_seconds: int = DEFAULT_CLAIM_TTL_SECONDS
    metrics_namespace: str = DEFAULT_METRICS_NAMESPACE

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        claim_table: str | None = None,
        queue_url: str | None = None,
        user_handler: str | None = None,
        visibility_timeout_seconds: int | None = None,
        backoff_base_seconds: int | None = None,
        claim_ttl_seconds: int | None = None,
        metrics_namespace: str | None = None,
    ) -> RuntimeConfig:
        """Build the configuration; an explicit argument beats its environment variable.

        Parameters
        ----------
        environ : Mapping[str, str], optional
            The environment to read (default ``os.environ``).
        claim_table, queue_url, user_handler, visibility_timeout_seconds, backoff_base_seconds, \
claim_ttl_seconds, metrics_namespace
            Explicit values; ``None`` means "read the environment, then the default".

        Raises
        ------
        ConfigurationError
            A required variable is missing, or a number is not a whole number in its range. The
            message names the variable, its value and the fix.
        """
        env = os.environ if environ is None else environ
        return cls(
            claim_table=_required(claim_table, env, ENV_CLAIM_TABLE, "the claim table's name"),
            queue_url=_required(queue_url, env, ENV_QUEUE_URL, "the FIFO queue's URL"),
            user_handler=user_handler if user_handler is not None else (env.get(ENV_USER_HANDLER) or None),
            visibility_timeout_seconds=_integer(
                visibility_timeout_seconds,
                env,
                ENV_VISIBILITY_TIMEOUT_SECONDS,
                MAX_VISIBILITY_TIMEOUT_SECONDS,
                low=0,
                high=MAX_VISIBILITY_TIMEOUT_SECONDS,
            ),
            backoff_base_seconds=_integer(
                backoff_base_seconds,
                env,
                ENV_BACKOFF_BASE_SECONDS,
                DEFAULT_BACKOFF_BASE_SECONDS,
                low=0,
                high=MAX_VISIBILITY_TIMEOUT_SECONDS,
            ),
            claim_ttl_seconds=_integer(
                claim_ttl_seconds, env, ENV_CLAIM_TTL_SECONDS, DEFAULT_CLAIM_TTL_SECONDS, low=1, high=None
            ),
            metrics_namespace=metrics_namespace
            if metrics_namespace is not None
            else (env.get(ENV_METRICS_NAMESPACE) or DEFAULT_METRICS_NAMESPACE),
        )


def _required(explicit: str | None, env: Mapping[str, str], name: str, what: str) -> str:
    if explicit:
        return explicit
    value = env.get(name, "")
    if not value.strip():
        raise ConfigurationError(
            f"{name}={value!r}: {what} is required and is empty or unset; set {name} in the "
            "function's environment (OrderedAgentQueue does) or pass it to RuntimeConfig.from_env()"
        )
    return value.strip()


def _integer(
    explicit: int | None,
    env: Mapping[str, str],
    name: str,
    default: int,
    *,
    low: int,
    high: int | None,
) -> int:
    source = "argument" if explicit is not None else "variable"
    raw: object = explicit if explicit is not None else env.get(name)
    if raw is None or raw == "":
        return default
    rule = f"a whole number >= {low}" if high is None else f"a whole number from {low} to {high}"
    try:
        value = int(str(raw).strip())
    except ValueError:
        value = None
    if value is None or value < low or (high is not None and value > high):
        raise ConfigurationError(
            f"{name}={raw!r} ({source}): must be {rule} of seconds; fix the value or unset it to use "
            f"the default {default}"
        )
    return value
