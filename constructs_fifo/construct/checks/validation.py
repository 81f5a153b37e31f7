"""Validation of :class:`~constructs_fifo.construct.OrderedAgentQueue` props.

Three levels, as in the AWS CDK's own constructs:

- invalid input: every problem of one call is collected and raised together as one
  :class:`InvalidPropsError` (a :class:`ValueError`), each message naming the prop, its value, the
  rule and the fix;
- valid but risky input: a CDK warning with an id (``Annotations.add_warning_v2``);
- unresolved tokens (values only known at deploy time) are not validated.

A prop's limits, with the reason and an example stated in its error, are its row of the settings spec
(:data:`constructs_fifo.runtime.settings.SETTINGS`), which the runtime checks its environment
against too; the rules that join props (``visibility_timeout >= timeout``, the least safe
``max_receive_count``) are written here.
"""

from __future__ import annotations

import keyword
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from aws_cdk import Annotations, Duration
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_lambda as lambda_
from constructs import IConstruct

from constructs_fifo.construct.code.bundling import CodeBundling
from constructs_fifo.construct.errors import InvalidPropsError
from constructs_fifo.construct.settings import defaults, tokens
from constructs_fifo.runtime.constants import JobMode
from constructs_fifo.runtime.settings.spec import SECONDS, SETTINGS, Setting, human_seconds

__all__ = [
    "RESERVED_PACKAGE",
    "WARNING_RESERVED_CONCURRENCY_ONE",
    "WARNING_VISIBILITY_TIMEOUT",
    "InvalidPropsError",  # defined in errors.py; re-exported: ordered_agent_queue.py imports it here
    "Props",
    "check_bundling",
    "check_code",
    "check_environment",
    "check_function_props",
    "check_props",
    "check_state_props",
    "raise_if_any",
    "warn_risky",
]

#: The top-level package the construct adds to the function's asset; a user asset may not hold one.
RESERVED_PACKAGE = "constructs_fifo"
#: Warning ids, for ``Validations.of(scope).acknowledge(id=...)``.
WARNING_VISIBILITY_TIMEOUT = "constructs-fifo:visibilityTimeoutBelowSixTimesTimeout"
WARNING_RESERVED_CONCURRENCY_ONE = "constructs-fifo:reservedConcurrencyOne"


@dataclass(frozen=True)
class Props:
    """The props that are checked by value (codes and environment are checked separately)."""

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


def _resolved_number(value: int | float | None) -> TypeGuard[int | float]:
    """Whether ``value`` is given and known at synth time (not an unresolved token)."""
    return value is not None and not tokens.is_unresolved(value)


def _seconds(value: Duration) -> float | None:
    """The duration in seconds, or None when it is an unresolved token."""
    return tokens.seconds(value)


def _fmt(seconds: float) -> str:
    return f"{seconds:g}s"


def _duration_expression(seconds: int) -> str:
    """The ``Duration`` of ``seconds`` as a user writes it: ``Duration.hours(12)``."""
    for size, unit in ((86_400, "days"), (3_600, "hours"), (60, "minutes")):
        if seconds >= size and seconds % size == 0:
            return f"Duration.{unit}({seconds // size})"
    return f"Duration.seconds({seconds})"


def _check_number(row: Setting, value: int | float | None) -> list[str]:
    """A number prop against its row's limits."""
    name, low, high = row.prop, row.low, row.high
    if not _resolved_number(value) or ((low is None or value >= low) and (high is None or value <= high)):
        return []
    if low is not None and high is not None:
        return [
            f"{name}={value:g} is out of range: {row.why} it must be between {low} and {high} inclusive; "
            f"pass {name} from {low} to {high}."
        ]
    if low is not None:
        return [
            f"{name}={value:g} is less than {low}: {row.why}; pass {name} >= {low} (default {row.default})."
        ]
    return [
        f"{name}={value:g} is more than {high}, {row.why}; pass {name} up to {high}, or omit it for the "
        "default."
    ]


def _check_duration(row: Setting, value: Duration) -> list[str]:
    """A duration prop against its row's limits (in whole seconds)."""
    assert row.unit == SECONDS, row
    seconds = _seconds(value)
    if seconds is None:
        return []
    if row.low is not None and seconds < row.low:
        least = human_seconds(row.low)
        return [
            f"{row.prop}={_fmt(seconds)} is shorter than {least}: it must be positive and is used in whole "
            f"seconds; pass a Duration of at least {least}, e.g. {row.example}."
        ]
    if row.high is not None and seconds > row.high:
        return [
            f"{row.prop}={_fmt(seconds)} is longer than {human_seconds(row.high)}, {row.why}; pass "
            f"{row.prop} <= {_duration_expression(row.high)}."
        ]
    return []


def _check_receive_count(props: Props) -> list[str]:
    """maxReceiveCount is the safety net: within SQS's range, and above what the runtime's retries cause."""
    count = props.max_receive_count
    if not _resolved_number(count):
        return []
    if count > defaults.MAX_RECEIVE_COUNT_MAX:
        return [
            f"max_receive_count={count:g} is more than {defaults.MAX_RECEIVE_COUNT_MAX}, the SQS maximum for "
            f"a redrive policy; pass max_receive_count up to {defaults.MAX_RECEIVE_COUNT_MAX}, or omit it "
            "for the default."
        ]
    if not (_resolved_number(props.batch_size) and _resolved_number(props.max_attempts)):
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
    problems += _check_number(SETTINGS["batch_size"], props.batch_size)
    problems += _check_number(SETTINGS["max_attempts"], props.max_attempts)
    problems += _check_receive_count(props)
    problems += _check_duration(SETTINGS["timeout"], props.timeout)
    timeout = _seconds(props.timeout)
    visibility = _seconds(props.visibility_timeout)
    if timeout is not None and visibility is not None and visibility < timeout:
        problems.append(
            f"visibility_timeout={_fmt(visibility)} is shorter than timeout={_fmt(timeout)}: Lambda "
            "rejects an SQS event source whose function timeout exceeds the queue's visibility timeout; "
            f"pass visibility_timeout >= timeout (AWS recommends 6 x timeout = "
            f"{_fmt(timeout * defaults.VISIBILITY_TIMEOUT_FACTOR)}), or omit it for that default."
        )
    problems += _check_duration(SETTINGS["visibility_timeout"], props.visibility_timeout)
    reserved, maximum = props.reserved_concurrency, props.max_concurrency
    problems += _check_number(SETTINGS["reserved_concurrency"], reserved)
    problems += _check_number(SETTINGS["max_concurrency"], maximum)
    if _resolved_number(reserved) and _resolved_number(maximum) and reserved >= 1 and reserved < maximum:
        problems.append(
            f"reserved_concurrency={reserved:g} is less than max_concurrency={maximum:g}: the event "
            "source would be throttled, and throttled receives push messages toward the dead-letter "
            f"queue; pass reserved_concurrency >= {maximum:g} or lower max_concurrency."
        )
    problems += _check_duration(SETTINGS["claim_ttl"], props.claim_ttl)
    problems += _check_duration(SETTINGS["age_alarm_threshold"], props.age_alarm_threshold)
    problems += _check_duration(SETTINGS["backoff_base"], props.backoff_base)
    problems += _check_number(SETTINGS["memory_size"], props.memory_size)
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
    problems = _check_number(SETTINGS["reorder_limit"], reorder_limit)
    if gap_timeout is not None:
        problems += _check_duration(SETTINGS["gap_timeout"], gap_timeout)
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


def check_code(code: lambda_.Code, code_path: str | None = None) -> list[str]:
    """Check that ``code`` is an asset directory the construct can add its runtime to.

    Parameters
    ----------
    code
        The user's job code.
    code_path
        ``code.path``, when the caller has read it already (each read is a round trip to Node).

    Returns
    -------
    list of str
        The problems (at most one); empty when ``code`` is a usable directory asset.
    """
    fix = "pass code=lambda_.Code.from_asset('<directory holding your handler module>')"
    if not isinstance(code, lambda_.AssetCode):
        return [
            f"code={type(code).__name__} is not supported: the construct adds its runtime next to your "
            f"handler, so code must be a local directory asset; {fix}."
        ]
    if code_path is None:
        code_path = code.path
    path = Path(code_path)
    if not path.is_dir():
        return [
            f"code=Code.from_asset({code_path!r}) is not a directory: the construct adds its runtime "
            f"next to your handler, so a zip file or missing path cannot be used; {fix}."
        ]
    if (path / RESERVED_PACKAGE).exists():
        return [
            f"code=Code.from_asset({code_path!r}) already holds a top-level {RESERVED_PACKAGE!r}: the "
            "construct adds the installed runtime under that name and would shadow or be shadowed by "
            f"it; remove {path / RESERVED_PACKAGE} from the asset directory."
        ]
    return []


def check_environment(environment: Mapping[str, str] | None, reserved: Mapping[str, str]) -> list[str]:
    """Reject user environment variables that collide with the ones the construct writes.

    Parameters
    ----------
    environment
        The user's extra environment variables.
    reserved
        The variables the construct sets for its runtime.

    Returns
    -------
    list of str
        One message per colliding key.
    """
    if not environment:
        return []
    return [
        f"environment[{key!r}] is reserved: the construct sets it for its runtime ({reserved[key]!r}); "
        f"remove {key!r} from environment (use the matching prop instead)."
        for key in sorted(environment)
        if key in reserved
    ]


def _check_vpc(
    vpc: ec2.IVpc | None,
    vpc_subnets: ec2.SubnetSelection | None,
    security_groups: Sequence[ec2.ISecurityGroup] | None,
) -> list[str]:
    """``vpc_subnets`` and ``security_groups`` need ``vpc``; the subnets must not be public; 1 to 5 groups."""
    if vpc is None:
        return [
            f"{name} is given without vpc: it only places a function inside a VPC; pass vpc=..., or "
            f"remove {name}."
            for name, value in (("vpc_subnets", vpc_subnets), ("security_groups", security_groups))
            if value is not None
        ]
    problems: list[str] = []
    if security_groups is not None and not (
        defaults.SECURITY_GROUPS_MIN <= len(security_groups) <= defaults.SECURITY_GROUPS_MAX
    ):
        problems.append(
            f"security_groups has {len(security_groups)} group(s): a Lambda function in a VPC takes "
            f"{defaults.SECURITY_GROUPS_MIN} to {defaults.SECURITY_GROUPS_MAX} security groups; pass "
            f"{defaults.SECURITY_GROUPS_MIN} to {defaults.SECURITY_GROUPS_MAX}, or omit security_groups "
            "for one the function creates (all outbound traffic allowed, no inbound)."
        )
    public = {subnet.node.path for subnet in vpc.public_subnets}
    selection = vpc_subnets or ec2.SubnetSelection()
    selected = vpc.select_subnets(
        availability_zones=selection.availability_zones,
        one_per_az=selection.one_per_az,
        subnet_filters=selection.subnet_filters,
        subnet_group_name=selection.subnet_group_name,
        subnets=selection.subnets,
        subnet_type=selection.subnet_type,
    ).subnets
    in_public = sorted(
        s.subnet_id for s in selected if s.node.path in public and not tokens.is_unresolved(s.subnet_id)
    )
    if any(s.node.path in public for s in selected):
        named = f" ({', '.join(in_public)})" if in_public else ""
        problems.append(
            f"vpc_subnets selects public subnets{named}: a Lambda function gets no public IP address, "
            "so from a public subnet it cannot reach SQS, DynamoDB or CloudWatch and no job runs; pass "
            "vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS) (or "
            "isolated subnets with SQS, DynamoDB and CloudWatch VPC endpoints)."
        )
    return problems


def _runtime_attribute(runtime: str) -> str:
    """``python3.14`` -> ``PYTHON_3_14``, the name of the runtime in ``lambda_.Runtime``."""
    return runtime.upper().replace("PYTHON", "PYTHON_").replace(".", "_")


def _check_layers(layers: Sequence[lambda_.ILayerVersion] | None) -> list[str]:
    """At most 5 layers, each compatible with the function's runtime (when the layer says)."""
    if not layers:
        return []
    problems: list[str] = []
    if len(layers) > defaults.LAYERS_MAX:
        problems.append(
            f"layers has {len(layers)} layers: a Lambda function takes at most {defaults.LAYERS_MAX}; "
            f"pass at most {defaults.LAYERS_MAX} (merge layers, or bundle the dependencies with the job "
            "code: a requirements.txt in its directory)."
        )
    runtime = defaults.FUNCTION_RUNTIME.name
    for index, layer in enumerate(layers):
        compatible = layer.compatible_runtimes
        if compatible and runtime not in {r.name for r in compatible}:
            names = ", ".join(sorted(r.name for r in compatible))
            problems.append(
                f"layers[{index}] ({layer.node.path}) is compatible with {names}, not the function's "
                f"{runtime}; pass a layer built for {runtime} (compatible_runtimes including "
                f"lambda_.Runtime.{_runtime_attribute(runtime)}), or remove it."
            )
    return problems


def check_function_props(
    *,
    vpc: ec2.IVpc | None,
    vpc_subnets: ec2.SubnetSelection | None,
    security_groups: Sequence[ec2.ISecurityGroup] | None,
    architecture: lambda_.Architecture,
    tracing: lambda_.Tracing | None,
    layers: Sequence[lambda_.ILayerVersion] | None,
) -> list[str]:
    """Collect every problem of the function's placement and platform props.

    Returns
    -------
    list of str
        One message per problem, each naming the prop, its value, the rule and the fix.
    """
    problems = _check_vpc(vpc, vpc_subnets, security_groups)
    if architecture.name not in defaults.WHEEL_PLATFORMS:
        supported = " or ".join(f"lambda_.Architecture.{n}" for n in defaults.ARCHITECTURE_NAMES)
        problems.append(
            f"architecture={architecture.name!r} is not one Lambda runs: it must be x86_64 or arm64; pass "
            f"architecture={supported}, or omit it for x86_64."
        )
    if tracing is not None and not isinstance(tracing, lambda_.Tracing):
        problems.append(
            f"tracing={tracing!r} is not a lambda_.Tracing: pass lambda_.Tracing.ACTIVE, "
            "PASS_THROUGH or DISABLED, or omit it for no tracing configuration."
        )
    problems += _check_layers(layers)
    return problems


def check_bundling(bundling: CodeBundling | None) -> list[str]:
    """The ``bundling`` prop: a :class:`CodeBundling`; its requirements unused with Docker bundling."""
    if bundling is None:
        return []
    if not isinstance(bundling, CodeBundling):
        return [
            f"bundling={type(bundling).__name__} is not a CodeBundling: pass "
            "bundling=CodeBundling(exclude=[...], requirements=[...]) (from constructs_fifo), or omit it."
        ]
    problems: list[str] = []
    if isinstance(bundling.exclude, str) or isinstance(bundling.requirements, str):
        problems.append(
            "bundling.exclude and bundling.requirements are lists of strings, not one string: pass "
            "e.g. CodeBundling(exclude=['tests'], requirements=['httpx==0.28.1'])."
        )
    if bundling.docker is not None and bundling.requirements:
        problems.append(
            f"bundling.requirements={list(bundling.requirements)!r} does nothing with bundling.docker: "
            "Docker bundling installs what its own command installs; remove requirements, or remove "
            "docker to install them without Docker."
        )
    if bundling.no_index and not bundling.find_links:
        problems.append(
            "bundling.no_index=True without find_links leaves the installer nowhere to find wheels: pass "
            "find_links=['<directory of wheels>'], or no_index=False."
        )
    return problems


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
    timeout = _seconds(props.timeout)
    visibility = _seconds(props.visibility_timeout)
    factor = defaults.VISIBILITY_TIMEOUT_FACTOR
    if timeout is not None and visibility is not None and timeout <= visibility < factor * timeout:
        Annotations.of(scope).add_warning_v2(
            WARNING_VISIBILITY_TIMEOUT,
            f"visibility_timeout={_fmt(visibility)} is less than {factor} x timeout="
            f"{_fmt(factor * timeout)}: AWS recommends at least {factor} x the function timeout so that "
            "retries and throttling do not redeliver a message still being processed; omit "
            "visibility_timeout for that default.",
        )
    if _resolved_number(props.reserved_concurrency) and props.reserved_concurrency == 1:
        Annotations.of(scope).add_warning_v2(
            WARNING_RESERVED_CONCURRENCY_ONE,
            "reserved_concurrency=1: the event source mapping cannot be capped below "
            f"MaximumConcurrency={defaults.MAX_CONCURRENCY_MIN}, so with two or more active groups Lambda "
            "throttles, and throttled batches count towards max_receive_count; use 2 or more unless "
            "one job at a time across all groups is what you want.",
        )
