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
from dataclasses import dataclass

from aws_cdk import Annotations, Duration
from constructs import IConstruct

from constructs_fifo.construct.checks.limits import check_duration, check_number, fmt_seconds, resolved_number
from constructs_fifo.construct.errors import InvalidPropsError
from constructs_fifo.construct.settings import defaults, tokens
from constructs_fifo.runtime.constants import JobMode
from constructs_fifo.runtime.settings.spec import SETTINGS

__all__ = [
    "WARNING_RESERVED_CONCURRENCY_ONE",
    "WARNING_VISIBILITY_TIMEOUT",
    "Props",
    "check_outcome_lines",
    "check_props",
    "check_state_props",
    "raise_if_any",
    "warn_risky",
]

#: Warning ids, for ``Validations.of(scope).acknowledge(id=...)``.
WARNING_VISIBILITY_TIMEOUT = "constructs-fifo:visibilityTimeoutBelowSixTimesTimeout"
WARNING_RESERVED_CONCURRENCY_ONE = "constructs-fifo:reservedConcurrencyOne"


@dataclass(frozen=True)
class Props:
    """The props that are checked by value (the function's own props are checked separately)."""

    handler: str
    batch_size: int | float
    max_attempts: int | float
    max_receive_count: int | float
    timeout: Duration
    visibility_timeout: Duration
    reserved_concurrency: int | float | None
    max_concurrency: int | float | None
    claim_ttl: Duration
    age_alarm_threshold: Duration
    memory_size: int | float
    backoff_base: Duration
    mode: JobMode = JobMode.CLAIM


def _check_receive_count(props: Props) -> list[str]:
    """maxReceiveCount is the safety net: within SQS's range, and above what the runtime's retries cause."""
    count = props.max_receive_count
    if not resolved_number(count):
        return []
    if count > defaults.MAX_RECEIVE_COUNT_MAX:
        return [
            f"max_receive_count={count:g} is more than {defaults.MAX_RECEIVE_COUNT_MAX}, the SQS maximum for "
            f"a redrive policy; pass max_receive_count up to {defaults.MAX_RECEIVE_COUNT_MAX}, or omit it "
            "for the default."
        ]
    if not (resolved_number(props.batch_size) and resolved_number(props.max_attempts)):
        return []
    least = defaults.min_receive_count_for(props.batch_size, props.max_attempts, props.mode)
    in_mode = " in state mode" if props.mode is JobMode.STATE else ""
    if least > defaults.MAX_RECEIVE_COUNT_MAX:
        most = defaults.max_attempts_for(props.batch_size, props.mode)
        return [
            f"max_attempts={props.max_attempts:g} is too many for batch_size={props.batch_size:g}"
            f"{in_mode}: the safety net would need max_receive_count >= {least}, above SQS's "
            f"{defaults.MAX_RECEIVE_COUNT_MAX}; "
            f"pass max_attempts <= {most}, or a smaller batch_size."
        ]
    if count >= least:
        return []
    return [
        f"max_receive_count={count:g} is less than {least}, the least safe value for "
        f"batch_size={props.batch_size:g} and max_attempts={props.max_attempts:g}{in_mode}: SQS counts a "
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


def check_props(props: Props) -> list[str]:
    """Collect every problem of ``props``.

    Parameters
    ----------
    props
        The values to check. Unresolved tokens are skipped.

    Returns
    -------
    list of str
        One message per problem, each naming the prop, its value, the rule and the fix; empty when
        every prop is valid.
    """
    problems: list[str] = []
    problems += _check_handler(props.handler)
    problems += check_number(SETTINGS["batch_size"], props.batch_size)
    problems += check_number(SETTINGS["max_attempts"], props.max_attempts)
    problems += _check_receive_count(props)
    problems += check_duration(SETTINGS["timeout"], props.timeout)
    timeout = tokens.seconds(props.timeout)
    visibility = tokens.seconds(props.visibility_timeout)
    if timeout is not None and visibility is not None and visibility < timeout:
        problems.append(
            f"visibility_timeout={fmt_seconds(visibility)} is shorter than timeout={fmt_seconds(timeout)}: "
            "Lambda rejects an SQS event source whose function timeout exceeds the queue's visibility "
            f"timeout; pass visibility_timeout >= timeout (AWS recommends 6 x timeout = "
            f"{fmt_seconds(timeout * defaults.VISIBILITY_TIMEOUT_FACTOR)}), or omit it for that default."
        )
    problems += check_duration(SETTINGS["visibility_timeout"], props.visibility_timeout)
    reserved, maximum = props.reserved_concurrency, props.max_concurrency
    problems += check_number(SETTINGS["reserved_concurrency"], reserved)
    problems += check_number(SETTINGS["max_concurrency"], maximum)
    if resolved_number(reserved) and resolved_number(maximum) and reserved >= 1 and reserved < maximum:
        problems.append(
            f"reserved_concurrency={reserved:g} is less than max_concurrency={maximum:g}: the event "
            "source would be throttled, and throttled receives push messages toward the dead-letter "
            f"queue; pass reserved_concurrency >= {maximum:g} or lower max_concurrency."
        )
    problems += check_duration(SETTINGS["claim_ttl"], props.claim_ttl)
    problems += check_duration(SETTINGS["age_alarm_threshold"], props.age_alarm_threshold)
    problems += check_duration(SETTINGS["backoff_base"], props.backoff_base)
    problems += check_number(SETTINGS["memory_size"], props.memory_size)
    return problems


def check_state_props(
    mode: JobMode,
    *,
    reorder_limit: int | float | None,
    gap_timeout: Duration | None,
    gap_policy: object | None,
) -> list[str]:
    """State mode's props: only in state mode, each in its range."""
    given = {
        name: value
        for name, value in (
            ("reorder_limit", reorder_limit),
            ("gap_timeout", gap_timeout),
            ("gap_policy", gap_policy),
        )
        if value is not None
    }
    if mode is not JobMode.STATE:
        return [
            f"{name} is a state-mode setting and does nothing in mode={mode.value}: remove {name}, or pass "
            "mode=JobMode.STATE if the job function is a transition apply(job, state) -> state."
            for name in given
        ]
    problems = check_number(SETTINGS["reorder_limit"], reorder_limit)
    if gap_timeout is not None:
        problems += check_duration(SETTINGS["gap_timeout"], gap_timeout)
    return problems


def check_outcome_lines(outcome_lines: object) -> list[str]:
    """``outcome_lines`` is one of the row's choices (an :class:`OutcomeLines` or its value)."""
    row = SETTINGS["outcome_lines"]
    if str(outcome_lines) in row.choices:
        return []
    return [
        f"outcome_lines={outcome_lines!r} is not a log level: pass OutcomeLines.JOB (a log line per job, the "
        "default) or OutcomeLines.BATCH (successes summarized once per batch; failures keep their lines)."
    ]


def raise_if_any(problems: list[str]) -> None:
    """Raise one :class:`InvalidPropsError` listing ``problems``, if there are any."""
    if problems:
        raise InvalidPropsError(problems)


def warn_risky(scope: IConstruct, props: Props) -> None:
    """Add a CDK warning for each valid but risky setting.

    Parameters
    ----------
    scope
        The construct the warning is attached to.
    props
        The validated props.
    """
    timeout = tokens.seconds(props.timeout)
    visibility = tokens.seconds(props.visibility_timeout)
    factor = defaults.VISIBILITY_TIMEOUT_FACTOR
    if timeout is not None and visibility is not None and timeout <= visibility < factor * timeout:
        Annotations.of(scope).add_warning_v2(
            WARNING_VISIBILITY_TIMEOUT,
            f"visibility_timeout={fmt_seconds(visibility)} is less than {factor} x timeout ({factor} x "
            f"{fmt_seconds(timeout)} = {fmt_seconds(factor * timeout)}): AWS recommends at least {factor} x "
            "the function timeout so that retries and throttling do not redeliver a message still being "
            "processed; omit visibility_timeout for that default.",
        )
    if resolved_number(props.reserved_concurrency) and props.reserved_concurrency == 1:
        Annotations.of(scope).add_warning_v2(
            WARNING_RESERVED_CONCURRENCY_ONE,
            "reserved_concurrency=1: the event source mapping cannot be capped below "
            f"MaximumConcurrency={defaults.MAX_CONCURRENCY_MIN}, so with two or more active groups Lambda "
            "throttles, and throttled batches count towards max_receive_count; use 2 or more unless "
            "one job at a time across all groups is what you want.",
        )
