"""Validation of :class:`~constructs_fifo.construct.OrderedAgentQueue` props by value, and warnings.

Three levels, as in the AWS CDK's own constructs:

- invalid input: every problem of one call is collected and raised together as one
  :class:`InvalidPropsError` (a :class:`ValueError`), each message naming the prop, its value, the
  rule and the fix;
- valid but risky input: a CDK warning with an id (``Annotations.add_warning_v2``);
- unresolved tokens (values only known at deploy time) are not validated.

A prop's limits, with the reason and an example stated in its error, are its row of the settings spec
(:data:`constructs_fifo.runtime.settings.SETTINGS`), which the runtime checks its environment
against too (read by :mod:`~constructs_fifo.construct.checks.limits`); the rules that join props
(``visibility_timeout >= timeout``, the least safe ``max_receive_count``) are written here. The
function's own props (code, environment, bundling, placement) are checked in
:mod:`~constructs_fifo.construct.checks.function_props`.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable, Mapping
from typing import Final

from aws_cdk import Annotations, Duration
from constructs import IConstruct

from constructs_fifo.construct.checks.limits import check_duration, check_number, fmt_seconds, resolved_number
from constructs_fifo.construct.errors import InvalidPropsError
from constructs_fifo.construct.settings import defaults, tokens
from constructs_fifo.runtime.constants import JobMode
from constructs_fifo.runtime.settings.spec import SECONDS, SETTINGS

__all__ = [
    "WARNING_RESERVED_CONCURRENCY_ONE",
    "WARNING_VISIBILITY_TIMEOUT",
    "check_props",
    "check_state_props",
    "duration",
    "number",
    "raise_if_any",
    "warn_risky",
]

#: Warning ids, for ``Validations.of(scope).acknowledge(id=...)``.
WARNING_VISIBILITY_TIMEOUT = "constructs-fifo:visibilityTimeoutBelowSixTimesTimeout"
WARNING_RESERVED_CONCURRENCY_ONE = "constructs-fifo:reservedConcurrencyOne"


def number(values: Mapping[str, object], name: str) -> int | float | None:
    """Prop ``name`` of ``values`` when it is a number (a token included); ``None`` when it is absent,
    ``None`` or of another type (its type problem is reported by the type check)."""
    value = values.get(name)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def duration(values: Mapping[str, object], name: str) -> Duration | None:
    """Prop ``name`` of ``values`` when it is a ``Duration``; ``None`` otherwise."""
    value = values.get(name)
    return value if isinstance(value, Duration) else None


def _container(values: Mapping[str, object]) -> bool:
    """Whether the jobs run in containers (``consumer`` given): the Lambda function's rules do not apply."""
    return values.get("consumer") is not None


def _mode(values: Mapping[str, object]) -> JobMode:
    value = values.get("mode")
    return JobMode(value) if isinstance(value, str) and value in set(JobMode) else JobMode.CLAIM


#: The props the least safe ``max_receive_count`` depends on.
_RECEIVE_COUNT_INPUTS = ("max_receive_count", "batch_size", "max_attempts")


def _check_receive_count(values: Mapping[str, object]) -> list[str]:
    """maxReceiveCount is the safety net: within SQS's range, and above what the runtime's retries cause."""
    count, batch_size, max_attempts = (number(values, name) for name in _RECEIVE_COUNT_INPUTS)
    if not resolved_number(count):
        return []
    if count > defaults.MAX_RECEIVE_COUNT_MAX:
        return [
            f"max_receive_count={count:g} is more than {defaults.MAX_RECEIVE_COUNT_MAX}, the SQS maximum for "
            f"a redrive policy; pass max_receive_count up to {defaults.MAX_RECEIVE_COUNT_MAX}, or omit it "
            "for the default."
        ]
    if not (resolved_number(batch_size) and resolved_number(max_attempts)):
        return []
    mode = _mode(values)
    least = defaults.min_receive_count_for(batch_size, max_attempts, mode)
    in_mode = " in state mode" if mode is JobMode.STATE else ""
    if least > defaults.MAX_RECEIVE_COUNT_MAX:
        most = defaults.max_attempts_for(batch_size, mode)
        return [
            f"max_attempts={max_attempts:g} is too many for batch_size={batch_size:g}"
            f"{in_mode}: the safety net would need max_receive_count >= {least}, above SQS's "
            f"{defaults.MAX_RECEIVE_COUNT_MAX}; "
            f"pass max_attempts <= {most}, or a smaller batch_size."
        ]
    if count >= least:
        return []
    return [
        f"max_receive_count={count:g} is less than {least}, the least safe value for "
        f"batch_size={batch_size:g} and max_attempts={max_attempts:g}{in_mode}: SQS counts a "
        "receive for every record returned while another job of its batch is retried or crashes the "
        f"function, so healthy jobs could reach the dead-letter queue for another job's failures; pass "
        f"max_receive_count >= {least} (the runtime decides when a job is dead; maxReceiveCount is only "
        "the safety net), or omit it for the default."
    ]


def _check_handler(handler: str) -> list[str]:
    if tokens.is_unresolved(handler):
        return []
    parts = handler.split(".")
    if len(parts) >= 2 and all(p.isidentifier() and not keyword.iskeyword(p) for p in parts):
        return []
    return [
        f"handler={handler!r} is not 'module.function': it must be a module path of Python "
        "identifiers (dots allowed) and a function name, separated by a dot; pass e.g. "
        "handler='agent_worker.handle' for handle() in agent_worker.py at the root of code."
    ]


def _check_visibility_covers_timeout(values: Mapping[str, object]) -> list[str]:
    if _container(values):
        return []
    timeout_value, visibility_value = duration(values, "timeout"), duration(values, "visibility_timeout")
    timeout = tokens.seconds(timeout_value) if timeout_value is not None else None
    visibility = tokens.seconds(visibility_value) if visibility_value is not None else None
    if timeout is None or visibility is None or visibility >= timeout:
        return []
    return [
        f"visibility_timeout={fmt_seconds(visibility)} is shorter than timeout={fmt_seconds(timeout)}: "
        "Lambda rejects an SQS event source whose function timeout exceeds the queue's visibility "
        f"timeout; pass visibility_timeout >= timeout (AWS recommends 6 x timeout = "
        f"{fmt_seconds(timeout * defaults.VISIBILITY_TIMEOUT_FACTOR)}), or omit it for that default."
    ]


def _check_reserved_covers_maximum(values: Mapping[str, object]) -> list[str]:
    reserved, maximum = number(values, "reserved_concurrency"), number(values, "max_concurrency")
    if resolved_number(reserved) and resolved_number(maximum) and reserved >= 1 and reserved < maximum:
        return [
            f"reserved_concurrency={reserved:g} is less than max_concurrency={maximum:g}: the event "
            "source would be throttled, and throttled receives push messages toward the dead-letter "
            f"queue; pass reserved_concurrency >= {maximum:g} or lower max_concurrency."
        ]
    return []


def _check_not_above(values: Mapping[str, object], name: str) -> list[str]:
    """A prop whose row says it may not pass another (``not_above``), against that prop's value."""
    row = SETTINGS[name]
    if row.not_above is None or (SETTINGS[row.not_above].lambda_only and _container(values)):
        return []
    other = row.not_above
    if row.unit == SECONDS:
        given, bound = duration(values, name), duration(values, other)
        value = tokens.seconds(given) if given is not None else None
        limit = tokens.seconds(bound) if bound is not None else None
        shown, limit_shown = (fmt_seconds(v) if v is not None else "" for v in (value, limit))
    else:
        value, limit = number(values, name), number(values, other)
        shown, limit_shown = (f"{v:g}" if v is not None else "" for v in (value, limit))
    if value is None or limit is None or not (resolved_number(value) and resolved_number(limit)):
        return []
    if value <= limit:
        return []
    return [
        f"{name}={shown} is more than {other}={limit_shown}: {row.not_above_why}; pass {name} <= {other}, "
        f"raise {other}, or omit {name} for the default."
    ]


#: The rules that join a prop to others, each checked right after the prop's own limits.
_JOINT_RULES: Final[Mapping[str, Callable[[Mapping[str, object]], list[str]]]] = {
    "max_attempts": _check_receive_count,
    "timeout": _check_visibility_covers_timeout,
    "max_concurrency": _check_reserved_covers_maximum,
}
#: Props whose limits a rule of their own checks (the least safe receive count; the number of layers
#: and security groups, in ``function_props``).
_OWN_LIMITS: Final = frozenset({"max_receive_count", "layers", "security_groups"})


def check_props(values: Mapping[str, object]) -> list[str]:
    """Collect every problem of the props ``values`` by value: each against its row's limits, then the
    rules joining props.

    Parameters
    ----------
    values
        The props by name, each of its row's type (a prop of another type is absent: its type is its
        problem). Unresolved tokens are skipped; so are state-mode props outside state mode
        (:func:`check_state_props` says so), and the container workers' props with the Lambda
        consumer (``checks.containers`` says so).

    Returns
    -------
    list of str
        One message per problem, each naming the prop, its value, the rule and the fix; empty when
        every prop is valid.
    """
    problems: list[str] = []
    handler = values.get("handler")
    if isinstance(handler, str):
        problems += _check_handler(handler)
    state, container = _mode(values) is JobMode.STATE, _container(values)
    for name in values:
        row = SETTINGS[name]
        if (row.state_only and not state) or (row.container_only and not container) or name in _OWN_LIMITS:
            continue
        if row.unit == SECONDS:
            given = duration(values, name)
            problems += check_duration(row, given) if given is not None else []
        elif row.low is not None or row.high is not None:
            problems += check_number(row, number(values, name))
        problems += _check_not_above(values, name)
        problems += _JOINT_RULES[name](values) if name in _JOINT_RULES else []
    return problems


def check_state_props(values: Mapping[str, object]) -> list[str]:
    """State mode's props (their rows say ``state_only``) are refused, with the fix, in another mode."""
    mode = _mode(values)
    if mode is JobMode.STATE:
        return []
    return [
        f"{name} is a state-mode setting and does nothing in mode={mode.value}: remove {name}, or pass "
        "mode=JobMode.STATE if the job function is a transition apply(job, state) -> state."
        for name, value in values.items()
        if SETTINGS[name].state_only and value is not None
    ]


def raise_if_any(problems: list[str]) -> None:
    """Raise one :class:`InvalidPropsError` listing ``problems``, if there are any."""
    if problems:
        raise InvalidPropsError(problems)


def warn_risky(scope: IConstruct, values: Mapping[str, object]) -> None:
    """Add a CDK warning for each valid but risky setting.

    Parameters
    ----------
    scope
        The construct the warning is attached to.
    values
        The validated props by name.
    """
    timeout_value, visibility_value = duration(values, "timeout"), duration(values, "visibility_timeout")
    timeout = tokens.seconds(timeout_value) if timeout_value is not None else None
    visibility = tokens.seconds(visibility_value) if visibility_value is not None else None
    factor = defaults.VISIBILITY_TIMEOUT_FACTOR
    on_lambda = not _container(values)
    if (
        on_lambda
        and timeout is not None
        and visibility is not None
        and timeout <= visibility < factor * timeout
    ):
        Annotations.of(scope).add_warning_v2(
            WARNING_VISIBILITY_TIMEOUT,
            f"visibility_timeout={fmt_seconds(visibility)} is less than {factor} x timeout ({factor} x "
            f"{fmt_seconds(timeout)} = {fmt_seconds(factor * timeout)}): AWS recommends at least {factor} x "
            "the function timeout so that retries and throttling do not redeliver a message still being "
            "processed; omit visibility_timeout for that default.",
        )
    reserved = number(values, "reserved_concurrency")
    if resolved_number(reserved) and reserved == 1:
        Annotations.of(scope).add_warning_v2(
            WARNING_RESERVED_CONCURRENCY_ONE,
            "reserved_concurrency=1: the event source mapping cannot be capped below "
            f"MaximumConcurrency={defaults.MAX_CONCURRENCY_MIN}, so with two or more active groups Lambda "
            "throttles, and throttled batches count towards max_receive_count; use 2 or more unless "
            "one job at a time across all groups is what you want.",
        )
