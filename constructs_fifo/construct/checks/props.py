"""The check step of :class:`~constructs_fifo.construct.OrderedAgentQueue`: fill in the defaults that
depend on other props, validate everything at once, warn about risky values.

Defaults that depend on nothing are in the construct's signature (from
:mod:`constructs_fifo.construct.settings.defaults`); the rules are in
:mod:`constructs_fifo.construct.checks.validation` (by value) and
:mod:`constructs_fifo.construct.checks.function_props` (the function's own props).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from aws_cdk import Duration
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_lambda as lambda_
from constructs import IConstruct

from constructs_fifo.construct.checks.function_props import (
    check_bundling,
    check_code,
    check_environment,
    check_function_props,
)
from constructs_fifo.construct.checks.handler import check_handler_found
from constructs_fifo.construct.checks.validation import (
    Props,
    check_outcome_lines,
    check_props,
    check_state_props,
    raise_if_any,
    warn_risky,
)
from constructs_fifo.construct.code.bundling import CodeBundling
from constructs_fifo.construct.resources.function import RUNTIME_ENVIRONMENT, StateSettings
from constructs_fifo.construct.settings import defaults, tokens
from constructs_fifo.runtime.constants import JobMode
from constructs_fifo.runtime.state.core.records import GapPolicy

__all__ = ["CheckedProps", "check_all"]


@dataclass(frozen=True)
class CheckedProps:
    """The props after :func:`check_all`: valid, with every dependent default filled in."""

    #: The props checked by value, ``visibility_timeout`` and ``max_receive_count`` filled in.
    props: Props
    #: The directory of the job code's asset.
    code_dir: Path
    #: State mode's settings, defaults filled in; ``None`` in claim mode.
    state: StateSettings | None


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


def _default_max_receive_count(batch_size: int | float, max_attempts: int | float, mode: JobMode) -> int:
    if tokens.is_unresolved(batch_size) or tokens.is_unresolved(max_attempts):
        return defaults.MAX_RECEIVE_COUNT_MAX
    return defaults.max_receive_count_for(batch_size, max_attempts, mode)


def check_all(
    scope: IConstruct,
    *,
    code: lambda_.Code,
    handler: str,
    mode: JobMode,
    batch_size: int | float,
    max_attempts: int | float,
    max_receive_count: int | float | None,
    timeout: Duration,
    visibility_timeout: Duration | None,
    reserved_concurrency: int | float | None,
    max_concurrency: int | float | None,
    claim_ttl: Duration,
    age_alarm_threshold: Duration,
    environment: Mapping[str, str] | None,
    memory_size: int | float,
    backoff_base: Duration,
    reorder_limit: int | float | None,
    gap_timeout: Duration | None,
    gap_policy: GapPolicy | None,
    vpc: ec2.IVpc | None = None,
    vpc_subnets: ec2.SubnetSelection | None = None,
    security_groups: Sequence[ec2.ISecurityGroup] | None = None,
    architecture: lambda_.Architecture = defaults.ARCHITECTURE,
    tracing: lambda_.Tracing | None = None,
    layers: Sequence[lambda_.ILayerVersion] | None = None,
    bundling: CodeBundling | None = None,
    outcome_lines: object = defaults.OUTCOME_LINES,
) -> CheckedProps:
    """Fill in the dependent defaults, collect every problem, raise them together, warn.

    Raises
    ------
    InvalidPropsError
        Listing every invalid prop of the call.
    """
    problems: list[str] = []
    if visibility_timeout is None:
        visibility_timeout = _default_visibility_timeout(timeout, problems)
    if max_receive_count is None:
        max_receive_count = _default_max_receive_count(batch_size, max_attempts, mode)
    props = Props(
        handler=handler,
        batch_size=batch_size,
        max_attempts=max_attempts,
        max_receive_count=max_receive_count,
        timeout=timeout,
        visibility_timeout=visibility_timeout,
        reserved_concurrency=reserved_concurrency,
        max_concurrency=max_concurrency,
        claim_ttl=claim_ttl,
        age_alarm_threshold=age_alarm_threshold,
        memory_size=memory_size,
        backoff_base=backoff_base,
        mode=mode,
    )
    problems += check_props(props)
    problems += check_state_props(
        mode, reorder_limit=reorder_limit, gap_timeout=gap_timeout, gap_policy=gap_policy
    )
    problems += check_outcome_lines(outcome_lines)
    code_path = code.path if isinstance(code, lambda_.AssetCode) else None  # read once
    problems += check_code(code, code_path)
    problems += check_environment(environment, RUNTIME_ENVIRONMENT)
    problems += check_function_props(
        vpc=vpc,
        vpc_subnets=vpc_subnets,
        security_groups=security_groups,
        architecture=architecture,
        tracing=tracing,
        layers=layers,
    )
    problems += check_bundling(bundling)
    problems += check_handler_found(
        scope, handler=handler, code_path=code_path, layers=layers, bundling=bundling
    )
    raise_if_any(problems)
    warn_risky(scope, props)
    assert code_path is not None  # checked by check_code
    state = (
        StateSettings(
            reorder_limit=defaults.REORDER_LIMIT if reorder_limit is None else reorder_limit,
            gap_timeout=defaults.GAP_TIMEOUT if gap_timeout is None else gap_timeout,
            gap_policy=defaults.GAP_POLICY if gap_policy is None else gap_policy,
        )
        if mode is JobMode.STATE
        else None
    )
    return CheckedProps(props=props, code_dir=Path(code_path), state=state)
