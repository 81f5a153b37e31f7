"""Runtime configuration: read from the environment the construct writes, explicit arguments first.

Each field of :class:`RuntimeConfig` is the runtime's side of one row of the settings spec
(:data:`constructs_fifo.runtime.settings.SETTINGS`, the row whose ``field`` is the field's name): its
variable, default and limits are the row's, the rows the construct validates its props against and
writes the environment from, so a value the construct accepts is one the runtime accepts. The field's
type says how its variable is read (a whole number within the row's limits, one of an enum's values, a
string); :meth:`RuntimeConfig.from_env` reads every field so, with no list of its own.
"""

from __future__ import annotations

import enum
import os
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from constructs_fifo.runtime.exceptions import ConfigurationError
from constructs_fifo.runtime.settings.choices import DeadJobPolicy, GapPolicy, JobMode, OutcomeLines
from constructs_fifo.runtime.settings.spec import MAX_VISIBILITY_TIMEOUT_SECONDS, SETTINGS, Setting

__all__ = ["MAX_VISIBILITY_TIMEOUT_SECONDS", "RuntimeConfig"]

_E = TypeVar("_E", bound=enum.StrEnum)
_T = TypeVar("_T")

#: The row of each runtime field (rows that carry a variable; the others are construct-only or the
#: processors' own).
_ROWS: dict[str, Setting] = {
    row.field: row for row in SETTINGS.values() if row.field is not None and row.env is not None
}


def _default(field: str, kind: type[_T]) -> _T:
    """A field's default: its row's, which must be a ``kind``."""
    value = _ROWS[field].default
    assert isinstance(value, kind), (field, value)
    return value


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
    gap_policy : GapPolicy
        State mode: ``WAIT`` (keep waiting, alarm) or ``SKIP_GAP`` (give the missing seqs up, record them).
    outcome_lines : OutcomeLines
        ``JOB`` (a log line per outcome) or ``BATCH`` (successes summarized in the batch's line).
    max_job_duration_seconds : int or None
        The bound of one run of a job; ``None``: the consumer's own (the Lambda function's timeout).
    slots : int
        The container worker: batches one task runs at once.
    heartbeat_interval_seconds : int
        The container worker: how often a running job's visibility and claim are renewed.
    batch_size : int
        The container worker: records per receive (the Lambda function's batch is its mapping's).
    pace : str or None
        The pace limit as the construct wrote it (JSON, read by
        :meth:`~constructs_fifo.runtime.steering.pace.PaceLimit.from_env`); ``None``: not paced.

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
    visibility_timeout_seconds: int = _default("visibility_timeout_seconds", int)
    backoff_base_seconds: int = _default("backoff_base_seconds", int)
    claim_ttl_seconds: int = _default("claim_ttl_seconds", int)
    metrics_namespace: str = _default("metrics_namespace", str)
    dead_letter_queue_url: str = ""
    max_attempts: int = _default("max_attempts", int)
    on_dead_job: DeadJobPolicy = _default("on_dead_job", DeadJobPolicy)  # noqa: RUF009 - a member: immutable
    group_table: str | None = None
    mode: JobMode = _default("mode", JobMode)  # noqa: RUF009 - a member: immutable
    reorder_limit: int = _default("reorder_limit", int)
    gap_timeout_seconds: int = _default("gap_timeout_seconds", int)
    gap_policy: GapPolicy = _default("gap_policy", GapPolicy)  # noqa: RUF009 - a member: immutable
    outcome_lines: OutcomeLines = _default("outcome_lines", OutcomeLines)  # noqa: RUF009 - a member: immutable
    max_job_duration_seconds: int | None = None
    slots: int = _default("slots", int)
    heartbeat_interval_seconds: int = _default("heartbeat_interval_seconds", int)
    batch_size: int = _default("batch_size", int)
    pace: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **explicit: object) -> RuntimeConfig:
        """Build the configuration; an explicit argument beats its environment variable.

        Parameters
        ----------
        environ : Mapping[str, str], optional
            The environment to read (default ``os.environ``).
        **explicit
            A value per field (``backoff_base_seconds=7``); ``None`` or absent means "read the
            environment, then the row's default".

        Raises
        ------
        ConfigurationError
            A required variable is missing, or a number is not a whole number in its range, or a
            choice is not one of its values. The message names the variable, its value and the fix.
        TypeError
            ``explicit`` names no field.
        """
        unknown = sorted(set(explicit) - set(_KINDS))
        if unknown:
            raise TypeError(
                f"RuntimeConfig.from_env() got {', '.join(unknown)}: not a field of RuntimeConfig; pass "
                f"one of {', '.join(_KINDS)}"
            )
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        for name, (kind, optional) in _KINDS.items():
            row, given = _ROWS[name], explicit.get(name)
            if kind is int:
                values[name] = _integer(given, env, row, optional=optional)
            elif issubclass(kind, enum.StrEnum):
                values[name] = _choice(given, env, row, kind)
            elif row.default is not None:
                values[name] = given if given is not None else (env.get(_variable(row)) or row.default)
        mode, policy = values["mode"], values["on_dead_job"]
        assert isinstance(mode, JobMode) and isinstance(policy, DeadJobPolicy)
        for name, needed in _NEEDED.items():
            given, row = explicit.get(name), _ROWS[name]
            if needed(mode, policy):
                values[name] = _required(given, env, row)
            else:
                values[name] = given or env.get(_variable(row)) or (None if _KINDS[name][1] else "")
        return cls(**values)  # type: ignore[arg-type]  # each value read as its field's type above


#: Each field's type without ``None``, and whether ``None`` is allowed: how its variable is read.
_KINDS: dict[str, tuple[type, bool]] = {}
for _field, _hint in typing.get_type_hints(RuntimeConfig).items():
    _members = set(typing.get_args(_hint)) if isinstance(_hint, types.UnionType) else {_hint}
    _KINDS[_field] = (next(iter(_members - {type(None)})), type(None) in _members)

#: The fields whose row has no default, and when each must be set: the queues always, the claim table
#: in claim mode, the group table under PARK or in state mode, the handler never (a processor built in
#: code takes a callable), the pace never (no pace: not paced).
_NEEDED: dict[str, Callable[[JobMode, DeadJobPolicy], bool]] = {
    "claim_table": lambda mode, _policy: mode is JobMode.CLAIM,
    "queue_url": lambda _mode, _policy: True,
    "user_handler": lambda _mode, _policy: False,
    "dead_letter_queue_url": lambda _mode, _policy: True,
    "group_table": lambda mode, policy: policy is DeadJobPolicy.PARK or mode is JobMode.STATE,
    "pace": lambda _mode, _policy: False,
}
assert set(_NEEDED) == {name for name, row in _ROWS.items() if row.default is None and _KINDS[name][0] is str}


def _variable(row: Setting) -> str:
    assert row.env is not None, row
    return row.env


def _choice(explicit: object, env: Mapping[str, str], row: Setting, kind: type[_E]) -> _E:
    """An enum setting: the explicit value, else the variable, else the default (case-insensitive)."""
    raw = explicit if explicit is not None else (env.get(_variable(row)) or str(row.default))
    try:
        return kind(str(raw).strip().upper())
    except ValueError:
        choices = " or ".join(member.value for member in kind)
        raise ConfigurationError(
            f"{row.env}={raw!r}: must be {choices}; set OrderedAgentQueue's {row.prop} prop or "
            f"unset it to use the default {row.default}"
        ) from None


def _required(explicit: object, env: Mapping[str, str], row: Setting) -> str:
    if explicit:
        return str(explicit)
    name = _variable(row)
    value = env.get(name, "")
    if not value.strip():
        raise ConfigurationError(
            f"{name}={value!r}: {row.doc} is required and is empty or unset; set {name} in the "
            "function's environment (OrderedAgentQueue does) or pass it to RuntimeConfig.from_env()"
        )
    return value.strip()


def _integer(explicit: object, env: Mapping[str, str], row: Setting, *, optional: bool) -> int | None:
    """A whole-number setting: the explicit value, else the variable, else the row's default (``None``
    only for a field that allows it)."""
    assert isinstance(row.default, int) or (optional and row.default is None), row
    source = "argument" if explicit is not None else "variable"
    raw: object = explicit if explicit is not None else env.get(_variable(row))
    if raw is None or raw == "":
        return row.default
    try:
        value = None if isinstance(raw, bool) else int(str(raw).strip())
    except ValueError:
        value = None
    if value is None or row.violation(value) is not None:
        unset = f"the default {row.default}" if row.default is not None else row.default_doc
        raise ConfigurationError(
            f"{row.env}={raw!r} ({source}): must be {row.rule_text()} of {row.unit}; fix the value or "
            f"unset it to use {unset}"
        )
    return value
