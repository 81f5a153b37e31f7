"""The check step of :class:`~constructs_fifo.construct.OrderedAgentQueue`: fill in the defaults that
depend on other props, validate everything at once, warn about risky values.

Defaults that depend on nothing are in the construct's signature (from
:mod:`constructs_fifo.construct.settings.defaults`); the rules are in
:mod:`constructs_fifo.construct.checks.validation` (by value) and
:mod:`constructs_fifo.construct.checks.function_props` (the function's own props).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aws_cdk import Duration
from aws_cdk import aws_lambda as lambda_
from constructs import IConstruct

from constructs_fifo.construct.checks.containers import check_consumer, warn_container
from constructs_fifo.construct.checks.function_props import (
    check_bundling,
    check_code,
    check_environment,
    check_function_props,
)
from constructs_fifo.construct.checks.handler import check_handler_found
from constructs_fifo.construct.checks.pace import check_pace
from constructs_fifo.construct.checks.pollers import check_provisioned_pollers
from constructs_fifo.construct.checks.prop_types import check_choice, check_type
from constructs_fifo.construct.checks.validation import (
    check_props,
    check_state_props,
    duration,
    number,
    raise_if_any,
    warn_risky,
)
from constructs_fifo.construct.resources.containers import ContainerConsumer
from constructs_fifo.construct.resources.function import RUNTIME_ENVIRONMENT
from constructs_fifo.construct.settings import defaults, tokens
from constructs_fifo.runtime.aws_limits import SQS_MAX_RECEIVE_COUNT
from constructs_fifo.runtime.settings.choices import JobMode
from constructs_fifo.runtime.settings.spec import SETTINGS

__all__ = ["CheckedProps", "check_all"]

#: The function's placement and platform props, checked together by ``check_function_props``.
_FUNCTION_PROPS = ("vpc", "vpc_subnets", "security_groups", "architecture", "tracing", "layers")


@dataclass(frozen=True)
class CheckedProps:
    """The props after :func:`check_all`: valid, with every dependent default filled in."""

    #: Every prop by name, ``visibility_timeout`` and ``max_receive_count`` filled in: what the
    #: function's environment is written from (a ``None`` there is the row's default).
    values: Mapping[str, object]
    #: What a job is.
    mode: JobMode
    #: The queue's visibility timeout (given, or 6 x ``timeout``).
    visibility_timeout: Duration
    #: The redrive policy's maxReceiveCount (given, or twice the least safe).
    max_receive_count: int | float
    #: State mode: how long a sequence gap may stay open (given, or the default); ``None`` in claim mode.
    gap_timeout: Duration | None
    #: The directory of the job code's asset; ``None`` only with the container consumer (the image holds it).
    code_dir: Path | None
    #: The container consumer; ``None``: the Lambda function.
    container: ContainerConsumer | None = None
    #: The container consumer: batches per task (given, or the default).
    slots: int = defaults.SLOTS


def _default_visibility_timeout(timeout: Duration, problems: list[str]) -> Duration:
    timeout_seconds = tokens.seconds(timeout)
    if timeout_seconds is None:
        problems.append(
            "visibility_timeout=None cannot default to 6 x timeout when timeout is an unresolved "
            "token; pass visibility_timeout explicitly."
        )
        return timeout
    visibility_seconds = timeout_seconds * defaults.VISIBILITY_TIMEOUT_FACTOR
    return tokens.remember_seconds(Duration.seconds(visibility_seconds), visibility_seconds)


def _default_max_receive_count(values: Mapping[str, object], mode: JobMode) -> int:
    if values.get("pace") is not None:  # each paced return is a receive: SQS's most
        return SQS_MAX_RECEIVE_COUNT
    batch_size, max_attempts = number(values, "batch_size"), number(values, "max_attempts")
    if batch_size is None or max_attempts is None:
        return defaults.MAX_RECEIVE_COUNT_MAX  # of another type: its problem is raised
    if tokens.is_unresolved(batch_size) or tokens.is_unresolved(max_attempts):
        return defaults.MAX_RECEIVE_COUNT_MAX
    return defaults.max_receive_count_for(batch_size, max_attempts, mode)


def check_all(scope: IConstruct, given: Mapping[str, Any]) -> CheckedProps:
    """Check each prop's type, fill in the dependent defaults, collect every problem, raise them
    together, warn.

    Parameters
    ----------
    scope
        The construct (warnings are attached to it).
    given
        Every prop of the construct by name (its keywords: one per prop row of the settings spec).

    Raises
    ------
    InvalidPropsError
        Listing every invalid prop of the call.
    """
    problems: list[str] = []
    values: dict[str, object] = {}
    for name, value in given.items():
        wrong = check_type(SETTINGS[name], value) or check_choice(SETTINGS[name], value)
        problems += wrong
        if not wrong:  # a prop of another type is left out of the rules by value
            values[name] = value
    mode = JobMode(values.get("mode", JobMode.CLAIM))  # type: ignore[arg-type]  # a JobMode's value
    timeout = duration(values, "timeout")
    container = given.get("consumer")
    container = container if isinstance(container, ContainerConsumer) else None
    if container is not None:
        _fill_container_defaults(values)
    if "visibility_timeout" in values and values["visibility_timeout"] is None and timeout is not None:
        values["visibility_timeout"] = _default_visibility_timeout(timeout, problems)
    if "max_receive_count" in values and values["max_receive_count"] is None:
        values["max_receive_count"] = _default_max_receive_count(values, mode)
    problems += check_props(values)
    problems += check_state_props(values)
    problems += check_consumer(given, values)
    code = given["code"]
    code_path = code.path if isinstance(code, lambda_.AssetCode) else None  # read once
    if code is not None or given.get("consumer") is None:
        problems += _check_code_given(code, code_path)
    problems += check_environment(given["environment"], RUNTIME_ENVIRONMENT)
    problems += check_function_props(**{name: given[name] for name in _FUNCTION_PROPS})
    problems += check_bundling(given["bundling"])
    problems += check_pace(given["pace"])
    if container is None:  # with containers it is refused as every Lambda-only prop is
        problems += check_provisioned_pollers(given["provisioned_pollers"], given["max_concurrency"])
    if code_path is not None:  # an image's code cannot be read at synth
        problems += check_handler_found(
            scope,
            handler=given["handler"],
            code_path=code_path,
            layers=given["layers"],
            bundling=given["bundling"],
        )
    raise_if_any(problems)
    warn_risky(scope, values)
    slots = number(values, "slots")
    if container is not None:
        warn_container(scope, container, int(slots or defaults.SLOTS))
    visibility_timeout, gap_timeout = duration(values, "visibility_timeout"), duration(values, "gap_timeout")
    max_receive_count = number(values, "max_receive_count")
    assert visibility_timeout is not None and max_receive_count is not None  # filled in above
    return CheckedProps(
        values=values,
        mode=mode,
        visibility_timeout=visibility_timeout,
        max_receive_count=max_receive_count,
        gap_timeout=(gap_timeout or defaults.GAP_TIMEOUT) if mode is JobMode.STATE else None,
        code_dir=Path(code_path) if code_path is not None else None,
        container=container,
        slots=int(slots or defaults.SLOTS),
    )


def _fill_container_defaults(values: dict[str, object]) -> None:
    """The container consumer's own defaults: its visibility timeout (heartbeats extend it), a bound of
    one run (no function timeout ends it), and the workers' settings, so the environment carries them."""
    for name, default in (
        ("visibility_timeout", defaults.CONTAINER_VISIBILITY_TIMEOUT),
        ("max_job_duration", defaults.CONTAINER_MAX_JOB_DURATION),
        ("slots", defaults.SLOTS),
        ("heartbeat_interval", defaults.HEARTBEAT_INTERVAL),
    ):
        if name in values and values[name] is None:
            values[name] = default


def _check_code_given(code: lambda_.Code | None, code_path: str | None) -> list[str]:
    """``code`` is required by the Lambda consumer; given, it must be a directory asset."""
    if code is None:
        return [
            "code=None: the Lambda function needs the job code; pass "
            "code=lambda_.Code.from_asset('<directory holding your handler module>'), or "
            "consumer=ContainerConsumer(image=...) whose image holds it."
        ]
    return check_code(code, code_path)
