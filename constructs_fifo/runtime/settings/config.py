"""Runtime configuration: read from the environment the construct writes, explicit arguments first.

Each setting's variable, default and limits are its row of the settings spec
(:data:`constructs_fifo.runtime.settings.SETTINGS`), the rows the construct validates its props
against and writes the environment from: a value the construct accepts is one the runtime accepts.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar

from constructs_fifo.runtime.constants import (
    DEFAULT_BACKOFF_BASE_SECONDS,
    DEFAULT_CLAIM_TTL_SECONDS,
    DEFAULT_GAP_POLICY,
    DEFAULT_GAP_TIMEOUT_SECONDS,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_METRICS_NAMESPACE,
    DEFAULT_MODE,
    DEFAULT_ON_DEAD_JOB,
    DEFAULT_OUTCOME_LINES,
    DEFAULT_REORDER_LIMIT,
    ENV_CLAIM_TABLE,
    ENV_DEAD_LETTER_QUEUE_URL,
    ENV_GROUP_TABLE,
    ENV_METRICS_NAMESPACE,
    ENV_QUEUE_URL,
    ENV_USER_HANDLER,
    DeadJobPolicy,
    JobMode,
    OutcomeLines,
)
from constructs_fifo.runtime.exceptions import ConfigurationError
from constructs_fifo.runtime.settings.spec import MAX_VISIBILITY_TIMEOUT_SECONDS, SETTINGS, Setting

__all__ = ["MAX_VISIBILITY_TIMEOUT_SECONDS", "RuntimeConfig"]

_E = TypeVar("_E", bound=enum.StrEnum)


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
    dead_letter_queue_url : str
        URL of the FIFO dead-letter queue the runtime sends dead jobs to.
    max_attempts : int
        Runs of one job before it is dead (1 to 100).
    on_dead_job : DeadJobPolicy
        PARK (the group stops at its dead job) or CONTINUE (the dead job is dead-lettered).
    group_table : str or None
        The group table (parked groups; state mode's states); required by PARK and by STATE.
    mode : JobMode
        CLAIM (a job is a side effect, claimed first) or STATE (a job is a transition of its group's
        state). In STATE mode ``claim_table`` is not used and may be empty.
    reorder_limit : int
        State mode: jobs a group's reorder buffer holds at most.
    gap_timeout_seconds : int
        State mode: how long a sequence gap may stay open before ``gap_policy`` applies.
    gap_policy : str
        State mode: ``WAIT`` (keep waiting, alarm) or ``SKIP_GAP`` (give the missing seqs up, record them).
    outcome_lines : OutcomeLines
        ``JOB`` (a log line per outcome) or ``BATCH`` (successes summarized in the batch's line).

    Examples
    --------
    >>> cfg = RuntimeConfig.from_env(
    ...     {"CONSTRUCTS_FIFO_CLAIM_TABLE": "claims", "CONSTRUCTS_FIFO_QUEUE_URL": "https://q",
    ...      "CONSTRUCTS_FIFO_DEAD_LETTER_QUEUE_URL": "https://dlq", "CONSTRUCTS_FIFO_GROUP_TABLE": "groups"},
    ...     backoff_base_seconds=1,
    ... )
    >>> (cfg.claim_table, cfg.backoff_base_seconds, cfg.max_attempts, cfg.on_dead_job.value)
    ('claims', 1, 5, 'PARK')
    """

    claim_table: str
    queue_url: str
    user_handler: str | None = None
    visibility_timeout_seconds: int = MAX_VISIBILITY_TIMEOUT_SECONDS
    backoff_base_seconds: int = DEFAULT_BACKOFF_BASE_SECONDS
    claim_ttl_seconds: int = DEFAULT_CLAIM_TTL_SECONDS
    metrics_namespace: str = DEFAULT_METRICS_NAMESPACE
    dead_letter_queue_url: str = ""
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    on_dead_job: DeadJobPolicy = DEFAULT_ON_DEAD_JOB
    group_table: str | None = None
    mode: JobMode = DEFAULT_MODE
    reorder_limit: int = DEFAULT_REORDER_LIMIT
    gap_timeout_seconds: int = DEFAULT_GAP_TIMEOUT_SECONDS
    gap_policy: str = DEFAULT_GAP_POLICY
    outcome_lines: OutcomeLines = DEFAULT_OUTCOME_LINES

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
        dead_letter_queue_url: str | None = None,
        max_attempts: int | None = None,
        on_dead_job: DeadJobPolicy | str | None = None,
        group_table: str | None = None,
        mode: JobMode | str | None = None,
        reorder_limit: int | None = None,
        gap_timeout_seconds: int | None = None,
        gap_policy: str | None = None,
        outcome_lines: OutcomeLines | str | None = None,
    ) -> RuntimeConfig:
        """Build the configuration; an explicit argument beats its environment variable.

        Parameters
        ----------
        environ : Mapping[str, str], optional
            The environment to read (default ``os.environ``).
        claim_table, queue_url, user_handler, visibility_timeout_seconds, backoff_base_seconds, \
claim_ttl_seconds, metrics_namespace, dead_letter_queue_url, max_attempts, on_dead_job, group_table, \
mode, reorder_limit, gap_timeout_seconds, gap_policy, outcome_lines
            Explicit values; ``None`` means "read the environment, then the default".

        Raises
        ------
        ConfigurationError
            A required variable is missing, or a number is not a whole number in its range. The
            message names the variable, its value and the fix.
        """
        env = os.environ if environ is None else environ
        policy = _choice(on_dead_job, env, SETTINGS["on_dead_job"], DeadJobPolicy)
        job_mode = _choice(mode, env, SETTINGS["mode"], JobMode)
        needs_group_table = policy is DeadJobPolicy.PARK or job_mode is JobMode.STATE
        return cls(
            claim_table=(
                _required(claim_table, env, ENV_CLAIM_TABLE, "the claim table's name")
                if job_mode is JobMode.CLAIM
                else (claim_table or env.get(ENV_CLAIM_TABLE) or "")
            ),
            queue_url=_required(queue_url, env, ENV_QUEUE_URL, "the FIFO queue's URL"),
            user_handler=user_handler if user_handler is not None else (env.get(ENV_USER_HANDLER) or None),
            visibility_timeout_seconds=_integer(
                visibility_timeout_seconds, env, SETTINGS["visibility_timeout"]
            ),
            backoff_base_seconds=_integer(backoff_base_seconds, env, SETTINGS["backoff_base"]),
            claim_ttl_seconds=_integer(claim_ttl_seconds, env, SETTINGS["claim_ttl"]),
            metrics_namespace=metrics_namespace
            if metrics_namespace is not None
            else (env.get(ENV_METRICS_NAMESPACE) or DEFAULT_METRICS_NAMESPACE),
            dead_letter_queue_url=_required(
                dead_letter_queue_url, env, ENV_DEAD_LETTER_QUEUE_URL, "the FIFO dead-letter queue's URL"
            ),
            max_attempts=_integer(max_attempts, env, SETTINGS["max_attempts"]),
            on_dead_job=policy,
            group_table=(
                _required(
                    group_table,
                    env,
                    ENV_GROUP_TABLE,
                    "the group table's name (PARK keeps jobs there, state mode keeps states there)",
                )
                if needs_group_table
                else (group_table or env.get(ENV_GROUP_TABLE) or None)
            ),
            mode=job_mode,
            reorder_limit=_integer(reorder_limit, env, SETTINGS["reorder_limit"]),
            gap_timeout_seconds=_integer(gap_timeout_seconds, env, SETTINGS["gap_timeout"]),
            gap_policy=_gap_policy(gap_policy, env, SETTINGS["gap_policy"]),
            outcome_lines=_choice(outcome_lines, env, SETTINGS["outcome_lines"], OutcomeLines),
        )


def _choice(explicit: _E | str | None, env: Mapping[str, str], row: Setting, kind: type[_E]) -> _E:
    """An enum setting: the explicit value, else the variable, else the default (case-insensitive)."""
    assert row.env is not None, row
    raw = explicit if explicit is not None else (env.get(row.env) or str(row.default))
    try:
        return kind(str(raw).strip().upper())
    except ValueError:
        choices = " or ".join(member.value for member in kind)
        raise ConfigurationError(
            f"{row.env}={raw!r}: must be {choices}; set OrderedAgentQueue's {row.prop} prop or "
            f"unset it to use the default {row.default}"
        ) from None


def _gap_policy(explicit: str | None, env: Mapping[str, str], row: Setting) -> str:
    assert row.env is not None, row
    raw = explicit if explicit is not None else (env.get(row.env) or str(row.default))
    value = str(raw).strip().upper()
    if value not in row.choices:
        raise ConfigurationError(
            f"{row.env}={raw!r}: must be {' or '.join(row.choices)}; set OrderedAgentQueue's "
            f"{row.prop} prop or unset it to use the default {row.default}"
        )
    return value


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


def _integer(explicit: int | None, env: Mapping[str, str], row: Setting) -> int:
    """A whole-number setting: the explicit value, else the variable, else the row's default."""
    assert row.env is not None and isinstance(row.default, int), row
    source = "argument" if explicit is not None else "variable"
    raw: object = explicit if explicit is not None else env.get(row.env)
    if raw is None or raw == "":
        return row.default
    try:
        value = None if isinstance(raw, bool) else int(str(raw).strip())
    except ValueError:
        value = None
    if value is None or row.violation(value) is not None:
        raise ConfigurationError(
            f"{row.env}={raw!r} ({source}): must be {row.rule_text()} of {row.unit}; fix the value or "
            f"unset it to use the default {row.default}"
        )
    return value
